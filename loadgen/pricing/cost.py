"""What a design costs a month: on-demand, provisioned and storage, per table and index.

The arithmetic, from units per second at AWS scale (a run's measured ones, or
``loadgen check``'s estimate from a design file's rates and item sizes):

- **on-demand**: mean read and write units/s, times 3,600 x the month's hours (730), over
  a million, times the price per million request units;
- **provisioned**: the capacity that carries the peak second at the target utilisation
  (70% by default, as AWS's auto scaling): ``ceil(peak / target)`` units, at least 1, times
  the month's hours times the price per capacity-unit hour; and, where the table had
  provisioned throughput, the cost of that throughput;
- **storage**: bytes over a GB (2^30 bytes) times the price per GB-month;

each for the Standard and the Standard-IA table class. The free tier is not subtracted.

    usage = [Usage("ph-counter", read=50.0, write=200.0, peak_read=60.0, peak_write=230.0)]
    section = monthly_cost(usage, {"ph-counter": 2_000_000}, load_prices())
    print("\\n".join(format_cost(section)))
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from loadgen.pricing.prices import CLASSES, ClassPrices, Prices

__all__ = [
    "COUNTED",
    "TARGET_UTILIZATION",
    "Usage",
    "format_cost",
    "format_usd",
    "monthly_cost",
    "on_demand_usd",
    "provisioned_usd",
    "storage_usd",
]

TARGET_UTILIZATION = 0.7
"""Consumed over provisioned that auto scaling keeps a table at by default (70%)."""

COUNTED = (
    "Counted: units the requests consumed (throttled attempts are not charged; retries that "
    "succeed are; transactions twice, eventually consistent reads half, a GSI write per index "
    "the item is in, two when its index key changes) and stored bytes. Not counted: the free "
    "tier, backups, streams, global-table replication, data transfer, reserved capacity."
)
"""The one line of what a cost figure holds."""

_LABEL = {"standard": "Standard", "standard_ia": "Standard-IA"}


@dataclass(frozen=True)
class Usage:
    """One table's or index's units/s at AWS scale: the mean and the peak second."""

    scope: str
    """``table`` or ``table/index``."""
    read: float
    write: float
    peak_read: float
    peak_write: float
    provisioned: tuple[float, float] | None = None
    """(read, write) capacity units the table or index had provisioned; None on demand."""

    @property
    def table(self) -> str:
        return self.scope.split("/", 1)[0]


def on_demand_usd(
    read_per_s: float, write_per_s: float, prices: ClassPrices, hours: float
) -> float:
    """A month of on-demand request units at a steady mean rate."""
    seconds = 3600.0 * hours
    return (
        read_per_s * seconds / 1e6 * prices.on_demand_read_per_million
        + write_per_s * seconds / 1e6 * prices.on_demand_write_per_million
    )


def provisioned_usd(
    read_units: float, write_units: float, prices: ClassPrices, hours: float
) -> float:
    """A month of provisioned read and write capacity units."""
    return (
        read_units * prices.provisioned_rcu_hour + write_units * prices.provisioned_wcu_hour
    ) * hours


def storage_usd(stored_bytes: float, prices: ClassPrices, gb_bytes: int) -> float:
    """A month of stored bytes."""
    return stored_bytes / gb_bytes * prices.storage_gb_month


def needed_capacity(peak_per_s: float, target: float) -> int:
    """Capacity units that carry ``peak_per_s`` at ``target`` utilisation (at least 1)."""
    # A hair under an integer (0.7 x 100 / 0.7 = 100.00000000000001) is that integer.
    return max(1, math.ceil(round(peak_per_s / target, 9)))


def _by_class(fn: Any) -> dict[str, float]:
    return {name: round(float(fn(name)), 6) for name in CLASSES}


def monthly_cost(
    usage: Sequence[Usage],
    stored_bytes: Mapping[str, float],
    prices: Prices,
    *,
    target: float = TARGET_UTILIZATION,
    basis: str = "measured",
    how: str = "mean units/s over the run at AWS scale, carried to a month",
) -> dict[str, Any]:
    """The cost section: per table and index, per table, and the total (see the docstring).

    ``stored_bytes`` maps a table (or ``table/index``) to its stored bytes; a table absent
    from it has no storage figure (``None``). The figure a gate reads per table
    (``monthly_usd``) is the table as it ran: its provisioned throughput where it had some,
    else on-demand, plus its storage, Standard class.
    """
    hours = prices.hours_per_month
    scopes: list[dict[str, Any]] = []
    tables: dict[str, dict[str, Any]] = {}
    for u in sorted(usage, key=lambda u: (u.table, "/" in u.scope, u.scope)):
        rcu, wcu = needed_capacity(u.peak_read, target), needed_capacity(u.peak_write, target)
        row: dict[str, Any] = {
            "scope": u.scope,
            "read_units_per_s": round(u.read, 6),
            "write_units_per_s": round(u.write, 6),
            "peak_read_units_per_s": round(u.peak_read, 6),
            "peak_write_units_per_s": round(u.peak_write, 6),
            "on_demand_usd": _by_class(
                lambda c, u=u: on_demand_usd(u.read, u.write, prices.of(c), hours)
            ),
            "provisioned": {
                "read_capacity": rcu,
                "write_capacity": wcu,
                "usd": _by_class(
                    lambda c, r=rcu, w=wcu: provisioned_usd(r, w, prices.of(c), hours)
                ),
            },
            "provisioned_as_run": None,
        }
        if u.provisioned is not None:
            pr, pw = u.provisioned
            row["provisioned_as_run"] = {
                "read_capacity": pr,
                "write_capacity": pw,
                "usd": _by_class(lambda c, r=pr, w=pw: provisioned_usd(r, w, prices.of(c), hours)),
            }
        scopes.append(row)
        table = tables.setdefault(
            u.table,
            {
                "on_demand_usd": dict.fromkeys(CLASSES, 0.0),
                "provisioned_usd": dict.fromkeys(CLASSES, 0.0),
                "as_run_usd": 0.0,
                "provisioned_as_run": False,
            },
        )
        for c in CLASSES:
            table["on_demand_usd"][c] += row["on_demand_usd"][c]
            table["provisioned_usd"][c] += row["provisioned"]["usd"][c]
        if row["provisioned_as_run"] is not None:
            table["provisioned_as_run"] = True
            table["as_run_usd"] += row["provisioned_as_run"]["usd"]["standard"]
        else:
            table["as_run_usd"] += row["on_demand_usd"]["standard"]
    for name in {*stored_bytes} - {*tables}:
        if "/" not in name:
            tables[name] = {
                "on_demand_usd": dict.fromkeys(CLASSES, 0.0),
                "provisioned_usd": dict.fromkeys(CLASSES, 0.0),
                "as_run_usd": 0.0,
                "provisioned_as_run": False,
            }
    for name, table in tables.items():
        stored = sum(b for s, b in stored_bytes.items() if s.split("/", 1)[0] == name)
        known = any(s.split("/", 1)[0] == name for s in stored_bytes)
        table["storage_bytes"] = stored if known else None
        table["storage_usd"] = (
            _by_class(lambda c, b=stored: storage_usd(b, prices.of(c), prices.gb_bytes))
            if known
            else None
        )
        for key in ("on_demand_usd", "provisioned_usd"):
            table[key] = {c: round(v, 6) for c, v in table[key].items()}
        storage = table["storage_usd"]["standard"] if table["storage_usd"] else 0.0
        table["monthly_usd"] = round(table["as_run_usd"] + storage, 6)
        del table["as_run_usd"]
    total = {
        "on_demand_usd": _by_class(lambda c: sum(t["on_demand_usd"][c] for t in tables.values())),
        "provisioned_usd": _by_class(
            lambda c: sum(t["provisioned_usd"][c] for t in tables.values())
        ),
        "storage_usd": _by_class(
            lambda c: sum((t["storage_usd"] or {}).get(c, 0.0) for t in tables.values())
        )
        if any(t["storage_usd"] for t in tables.values())
        else None,
        "monthly_usd": round(sum(t["monthly_usd"] for t in tables.values()), 6),
    }
    return {
        "basis": basis,
        "how": how,
        "prices": prices.to_dict(),
        "stamp": prices.stamp(),
        "target_utilization": target,
        "scopes": scopes,
        "tables": dict(sorted(tables.items())),
        "total": total,
        "counted": COUNTED,
    }


def format_usd(value: float | None) -> str:
    """Dollars to the cent; under a dollar, to four places (a pattern of a few units/s)."""
    if value is None:
        return "-"
    return f"${value:,.2f}" if value >= 0.995 or value == 0 else f"${value:,.4f}".rstrip("0")


def format_cost(section: Mapping[str, Any], *, title: str = "Cost a month") -> list[str]:
    """The cost section as the summary and ``loadgen check`` print it."""
    stamp = section["stamp"]
    target = section["target_utilization"]
    hours = section["prices"]["hours_per_month"]
    how = (
        f"How: {section['how']} ({hours:g} hours); provisioned: the capacity that carries "
        f"the peak second at {target:.0%} utilisation."
    )
    lines = [
        f"{title} ({section['basis']}; {stamp}; USD):",
        *textwrap.wrap(how, 100, initial_indent="  ", subsequent_indent="    "),
        f"  {'Table or index':<22} {'read u/s':>9} {'write u/s':>9} {'on-demand':>11} "
        f"{'peak r/w u/s':>13}  provisioned at peak (units)",
    ]
    for row in section["scopes"]:
        prov = row["provisioned"]
        peak = f"{row['peak_read_units_per_s']:,.0f}/{row['peak_write_units_per_s']:,.0f}"
        lines.append(
            f"  {row['scope']:<22} {row['read_units_per_s']:>9,.1f} "
            f"{row['write_units_per_s']:>9,.1f} "
            f"{format_usd(row['on_demand_usd']['standard']):>11} {peak:>13}  "
            f"{format_usd(prov['usd']['standard'])} "
            f"({prov['read_capacity']:,}/{prov['write_capacity']:,} r/w)"
        )
        as_run = row.get("provisioned_as_run")
        if as_run:
            lines.append(
                f"  {'':<22} provisioned as run: {as_run['read_capacity']:,.0f} RCU, "
                f"{as_run['write_capacity']:,.0f} WCU = {format_usd(as_run['usd']['standard'])}"
            )
    lines.append("  Per table, Standard / Standard-IA: on-demand, provisioned at peak, storage")
    for name, table in section["tables"].items():
        storage = table["storage_usd"]
        stored = (
            "not known"
            if storage is None
            else f"{table['storage_bytes'] / 1e6:,.1f} MB {format_usd(storage['standard'])} / "
            f"{format_usd(storage['standard_ia'])}"
        )
        pair = [
            f"{format_usd(table[key]['standard'])} / {format_usd(table[key]['standard_ia'])}"
            for key in ("on_demand_usd", "provisioned_usd")
        ]
        lines.append(f"    {name:<22} {pair[0]:>23} {pair[1]:>23}  {stored}")
    total = section["total"]
    storage = total["storage_usd"] or {}
    lines.append(f"  Total a month ({stamp}):")
    for name in CLASSES:
        lines.append(
            f"    {_LABEL[name]:<12} on-demand {format_usd(total['on_demand_usd'][name]):>11}  "
            f"provisioned {format_usd(total['provisioned_usd'][name]):>11}  "
            f"storage {format_usd(storage.get(name)):>9}"
        )
    lines.append(
        f"    The tables as run (Standard, with storage): {format_usd(total['monthly_usd'])}"
    )
    lines += textwrap.wrap(section["counted"], 100, initial_indent="  ", subsequent_indent="    ")
    return lines
