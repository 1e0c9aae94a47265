"""Which key or range of a table or index ran hot, from the heat: the *where* of a partition's
ceiling, never the *whether*.

That a partition's ceiling refused is the target's to say (`loadgen.verdict.throttles`); the
heat then names where: the bucket that took the throttled attempts, and the key that fills it.

- **moving hot spot**: each second one key takes most of the traffic, and which key changes
  over time without coming back (a time-ordered key): key by entity and time bucket.
- **hot key** / **hot GSI key**: one key fills the throttled partition. For writes, shard
  the key (N sized on the launch's demand on it); for reads, a Limit, a sparse index,
  eventually consistent reads, a cache (DAX), or read copies, N sized on read units.
- **hot range**: several keys of one partition together: a higher-cardinality key.

Without throttles, a key that sustains half a partition's ceiling or more is named as a risk.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loadgen.model.hashing import bucket_of
from loadgen.model.sizing import RISK, shards_for
from loadgen.verdict import analysis
from loadgen.verdict.analysis import Scope
from loadgen.verdict.delivery import fell_behind
from loadgen.verdict.findings import GUIDES, Finding
from loadgen.verdict.patterns import MAX_THROTTLED_SHARE
from loadgen.verdict.throttles import (
    Demand,
    ThrottleGroup,
    checked_patterns,
    key_demand,
    key_serves,
    key_shards,
)

__all__ = ["key_finding", "moving_hot_spot"]

HOT_KEY_SHARE = 0.5
"""A key with this share of its throttled bucket's touches is the hot key; less, and the
bucket's partition is a hot range of several keys."""
_PARTITIONS = 16
# Equal ranges of the hash space a hot range is looked for in (the diagnosis's default).
_MIN_COLUMN = 10
# Seconds with fewer touches say little about which key leads: leave them out.


@dataclass(frozen=True)
class _Place:
    """Where the heat puts a scope's hottest spot on one side."""

    bucket: int | None
    """The heat bucket; None where keys were hashed and cannot be placed."""
    key: str | None
    share: float
    """The key's share of its bucket's touches (of the scope's, when keys were hashed)."""
    throttled: float
    """Throttled attempts in the bucket (on the side)."""


def _column_sums(grid: list[list[float]]) -> list[float]:
    return [sum(column) for column in zip(*grid, strict=True)] if grid else []


def _side_lane(results: dict[str, Any], scope: Scope, side: str) -> dict[str, Any] | None:
    return next((la for la in analysis.lanes_of(results, scope) if la["access"] == side), None)


def _place(results: dict[str, Any], scope: Scope, side: str) -> _Place | None:
    heat = results["heat"]
    touches = _column_sums(analysis.bucket_series(results, scope))
    lane = _side_lane(results, scope, side)
    throttled = _column_sums(lane["throttled_attempts"]) if lane else []
    keys = analysis.top_keys(results, scope)
    if heat.get("keys_hashed") or not touches:
        hot = analysis.hot_key(results, scope)
        if hot is None:
            return None
        return _Place(None, hot.key, hot.share, sum(throttled))
    if throttled and sum(throttled) > 0:
        bucket = max(range(len(throttled)), key=throttled.__getitem__)
    else:
        hot = analysis.hot_key(results, scope)
        if hot is None:
            return None
        bucket = bucket_of(hot.key, heat["buckets"])
    inside = [row for row in keys if bucket_of(row["key"], heat["buckets"]) == bucket]
    key = inside[0]["key"] if inside else None
    share = float(inside[0]["count"]) / touches[bucket] if inside and touches[bucket] else 0.0
    if throttled and sum(throttled) > 0:
        # A key is the hot one only if its bucket also took most of its partition's
        # throttles: several keys of one partition, each filling its own bucket, are a range.
        buckets = heat["buckets"]
        part = (2 * bucket + 1) * _PARTITIONS // (2 * buckets)
        in_range = sum(
            value
            for b, value in enumerate(throttled)
            if (2 * b + 1) * _PARTITIONS // (2 * buckets) == part
        )
        share = min(share, throttled[bucket] / in_range if in_range else 0.0)
    return _Place(bucket, key, min(1.0, share), throttled[bucket] if throttled else 0.0)


def moving_hot_spot(results: dict[str, Any], scope: Scope, throttled: float) -> Finding | None:
    """A time-ordered key: the lead passes from key to key and never returns."""
    grid = analysis.bucket_series(results, scope)
    busy = [row for row in grid if sum(row) >= _MIN_COLUMN]
    leaders = []
    for row in busy:
        top = max(range(len(row)), key=row.__getitem__)
        if row[top] >= 0.5 * sum(row):
            leaders.append(top)
    if len(busy) < 3 or len(leaders) < 0.6 * len(busy):
        return None
    runs = [b for i, b in enumerate(leaders) if i == 0 or leaders[i - 1] != b]
    if len(set(runs)) < 2 or len(runs) != len(set(runs)):
        return None  # one leader throughout, or leaders taking turns: not a moving key
    names: dict[int, str] = {}
    if not results["heat"].get("keys_hashed"):
        for listed in analysis.top_keys(results, scope):
            names.setdefault(bucket_of(listed["key"], results["heat"]["buckets"]), listed["key"])
    keys = tuple(names.get(b, f"bucket {b}") for b in runs)
    seconds = len(grid) * results["heat"]["resolution_s"]
    return Finding(
        "moving-hot-spot",
        scope.name,
        keys,
        f"A time-ordered key on {scope.name}: the hot partition moves over time",
        f"In {len(leaders)} of {len(busy)} busy seconds one key took most of the touches, "
        f"and the lead passed along {len(runs)} keys in {seconds:g} s without returning: "
        f"{' → '.join(keys)}. Each key is hot while its time period is current, so one "
        f"partition at a time takes the load ({throttled:.0f} throttled attempts).",
        "Key the items by entity and time bucket instead of by time alone (for example "
        "SENSOR#<id>#DATE#<day> rather than READINGS#<hour>), so each period's writes spread "
        "over as many partition keys as there are entities; where one key per period is "
        "needed, shard it (READINGS#<hour>#<0..N-1>). No partition split helps a key that "
        "is new every period.",
        GUIDES["time-series"],
        throttled + 1.0,
        "partition",
    )


def _key_demand(
    results: dict[str, Any], scope: Scope, side: str, key: str, want: Demand | None
) -> tuple[float, list[str]]:
    """Units/s the launch asks of ``key`` on ``scope``, and the patterns asking: check's
    figure where a design run keeps it (`key_demand`); else the patterns whose hottest key
    there it is, each by its share."""
    found = key_demand(results, scope, side, key)
    if found is not None:
        return found
    if want is None:
        return 0.0, []
    total, names = 0.0, []
    for row in results["operations"]:
        part = want.by_pattern.get(row["name"])
        top = (row.get("scope_keys") or {}).get(scope.name) or {}
        if part and top.get("key") == key:
            total += part * float(top.get("share") or 0.0)
            names.append(row["name"])
    return total, names


def _conditional(results: dict[str, Any], patterns: list[str]) -> bool:
    design = results.get("design") or {}
    return any(
        p.get("conditional") for p in design.get("patterns") or () if p["id"] in set(patterns)
    )


def _fell_on(on_key: float, attempts: float, side: str) -> str:
    """How many throttled attempts fell on the key (`_range_took`'s words)."""
    return _range_took(on_key, attempts, side, " fell on it") + "."


def _range_took(here: float, attempts: float, side: str, verb: str = "") -> str:
    """How many throttled attempts a key or a range took: its heat counts every cause's, the
    group one cause's, so the one is a share of the other only when it is not more."""
    if here <= attempts:
        return f"{here:,.0f} of the {attempts:,.0f} throttled {side} attempts{verb}"
    return (
        f"{here:,.0f} throttled {side} attempts{verb}{',' if verb else ''} for every reason "
        f"the run recorded ({attempts:,.0f} of them for this one)"
    )


def key_finding(
    results: dict[str, Any],
    scope: Scope,
    side: str,
    *,
    group: ThrottleGroup | None,
    want: Demand | None,
    window_s: float = 5.0,
    scale: float | None = None,
    partitions: int = 16,
) -> Finding | None:
    """Where a partition's ceiling refused ``side`` on ``scope`` (``group``), or, without a
    throttle, the key that sustains half a ceiling or more; None when nothing is near."""
    attempts = group.attempts if group is not None else 0.0
    moving = moving_hot_spot(results, scope, attempts) if group is not None else None
    if moving is not None:
        return moving
    place = _place(results, scope, side)
    if place is None or place.key is None:
        return None
    rates = analysis.key_rates(results, scope, side, window_s=window_s, scale=scale)
    rate = next((r for r in rates if r.key == place.key), None)
    measured = rate.units_per_s if rate is not None else 0.0
    serves = key_serves(results, scope, side, place.key)
    if group is None and measured < RISK * serves:
        return None
    if group is not None and place.bucket is not None and place.share < HOT_KEY_SHARE:
        return _hot_range(results, scope, side, place, group, partitions)
    asked, patterns = _key_demand(results, scope, side, place.key, want)
    if group is None and asked and asked < RISK * serves:
        return None  # the launch's demand (check's figure) is what a warning is about
    cause = ""
    if group is not None:
        cause = (
            f"DynamoDB's reason: {', '.join(sorted(group.reasons))}; "
            + (group.inferred or "the partition model's cause: a partition's ceiling")
            + ". "
        )
    counted = (
        " (counting one unit per index write, the least one costs)"
        if rate is not None and rate.basis == "requests"
        else ""
    )
    where = "the throttles fell" if group is not None else "the heat was"
    evidence = (
        f"{cause}{place.key} took {place.share:.0%} of the touches of {scope.name} where "
        f"{where}; over its busiest {window_s:g} s it took {measured:,.0f} {side} units/s "
        f"at AWS scale{counted}, where a partition serves {serves:,.0f}; "
        + _fell_on(place.throttled, attempts, side)
    )
    if asked:
        evidence += f" The launch asks {asked:,.0f} {side} units/s of it ({want.basis})."  # type: ignore[union-attr]
    basis = asked or measured
    higher = "" if asked or group is None else "; it was throttled, so the demand was higher"
    planned = key_shards(results, scope, side, place.key)  # check's, as --remedy writes it
    index = scope.index
    if group is not None and not planned and _check_passes(results, patterns):
        return _bunched_key(results, scope, side, place.key, evidence, patterns, asked, attempts)
    if side == "read":
        return Finding(
            "hot-gsi-key" if index is not None else "hot-key",
            scope.name,
            (place.key,),
            f"A read-hot {'GSI ' if index is not None else ''}key: {place.key} "
            + (f"on index {index} of {scope.table}" if index else f"on {scope.name}"),
            evidence,
            _read_remedy(place.key, basis, index, higher, planned, serves),
            GUIDES["sparse-index"] if index is not None else GUIDES["caching"],
            place.throttled + measured / serves,
            "partition",
            tuple(patterns),
            asked or None,
            planned or shards_for(basis, "read", serves),
        )
    shards = planned or shards_for(basis, "write")
    on = "at the launch's demand" if asked else "at the rate measured"
    sizing = (
        f"N = {shards} keeps each shard under half a partition's 1,000 write units/s {on}{higher}"
        + (_PLACED if planned else "")
        + "."
    )
    if _conditional(results, patterns):
        sizing += (
            " A conditional counter sharded N ways holds its stock in N parts: each shard "
            "counts its own share, a write that meets a sold-out shard tries another, and "
            "reading the whole count reads all N."
        )
    if index is not None:
        return Finding(
            "hot-gsi-key",
            scope.name,
            (place.key,),
            f"A hot GSI key: {place.key} on index {index} of {scope.table}",
            evidence + " An index short of write capacity throttles the table's writes too "
            "(back-pressure), so the table's writers fail or retry.",
            f"Shard the index key: write {place.key}#<0..N-1> with the suffix computed from "
            "the item's id (so an update finds the same shard), and query the N shards in "
            f"parallel, merging the results. {sizing}",
            GUIDES["gsi-sharding"],
            place.throttled + measured / serves,
            "partition",
            tuple(patterns),
            asked or None,
            shards,
        )
    return Finding(
        "hot-key",
        scope.name,
        (place.key,),
        f"One hot key: {place.key} on {scope.name}",
        evidence,
        f"Shard the key's writes: spread them over {place.key}#<0..N-1> with a random or "
        f"calculated suffix and read by fetching the N keys (BatchGetItem) and combining. "
        f"{sizing}",
        GUIDES["write-sharding"],
        place.throttled + measured / serves,
        "partition",
        tuple(patterns),
        asked or None,
        shards,
    )


def _check_passes(results: dict[str, Any], patterns: list[str]) -> bool:
    """Whether check (the model at the launch's rates, AWS scale: ``design.check``) passes
    every pattern of ``patterns``, its throttles within a pattern's verdict; False where it
    has no figure for one."""
    checked = checked_patterns(results)
    return bool(patterns) and all(
        pid in checked
        and checked[pid].get("verdict") != "FAIL"
        and float(checked[pid].get("throttled_share") or 0.0) <= MAX_THROTTLED_SHARE
        for pid in patterns
    )


def _bunched_key(
    results: dict[str, Any],
    scope: Scope,
    side: str,
    key: str,
    evidence: str,
    patterns: list[str],
    asked: float,
    attempts: float,
) -> Finding:
    """A key the run throttled where check passes every pattern on it at the launch's rates:
    the run's seconds bunched above a partition's ceiling (a scaled run's arrivals vary more
    than AWS's; a run that fell behind sends what waited in bunches), which the launch's
    demand does not. Nothing to shard: the figure is check's."""
    behind = fell_behind(results)
    why = (
        f"{behind} and what waited on it came in bunches"
        if behind
        else "a scaled run's seconds vary more about their mean than AWS's"
    )
    index = scope.index
    return Finding(
        "hot-gsi-key" if index is not None else "hot-key",
        scope.name,
        (key,),
        f"A {'GSI ' if index is not None else ''}key throttled in seconds above its "
        f"partition's ceiling: {key} on "
        + (f"index {index} of {scope.table}" if index else scope.name),
        f"{evidence} check passes every pattern on it at the launch's rates; these attempts "
        f"met seconds whose arrivals bunched above the ceiling: {why}.",
        "Nothing is needed for the launch's demand (check's figures); judge the key where "
        "the load is delivered at a larger --scale, or with loadgen simulate.",
        GUIDES["write-sharding" if side == "write" else "caching"],
        attempts,
        "partition",
        tuple(patterns),
        asked or None,
        None,
    )


_PLACED = (
    ", and the busiest partition they fall on, beside the other keys' share, within its ceiling "
    "(check's figure; `loadgen check --remedy` checks the remedied launch again and adds "
    "shards where the partitions the model serves need them)"
)


def _read_remedy(
    key: str,
    read: float,
    index: str | None,
    higher: str,
    planned: int | None,
    serves: float,
) -> str:
    """Read-side remedies for a key read past its partition, sized on read units (check's
    shards where it planned them) against what a partition serves it (``serves``)."""
    shards = planned or shards_for(read, "read", serves)
    copy = "copy" if index is None else "shard"
    sizing = (
        f"N = {shards} keeps each {copy} under half a partition's {serves:,.0f} read "
        f"units/s at {read:,.0f} read units/s{higher}" + (_PLACED if planned else "") + "."
    )
    if index is None:
        return (
            f"Cache the reads of {key} (DynamoDB Accelerator, DAX, or an application cache) so "
            "repeated reads stop reaching its partition; read eventually consistent where the "
            "data allows (half the units of a strongly consistent read); where a Query reads "
            "it, give the Query a Limit (one page of what the caller shows). If the reads must "
            f"stay, replicate the item under {key}#<0..N-1> and read one copy at random. " + sizing
        )
    return (
        f"Read less of {key}: give the Query a Limit (one page of what the caller shows) and "
        f"stop paging early; keep index {index} sparse (write its key only on the items this "
        "query needs, so each read returns fewer entries, and project only what it shows; its "
        "reads are already eventually consistent); cache the answer (DynamoDB Accelerator, "
        "DAX, or an application cache) so repeated reads stop reaching the partition. If the "
        f"reads must stay, spread the entries over {key}#<0..N-1> and read one shard, or all "
        "N in parallel and merge. " + sizing
    )


def _hot_range(
    results: dict[str, Any],
    scope: Scope,
    side: str,
    place: _Place,
    group: ThrottleGroup,
    partitions: int,
) -> Finding:
    buckets = results["heat"]["buckets"]
    bucket = place.bucket or 0
    part = (2 * bucket + 1) * partitions // (2 * buckets)
    members = {b for b in range(buckets) if (2 * b + 1) * partitions // (2 * buckets) == part}
    keys = tuple(
        row["key"]
        for row in analysis.top_keys(results, scope)
        if bucket_of(row["key"], buckets) in members
    )
    loads = analysis.partition_loads(results, scope, partitions)
    mean = sum(loads) / partitions if partitions else 0.0
    lead = f"{loads[part] / mean:.1f}x the mean partition's touches" if mean else "its touches"
    return Finding(
        "hot-range",
        scope.name,
        keys,
        f"A hot partition range on {scope.name}",
        f"DynamoDB's reason: {', '.join(sorted(group.reasons))}; "
        + (group.inferred or "the partition model's cause: a partition's ceiling")
        + f". Range {part} of {partitions} (equal hash ranges) takes {lead} and "
        f"{_range_took(place.throttled, group.attempts, side)}, spread "
        f"over several keys ({', '.join(keys[:5]) or 'keys not listed'}), none of them more "
        f"than {HOT_KEY_SHARE:.0%} of it.",
        "Spread the traffic over more partition-key values: a higher-cardinality key (add a "
        "user or item id, or a suffix) so no set of keys shares one partition's ceiling. "
        "DynamoDB splits a partition that runs hot for minutes, but only after them.",
        GUIDES["uniform-load"],
        place.throttled,
        "partition",
        tuple(group.patterns),
    )
