"""The simulation: a profile's traffic through the partition model, one simulated second at a
time, aggregated per partition instead of per request.

Each second, each access pattern's new executions (the profile's rate times its share of the
design's mix) are spread over its lanes' keys by their exact probabilities
(`loadgen.simulate.demand`), summed per partition, and admitted in bulk
(`PartitionModel.admit_bulk`) by the rules the emulator applies per request. On one table or
index, a pattern's execution is refused where the partition of any of its lanes' keys refuses
it (a transaction's items, drawn apart): a partition refuses the last of its second's demand,
so an execution is refused as its most refused partition refuses it. Over tables and indexes
it is admitted in the share the most refused one allows (a write and the index entries that
push back on it are refused together).

The SDK's retries of throttled attempts (as many as the standard mode's retry quota allows)
come back where they were refused: a retry is the same request, on the same key's partition,
and is throttled again as likely as that partition's other attempts. The lane that refused a
pattern's attempts keeps them by partition until the standard mode's waits bring them back
(`loadgen.simulate.retries.Returning`); first attempts and retries are each admitted in their
own share. The pattern's other lanes (a transaction's other items, a write's index entries)
touch their keys again too, but where is not kept: they are drawn over those lanes' keys as
new executions are, an approximation where the refusing lane's key and theirs go together.
The results count each request's key touches once, as a run's recorder does, and each
throttled attempt where it was throttled. Work per second grows with partitions and lanes;
memory with keys.

    result = simulate(load_design("examples/designs/counter.yaml", "single"), constant(1650, 600))
    result.first_failures()
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from loadgen.design.generators import RunClock
from loadgen.design.loader import Design
from loadgen.errors import ConfigError, InvalidSetting
from loadgen.model.hashing import HASH_SPACE
from loadgen.model.partitions import (
    SPLIT_AFTER_S,
    AutoScaling,
    BulkAdmission,
    PartitionModel,
    ThroughputStats,
    falls_behind,
    key_ceiling,
)
from loadgen.model.schema import TableSchema
from loadgen.refusals import (
    MODELLED_MODES,
    NO_RETRY_INCREMENT,
    RETRY_COST,
    RETRY_QUOTA,
    STANDARD_ATTEMPTS,
)
from loadgen.simulate.causes import Causes, LimitRecord, PatternThrottles
from loadgen.simulate.demand import (
    KeyProfile,
    Lane,
    PatternDemand,
    pattern_demands,
    reads_eventually,
)
from loadgen.simulate.growth import Growing
from loadgen.simulate.profile import Profile
from loadgen.simulate.retries import Returning, horizon, landed, sdk_retries

__all__ = [
    "FAILING_SHARE",
    "STANDARD_ATTEMPTS",
    "Failure",
    "Minute",
    "Settings",
    "SimulationResult",
    "simulate",
]

# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html
AUTO_SCALING_MAXIMUM = 40000.0
"""Units/s auto scaling may reach: the default per-table quota."""
FAILING_SHARE = 0.01
"""A pattern fails in a minute when more than this share of its attempts is throttled."""
HEAT_COLUMNS = 900
"""Most heat-matrix columns in the results file: longer simulations widen a column."""
_RESOLUTIONS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600)


class _VirtualClock(RunClock):
    """The run clock of the design's time generators (`RunClock`: from the top of the hour
    it started in, ``speed`` times faster), on simulated time: ``at`` is the simulated
    second's wall time, where a real run's clock reads ``time.time()``. The engine sets it
    to the middle of each second; it never reads before the clock started (a run draws no
    key before its clock exists, also in the second it started in)."""

    def __init__(self, speed: float, started: float, at: float) -> None:
        super().__init__(speed, started)
        self.at = at

    def now(self) -> float:
        return self.origin + max(0.0, self.at - self.start) * self.speed


MAX_ATTEMPTS = 20
"""Most attempts per request the model follows (a retry ring of that many rows): more than
any SDK's default (standard mode's 3, legacy's 10)."""


@dataclass(frozen=True)
class Settings:
    """How to simulate: seed, retries, start time, auto scaling, warm throughput."""

    seed: int = 1
    """Seeds the key draws of time generators, where partitions split and each second's
    counts (`fluctuate`): one seed, one result."""
    distribution: str = "zipf:0.99"
    """Key distribution of generators that name none (the workloads' default)."""
    attempts: int = STANDARD_ATTEMPTS
    """Attempts per request: standard mode's 3; 1 turns retries off; legacy mode's 10."""
    retry_mode: str = "standard"
    """How the SDK waits between attempts and whether a quota bounds its retries
    (`loadgen.refusals.MODELLED_MODES`): a run's ``--retry-mode``."""
    start: float = 1_800_000_000.0
    """Unix time of the first simulated second (time generators' clock)."""
    auto_scaling: bool = False
    """Provisioned tables and GSIs track 70% utilisation, from their capacity to 40,000."""
    warm_write_units: float | None = None
    """Raise every on-demand table's and GSI's warm write throughput to this."""
    warm_read_units: float | None = None
    clock_speed: float = 1.0
    """The design's time generators run this many times faster than simulated time (1: as on
    AWS; a design's ``clock_speed`` is for real-time runs, which cannot wait an hour)."""
    clock_start: float | None = None
    """Unix time the time generators' clock started, as a run's `RunClock` starts: reading
    the top of that hour then (a run's results file: ``design.clock.start``). None: ``start``."""
    clients: int = 1
    """SDK clients sending the traffic: each holds a retry quota of 500 tokens."""
    split_after_s: float = SPLIT_AFTER_S
    buckets: int = 256
    fluctuate: bool = True
    """Draw each second's executions per pattern and touches per partition at random, as
    traffic meets them (the hottest keys over the run too); False: their expectations."""
    provision: tuple[tuple[str, str | None, float, float], ...] = ()
    """``(table, index or None, read, write)``: run these on-demand tables and their GSIs
    provisioned at these capacity units instead, auto scaled from there with
    ``auto_scaling`` (what ``loadgen simulate`` prices as provisioned with auto scaling)."""
    heat: bool = True
    """Fill the heat matrix (`SimulationResult.heat`); False leaves it empty, for a caller
    that reads none of it (``loadgen check``): the rest of the result is the same."""
    scale: float = 1.0
    """Simulate a run at this scale (1: AWS). A ``loadgen run --scale S`` sends S times the
    requests to S times the ceilings: its counts fluctuate 1/sqrt(S) times as much, and its
    clients' retry quotas, counted in its requests, last 1/S times as long. Capacities and
    figures stay at AWS's."""

    def __post_init__(self) -> None:
        if self.seed < 0:
            raise InvalidSetting("seed", f"must be 0 or more (got {self.seed!r})")
        if not self.scale > 0:
            raise InvalidSetting("scale", f"must be more than 0 (got {self.scale!r})")
        if not 1 <= self.attempts <= MAX_ATTEMPTS:
            raise InvalidSetting("attempts", f"must be 1 to {MAX_ATTEMPTS} (got {self.attempts!r})")
        if self.clients < 1:
            raise InvalidSetting("clients", f"must be at least 1 (got {self.clients!r})")
        if self.retry_mode not in MODELLED_MODES:
            raise ConfigError(
                f"retry mode {self.retry_mode!r} is not modelled (expected one of: "
                f"{', '.join(MODELLED_MODES)})"
            )


@dataclass
class Minute:
    """One minute of one pattern, or one table or index, as the timeline prints it."""

    minute: int
    offered: float = 0.0
    """Attempts, retries included."""
    new: float = 0.0
    admitted: float = 0.0
    throttled: float = 0.0
    failed: float = 0.0
    """Requests that ran out of attempts."""


@dataclass
class ScopeMinute:
    minute: int
    read_capacity: float
    write_capacity: float
    consumed_read: float
    consumed_write: float
    partitions: int
    burst_read: float
    burst_write: float
    on_demand: bool


@dataclass(frozen=True)
class Failure:
    """The first minute a pattern's throttled share passes `FAILING_SHARE`, and why."""

    pattern: str
    minute: int
    share: float
    reason: str
    cause: str = ""
    """The model's cause of the throttle the reason words (`loadgen.refusals.CAUSES`)."""


@dataclass
class SimulationResult:
    design: Design
    profile: Profile
    settings: Settings
    demands: list[PatternDemand]
    patterns: dict[str, list[Minute]]
    scopes: dict[tuple[str, str | None], list[ScopeMinute]]
    reasons: dict[tuple[str, int], str]
    """(pattern, minute) to the words of what throttled it first in that minute."""
    heat_lanes: dict[tuple[str, str | None, str], np.ndarray]
    """Per (table, index, kind), its heat grid: requests, units and throttled attempts by
    column and bucket (`heat` is the results file's matrix of it)."""
    top_keys: dict[tuple[str, str | None], dict[str, tuple[float, float]]]
    """Per scope, key to (touches, units) over the whole simulation."""
    wall_s: float = 0.0
    requests: float = 0.0
    """Attempts simulated, retries included."""
    retry_wait_s: float = 0.0
    """Seconds the SDK's retries waited before they were sent, over every request."""
    final: list[ThroughputStats] = field(default_factory=list)
    grown_units: dict[tuple[str, int], float] = field(default_factory=dict)
    """(pattern, lane's place in its demand's lanes) to the units its admitted executions were
    charged, for lanes whose items grow with their updates (`Lane.growth`)."""
    causes: dict[tuple[str, int], str] = field(default_factory=dict)
    """(pattern, minute) to the model's cause of the throttle `reasons` words."""
    throttles: dict[str, list[PatternThrottles]] = field(default_factory=dict)
    """Per pattern, its throttled attempts by the limit that refused them (`causes`)."""
    limits: list[LimitRecord] = field(default_factory=list)
    """What each limit of each table and index refused, over the simulation."""
    asked_units: dict[tuple[str, str | None, str], float] = field(default_factory=dict)
    """Units asked of each (table, index, kind) over the simulation."""
    initial: list[ThroughputStats] = field(default_factory=list)
    """The tables and indexes as the simulation began: capacity, its limit, partitions."""
    key_profiles: dict[tuple[str, int], KeyProfile] = field(default_factory=dict)
    """(pattern, lane's place in its demand's lanes) to the lane's keys as the simulation
    began (keys on the run's clock move later)."""
    heat_resolution_s: int = 1
    """Simulated seconds a heat column spans."""

    @functools.cached_property
    def heat(self) -> dict[str, Any]:
        """The results file's heat matrix (`loadgen.heat.heatmap.HeatMap.matrix`'s shape),
        made when first asked: ``loadgen check`` never asks, and rounding every cell of a
        long simulation's grids takes longer than some simulations."""
        resolution = self.heat_resolution_s
        columns = math.ceil(self.profile.duration_s / resolution)
        return _heat_matrix(self.heat_lanes, self.settings, resolution, columns)

    def buffers(self) -> list[dict[str, Any]]:
        """Each GSI's write buffer as the simulation ended, as a run's results keep the
        emulator's (`loadgen.emulator.metrics.buffers`)."""
        return [
            {
                "table": s.table,
                "index": s.index,
                "reason": s.buffer_reason,
                "buffered_write_units": round(s.buffered_write_units, 3),
                "buffer_write_units": s.buffer_write_units,
                "full_in_s": None if s.buffer_full_in_s is None else round(s.buffer_full_in_s, 1),
            }
            for s in self.final
            if s.index is not None and s.buffer_write_units
        ]

    def requests_per_operation(self) -> float:
        """Requests the simulated clients sent per operation: every attempt of every pattern
        (the SDK's retries of throttled ones included) times the requests an execution makes
        (`PatternDemand.calls`), over the operations (first attempts). What a run of the same
        profile asks of its target per operation; 1.0 where none ran."""
        calls = {demand.id: demand.calls for demand in self.demands}
        rows = [(pattern, row) for pattern, minutes in self.patterns.items() for row in minutes]
        attempts = math.fsum(row.offered * calls[pattern] for pattern, row in rows)
        operations = math.fsum(row.new for _, row in rows)
        return attempts / operations if operations > 0 else 1.0

    def retry_wait_per_operation(self) -> float:
        """Seconds an operation spends, on average, waiting for its retries to be sent: what
        holds a caller (a run's in-flight slot) beyond the target's answers; 0.0 where none
        ran."""
        operations = math.fsum(row.new for rows in self.patterns.values() for row in rows)
        return self.retry_wait_s / operations if operations > 0 else 0.0

    def first_failures(self) -> list[Failure]:
        failures = []
        for pattern, minutes in self.patterns.items():
            for row in minutes:
                share = row.throttled / row.offered if row.offered else 0.0
                if share > FAILING_SHARE:
                    reason = self.reasons.get((pattern, row.minute), "")
                    cause = self.causes.get((pattern, row.minute), "")
                    failures.append(Failure(pattern, row.minute, share, reason, cause))
                    break
        # A GSI falling behind: its buffer will refuse every write to its table once full.
        failed = {f.pattern for f in failures}
        last = max(0, math.ceil(self.profile.duration_s / 60) - 1)
        for buffer in self.buffers():
            if not falls_behind(buffer["full_in_s"]):
                continue
            for demand in self.demands:
                writes = any(
                    lane.table == buffer["table"] and lane.index is None and lane.kind == "write"
                    for lane in demand.lanes
                )
                if writes and demand.id not in failed:
                    failed.add(demand.id)
                    reason = (
                        f"index {buffer['table']}/{buffer['index']}'s write buffer fills in "
                        f"about {buffer['full_in_s'] / 60:,.0f} min ({buffer['reason']}), then "
                        f"every write to {buffer['table']} is refused"
                    )
                    failures.append(Failure(demand.id, last, 0.0, reason, "buffer"))
        return failures


class _Scope:
    """A table or GSI: its lanes, partition layout and per-second figures."""

    def __init__(self, table: str, index: str | None, buckets: int) -> None:
        self.table, self.index = table, index
        self.lanes: list[tuple[int, Lane, KeyProfile]] = []
        self.starts: list[int] = []
        """The layout the lanes' shares are of ([]: to be worked out again)."""
        self.layout: list[int] = []
        """The layout the lanes' returning retries are on."""
        self.shares: dict[int, np.ndarray] = {}  # lane number to its partition shares
        bucket_starts = [b * HASH_SPACE // buckets for b in range(buckets)]
        self.bucket_starts = bucket_starts
        mids = np.asarray([(b * 2 + 1) * HASH_SPACE // (2 * buckets) for b in range(buckets)])
        self.bucket_mids = mids.astype(np.uint64)
        self.bucket_partition = np.zeros(buckets, dtype=np.int64)
        self.bucket_shares: dict[int, np.ndarray] = {}  # lane number to its heat-bucket shares
        self.spread: dict[int, np.ndarray] = {}
        """Lane number to each bucket's part of its partition's touches (heat)."""


def _refresh(scope: _Scope, starts: list[int], returning: Sequence[Returning]) -> None:
    """Work the lanes' shares out again where the partitions (or the lanes' keys) changed;
    carry the retries on their way back onto a new layout."""
    if starts == scope.starts:
        return
    scope.starts = starts
    scope.shares = {n: p.shares(starts) for n, _, p in scope.lanes}
    if starts != scope.layout:
        for number, _, _ in scope.lanes:
            returning[number].relayout(scope.layout, starts, scope.shares[number])
        scope.layout = starts
        scope.bucket_partition = (
            np.searchsorted(np.asarray(starts, dtype=np.uint64), scope.bucket_mids, side="right")
            - 1
        )
    partition = scope.bucket_partition
    count = np.bincount(partition, minlength=len(starts))[partition]
    for number, _, _ in scope.lanes:
        own = scope.shares[number][partition]
        with np.errstate(divide="ignore", invalid="ignore"):
            scope.spread[number] = np.where(
                own > 0, scope.bucket_shares[number] / own, 1.0 / np.maximum(count, 1)
            )


def _elsewhere(
    back: np.ndarray, touch_counts: np.ndarray, pattern_of: np.ndarray, patterns: int
) -> np.ndarray:
    """Per lane, the executions coming back this second that another lane of its pattern
    refused (and holds, `Returning`; ``back``: each lane's touches coming back): this lane
    touches their keys as new executions do."""
    own = back / touch_counts
    per_pattern = np.bincount(pattern_of, weights=own, minlength=patterns)
    others: np.ndarray = per_pattern[pattern_of] - own
    return others


class _Heat:
    """The heat matrix as a run's recorder fills it: each request's key touches once (and
    their units) by bucket, and each throttled attempt in the bucket it was throttled in.
    Summed per lane over a column (requests; throttled attempts by partition) and spread
    onto the buckets when the column ends, or before the partitions or the lane's keys change.
    """

    def __init__(
        self,
        grids: dict[tuple[str, str | None, str], np.ndarray],
        lane_list: Sequence[tuple[int, Lane]],
        scopes: dict[tuple[str, str | None, str], _Scope],
    ) -> None:
        self.grids, self.scopes = grids, scopes
        self.lanes = [((lane.table, lane.index, lane.kind), lane) for _, lane in lane_list]
        self.column = 0
        self.requests = np.zeros(len(lane_list))
        self.served = np.zeros(len(lane_list))
        """Per lane, the column's requests admitted: only they are charged units, as a run's
        recorder charges none to a call throttled to the end."""
        self.refused: list[np.ndarray | float] = [0.0] * len(lane_list)
        """Per lane, the column's throttled attempts by partition."""
        self.growing = {number for number, (_, lane) in enumerate(lane_list) if lane.growth}
        self.charged: list[np.ndarray | float] = [0.0] * len(lane_list)
        """Per growing lane (`Lane.growth`), the column's units by partition: its keys' units
        grow with their updates, so its requests are not charged its `Lane.units`."""

    def flush(self, numbers: Iterable[int]) -> None:
        for number in numbers:
            key, lane = self.lanes[number]
            scope, grid = self.scopes[key], self.grids[key]
            if self.requests[number]:
                grid[0, self.column] += scope.bucket_shares[number] * self.requests[number]
                self.requests[number] = 0.0
            if self.served[number]:
                if number not in self.growing:
                    shares = scope.bucket_shares[number]
                    units: float | np.ndarray = lane.units
                    if lane.key_units:  # its hottest keys' pages are their own
                        profile = next(p for n, _, p in scope.lanes if n == number)
                        units = lane.partition_units(profile, scope.bucket_starts, shares)
                    grid[1, self.column] += shares * self.served[number] * units
                self.served[number] = 0.0
            charged = self.charged[number]
            if isinstance(charged, np.ndarray):
                grid[1, self.column] += charged[scope.bucket_partition] * scope.spread[number]
                self.charged[number] = 0.0
            refused = self.refused[number]
            if isinstance(refused, np.ndarray):
                grid[2, self.column] += refused[scope.bucket_partition] * scope.spread[number]
                self.refused[number] = 0.0


def _provisioned(schema: TableSchema, settings: Settings) -> TableSchema:
    """The on-demand ``schema`` switched to provisioned at the capacity ``settings.provision``
    gives its table and each GSI (1 unit each way where it gives none)."""
    given = {index: (r, w) for table, index, r, w in settings.provision if table == schema.name}
    if not schema.on_demand or not given:
        return schema

    def throughput(index: str | None) -> dict[str, float]:
        read, write = given.get(index, (1.0, 1.0))
        return {"ReadCapacityUnits": max(1.0, read), "WriteCapacityUnits": max(1.0, write)}

    request: dict[str, Any] = {
        "BillingMode": "PROVISIONED",
        "ProvisionedThroughput": throughput(None),
    }
    if schema.global_indexes:
        request["GlobalSecondaryIndexUpdates"] = [
            {"Update": {"IndexName": i.name, "ProvisionedThroughput": throughput(i.name)}}
            for i in schema.global_indexes
        ]
    return schema.with_update(request)


def _with_settings(schema: TableSchema, settings: Settings) -> TableSchema:
    schema = _provisioned(schema, settings)
    if not schema.on_demand or (
        settings.warm_read_units is None and settings.warm_write_units is None
    ):
        return schema
    warm: dict[str, float] = {}
    if settings.warm_read_units is not None:
        warm["ReadUnitsPerSecond"] = settings.warm_read_units
    if settings.warm_write_units is not None:
        warm["WriteUnitsPerSecond"] = settings.warm_write_units
    updated = schema.with_update({"WarmThroughput": warm})
    indexes = [
        {"Update": {"IndexName": i.name, "WarmThroughput": warm}} for i in schema.global_indexes
    ]
    return updated.with_update({"GlobalSecondaryIndexUpdates": indexes}) if indexes else updated


def simulate(
    design: Design,
    profile: Profile,
    settings: Settings | None = None,
    *,
    progress: Callable[[int], None] | None = None,
) -> SimulationResult:
    """Run ``profile`` through ``design`` on a virtual clock (see the module docstring)."""
    settings = settings or Settings()
    wall = time.perf_counter()
    started = settings.start if settings.clock_start is None else settings.clock_start
    clock = _VirtualClock(settings.clock_speed, started, settings.start + 0.5)
    generators = design.generators(
        seed=settings.seed, default_distribution=settings.distribution, clock=clock
    )
    demands = pattern_demands(design, generators)
    now = [settings.start]
    model = PartitionModel(
        clock=lambda: now[0], seed=settings.seed, split_after=settings.split_after_s
    )
    for schema in design.schemas.values():
        schema = _with_settings(schema, settings)
        model.create_table(schema)
        if settings.auto_scaling and not schema.on_demand:
            owners: list[tuple[str | None, float, float]] = [
                (None, schema.read_capacity, schema.write_capacity)
            ] + [(g.name, g.read_capacity, g.write_capacity) for g in schema.global_indexes]
            for index, read, write in owners:
                most = AUTO_SCALING_MAXIMUM
                model.auto_scale(schema.name, index, "read", AutoScaling(read, max(read, most)))
                model.auto_scale(schema.name, index, "write", AutoScaling(write, max(write, most)))
    initial = model.snapshot()
    total_rate = math.fsum(d.rate for d in demands)
    mix = np.asarray([d.rate / total_rate for d in demands])
    attempts = settings.attempts
    n_patterns = len(demands)
    retryable = np.asarray([sdk_retries(d.operation) for d in demands], dtype=float)
    one_request = [d.calls == 1 for d in demands]  # an execution refused or admitted whole
    # Lanes by scope; each lane remembers its pattern.
    scopes: dict[tuple[str, str | None, str], _Scope] = {}
    lane_list: list[tuple[int, Lane]] = []
    places: list[tuple[str, int]] = []  # (pattern, place in its demand's lanes)
    for i, demand in enumerate(demands):
        for place, lane in enumerate(demand.lanes):
            lane_list.append((i, lane))
            places.append((demand.id, place))
    profiles: list[KeyProfile] = [demands[i].profile(lane) for i, lane in lane_list]
    key_profiles = dict(zip(places, profiles, strict=True))
    for number, (_, lane) in enumerate(lane_list):
        key = (lane.table, lane.index, lane.kind)
        if key not in scopes:
            scopes[key] = _Scope(lane.table, lane.index, settings.buckets)
        scopes[key].lanes.append((number, lane, profiles[number]))
    lane_keys = [(lane.table, lane.index, lane.kind) for _, lane in lane_list]
    # Units a touch costs; by partition where a lane's items grow with its updates (`Growing`).
    unit_of: list[float | np.ndarray] = [lane.units for _, lane in lane_list]
    growing = {
        number: Growing(lane, len(profiles[number].top))
        for number, (_, lane) in enumerate(lane_list)
        if lane.growth
    }
    executed = np.zeros(n_patterns)  # admitted executions (attempts), per pattern
    for number, key in enumerate(lane_keys):
        scopes[key].bucket_shares[number] = profiles[number].shares(scopes[key].bucket_starts)
    time_values = [
        tuple(demands[i].generators[n].draw() for n in demands[i].time_names) for i, _ in lane_list
    ]

    duration = profile.duration_s
    resolution = next(
        (r for r in _RESOLUTIONS if math.ceil(duration / r) <= HEAT_COLUMNS),
        60 * math.ceil(duration / 60 / HEAT_COLUMNS),
    )
    columns = math.ceil(duration / resolution)
    heat_lanes: dict[tuple[str, str | None, str], np.ndarray] = {
        key: np.zeros((3, columns, settings.buckets)) for key in scopes if settings.heat
    }
    minutes = math.ceil(duration / 60)
    per_pattern = np.zeros((5, minutes, n_patterns))  # offered, new, admitted, throttled, failed
    reasons: dict[tuple[str, int], str] = {}
    first_causes: dict[tuple[str, int], str] = {}
    causes = Causes(n_patterns)
    scope_minutes: dict[tuple[str, str | None], list[ScopeMinute]] = {}
    top: dict[tuple[str, str | None], dict[str, tuple[float, float]]] = {}
    lane_executions = np.zeros(len(lane_list))
    # Attempts arriving in a later second, by number, by pattern: second s at row s % ahead.
    mode = settings.retry_mode
    seconds_ahead = horizon(attempts, mode)
    pending = np.zeros((seconds_ahead, attempts, n_patterns))
    # Each lane's retried attempts, by partition, on their way back (`Returning`).
    returning = [Returning(seconds_ahead) for _ in lane_list]
    retrying = attempts > 1
    pattern_of = np.asarray([i for i, _ in lane_list], dtype=np.int64)
    # Heat counts what a run's recorder sees (`Lane.recorded`); capacity, every charge.
    recorded = np.asarray([lane.recorded for _, lane in lane_list], dtype=float)
    touch_counts = np.asarray([p.touches for p in profiles])
    fresh: list[np.ndarray] = [np.zeros(0) for _ in lane_list]
    lane_drawn: list[np.ndarray] = [np.zeros(0) for _ in lane_list]
    several_lanes = len(set(pattern_of.tolist())) < len(lane_list)
    elsewhere = np.zeros(len(lane_list))
    # The ring rows of the seconds after each second (`pending`, `Returning`).
    ahead = [
        (row + 1 + np.arange(seconds_ahead - 1)) % seconds_ahead for row in range(seconds_ahead)
    ]
    group_of_attempt = np.minimum(np.arange(attempts), 1)  # first attempts, retries
    heat = _Heat(heat_lanes, lane_list, scopes)
    # A run at a scale counts its quota's tokens in its own requests: 1/scale of AWS's.
    quota = tokens = RETRY_QUOTA * settings.clients / settings.scale
    if mode == "legacy":
        quota = tokens = math.inf  # the legacy mode has no retry quota
    draws = _Draws(settings)
    rates = profile.array()
    # A GSI's writes first: its buffer's room this second decides its table's writes.
    gsi_first = sorted(scopes.items(), key=lambda item: item[0][1] is None)
    total_requests = retry_wait_s = 0.0

    def flush_top(number: int) -> None:
        lane = lane_list[number][1]
        executions = lane_executions[number]
        if not executions:
            return
        keys = top.setdefault((lane.table, lane.index), {})
        whole = draws.execution(executions)
        charged = growing[number].top_charged if number in growing else None
        for place, (text, weight) in enumerate(profiles[number].top):
            touches, units = keys.get(text, (0.0, 0.0))
            # A sketch of real traffic counts random draws: so does the simulation.
            drawn = float(draws.touches(whole, np.asarray([weight]))[0])
            per_touch = (
                lane.units_at(text) if charged is None else float(charged[place] / executions)
            )
            keys[text] = (touches + drawn, units + drawn * per_touch)
        lane_executions[number] = 0.0
        if charged is not None:
            charged[:] = 0.0

    for second in range(duration):
        now[0] = settings.start + second
        clock.at = now[0] + 0.5
        minute = second // 60
        column = second // resolution
        # Keys on the run's clock (an hour bucket) move with it.
        for number, (i, lane) in enumerate(lane_list):
            if demands[i].time_names:
                current = tuple(demands[i].generators[n].draw() for n in demands[i].time_names)
                if current != time_values[number]:
                    flush_top(number)
                    if settings.heat:
                        heat.flush((number,))
                    time_values[number] = current
                    profiles[number] = demands[i].profile(lane)
                    scope = scopes[(lane.table, lane.index, lane.kind)]
                    scope.lanes = [
                        (n, ln, profiles[n] if n == number else p) for n, ln, p in scope.lanes
                    ]
                    scope.starts = []  # the lanes' shares are worked out again
                    scope.bucket_shares[number] = profiles[number].shares(scope.bucket_starts)
                    touch_counts[number] = profiles[number].touches
                    if number in growing:
                        growing[number].keys_moved(executed[i], len(profiles[number].top))
        row = second % seconds_ahead
        cohorts = pending[row].copy()
        pending[row] = 0.0
        cohorts[0] += draws.arrivals(float(rates[second]), mix)
        new = cohorts[0]
        offered = asked = cohorts.sum(axis=0)
        fresh_drawn = draws.executions(new)
        if column != heat.column and settings.heat:
            heat.flush(range(len(lane_list)))
            heat.column = column
        for scope in scopes.values():
            starts = model.partition_starts(scope.table, scope.index)
            if starts != scope.starts:
                if settings.heat:
                    heat.flush(n for n, _, _ in scope.lanes)
                _refresh(scope, starts, returning)
                for number, lane, keys in scope.lanes:
                    if lane.key_units:  # its hottest keys' pages are their own
                        shares = scope.shares[number]
                        unit_of[number] = lane.partition_units(keys, starts, shares)
        for number, growth in growing.items():
            scope = scopes[lane_keys[number]]
            growth.follow(
                executed[lane_list[number][0]], settings.scale, profiles[number],
                scope.starts, scope.shares[number],
            )  # fmt: skip
            unit_of[number] = growth.units
        # A retried attempt comes back on the partitions of the lane that refused it; the
        # pattern's other lanes (a transaction's other items, a write's index entries) take
        # their retries where new executions go: their keys are not known per partition.
        back = [r.take(second) for r in returning]
        back_total = (
            np.asarray(
                [0.0 if b is r.none else b.sum() for r, b in zip(returning, back, strict=True)]
            )
            if retrying
            else np.zeros(len(back))
        )
        if several_lanes:
            elsewhere = _elsewhere(back_total, touch_counts, pattern_of, n_patterns)
        refusal: dict[tuple[str, str | None, str], np.ndarray] = {}
        by_ceiling: dict[tuple[str, str | None, str], np.ndarray] = {}
        refusing: dict[tuple[str, str | None, str], tuple[BulkAdmission, np.ndarray]] = {}
        for key, scope in gsi_first:
            units = np.zeros(len(scope.starts))
            touches = np.zeros(len(scope.starts))
            eventual = np.zeros(len(scope.starts))
            for number, _, _ in scope.lanes:
                shares = scope.shares[number]
                fresh[number] = draws.touches(fresh_drawn[lane_list[number][0]], shares)
                if several_lanes and elsewhere[number] > 0:
                    whole = draws.execution(elsewhere[number])
                    back[number] = back[number] + draws.touches(whole, shares)
                    back_total[number] = back[number].sum()
                drawn = fresh[number] + back[number] if back_total[number] else fresh[number]
                lane_drawn[number] = drawn
                touches += drawn
                units += drawn * unit_of[number]
                if lane_list[number][1].eventual:
                    eventual += drawn * unit_of[number]
            sampler = _sampler(scope, offered, lane_list)
            asked_of = units > 0
            eventual_share = None
            if eventual.any():
                shared = np.divide(eventual, units, out=np.zeros(len(units)), where=asked_of)
                eventual_share = shared.tolist()
            bulk = model.admit_bulk(
                scope.table, scope.index, key[2], units.tolist(), touches.tolist(),
                sampler=sampler, eventual=eventual_share,
            )  # fmt: skip
            admitted = np.asarray(bulk.admitted)
            phi = np.divide(admitted, units, out=np.ones(len(units)), where=asked_of)
            refusal[key] = 1.0 - phi
            # The share of each partition's units its own ceiling refused (the rest of what
            # was refused, the keyspace's limit did).
            by_ceiling[key] = causes.keyspace(key, units, bulk)
            if bulk.throttle is not None:
                refusing[key] = (bulk, units)
        # Refused shares of first attempts and of retries, per pattern: on each table or
        # index, an execution of one request is refused where the partition of any of its
        # lanes' keys refused (refused late in the second, all of them: where its most
        # refused one did); over tables and indexes, as the one that refused most (a write and
        # the index entries that push back on it are refused together). `on_scope`: per
        # pattern, group and table or index, each refused lane's touches, their total and the
        # share refused; `where`: the most refused lane's touches by partition, and those
        # refused, where its retries come back.
        on_scope: dict[
            tuple[int, int, tuple[str, str | None, str]], list[tuple[np.ndarray, float, float]]
        ] = {}
        lane_refused = np.zeros((2, n_patterns))
        where: dict[tuple[int, int], tuple[int, np.ndarray, float, float]] = {}
        for number, (i, _) in enumerate(lane_list):
            key = lane_keys[number]
            if key not in refusing:
                continue  # nothing refused
            for group, drawn in ((0, fresh[number]), (1, back[number])):
                total = float(drawn.sum()) if group == 0 else back_total[number]
                if group and not total:
                    continue
                if not total:  # none drawn this second: where they would fall
                    drawn = scopes[key].shares[number]
                    total = float(drawn.sum())
                refused_touches = float(drawn @ refusal[key])
                if not (total > 0 and refused_touches > 0):
                    continue
                share = refused_touches / total
                on_scope.setdefault((group, i, key), []).append((drawn, total, share))
                if share > lane_refused[group, i]:
                    lane_refused[group, i] = share
                    ceiling_touches = float(drawn @ by_ceiling[key])
                    where[(group, i)] = (number, drawn, refused_touches, ceiling_touches)
        refused_by_group = np.zeros((2, n_patterns))
        # Per table or index, its partitions from the least refused to the most.
        ranked: dict[tuple[str, str | None, str], np.ndarray] = {}
        for (group, i, key), lanes_drawn in on_scope.items():
            if len(lanes_drawn) == 1 or not one_request[i]:
                # An execution of several requests (a Query over each shard) is not refused
                # whole: its most refused lane's share.
                share = max(refused for _, _, refused in lanes_drawn)
            else:
                if key not in ranked:
                    ranked[key] = np.argsort(refusal[key])
                order = ranked[key]
                touched, totals, _ = zip(*lanes_drawn, strict=True)
                chances = np.stack(touched)[:, order] / np.asarray(totals)[:, None]
                share = _any_refused(refusal[key][order], chances)
            refused_by_group[group, i] = max(refused_by_group[group, i], share)
        # Patterns without retries this second: theirs as their first attempts'.
        refused_by_group[1] = np.where(offered > new, refused_by_group[1], refused_by_group[0])
        refused_by_group[refused_by_group < 1e-9] = 0.0  # float residue of shares adding up to all
        refused = refused_by_group[group_of_attempt]
        throttled = (cohorts * refused).sum(axis=0)
        failed = cohorts[attempts - 1] * refused[attempts - 1]
        if retrying:
            # Where the refused attempts were, per execution retried, and how late in the
            # second they were refused: as their partitions refused theirs (weighted as the
            # refusals), not as the pattern's keys do on average.
            refused_at: dict[tuple[int, int], tuple[int, np.ndarray]] = {}
            late = refused_by_group.copy()
            for (group, i), (number, drawn, refused_touches, _) in where.items():
                if refused_by_group[group, i]:
                    partition_refused = refusal[lane_keys[number]]
                    at = drawn * partition_refused
                    late[group, i] = float(at @ partition_refused) / refused_touches
                    at *= touch_counts[number] / refused_touches
                    refused_at[(group, i)] = (number, at)
            came = _retries(
                cohorts, refused, late[group_of_attempt], tokens, quota, retryable, mode
            )
            tokens = came.tokens
            retry_wait_s += came.waited
            rows = ahead[row]
            split = seconds_ahead - 1 - row  # the rows after this second's, then from 0
            pending[row + 1 :] += came.lands[:split]
            pending[:row] += came.lands[split:]
            failed = failed + came.gave_up
            # Retries back within the second are throttled again: attempts, all refused.
            offered = offered + came.again_total
            throttled = throttled + came.again_total
            for (group, i), (number, at) in refused_at.items():
                returning[number].send(rows, came.landed[:, group, i], at)
                if came.again[group, i] and recorded[number] and settings.heat:
                    heat.refused[number] += came.again[group, i] * at
        executed += offered - throttled
        per_pattern[0, minute] += offered
        per_pattern[1, minute] += new
        per_pattern[2, minute] += offered - throttled
        per_pattern[3, minute] += throttled
        per_pattern[4, minute] += failed
        total_requests += float(offered.sum())
        for i in np.flatnonzero(throttled).tolist():
            worst = where.get((0, i)) or where.get((1, i))
            if worst is None:
                continue
            key = lane_keys[worst[0]]
            bulk, units = refusing[key]
            # The lane's refused touches, split between its partitions' ceilings and the
            # keyspace's limit: the pattern's throttles are split alike.
            by_partition = worst[3] / worst[2] if worst[2] > 0 else 0.0
            keyspace = bulk.keyspace_throttle
            partition = bulk.throttle if bulk.partition_limited else None
            split_by = [(partition, by_partition), (keyspace, 1.0 - by_partition)]
            causes.pattern(i, float(throttled[i]), float(failed[i]), split_by)
            if (demands[i].id, minute) not in reasons:
                top_units = {n: g.top_units for n, g in growing.items()}
                worded = partition if partition is not None and by_partition >= 0.5 else keyspace
                words = _words(
                    bulk, scopes[key], units, key[2], model, asked, lane_list, top_units,
                    by_partition=worded is partition,
                )  # fmt: skip
                reasons[(demands[i].id, minute)] = words
                if worded is not None:
                    first_causes[(demands[i].id, minute)] = worded.cause
        # Heat, as a run's recorder counts it: each request's key touches once (and its
        # units), and the throttled attempts where they were throttled (`_Heat`).
        lane_executions += new[pattern_of] * recorded
        for number, growth in growing.items():
            i = lane_list[number][0]
            shares = scopes[lane_keys[number]].shares[number]
            units_seen = growth.charge((offered - throttled)[i], new[i], shares, recorded[number])
            if units_seen is not None and settings.heat:
                heat.charged[number] = heat.charged[number] + units_seen
        if settings.heat:
            heat.requests += new[pattern_of] * recorded
            heat.served += (offered - throttled)[pattern_of] * recorded
            for number, key in enumerate(lane_keys):
                if key in refusing and recorded[number]:
                    heat.refused[number] += lane_drawn[number] * refusal[key]
        if second % 60 == 59 or second == duration - 1:
            for stats in model.snapshot():
                scope_minutes.setdefault((stats.table, stats.index), []).append(
                    ScopeMinute(
                        minute,
                        stats.read_capacity,
                        stats.write_capacity,
                        stats.consumed_read_units,
                        stats.consumed_write_units,
                        len(stats.partitions),
                        stats.burst_read_units,
                        stats.burst_write_units,
                        stats.on_demand,
                    )
                )
        if progress is not None and second % 600 == 599:
            progress(second + 1)
    for number in range(len(lane_list)):
        flush_top(number)
    if settings.heat:
        heat.flush(range(len(lane_list)))
    patterns = {
        demand.id: [
            Minute(m, *(float(per_pattern[f, m, i]) for f in range(5))) for m in range(minutes)
        ]
        for i, demand in enumerate(demands)
    }
    result = SimulationResult(
        design,
        profile,
        settings,
        demands,
        patterns,
        _per_minute(scope_minutes),
        reasons,
        heat_lanes,
        top,
        requests=total_requests,
        retry_wait_s=retry_wait_s,
        final=model.snapshot(),
        grown_units={places[number]: growth.charged for number, growth in growing.items()},
        causes=first_causes,
        throttles={
            demand.id: sorted(causes.by_pattern[i].values(), key=lambda t: -t.attempts)
            for i, demand in enumerate(demands)
        },
        limits=sorted(causes.limits.values(), key=lambda r: -r.refused_units),
        asked_units=dict(causes.asked),
        initial=initial,
        key_profiles=key_profiles,
        heat_resolution_s=resolution,
    )
    result.wall_s = time.perf_counter() - wall
    return result


@dataclass
class _Retried:
    """What one second's throttles bring (`_retries`)."""

    again: np.ndarray
    """``[g, i]``: attempts of pattern ``i`` back within the second (throttled again), of
    first attempts refused (``g`` 0) and of retries refused (1)."""
    again_total: np.ndarray
    """The same per pattern."""
    lands: np.ndarray
    """``[s, k, i]``: attempts number ``k + 1`` of pattern ``i`` arriving ``s + 1`` seconds on."""
    landed: np.ndarray
    """``[s, g, i]``: all attempts arriving ``s + 1`` seconds on, of first attempts refused
    (``g`` 0) and of retries refused (1)."""
    gave_up: np.ndarray
    """Requests per pattern out of attempts within the second, or out of quota."""
    tokens: float
    """The quota left."""
    waited: float = 0.0
    """Seconds the retries made wait before they are sent, in all (`mean_wait_s`)."""


def _retries(
    cohorts: np.ndarray,
    refused: np.ndarray,
    late: np.ndarray,
    tokens: float,
    quota: float,
    retryable: np.ndarray,
    mode: str = "standard",
) -> _Retried:
    """What this second's throttles bring (see `_Retried`).

    ``retryable`` (per pattern, 1 or 0) says whether the SDK retries the pattern's throttles:
    a pattern it does not retry fails each throttled attempt.

    ``cohorts[k]`` are this second's attempts number ``k + 1`` per pattern, of which
    ``refused[k]`` was throttled, in the last ``late[k]`` of the second (the refused share of
    the partitions that refused them); their retries wait as ``mode`` waits
    (`loadgen.simulate.retries.landed`). A success at the first attempt gives a token back,
    a retry that succeeds its 5; a retry takes 5, and none is made on an empty quota (the
    legacy mode has none). Within a second refunds and retries interleave: the cap binds on
    what is left.
    """
    attempts, n_patterns = cohorts.shape
    admitted = cohorts * (1.0 - refused)
    tokens += float(admitted[0].sum()) * NO_RETRY_INCREMENT + float(admitted[1:].sum()) * RETRY_COST
    seconds = horizon(attempts, mode)
    if not refused.any():  # nothing throttled: no retry, none out of attempts, none asked
        return _Retried(
            np.zeros((2, n_patterns)),
            np.zeros(n_patterns),
            np.zeros((seconds - 1, attempts, n_patterns)),
            np.zeros((seconds - 1, 2, n_patterns)),
            np.zeros(n_patterns),
            min(quota, tokens),
        )
    again = np.zeros((2, n_patterns))
    # By pattern first while adding (each pattern's block contiguous); as `_Retried` has them
    # after.
    lands = np.zeros((n_patterns, seconds, attempts))
    by_group = np.zeros((n_patterns, 2, seconds))
    asked = waited = 0.0
    wanting_all = cohorts[: attempts - 1] * refused[: attempts - 1]
    out_of_attempts = np.zeros(n_patterns)
    unretried = wanting_all.sum(axis=0) * (1.0 - retryable)
    wanting_all = wanting_all * retryable
    # Python floats in the loop: it runs every second, numpy scalars cost more here.
    late_rows = late.tolist()
    for k, row in enumerate(wanting_all.tolist()):
        group = min(k, 1)
        for i, wanting in enumerate(row):
            if not wanting:
                continue
            waits = landed(late_rows[k][i], k, attempts, mode)
            again[group, i] += wanting * waits.again
            lands[i] += wanting * waits.lands
            by_group[i, group] += wanting * waits.by_second
            out_of_attempts[i] += wanting * (1.0 - waits.later)
            asked += wanting * waits.retries
            waited += wanting * waits.waited
    allowed = min(asked, max(0.0, tokens) / RETRY_COST)
    tokens = min(quota, tokens - allowed * RETRY_COST)
    later = lands.transpose(1, 2, 0)[1:]
    later_by_group = by_group.transpose(2, 1, 0)[1:]
    if allowed == asked:  # the quota allowed every retry
        return _Retried(
            again,
            again[0] + again[1],
            later,
            later_by_group,
            out_of_attempts + unretried,
            tokens,
            waited,
        )
    kept = allowed / asked
    return _Retried(
        again * kept,
        (again[0] + again[1]) * kept,
        later * kept,
        later_by_group * kept,
        out_of_attempts * kept + wanting_all.sum(axis=0) * (1.0 - kept) + unretried,
        tokens,
        waited * kept,
    )


def _any_refused(refused: np.ndarray, chances: np.ndarray) -> float:
    """The share of executions refused on one table or index whose lanes touch its
    partitions with the chances ``chances`` (a row a lane, each adding up to 1), drawn
    apart, where each partition (least refused first) refused the share ``refused`` of what
    it was asked, at the end of the second: the mean, over executions, of the most refused
    of their partitions."""
    # Per lane, its chance of a partition refusing less than each in turn; an execution's
    # most refused partition refuses at least as much where not every lane's does less.
    below = np.cumsum(chances, axis=1) - chances
    at_least = 1.0 - np.prod(below, axis=0)
    return float(np.diff(refused, prepend=0.0) @ at_least)


class _Draws:
    """Each second's counts as traffic meets them: seeded draws, or their expectations.

    Arrivals come at the profile's rate (the open model's constant arrivals), each choosing
    its pattern by the design's mix; each execution of a pattern touches a partition with the
    partition's share of the lane's keys (multinomial counts: a key at its ceiling is over
    it in about half its seconds, as in real traffic). Drawn at ``settings.scale`` times the
    counts, then scaled back.
    """

    def __init__(self, settings: Settings) -> None:
        self.random = np.random.default_rng(settings.seed) if settings.fluctuate else None
        self.scale = settings.scale
        self._known: dict[int, tuple[np.ndarray, float, np.ndarray]] = {}

    def _whole(self, counts: np.ndarray) -> np.ndarray:
        """``counts`` at the scale, rounded to whole numbers at random (the mean kept)."""
        assert self.random is not None
        scaled = np.asarray(counts, dtype=np.float64) * self.scale
        whole = np.floor(scaled)
        return whole + (self.random.random(whole.shape) < scaled - whole)

    def _one(self, count: float) -> float:
        """`_whole` of one count, without arrays: the same products and the same one draw."""
        assert self.random is not None
        scaled = float(count) * self.scale
        whole = float(math.floor(scaled))
        return whole + (1.0 if self.random.random() < scaled - whole else 0.0)

    def arrivals(self, rate: float, mix: np.ndarray) -> np.ndarray:
        """New executions of each pattern this second."""
        if self.random is None:
            return rate * mix
        total = self._one(rate)
        return self.random.multinomial(int(total), mix) / self.scale

    def executions(self, offered: np.ndarray) -> np.ndarray:
        """Executions per pattern the key draws are made for (whole, at the scale)."""
        return offered if self.random is None else self._whole(offered)

    def execution(self, offered: float) -> float:
        """`executions` of one count."""
        return float(offered) if self.random is None else self._one(offered)

    def touches(self, executions: float, shares: np.ndarray) -> np.ndarray:
        """Touches on each range of ``shares`` (touches per execution) by ``executions`` (as
        `executions` gives them), drawn at random: how many of the executions chose each."""
        if self.random is None:
            return executions * shares
        times, chances = self._chances(shares)
        drawn = self.random.multinomial(int(executions * times), chances)[:-1].astype(np.float64)
        if self.scale != 1.0:  # (at AWS scale the counts are the touches)
            drawn /= self.scale
        return drawn

    def _chances(self, shares: np.ndarray) -> tuple[float, np.ndarray]:
        """Draws per execution and each range's chance of one (the last: none of them), of
        ``shares``; worked out once per array (a lane's shares hold until its partitions or
        keys change, and are never changed in place)."""
        known = self._known.get(id(shares))
        if known is not None and known[0] is shares:
            return known[1], known[2]
        # An execution touching `times` keys (a batch, an item and its profile): as many
        # draws. Multinomial: the touches add up to what the executions ask, as they do.
        times = max(1.0, math.ceil(float(shares.sum()) - 1e-9))
        chances = np.append(shares / times, 0.0)
        chances[-1] = max(0.0, 1.0 - float(chances[:-1].sum()))
        chances = chances / chances.sum()
        if len(self._known) >= 1024:
            self._known.clear()
        self._known[id(shares)] = (shares, times, chances)  # kept: its id is not reused
        return times, chances


def _per_minute(
    snapshots: dict[tuple[str, str | None], list[ScopeMinute]],
) -> dict[tuple[str, str | None], list[ScopeMinute]]:
    """Cumulative consumption turned into each minute's own."""
    out = {}
    for scope, rows in snapshots.items():
        previous_read = previous_write = 0.0
        own = []
        for row in rows:
            own.append(
                replace(
                    row,
                    consumed_read=row.consumed_read - previous_read,
                    consumed_write=row.consumed_write - previous_write,
                )
            )
            previous_read, previous_write = row.consumed_read, row.consumed_write
        out[scope] = own
    return out


def _sampler(
    scope: _Scope, offered: np.ndarray, lane_list: Sequence[tuple[int, Lane]]
) -> Callable[[int, int], list[int]]:
    def sample(start: int, end: int) -> list[int]:
        points: list[tuple[float, int]] = []
        for number, lane, profile in scope.lanes:
            points += lane.sample(profile, start, end, float(offered[lane_list[number][0]]))
        if not points:
            return []
        points.sort(key=lambda point: point[1])
        masses = np.cumsum([mass for mass, _ in points])
        total = float(masses[-1])
        quantiles = [(q + 0.5) / 32 * total for q in range(32)]
        at = np.searchsorted(masses, quantiles, side="left")
        return [points[min(int(j), len(points) - 1)][1] for j in at]

    return sample


def _words(
    result: BulkAdmission,
    scope: _Scope,
    units: np.ndarray,
    kind: str,
    model: PartitionModel,
    offered: np.ndarray,
    lane_list: Sequence[tuple[int, Lane]],
    top_units: Mapping[int, np.ndarray | None],
    *,
    by_partition: bool,
) -> str:
    """Why a keyspace refused demand this second, in words: a partition's ceiling
    (``by_partition``) or the keyspace's own limit (``top_units``: a growing lane's units per
    touch of its top keys, `Lane.growth`)."""
    where = scope.table if scope.index is None else f"{scope.table}/{scope.index}"
    ceiling = key_ceiling(kind, eventual=reads_eventually(lane for _, lane, _ in scope.lanes))
    if by_partition:
        keys: dict[str, float] = {}
        for number, lane, profile in scope.lanes:
            executions = float(offered[lane_list[number][0]])
            grown = top_units.get(number)
            for place, (text, weight) in enumerate(profile.top[:3]):
                units_per_touch = lane.units_at(text) if grown is None else float(grown[place])
                keys[text] = keys.get(text, 0.0) + executions * weight * units_per_touch
        hottest = max(keys.items(), key=lambda item: item[1], default=None)
        if hottest is not None and hottest[1] >= ceiling:
            return (
                f"one key, {hottest[0]}, asks {hottest[1]:,.0f} {kind} units/s of {where}; "
                f"its partition serves {ceiling:,.0f} and no split helps one key"
            )
        part = int(np.argmax(units))
        return (
            f"a partition of {where} is asked {units[part]:,.0f} {kind} units/s and serves "
            f"{ceiling:,.0f}: it splits for heat after minutes at its ceiling"
        )
    stats = next(s for s in model.snapshot() if s.table == scope.table and s.index == scope.index)
    capacity = stats.read_capacity if kind == "read" else stats.write_capacity
    throttle = result.keyspace_throttle or result.throttle
    reason = throttle.reason if throttle is not None else ""
    asked = float(units.sum())
    if reason.endswith("AccountLimitExceeded"):
        return f"{where} is asked {asked:,.0f} {kind} units/s over its quota of {capacity:,.0f}"
    if reason.endswith("MaxOnDemandThroughputExceeded"):
        return f"{where} is asked {asked:,.0f} {kind} units/s over its maximum of {capacity:,.0f}"
    if stats.on_demand:
        return (
            f"on-demand {where} serves {capacity:,.0f} {kind} units/s (its warm throughput or "
            f"twice its peak of 30 minutes ago) and is asked {asked:,.0f}: traffic more than "
            "doubled within 30 minutes"
        )
    return (
        f"provisioned {where} has {capacity:,.0f} {kind} units/s and no burst left, and is "
        f"asked {asked:,.0f}"
    )


def _heat_matrix(
    lanes: dict[tuple[str, str | None, str], np.ndarray],
    settings: Settings,
    resolution: int,
    columns: int,
) -> dict[str, Any]:
    """The results file's heat matrix (`loadgen.heat.heatmap.HeatMap.matrix`'s shape)."""
    return {
        "buckets": settings.buckets,
        "hash": "md5, first 8 bytes (loadgen.model.hashing.bucket_of)",
        "keys_hashed": False,
        "resolution_s": resolution,
        "start": int(settings.start),
        "columns": columns,
        "lanes": [
            {
                "table": table,
                "index": index,
                "access": kind,
                "requests": _rounded(grid[0]),
                "units": _rounded(grid[1]),
                "throttled_attempts": _rounded(grid[2]),
                "unattributed": {"requests": 0, "units": 0, "throttled_attempts": 0},
            }
            for (table, index, kind), grid in lanes.items()
        ],
    }


def _rounded(grid: np.ndarray) -> list[list[float]]:
    rows: list[list[float]] = np.round(grid, 3).tolist()
    return rows
