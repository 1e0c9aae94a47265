"""A mergeable heavy-hitter sketch (Space-Saving) for the hottest partition keys.

Space-Saving (Metwally, Agrawal and El Abbadi, 2005) keeps at most ``capacity`` counters. A
key seen for the first time when all counters are taken replaces the key with the smallest
count and inherits that count as its error. Every count is an overestimate by at most its
recorded error, and the error is at most ``total / capacity``: any key with a true share of
traffic above ``1 / capacity`` is guaranteed to be held. Merging two sketches (Agarwal et
al., "Mergeable summaries", 2012) adds counts and keeps the largest ``capacity``; the bound
stays ``total / capacity`` over the merged stream.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any

from loadgen.errors import ConfigError

__all__ = ["HeavyHitter", "SpaceSaving"]


@dataclass(frozen=True)
class HeavyHitter:
    """One key's estimated count; the true count lies in ``[count - error, count]``."""

    key: str
    count: float
    error: float


class SpaceSaving:
    """Top keys by weight in bounded memory.

    sketch = SpaceSaving(capacity=1000)
    sketch.add("GLOBAL_COUNTER")
    sketch.top(10)
    """

    def __init__(self, capacity: int = 1000) -> None:
        if capacity < 1:
            raise ConfigError(f"sketch capacity must be >= 1 (got {capacity})")
        self.capacity = capacity
        self.total = 0.0
        self._counts: dict[str, float] = {}
        self._errors: dict[str, float] = {}
        # Min-heap of (count, key) as of when each entry was pushed. Counts only grow, so a
        # stale entry underestimates; the first entry whose count is current is the minimum.
        self._heap: list[tuple[float, str]] = []

    def __len__(self) -> int:
        return len(self._counts)

    def add(self, key: str, weight: float = 1.0) -> None:
        self.total += weight
        counts = self._counts
        if key in counts:
            counts[key] += weight
            return
        if len(counts) < self.capacity:
            counts[key] = weight
            self._errors[key] = 0.0
            heapq.heappush(self._heap, (weight, key))
            return
        floor, victim = self._pop_min()
        del counts[victim]
        del self._errors[victim]
        counts[key] = floor + weight
        self._errors[key] = floor
        heapq.heappush(self._heap, (floor + weight, key))

    def _pop_min(self) -> tuple[float, str]:
        heap, counts = self._heap, self._counts
        if len(heap) > 4 * self.capacity:
            # Keep the heap from growing with stale entries.
            self._heap = heap = [(c, k) for k, c in counts.items()]
            heapq.heapify(heap)
        while True:
            count, key = heapq.heappop(heap)
            current = counts.get(key)
            if current is None:
                continue
            if current == count:
                return count, key
            heapq.heappush(heap, (current, key))

    def min_count(self) -> float:
        """The smallest held count: the most any key not held can have had."""
        if len(self._counts) < self.capacity:
            return 0.0
        return min(self._counts.values())

    def top(self, k: int) -> list[HeavyHitter]:
        """The ``k`` keys with the largest estimated counts, largest first."""
        best = heapq.nlargest(k, self._counts.items(), key=lambda kv: (kv[1], kv[0]))
        return [HeavyHitter(key, count, self._errors[key]) for key, count in best]

    def merge(self, other: SpaceSaving) -> None:
        """Fold ``other`` into this sketch (both may have seen different streams)."""
        floor_self, floor_other = self.min_count(), other.min_count()
        merged: dict[str, tuple[float, float]] = {}
        for key in self._counts.keys() | other._counts.keys():
            count_a = self._counts.get(key)
            count_b = other._counts.get(key)
            error_a = self._errors.get(key, floor_self)
            error_b = other._errors.get(key, floor_other)
            merged[key] = (
                (count_a if count_a is not None else floor_self)
                + (count_b if count_b is not None else floor_other),
                error_a + error_b,
            )
        kept = heapq.nlargest(self.capacity, merged.items(), key=lambda kv: kv[1][0])
        self.total += other.total
        self._counts = {key: count for key, (count, _) in kept}
        self._errors = {key: error for key, (_, error) in kept}
        self._heap = [(c, k) for k, c in self._counts.items()]
        heapq.heapify(self._heap)

    def to_dict(self) -> dict[str, Any]:
        """A plain form for Locust's worker reports (msgpack) and results files."""
        return {
            "capacity": self.capacity,
            "total": self.total,
            "counts": self._counts,
            "errors": self._errors,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SpaceSaving:
        sketch = cls(int(data["capacity"]))
        sketch.total = float(data["total"])
        sketch._counts = {str(k): float(v) for k, v in data["counts"].items()}
        sketch._errors = {str(k): float(v) for k, v in data["errors"].items()}
        sketch._heap = [(c, k) for k, c in sketch._counts.items()]
        heapq.heapify(sketch._heap)
        return sketch
