"""Figures read from a results file: per table and index, the hot key, skew and key rates.

The gate (`loadgen.verdict.checks`), the diagnosis (`loadgen.verdict.diagnosis`) and the run report
(`loadgen.verdict.report`) read a run through this module, so they agree on what a figure means:

- a *scope* is a table or one of its indexes, named as the results name it
  (``ph-orders`` or ``ph-orders/status``);
- *requests* of a scope are key touches (a BatchGetItem of 10 keys touches 10), read and
  write lanes added up, as the heat matrix counts them;
- a *partition* is one of P equal ranges of the hash space, made of adjacent heat buckets
  (heat buckets are equal slices of the same space, see `loadgen.model.hashing`);
- rates of consumed units are given at AWS scale: a run against the partition model at scale
  S (``run.scale``) serves every ceiling times S, so a measured rate r stands for r / S on
  DynamoDB. Runs without the model (``scale`` null: DynamoDB Local, AWS) are read at scale 1.

Pure Python on purpose: the gate runs in CI without the report's plotting dependencies.

    results = load_results("results.json")
    for scope in scopes(results):
        print(scope.name, hot_key(results, scope), partition_skew(results, scope, 16))
"""

from __future__ import annotations

import itertools
import json
import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loadgen.errors import ConfigError
from loadgen.model.hashing import bucket_of

__all__ = [
    "DISPLAY_ROWS",
    "HotKey",
    "KeyRate",
    "Scope",
    "bucket_series",
    "fold_rows",
    "gini",
    "hot_key",
    "key_rate",
    "key_rates",
    "key_total",
    "lane_units",
    "lanes_of",
    "load_results",
    "partition_loads",
    "partition_skew",
    "recent",
    "scale_of",
    "scopes",
    "sustained",
    "throttled_ratio",
    "top_keys",
]

DISPLAY_ROWS = 64
"""Rows of a heatmap picture (the report's, the web UI's): each holds B/64 heat buckets. One
of 256 rows is a pixel or two high, too thin to see; a quarter of that reads as a band."""

_REQUIRED = ("run", "operations", "totals", "heat", "top_keys")


def load_results(path: str | Path) -> dict[str, Any]:
    """A results file of ``loadgen run --out``; ConfigError naming the file if it is not one."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as e:
        raise ConfigError(f"cannot read results file {str(path)!r}: {e.strerror}") from None
    except ValueError as e:
        raise ConfigError(f"results file {str(path)!r} is not JSON: {e}") from None
    if not isinstance(data, dict) or data.get("schema_version") != 1:
        raise ConfigError(
            f"{str(path)!r} is not a loadgen results file (expected schema_version 1 "
            f"from loadgen run --out)"
        )
    missing = [name for name in _REQUIRED if name not in data]
    if missing:
        raise ConfigError(f"results file {str(path)!r} lacks {', '.join(missing)}")
    return data


@dataclass(frozen=True)
class Scope:
    """A table, or one index of a table: what hot keys and heat are counted per."""

    table: str
    index: str | None = None

    @property
    def name(self) -> str:
        """``table`` or ``table/index``, as the results' ``hot_keys`` name it."""
        return self.table if self.index is None else f"{self.table}/{self.index}"

    def sort_key(self) -> tuple[str, bool, str]:
        """Tables by name, each followed by its indexes."""
        return (self.table, self.index is not None, self.index or "")


def scopes(results: dict[str, Any]) -> list[Scope]:
    """Every table and index the run touched, tables first."""
    found = {Scope(lane["table"], lane["index"]) for lane in results["heat"]["lanes"]}
    found |= {Scope(row["table"], row["index"]) for row in results["top_keys"]}
    return sorted(found, key=Scope.sort_key)


def scale_of(results: dict[str, Any], override: float | None = None) -> float:
    """The partition model's scale of the run (1 without the model), unless overridden."""
    if override is not None:
        return override
    scale = results["run"].get("scale")
    return float(scale) if scale else 1.0


def lanes_of(results: dict[str, Any], scope: Scope) -> list[dict[str, Any]]:
    """The heat lanes (read, write) of a scope."""
    return [
        lane
        for lane in results["heat"]["lanes"]
        if lane["table"] == scope.table and lane["index"] == scope.index
    ]


def bucket_series(
    results: dict[str, Any], scope: Scope, field: str = "requests"
) -> list[list[float]]:
    """``[t][b]``: the scope's read and write lanes added up, for one heat field."""
    heat = results["heat"]
    grids = [lane[field] for lane in lanes_of(results, scope)]
    if not grids:
        return [[0.0] * heat["buckets"] for _ in range(heat["columns"])]
    total = [list(map(float, row)) for row in grids[0]]
    for grid in grids[1:]:
        total = [list(map(operator.add, a, b)) for a, b in zip(total, grid, strict=True)]
    return total


def fold_rows(grid: list[list[float]], rows: int) -> list[list[float]]:
    """``[row][t]``: a ``[t][b]`` grid folded into ``rows`` equal hash ranges (bucket b in
    row ``b * rows // B``).

    >>> fold_rows([[1, 2, 3, 4], [0, 0, 0, 5]], 2)
    [[3.0, 0.0], [7.0, 5.0]]
    """
    buckets = len(grid[0]) if grid else 0
    # Row r holds the buckets from the first b with b * rows // buckets == r: contiguous.
    bounds = [-(-r * buckets // rows) for r in range(rows + 1)]
    spans = list(itertools.pairwise(bounds))
    return [[float(sum(column[lo:hi])) for column in grid] for lo, hi in spans]


def _column_sums(grid: Sequence[Sequence[float]]) -> list[float]:
    if not grid:
        return []
    return [sum(column) for column in zip(*grid, strict=True)]


@dataclass(frozen=True)
class HotKey:
    """The hottest partition key of a scope, by key touches."""

    key: str
    requests: float
    error: float
    """The most ``requests`` may overstate (Space-Saving's bound)."""
    share: float
    """``requests`` over all the scope's key touches."""


def top_keys(results: dict[str, Any], scope: Scope, by: str = "requests") -> list[dict[str, Any]]:
    """The scope's top keys from the results (``key``, ``count``, ``error``), hottest first."""
    for row in results["top_keys"]:
        if row["table"] == scope.table and row["index"] == scope.index and row["by"] == by:
            return list(row["keys"])
    return []


def key_total(results: dict[str, Any], scope: Scope, by: str = "requests") -> float:
    """All the scope's key touches (``by="requests"``) or consumed units (``"units"``)."""
    for row in results["top_keys"]:
        if row["table"] == scope.table and row["index"] == scope.index and row["by"] == by:
            return float(row["total"])
    return 0.0


def hot_key(results: dict[str, Any], scope: Scope) -> HotKey | None:
    """The scope's hottest key by key touches, or None if it saw no key."""
    keys = top_keys(results, scope)
    total = key_total(results, scope)
    if not keys or total <= 0:
        return None
    top = keys[0]
    return HotKey(top["key"], float(top["count"]), float(top["error"]), top["count"] / total)


def throttled_ratio(results: dict[str, Any], scope: Scope) -> float:
    """Throttled attempts per key touch of a scope (above 1 when touches are throttled again)."""
    requests = throttled = 0.0
    for lane in lanes_of(results, scope):
        requests += sum(map(sum, lane["requests"])) + lane["unattributed"]["requests"]
        throttled += sum(map(sum, lane["throttled_attempts"]))
        throttled += lane["unattributed"]["throttled_attempts"]
    return throttled / requests if requests else 0.0


def partition_loads(results: dict[str, Any], scope: Scope, partitions: int) -> list[float]:
    """Key touches of the run per partition: P equal ranges of the hash space."""
    totals = _column_sums(bucket_series(results, scope))
    buckets = len(totals)
    loads = [0.0] * partitions
    for b, value in enumerate(totals):
        # Bucket b covers [b/B, (b+1)/B) of the space; its middle decides its partition.
        loads[min(partitions - 1, (2 * b + 1) * partitions // (2 * buckets))] += value
    return loads


def partition_skew(results: dict[str, Any], scope: Scope, partitions: int) -> float:
    """The busiest partition's key touches over the mean partition's (1 is perfectly even)."""
    loads = partition_loads(results, scope, partitions)
    mean = sum(loads) / len(loads) if loads else 0.0
    return max(loads) / mean if mean else 0.0


def gini(values: Sequence[float]) -> float:
    """Gini coefficient: 0 for equal values, 1 - 1/n when one of n holds everything.

    >>> gini([1, 1, 1, 1]), gini([0, 0, 0, 4])
    (0.0, 0.75)
    """
    ordered = sorted(values)
    n, total = len(ordered), sum(ordered)
    if n == 0 or total <= 0:
        return 0.0
    weighted = sum((i + 1) * value for i, value in enumerate(ordered))
    return (2 * weighted) / (n * total) - (n + 1) / n


def recent(series: Sequence[float], resolution_s: float, window_s: float) -> float:
    """The mean rate per second over the last ``window_s`` seconds of ``series`` before its
    last column, which a live run is still filling (a run shorter than that: all of it).

    >>> recent([50, 10, 20, 3], 1, 2)
    15.0
    """
    if not series:
        return 0.0
    width = max(1, math.ceil(window_s / resolution_s))
    closed = series[:-1] if len(series) > width else series
    window = closed[-width:]
    return sum(window) / (len(window) * resolution_s)


def sustained(series: Sequence[float], resolution_s: float, window_s: float) -> float:
    """The highest mean rate per second over ``window_s`` consecutive seconds of ``series``.

    ``series`` holds counts per column of ``resolution_s`` seconds; a run shorter than the
    window is averaged whole.

    >>> sustained([0, 10, 10, 0], 1, 2)
    10.0
    """
    if not series:
        return 0.0
    width = max(1, min(len(series), math.ceil(window_s / resolution_s)))
    best = running = sum(series[:width])
    for i in range(width, len(series)):
        running += series[i] - series[i - width]
        best = max(best, running)
    return best / (width * resolution_s)


@dataclass(frozen=True)
class KeyRate:
    """A key's highest sustained rate of consumed units in one lane (read or write)."""

    key: str
    """The key, or ``bucket N`` when keys were hashed and cannot be placed."""
    access: str
    units_per_s: float
    """At AWS scale: measured units/s over the run's scale."""
    measured_per_s: float
    """As measured on the target."""
    basis: str
    """``units``, or ``requests`` where the lane recorded no units (one unit per touch, the
    least a write of up to 1 KB costs)."""
    share_of_bucket: float
    """The key's share of its heat bucket's touches: its rate is the bucket's times this."""


def lane_units(lane: dict[str, Any]) -> tuple[str, list[list[float]]]:
    """A lane's consumed units ``[t][b]`` and their basis: ``units``, or ``requests`` where
    the lane recorded touches but no units (one unit per touch, the least a write of up to
    1 KB costs)."""
    if not any(map(any, lane["units"])) and any(map(any, lane["requests"])):
        # Units reported for the whole call (ReturnConsumedCapacity TOTAL) never reach an
        # index's write lane: count its touches as units instead.
        return "requests", lane["requests"]
    return "units", lane["units"]


def key_rates(
    results: dict[str, Any],
    scope: Scope,
    access: str,
    *,
    window_s: float = 5.0,
    scale: float | None = None,
    latest: bool = False,
) -> list[KeyRate]:
    """Each listed top key's units/s in the scope's ``access`` lane, at AWS scale, hottest
    listed first: over its busiest ``window_s`` seconds, or with ``latest`` over the last ones
    (see `recent`).

    The heat matrix has rates per hash bucket, the sketches totals per key: a key's rate is
    taken as its bucket's rate times the key's share of that bucket's touches. It is exact
    when the key is alone in its bucket (256 buckets by default) and assumes the key's share
    is steady otherwise.
    """
    lane = next((la for la in lanes_of(results, scope) if la["access"] == access), None)
    if lane is None:
        return []
    heat = results["heat"]
    resolution = float(heat["resolution_s"])
    basis, grid = lane_units(lane)
    if not any(map(any, grid)):
        return []
    touches = _column_sums(bucket_series(results, scope))
    candidates: list[tuple[str, int, float]] = []
    if not heat.get("keys_hashed"):
        for row in top_keys(results, scope):
            bucket = bucket_of(row["key"], heat["buckets"])
            if touches[bucket] > 0:
                share = min(1.0, float(row["count"]) / touches[bucket])
                candidates.append((row["key"], bucket, share))
    if not candidates:
        # Hashed keys cannot be placed: the busiest bucket bounds every key in it.
        bucket = max(range(len(touches)), key=touches.__getitem__)
        candidates.append((f"bucket {bucket}", bucket, 1.0))
    rate = recent if latest else sustained
    run_scale = scale_of(results, scale)
    rates = []
    for key, bucket, share in candidates:
        measured = rate([row[bucket] * share for row in grid], resolution, window_s)
        rates.append(KeyRate(key, access, measured / run_scale, measured, basis, share))
    return rates


def key_rate(
    results: dict[str, Any],
    scope: Scope,
    access: str,
    *,
    window_s: float = 5.0,
    scale: float | None = None,
) -> KeyRate | None:
    """The hottest key's sustained units/s in the scope's ``access`` lane, at AWS scale.

    Each of the scope's top keys is tried (`key_rates`); the highest rate wins.
    """
    rates = key_rates(results, scope, access, window_s=window_s, scale=scale)
    return max(rates, key=lambda rate: rate.measured_per_s) if rates else None
