"""What a design costs over a window: on-demand, provisioned and storage, per table and index.

The arithmetic, from units per second at AWS scale (a run's measured ones, the demand it was
asked to carry, or ``loadgen check``'s estimate from a design file's rates and item sizes),
over a `Window`: a month (the prices' 730 h, as AWS's Pricing Calculator counts it) unless a
launch's hours are given:

- **on-demand**: mean read and write units/s, times 3,600 x the window's hours, over a
  million, times the price per million request units;
- **provisioned**: the capacity that carries the peak second at the target utilisation
  (70% by default, as AWS's auto scaling): ``ceil(peak / target)`` units, at least 1, times
  the window's hours times the price per capacity-unit hour; and, where the table had
  provisioned throughput, the cost of that throughput;
- **storage**: bytes over a GB (2^30 bytes) times the price per GB-month, for the window's
  share of a month;

each for the Standard and the Standard-IA table class. The free tier is not subtracted.

Figures are in the region's currency (``section["prices"]["currency"]``; the ``*_usd`` keys
keep their first name for results files already written). A figure whose price the region's
page did not show is ``None``, and so is any sum it enters: printed ``-``.

    usage = [Usage("ph-counter", read=50.0, write=200.0, peak_read=60.0, peak_write=230.0)]
    section = monthly_cost(usage, {"ph-counter": 2_000_000}, load_prices())
    print("\\n".join(format_cost(section)))
    monthly_cost(usage, {}, load_prices(), window=Window(hours=1.0))  # a launch of an hour
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from loadgen.pricing.prices import CLASSES, ClassPrices, Prices

__all__ = [
    "COUNTED",
    "MONTH",
    "TARGET_UTILIZATION",
    "Usage",
    "Window",
    "currency_of",
    "format_cost",
    "format_money",
    "format_usd",
    "monthly_cost",
    "on_demand_usd",
    "provisioned_usd",
    "request_units_usd",
    "storage_usd",
    "sum_priced",
]

TARGET_UTILIZATION = 0.7
"""Consumed over provisioned that auto scaling keeps a table at by default (70%)."""

COUNTED = (
    "Counted: units the requests consumed (throttled attempts and requests rejected before any "
    "work are not charged; retries that succeed are, and failed conditions and cancelled "
    "transactions on the table; transactions twice, eventually consistent reads half, a GSI "
    "write per index the item is in, two when its index key changes) and stored bytes. Not "
    "counted: the free tier, backups, streams, global-table replication, data transfer, "
    "reserved capacity."
)
"""The one line of what a cost figure holds."""

_LABEL = {"standard": "Standard", "standard_ia": "Standard-IA"}


@dataclass(frozen=True)
class Window:
    """How long a cost is carried: a month (``hours`` None: the prices' month, 730 h) or a
    launch's hours.

    >>> Window().title, Window(hours=1.0).title
    ('Cost a month', 'Cost of 1 h')
    """

    hours: float | None = None

    def __post_init__(self) -> None:
        if self.hours is not None and not 0 < self.hours < math.inf:
            raise ValueError(f"a cost window must be hours > 0 (got {self.hours!r})")

    @property
    def month(self) -> bool:
        return self.hours is None

    def hours_of(self, prices: Prices) -> float:
        """The window's hours at ``prices`` (a month: their hours a month)."""
        return prices.hours_per_month if self.hours is None else self.hours

    @property
    def title(self) -> str:
        return "Cost a month" if self.hours is None else f"Cost of {_span(self.hours)}"

    def words(self, prices: Prices) -> str:
        """``a month of 730 h, as AWS's Pricing Calculator counts it`` or ``1 h``."""
        return prices.month() if self.hours is None else _span(self.hours)

    def to_dict(self, prices: Prices) -> dict[str, Any]:
        return {"hours": self.hours_of(prices), "month": self.month, "words": self.words(prices)}


MONTH = Window()
"""A month: what a cost is carried to unless a window is given."""


def _span(hours: float) -> str:
    if hours < 1:
        return f"{hours * 60:g} min"
    return f"{hours:g} h" if hours < 48 else f"{hours / 24:g} days ({hours:g} h)"


def window_of(section: Mapping[str, Any]) -> dict[str, Any]:
    """A cost section's window (a month for one written before sections named theirs)."""
    window = section.get("window")
    if isinstance(window, Mapping):
        return dict(window)
    hours = section.get("prices", {}).get("hours_per_month", 730)
    return {"hours": hours, "month": True, "words": f"a month of {hours:g} h"}


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


def _times(amount: float, price: float | None) -> float | None:
    """``amount`` at ``price``; none of a thing costs nothing, priced or not."""
    if amount == 0:
        return 0.0
    return None if price is None else amount * price


def sum_priced(values: Iterable[float | None]) -> float | None:
    """The sum, or None when any part has no price."""
    total = 0.0
    for value in values:
        if value is None:
            return None
        total += value
    return total


def request_units_usd(read_units: float, write_units: float, prices: ClassPrices) -> float | None:
    """On-demand read and write request units (counts), in the prices' currency."""
    return sum_priced(
        (
            _times(read_units / 1e6, prices.on_demand_read_per_million),
            _times(write_units / 1e6, prices.on_demand_write_per_million),
        )
    )


def on_demand_usd(
    read_per_s: float, write_per_s: float, prices: ClassPrices, hours: float
) -> float | None:
    """``hours`` of on-demand request units at a steady mean rate, in the prices' currency."""
    seconds = 3600.0 * hours
    return request_units_usd(read_per_s * seconds, write_per_s * seconds, prices)


def provisioned_usd(
    read_units: float, write_units: float, prices: ClassPrices, hours: float
) -> float | None:
    """``hours`` of provisioned read and write capacity units, in the prices' currency."""
    hourly = sum_priced(
        (
            _times(read_units, prices.provisioned_rcu_hour),
            _times(write_units, prices.provisioned_wcu_hour),
        )
    )
    return None if hourly is None else hourly * hours


def storage_usd(
    stored_bytes: float, prices: ClassPrices, gb_bytes: int, months: float = 1.0
) -> float | None:
    """``months`` (a month by default) of stored bytes, in the prices' currency."""
    return _times(stored_bytes / gb_bytes * months, prices.storage_gb_month)


def needed_capacity(peak_per_s: float, target: float) -> int:
    """Capacity units that carry ``peak_per_s`` at ``target`` utilisation (at least 1)."""
    # A hair under an integer (0.7 x 100 / 0.7 = 100.00000000000001) is that integer.
    return max(1, math.ceil(round(peak_per_s / target, 9)))


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _by_class(fn: Any) -> dict[str, float | None]:
    return {name: _round(fn(name)) for name in CLASSES}


def monthly_cost(
    usage: Sequence[Usage],
    stored_bytes: Mapping[str, float],
    prices: Prices,
    *,
    target: float = TARGET_UTILIZATION,
    basis: str = "measured",
    how: str = "mean units/s over the run at AWS scale",
    window: Window = MONTH,
) -> dict[str, Any]:
    """The cost section over ``window`` (a month by default): per table and index, per
    table, and the total (see the module docstring).

    ``stored_bytes`` maps a table (or ``table/index``) to its stored bytes; a table absent
    from it has no storage figure (``None``). The figure a gate reads per table
    (``monthly_usd``, whatever the window: the key keeps its first name) is the table as it
    ran: its provisioned throughput where it had some, else on-demand, plus its storage,
    Standard class.
    """
    hours = window.hours_of(prices)
    months = hours / prices.hours_per_month
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
            "read_on_demand_usd": _by_class(
                lambda c, u=u: on_demand_usd(u.read, 0.0, prices.of(c), hours)
            ),
            "write_on_demand_usd": _by_class(
                lambda c, u=u: on_demand_usd(0.0, u.write, prices.of(c), hours)
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
            table["on_demand_usd"][c] = sum_priced(
                (table["on_demand_usd"][c], row["on_demand_usd"][c])
            )
            table["provisioned_usd"][c] = sum_priced(
                (table["provisioned_usd"][c], row["provisioned"]["usd"][c])
            )
        if row["provisioned_as_run"] is not None:
            table["provisioned_as_run"] = True
            as_run = row["provisioned_as_run"]["usd"]["standard"]
        else:
            as_run = row["on_demand_usd"]["standard"]
        table["as_run_usd"] = sum_priced((table["as_run_usd"], as_run))
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
            _by_class(lambda c, b=stored: storage_usd(b, prices.of(c), prices.gb_bytes, months))
            if known
            else None
        )
        for key in ("on_demand_usd", "provisioned_usd"):
            table[key] = {c: _round(v) for c, v in table[key].items()}
        storage = table["storage_usd"]["standard"] if table["storage_usd"] else 0.0
        table["monthly_usd"] = _round(sum_priced((table["as_run_usd"], storage)))
        del table["as_run_usd"]
    total = {
        "on_demand_usd": _by_class(
            lambda c: sum_priced(t["on_demand_usd"][c] for t in tables.values())
        ),
        "provisioned_usd": _by_class(
            lambda c: sum_priced(t["provisioned_usd"][c] for t in tables.values())
        ),
        "storage_usd": _by_class(
            lambda c: sum_priced((t["storage_usd"] or {}).get(c, 0.0) for t in tables.values())
        )
        if any(t["storage_usd"] for t in tables.values())
        else None,
        "monthly_usd": _round(sum_priced(t["monthly_usd"] for t in tables.values())),
    }
    return {
        "basis": basis,
        "how": how,
        "prices": prices.to_dict(),
        "currency": prices.currency,
        "stamp": prices.stamp(),
        "window": window.to_dict(prices),
        "target_utilization": target,
        "scopes": scopes,
        "tables": dict(sorted(tables.items())),
        "total": total,
        "counted": COUNTED,
    }


_SYMBOL = {"USD": "$", "CNY": "¥"}
"""How a currency's amounts print; another code prints before the amount (``EUR 1.50``)."""


def format_money(value: float | None, currency: str = "USD") -> str:
    """To the cent (or fen); under one, to four places (a pattern of a few units/s)."""
    if value is None:
        return "-"
    mark = _SYMBOL.get(currency, f"{currency} ")
    return (
        f"{mark}{value:,.2f}" if value >= 0.995 or value == 0 else f"{mark}{value:,.4f}".rstrip("0")
    )


def format_usd(value: float | None) -> str:
    """Dollars to the cent; under a dollar, to four places (a pattern of a few units/s)."""
    return format_money(value, "USD")


def currency_of(section: Mapping[str, Any]) -> str:
    """The currency of a cost section (USD for one written before sections named theirs)."""
    return str(section.get("currency") or section.get("prices", {}).get("currency") or "USD")


def format_cost(
    section: Mapping[str, Any], *, title: str | None = None, counted: bool = True
) -> list[str]:
    """The cost section as the summary and ``loadgen check`` print it: ``title`` (default:
    the section's window, ``Cost a month``), how it was made, each table and index, each
    table, the totals, what is not priced and (``counted``) what a figure holds."""
    stamp = section["stamp"]
    currency = currency_of(section)
    window = window_of(section)

    def money(value: float | None) -> str:
        return format_money(value, currency)

    target = section["target_utilization"]
    heading = title or ("Cost a month" if window["month"] else f"Cost of {window['words']}")
    how = (
        f"How: {section['how']}, carried to {window['words']}; provisioned: the capacity that "
        f"carries the peak second at {target:.0%} utilisation."
    )
    lines = [
        f"{heading} ({section['basis']}; {stamp}; {currency}):",
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
            f"{money(row['on_demand_usd']['standard']):>11} {peak:>13}  "
            f"{money(prov['usd']['standard'])} "
            f"({prov['read_capacity']:,}/{prov['write_capacity']:,} r/w)"
        )
        as_run = row.get("provisioned_as_run")
        if as_run:
            lines.append(
                f"  {'':<22} provisioned as run: {as_run['read_capacity']:,.0f} RCU, "
                f"{as_run['write_capacity']:,.0f} WCU = {money(as_run['usd']['standard'])}"
            )
    lines.append("  Per table, Standard / Standard-IA: on-demand, provisioned at peak, storage")
    for name, table in section["tables"].items():
        storage = table["storage_usd"]
        stored = (
            "not known"
            if storage is None
            else f"{table['storage_bytes'] / 1e6:,.1f} MB {money(storage['standard'])} / "
            f"{money(storage['standard_ia'])}"
        )
        pair = [
            f"{money(table[key]['standard'])} / {money(table[key]['standard_ia'])}"
            for key in ("on_demand_usd", "provisioned_usd")
        ]
        lines.append(f"    {name:<22} {pair[0]:>23} {pair[1]:>23}  {stored}")
    total = section["total"]
    storage = total["storage_usd"] or {}
    span = "a month" if window["month"] else f"of {window['words']}"
    lines.append(f"  Total {span} ({stamp}):")
    for name in CLASSES:
        lines.append(
            f"    {_LABEL[name]:<12} on-demand {money(total['on_demand_usd'][name]):>11}  "
            f"provisioned {money(total['provisioned_usd'][name]):>11}  "
            f"storage {money(storage.get(name)):>9}"
        )
    lines.append(f"    The tables as run (Standard, with storage): {money(total['monthly_usd'])}")
    lines += unpriced_lines(section)
    if counted:
        lines += textwrap.wrap(
            section["counted"], 100, initial_indent="  ", subsequent_indent="    "
        )
    return lines


def unpriced_lines(section: Mapping[str, Any]) -> list[str]:
    """The line naming the figures no source priced (``-`` in the tables), if any."""
    unpriced = section["prices"].get("unpriced") or []
    if not unpriced:
        return []
    note = (
        f"-: not priced: no source gives {section['prices']['region']}'s "
        f"{', '.join(unpriced)} (see {section['prices']['file']})."
    )
    return textwrap.wrap(note, 100, initial_indent="  ", subsequent_indent="    ")
