"""A model of DynamoDB's partitions that admits or throttles requests as the service does.

A library, usable without any server: the HTTP emulator asks it per request, tests drive it
with a fake clock. Each table and each global secondary index is a *keyspace* with its own
partitions and capacity; a local secondary index shares its table's.

How capacity is decided, per keyspace and per kind (read, write):

- Partitions cover equal ranges of the 64-bit hash space of `loadgen.model.hashing.partition_hash`
  at first, so a heat-exporter bucket and a modeled partition hold the same keys. Their count
  follows the older documented formula ``max(ceil(RCU/3000 + WCU/1000), ceil(GB/10))``, the
  size term from the table's data size as its owner reports it (`PartitionModel.resize`; the
  emulator counts the bytes it sees written) over 10 GB times the scale per partition. More
  capacity or data than the partitions can absorb doubles them; a split for heat halves one;
  partitions never merge.
- Capacity is enforced per second, with token buckets topped up at each whole second. Each
  partition's bucket holds one second of its ceiling (3,000 read and 1,000 write units/s,
  independent unless ``additive=True``). The keyspace's holds one second of its capacity plus
  up to 300 s of unused capacity (burst). Adaptive capacity is instant: any partition may use
  the keyspace's capacity up to its own ceiling, so one partition-key value, which always
  lives on one partition, never gets more than the ceiling.
- A charge is admitted while its buckets are not in debt, then taken whole: a bucket may go
  negative, as DynamoDB lets a large item or a settled Query overdraw and then throttles
  until the debt is repaid. This also keeps large items admissible at a small ``scale``.
- On-demand: the keyspace's capacity is its warm throughput (12,000 read, 4,000 write units/s
  unless the table's ``WarmThroughput`` raised it) or twice its *previous peak*, whichever is
  more, within the per-table quota (40,000) and the optional ``OnDemandThroughput`` maximum.
  A second's use becomes the previous peak only once it is ``growth_window_s`` (30 minutes)
  old: traffic that more than doubles within 30 minutes throttles, and a level held for 30
  minutes is served again at once. No burst.
- Provisioned with auto scaling (`AutoScaling`): target tracking at 70% utilisation, out
  after two minutes above the target, in after fifteen minutes well below it.
- Bulk: `admit_bulk` takes a second's demand per partition at once (a simulation's
  aggregate), by the same buckets and rules as `admit` takes one request.
- Split for heat: a partition that used at least `HEAT_FRACTION` of its ceiling (or throttled)
  every second for ``split_after`` seconds splits at the median of the partition-key hashes it
  served meanwhile (a small seeded reservoir sample). One hot key cannot be split, and a
  monotonically increasing sort key under one partition key is one key to the hash.

The model is not thread-safe: call it from one thread or event loop.
"""

from __future__ import annotations

import itertools
import math
import random
import time
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from loadgen.errors import ConfigError
from loadgen.model.capacity import Charge
from loadgen.model.hashing import HASH_SPACE, partition_hash
from loadgen.model.schema import TableSchema
from loadgen.model.throttling import Cause, Limit, Throttle, cause_of, resource_arn, throttle

__all__ = [
    "SPLIT_AFTER_S",
    "AutoScaling",
    "BulkAdmission",
    "PartitionModel",
    "PartitionStats",
    "Throttle",
    "ThroughputStats",
    "falls_behind",
    "key_ceiling",
    "partitions_for",
]

# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html
PARTITION_READ_UNITS = 3000.0
"""Read units per second one partition serves at most."""
PARTITION_WRITE_UNITS = 1000.0
"""Write units per second one partition serves at most."""
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/burst-adaptive-capacity.html
BURST_SECONDS = 300.0
"""Seconds of unused provisioned capacity retained for bursts."""
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode.html
ON_DEMAND_WARM_READ_UNITS = 12000.0
"""Read units per second a new on-demand table or index sustains."""
ON_DEMAND_WARM_WRITE_UNITS = 4000.0
"""Write units per second a new on-demand table or index sustains."""
ON_DEMAND_PEAK_FACTOR = 2.0
"""On-demand capacity instantly absorbs up to this multiple of the previous peak."""
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TroubleshootingThrottling.html
# ("if you exceed double your previous traffic's peak within 30 minutes, then you might
# experience throttling"; spread growth over at least 30 minutes)
ON_DEMAND_GROWTH_WINDOW_S = 1800.0
"""Seconds before a second's use counts as the previous peak that on-demand doubles."""
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput.html
# (a table switched from provisioned starts with a previous peak of half its former capacity)
SWITCHED_PEAK_FRACTION = 0.5
"""Share of its provisioned capacity a table switched to on-demand starts with as its peak."""
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html
ON_DEMAND_TABLE_QUOTA_UNITS = 40000.0
"""Default per-table (and per-index) on-demand quota, read and write units per second."""
# AWS's DynamoDB workshop (aws-samples/amazon-dynamodb-labs, design patterns, Exercise 1,
# "Capacity Units and Partitioning", Steps 4, 6 and 7): "a global secondary index's capacity is
# consumed asynchronously some time after the initial write to the base table succeeds ...
# there is a buffer between a given base DynamoDB table and a GSI ... only an imbalance over an
# extended period of time on a GSI will cause the buffer to fill"; then "all writes to the
# DynamoDB table are rejected until space in the buffer ... opens up".
GSI_WRITE_BUFFER_UNITS = 180_000.0
"""Index write units a GSI takes beyond its capacity before it pushes back on its table (a
model choice: AWS publishes no size). Sized from the workshop's runs: a 5-WCU index took 2,000
writes in 17 s with no throttle (Step 6: at least about 1,900 units); a 1-WCU index under a
1,000-WCU table's load, at most about 1,000 units/s, threw "after a few minutes" (Step 7):
three minutes at 1,000 units/s. Scaled like every capacity."""
# Same workshop, Steps 2 and 3: a table created with 5 WCU and loaded at once by a sequential
# client wrote 500 rows in 17.6 s, its throttles after the first hundred; 100 s at 5 units/s.
NEW_TABLE_BURST_SECONDS = 80.0
"""Seconds of provisioned capacity a new provisioned table (or index) holds as burst at
creation (a model choice: AWS publishes no figure). 80 s serves the workshop's 500 rows at
5 WCU in about 17 s, as its published run did; an empty bank takes 100 s."""
# AWS blog "Scaling DynamoDB: How partitions, hot keys, and split for heat impact performance",
# Part 2: eventually consistent queries of one partition-key value consumed 4,500 read units/s
# (9,000 queries/s), where 3,000 a partition predicts 6,000 ("every partition has its data
# spread across three nodes").
EVENTUAL_READ_FACTOR = 1.5
"""A partition serves this multiple of its read ceiling in eventually consistent reads."""
LAUNCH_HOUR_S = 3600.0
"""A launch's busiest hour: a GSI whose write buffer would fill within it, at the rate it
filled over a run or a check, pushes back on its table at launch (a model choice: a check's
ten minutes or a run's seconds are shorter than the minutes a buffer takes)."""
# andrestone/dynamodb-load-test (MAIN_BLOG.md, 2020): reads of one partition key at its
# plateau split "around 8 minutes" later; the DynamoDB paper (USENIX ATC 2022, 4.4): splits
# complete "in the order of minutes".
SPLIT_AFTER_S = 480.0
"""Seconds of sustained heat after which a partition splits for heat, as measured."""
HEAT_FRACTION = 0.8
"""Share of its ceiling a partition must use in a second to count as hot (a model choice)."""
SAMPLE_SIZE = 32
"""Partition-key hashes a hot partition keeps, to choose where it splits."""
PARTITION_BYTES = 10 * 2**30
"""Data one partition holds at most: 10 GB (times the model's scale, like every capacity)."""
MAX_PARTITIONS = 4096
"""Most partitions one table or index is given, whatever its capacity (a model bound).

DynamoDB's default quotas (40,000 units per table) need at most 54; 4,096 cover a quota raised
to about 3 million units. Beyond, partitions stop multiplying, so a capacity of 10^12 units
costs a few megabytes instead of every byte of the machine; each partition keeps its ceiling.
"""

_READ, _WRITE = 0, 1
_KINDS = {"read": _READ, "write": _WRITE}
_CEILINGS = (PARTITION_READ_UNITS, PARTITION_WRITE_UNITS)
_WARM = (ON_DEMAND_WARM_READ_UNITS, ON_DEMAND_WARM_WRITE_UNITS)
_TOKEN_FLOOR = 1e-9  # below this a bucket counts as empty, whatever float rounding left


@dataclass(frozen=True, slots=True)
class PartitionStats:
    """One partition of a table or index: its hash range and what went through it."""

    start: int
    """First hash of its range (inclusive)."""
    end: int
    """Last hash of its range (exclusive)."""
    consumed_read_units: float
    """Cumulative, net of `PartitionModel.settle` corrections."""
    consumed_write_units: float
    throttled_reads: int
    """Requests throttled here, cumulative."""
    throttled_writes: int
    hot_seconds: int
    """Consecutive seconds it has run near its ceiling."""


@dataclass(frozen=True, slots=True)
class ThroughputStats:
    """A table or global secondary index: its capacity, burst, partitions and throttles."""

    table: str
    index: str | None
    on_demand: bool
    read_capacity: float
    """Read units per second allowed now (scaled; on-demand: what it has scaled to)."""
    write_capacity: float
    burst_read_units: float
    """Unused read units banked beyond the current second."""
    burst_write_units: float
    consumed_read_units: float
    consumed_write_units: float
    throttled_reads: int
    throttled_writes: int
    splits: int
    """Partitions added since creation, by capacity growth, data size or for heat."""
    partitions: tuple[PartitionStats, ...]
    size_bytes: float = 0.0
    """The table's data size as last reported (`PartitionModel.resize`); 0 for a GSI."""
    read_cause: Cause = "capacity"
    """Which limit ``read_capacity`` is, as a throttle by it names its cause: ``capacity``
    (on-demand), ``provisioned``, ``account`` (the per-table quota) or ``maximum``."""
    write_cause: Cause = "capacity"
    buffered_write_units: float = 0.0
    """A GSI's index writes taken but not yet applied: its buffer's content (its bucket's or
    its most indebted partition's debt, whichever is more); 0 for a table."""
    buffer_write_units: float = 0.0
    """What its buffer holds at most (`GSI_WRITE_BUFFER_UNITS`, scaled); 0 for a table."""
    buffer_reason: str = ""
    """The ThrottlingReason its buffer refuses with once full: its most indebted partition's
    ceiling (``IndexWriteKeyRangeThroughputExceeded``) or its own capacity; "" for a table."""
    buffer_full_in_s: float | None = None
    """Seconds until its buffer is full at the rate it filled over the last minute (0: full);
    None where it is not filling, or where a split for heat of the partition behind comes
    first (its hot keys are several)."""


@dataclass(frozen=True, slots=True)
class AutoScaling:
    """Application Auto Scaling's target tracking of a provisioned table's or index's capacity.

    >>> AutoScaling(minimum=1000, maximum=40000)  # 70% target, out after 2 min, in after 15
    AutoScaling(minimum=1000, maximum=40000, target=0.7, out_after_s=120, in_after_s=900)
    """

    # https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/AutoScaling.html
    # (target tracking; CloudWatch alarms: scale out after two consecutive minutes over the
    # target, scale in after fifteen consecutive minutes under it less 20 points)
    minimum: float
    """Units per second it never goes below."""
    maximum: float
    """Units per second it never goes above."""
    target: float = 0.7
    """Consumed over provisioned that the policy keeps."""
    out_after_s: int = 120
    """Seconds over the target before capacity rises."""
    in_after_s: int = 900
    """Seconds under the target less 0.2 before capacity falls."""

    def __post_init__(self) -> None:
        if not 0 < self.minimum <= self.maximum:
            raise ConfigError(
                f"auto scaling needs 0 < minimum <= maximum, got {self.minimum!r}, {self.maximum!r}"
            )
        if not 0.2 < self.target < 1:
            raise ConfigError(f"auto scaling target must be in (0.2, 1), got {self.target!r}")


@dataclass(frozen=True, slots=True)
class BulkAdmission:
    """What `PartitionModel.admit_bulk` admitted of a second's demand, and what limited it."""

    admitted: tuple[float, ...]
    """Units admitted per partition."""
    partition_limited: bool
    """Some partition's ceiling refused part of its demand."""
    throttle: Throttle | None
    """The throttle the service reports for the refused part (None: all admitted): a
    partition's key range, or else the keyspace's capacity, quota or maximum."""
    by_ceiling: tuple[float, ...] = ()
    """Units refused per partition by the partition's own ceiling; the rest of what a
    partition was refused, the keyspace's limit refused (its share of a capacity too small
    for every partition's demand)."""
    keyspace_throttle: Throttle | None = None
    """The throttle of the keyspace's own limit (cause ``capacity``, ``provisioned``,
    ``account`` or ``maximum``) when it refused part of the demand, beside a partition's."""


class _Scaler:
    """One keyspace-kind's auto scaling state: its policy and the seconds over or under."""

    __slots__ = ("over", "policy", "under", "used")

    def __init__(self, policy: AutoScaling) -> None:
        self.policy = policy
        self.used: deque[float] = deque(maxlen=60)  # the last minute, as CloudWatch sums it
        self.over = self.under = 0


class _Partition:
    __slots__ = (
        "collection",
        "consumed",
        "end",
        "hot",
        "sample",
        "second",
        "seen",
        "stamp",
        "start",
        "throttled",
        "throttled_now",
        "tokens",
    )

    def __init__(self, start: int, end: int, tokens: Sequence[float], stamp: int) -> None:
        self.start, self.end = start, end
        self.tokens = list(tokens)  # [read, write]; additive mode spends [0] for both
        self.stamp = stamp  # the second its tokens were last topped up
        self.second = [0.0, 0.0]  # units used in the current second
        self.throttled_now = False  # hit its ceiling in the current second
        self.consumed = [0.0, 0.0]
        self.throttled = [0.0, 0.0]  # whole requests from `admit`, shares from `admit_bulk`
        self.hot = 0  # consecutive hot seconds
        # Reservoir of (arrival, partition-key hash, sort key) of the charges served while hot.
        self.sample: list[tuple[int, int, object]] = []
        self.seen = 0
        self.collection = 1  # parts a hot item collection here has split into by sort key

    def halves(self, middle: int) -> tuple[_Partition, _Partition]:
        # Both halves inherit the bucket, debt included: a split adds no capacity at once.
        halves = (
            _Partition(self.start, middle, self.tokens, self.stamp),
            _Partition(middle, self.end, self.tokens, self.stamp),
        )
        for half in halves:
            half.collection = self.collection
        return halves


class _Keyspace:
    """A table or a GSI: its capacity buckets and its partitions, ordered by hash range."""

    def __init__(self, model: PartitionModel, schema: TableSchema, index: str | None) -> None:
        self.table, self.index = schema.name, index
        self.arn = resource_arn(model.region, model.account, schema.name, index)
        self.scale = model.scale
        now = math.floor(model.clock())
        self.stamp = self.current = now
        self.peak = [0.0, 0.0]  # highest second at least a growth window old (on-demand)
        self.window = model.growth_window_s
        self.recent: deque[tuple[int, float, float]] = deque()  # seconds not yet that old
        self.warm: tuple[float, float] | None = None
        self.scalers: list[_Scaler | None] = [None, None]
        self.sampler: Callable[[int, int], list[int]] | None = None
        self.second = [0.0, 0.0]
        self.consumed = [0.0, 0.0]
        self.throttled = [0.0, 0.0]
        self.splits = 0
        self.throttles: dict[tuple[int, Limit, bool, bool], Throttle] = {}
        self.rate = [0.0, 0.0]
        self.size_bytes = 0.0
        self.partition_bytes = model.partition_bytes
        # A GSI's writes queue in its buffer: its buckets may owe this much before it refuses.
        self.buffer = model.gsi_write_buffer_units * model.scale if index is not None else 0.0
        self.full: set[_Partition] = set()  # partitions whose debt has filled the buffer
        # In bulk: (second, share of its writes its fullest partition let in, the throttle).
        self.pressure: tuple[int, float, Throttle | None] = (-1, 1.0, None)
        self.collections = not schema.local_indexes  # an LSI keeps a collection together
        self.levels: deque[tuple[int, float]] = deque(maxlen=61)  # (second, buffered) a minute
        self.configure(schema)
        # One second of capacity, and a new provisioned table's starting burst.
        start = 1.0 if self.on_demand else 1.0 + model.new_table_burst_s
        self.tokens = [rate * start for rate in self.rate]
        count = self.needed_partitions()
        bounds = [i * HASH_SPACE // count for i in range(count + 1)]
        self.parts = [
            _Partition(low, high, model.ceilings, now) for low, high in itertools.pairwise(bounds)
        ]
        self.starts = bounds[:-1]

    def configure(self, schema: TableSchema) -> None:
        owner = schema if self.index is None else schema.index(self.index)
        warm = (
            max(_WARM[_READ], owner.warm_read_units or 0.0),
            max(_WARM[_WRITE], owner.warm_write_units or 0.0),
        )
        # Warm throughput only grows.
        self.warm = (
            warm if self.warm is None else (max(warm[0], self.warm[0]), max(warm[1], self.warm[1]))
        )
        self.on_demand = schema.on_demand
        self.provisioned = (owner.read_capacity, owner.write_capacity)
        self.max_units = (owner.max_read_units, owner.max_write_units)
        # Provisioned capacity banks up to BURST_SECONDS unused; on-demand has no burst.
        self.bank_seconds = 1.0 if self.on_demand else 1.0 + BURST_SECONDS
        self.limit: list[Limit] = ["ProvisionedThroughputExceeded"] * 2
        for kind in (_READ, _WRITE):
            self.set_rate(kind)

    def reconfigure(self, schema: TableSchema, now: int) -> None:
        self.refill(now)
        if schema.on_demand and not self.on_demand:
            for kind in (_READ, _WRITE):
                switched = SWITCHED_PEAK_FRACTION * self.provisioned[kind] * self.scale
                self.peak[kind] = max(self.peak[kind], switched)
        self.configure(schema)
        self.throttles.clear()
        for kind in (_READ, _WRITE):
            self.tokens[kind] = min(self.tokens[kind], self.rate[kind] * self.bank_seconds)
        self.grow()

    def set_rate(self, kind: int) -> None:
        # Unscaled until the last line, so that scale never changes a partition count.
        limit: Limit
        if not self.on_demand:
            rate, limit = self.provisioned[kind], "ProvisionedThroughputExceeded"
        else:
            # Growing past the warm throughput or twice the peak takes partitions it lacks yet.
            warm = self.warm[kind] if self.warm is not None else _WARM[kind]
            rate = max(warm, ON_DEMAND_PEAK_FACTOR * self.peak[kind] / self.scale)
            limit = "KeyRangeThroughputExceeded"
            if rate >= ON_DEMAND_TABLE_QUOTA_UNITS:
                rate, limit = ON_DEMAND_TABLE_QUOTA_UNITS, "AccountLimitExceeded"
            cap = self.max_units[kind]
            if cap is not None and rate >= cap:
                rate, limit = cap, "MaxOnDemandThroughputExceeded"
        self.rate[kind] = rate * self.scale
        self.limit[kind] = limit

    def needed_partitions(self) -> int:
        return partitions_for(
            self.rate[_READ] / self.scale,
            self.rate[_WRITE] / self.scale,
            self.size_bytes / self.scale,
            self.partition_bytes / self.scale,
        )

    def grow(self) -> None:
        """Double the partitions until they absorb the capacity."""
        while len(self.parts) < self.needed_partitions() and len(self.parts) <= MAX_PARTITIONS // 2:
            self.parts = [h for p in self.parts for h in p.halves((p.start + p.end) // 2)]
            self.splits += len(self.parts) // 2
        self.starts = [part.start for part in self.parts]

    def split(self, at: int, middle: int) -> None:
        if len(self.parts) >= MAX_PARTITIONS:
            return
        self.parts[at : at + 1] = self.parts[at].halves(middle)
        self.starts = [part.start for part in self.parts]
        self.splits += 1

    def refill(self, now: int) -> None:
        # Whole seconds: DynamoDB enforces capacity per second, so no second gets more than
        # its own allowance plus what the bank holds.
        elapsed = now - self.stamp
        if elapsed > 0:
            self.stamp = now
            for kind in (_READ, _WRITE):
                full = self.rate[kind] * self.bank_seconds
                self.tokens[kind] = min(full, self.tokens[kind] + elapsed * self.rate[kind])

    def throttle(
        self, kind: int, limit: Limit, *, by_partition: bool = False, buffer: bool = False
    ) -> Throttle:
        """What the service answers when ``limit`` refuses: a partition's ceiling
        (``by_partition``) or the keyspace's own capacity, quota or maximum; ``buffer``: a
        GSI's write buffer is full of what that limit has not yet applied."""
        cached = self.throttles.get((kind, limit, by_partition, buffer))
        if cached is None:
            cached = throttle(
                table=self.table,
                index=self.index,
                kind="read" if kind == _READ else "write",
                on_demand=self.on_demand,
                limit=limit,
                resource=self.arn,
                cause="buffer" if buffer else cause_of(limit, by_partition=by_partition),
            )
            self.throttles[(kind, limit, by_partition, buffer)] = cached
        return cached

    def owing(self, kind: int) -> float:
        """How far below empty its buckets may go for ``kind``: the GSI's write buffer."""
        return self.buffer if kind == _WRITE else 0.0


def partitions_for(
    read_units: float,
    write_units: float,
    size_bytes: float = 0.0,
    partition_bytes: float = PARTITION_BYTES,
) -> int:
    """Partitions a keyspace of ``read_units`` and ``write_units`` per second holding
    ``size_bytes`` needs: ``max(ceil(RCU/3000 + WCU/1000), ceil(GB/10))``, at least 1 and
    at most `MAX_PARTITIONS`.

    >>> partitions_for(12000, 4000)  # a new on-demand table's warm throughput
    8
    """
    # https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.Partitions.html
    by_units = read_units / PARTITION_READ_UNITS + write_units / PARTITION_WRITE_UNITS
    by_size = math.ceil(size_bytes / partition_bytes - 1e-9)
    return max(1, min(MAX_PARTITIONS, max(math.ceil(by_units - 1e-9), by_size)))


def key_ceiling(kind: str, *, eventual: bool = False) -> float:
    """Units/s of ``kind`` (read, write) one partition, and so one key value, serves at AWS
    scale: its read ceiling `EVENTUAL_READ_FACTOR` times over where every read of it is
    eventually consistent (a GSI's always are).

    >>> key_ceiling("read"), key_ceiling("read", eventual=True), key_ceiling("write")
    (3000.0, 4500.0, 1000.0)
    """
    if kind == "write":
        return PARTITION_WRITE_UNITS
    return PARTITION_READ_UNITS * (EVENTUAL_READ_FACTOR if eventual else 1.0)


def falls_behind(full_in_s: float | None) -> bool:
    """Whether a GSI whose buffer is full in ``full_in_s`` seconds at the rate it filled over
    the last minute (`ThroughputStats.buffer_full_in_s`) pushes back on its table at launch:
    within `LAUNCH_HOUR_S`."""
    return full_in_s is not None and full_in_s <= LAUNCH_HOUR_S


def _drained(tokens: float, stamp: int, allowance: float, clock: float | None) -> float:
    """A bucket's debt as second ``stamp`` left it (``-tokens``), less its ``allowance`` for
    each second from that second's end to ``clock`` (None: none)."""
    if clock is None or clock <= stamp + 1:
        return max(0.0, -tokens)
    return max(0.0, -tokens - (clock - stamp - 1) * allowance)


def _spread(sorts: Iterable[object]) -> bool:
    """Whether charges at these sort keys (in arrival order) can be split between two
    partitions: at least two sort keys, and not each above the one before (a sequential key
    range keeps writing the end of the collection: no split helps it)."""
    seen = [sort for sort in sorts if sort is not None]
    if len(set(map(repr, seen))) < 2:
        return False
    try:
        return not all(a < b for a, b in itertools.pairwise(seen))  # type: ignore[operator]
    except TypeError:
        return True


def _fill_level(asked: Sequence[float], rooms: Sequence[float], shared: float) -> float:
    """The share ``x`` of its demand each partition gets, ``min(room, x * asked)``, so that
    together they take ``shared`` (or all they can, 1.0).

    Requests arriving in random order drain the shared bucket in proportion to each
    partition's demand until a partition meets its own ceiling: water-filling.
    """
    if sum([a if a < r else r for a, r in zip(asked, rooms, strict=True)]) <= shared:
        return 1.0
    # Partitions by the share at which their own room runs out, smallest first.
    ratios = sorted((r / a, a, r) for a, r in zip(asked, rooms, strict=True) if a > 0)
    capped = 0.0  # units of partitions already at their room
    flowing = math.fsum(a for _, a, _ in ratios)  # demand of the partitions still filling
    for ratio, a, r in ratios:
        if capped + ratio * flowing >= shared:
            break
        capped += r
        flowing -= a
    return (shared - capped) / flowing if flowing > 0 else 1.0


class PartitionModel:
    """Partitions, capacity and throttling for a set of tables, on an injectable clock.

    Per request: `admit` the charges of `loadgen.model.capacity.cost_of` (``None`` means go ahead;
    a `Throttle` says what to answer instead), then `settle` once the real cost is known::

        model = PartitionModel(scale=0.01)
        model.create_table(TableSchema.from_create_table(body))
        estimate = cost_of("Query", request, tables=schemas)
        if (throttle := model.admit(estimate.charges)) is None:
            items = run_the_query()
            model.settle(estimate.charges, cost_of("Query", request, tables=schemas,
                                                   returned=items).charges)
    """

    def __init__(
        self,
        *,
        scale: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        seed: int = 0,
        additive: bool = False,
        split_after: float = SPLIT_AFTER_S,
        region: str = "us-east-1",
        account: str = "000000000000",
        partition_bytes: float | None = None,
        growth_window_s: float = ON_DEMAND_GROWTH_WINDOW_S,
        new_table_burst_s: float = NEW_TABLE_BURST_SECONDS,
        gsi_write_buffer_units: float = GSI_WRITE_BUFFER_UNITS,
    ) -> None:
        if not (isinstance(scale, int | float) and math.isfinite(scale) and scale > 0):
            raise ConfigError(f"scale must be a positive number, got {scale!r}")
        if not (isinstance(split_after, int | float) and split_after > 0):
            raise ConfigError(f"split_after must be positive seconds, got {split_after!r}")
        if not region or not account:
            raise ConfigError(f"region and account must be set, got {region!r}, {account!r}")
        self.scale = float(scale)
        """Multiplies every ceiling, quota and capacity: 0.01 is launch day at 1/100 traffic."""
        self.clock = clock
        self.additive = additive
        """Reads and writes share one partition budget (reads/3000 + writes/1000 <= 1 a second)
        instead of two independent ones."""
        self.split_after = float(split_after)
        """Seconds of sustained heat before a partition splits (`SPLIT_AFTER_S`)."""
        self.region, self.account = region, account
        if not (isinstance(growth_window_s, int | float) and growth_window_s >= 0):
            raise ConfigError(f"growth window must be >= 0 seconds, got {growth_window_s!r}")
        self.growth_window_s = float(growth_window_s)
        if not (
            isinstance(new_table_burst_s, int | float) and 0 <= new_table_burst_s <= BURST_SECONDS
        ):
            raise ConfigError(
                f"a new table's burst must be 0 to {BURST_SECONDS:g} seconds, "
                f"got {new_table_burst_s!r}"
            )
        self.new_table_burst_s = float(new_table_burst_s)
        if not (isinstance(gsi_write_buffer_units, int | float) and gsi_write_buffer_units >= 0):
            raise ConfigError(
                f"a GSI's write buffer must be >= 0 units, got {gsi_write_buffer_units!r}"
            )
        self.gsi_write_buffer_units = float(gsi_write_buffer_units)
        """Index write units a GSI owes before it pushes back on its table, unscaled
        (`GSI_WRITE_BUFFER_UNITS`; 0: the index refuses as soon as its capacity is spent)."""
        """Seconds of provisioned capacity a table holds as burst when created
        (`NEW_TABLE_BURST_SECONDS`; 0: an empty bank)."""
        """Seconds before a second's use becomes the previous peak an on-demand table doubles
        (30 minutes; 0 lets traffic double every second)."""
        if partition_bytes is None:
            partition_bytes = PARTITION_BYTES * self.scale
        if not (math.isfinite(partition_bytes) and partition_bytes >= 1):
            raise ConfigError(f"partition size must be >= 1 byte, got {partition_bytes!r}")
        self.partition_bytes = float(partition_bytes)
        """Data one partition holds (10 GB x scale unless given): a table's size over it is
        the size term of its partition count."""
        full = tuple(ceiling * self.scale for ceiling in _CEILINGS)
        self._full = full  # each kind's ceiling, in its own units
        # Bucket sizes per slot; additive mode keeps one bucket in write units.
        self.ceilings = (full[_WRITE], full[_WRITE]) if additive else full
        self._weight = (
            (PARTITION_WRITE_UNITS / PARTITION_READ_UNITS, 1.0) if additive else (1.0, 1.0)
        )
        self._random = random.Random(seed)
        self._schemas: dict[str, TableSchema] = {}
        self._spaces: dict[tuple[str, str | None], _Keyspace] = {}
        self._gsis: dict[str, list[_Keyspace]] = {}  # a table's GSIs, which push back on it

    def create_table(self, schema: TableSchema) -> None:
        """Start modelling a table and its global secondary indexes."""
        if schema.name in self._schemas:
            raise ConfigError(f"table {schema.name!r} already exists in the model")
        self._schemas[schema.name] = schema
        self._index(schema, {})

    def update_table(self, schema: TableSchema) -> None:
        """Apply a table's new capacity, billing mode and index set (see `TableSchema.with_update`).

        More capacity than the partitions absorb doubles them; partitions never merge, and a
        lowered capacity keeps them.
        """
        if schema.name not in self._schemas:
            raise ConfigError(f"table {schema.name!r} is not in the model")
        now = math.floor(self.clock())
        names = [key for key in self._spaces if key[0] == schema.name]
        old = {index: self._spaces.pop((table, index)) for table, index in names}
        self._schemas[schema.name] = schema
        kept = {None} | {gsi.name for gsi in schema.global_indexes}
        for index, space in old.items():
            if space.index == index and index in kept:
                space.reconfigure(schema, now)
        self._index(schema, old)

    def delete_table(self, name: str) -> None:
        """Stop modelling a table."""
        if self._schemas.pop(name, None) is None:
            raise ConfigError(f"table {name!r} is not in the model")
        for key in [key for key in self._spaces if key[0] == name]:
            del self._spaces[key]
        self._gsis.pop(name, None)

    def resize(self, table: str, size_bytes: float) -> None:
        """The table's data size is now ``size_bytes``: past a multiple of the partition size
        its partitions double (never merge). A table not in the model is ignored. O(1) unless
        the partitions grow.

        Its global secondary indexes keep their own count (their size is not known).
        """
        space = self._spaces.get((table, None))
        if space is None:
            return
        space.size_bytes = size_bytes
        if space.needed_partitions() > len(space.parts):
            space.grow()

    def _index(self, schema: TableSchema, existing: dict[str | None, _Keyspace]) -> None:
        base = existing.get(None) or _Keyspace(self, schema, None)
        self._spaces[(schema.name, None)] = base
        for lsi in schema.local_indexes:  # an LSI lives on its table's partitions
            self._spaces[(schema.name, lsi.name)] = base
        for gsi in schema.global_indexes:
            space = existing.get(gsi.name)
            if space is None or space.index != gsi.name:
                space = _Keyspace(self, schema, gsi.name)
            self._spaces[(schema.name, gsi.name)] = space
        self._gsis[schema.name] = [
            self._spaces[(schema.name, gsi.name)] for gsi in schema.global_indexes
        ]

    def auto_scale(
        self, table: str, index: str | None, kind: str, policy: AutoScaling | None
    ) -> None:
        """Track a provisioned table's (or GSI's) ``kind`` capacity with ``policy`` (None: stop)."""
        space = self._spaces.get((table, index))
        if space is None or kind not in _KINDS:
            raise ConfigError(f"no table or index {table!r}/{index!r} ({kind!r}) in the model")
        space.scalers[_KINDS[kind]] = None if policy is None else _Scaler(policy)

    def partition_starts(self, table: str, index: str | None = None) -> list[int]:
        """The first hash of each partition of a table or GSI, in order, as of this second.

        Closes the seconds before it (splits, growth), so call it before `admit_bulk`.
        """
        now = math.floor(self.clock())
        space = self._spaces.get((table, index))
        if space is None:
            raise ConfigError(f"no table or index {table!r}/{index!r} in the model")
        if space.current != now:
            self._roll(space, now)
        space.refill(now)
        return list(space.starts)

    def admit_bulk(
        self,
        table: str,
        index: str | None,
        kind: str,
        units: Sequence[float],
        requests: Sequence[float],
        *,
        sampler: Callable[[int, int], list[int]] | None = None,
        eventual: Sequence[float] | None = None,
    ) -> BulkAdmission:
        """Admit a second's demand at once: ``units[p]`` asked of partition ``p`` (in the
        order of `partition_starts`) by ``requests[p]`` requests. Returns the units admitted
        per partition and what refused the rest.

        The same buckets as `admit`: each partition admits up to what its bucket holds, and
        when the keyspace's bucket (capacity, burst) holds less than the partitions would take,
        they share it in proportion. Throttled requests are the refused share of each
        partition's requests. For requests of one unit each on whole-unit buckets, the
        admitted units equal `admit` called once per request. ``sampler(start, end)`` gives
        key hashes of a hash range, weighted as the demand, where a hot partition splits.
        ``eventual[p]``: the share of partition ``p``'s read units that are eventually
        consistent (`EVENTUAL_READ_FACTOR`).

        A GSI's writes may owe up to its buffer; a table's writes are refused in the share its
        GSIs' writes were refused for a full buffer in this second or the one before.
        """
        now = math.floor(self.clock())
        space = self._spaces.get((table, index))
        if space is None or kind not in _KINDS:
            raise ConfigError(f"no table or index {table!r}/{index!r} ({kind!r}) in the model")
        if len(units) != len(space.parts) or len(requests) != len(space.parts):
            raise ConfigError(
                f"{len(units)} demands for {len(space.parts)} partitions of {table!r}/{index!r}"
            )
        if space.current != now:
            self._roll(space, now)
        space.refill(now)
        if sampler is not None:
            space.sampler = sampler
        k = _KINDS[kind]
        slot = 0 if self.additive else k
        owing = space.owing(k)
        # Back-pressure: the share of this second's table writes its GSIs' buffers let in.
        pressure, pressing = 1.0, None
        if k == _WRITE and space.index is None:
            for gsi in self._gsis.get(space.table, ()):
                second, share, refusing = gsi.pressure
                if second >= now - 1 and share < pressure:
                    pressure, pressing = share, refusing
        shares = eventual if eventual is not None and k == _READ else None
        rooms = []
        weight = self._weight[k]
        weights = [weight] * len(space.parts)
        read_ceiling, write_ceiling = self.ceilings
        for p, part in enumerate(space.parts):
            tokens = part.tokens
            if now > part.stamp:  # `_refill`, inlined: this loop runs per partition per second
                elapsed, part.stamp, parts = now - part.stamp, now, part.collection
                # min(full, topped up), as `_refill` takes it, without the call
                full, topped = parts * read_ceiling, tokens[0] + elapsed * parts * read_ceiling
                tokens[0] = topped if topped < full else full
                full, topped = parts * write_ceiling, tokens[1] + elapsed * parts * write_ceiling
                tokens[1] = topped if topped < full else full
            if shares is not None:
                weights[p] = weight * (1.0 - shares[p] * (1.0 - 1.0 / EVENTUAL_READ_FACTOR))
            room = (tokens[slot] + owing) / weights[p]
            rooms.append(room if room > _TOKEN_FLOOR else 0.0)
        let_in = units if pressure == 1.0 else [asked * pressure for asked in units]
        level = _fill_level(let_in, rooms, max(0.0, space.tokens[k] + owing))
        admitted = []
        by_ceiling = []
        by_partition = by_keyspace = False
        # The keyspace's running sums, in the partitions' order (`_take`'s, inlined below).
        left, used, consumed = space.tokens[k], space.second[k], space.consumed[k]
        for p, (part, asked, asking, room) in enumerate(
            zip(space.parts, units, requests, rooms, strict=True)
        ):
            if not asked:  # nothing asked of it: nothing to take or refuse
                admitted.append(0.0)
                by_ceiling.append(0.0)
                continue
            offered = let_in[p]
            got = offered * level
            # What the partition's own ceiling refused of its share of the keyspace.
            ceiling = got - room if got > room else 0.0
            if got > room:
                got = room
            admitted.append(got)
            by_ceiling.append(ceiling)
            if got:
                # `_take`, inlined: this loop runs per partition per simulated second.
                left -= got
                used += got
                consumed += got
                tokens = part.tokens
                tokens[slot] -= got * weights[p]
                part.second[k] += got
                part.consumed[k] += got
                if owing and tokens[slot] <= _TOKEN_FLOOR - owing:
                    space.full.add(part)
            floor = _TOKEN_FLOOR * (asked if asked > 1.0 else 1.0)  # times max(1.0, asked)
            if asked - got > floor:
                refused = asking * (asked - got) / asked
                if room < offered * level:
                    part.throttled_now = by_partition = True  # its own ceiling refused: heat
                if asked - got - ceiling > floor:
                    by_keyspace = True
                part.throttled[k] += refused
                space.throttled[k] += refused
        space.tokens[k], space.second[k], space.consumed[k] = left, used, consumed
        buffered = owing > 0
        limit: Limit = "KeyRangeThroughputExceeded" if by_partition else space.limit[k]
        keyspace = None
        if by_keyspace:
            keyspace = pressing or space.throttle(k, space.limit[k], buffer=buffered)
        refusal = None
        if by_partition:
            refusal = space.throttle(k, limit, by_partition=True, buffer=buffered)
        elif by_keyspace:
            refusal = keyspace
        if buffered:
            # While its buffer is full, the table lets in what the fullest partition drains.
            share = min(
                (got / asked for got, asked in zip(admitted, units, strict=True) if asked > 0),
                default=1.0,
            )
            space.pressure = (now, share, refusal)
        return BulkAdmission(tuple(admitted), by_partition, refusal, tuple(by_ceiling), keyspace)

    def admit(self, charges: Sequence[Charge]) -> Throttle | None:
        """Take every charge, or none of them and say why.

        A table's write and its index writes are one request: a global secondary index short
        of write capacity throttles the table write ("back-pressure"). O(len(charges)).
        """
        now = math.floor(self.clock())
        taken: list[tuple[_Keyspace, _Partition | None, int, Charge, int]] = []
        for charge in charges:
            space = self._space(charge, now)
            kind = _KINDS[charge.kind]
            if kind == _WRITE and space.index is None:
                pushed = self._back_pressure(space.table, now)
                if pushed is not None:
                    return pushed
            part, key_hash = None, 0
            if charge.key is not None:
                key_hash = partition_hash(charge.key)
                part = space.parts[bisect_right(space.starts, key_hash) - 1]
                self._refill(part, now)
            floor = _TOKEN_FLOOR - space.owing(kind)
            buffered = floor < 0
            if space.tokens[kind] <= floor:
                return self._throttled(
                    space, part, kind, space.limit[kind], by_partition=False, buffer=buffered
                )
            if part is not None and part.tokens[0 if self.additive else kind] <= floor:
                part.throttled_now = True
                return self._throttled(
                    space,
                    part,
                    kind,
                    "KeyRangeThroughputExceeded",
                    by_partition=True,
                    buffer=buffered,
                )
            taken.append((space, part, kind, charge, key_hash))
        for space, part, kind, charge, key_hash in taken:
            self._take(space, part, kind, charge.units, eventual=charge.eventual)
            if part is not None:
                self._observe(part, key_hash, charge.sort)
        return None

    def _back_pressure(self, table: str, now: int) -> Throttle | None:
        """The throttle of a GSI of ``table`` whose write buffer is full, which refuses every
        write to the table until it drains (whether or not the item goes to that index)."""
        for gsi in self._gsis.get(table, ()):
            if not gsi.buffer:
                continue
            if gsi.current != now:
                self._roll(gsi, now)
            gsi.refill(now)
            if gsi.tokens[_WRITE] <= _TOKEN_FLOOR - gsi.buffer:
                return self._throttled(
                    gsi, None, _WRITE, gsi.limit[_WRITE], by_partition=False, buffer=True
                )
            for part in list(gsi.full):
                self._refill(part, now)
                if part.tokens[0 if self.additive else _WRITE] > _TOKEN_FLOOR - gsi.buffer:
                    gsi.full.discard(part)
                else:
                    return self._throttled(
                        gsi,
                        part,
                        _WRITE,
                        "KeyRangeThroughputExceeded",
                        by_partition=True,
                        buffer=True,
                    )
        return None

    def settle(self, admitted: Iterable[Charge], actual: Iterable[Charge]) -> None:
        """Replace admitted charges by what the request really cost, without checking.

        Reads learn their size only once run: admit the estimate, then settle. Buckets may go
        into debt, and later requests are throttled until it is repaid.
        """
        now = math.floor(self.clock())
        for sign, charges in ((-1.0, admitted), (1.0, actual)):
            for charge in charges:
                space = self._space(charge, now)
                part = None
                if charge.key is not None:
                    part = space.parts[bisect_right(space.starts, partition_hash(charge.key)) - 1]
                    self._refill(part, now)
                self._take(
                    space, part, _KINDS[charge.kind], sign * charge.units, eventual=charge.eventual
                )

    def snapshot(self) -> list[ThroughputStats]:
        """Capacity, burst, consumption, throttles and partitions of every table and GSI."""
        clock = self.clock()
        now = math.floor(clock)
        stats = []
        for (table, index), space in self._spaces.items():
            if space.index != index:
                continue  # an LSI, reported with its table
            buffered, buffer_reason, full_in = 0.0, "", None
            if space.buffer:
                buffered, part = self._buffered(space, clock)
                limit: Limit = "KeyRangeThroughputExceeded" if part else space.limit[_WRITE]
                buffer_reason = space.throttle(_WRITE, limit, buffer=True).reason
                full_in = self._full_in(space, now, buffered, part)
            space.refill(now)
            burst = [max(0.0, space.tokens[kind] - space.rate[kind]) for kind in (_READ, _WRITE)]
            parts = tuple(
                PartitionStats(
                    start=p.start,
                    end=p.end,
                    consumed_read_units=p.consumed[_READ],
                    consumed_write_units=p.consumed[_WRITE],
                    throttled_reads=round(p.throttled[_READ]),
                    throttled_writes=round(p.throttled[_WRITE]),
                    hot_seconds=p.hot,
                )
                for p in space.parts
            )
            stats.append(
                ThroughputStats(
                    table=table,
                    index=index,
                    on_demand=space.on_demand,
                    read_capacity=space.rate[_READ],
                    write_capacity=space.rate[_WRITE],
                    burst_read_units=burst[_READ],
                    burst_write_units=burst[_WRITE],
                    consumed_read_units=space.consumed[_READ],
                    consumed_write_units=space.consumed[_WRITE],
                    throttled_reads=round(space.throttled[_READ]),
                    throttled_writes=round(space.throttled[_WRITE]),
                    splits=space.splits,
                    partitions=parts,
                    size_bytes=space.size_bytes if index is None else 0.0,
                    read_cause=cause_of(space.limit[_READ], by_partition=False),
                    write_cause=cause_of(space.limit[_WRITE], by_partition=False),
                    buffered_write_units=buffered,
                    buffer_write_units=space.buffer,
                    buffer_reason=buffer_reason,
                    buffer_full_in_s=full_in,
                )
            )
        return stats

    def _buffered(
        self, space: _Keyspace, clock: float | None = None
    ) -> tuple[float, _Partition | None]:
        """A GSI's buffer content: its bucket's debt, or its most indebted partition's where
        that is more (and that partition), as each was last charged (the second it closes,
        where ``clock`` is None), or at ``clock``: a debt drains at its bucket's allowance
        from the end of the second it was last charged in, the whole seconds since and the
        part of this one passed, as an index applies its writes (a bucket takes each second's
        allowance at its start, so a reading a moment past a run's last second would find a
        buffer holding less than an allowance empty)."""
        slot = 0 if self.additive else _WRITE
        ceiling, worst, behind = self.ceilings[slot], None, 0.0
        for part in space.parts:
            owed = _drained(part.tokens[slot], part.stamp, part.collection * ceiling, clock)
            if owed > behind:
                worst, behind = part, owed
        own = _drained(space.tokens[_WRITE], space.stamp, space.rate[_WRITE], clock)
        if behind > own:
            return behind, worst
        return own, None

    def _full_in(
        self, space: _Keyspace, now: int, buffered: float, part: _Partition | None
    ) -> float | None:
        """Seconds until a GSI's buffer is full at the last minute's rate,
        None where a split for heat of the partition behind comes first."""
        if buffered >= space.buffer - _TOKEN_FLOOR:
            return 0.0
        then = next(((s, level) for s, level in space.levels if s >= now - 60), None)
        if then is None or then[0] >= now or buffered <= then[1]:
            return None  # not filling
        per_second = (buffered - then[1]) / (now - then[0])
        fills = (space.buffer - buffered) / per_second
        # The partition behind splits first where its hot keys are several: it catches up.
        late = part is not None and fills > self.split_after - part.hot
        return None if late and part is not None and self._splittable(space, part) else fills

    def _splittable(self, space: _Keyspace, part: _Partition) -> bool:
        """Whether a split for heat would spread a partition's load: several hot keys."""
        hashes = {h for _, h, _ in part.sample}
        if not hashes and space.sampler is not None:
            hashes = set(space.sampler(part.start, part.end))
        return len(hashes) > 1

    def _space(self, charge: Charge, now: int) -> _Keyspace:
        space = self._spaces.get((charge.table, charge.index))
        if space is None:
            raise ConfigError(f"no table or index {charge.table!r}/{charge.index!r} in the model")
        if space.current != now:
            self._roll(space, now)
        space.refill(now)
        return space

    def _refill(self, part: _Partition, now: int) -> None:
        elapsed = now - part.stamp
        if elapsed > 0:
            part.stamp = now
            tokens, ceilings, parts = part.tokens, self.ceilings, part.collection
            tokens[0] = min(parts * ceilings[0], tokens[0] + elapsed * parts * ceilings[0])
            tokens[1] = min(parts * ceilings[1], tokens[1] + elapsed * parts * ceilings[1])

    def _take(
        self,
        space: _Keyspace,
        part: _Partition | None,
        kind: int,
        units: float,
        *,
        eventual: bool = False,
    ) -> None:
        space.tokens[kind] -= units
        space.second[kind] += units
        space.consumed[kind] += units
        if part is not None:
            slot = 0 if self.additive else kind
            weight = self._weight[kind] / (EVENTUAL_READ_FACTOR if eventual else 1.0)
            part.tokens[slot] -= units * weight
            part.second[kind] += units
            part.consumed[kind] += units
            if space.buffer and kind == _WRITE and part.tokens[slot] <= _TOKEN_FLOOR - space.buffer:
                space.full.add(part)

    def _observe(self, part: _Partition, key_hash: int, sort: object = None) -> None:
        # Reservoir sampling: every charge of the hot streak equally likely to be kept.
        part.seen += 1
        entry = (part.seen, key_hash, sort)
        if len(part.sample) < SAMPLE_SIZE:
            part.sample.append(entry)
        else:
            slot = int(self._random.random() * part.seen)
            if slot < SAMPLE_SIZE:
                part.sample[slot] = entry

    def _throttled(
        self,
        space: _Keyspace,
        part: _Partition | None,
        kind: int,
        limit: Limit,
        *,
        by_partition: bool,
        buffer: bool = False,
    ) -> Throttle:
        space.throttled[kind] += 1
        if part is not None:
            part.throttled[kind] += 1
        return space.throttle(kind, limit, by_partition=by_partition, buffer=buffer)

    def _roll(self, space: _Keyspace, second: int) -> None:
        """Close the keyspace's current second: heat, splits, on-demand growth, auto scaling."""
        consecutive = second - space.current == 1
        closed = space.current
        space.current = second
        hot_parts = []
        split_after, additive = self.split_after, self.additive
        read_full, write_full = self._full
        for part in space.parts:
            used = part.second
            if part.throttled_now:
                part.throttled_now = False
                hot = consecutive
            elif consecutive:
                # Hot: its second's use at `HEAT_FRACTION` of its ceiling (read and write
                # summed where they share one budget, else the larger).
                read, write = used[0] / read_full, used[1] / write_full
                hot = (read + write if additive else (write if write > read else read)) >= (
                    HEAT_FRACTION
                )
            else:
                hot = False
            if hot:
                part.hot += 1
                if part.hot >= split_after:
                    hot_parts.append(part)
            elif part.hot or part.seen:  # a sample is kept only while it counts (`seen`)
                part.hot, part.seen = 0, 0
                part.sample.clear()
            used[0] = used[1] = 0.0
        for part in hot_parts:
            self._split_for_heat(space, part)
        if space.buffer:
            # The buffer's content as the second closed (partitions as last topped up).
            space.levels.append((second, self._buffered(space)[0]))
        if space.on_demand:
            self._grow_on_demand(space, closed, second)
        elif space.scalers[0] is not None or space.scalers[1] is not None:
            self._auto_scale(space, second - closed)
        space.second[0] = space.second[1] = 0.0

    def _grow_on_demand(self, space: _Keyspace, closed: int, now: int) -> None:
        # A second's use becomes the previous peak once it is a growth window old; the
        # seconds between hold at most a window of entries.
        recent = space.recent
        if space.second[0] or space.second[1]:
            recent.append((closed, space.second[0], space.second[1]))
        changed = False
        while recent and recent[0][0] <= now - space.window:
            _, read, write = recent.popleft()
            if read > space.peak[_READ] or write > space.peak[_WRITE]:
                space.peak[_READ] = max(space.peak[_READ], read)
                space.peak[_WRITE] = max(space.peak[_WRITE], write)
                changed = True
        if changed:
            for kind in (_READ, _WRITE):
                space.set_rate(kind)
            space.grow()

    def _auto_scale(self, space: _Keyspace, elapsed: int) -> None:
        """Target tracking: a minute's average use over the target for ``out_after_s`` raises
        the capacity to that use over the target; under it less 0.2 for ``in_after_s`` lowers
        it. Seconds without traffic count as idle ones."""
        for kind in (_READ, _WRITE):
            scaler = space.scalers[kind]
            if scaler is None:
                continue
            policy = scaler.policy
            scaler.used.append(space.second[kind])
            for _ in range(min(elapsed, 61) - 1):
                scaler.used.append(0.0)
            provisioned = space.provisioned[kind] * self.scale
            use = sum(scaler.used) / (len(scaler.used) * provisioned)
            if use > policy.target:
                scaler.over, scaler.under = scaler.over + elapsed, 0
            elif use < policy.target - 0.2:
                scaler.over, scaler.under = 0, scaler.under + elapsed
            else:
                scaler.over = scaler.under = 0
            wanted = None
            if scaler.over >= policy.out_after_s or scaler.under >= policy.in_after_s:
                wanted = use * space.provisioned[kind] / policy.target
            if wanted is not None:
                wanted = min(policy.maximum, max(policy.minimum, wanted))
                scaler.over = scaler.under = 0
                if wanted != space.provisioned[kind]:
                    pair = list(space.provisioned)
                    pair[kind] = wanted
                    space.provisioned = (pair[0], pair[1])
                    old = space.rate[kind]
                    space.set_rate(kind)
                    # The extra capacity is there from this second; a lowered one keeps no
                    # more banked than its new burst allows.
                    space.tokens[kind] = min(
                        space.tokens[kind] + max(0.0, space.rate[kind] - old),
                        space.rate[kind] * space.bank_seconds,
                    )
                    space.grow()

    def _split_for_heat(self, space: _Keyspace, part: _Partition) -> None:
        """Split at the median key hash seen. A single hot partition-key value splits by sort
        key (its item collection) where its charges name several sort keys that do not only
        increase and the table has no LSI; a single hot item cannot be split."""
        sample = sorted(part.sample)  # by arrival
        if not sample and space.sampler is not None:
            sample = [(0, h, None) for h in space.sampler(part.start, part.end)]  # bulk demand
        hashes = sorted(h for _, h, _ in sample)
        part.hot, part.seen = 0, 0
        part.sample.clear()
        # Boundaries between distinct hashes; the one nearest the middle balances the halves.
        cuts = [i for i in range(1, len(hashes)) if hashes[i - 1] != hashes[i]]
        if cuts:
            cut = min(cuts, key=lambda i: abs(2 * i - len(hashes)))
            space.split(space.parts.index(part), hashes[cut])
        elif space.collections and _spread(sort for _, _, sort in sample):
            # One more partition for the collection, its ceiling with it (modelled as this
            # partition's ceiling growing: its other keys, if any, gain with it).
            part.collection += 1
            space.splits += 1
