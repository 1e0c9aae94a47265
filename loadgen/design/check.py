"""What ``loadgen check DESIGN_FILE`` reports of a design at launch, and how it prints.

The figures are the partition model's, asked by `loadgen.simulate.launch` (the launch window
at the file's rates through the same model a simulation and the emulator use): per access
pattern, the units one operation costs on the table and on each index and whether the launch
throttles it, and by which limit; per key value, the units per second it takes at launch; per
limit of every table and index, what is asked of it and what it serves. This module holds
those figures, prints them, writes them as JSON (``check --out``) and prices them a month.

    report = check(load_design("examples/designs/counter.yaml", "single"))  # loadgen.simulate
    print("\\n".join(report.lines()))
    report.failed   # True where a limit refuses a pattern at launch

`stored_bytes` (a design's starting data in bytes per table) lives here for the cost a month
of a check and of a run (``workloads/design.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from loadgen.design.generators import Draws
from loadgen.design.loader import Design
from loadgen.design.patterns import typed_value
from loadgen.design.templates import RequestTemplate
from loadgen.design.values import format_rate
from loadgen.model.capacity import item_size
from loadgen.model.partitions import PARTITION_READ_UNITS, PARTITION_WRITE_UNITS, key_ceiling
from loadgen.model.sizing import RISK
from loadgen.pricing import MONTH, Prices, Usage, Window, monthly_cost
from loadgen.refusals import CAUSES

__all__ = [
    "FAIL",
    "PASS",
    "CheckReport",
    "Contention",
    "KeyLoad",
    "LimitCheck",
    "PartitionCount",
    "PatternCheck",
    "PatternThrottle",
    "checked_span",
    "scope_name",
    "stored_bytes",
    "units",
]

PASS, FAIL = "PASS", "FAIL"

LIMIT_NAMES = {
    "partition": "a partition's ceiling",
    "capacity": "on-demand capacity",
    "provisioned": "provisioned capacity",
    "account": "on-demand per-table quota",
    "maximum": "on-demand maximum (OnDemandThroughput)",
    "buffer": "write buffer",
}
"""Each cause (`loadgen.refusals.CAUSES`), as the Expected column names the limit."""


def checked_span(seconds: float) -> str:
    """The launch a check asks of the model, in words: ``10 minutes``."""
    return f"{seconds / 60:g} minute{'s' if seconds != 60 else ''}"


def units(value: float) -> str:
    """Units per second as the check prints them: ``1,500``, ``0.01``."""
    return f"{value:,.0f}" if value >= 10 or value == 0 else f"{value:.2g}"


def scope_name(table: str, index: str | None) -> str:
    """``table`` or ``table/index``, as keys, limits and the cost name a table or index."""
    return table if index is None else f"{table}/{index}"


@dataclass(frozen=True)
class KeyLoad:
    """The units/s one key value takes at launch on one table or index, and from which
    patterns, reads and writes apart (each has its own ceiling)."""

    scope: str
    key: str
    read: float = 0.0
    write: float = 0.0
    read_patterns: tuple[str, ...] = ()
    write_patterns: tuple[str, ...] = ()
    read_ceiling: float = PARTITION_READ_UNITS
    """Read units/s its partition serves it (`loadgen.model.partitions.key_ceiling`): more
    where every read of its table or index is eventually consistent, as a GSI's are."""

    @property
    def over(self) -> str | None:
        """``write`` or ``read`` when at or over a partition's ceiling of that kind."""
        if self.write >= PARTITION_WRITE_UNITS:
            return "write"
        if self.read >= self.read_ceiling:
            return "read"
        return None

    @property
    def risk(self) -> float:
        return max(self.read / self.read_ceiling, self.write / PARTITION_WRITE_UNITS)

    @property
    def patterns(self) -> tuple[str, ...]:
        return tuple(sorted({*self.read_patterns, *self.write_patterns}))


@dataclass(frozen=True)
class LimitCheck:
    """One limit of one table or index, for reads or for writes, at launch."""

    table: str
    index: str | None
    kind: str
    """``read`` or ``write``."""
    cause: str
    """The model's name of the limit (`loadgen.refusals.CAUSES`)."""
    asked: float
    """Units/s asked of it at launch: the whole table's or index's for its capacity; for a
    partition's ceiling, the hottest key's, or the most asked partition's where the model
    refused more than one key's worth."""
    serves: float
    """Units/s it serves at launch."""
    refused_share: float
    """Of the units asked of the table's or index's ``kind`` over the launch, the share this
    limit refused."""
    reason: str
    """DynamoDB's ``ThrottlingReason`` a throttle by it answers with."""
    verdict: str = PASS
    """``FAIL`` when it throttles a pattern over 1% of its attempts at launch."""
    key: str | None = None
    """A partition's ceiling: the hottest key."""
    key_units: float = 0.0
    """The hottest key's units/s."""
    patterns: tuple[str, ...] = ()
    """The patterns it fails."""
    back_pressure: tuple[str, ...] = ()
    """Of those, the table's writes an index limit pushes back on."""
    fills_in: float | None = None
    """A GSI's write buffer: seconds until it is full at launch (0: it filled), where it fills
    within a launch's hour (`loadgen.model.partitions.falls_behind`)."""
    shards: int | None = None
    """A hot key's: the shards that split it (`loadgen.model.sizing.shard_plan`, on the
    partitions the launch starts with, the other keys' share beside them)."""
    shard_partitions: int | None = None
    """The partitions those shards need (more than the launch starts with: more partitions)."""
    key_moves: bool = False
    """Whether ``key`` holds a time generator's value: its shards are placed anew each
    bucket."""

    @property
    def scope(self) -> str:
        return scope_name(self.table, self.index)

    def words(self) -> str:
        """The limit and what is asked of it: ``table T's on-demand capacity, 4,800 write
        units/s asked of 4,000``; ``a partition's ceiling: K at 1,500 write units/s of 1,000``."""
        owner = f"{'index' if self.index else 'table'} {self.scope}"
        if self.cause == "buffer":
            if "KeyRange" in self.reason:
                what = f"{self.key} at " if self.key is not None else "a partition at "
                units_at = self.key_units if self.key is not None else self.asked
                behind = (
                    f"behind a partition's ceiling: {what}{units(units_at)} {self.kind} "
                    f"units/s of {units(self.serves)}"
                )
            else:
                behind = (
                    f"behind its capacity: {units(self.asked)} {self.kind} units/s asked of "
                    f"{units(self.serves)}"
                )
            when = (
                "full at launch"
                if not self.fills_in
                else f"full after about {self.fills_in / 60:,.0f} min at launch"
            )
            return (
                f"{owner}'s write buffer, {behind}: {when}, then every write to table "
                f"{self.table} is refused until it drains"
            )
        if self.cause != "partition":
            return (
                f"{owner}'s {LIMIT_NAMES.get(self.cause, self.cause)}, {units(self.asked)} "
                f"{self.kind} units/s asked of {units(self.serves)}"
            )
        on = f" on {owner}" if self.index else ""
        # One key over the ceiling is the whole story: no split helps it.
        if self.key is not None and self.key_units >= min(self.asked * 0.999, self.serves):
            return (
                f"a partition's ceiling: {self.key}{on} at {units(self.key_units)} {self.kind} "
                f"units/s of {units(self.serves)}"
            )
        hottest = (
            f" (its hottest key {self.key} at {units(self.key_units)})"
            if self.key is not None
            else " (no key repeats: its keys spread evenly)"
        )
        return (
            f"a partition's ceiling: a partition of {owner} at {units(self.asked)} {self.kind} "
            f"units/s of {units(self.serves)}{hottest}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "index": self.index,
            "scope": self.scope,
            "kind": self.kind,
            "limit": LIMIT_NAMES.get(self.cause, self.cause),
            "cause": self.cause,
            "reason": self.reason,
            "asked_units_per_s": round(self.asked, 3),
            "serves_units_per_s": round(self.serves, 3),
            "refused_share": round(self.refused_share, 6),
            "key": self.key,
            "key_units_per_s": round(self.key_units, 3),
            "verdict": self.verdict,
            "words": self.words(),
            "patterns": list(self.patterns),
            "back_pressure": list(self.back_pressure),
            "fills_in_s": None if self.fills_in is None else round(self.fills_in, 1),
            "shards": self.shards,
            "shard_partitions": self.shard_partitions,
        }


@dataclass(frozen=True)
class PatternThrottle:
    """A share of one pattern's attempts at launch throttled by one limit."""

    table: str
    index: str | None
    kind: str
    cause: str
    reason: str
    share: float
    """Of the pattern's attempts at launch."""


@dataclass
class PatternCheck:
    """One access pattern at launch: its units per operation and its verdict."""

    id: str
    operation: str
    table: str
    index: str | None
    rate: float
    """Operations/s at launch (the file's rate)."""
    scopes: dict[str, list[float]]
    """Per operation, [read, write] units on each table and index (``table/index``): what
    the cost a month is worked out from."""
    throttled_share: float = 0.0
    """Throttled attempts over attempts at launch (the SDK's retries included)."""
    throttles: tuple[PatternThrottle, ...] = ()
    """By limit, most first."""
    verdict: str = PASS
    reason: str = ""
    """Why it fails: the limit and the side (read, write), in words."""
    grows_to: float | None = None
    """Write units of one operation once its item has grown with its updates, where it does."""

    @property
    def read_units(self) -> float:
        return sum(read for read, _ in self.scopes.values())

    @property
    def write_units(self) -> float:
        """Write units of one operation on its table (its index writes apart)."""
        return sum(write for scope, (_, write) in self.scopes.items() if "/" not in scope)

    @property
    def index_writes(self) -> float:
        """Write units of one operation on indexes (GSI write amplification)."""
        return sum(write for scope, (_, write) in self.scopes.items() if "/" in scope)

    @property
    def cause(self) -> str | None:
        return self.throttles[0].cause if self.verdict == FAIL and self.throttles else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "operation": self.operation,
            "table": self.table,
            "index": self.index,
            "rate": self.rate,
            "units_per_operation": {
                scope: {"read": round(read, 4), "write": round(write, 4)}
                for scope, (read, write) in self.scopes.items()
            },
            "grows_to_write_units": self.grows_to,
            "throttled_share": round(self.throttled_share, 6),
            "throttles": [
                {
                    "scope": scope_name(t.table, t.index),
                    "kind": t.kind,
                    "cause": t.cause,
                    "reason": t.reason,
                    "share": round(t.share, 6),
                }
                for t in self.throttles
            ],
            "verdict": self.verdict,
            "cause": self.cause,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Contention:
    """The transactions a second one pattern puts on its busiest item at launch."""

    pattern: str
    table: str
    key: str
    """The item's partition-key value."""
    sort: str
    """The template of its sort key (``""`` for a table without one)."""
    per_s: float

    def words(self) -> str:
        item = f"{self.key} ({self.sort})" if self.sort else self.key
        return (
            f"{self.pattern} puts {self.per_s:,.0f} transactions/s on the item {item} at "
            "launch: DynamoDB cancels a transaction that meets another in flight on the same "
            "item (TransactionConflict), which no local engine shows"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "pattern": self.pattern,
            "table": self.table,
            "key": self.key,
            "sort": self.sort,
            "transactions_per_s": round(self.per_s, 3),
        }


@dataclass(frozen=True)
class PartitionCount:
    """Partitions of one table or index: needed by the launch demand and by the starting
    data (the model's formula), and the model's at the start and the end of the launch."""

    by_demand: int
    by_size: int
    at_start: int
    at_end: int
    read_units: float
    """Units/s asked at launch (the demand it is sized by)."""
    write_units: float
    busiest_read_units: float | None = None
    """The busiest partition's units/s over the launch, as the model served them; None where
    a partition split during it."""
    busiest_write_units: float | None = None


@dataclass
class CheckReport:
    design: Design
    patterns: list[PatternCheck]
    keys: list[KeyLoad]
    limits: list[LimitCheck]
    partitions: dict[str, PartitionCount]
    """Per table and index (``table/index``)."""
    stored_bytes: dict[str, int]
    seconds: int = 0
    """Seconds of launch the model ran at the file's rates."""
    notes: list[str] = field(default_factory=list)
    contention: list[Contention] = field(default_factory=list)
    """Transaction patterns that put `CONTENTION_RATE` or more a second on one item."""
    retry_mode: str = "standard"
    """The SDK retry mode the model's clients retry throttled attempts in (the throttled
    shares count their retries): `loadgen.simulate.Settings.retry_mode`."""

    @property
    def failed(self) -> bool:
        """Whether a limit throttles a pattern at launch (``check`` exits 1)."""
        return any(p.verdict == FAIL for p in self.patterns) or any(
            limit.verdict == FAIL for limit in self.limits
        )

    def usage(self) -> list[Usage]:
        """Per table and index, the units/s the patterns' launch rates consume (steady: the
        peak second is the mean)."""
        totals: dict[str, list[float]] = {}
        for estimate in self.patterns:
            for scope, (read, write) in estimate.scopes.items():
                entry = totals.setdefault(scope, [0.0, 0.0])
                entry[0] += estimate.rate * read
                entry[1] += estimate.rate * write
        provisioned = {}
        for table, schema in self.design.schemas.items():
            for scope, throughput in _provisioned_throughput(self.design, table, schema):
                provisioned[scope] = throughput
        return [
            Usage(scope, read, write, read, write, provisioned.get(scope))
            for scope, (read, write) in totals.items()
        ]

    def cost(self, prices: Prices, window: Window = MONTH) -> dict[str, Any]:
        """The design's cost at its launch rates over ``window`` (a month by default), in the
        form a run's is."""
        return monthly_cost(
            self.usage(),
            {table: float(size) for table, size in self.stored_bytes.items()},
            prices,
            basis="estimated",
            how="the file's launch rates and item sizes, steady",
            window=window,
        )

    def hottest(self, k: int = 8) -> list[KeyLoad]:
        return sorted(self.keys, key=lambda load: -load.risk)[:k]

    def lines(self) -> list[str]:
        design = self.design
        minutes = checked_span(self.seconds)
        out = [
            f"Design {design.title} ({design.name}): {len(self.patterns)} access patterns, "
            f"{sum(p.rate for p in self.patterns):,.1f} operations/s at launch; the partition "
            f"model over the first {minutes} at those rates, throttled attempts retried in the "
            f"SDK's {self.retry_mode} mode",
            *(f"  note: {note}" for note in [*design.notes, *self.notes]),
            "",
        ]
        # AWS's data model numbers its patterns: their descriptions say which is which.
        labels = {p.id: design.label(p.id) for p in self.patterns}
        width = max(22, *(len(label) for label in labels.values()))
        out.append(
            f"{'Pattern':<{width}} {'Operation':<18} {'Rate':>10} {'RCU/op':>7} {'WCU/op':>7} "
            f"{'GSI w/op':>8}  Expected"
        )
        for p in self.patterns:
            out.append(
                f"{labels[p.id]:<{width}} {p.operation:<18} {format_rate(p.rate):>10} "
                f"{p.read_units:>7.1f} "
                f"{p.write_units:>7.1f} {p.index_writes:>8.1f}  {p.verdict}"
                + (f": {p.reason}" if p.reason else "")
            )
        out += ["", "Units per operation on each table and index (read/write):"]
        for p in self.patterns:
            parts = [f"{scope} {read:g}/{write:g}" for scope, (read, write) in p.scopes.items()]
            grown = f"; its item grows: {p.grows_to:g} write units an update" if p.grows_to else ""
            out.append(f"  {p.id:<22} {', '.join(parts)}{grown}")
        out += [
            "",
            "Hottest keys at launch (units/s on one key value; a partition serves "
            f"{PARTITION_READ_UNITS:,.0f} read, {key_ceiling('read', eventual=True):,.0f} "
            "where every read is eventually consistent as an index's are, and "
            f"{PARTITION_WRITE_UNITS:,.0f} write):",
        ]
        for load in self.hottest():
            flag = f"  OVER ({load.over})" if load.over else ("  risk" if load.risk >= RISK else "")
            who = [
                f"{kind}: {', '.join(names)}"
                for kind, names in (("read", load.read_patterns), ("write", load.write_patterns))
                if names
            ]
            out.append(
                f"  {load.scope:<24} {load.key:<36} read {units(load.read):>9}  "
                f"write {units(load.write):>8}{flag}  ({'; '.join(who)})"
            )
        out += ["", "Limits at launch (what each table and index is asked, and serves):"]
        for limit in self.limits:
            refused = (
                f"; {_percent(limit.refused_share)} of what was asked refused (retries included)"
                if limit.refused_share
                else ""
            )
            fails = ""
            if limit.patterns:
                pushed = set(limit.back_pressure)
                fails = "; fails " + ", ".join(
                    f"{p} (back-pressure)" if p in pushed else p for p in limit.patterns
                )
            out.append(
                f"  {limit.verdict}  {limit.scope:<24} {limit.kind:<5}  {limit.words()}"
                f"{refused}{fails}"
            )
        out += ["", "Partitions (needed by the launch demand and by the starting data; the "
                "model's at the start and the end of the launch):"]  # fmt: skip
        for scope, count in self.partitions.items():
            size = self.stored_bytes.get(scope)
            data = f" ({size / 1e6:,.1f} MB of starting data)" if size is not None else ""
            out.append(
                f"  {scope:<24} {count.by_demand} by demand ({count.read_units:,.0f} read, "
                f"{count.write_units:,.0f} write units/s), {count.by_size} by size{data}; "
                f"the model's {count.at_start} -> {count.at_end}"
            )
        failing = [p for p in self.patterns if p.verdict == FAIL]
        out.append("")
        if failing:
            out.append(
                f"Expected: FAIL. {len(failing)} of {len(self.patterns)} patterns throttled at "
                f"launch; {failing[0].id}: {failing[0].reason}."
            )
        elif self.failed:
            worst = next(limit for limit in self.limits if limit.verdict == FAIL)
            out.append(f"Expected: FAIL. {worst.words()}.")
        else:
            out.append("Expected: PASS. No limit of the model throttles a pattern at launch.")
        return out

    def to_dict(self) -> dict[str, Any]:
        """What `lines` prints, as JSON (``loadgen check --out``)."""
        design = self.design
        return {
            "design": {"file": design.path, "name": design.name, "title": design.title},
            "seconds": self.seconds,
            "retry_mode": self.retry_mode,
            "verdict": FAIL if self.failed else PASS,
            "notes": [*design.notes, *self.notes],
            "patterns": [p.to_dict() for p in self.patterns],
            "keys": [
                {
                    "scope": load.scope,
                    "key": load.key,
                    "read_units_per_s": round(load.read, 3),
                    "write_units_per_s": round(load.write, 3),
                    "read_patterns": list(load.read_patterns),
                    "write_patterns": list(load.write_patterns),
                    "over": load.over,
                    "serves_read_units_per_s": load.read_ceiling,
                }
                for load in self.hottest(len(self.keys))
            ],
            "limits": [limit.to_dict() for limit in self.limits],
            "contention": [found.to_dict() for found in self.contention],
            "limit_causes": dict(CAUSES),
            "partitions": {
                scope: {
                    "by_demand": count.by_demand,
                    "by_size": count.by_size,
                    "at_start": count.at_start,
                    "at_end": count.at_end,
                    "read_units_per_s": round(count.read_units, 3),
                    "write_units_per_s": round(count.write_units, 3),
                    "busiest_read_units_per_s": _rounded(count.busiest_read_units),
                    "busiest_write_units_per_s": _rounded(count.busiest_write_units),
                }
                for scope, count in self.partitions.items()
            },
            "stored_bytes": dict(self.stored_bytes),
        }


def _rounded(units: float | None) -> float | None:
    return None if units is None else round(units, 3)


def _percent(share: float) -> str:
    value = share * 100
    return f"{value:.1f}%" if value < 10 else f"{value:.0f}%"


def stored_bytes(design: Design, *, seed: int = 1) -> dict[str, int]:
    """Per table, the bytes of the design's starting data at launch: its entities' populate
    counts times their item sizes, and the items the file lists. What its storage costs a
    month is read from."""
    generators = design.generators(seed=seed)
    first = next(iter(design.schemas))
    stored: dict[str, int] = {}
    for entity in design.spec.entities.values():
        if not entity.populate:
            continue
        table = entity.table or first
        types = dict(design.schemas[table].attribute_types)
        typed = {a: typed_value(v, a, types.get(a)) for a, v in entity.item.items()}
        size = item_size(RequestTemplate({"i": typed}).render(Draws(generators))["i"])
        count = 1
        for generator, how_many in entity.population.items():
            cardinality = generators[generator].cardinality or 1
            count *= cardinality if how_many == "all" else min(int(how_many), cardinality)
        stored[table] = stored.get(table, 0) + count * size
    for table, rows in (design.spec.items or {}).items():
        for row in rows:
            item = next(iter(row.values())).get("Item", row)
            stored[table] = stored.get(table, 0) + item_size(item)
    return stored


def _provisioned_throughput(
    design: Design, table: str, schema: Any
) -> list[tuple[str, tuple[float, float]]]:
    """The table's and its indexes' provisioned (read, write) units, as the file declares them."""
    request = next((r for r in design.table_requests if r.get("TableName") == table), {})
    if request.get("BillingMode", "PROVISIONED") != "PROVISIONED":
        return []
    found = []

    def units(body: Mapping[str, Any]) -> tuple[float, float] | None:
        throughput = body.get("ProvisionedThroughput")
        if not throughput:
            return None
        return (
            float(throughput.get("ReadCapacityUnits", 0)),
            float(throughput.get("WriteCapacityUnits", 0)),
        )

    own = units(request)
    if own is not None:
        found.append((table, own))
    for index in request.get("GlobalSecondaryIndexes") or ():
        got = units(index)
        if got is not None:
            found.append((f"{table}/{index['IndexName']}", got))
    return found
