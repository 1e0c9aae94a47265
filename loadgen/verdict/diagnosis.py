"""What a run's heat shows, named, with the remedy from AWS's modeling guides.

`diagnose` reads each table and index of a results file (`loadgen.verdict.analysis`) and names:

- **moving hot spot**: each second one key takes most of the traffic, and which key changes
  over time without coming back (a time-ordered or monotonically increasing key: the heat
  map shows a stepped band across the key space). Remedy: key by entity and time bucket.
- **hot GSI key** / **hot key**: one key takes a large share of its index's or table's
  touches, runs near a partition's ceiling, or draws most of the throttles. The remedy follows
  the kind of units that throttled (the lane with the more throttled attempts on the key, or
  else the units nearer their ceiling): for writes, shard the GSI key or the table key, N
  sized on write units; for reads, a Limit on the Query, a sparse index, eventually
  consistent reads, a cache (DAX), or read shards, N sized on read units.
- **hot partition range**: several keys of one partition together run hot. Remedy: a
  higher-cardinality partition key.

Thresholds here decide what is worth naming, not what fails CI (that is `loadgen.verdict.checks`).

    for finding in diagnose(load_results("results.json")):
        print(finding.title, finding.remedy)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from loadgen.model.hashing import bucket_of
from loadgen.verdict import analysis
from loadgen.verdict.analysis import Scope

__all__ = ["GUIDES", "Finding", "diagnose"]

GUIDES = {
    "write-sharding": "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
    "bp-partition-key-sharding.html",
    "gsi-sharding": "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
    "bp-indexes-gsi-sharding.html",
    "time-series": "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
    "bp-time-series.html",
    "uniform-load": "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
    "bp-partition-key-uniform-load.html",
    "caching": "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/DAX.html",
    "sparse-index": "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
    "bp-indexes-general-sparse-indexes.html",
}
"""AWS's developer-guide pages each remedy comes from."""

WRITE_CEILING, READ_CEILING = 1000.0, 3000.0
"""Units/s one partition, and so one key, serves on DynamoDB."""
HOT_SHARE = 0.2
"""A key with this share of its table's or index's touches is named."""
RISK = 0.5
"""A key sustaining this fraction of a partition's ceiling is a launch risk."""
_MIN_COLUMN = 10
# Seconds with fewer touches say little about which key leads: leave them out.


@dataclass(frozen=True)
class Finding:
    """One thing the heat shows, on one table or index."""

    kind: str
    """``moving-hot-spot``, ``hot-gsi-key``, ``hot-key``, ``hot-range`` or ``even``."""
    scope: str
    keys: tuple[str, ...]
    """The hot keys named, hottest (or first in time) first."""
    title: str
    evidence: str
    remedy: str
    guide: str
    """The AWS page the remedy comes from."""
    severity: float = 0.0
    """For ordering: throttled attempts, then how close to the ceiling."""


@dataclass
class _Facts:
    scope: Scope
    touches: float
    throttled: float
    bucket_touches: list[float]
    bucket_throttled: list[float]
    hot: analysis.HotKey | None
    write: analysis.KeyRate | None
    read: analysis.KeyRate | None
    window_s: float

    def risk(self) -> float:
        """The hot key's sustained rate over a partition's ceiling, reads or writes."""
        write = self.write.units_per_s / WRITE_CEILING if self.write else 0.0
        read = self.read.units_per_s / READ_CEILING if self.read else 0.0
        return max(write, read)


def _facts(results: dict[str, Any], scope: Scope, window_s: float, scale: float | None) -> _Facts:
    touches = _sums(analysis.bucket_series(results, scope))
    throttled = _sums(analysis.bucket_series(results, scope, "throttled_attempts"))
    rates = [
        analysis.key_rate(results, scope, access, window_s=window_s, scale=scale)
        for access in ("write", "read")
    ]
    return _Facts(
        scope, sum(touches), sum(throttled), touches, throttled,
        analysis.hot_key(results, scope), rates[0], rates[1], window_s,
    )  # fmt: skip


def _sums(grid: list[list[float]]) -> list[float]:
    return [sum(column) for column in zip(*grid, strict=True)] if grid else []


def _keys_by_bucket(results: dict[str, Any], scope: Scope) -> dict[int, str]:
    """The hottest listed key of each bucket (nothing when keys were hashed)."""
    heat = results["heat"]
    found: dict[int, str] = {}
    if heat.get("keys_hashed"):
        return found
    for row in analysis.top_keys(results, scope):
        found.setdefault(bucket_of(row["key"], heat["buckets"]), row["key"])
    return found


def _moving(results: dict[str, Any], facts: _Facts) -> Finding | None:
    grid = analysis.bucket_series(results, facts.scope)
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
    names = _keys_by_bucket(results, facts.scope)
    keys = tuple(names.get(b, f"bucket {b}") for b in runs)
    seconds = len(grid) * results["heat"]["resolution_s"]
    return Finding(
        "moving-hot-spot",
        facts.scope.name,
        keys,
        f"A time-ordered key on {facts.scope.name}: the hot partition moves over time",
        f"In {len(leaders)} of {len(busy)} busy seconds one key took most of the touches, "
        f"and the lead passed along {len(runs)} keys in {seconds:g} s without returning: "
        f"{' → '.join(keys)}. Each key is hot while its time period is current, so one "
        f"partition at a time takes the load ({facts.throttled:.0f} throttled attempts).",
        "Key the items by entity and time bucket instead of by time alone (for example "
        "SENSOR#<id>#DATE#<day> rather than READINGS#<hour>), so each period's writes spread "
        "over as many partition keys as there are entities; where one key per period is "
        "needed, shard it (READINGS#<hour>#<0..N-1>). No partition split helps a key that "
        "is new every period.",
        GUIDES["time-series"],
        facts.throttled + 1.0,
    )


def _hot_key(facts: _Facts, results: dict[str, Any]) -> Finding | None:
    hot = facts.hot
    if hot is None:
        return None
    bucket = (
        None
        if results["heat"].get("keys_hashed")
        else bucket_of(hot.key, len(facts.bucket_touches))
    )
    key_throttled = facts.bucket_throttled[bucket] if bucket is not None else 0.0
    drew_throttles = facts.throttled > 0 and key_throttled >= 0.5 * facts.throttled
    if not (
        (hot.share >= HOT_SHARE and hot.requests >= 20) or facts.risk() >= RISK or drew_throttles
    ):
        return None
    write = facts.write.units_per_s if facts.write else 0.0
    read = facts.read.units_per_s if facts.read else 0.0
    kind = _throttled_kind(results, facts.scope, bucket) or (
        "read" if read / READ_CEILING > write / WRITE_CEILING else "write"
    )
    counted = (
        " (counting one unit per index write, the least one costs)"
        if facts.write and facts.write.basis == "requests"
        else ""
    )
    throttled_on = f", on {kind}s" if key_throttled else ""
    evidence = (
        f"{hot.key} takes {hot.share:.0%} of the {facts.touches:.0f} key touches of "
        f"{facts.scope.name}; over its busiest {facts.window_s:g} s it ran at {write:,.0f} write "
        f"and {read:,.0f} read units/s at AWS scale{counted}, where a partition serves "
        f"{WRITE_CEILING:,.0f} and {READ_CEILING:,.0f}; {key_throttled:.0f} of the "
        f"{facts.throttled:.0f} throttled attempts fell on its partition{throttled_on}."
    )
    # A throttled key's measured rate is what its partition let through, not the demand.
    higher = "; the key was throttled, so the demand was higher: take N larger" * bool(
        key_throttled
    )
    index = facts.scope.index
    if kind == "read":
        remedy, guide = _read_remedy(hot.key, read, index, higher), GUIDES["caching"]
        if index is not None:
            guide = GUIDES["sparse-index"]
        where = f"on index {index} of {facts.scope.table}" if index else f"on {facts.scope.name}"
        return Finding(
            "hot-gsi-key" if index is not None else "hot-key",
            facts.scope.name,
            (hot.key,),
            f"A read-hot {'GSI ' if index is not None else ''}key: {hot.key} {where}",
            evidence,
            remedy,
            guide,
            key_throttled + facts.risk(),
        )
    shards = max(2, math.ceil(write / (RISK * WRITE_CEILING)))
    sizing = (
        f"N = {shards} keeps each shard under half a partition's 1,000 write units/s at "
        f"the rate measured{higher}."
    )
    if index is not None:
        return Finding(
            "hot-gsi-key",
            facts.scope.name,
            (hot.key,),
            f"A hot GSI key: {hot.key} on index {index} of {facts.scope.table}",
            evidence + " An index short of write capacity throttles the table's writes too "
            "(back-pressure), so the table's writers fail or retry.",
            f"Shard the index key: write {hot.key}#<0..N-1> with the suffix computed from the "
            f"item's id (so an update finds the same shard), and query the N shards in parallel, "
            f"merging the results. {sizing}",
            GUIDES["gsi-sharding"],
            key_throttled + facts.risk(),
        )
    return Finding(
        "hot-key",
        facts.scope.name,
        (hot.key,),
        f"One hot key: {hot.key} on {facts.scope.name}",
        evidence,
        f"Shard the key's writes: spread them over {hot.key}#<0..N-1> with a random or "
        f"calculated suffix and read by fetching the N keys (BatchGetItem) and combining. "
        f"{sizing}",
        GUIDES["write-sharding"],
        key_throttled + facts.risk(),
    )


def _throttled_kind(results: dict[str, Any], scope: Scope, bucket: int | None) -> str | None:
    """``read`` or ``write``: the lane with the more throttled attempts on the key's bucket
    (on the whole scope when keys were hashed); None when neither throttled."""
    throttled = {"read": 0.0, "write": 0.0}
    for lane in analysis.lanes_of(results, scope):
        grid = lane["throttled_attempts"]
        spent = sum(map(sum, grid)) if bucket is None else sum(row[bucket] for row in grid)
        throttled[lane["access"]] = throttled.get(lane["access"], 0.0) + spent
    if not any(throttled.values()):
        return None
    return "read" if throttled["read"] > throttled["write"] else "write"


def _read_remedy(key: str, read: float, index: str | None, higher: str) -> str:
    """Read-side remedies for a key read past its partition, sized on read units."""
    shards = max(2, math.ceil(read / (RISK * READ_CEILING)))
    copy = "copy" if index is None else "shard"
    sizing = (
        f"N = {shards} keeps each {copy} under half a partition's {READ_CEILING:,.0f} read "
        f"units/s at the {read:,.0f} read units/s measured{higher}."
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
    results: dict[str, Any], facts: _Facts, partitions: int, scale: float | None
) -> Finding | None:
    loads = analysis.partition_loads(results, facts.scope, partitions)
    mean = sum(loads) / partitions
    if not mean:
        return None
    busiest = max(range(partitions), key=loads.__getitem__)
    if loads[busiest] < 3 * mean:
        return None
    buckets = len(facts.bucket_touches)
    members = [b for b in range(buckets) if (2 * b + 1) * partitions // (2 * buckets) == busiest]
    throttled = sum(facts.bucket_throttled[b] for b in members)
    grid = analysis.bucket_series(results, facts.scope, "units")
    series = [sum(row[b] for b in members) for row in grid]
    rate = analysis.sustained(series, results["heat"]["resolution_s"], facts.window_s)
    rate /= analysis.scale_of(results, scale)
    hot = facts.hot.requests if facts.hot else 0.0
    if hot >= 0.5 * loads[busiest]:
        return None  # one key makes the partition hot: a hot key, named elsewhere
    if not (
        rate >= RISK * WRITE_CEILING or (facts.throttled and throttled >= 0.5 * facts.throttled)
    ):
        return None
    keys: tuple[str, ...] = ()
    if not results["heat"].get("keys_hashed"):
        inside = set(members)
        keys = tuple(
            row["key"]
            for row in analysis.top_keys(results, facts.scope)
            if bucket_of(row["key"], buckets) in inside
        )
    return Finding(
        "hot-range",
        facts.scope.name,
        keys,
        f"A hot partition range on {facts.scope.name}",
        f"Partition {busiest} of {partitions} (equal hash ranges) takes "
        f"{loads[busiest] / mean:.1f}x the mean partition's touches and {throttled:.0f} of "
        f"{facts.throttled:.0f} throttled attempts, spread over several keys "
        f"({', '.join(keys[:5]) or 'keys not listed'}).",
        "Spread the traffic over more partition-key values: a higher-cardinality key (add a "
        "user or item id, or a suffix) so no set of keys shares one partition's ceiling. "
        "DynamoDB splits a partition that runs hot for minutes, but only after them.",
        GUIDES["uniform-load"],
        throttled,
    )


def diagnose(
    results: dict[str, Any],
    *,
    partitions: int = 16,
    window_s: float = 5.0,
    scale: float | None = None,
) -> list[Finding]:
    """Findings for every table and index, most severe first; ``even`` when none is hot."""
    findings: list[Finding] = []
    quiet: list[_Facts] = []
    for scope in analysis.scopes(results):
        facts = _facts(results, scope, window_s, scale)
        finding = (
            _moving(results, facts)
            or _hot_key(facts, results)
            or _hot_range(results, facts, partitions, scale)
        )
        if finding is None:
            quiet.append(facts)
        else:
            findings.append(finding)
    findings.sort(key=lambda f: -f.severity)
    if not findings:
        share = max((f.hot.share for f in quiet if f.hot), default=0.0)
        risk = max((f.risk() for f in quiet), default=0.0)
        findings.append(
            Finding(
                "even",
                "",
                (),
                "No hot spot",
                f"No key takes more than {share:.0%} of its table's or index's touches, and no "
                f"key sustains more than {risk:.0%} of a partition's ceiling at AWS scale.",
                "Nothing to change for this load; run a larger one to find the next limit.",
                GUIDES["uniform-load"],
            )
        )
    return findings
