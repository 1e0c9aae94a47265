"""A run's cost: what its served requests consumed, and what its launch demand costs.

**Measured**: per table and index, the heat lanes hold the units consumed each second
(throttled attempts and requests refused before any work consume none; a retry that succeeds
and a failed condition do, `loadgen.model.capacity.charged_on`). At AWS scale (measured units
over ``run.scale``), the mean over the run is carried to the window (a month unless a launch's
hours are given), and the busiest second sets the provisioned capacity that carries it at 70%
utilisation (`loadgen.pricing.cost`).

**At launch demand**: the demand the run was asked to carry, at AWS scale, as if every
request were served (`loadgen.verdict.launch`), priced the same way. A design that throttles
costs less measured than at launch demand: that difference is throttling, not a saving, and
the section's ``served`` says whether the run served its launch.

Storage comes from the results' ``storage`` section where the run knows its tables' bytes (a
design run: its starting data's items and sizes); what the run's tables had provisioned from
its ``tables`` section.

    section = run_cost(load_results("results.json"), load_prices())
    results["cost"] = section            # measured, with section["launch"] and ["served"]
    print("\\n".join(format_run_cost(section)))
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Mapping
from typing import Any

from loadgen.errors import ConfigError
from loadgen.pricing import (
    MONTH,
    Prices,
    Usage,
    Window,
    currency_of,
    format_cost,
    format_money,
    load_prices,
    monthly_cost,
    window_of,
)
from loadgen.pricing.cost import on_demand_usd, unpriced_lines
from loadgen.verdict import analysis
from loadgen.verdict.launch import (
    FAILING_SHARE,
    launch_how,
    launch_usage,
    provisioned_as_run,
    served,
    throttled_shares,
)

__all__ = [
    "FAILING_SHARE",
    "cost_html",
    "cost_of",
    "format_cost",
    "format_run_cost",
    "launch_usage",
    "pattern_costs",
    "run_cost",
    "served",
    "throttled_shares",
    "usage_of",
]

_WIDTH = 100


def _stored(results: dict[str, Any]) -> dict[str, float]:
    storage = results.get("storage") or {}
    return {str(k): float(v) for k, v in (storage.get("bytes") or {}).items()}


def usage_of(results: dict[str, Any], scale: float | None = None) -> list[Usage]:
    """Per table and index: mean and peak-second read and write units/s at AWS scale."""
    factor = analysis.scale_of(results, scale)
    heat = results["heat"]
    resolution = float(heat.get("resolution_s") or 1.0)
    duration = float(results.get("duration_s") or 0.0) or max(1.0, heat["columns"] * resolution)
    provisioned = provisioned_as_run(results)
    figures: dict[str, dict[str, float]] = {}
    for lane in heat["lanes"]:
        scope = analysis.Scope(lane["table"], lane["index"]).name
        _, grid = analysis.lane_units(lane)
        per_second = [sum(column) / resolution for column in grid]
        unattributed = float(lane["unattributed"]["units"])
        total = sum(map(sum, grid)) + unattributed
        mean = total / duration / factor
        peak = (max(per_second, default=0.0) + unattributed / duration) / factor
        entry = figures.setdefault(scope, {"read": 0.0, "write": 0.0, "pr": 0.0, "pw": 0.0})
        access = lane["access"]
        entry[access] += mean
        entry["pr" if access == "read" else "pw"] += peak
    return [
        Usage(scope, f["read"], f["write"], f["pr"], f["pw"], provisioned.get(scope))
        for scope, f in figures.items()
    ]


def run_cost(
    results: dict[str, Any],
    prices: Prices,
    *,
    scale: float | None = None,
    window: Window = MONTH,
) -> dict[str, Any]:
    """The cost section of a run over ``window``: measured, with its launch demand
    (``launch``) and whether the run served it (``served``)."""
    stored = _stored(results)
    section = monthly_cost(
        usage_of(results, scale),
        stored,
        prices,
        basis="measured",
        how="the units the run's requests consumed, mean units/s at AWS scale",
        window=window,
    )
    storage = results.get("storage") or {}
    if storage.get("source"):
        section["storage_source"] = storage["source"]
    usage, patterns = launch_usage(results, scale)
    launch = monthly_cost(
        usage,
        stored,
        prices,
        basis="launch demand",
        how=launch_how(patterns),
        window=window,
    )
    hours = window.hours_of(prices)
    standard = prices.of("standard")
    for entry in patterns:
        units = entry["units"]
        entry["on_demand_usd"] = (
            None
            if units is None
            else on_demand_usd(
                entry["per_s"] * sum(u.get("read", 0.0) for u in units.values()),
                entry["per_s"] * sum(u.get("write", 0.0) for u in units.values()),
                standard,
                hours,
            )
        )
    launch["patterns"] = patterns
    section["launch"] = launch
    section["served"] = served(results)
    return section


def cost_of(
    results: dict[str, Any],
    prices: Prices | None = None,
    *,
    scale: float | None = None,
    window: Window | None = None,
) -> dict[str, Any]:
    """The results' own cost section when they carry one (and no other prices or window are
    asked for), else one worked out now: at ``prices``, else at the package's prices of the
    section's region (a section written before launch demand is worked out again so)."""
    own: dict[str, Any] = results.get("cost") or {}
    if own.get("launch") and prices is None and scale is None and _same_window(own, window):
        return own
    if prices is None:
        region = own.get("prices", {}).get("region")
        try:
            prices = load_prices(region=region)
        except ConfigError:  # a region the package's prices have not
            prices = load_prices()
    return run_cost(results, prices, scale=scale, window=window or MONTH)


def _same_window(section: Mapping[str, Any], window: Window | None) -> bool:
    if window is None:
        return True
    own = window_of(section)
    return bool(own["month"]) if window.month else not own["month"] and own["hours"] == window.hours


def pattern_costs(results: dict[str, Any], prices: Prices | None = None) -> dict[str, float | None]:
    """Per access pattern (operation rows' ``name``): its on-demand cost at launch demand over
    the section's window, Standard class, in the prices' currency; None where it has no
    figure (no on-demand price, no unit known)."""
    section = cost_of(results, prices)
    launch = section.get("launch") or {}
    costs: dict[str, float | None] = {}
    for entry in launch.get("patterns") or ():
        before = costs.get(entry["name"], 0.0)
        value = entry.get("on_demand_usd")
        costs[entry["name"]] = None if before is None or value is None else before + value
    return costs


# Printed and drawn ---------------------------------------------------------------------------


def format_run_cost(section: Mapping[str, Any]) -> list[str]:
    """A run's cost as its summary ends: measured, at launch demand, and what lies between."""
    lines = format_cost(section, counted=False)
    launch = section.get("launch")
    if launch:
        lines += ["", *_launch_lines(section, launch)]
    lines += textwrap.wrap(
        section["counted"], _WIDTH, initial_indent="  ", subsequent_indent="    "
    )
    return lines


def _launch_lines(section: Mapping[str, Any], launch: Mapping[str, Any]) -> list[str]:
    currency = currency_of(launch)
    window = window_of(launch)

    def money(value: float | None) -> str:
        return format_money(value, currency)

    heading = "Cost a month" if window["month"] else f"Cost of {window['words']}"
    target = launch["target_utilization"]
    how = f"How: {launch['how']}, carried to {window['words']}."
    lines = [
        f"{heading} at launch demand ({launch['stamp']}; {currency}):",
        *textwrap.wrap(how, _WIDTH, initial_indent="  ", subsequent_indent="    "),
        f"  {'Table or index':<22} {'read u/s':>9} {'write u/s':>9} {'on-demand':>11}  "
        f"provisioned at {target:.0%} (units)",
    ]
    for row in launch["scopes"]:
        prov = row["provisioned"]
        lines.append(
            f"  {row['scope']:<22} {row['read_units_per_s']:>9,.1f} "
            f"{row['write_units_per_s']:>9,.1f} {money(row['on_demand_usd']['standard']):>11}  "
            f"{money(prov['usd']['standard'])} "
            f"({prov['read_capacity']:,}/{prov['write_capacity']:,} r/w)"
        )
    total = launch["total"]
    storage = total["storage_usd"] or {}
    for name, label in (("standard", "Standard"), ("standard_ia", "Standard-IA")):
        lines.append(
            f"    {label:<12} on-demand {money(total['on_demand_usd'][name]):>11}  "
            f"provisioned {money(total['provisioned_usd'][name]):>11}  "
            f"storage {money(storage.get(name)):>9}"
        )
    lines.append(f"    The tables as run (Standard, with storage): {money(total['monthly_usd'])}")
    lines += unpriced_lines(launch)
    lines += textwrap.wrap(versus(section), _WIDTH, initial_indent="  ", subsequent_indent="    ")
    return lines


def versus(section: Mapping[str, Any]) -> str:
    """Measured against launch demand, in words: a design that did not serve its launch
    costs less measured because DynamoDB refused its load, not because it is cheaper."""
    currency = currency_of(section)
    measured = section["total"]["monthly_usd"]
    launch = (section.get("launch") or {}).get("total", {}).get("monthly_usd")
    status = section.get("served") or {}
    pair = (
        f"Measured {format_money(measured, currency)} against "
        f"{format_money(launch, currency)} at launch demand (the tables as run)"
    )
    if status.get("served") is False:
        gap = (
            f"; the {format_money(launch - measured, currency)} less measured is throttling, "
            "not a saving"
            if measured is not None and launch is not None and launch > measured
            else ""
        )
        return f"{pair}: the design did NOT serve its launch ({status['why']}){gap}."
    if status.get("served") is None and status:
        return f"{pair}: {status['why']}."
    return f"{pair}: the design served its launch."


def cost_html(section: dict[str, Any]) -> str:
    """The cost section as the report's tables: per table and index, per table, the total;
    then the launch demand and how the two compare."""

    def e(value: Any) -> str:
        return html.escape(str(value))

    currency = currency_of(section)
    window = window_of(section)

    def money(value: float | None) -> str:
        return format_money(value, currency)

    def both(pair: dict[str, float | None] | None) -> str:
        if pair is None:
            return "<td>-</td><td>-</td>"
        return f"<td>{money(pair['standard'])}</td><td>{money(pair['standard_ia'])}</td>"

    target = section["target_utilization"]
    head = (
        "<tr><th>Table or index</th><th>Read units/s</th><th>Write units/s</th>"
        "<th>On-demand</th><th>On-demand, IA</th><th>Peak read/write units/s</th>"
        f"<th>Provisioned at {target:.0%}</th><th>Provisioned, IA</th><th>As run</th></tr>"
    )
    rows = []
    for row in section["scopes"]:
        prov = row["provisioned"]
        as_run = row["provisioned_as_run"]
        run_cell = (
            f"{as_run['read_capacity']:,.0f} RCU, {as_run['write_capacity']:,.0f} WCU: "
            f"{money(as_run['usd']['standard'])}"
            if as_run
            else "on demand"
        )
        rows.append(
            f'<tr><td class="text">{e(row["scope"])}</td>'
            f"<td>{row['read_units_per_s']:,.1f}</td><td>{row['write_units_per_s']:,.1f}</td>"
            f"{both(row['on_demand_usd'])}"
            f"<td>{row['peak_read_units_per_s']:,.1f} / {row['peak_write_units_per_s']:,.1f}</td>"
            f"<td>{money(prov['usd']['standard'])} ({prov['read_capacity']:,} RCU, "
            f"{prov['write_capacity']:,} WCU)</td><td>{money(prov['usd']['standard_ia'])}</td>"
            f'<td class="text">{e(run_cell)}</td></tr>'
        )
    tables = []
    for name, table in section["tables"].items():
        stored = table["storage_bytes"]
        tables.append(
            f'<tr><td class="text">{e(name)}</td>{both(table["on_demand_usd"])}'
            f"{both(table['provisioned_usd'])}"
            f"<td>{'-' if stored is None else f'{stored / 1e6:,.1f} MB'}</td>"
            f"{both(table['storage_usd'])}<td>{money(table['monthly_usd'])}</td></tr>"
        )
    table_head = (
        "<tr><th>Table</th><th>On-demand</th><th>On-demand, IA</th><th>Provisioned</th>"
        "<th>Provisioned, IA</th><th>Stored</th><th>Storage</th><th>Storage, IA</th>"
        "<th>As run, with storage</th></tr>"
    )
    note = (
        f'<p class="note">{e(currency)}, {e(window["words"])}; {e(section["stamp"])} '
        f"({e(section['basis'])}: {e(section['how'])}). IA: the Standard-IA table class. "
        f"Provisioned: the capacity that carries the peak second at {target:.0%} utilisation. "
        "As run: provisioned where the run's table had throughput, else on demand. "
        f"{e(section['counted'])}</p>"
    )
    page = f"<table>{head}{''.join(rows)}</table><table>{table_head}{''.join(tables)}</table>{note}"
    launch = section.get("launch")
    if launch:
        scopes = "".join(
            f'<tr><td class="text">{e(row["scope"])}</td>'
            f"<td>{row['read_units_per_s']:,.1f}</td><td>{row['write_units_per_s']:,.1f}</td>"
            f"{both(row['on_demand_usd'])}<td>{money(row['provisioned']['usd']['standard'])}"
            f"</td></tr>"
            for row in launch["scopes"]
        )
        page += (
            "<h3>At launch demand</h3><table><tr><th>Table or index</th><th>Read units/s</th>"
            "<th>Write units/s</th><th>On-demand</th><th>On-demand, IA</th>"
            f"<th>Provisioned at {target:.0%}</th></tr>{scopes}</table>"
            f'<p class="note">{e(launch["how"])}. The tables as run, with storage: '
            f"{money(launch['total']['monthly_usd'])}.</p>"
            f'<p class="verdict">{e(versus(section))}</p>'
        )
    return page
