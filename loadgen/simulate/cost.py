"""What a simulated profile costs, hour by hour and in total: on demand, and provisioned with
auto scaling as the simulation scales it.

- **On demand**: each minute's units the partition model admitted on each table and index
  (what DynamoDB charges: throttled attempts consume none), at the region's price per
  million request units.
- **Provisioned with auto scaling**: each minute's provisioned read and write capacity (units,
  rounded up) at the price per capacity-unit hour, a sixtieth of an hour each. Where the
  simulated tables were provisioned and auto scaled (``--auto-scaling``) it is their own
  capacity; otherwise the profile is simulated again with every on-demand table and GSI
  provisioned and auto scaled (70% target, `loadgen.model.partitions.AutoScaling`) from the
  capacity that carries its first minute at 70% (`provisioned_replay`): auto scaling lags a
  climb by minutes, so that run may throttle where on-demand did not, and its throttled share
  is given beside the cost.
- **Storage**: the design's starting data (its entities' populate counts and item sizes, as
  ``loadgen check`` works them out), an hour's share of a month each hour.

Standard table class; figures in the region's currency, ``None`` (printed ``-``) where the
region has no price for them.

    result = simulate(design, profile)
    twin = simulate(design, profile, provisioned_replay(result))
    section = profile_cost(result, twin, load_prices())
    print("\\n".join(cost_lines(section)))
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import replace
from typing import Any

from loadgen.design import stored_bytes
from loadgen.pricing import Prices, format_money
from loadgen.pricing.cost import (
    TARGET_UTILIZATION,
    provisioned_usd,
    request_units_usd,
    storage_usd,
    sum_priced,
)
from loadgen.simulate.engine import FAILING_SHARE, Settings, SimulationResult

__all__ = ["cost_lines", "needs_replay", "profile_cost", "provisioned_replay"]


def needs_replay(result: SimulationResult) -> bool:
    """Whether the provisioned figure needs the profile simulated again: some table or index
    ran on demand, or provisioned without auto scaling."""
    on_demand = any(rows and rows[0].on_demand for rows in result.scopes.values())
    return on_demand or not result.settings.auto_scaling


def provisioned_replay(result: SimulationResult) -> Settings:
    """The settings of the same simulation with every on-demand table and GSI provisioned
    and auto scaled from the capacity that carries its first simulated minute at 70%."""
    start: list[tuple[str, str | None, float, float]] = []
    for (table, index), rows in result.scopes.items():
        if not rows or not rows[0].on_demand:
            continue
        first = rows[0]
        start.append(
            (
                table,
                index,
                float(max(1, math.ceil(first.consumed_read / 60 / TARGET_UTILIZATION))),
                float(max(1, math.ceil(first.consumed_write / 60 / TARGET_UTILIZATION))),
            )
        )
    return replace(result.settings, auto_scaling=True, provision=tuple(start))


def _throttled(result: SimulationResult, span: range) -> float:
    """The share of the attempts of ``span``'s minutes the simulation throttled."""
    offered = throttled = 0.0
    for minutes in result.patterns.values():
        for row in minutes[span.start : span.stop]:
            offered += row.offered
            throttled += row.throttled
    return throttled / offered if offered else 0.0


def profile_cost(
    result: SimulationResult, provisioned: SimulationResult | None, prices: Prices
) -> dict[str, Any]:
    """Per hour of the profile and in total, on demand (``result``'s units) and provisioned
    with auto scaling (``provisioned``'s capacity, or ``result``'s own where it ran so;
    see the module docstring), plus storage, Standard class."""
    standard = prices.of("standard")
    scaled = provisioned or result
    minutes = max((len(rows) for rows in result.scopes.values()), default=0)
    hours = math.ceil(minutes / 60)
    stored = float(sum(stored_bytes(result.design).values()))
    rows: list[dict[str, Any]] = []
    for hour in range(hours):
        span = range(hour * 60, min(minutes, hour * 60 + 60))
        on_demand: list[float | None] = []
        capacity: list[float | None] = []
        for scope_rows in result.scopes.values():
            for minute in span:
                if minute < len(scope_rows):
                    row = scope_rows[minute]
                    on_demand.append(
                        request_units_usd(row.consumed_read, row.consumed_write, standard)
                    )
        for scope_rows in scaled.scopes.values():
            for minute in span:
                if minute < len(scope_rows):
                    row = scope_rows[minute]
                    capacity.append(
                        provisioned_usd(
                            math.ceil(row.read_capacity),
                            math.ceil(row.write_capacity),
                            standard,
                            1 / 60,
                        )
                    )
        share = len(span) / 60 / prices.hours_per_month
        rows.append(
            {
                "hour": hour,
                "minutes": len(span),
                "on_demand": sum_priced(on_demand),
                "on_demand_throttled_share": _throttled(result, span),
                "provisioned": sum_priced(capacity),
                "provisioned_throttled_share": _throttled(scaled, span),
                "storage": storage_usd(stored, standard, prices.gb_bytes, share),
            }
        )
    everything = range(minutes)
    replay = provisioned is not None
    return {
        "prices": prices.to_dict(),
        "stamp": prices.stamp(),
        "currency": prices.currency,
        "month": prices.month(),
        "stored_bytes": stored,
        "provisioned": {
            "replayed": replay,
            "how": "the profile simulated again with every on-demand table and index "
            "provisioned and auto scaled (70% target, out after 2 min, in after 15) from the "
            "capacity that carries its first minute at 70%"
            if replay
            else "the simulated tables' own capacity, auto scaled as the simulation ran them",
            "start": [
                {"scope": t if i is None else f"{t}/{i}", "read": r, "write": w}
                for t, i, r, w in (provisioned.settings.provision if provisioned else ())
            ],
            "throttled_share": _throttled(scaled, everything),
        },
        "on_demand_throttled_share": _throttled(result, everything),
        "hours": rows,
        "total": {
            "on_demand": sum_priced([r["on_demand"] for r in rows]),
            "provisioned": sum_priced([r["provisioned"] for r in rows]),
            "storage": sum_priced([r["storage"] for r in rows]),
        },
    }


def cost_lines(section: dict[str, Any]) -> list[str]:
    """The profile's cost as ``loadgen simulate`` prints it: one line an hour, the total."""
    currency = section["currency"]

    def money(value: float | None) -> str:
        return format_money(value, currency)

    provisioned = section["provisioned"]
    lines = [
        f"Cost of the profile ({section['stamp']}; {currency}; Standard table class; storage "
        f"by the GB-month, {section['month']}):",
        f"  {'hour':>9} {'on-demand':>12} {'throttled':>9} {'provisioned':>12} {'throttled':>9} "
        f"{'storage':>10}",
    ]
    for row in section["hours"]:
        label = f"{row['hour']}" + ("" if row["minutes"] == 60 else f" ({row['minutes']}m)")
        lines.append(
            f"  {label:>9} {money(row['on_demand']):>12} {row['on_demand_throttled_share']:>9.1%} "
            f"{money(row['provisioned']):>12} {row['provisioned_throttled_share']:>9.1%} "
            f"{money(row['storage']):>10}"
        )
    total = section["total"]
    lines.append(
        f"  {'total':>9} {money(total['on_demand']):>12} "
        f"{section['on_demand_throttled_share']:>9.1%} {money(total['provisioned']):>12} "
        f"{provisioned['throttled_share']:>9.1%} {money(total['storage']):>10}"
    )
    start = ", ".join(
        f"{s['scope']} {s['read']:,.0f}/{s['write']:,.0f} r/w" for s in provisioned["start"]
    )
    how = (
        "On-demand: the units admitted each minute. Provisioned with auto scaling: "
        f"{provisioned['how']}{f' ({start})' if start else ''}; the capacity each minute, "
        "rounded up to whole units."
    )
    lines += textwrap.wrap(how, 100, initial_indent="  ", subsequent_indent="    ")
    for name, share in (
        ("On demand", section["on_demand_throttled_share"]),
        ("Provisioned with auto scaling", provisioned["throttled_share"]),
    ):
        if share > FAILING_SHARE:
            note = (
                f"{name} throttled {share:.1%} of the attempts: it did not serve all of the "
                "profile, and what DynamoDB refused is not charged: a lower figure is not a "
                "saving."
            )
            lines += textwrap.wrap(note, 100, initial_indent="  ", subsequent_indent="    ")
    return lines
