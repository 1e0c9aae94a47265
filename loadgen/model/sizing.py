"""How a remedy is sized: the figure a warm throughput or a maximum is set to, the provisioned
units that carry it, and the shards a hot key is split over.

One rule for every door: the run's diagnosis (`loadgen.verdict.diagnosis`) names these figures
and ``loadgen check --remedy`` (`loadgen.simulate.remedy`) writes them into the design file.

A key's shards are placed by the hash of each shard's key, which a team does not choose: two
or three of them can share a partition, and a key with a time bucket in it (``DAY#{day}``)
is placed anew every bucket. Given the partitions it lands on, a shard count is sized for the
busiest partition its shards make (`busiest`): where the key is fixed, by the model's own
placement of each shard's key; where it moves, at `PLACEMENT_ODDS` of the placements.

    >>> capacity_figure(4_800)
    5800
    >>> provisioned_figure(4_800)
    6900
    >>> shards_for(2_400, "write")
    5
"""

from __future__ import annotations

import math

from loadgen.model.hashing import bucket_of
from loadgen.model.partitions import (
    MAX_PARTITIONS,
    ON_DEMAND_TABLE_QUOTA_UNITS,
    key_ceiling,
    partitions_for,
)

__all__ = [
    "HEADROOM",
    "MAX_SHARDS",
    "PLACEMENT_ODDS",
    "RISK",
    "SPREAD",
    "UTILISATION",
    "busiest",
    "capacity_figure",
    "fits",
    "most_partitions",
    "provisioned_figure",
    "shard_plan",
    "shards_for",
]

HEADROOM = 1.2
"""A warm throughput or maximum is set this far above the launch's mean: its busiest seconds
(arrivals bunch) ask more than the mean, and a limit at the mean refuses them."""
UTILISATION = 0.7
"""Target utilisation provisioned capacity is sized at, as auto scaling's default target."""
RISK = 0.5
"""A key at this share of a partition's ceiling is a launch risk; a shard is sized to carry at
most this share of one."""
PLACEMENT_ODDS = 0.999
"""A moving key's shards (a time bucket's) are sized for the busiest partition they make at
this share of the placements a hash gives them (a model choice: a key of hour buckets is
placed 24 times a day, and at 99 placements in 100 would meet a bad one every few days)."""
SPREAD = 4
"""A key is split over at most this many times `shards_for`'s shards before its table or index
is given more partitions (a model choice: every shard is another read for a read over them
all, where partitions are a one-off warm throughput)."""
MAX_SHARDS = 64
"""The most shards a remedy splits one key over: past it, the key needs more partitions (a
model choice: each shard is another read of every read over them all)."""


def _hundreds(units: float) -> int:
    return int(math.ceil(units / 100.0 - 1e-9) * 100) if units > 0 else 0


def capacity_figure(units: float) -> int:
    """The warm throughput or maximum to set for a launch asking ``units``/s: `HEADROOM`
    over it, rounded up to the next hundred."""
    return _hundreds(units * HEADROOM)


def provisioned_figure(units: float) -> int:
    """Provisioned units that carry ``units``/s at auto scaling's target utilisation."""
    return _hundreds(units / UTILISATION)


def shards_for(units: float, kind: str, ceiling: float | None = None) -> int:
    """Shards that keep each of a key's ``units``/s of ``kind`` (read, write) under `RISK` of
    a partition's ceiling: ``ceiling``, what a partition serves the key (eventually
    consistent reads: `EVENTUAL_READ_FACTOR` times the read ceiling), by default the kind's
    own; 2 at least (`shard_plan` places them).

    >>> shards_for(5_344, "read"), shards_for(5_344, "read", 4_500)  # strong, eventual reads
    (4, 3)
    """
    return max(2, math.ceil(units / (RISK * (ceiling or key_ceiling(kind)))))


def most_partitions(read_units: float, write_units: float, kind: str) -> int:
    """The partitions the model gives a table or index of these units/s with its ``kind``
    side raised to the per-table quota: the most a remedy can give it.

    >>> most_partitions(12_000, 4_000, "write")
    44
    """
    sides = [read_units, write_units]
    sides[0 if kind == "read" else 1] = ON_DEMAND_TABLE_QUOTA_UNITS
    return partitions_for(*sides)


def shard_plan(
    units: float,
    kind: str,
    partitions: int,
    *,
    key: str | None = None,
    moves: bool = False,
    serves: float | None = None,
    others: float = 0.0,
    most: int = MAX_PARTITIONS,
) -> tuple[int, int]:
    """Shards of a key asked ``units``/s of ``kind``, and the partitions they need: at least
    `shards_for`'s, as many more as `fits` on ``partitions``; where none up to `SPREAD`
    times that fits, on twice the partitions, and so on, up to ``most`` partitions (what a
    quota lets the table or index have), where up to `MAX_SHARDS` may.

    >>> shard_plan(1_667, "write", 8, moves=True)
    (11, 16)
    """
    least = shards_for(units, kind, serves)
    while True:
        wide = MAX_SHARDS if partitions >= most else min(MAX_SHARDS, SPREAD * least)
        for shards in range(least, wide + 1):
            if fits(shards, units, kind, partitions, key, moves, serves, others):
                return shards, partitions
        if partitions >= most:
            return max(least, MAX_SHARDS), partitions
        partitions = min(most, 2 * partitions)


def fits(
    shards: int,
    units: float,
    kind: str,
    partitions: int,
    key: str | None = None,
    moves: bool = False,
    serves: float | None = None,
    others: float = 0.0,
) -> bool:
    """Whether ``shards`` of a key asked ``units``/s keep the busiest of ``partitions`` they
    make (`busiest`: of ``key``'s shards ``key#0``.. where it is fixed, at `PLACEMENT_ODDS`
    where it ``moves``), with its share of the ``others`` units/s the rest of the keys ask,
    within ``serves`` (a partition's ceiling unless given: eventually consistent reads are
    served more) over `HEADROOM`."""
    ceiling = key_ceiling(kind) if serves is None else serves
    on_one = busiest(shards, partitions, None if moves else key)
    return on_one * units / shards + others / partitions <= ceiling / HEADROOM


def busiest(shards: int, partitions: int, key: str | None = None) -> int:
    """Shards on the partition holding most of them: of ``key``'s (``key#0``..) as the
    model places them on ``partitions`` equal hash ranges; without a key, the most that
    `PLACEMENT_ODDS` of uniform placements stay within.

    >>> busiest(4, 4)  # four shards on four partitions: all on one in 1.6% of placements
    4
    >>> busiest(4, 64)
    2
    """
    if key is not None:
        counts: dict[int, int] = {}
        for n in range(shards):
            place = bucket_of(f"{key}#{n}", partitions)
            counts[place] = counts.get(place, 0) + 1
        return max(counts.values())
    for most in range(1, shards + 1):
        if _within(shards, partitions, most) >= PLACEMENT_ODDS:
            return most
    return shards


def _within(balls: int, bins: int, most: int) -> float:
    """The chance ``balls`` placed uniformly on ``bins`` put at most ``most`` on any:
    ``balls! [x^balls] (sum_{k<=most} (x/bins)^k / k!)^bins`` (exponential generating
    functions), by squaring."""

    def times(a: list[float], b: list[float]) -> list[float]:
        out = [0.0] * min(len(a) + len(b) - 1, balls + 1)
        for i, x in enumerate(a):
            if x:
                for j, y in enumerate(b[: balls + 1 - i]):
                    out[i + j] += x * y
        return out

    term = [math.exp(-k * math.log(bins) - math.lgamma(k + 1)) for k in range(most + 1)]
    power, product = bins, [1.0]
    while power:
        if power & 1:
            product = times(product, term)
        term, power = times(term, term), power >> 1
    if len(product) <= balls or product[balls] <= 0.0:
        return 0.0
    return min(1.0, math.exp(math.lgamma(balls + 1) + math.log(product[balls])))
