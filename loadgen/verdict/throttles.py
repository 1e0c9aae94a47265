"""A run's throttles as the target named them, and what its launch asks of each table and index.

The results file keeps every throttle with what the target said (`loadgen.heat.results`: each
operation row's ``throttles``): DynamoDB's reason, the table or index it names and, where the
emulator's partition model refused, the model's cause (`loadgen.refusals.CAUSES`). The
diagnosis and the per-pattern verdict read them through this module:

- `groups`: the throttles by table or index, side (read or write) and cause, with the patterns
  they fell on. Where the target named no cause (DynamoDB itself), a key-range reason is told
  apart by where the throttles fell (`spread`): on one partition's share of the key space, a
  hot key or range; spread over the space, the table's or index's capacity. Where it named no
  reason at all, the cause is "not reported", never a guess.
- `demand`: the units per second the launch asks of a table or index at AWS scale. A design
  run keeps ``loadgen check``'s answer for its launch rates (``design.check``, as ``check
  --out`` writes it): the figures are check's, one model call for both doors. Otherwise each
  pattern's rate asked (the open model's offered rate, or the calls made) times the units one
  of its calls spent there, throttled attempts counted once as if served.
- `key_demand`: what the launch asks of one key, where check named it among its hottest.
- `key_shards`: the shards check splits a hot key over, where a limit of it fails.

    for group in groups(results):
        print(group.scope, group.side, group.cause, group.attempts)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from loadgen.model.capacity import TRANSACTION_CANCELLED
from loadgen.model.partitions import key_ceiling
from loadgen.refusals import NOT_REPORTED
from loadgen.verdict import analysis
from loadgen.verdict.analysis import Scope

__all__ = [
    "CHECKED",
    "Demand",
    "ThrottleGroup",
    "cancelled_by_throttles",
    "checked",
    "checked_patterns",
    "demand",
    "groups",
    "key_demand",
    "key_serves",
    "key_shards",
    "row_scope",
    "side_of",
    "spread",
]

_READS = frozenset({"GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"})
_CAUSE_OF_LIMIT = {
    "ProvisionedThroughputExceeded": "provisioned",
    "AccountLimitExceeded": "account",
    "MaxOnDemandThroughputExceeded": "maximum",
}
CONCENTRATED = 0.5
"""Share of a scope's throttles on one partition's range (of `PARTITIONS`) above which, where
the target names no cause, a key-range throttle is a hot key or range, not the capacity."""
PARTITIONS = 16
CHECKED = "check's figures for the design file's launch rates"
"""The basis of a demand a design run's results carry from ``loadgen check``."""


@dataclass
class ThrottleGroup:
    """Throttles of one table or index, one side, one cause."""

    scope: Scope
    side: str
    """``read`` or ``write``: the side DynamoDB's reason names (else the calls')."""
    cause: str
    """The model's cause (`loadgen.refusals.CAUSES`), one read from the spread of the
    throttles (`inferred`), or ``not reported``."""
    reasons: set[str] = field(default_factory=set)
    """DynamoDB's reasons among them (``not reported`` where it gave none)."""
    attempts: float = 0.0
    """Throttled attempts (and batch items left unprocessed)."""
    final: int = 0
    """Calls that finally failed on them."""
    patterns: dict[str, float] = field(default_factory=dict)
    """Attempts by access pattern (the operation rows' names)."""
    inferred: str = ""
    """Where the cause was read from the spread, how: the words of `spread`."""
    source: str = "model"
    """``model``: the emulator's partition model refused; ``engine``: the target did."""


def cancelled_by_throttles(row: Mapping[str, Any]) -> int:
    """The row's transactions a throttle cancelled: calls whose final answer was a
    ``TransactionCanceledException`` with a throttle among its reasons, each counted once (the
    row's ``cancellations`` count the items' reasons, several to a transaction)."""
    return sum(
        int(t.get("final") or 0)
        for t in row.get("throttles") or ()
        if t.get("exception") == TRANSACTION_CANCELLED
    )


def side_of(reason: str, operation: str) -> str:
    """``read`` or ``write``: from DynamoDB's reason (``TableReadKeyRange...``), else the call."""
    if reason.startswith(("TableRead", "IndexRead")):
        return "read"
    if reason.startswith(("TableWrite", "IndexWrite")):
        return "write"
    return "read" if operation in _READS else "write"


def row_scope(row: dict[str, Any]) -> Scope | None:
    """The table (or index) an operation row's calls were addressed to, as far as it says."""
    hot = row.get("hot_key") or {}
    if hot.get("table"):
        return Scope(hot["table"], hot.get("index"))
    for name in row.get("units") or {}:
        table, _, index = name.partition("/")
        return Scope(table, index or None)
    return None


def _scope(name: str | None) -> Scope | None:
    if not name:
        return None
    table, _, index = name.partition("/")
    return Scope(table, index or None)


def spread(results: dict[str, Any], scope: Scope, side: str) -> tuple[str, str]:
    """Where DynamoDB names a key-range reason and no cause: ``partition`` when most of the
    scope's throttled attempts fell on one partition's range of the key space, ``capacity``
    when they spread over it; with the words that say so."""
    lane = next((la for la in analysis.lanes_of(results, scope) if la["access"] == side), None)
    if lane is None:
        return NOT_REPORTED, "no heat was recorded for it"
    buckets = results["heat"]["buckets"]
    totals = [0.0] * buckets
    for row in lane["throttled_attempts"]:
        for b, value in enumerate(row):
            totals[b] += value
    loads = [0.0] * PARTITIONS
    for b, value in enumerate(totals):
        loads[(2 * b + 1) * PARTITIONS // (2 * buckets)] += value
    total = sum(loads)
    if not total:
        return NOT_REPORTED, "no throttle was placed on a key"
    share = max(loads) / total
    ranges = sum(1 for load in loads if load)
    words = (
        f"DynamoDB names no cause; {share:.0%} of these throttles fell on one sixteenth of "
        f"the key space ({ranges} of {PARTITIONS} ranges had any)"
    )
    return ("partition" if share >= CONCENTRATED else "capacity"), words


def groups(results: dict[str, Any]) -> list[ThrottleGroup]:
    """The run's throttles by table or index, side and cause, most attempts first."""
    found: dict[tuple[Scope | None, str, str], ThrottleGroup] = {}
    tables = {scope.table for scope in analysis.scopes(results)}
    only = Scope(next(iter(tables))) if len(tables) == 1 else Scope(NOT_REPORTED)
    for row in results["operations"]:
        for throttle in row.get("throttles") or ():
            reason = throttle["reason"]
            # Where the target named no table: the row's own, else the run's only table.
            scope = _scope(throttle.get("scope")) or row_scope(row) or only
            side = side_of(reason, row["operation"])
            cause = throttle["cause"]
            inferred = ""
            if cause == NOT_REPORTED and reason != NOT_REPORTED:
                limit = reason.removeprefix("Table").removeprefix("Index")
                limit = limit.removeprefix("Read").removeprefix("Write")
                if limit in _CAUSE_OF_LIMIT:
                    cause = _CAUSE_OF_LIMIT[limit]
                else:
                    cause, inferred = spread(results, scope, side)
            group = found.get((scope, side, cause))
            if group is None:
                group = found[(scope, side, cause)] = ThrottleGroup(scope, side, cause)
            group.reasons.add(reason)
            group.attempts += throttle["attempts"]
            group.final += throttle.get("final", 0)
            group.patterns[row["name"]] = group.patterns.get(row["name"], 0) + throttle["attempts"]
            group.inferred = group.inferred or inferred
            if throttle.get("source") == "engine" and cause == NOT_REPORTED:
                group.source = "engine"
    return sorted(found.values(), key=lambda g: -g.attempts)


@dataclass(frozen=True)
class Demand:
    """Units per second the launch asks of one table or index, one side, at AWS scale."""

    units_per_s: float
    basis: str
    """Where the rates come from: the design file's launch rates, the offered rate, or the
    calls made (a closed-model run: what the machine sent, not what a launch asks)."""
    by_pattern: dict[str, float]
    """Each pattern's part of it."""


def _asked(results: dict[str, Any], row: dict[str, Any]) -> tuple[float, str] | None:
    """A pattern's rate asked at AWS scale, operations/s, and where it comes from."""
    design = results.get("design") or {}
    for pattern in design.get("patterns") or ():
        if pattern["id"] == row["name"] and pattern.get("rate"):
            return float(pattern["rate"]), "the design file's launch rates"
    load = results.get("load") or {}
    for entry in load.get("operations") or ():
        if entry.get("operation") == row["name"] and entry.get("offered"):
            seconds = float(results.get("duration_s") or 0) or 1.0
            scale = float(load.get("scale") or 1.0)
            return float(entry["offered"]) / seconds / scale, "the rate offered"
    seconds = float(results.get("duration_s") or 0)
    if not seconds or not row.get("requests"):
        return None
    scale = analysis.scale_of(results)
    return float(row["requests"]) / seconds / scale, "the calls the run made"


def checked(results: dict[str, Any]) -> dict[str, Any] | None:
    """``loadgen check``'s answer a design run keeps (``design.check``); None without."""
    found = (results.get("design") or {}).get("check")
    return found if isinstance(found, dict) else None


def checked_patterns(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """check's answer for each pattern (`checked`), by its id; empty without one."""
    return {p["id"]: p for p in (checked(results) or {}).get("patterns") or ()}


def demand(results: dict[str, Any], scope: Scope, side: str) -> Demand | None:
    """What the launch asks of ``scope`` on ``side`` (see the module docstring); None when no
    pattern spent units there."""
    answer = checked(results)
    if answer is not None:
        return _checked_demand(answer, scope, side)
    parts: dict[str, float] = {}
    bases = set()
    for row in results["operations"]:
        spent = (row.get("units") or {}).get(scope.name, {}).get(side)
        if not spent:
            continue
        # Units per call that did its work: one refused before any work, or throttled to
        # the end, spent nothing (a failed condition did spend).
        finals = sum(t.get("final", 0) for t in row.get("throttles") or ())
        served = int(row.get("requests") or 0) - int(row.get("rejected") or 0) - finals
        asked = _asked(results, row)
        if asked is None or served <= 0:
            continue
        rate, basis = asked
        parts[row["name"]] = rate * float(spent) / served
        bases.add(basis)
    if not parts:
        return None
    basis = " and ".join(sorted(bases))
    return Demand(sum(parts.values()), basis, parts)


def _checked_demand(answer: dict[str, Any], scope: Scope, side: str) -> Demand | None:
    """Check's demand on ``scope``: each pattern's launch rate times the units one operation
    takes there (its ``units_per_operation``), the keyspace's total as check asks it of the
    table's or index's own limit (its ``partitions``)."""
    parts: dict[str, float] = {}
    for pattern in answer.get("patterns") or ():
        units = ((pattern.get("units_per_operation") or {}).get(scope.name) or {}).get(side)
        if units:
            parts[pattern["id"]] = float(pattern["rate"]) * float(units)
    if not parts:
        return None
    count = (answer.get("partitions") or {}).get(scope.name) or {}
    total = count.get(f"{side}_units_per_s")
    return Demand(float(total) if total else sum(parts.values()), CHECKED, parts)


def key_demand(
    results: dict[str, Any], scope: Scope, side: str, key: str
) -> tuple[float, list[str]] | None:
    """Units/s the launch asks of ``key`` on ``scope``'s ``side`` and the patterns asking, as
    check figured it (its ``keys``); None without check's answer, or where it did not list
    the key among its hottest."""
    answer = checked(results)
    for load in (answer or {}).get("keys") or ():
        if load["scope"] == scope.name and load["key"] == key:
            units = float(load.get(f"{side}_units_per_s") or 0.0)
            return (units, list(load.get(f"{side}_patterns") or ())) if units else None
    return None


def key_serves(results: dict[str, Any], scope: Scope, side: str, key: str) -> float:
    """Units/s of ``side`` one partition serves ``key`` at AWS scale: check's figure for the
    partition limit it names ``key`` in, else the model's (`key_ceiling`: eventually
    consistent reads on a GSI, whose reads always are)."""
    for limit in (checked(results) or {}).get("limits") or ():
        where = (limit["scope"], limit["kind"], limit.get("key"), limit.get("cause"))
        if where == (scope.name, side, key, "partition") and limit.get("serves_units_per_s"):
            return float(limit["serves_units_per_s"])
    return key_ceiling(side, eventual=side == "read" and scope.index is not None)


def key_shards(results: dict[str, Any], scope: Scope, side: str, key: str) -> int | None:
    """The shards check splits ``key`` over (`loadgen.model.sizing.shard_plan`, as
    ``check --remedy`` writes them), where a limit of ``scope``'s ``side`` fails on it;
    None without check's answer or such a limit."""
    for limit in (checked(results) or {}).get("limits") or ():
        same = (limit["scope"], limit["kind"], limit.get("key")) == (scope.name, side, key)
        if same and limit.get("shards"):
            return int(limit["shards"])
    return None
