"""The partition model on a fake clock: ceilings, burst, adaptive capacity, splits, throttles."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pytest

from loadgen.errors import ConfigError
from loadgen.model.capacity import Charge, cost_of
from loadgen.model.hashing import bucket_of
from loadgen.model.partitions import MAX_PARTITIONS, PartitionModel, Throttle
from loadgen.model.schema import TableSchema


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def schema(
    name: str = "t",
    *,
    rcu: float = 0,
    wcu: float = 0,
    gsi: dict[str, float] | None = None,
    **extra: object,
) -> TableSchema:
    """A table keyed on pk; provisioned if given capacity, else on-demand. GSI "g" on "g"."""
    body: dict[str, object] = {
        "TableName": name,
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        **extra,
    }
    if rcu or wcu:
        body["ProvisionedThroughput"] = {"ReadCapacityUnits": rcu, "WriteCapacityUnits": wcu}
    else:
        body["BillingMode"] = "PAY_PER_REQUEST"
    if gsi is not None:
        index: dict[str, object] = {
            "IndexName": "g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
        }
        if gsi:
            index["ProvisionedThroughput"] = {
                "ReadCapacityUnits": gsi["rcu"],
                "WriteCapacityUnits": gsi["wcu"],
            }
        body["GlobalSecondaryIndexes"] = [index]
    return TableSchema.from_create_table(body)


def model_with(*tables: TableSchema, **kw: object) -> tuple[PartitionModel, Clock]:
    clock = Clock()
    # These tests hold the per-second rules from an empty bank; a new table's starting burst
    # and a GSI's write buffer are held by tests of their own (tests/oracle).
    kw.setdefault("new_table_burst_s", 0.0)
    model = PartitionModel(clock=clock, **kw)  # type: ignore[arg-type]
    for table in tables:
        model.create_table(table)
    return model, clock


def write(key: str, units: float = 1.0, table: str = "t") -> list[Charge]:
    return [Charge(table, None, "write", units, key)]


def read(
    key: str | None, units: float = 1.0, table: str = "t", index: str | None = None
) -> list[Charge]:
    return [Charge(table, index, "read", units, key)]


def run(
    model: PartitionModel,
    clock: Clock,
    seconds: int,
    requests: Callable[[int], Sequence[list[Charge]]],
) -> list[int]:
    """Offer ``requests(second)`` spread over each second; admitted count per second.

    Starts at the clock's second if it is whole, else at the next; ends inside the last
    second, so that a check right after sees the same second's buckets.
    """
    admitted = []
    base = math.ceil(clock.now)
    for second in range(seconds):
        batch = requests(second)
        ok = 0
        for i, charges in enumerate(batch):
            clock.now = base + second + i / len(batch)
            ok += model.admit(charges) is None
        admitted.append(ok)
    return admitted


def keys_in(partition: int, partitions: int, count: int, prefix: str = "k") -> list[str]:
    """``count`` keys that hash into the ``partition``-th of ``partitions`` equal ranges."""
    keys: list[str] = []
    n = 0
    while len(keys) < count:
        if bucket_of(f"{prefix}{n}", partitions) == partition:
            keys.append(f"{prefix}{n}")
        n += 1
    return keys


def units(model: PartitionModel, index: str | None = None) -> tuple[float, float]:
    (stats,) = [s for s in model.snapshot() if s.index == index]
    return stats.consumed_read_units, stats.consumed_write_units


# Partition ceilings ---------------------------------------------------------------------------


def test_a_hot_key_is_held_to_its_partition_ceiling_while_cold_keys_pass() -> None:
    model, clock = model_with(schema(rcu=3000, wcu=9000))
    hot = "hot"
    cold = [k for k in keys_in(0, 10, 200) if bucket_of(k, 10) != bucket_of(hot, 10)][:100]
    assert len(model.snapshot()[0].partitions) == 10
    throttles: list[Throttle] = []

    def traffic(second: int) -> list[list[Charge]]:
        return [write(hot)] * 2000 + [write(key) for key in cold]

    admitted = run(model, clock, 5, traffic)
    assert all(1000 + 100 <= n <= 1001 + 100 for n in admitted)  # hot capped, cold all in
    throttle = model.admit(write(hot))
    assert throttle is not None
    throttles.append(throttle)
    assert throttle.reason == "TableWriteKeyRangeThroughputExceeded"
    assert throttle.exception == "ProvisionedThroughputExceededException"
    assert throttle.cause == "partition"
    assert throttle.resource == "arn:aws:dynamodb:us-east-1:000000000000:table/t"
    assert model.admit(write(cold[0])) is None


def test_write_sharding_the_hot_key_passes_the_same_load() -> None:
    model, clock = model_with(schema(rcu=3000, wcu=9000))
    shards = [f"hot#{i}" for i in range(20)]
    admitted = run(model, clock, 5, lambda s: [write(shards[i % 20]) for i in range(2000)])
    assert admitted == [2000] * 5


def test_scale_multiplies_every_ceiling() -> None:
    model, clock = model_with(schema(rcu=3000, wcu=3000), scale=0.01)
    assert run(model, clock, 4, lambda s: [write("hot")] * 20) == [10] * 4  # 1,000 x 0.01
    assert len(model.snapshot()[0].partitions) == 4  # ceil(3000/3000 + 3000/1000), as at scale 1


def test_reads_and_writes_have_independent_ceilings_unless_additive() -> None:
    def mixed(second: int) -> list[list[Charge]]:
        return [write("hot", 10)] * 100 + [read("hot", 30)] * 100  # 1,000 WCU + 3,000 RCU

    independent, clock = model_with(schema(rcu=30_000, wcu=10_000))
    assert run(independent, clock, 3, mixed) == [200] * 3
    additive, clock = model_with(schema(rcu=30_000, wcu=10_000), additive=True)
    assert all(95 <= n <= 105 for n in run(additive, clock, 3, mixed)[1:])  # half of each


def test_a_large_item_overdraws_then_waits_out_its_debt() -> None:
    model, clock = model_with(schema(rcu=3000, wcu=3000), scale=0.01)  # ceiling 10 WCU/s
    assert model.admit(write("k", 400)) is None  # as a 400 KB item at scale 1
    assert run(model, clock, 50, lambda s: [write("k")]) == [0] * 40 + [1] * 10


@pytest.mark.parametrize("scale", [1.0, 0.1, 0.01])
@pytest.mark.parametrize("units", [1.0, 2.5, 6.0])
def test_a_scaled_partition_second_carries_its_ceiling_whatever_the_request_size(
    units: float, scale: float
) -> None:
    # A hot key offered 1.5x its partition's ceiling, in requests of ``units``: over a run
    # every scale carries its ceiling, to within one request's overdraw. At 0.01 a second
    # holds 10 units, less than two 6-unit requests: the debt a request leaves is carried
    # into the next second, so no scale rounds a second up or down to whole requests.
    seconds = 40
    model, clock = model_with(schema(), scale=scale)
    ceiling = 1000 * scale
    offered = [write("hot", units)] * math.ceil(1.5 * ceiling / units)
    admitted = sum(run(model, clock, seconds, lambda s: offered))
    carried = admitted * units / (ceiling * seconds)
    assert 1.0 <= carried <= 1.0 + units / (ceiling * seconds), carried


# Burst and adaptive capacity ------------------------------------------------------------------


def test_burst_banks_300_seconds_of_unused_capacity_within_the_partition_ceiling() -> None:
    # https://repost.aws/knowledge-center/dynamodb-spiky-workloads-short-intervals
    for idle in (300, 600):  # the bank holds 300 s, however long the table idles
        model, clock = model_with(schema(rcu=100, wcu=100))
        clock.now = idle
        assert model.snapshot()[0].burst_read_units == 30_000
        admitted = run(model, clock, 20, lambda s: [read(f"k{i}", 100) for i in range(10)] * 5)
        assert max(admitted) * 100 <= 3000  # never above one partition's ceiling
        extra = sum(admitted) * 100 - 100 * 20
        assert 30_000 <= extra <= 30_100
        assert admitted[-1] == 1  # bank spent: back to 100 units a second


def test_adaptive_capacity_gives_a_hot_partition_the_unused_table_capacity() -> None:
    model, clock = model_with(schema(rcu=6000, wcu=600))
    assert len(model.snapshot()[0].partitions) == 3  # ceil(6000/3000 + 600/1000)
    hot = keys_in(0, 3, 50)
    admitted = run(model, clock, 5, lambda s: [write(k) for k in hot] * 16)  # 800/s
    assert admitted == [600] * 5  # far above a 200 share, held to the table's 600
    throttle = model.admit(write(hot[0]))
    assert throttle is not None
    assert throttle.reason == "TableWriteProvisionedThroughputExceeded"


# Global secondary indexes ---------------------------------------------------------------------

GSI_TABLE = schema("orders", rcu=1000, wcu=1000, gsi={"rcu": 100, "wcu": 5})


def put(key: str, g: str | None) -> list[Charge]:
    item = {"pk": {"S": key}} | ({"g": {"S": g}} if g else {})
    request = {"TableName": "orders", "Item": item}
    return list(cost_of("PutItem", request, tables={"orders": GSI_TABLE}).charges)


def test_a_gsi_short_of_write_capacity_buffers_then_pushes_back_on_every_table_write() -> None:
    model, clock = model_with(GSI_TABLE, gsi_write_buffer_units=100)
    # 5 units/s of index capacity and 100 units of buffer: 105 writes the first second.
    admitted = run(model, clock, 4, lambda s: [put(f"k{i}", f"g{i}") for i in range(200)])
    assert admitted == [105, 5, 5, 5]
    (_, index) = model.snapshot()
    assert index.consumed_write_units == 120  # taken as written, as CloudWatch shows it
    assert index.buffered_write_units == pytest.approx(100)
    assert index.buffer_write_units == 100
    # A full buffer refuses every write to the table, in the index's words, whether or not
    # the item goes to the index, until it drains.
    for charges in (put("k", "g"), put("k", None)):
        throttle = model.admit(charges)
        assert throttle is not None
        assert (throttle.table, throttle.index, throttle.kind) == ("orders", "g", "write")
        assert throttle.reason == "IndexWriteProvisionedThroughputExceeded"
        assert throttle.cause == "buffer"
        assert throttle.message.startswith("The level of configured provisioned throughput for one")
        assert throttle.resource.endswith(":table/orders/index/g")
    assert units(model) == (0, 120)  # refused writes took nothing from the table
    # Each second the index applies 5 units: the table is open again, and its index writes
    # find the room three seconds of draining made (15 units), no more.
    clock.now += 1
    assert run(model, clock, 1, lambda s: [put(f"n{i}", None) for i in range(50)]) == [50]
    assert run(model, clock, 1, lambda s: [put(f"g{i}", f"g{i}") for i in range(50)]) == [15]


def test_a_gsi_s_buffer_drains_through_the_seconds_after_its_writes_stop() -> None:
    model, clock = model_with(GSI_TABLE, gsi_write_buffer_units=1000)
    # 30 index writes a second against 5 units/s: 25 more in the buffer each second.
    assert run(model, clock, 3, lambda s: [put(f"k{s}-{i}", "g") for i in range(30)]) == [30] * 3

    def buffered() -> float:
        return model.snapshot()[1].buffered_write_units

    assert buffered() == pytest.approx(75)
    # A quarter into the next second, which took no write, the index has applied a quarter
    # of its 5 units, not the whole second's allowance its bucket takes at the second's start.
    clock.now = 3.25
    assert buffered() == pytest.approx(75 - 0.25 * 5)
    clock.now = 10.0
    assert buffered() == pytest.approx(75 - 7 * 5)
    clock.now = 30.0
    assert buffered() == 0


def test_a_gsi_without_a_buffer_refuses_as_its_capacity_runs_out() -> None:
    model, clock = model_with(GSI_TABLE, gsi_write_buffer_units=0)
    admitted = run(model, clock, 4, lambda s: [put(f"k{i}", f"g{i}") for i in range(100)])
    assert admitted == [5] * 4
    assert model.admit(put("k", None)) is None  # not in the index: no back-pressure


def test_a_gsi_short_of_read_capacity_leaves_the_table_alone() -> None:
    model, _ = model_with(GSI_TABLE)
    assert model.admit(read("x", 100, "orders", "g")) is None
    throttle = model.admit(read("x", 1, "orders", "g"))
    assert throttle is not None
    assert throttle.reason == "IndexReadProvisionedThroughputExceeded"
    assert model.admit(read("x", 1, "orders")) is None


# On-demand ------------------------------------------------------------------------------------


def spread_writes(total: int, units: float = 1.0) -> list[list[Charge]]:
    return [write(f"k{i}", units) for i in range(total)]


def test_on_demand_starts_warm_and_absorbs_twice_its_previous_peak() -> None:
    # warm 40 write units/s at this scale; a second's use is the previous peak 10 s later
    model, clock = model_with(schema(), scale=0.01, growth_window_s=10)
    admitted = run(model, clock, 14, lambda s: spread_writes(60))
    assert admitted == [40] * 10 + [60] * 4  # second 0's 40 is 10 s old: 80 from then on
    assert run(model, clock, 1, lambda s: spread_writes(150)) == [80]  # 2 x 40: 60 is recent
    run(model, clock, 10, lambda s: spread_writes(60))
    assert run(model, clock, 1, lambda s: spread_writes(170)) == [160]  # 2 x that 80, held 10 s
    throttle = model.admit(write("k0"))
    assert throttle is not None
    assert throttle.reason == "TableWriteKeyRangeThroughputExceeded"
    assert throttle.exception == "ThrottlingException"
    assert "throttlingReasons" in throttle.error_body()
    # The same wire reason as a hot key's; the model knows the table's capacity refused.
    assert throttle.cause == "capacity"


def test_a_hot_key_of_an_on_demand_table_is_its_partition_not_its_capacity() -> None:
    model, clock = model_with(schema(), scale=0.01)  # 40 write units/s, 10 a partition
    admitted = run(model, clock, 2, lambda s: [write("hot")] * 30)
    assert admitted == [10, 10]
    throttle = model.admit(write("hot"))
    assert throttle is not None
    assert (throttle.reason, throttle.cause) == (
        "TableWriteKeyRangeThroughputExceeded",
        "partition",
    )


def test_on_demand_growth_stops_at_the_table_quota() -> None:
    # quota 40 units/s; a window of 0 lets the peak double every second
    model, clock = model_with(schema(), scale=0.001, growth_window_s=0)
    admitted = run(model, clock, 8, lambda s: spread_writes(100))
    assert admitted[-1] == 40
    throttle = model.admit(write("k0"))
    assert throttle is not None
    assert throttle.reason == "TableWriteAccountLimitExceeded"
    assert throttle.cause == "account"


def test_on_demand_maximum_throughput_caps_table_and_index() -> None:
    table = schema(
        OnDemandThroughput={"MaxReadRequestUnits": 2000},
        GlobalSecondaryIndexes=[
            {
                "IndexName": "g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
                "OnDemandThroughput": {"MaxWriteRequestUnits": 10},
            }
        ],
    )
    model, _ = model_with(table, gsi_write_buffer_units=0)
    assert model.admit(read(None, 2000)) is None
    throttle = model.admit(read(None, 1))
    assert throttle is not None
    assert throttle.reason == "TableReadMaxOnDemandThroughputExceeded"
    assert throttle.cause == "maximum"
    index_write = [Charge("t", None, "write", 1, "a"), Charge("t", "g", "write", 10, "x")]
    assert model.admit(index_write) is None
    throttle = model.admit(index_write)
    assert throttle is not None
    assert (throttle.reason, throttle.exception) == (
        "IndexWriteMaxOnDemandThroughputExceeded",
        "ThrottlingException",
    )


# Splits ---------------------------------------------------------------------------------------


def test_sustained_heat_on_many_keys_splits_the_partition() -> None:
    model, clock = model_with(schema(rcu=3000, wcu=3000), scale=0.01, split_after=30)
    hot = keys_in(0, 4, 100)
    admitted = run(model, clock, 45, lambda s: [write(hot[(s * 15 + i) % 100]) for i in range(15)])
    assert admitted[:30] == [10] * 30  # one partition: 1,000 x 0.01
    assert admitted[-5:] == [15] * 5  # split in two, each with its own ceiling
    (stats,) = model.snapshot()
    assert (len(stats.partitions), stats.splits) == (5, 1)


def test_one_hot_key_never_splits() -> None:
    model, clock = model_with(schema(rcu=3000, wcu=3000), scale=0.01, split_after=30)
    admitted = run(model, clock, 100, lambda s: [write("hot")] * 15)
    assert admitted == [10] * 100
    (stats,) = model.snapshot()
    assert (len(stats.partitions), stats.splits) == (4, 0)


def test_raising_capacity_doubles_partitions_that_never_merge() -> None:
    table = schema(rcu=100, wcu=1000)
    model, _ = model_with(table)
    assert len(model.snapshot()[0].partitions) == 2  # ceil(100/3000 + 1000/1000)
    raised = table.with_update(
        {"ProvisionedThroughput": {"ReadCapacityUnits": 100, "WriteCapacityUnits": 2500}}
    )
    model.update_table(raised)
    (stats,) = model.snapshot()
    assert (len(stats.partitions), stats.write_capacity) == (4, 2500)  # 3 needed: doubled
    model.update_table(table)
    assert len(model.snapshot()[0].partitions) == 4


# Settling, bookkeeping, validation ------------------------------------------------------------


def test_settle_replaces_an_estimate_with_the_actual_cost_into_debt() -> None:
    model, clock = model_with(schema(rcu=10, wcu=10))
    estimate = read("k", 0.5)
    assert model.admit(estimate) is None
    model.settle(estimate, read("k", 64))  # the Query read 512 KB after all
    assert units(model) == (64, 0)
    assert model.admit(read("k", 0.5)) is not None  # in debt
    assert run(model, clock, 7, lambda s: [read("k", 1)]) == [0] * 6 + [1]


def test_throttles_are_counted_per_table_and_partition() -> None:
    model, _ = model_with(schema(rcu=1, wcu=1))
    model.admit(write("k"))
    model.admit(write("k"))
    (stats,) = model.snapshot()
    assert (stats.throttled_writes, stats.consumed_write_units) == (1, 1)
    assert sum(p.throttled_writes for p in stats.partitions) == 1


def test_delete_and_unknown_tables() -> None:
    model, _ = model_with(schema())
    model.delete_table("t")
    with pytest.raises(ConfigError, match="'t'"):
        model.admit(write("k"))
    with pytest.raises(ConfigError, match="'t'"):
        model.delete_table("t")


@pytest.mark.parametrize(
    "kwargs",
    [{"scale": 0}, {"scale": -1.0}, {"scale": float("nan")}, {"split_after": 0}, {"region": ""}],
)
def test_bad_parameters_raise_config_error_naming_the_value(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match=repr(next(iter(kwargs.values())))):
        PartitionModel(**kwargs)  # type: ignore[arg-type]


def test_region_and_account_shape_the_arn() -> None:
    model, _ = model_with(GSI_TABLE, region="eu-west-2", account="123456789012")
    model.admit(read("x", 100, "orders", "g"))
    throttle = model.admit(read("x", 1, "orders", "g"))
    assert throttle is not None
    assert throttle.resource == "arn:aws:dynamodb:eu-west-2:123456789012:table/orders/index/g"
    assert throttle.error_body() == {
        "__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
        "message": throttle.message,
        "ThrottlingReasons": [
            {"reason": "IndexReadProvisionedThroughputExceeded", "resource": throttle.resource}
        ],
    }


def test_same_seed_same_splits() -> None:
    def splits(seed: int) -> list[int]:
        model, clock = model_with(schema(rcu=3000, wcu=3000), scale=0.01, split_after=5, seed=seed)
        hot = keys_in(0, 4, 100)
        run(model, clock, 30, lambda s: [write(hot[(s * 15 + i) % 100]) for i in range(15)])
        return [p.start for p in model.snapshot()[0].partitions]

    assert splits(1) == splits(1)


def test_partitions_stay_bounded_whatever_the_capacity() -> None:
    # 10^12 units once made about 10^9 partition bounds and took all of the machine's memory.
    model = PartitionModel(clock=Clock())
    model.create_table(schema(rcu=10**12, wcu=10**12, gsi={"rcu": 10**12, "wcu": 10**12}))
    model.update_table(schema(rcu=10**15, wcu=10**15, gsi={"rcu": 10**15, "wcu": 10**15}))
    counts = [len(stats.partitions) for stats in model.snapshot()]
    assert counts == [MAX_PARTITIONS, MAX_PARTITIONS]
    assert model.admit([Charge("t", None, "write", 1.0, "k")]) is None
