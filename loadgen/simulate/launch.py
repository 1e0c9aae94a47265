"""``loadgen check``: a design's launch, asked of the partition model limit by limit.

Nothing is worked out beside the model. The file's launch rates (each pattern's declared
rate) are held for `LAUNCH_S` through the simulation (`loadgen.simulate.engine`, seed 1, the
SDK's standard retries): the same run ``loadgen simulate DESIGN_FILE`` makes by default, so
the two give one answer. From it:

- per pattern, the units one operation costs on the table and on each index: its demand's
  lanes (`loadgen.simulate.demand`: `loadgen.model.capacity.cost_of` on the requests the
  pattern compiles to, with the items they find);
- per key value, the units per second it takes at launch: each lane's key profile times the
  pattern's rate, reads and writes apart;
- per limit of each table and index (a partition's ceiling; its on-demand capacity, warm
  throughput included, its provisioned capacity, burst included, the per-table quota or its
  ``OnDemandThroughput`` maximum, whichever the model holds it to), what is asked of it at
  launch and what it serves (the model's figures), and whether it throttles a pattern over
  `FAILING_SHARE` of its attempts at launch, as the model refused them and said why
  (`loadgen.simulate.causes`). A GSI's limit that throttles a table's writes is back-pressure.

A pattern fails when over `FAILING_SHARE` of its attempts at launch are throttled (the
per-pattern verdict's rule for a run), and names the limit that throttled most of them.

    report = check(load_design("examples/designs/counter.yaml", "single"))
    [(p.id, p.verdict, p.cause) for p in report.patterns]
    # [('increment', 'FAIL', 'partition'), ('read', 'PASS', None)]
"""

from __future__ import annotations

import functools
import math
import multiprocessing
import sys
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from loadgen.design.check import (
    FAIL,
    PASS,
    CheckReport,
    Contention,
    KeyLoad,
    LimitCheck,
    PartitionCount,
    PatternCheck,
    PatternThrottle,
    checked_span,
    scope_name,
    stored_bytes,
)
from loadgen.design.loader import Design
from loadgen.model.partitions import (
    ThroughputStats,
    falls_behind,
    key_ceiling,
    partitions_for,
)
from loadgen.model.sizing import most_partitions, shard_plan
from loadgen.model.throttling import throttle
from loadgen.refusals import CONTENTION_RATE, STANDARD_ATTEMPTS
from loadgen.simulate.causes import LimitRecord
from loadgen.simulate.demand import Lane, reads_eventually
from loadgen.simulate.engine import FAILING_SHARE, Settings, SimulationResult, simulate
from loadgen.simulate.profile import Profile, constant

__all__ = [
    "LAUNCH_S",
    "LaunchRequests",
    "check",
    "check_each",
    "launch_profile",
    "launch_requests",
    "report_of",
]

LAUNCH_S = 600
"""Seconds of launch at the file's rates that ``check`` asks of the model and ``simulate``
runs by default: ten minutes, so that a hot partition of several keys has split (after 8
minutes at its ceiling, `SPLIT_AFTER_S`), an item that grows with its updates has grown, and
the SDK's retry quota has run dry where throttles spend it. On-demand growth (twice a peak 30
minutes old) is later: a launch is judged on the capacity a table has when it opens."""
_KINDS = ("read", "write")


def launch_profile(design: Design, seconds: int = LAUNCH_S) -> Profile:
    """The file's launch rates held for ``seconds``: every pattern at its declared rate."""
    total = math.fsum(design.rates[p.id] for p in design.patterns)
    profile = constant(total, seconds)
    span = f"{seconds // 60}m" if seconds % 60 == 0 else f"{seconds}s"
    return Profile(profile.rates, (f"the file's launch rates ({total:,.4g}/s) for {span}",))


@dataclass(frozen=True)
class LaunchRequests:
    """What a run of a design's launch asks of its target and of its caller, per operation,
    as the model throttles and retries it (`launch_requests`)."""

    per_operation: float
    """Requests sent per operation, the SDK's retries of throttled attempts included
    (`SimulationResult.requests_per_operation`)."""
    retry_wait_s: float
    """Seconds an operation waits for its retries to be sent, on average: what holds a
    run's in-flight slot beyond the target's answers
    (`SimulationResult.retry_wait_per_operation`)."""


def launch_requests(
    design: Design,
    seconds: float,
    scale: float,
    *,
    seed: int = 1,
    distribution: str = "zipf:0.99",
    attempts: int = STANDARD_ATTEMPTS,
    retry_mode: str = "standard",
) -> LaunchRequests:
    """What a run of the file's launch rates for ``seconds`` at ``scale`` sends and waits per
    operation, retried in ``retry_mode`` up to ``attempts`` (the standard mode's one client's
    retry quota counted in the run's own requests). 1.0 request and no wait where nothing
    throttles and each operation is one request. Each second's expected counts, not draws:
    at a small scale a pattern of a few operations a second draws none in most seconds."""
    seconds = max(1, min(LAUNCH_S, math.ceil(seconds)))
    settings = Settings(
        seed=seed, scale=scale, distribution=distribution, fluctuate=False, heat=False,
        attempts=attempts, retry_mode=retry_mode,
    )  # fmt: skip
    result = simulate(design, launch_profile(design, seconds), settings)
    return LaunchRequests(result.requests_per_operation(), result.retry_wait_per_operation())


AT_SCALE_S = 300
"""Seconds of a run at its scale the model draws for a pattern's expected throttled share
(`throttled_at_scale`): a run's 30 s is one draw of a few throttles."""


def throttled_at_scale(
    design: Design,
    scale: float,
    *,
    seed: int = 1,
    distribution: str = "zipf:0.99",
    attempts: int = STANDARD_ATTEMPTS,
    retry_mode: str = "standard",
) -> dict[str, float]:
    """Per pattern, the share of its attempts the model throttles in a run of the file's
    launch rates at ``scale``, each second's arrivals drawn as a run's come (`AT_SCALE_S` of
    them), its clients retrying in ``retry_mode`` up to ``attempts``: at a small scale a
    partition's second holds few arrivals, which vary about their mean ``1/sqrt(scale)``
    times as much as AWS's, and the legacy mode's retries come back within the second that
    refused them."""
    settings = Settings(
        seed=seed, scale=scale, distribution=distribution, heat=False,
        attempts=attempts, retry_mode=retry_mode,
    )  # fmt: skip
    result = simulate(design, launch_profile(design, AT_SCALE_S), settings)
    return {pattern.id: pattern.throttled_share for pattern in report_of(result).patterns}


def check(design: Design, *, seed: int = 1, distribution: str = "zipf:0.99") -> CheckReport:
    """The design's launch through the model (see the module docstring); ``distribution``:
    the keys of generators that name none (a run's ``--distribution``)."""
    settings = Settings(seed=seed, distribution=distribution, heat=False)
    return report_of(simulate(design, launch_profile(design), settings))


def check_each(designs: Sequence[Design], *, seed: int = 1) -> Iterator[CheckReport]:
    """`check` of each design, in order: side by side in processes of their own where there
    are several designs and cores (each launch is its own simulation, one core's work)."""
    from loadgen.heat.cpu import usable_cores

    workers = min(len(designs), usable_cores())
    if workers < 2 or not _can_fork():
        for design in designs:
            yield check(design, seed=seed)
        return
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        yield from pool.map(functools.partial(check, seed=seed), designs)


def _can_fork() -> bool:
    """Whether a forked child may run a simulation: a POSIX system, and not a process whose
    standard library gevent has patched (a Locust process), where a fork inherits its hub."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return False
    monkey = sys.modules.get("gevent.monkey")
    return monkey is None or not monkey.is_module_patched("os")


def _reads_eventually(result: SimulationResult) -> dict[str, bool]:
    """By keyspace (`scope_name`), whether its reads are all eventually consistent
    (`reads_eventually`): every GSI's are; a table's and its local indexes' together."""
    lanes: dict[str, list[Lane]] = {}
    for demand in result.demands:
        for lane in demand.lanes:
            keyspace = _keyspace(result.design, lane.table, lane.index)
            lanes.setdefault(scope_name(lane.table, keyspace), []).append(lane)
    return {scope: reads_eventually(of) for scope, of in lanes.items()}


def _keyspace(design: Design, table: str, index: str | None) -> str | None:
    """The model's keyspace of a lane's scope: a local index lives on its table's."""
    schema = design.schemas[table]
    if index is not None and any(i.name == index for i in schema.local_indexes):
        return None
    return index


def report_of(result: SimulationResult) -> CheckReport:
    """The check's figures from a simulation of the file's launch rates."""
    design = result.design
    patterns: list[PatternCheck] = []
    keys: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
    asked: dict[tuple[str, str | None, str], float] = {}
    moving: set[tuple[str, str]] = set()  # keys of a time generator: placed anew each bucket
    for demand in result.demands:
        scopes: dict[str, list[float]] = {}
        grows_to = None
        for place, lane in enumerate(demand.lanes):
            profile = result.key_profiles[(demand.id, place)]
            side = _KINDS.index(lane.kind)
            scope = scope_name(lane.table, lane.index)
            per_operation = lane.units_per_execution(profile)
            scopes.setdefault(scope, [0.0, 0.0])[side] += per_operation
            index = _keyspace(design, lane.table, lane.index)
            slot = (lane.table, index, lane.kind)
            asked[slot] = asked.get(slot, 0.0) + demand.rate * per_operation
            if lane.growth:
                grows_to = max(grows_to or 0.0, lane.growth[-1][1])
            moves = lane.template is not None and bool(
                set(lane.template.names) & set(demand.time_names)
            )
            for text, touches in profile.top:
                if moves:
                    moving.add((scope_name(lane.table, index), text))
                load = keys.setdefault((scope_name(lane.table, index), text), {})
                by_kind = load.setdefault(lane.kind, {})
                units_per_s = demand.rate * touches * lane.units_at(text)
                by_kind[demand.id] = by_kind.get(demand.id, 0.0) + units_per_s
        patterns.append(
            PatternCheck(
                demand.id,
                demand.operation,
                demand.table,
                demand.index,
                demand.rate,
                {scope: [round(r, 6), round(w, 6)] for scope, (r, w) in scopes.items()},
                grows_to=grows_to,
            )
        )
    eventual = _reads_eventually(result)
    loads = [
        KeyLoad(
            scope,
            key,
            sum(by_kind.get("read", {}).values()),
            sum(by_kind.get("write", {}).values()),
            tuple(sorted(by_kind.get("read", {}))),
            tuple(sorted(by_kind.get("write", {}))),
            read_ceiling=key_ceiling("read", eventual=eventual.get(scope, False)),
        )
        for (scope, key), by_kind in keys.items()
    ]
    behind = _behind(result)
    _judge(result, patterns, behind)
    limits = _limits(result, patterns, loads, asked, behind, moving, eventual)
    failed_by = {p for limit in limits if limit.verdict == FAIL for p in limit.patterns}
    for pattern in patterns:
        if pattern.id in failed_by:
            pattern.verdict = FAIL  # a limit refuses it at the launch's rates
        if pattern.verdict == FAIL:
            pattern.reason = _reason(pattern, limits, result.profile.duration_s)
    stored = stored_bytes(design, seed=result.settings.seed)
    contention = _contention(result)
    return CheckReport(
        design,
        patterns,
        loads,
        limits,
        _partitions(result, asked, stored),
        stored,
        seconds=result.profile.duration_s,
        retry_mode=result.settings.retry_mode,
        notes=[found.words() for found in contention],
        contention=contention,
    )


def _contention(result: SimulationResult) -> list[Contention]:
    """A transaction pattern that puts `CONTENTION_RATE` or more transactions a second on one
    item (`PatternDemand.hottest_item`: an item, not a partition key's other items, nor an
    index entry, which no transaction holds): DynamoDB cancels concurrent transactions on an
    item, which no local engine does."""
    found = []
    for demand in result.demands:
        if not demand.operation.startswith("Transact"):
            continue
        hottest: tuple[float, str, str, str] | None = None
        for place, lane in enumerate(demand.lanes):
            if lane.index is not None:
                continue  # an index entry is not an item a transaction holds
            item = demand.hottest_item(lane, result.key_profiles[(demand.id, place)])
            if item is not None and (hottest is None or item[2] > hottest[0]):
                hottest = (item[2], lane.table, item[0], item[1])
        if hottest is not None and demand.rate * hottest[0] >= CONTENTION_RATE:
            touches, table, key, sort = hottest
            found.append(Contention(demand.id, table, key, sort, demand.rate * touches))
    return found


def _behind(
    result: SimulationResult,
) -> dict[tuple[str, str | None], tuple[float, ThroughputStats]]:
    """The GSIs whose write buffer fills within a launch's hour at the rate it filled over
    the launch (`falls_behind`): seconds until full, and the index as the launch ended."""
    behind: dict[tuple[str, str | None], tuple[float, ThroughputStats]] = {}
    for stats in result.final:
        fills = stats.buffer_full_in_s
        if stats.index is not None and fills is not None and falls_behind(fills):
            # From the launch's start, as the check's words say it.
            behind[(stats.table, stats.index)] = (result.profile.duration_s + fills, stats)
    return behind


def _judge(
    result: SimulationResult,
    patterns: list[PatternCheck],
    behind: dict[tuple[str, str | None], tuple[float, ThroughputStats]],
) -> None:
    """Each pattern's throttled share at launch, its throttles by limit, and its verdict: a
    pattern that writes a table whose GSI falls behind fails too, as the index's buffer will
    refuse every write to the table once full."""
    for pattern in patterns:
        rows = result.patterns[pattern.id]
        offered = math.fsum(row.offered for row in rows)
        throttled = math.fsum(row.throttled for row in rows)
        new = math.fsum(row.new for row in rows)
        failed = math.fsum(row.failed for row in rows)
        pattern.throttled_share = throttled / offered if offered else 0.0
        pattern.throttles = tuple(
            PatternThrottle(
                t.throttle.table,
                t.throttle.index,
                t.throttle.kind,
                t.throttle.cause,
                t.throttle.reason,
                t.attempts / offered if offered else 0.0,
            )
            for t in result.throttles.get(pattern.id, ())
        )
        over = pattern.throttled_share > FAILING_SHARE or (new and failed / new > FAILING_SHARE)
        pattern.verdict = FAIL if over else PASS
        writes = _writes(result, pattern.id)
        for (table, index), (_, stats) in behind.items():
            if table not in writes or pattern.verdict == FAIL:
                continue
            pattern.verdict = FAIL
            said = PatternThrottle(table, index, "write", "buffer", stats.buffer_reason, 0.0)
            pattern.throttles = (said, *pattern.throttles)


def _writes(result: SimulationResult, pattern: str) -> set[str]:
    """The tables a pattern writes."""
    demand = next(d for d in result.demands if d.id == pattern)
    return {lane.table for lane in demand.lanes if lane.kind == "write" and lane.index is None}


def _stats(stats: Iterable[ThroughputStats]) -> dict[tuple[str, str | None], ThroughputStats]:
    return {(s.table, s.index): s for s in stats}


def _limits(
    result: SimulationResult,
    patterns: list[PatternCheck],
    loads: list[KeyLoad],
    asked: dict[tuple[str, str | None, str], float],
    behind: dict[tuple[str, str | None], tuple[float, ThroughputStats]],
    moving: set[tuple[str, str]],
    eventual: dict[str, bool],
) -> list[LimitCheck]:
    """A partition's ceiling and the keyspace's own limit, for every table's and index's
    reads and writes asked at launch; and any other limit the model refused by. A hot key's
    row carries the shards that split it (``moving``: keys placed anew each time bucket)."""
    initial = _stats(result.initial)
    final = _stats(result.final)
    records: dict[tuple[str, str | None, str, str], LimitRecord] = {
        (r.throttle.table, r.throttle.index, r.throttle.kind, r.throttle.cause): r
        for r in result.limits
    }
    wanted: list[tuple[str, str | None, str, str]] = []
    for (table, index, kind), units in asked.items():
        if units <= 0:
            continue
        stats = initial[(table, index)]
        own = stats.read_cause if kind == "read" else stats.write_cause
        wanted += [(table, index, kind, "partition"), (table, index, kind, own)]
    wanted += [slot for slot in records if slot not in wanted]
    wanted += [
        (t, i, "write", "buffer") for t, i in behind if (t, i, "write", "buffer") not in wanted
    ]
    limits = []
    for table, index, kind, cause in wanted:
        record = records.get((table, index, kind, cause))
        stats = initial[(table, index)]
        scope = scope_name(table, index)
        hottest = max(
            (load for load in loads if load.scope == scope),
            key=lambda load: load.read if kind == "read" else load.write,
            default=None,
        )
        key_units = 0.0 if hottest is None else (hottest.read if kind == "read" else hottest.write)
        # A partition's; any of its replicas serves eventual reads.
        ceiling = key_ceiling(kind, eventual=eventual.get(scope, False))
        if not key_units:
            hottest = None  # no key repeats: each request's is new (ids, times)
        fills_in = None
        if cause == "buffer":
            # What the index applies of what is asked: a partition's ceiling (a hot index
            # key) or its own capacity, as its buffer's reason says.
            end = final[(table, index)]
            # Seconds into the launch it fills; 0 where it filled and refused within it.
            filling = (table, index) in behind and record is None
            fills_in = behind[(table, index)][0] if filling else 0.0
            if "KeyRange" in (record.throttle.reason if record else end.buffer_reason):
                serves = key_ceiling(kind)
                demand = max(key_units, record.asked if record is not None else 0.0)
            else:
                serves = end.write_capacity
                demand = asked.get((table, index, kind), 0.0)
            steady = 0.0  # judged by when the buffer fills, not by what is asked
        elif cause == "partition":
            serves = ceiling
            # With no key known, the keyspace's demand spread evenly over its partitions.
            spread = asked.get((table, index, kind), 0.0) / max(1, len(stats.partitions))
            steady = key_units or spread
            demand = max(steady, record.asked if record is not None else 0.0)
        else:
            if (stats.read_cause if kind == "read" else stats.write_cause) != cause:
                stats = final[(table, index)]  # a limit it grew into during the launch
            serves = stats.read_capacity if kind == "read" else stats.write_capacity
            demand = steady = asked.get((table, index, kind), 0.0)
        total = result.asked_units.get((table, index, kind), 0.0)
        refused = record.refused_units / total if record is not None and total else 0.0
        shares = {
            pattern.id: sum(
                t.share
                for t in pattern.throttles
                if (t.table, t.index, t.kind, t.cause) == (table, index, kind, cause)
            )
            for pattern in patterns
        }
        # A GSI's buffer fails the patterns it will refuse once full (`_judge`).
        late = [
            p.id
            for p in patterns
            if cause == "buffer"
            and any((t.table, t.index, t.cause) == (table, index, cause) for t in p.throttles)
        ]
        failing = [p.id for p in patterns if shares[p.id] > FAILING_SHARE or p.id in late]
        # A limit a launch asks more of than it serves refuses, whether or not a limit
        # upstream refused the patterns first: asked at the launch's full rates, it is what
        # it will be asked once the others are lifted. A GSI's writes beyond a limit go to
        # its buffer first: its own row says when that refuses.
        buffered = index is not None and kind == "write"
        over = (steady > serves and not buffered) or refused > FAILING_SHARE
        if over and not failing:
            failing = [p.id for p in patterns if shares[p.id] > 0] or _loading(
                patterns, scope, kind, hottest if cause == "partition" else None
            )
        pushed = [
            p.id
            for p in patterns
            if p.id in failing and index is not None and p.index != index and kind == "write"
        ]
        plan: tuple[int | None, int | None] = (None, None)
        moves = hottest is not None and (scope, hottest.key) in moving
        if hottest is not None and cause in ("partition", "buffer") and failing:
            plan = shard_plan(
                key_units,
                kind,
                len(stats.partitions),
                key=hottest.key,
                moves=moves,
                serves=ceiling,
                others=max(0.0, asked.get((table, index, kind), 0.0) - key_units),
                most=max(
                    len(stats.partitions),
                    most_partitions(stats.read_capacity, stats.write_capacity, kind),
                ),
            )
        limits.append(
            LimitCheck(
                table,
                index,
                kind,
                cause,
                demand,
                serves,
                refused,
                final[(table, index)].buffer_reason
                if cause == "buffer" and record is None
                else _reason_of(result, table, index, kind, cause, record),
                FAIL if failing else PASS,
                None if hottest is None or cause not in ("partition", "buffer") else hottest.key,
                key_units if cause in ("partition", "buffer") else 0.0,
                tuple(failing),
                tuple(pushed),
                fills_in,
                *plan,
                moves,
            )
        )
    # Table by table as the file lists them, each index after its table; writes first.
    order = {
        (schema.name, index): n
        for n, (schema, index) in enumerate(
            (schema, index)
            for schema in result.design.schemas.values()
            for index in (None, *(i.name for i in schema.global_indexes))
        )
    }
    return sorted(
        limits,
        key=lambda limit: (
            order.get((limit.table, limit.index), len(order)),
            limit.kind != "write",
            limit.cause != "partition",
        ),
    )


def _loading(
    patterns: list[PatternCheck], scope: str, kind: str, hottest: KeyLoad | None
) -> list[str]:
    """The patterns that put ``kind`` units on ``scope`` at launch (on its hottest key, for a
    partition's ceiling): those a limit of it refuses once the limits before it are lifted."""
    if hottest is not None:
        return list(hottest.read_patterns if kind == "read" else hottest.write_patterns)
    side = _KINDS.index(kind)
    return [p.id for p in patterns if p.scopes.get(scope, [0.0, 0.0])[side] > 0]


def _reason_of(
    result: SimulationResult,
    table: str,
    index: str | None,
    kind: str,
    cause: str,
    record: LimitRecord | None,
) -> str:
    """DynamoDB's ThrottlingReason a throttle by this limit answers with."""
    if record is not None:
        return record.throttle.reason
    schema = result.design.schemas[table]
    limit = {
        "partition": "KeyRangeThroughputExceeded",
        "capacity": "KeyRangeThroughputExceeded",
        "provisioned": "ProvisionedThroughputExceeded",
        "account": "AccountLimitExceeded",
        "maximum": "MaxOnDemandThroughputExceeded",
        "buffer": "ProvisionedThroughputExceeded"
        if not schema.on_demand
        else "KeyRangeThroughputExceeded",
    }[cause]
    said = throttle(
        table=table,
        index=index,
        kind=kind,
        on_demand=schema.on_demand,
        limit=limit,  # type: ignore[arg-type]
        resource="",
    )
    return said.reason


def _reason(pattern: PatternCheck, limits: list[LimitCheck], seconds: int = LAUNCH_S) -> str:
    """The Expected column of a failing pattern: the limit that throttled most of its
    attempts, and the side; then the others that throttled over 1% of them. A pattern that
    fails on a limit that binds after the ``seconds`` checked (a GSI's buffer full later in
    the launch's hour) says that its share is of those seconds."""
    said: list[str] = []
    for throttled in pattern.throttles:
        if said and throttled.share <= FAILING_SHARE:
            break
        limit = next(
            (
                limit
                for limit in limits
                if (limit.table, limit.index, limit.kind, limit.cause)
                == (throttled.table, throttled.index, throttled.kind, throttled.cause)
            ),
            None,
        )
        if limit is None:
            continue
        words = limit.words()
        if pattern.id in limit.back_pressure:
            words = f"back-pressure from index {limit.scope}: {words}"
        said.append(words)
    share = f"{pattern.throttled_share * 100:.0f}% of attempts throttled"
    if round(pattern.throttled_share * 100) == 0:
        share += f" in the {checked_span(seconds)} checked"
    reason = f"{'; also '.join(said)} ({share})" if said else share
    # Limits the launch asks too much of that refused none of its attempts: those before
    # them refused first. Each refuses once those are lifted.
    named = {(t.table, t.index, t.kind, t.cause) for t in pattern.throttles}
    later = [
        limit.words()
        for limit in limits
        if limit.verdict == FAIL
        and pattern.id in limit.patterns
        and (limit.table, limit.index, limit.kind, limit.cause) not in named
    ]
    if later and said:
        reason += "; once those are lifted, " + "; ".join(later)
    elif later:
        reason = f"{'; '.join(later)}, once the limits before it are lifted ({share})"
    return reason


def _partitions(
    result: SimulationResult,
    asked: dict[tuple[str, str | None, str], float],
    stored: dict[str, int],
) -> dict[str, PartitionCount]:
    """Per table and GSI: partitions by the launch demand and the starting data (the
    model's formula), and the model's own as the launch began and ended."""
    final = _stats(result.final)
    counts = {}
    for (table, index), stats in _stats(result.initial).items():
        read = asked.get((table, index, "read"), 0.0)
        write = asked.get((table, index, "write"), 0.0)
        size = float(stored.get(table, 0)) if index is None else 0.0
        end = final[(table, index)]
        busiest: list[float | None] = [None, None]
        if len(end.partitions) == len(stats.partitions):  # none split: each ran the launch
            seconds = max(1.0, float(result.profile.duration_s))
            busiest = [
                max(p.consumed_read_units for p in end.partitions) / seconds,
                max(p.consumed_write_units for p in end.partitions) / seconds,
            ]
        counts[scope_name(table, index)] = PartitionCount(
            partitions_for(read, write),
            partitions_for(0.0, 0.0, size),
            len(stats.partitions),
            len(end.partitions),
            read,
            write,
            *busiest,
        )
    return counts
