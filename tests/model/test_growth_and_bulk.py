"""On-demand growth over time, warm throughput, auto scaling, and bulk admission checked
against per-request admission on the same clock."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable

import pytest

from loadgen.errors import ConfigError
from loadgen.model.hashing import partition_hash
from loadgen.model.partitions import AutoScaling, PartitionModel
from tests.model.test_partitions import Clock, model_with, run, schema, spread_writes, write


def bulk_run(
    model: PartitionModel, clock: Clock, seconds: int, keys: Callable[[int], list[str]]
) -> list[float]:
    """The same offer as `run`, one unit per key touch, admitted in bulk per second."""
    admitted = []
    base = math.ceil(clock.now)
    for second in range(seconds):
        clock.now = base + second
        starts = model.partition_starts("t")
        units = [0.0] * len(starts)
        for key in keys(second):
            units[bisect_right(starts, partition_hash(key)) - 1] += 1.0
        result = model.admit_bulk("t", None, "write", units, units)
        admitted.append(sum(result.admitted))
    return admitted


def per_request(keys: Callable[[int], list[str]]) -> Callable[[int], list[list]]:  # type: ignore[type-arg]
    return lambda s: [write(key) for key in keys(s)]


@pytest.mark.parametrize(
    ("table", "keys", "seconds"),
    [
        # One hot key over its partition's 1,000 write units/s, on a big provisioned table.
        (schema(rcu=100, wcu=4000), lambda s: ["hot"] * 1500, 5),
        # A provisioned table of 100 WCU: idle-ish for a while, then over: burst, then not.
        (schema(rcu=100, wcu=100), lambda s: [f"k{i}" for i in range(50 if s < 60 else 400)], 90),
        # An on-demand table growing: warm, then twice a peak 10 s old.
        (schema(), lambda s: [f"k{i}" for i in range(60)], 25),
    ],
    ids=["hot-key", "burst", "on-demand-growth"],
)
def test_bulk_admission_equals_per_request_admission(
    table: object, keys: Callable[[int], list[str]], seconds: int
) -> None:
    scale = 0.01 if table.on_demand else 1.0  # type: ignore[attr-defined]
    one, one_clock = model_with(table, scale=scale, growth_window_s=10)  # type: ignore[arg-type]
    bulk, bulk_clock = model_with(table, scale=scale, growth_window_s=10)  # type: ignore[arg-type]
    expected = run(one, one_clock, seconds, per_request(keys))
    got = bulk_run(bulk, bulk_clock, seconds, keys)
    assert got == pytest.approx([float(n) for n in expected])
    assert len(set(expected)) > 1 or expected[0] < len(keys(0))  # the case throttles


def test_a_binding_table_is_shared_in_proportion_up_to_each_partition_ceiling() -> None:
    model, clock = model_with(schema(rcu=300, wcu=1900))  # 2 partitions, 1,900 units/s
    clock.now = 400  # 300 s of burst banked: spend it first
    assert len(model.partition_starts("t")) == 2
    model.admit_bulk("t", None, "write", [1e9, 1e9], [1.0, 1.0])
    clock.now = 401
    result = model.admit_bulk("t", None, "write", [1800.0, 600.0], [1800.0, 600.0])
    # In proportion the first would get 1,425, over its ceiling: 1,000, the other the rest.
    assert result.admitted == pytest.approx((1000.0, 600.0))
    assert result.partition_limited
    assert result.throttle is not None
    assert result.throttle.reason == "TableWriteKeyRangeThroughputExceeded"
    fresh, _ = model_with(schema(rcu=300, wcu=1900))  # no burst banked yet
    fresh.partition_starts("t")
    result = fresh.admit_bulk("t", None, "write", [1200.0, 1200.0], [1200.0, 1200.0])
    assert result.admitted == pytest.approx((950.0, 950.0))  # the table refused first
    assert not result.partition_limited
    assert result.throttle is not None
    assert result.throttle.reason == "TableWriteProvisionedThroughputExceeded"
    assert result.by_ceiling == (0.0, 0.0)
    assert result.keyspace_throttle is result.throttle


def test_bulk_admission_says_what_each_limit_refused() -> None:
    # 1,500 units/s provisioned over two partitions, no burst banked; 2,000 and 900 asked.
    model, _ = model_with(schema(rcu=300, wcu=1500))
    assert len(model.partition_starts("t")) == 2
    result = model.admit_bulk("t", None, "write", [2000.0, 900.0], [2000.0, 900.0])
    # The table shares its 1,500 in proportion (5/9 of each demand) up to each partition's
    # ceiling: the first's 5/9 is 1,111, of which its own ceiling refuses 111.
    assert result.admitted == pytest.approx((1000.0, 500.0))
    assert result.by_ceiling == pytest.approx((1000.0 / 9, 0.0))
    assert result.throttle is not None and result.throttle.cause == "partition"
    assert result.keyspace_throttle is not None
    assert result.keyspace_throttle.cause == "provisioned"
    assert result.keyspace_throttle.reason == "TableWriteProvisionedThroughputExceeded"
    (stats,) = model.snapshot()
    assert (stats.read_cause, stats.write_cause) == ("provisioned", "provisioned")


def test_a_single_hot_key_never_splits_under_bulk_demand() -> None:
    model, clock = model_with(schema(rcu=3000, wcu=4000), split_after=5)
    before = len(model.partition_starts("t"))
    key = partition_hash("hot")
    for second in range(1, 30):
        clock.now = second
        starts = model.partition_starts("t")
        units = [0.0] * len(starts)
        units[bisect_right(starts, key) - 1] = 1500.0
        model.admit_bulk("t", None, "write", units, units, sampler=lambda lo, hi: [key] * 32)
    assert len(model.snapshot()[0].partitions) == before


def test_a_hot_partition_of_many_keys_splits_where_the_sampler_says() -> None:
    model, clock = model_with(schema(rcu=300, wcu=900), split_after=5)  # one partition
    hashes = sorted(partition_hash(f"k{i}") for i in range(32))
    for second in range(1, 10):
        clock.now = second
        starts = model.partition_starts("t")
        model.admit_bulk(
            "t", None, "write", [1200.0] * len(starts), [1200.0] * len(starts),
            sampler=lambda lo, hi: [h for h in hashes if lo <= h < hi],
        )  # fmt: skip
    starts = model.partition_starts("t")
    assert len(starts) == 2
    assert starts[1] == hashes[16]


def test_on_demand_traffic_that_doubles_within_30_minutes_throttles_until_the_peak_ages() -> None:
    model, clock = model_with(schema(), scale=0.01)  # warm 40 units/s; the default window
    assert run(model, clock, 2, lambda s: spread_writes(60)) == [40, 40]
    clock.now += 1797
    assert run(model, clock, 1, lambda s: spread_writes(60)) == [40]  # 29:59 later
    clock.now += 1
    assert run(model, clock, 1, lambda s: spread_writes(100)) == [80]  # the first 40 is old


def test_warm_throughput_is_served_at_once_and_only_grows() -> None:
    warm = schema(WarmThroughput={"WriteUnitsPerSecond": 20000})
    assert warm.warm_write_units == 20000
    model, clock = model_with(warm, scale=0.01)
    assert run(model, clock, 1, lambda s: spread_writes(250)) == [200]
    lowered = warm.with_update({"WarmThroughput": {"WriteUnitsPerSecond": 5000}})
    assert lowered.warm_write_units == 20000
    raised = warm.with_update({"WarmThroughput": {"WriteUnitsPerSecond": 30000}})
    assert raised.warm_write_units == 30000
    with pytest.raises(ConfigError, match="WarmThroughput units must be positive"):
        schema(WarmThroughput={"WriteUnitsPerSecond": 0})


def test_a_table_switched_to_on_demand_starts_from_half_its_provisioned_capacity() -> None:
    table = schema(rcu=100, wcu=30000)
    model, clock = model_with(table, scale=0.01)
    clock.now = 1
    model.update_table(table.with_update({"BillingMode": "PAY_PER_REQUEST"}))
    # Previous peak 15,000: twice that is served at once.
    assert model.snapshot()[0].write_capacity == pytest.approx(300.0)


def test_auto_scaling_raises_capacity_after_two_minutes_over_its_target() -> None:
    model, clock = model_with(schema(rcu=100, wcu=1000))
    model.auto_scale("t", None, "write", AutoScaling(1000, 40000))
    capacities = []
    for second in range(1, 400):
        clock.now = second
        starts = model.partition_starts("t")
        demand = [1500.0 / len(starts)] * len(starts)
        model.admit_bulk("t", None, "write", demand, [1.0] * len(starts))
        capacities.append(model.snapshot()[0].write_capacity)
    assert capacities[100] == 1000  # under two minutes over the target: unchanged
    raised = next(i for i, c in enumerate(capacities) if c > 1000)
    assert 110 <= raised <= 130
    assert capacities[raised] == pytest.approx(1000 / 0.7, rel=0.02)  # use over 70%
    assert capacities[-1] > capacities[raised]  # more demand than that: it rises again
    with pytest.raises(ConfigError, match="minimum <= maximum"):
        AutoScaling(100, 10)
