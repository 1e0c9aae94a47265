"""Heat accounting: buckets, consumed units (reported or computed), hot keys, merging, timeline."""

from __future__ import annotations

import json
from typing import Any

import pytest

from loadgen.errors import ConfigError
from loadgen.heat.heatmap import FIELDS, HeatConfig, HeatMap, key_hasher
from loadgen.heat.recorder import LatencyHistogram, RunRecorder
from loadgen.model.hashing import bucket_of
from loadgen.model.schema import TableSchema

T0 = 1_800_000_000.0
SCHEMA = TableSchema.from_create_table(
    {
        "TableName": "t",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "g", "AttributeType": "S"},
        ],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": "gsi",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        "BillingMode": "PAY_PER_REQUEST",
    }
)


def context(
    keys: list[str | None],
    *,
    table: str = "t",
    index: str | None = None,
    consumed: Any = None,
    throttled: int = 0,
    index_keys: dict[str, list[str]] | None = None,
    request: dict[str, Any] | None = None,
    error_code: str | None = None,
) -> dict[str, Any]:
    """A request-event context as `DynamoClient` builds it."""
    return {
        "table": table,
        "index": index,
        "partition_key": keys[0],
        "sort_key": None,
        "partition_keys": keys,
        "index_keys": index_keys or {},
        "consumed_capacity": consumed,
        "attempts": 1 + throttled,
        "retries": throttled,
        "throttled_attempts": throttled,
        "unprocessed": 0,
        "error_code": error_code,
        "request": request or {},
    }


def cell(heat: HeatMap, lane: tuple[str, str | None, str], key: str | None) -> list[float]:
    """[requests, units, throttled attempts] of the bucket holding ``key`` in ``lane``."""
    counts = heat.lanes[lane].counts()
    bucket = heat.config.buckets if key is None else bucket_of(key, heat.config.buckets)
    return counts[FIELDS * bucket : FIELDS * bucket + FIELDS]


def lane_sum(heat: HeatMap, lane: tuple[str, str | None, str]) -> list[float]:
    counts = heat.lanes[lane].counts()
    return [sum(counts[field::FIELDS]) for field in range(FIELDS)]


def test_reported_units_go_to_the_key_bucket() -> None:
    heat = HeatMap(HeatConfig(buckets=64))
    reported = {"TableName": "t", "CapacityUnits": 0.5}
    heat.record("GetItem", context(["k1"], consumed=reported), {}, T0)
    heat.record("GetItem", context(["k1"], consumed=reported, throttled=2), {}, T0)
    assert cell(heat, ("t", None, "read"), "k1") == [2.0, 1.0, 2.0]
    assert lane_sum(heat, ("t", None, "read")) == [2.0, 1.0, 2.0]
    assert ("t", None, "write") not in heat.lanes


def test_reported_units_of_a_batch_are_spread_over_its_keys() -> None:
    heat = HeatMap(HeatConfig(buckets=1024))
    keys = ["a", "b", "c", "d"]
    reported = [{"TableName": "t", "CapacityUnits": 2.0}]
    heat.record("BatchGetItem", context(keys, consumed=reported), {}, T0)
    for key in keys:
        assert cell(heat, ("t", None, "read"), key)[:2] == [1.0, 0.5]
    assert lane_sum(heat, ("t", None, "read"))[:2] == [4.0, 2.0]


def test_index_breakdown_goes_to_each_index() -> None:
    heat = HeatMap(HeatConfig(buckets=16))
    reported = {
        "TableName": "t",
        "CapacityUnits": 3.0,
        "Table": {"CapacityUnits": 1.0},
        "GlobalSecondaryIndexes": {"gsi": {"CapacityUnits": 2.0}},
    }
    ctx = context(["pk1"], consumed=reported, index_keys={"gsi": ["STATUS#A"]})
    heat.record("UpdateItem", ctx, {}, T0)
    assert cell(heat, ("t", None, "write"), "pk1") == [1.0, 1.0, 0.0]
    assert cell(heat, ("t", "gsi", "write"), "STATUS#A") == [1.0, 2.0, 0.0]


def test_total_only_goes_to_the_table_and_a_query_on_an_index_to_the_index() -> None:
    heat = HeatMap(HeatConfig(buckets=16))
    ctx = context(
        ["pk1"], consumed={"TableName": "t", "CapacityUnits": 3.0}, index_keys={"gsi": ["g"]}
    )
    heat.record("PutItem", ctx, {}, T0)
    assert cell(heat, ("t", None, "write"), "pk1") == [1.0, 3.0, 0.0]
    assert cell(heat, ("t", "gsi", "write"), "g") == [1.0, 0.0, 0.0]
    query = context(["g"], index="gsi", consumed={"TableName": "t", "CapacityUnits": 0.5})
    heat.record("Query", query, {}, T0)
    assert cell(heat, ("t", "gsi", "read"), "g") == [1.0, 0.5, 0.0]


def test_transaction_split_into_read_and_write_units() -> None:
    heat = HeatMap(HeatConfig(buckets=16))
    reported = [
        {
            "TableName": "t",
            "CapacityUnits": 6.0,
            "ReadCapacityUnits": 2.0,
            "WriteCapacityUnits": 4.0,
        }
    ]
    heat.record("TransactWriteItems", context(["a", "b"], consumed=reported), {}, T0)
    assert lane_sum(heat, ("t", None, "write")) == [2.0, 4.0, 0.0]
    # The read units of a write: counted as units of the read lane, not as requests.
    assert lane_sum(heat, ("t", None, "read")) == [0.0, 2.0, 0.0]


def test_keyless_scan_lands_in_the_none_slot() -> None:
    heat = HeatMap(HeatConfig(buckets=8))
    heat.record("Scan", context([None], consumed={"TableName": "t", "CapacityUnits": 4.0}), {}, T0)
    assert cell(heat, ("t", None, "read"), None) == [1.0, 4.0, 0.0]
    assert heat.matrix()["lanes"][0]["unattributed"] == {
        "requests": 1,
        "units": 4,
        "throttled_attempts": 0,
    }


BIG = {"pk": {"S": "k"}, "v": {"S": "x" * 5000}}  # 5,006 bytes: 5 write units, 2 read units


@pytest.mark.parametrize(
    ("source", "reported", "units"),
    [
        ("computed", {"TableName": "t", "CapacityUnits": 1.0}, 5.0),  # moto's constant ignored
        ("auto", None, 5.0),  # nothing reported: computed
        ("auto", {"TableName": "t", "CapacityUnits": 7.0}, 7.0),  # reported wins
        ("reported", None, 0.0),  # nothing reported, nothing computed
    ],
)
def test_units_reported_or_computed_from_item_sizes(
    source: str, reported: Any, units: float
) -> None:
    heat = HeatMap(HeatConfig(buckets=32, capacity_source=source), [SCHEMA])
    request = {"TableName": "t", "Item": BIG}
    heat.record("PutItem", context(["k"], consumed=reported, request=request), {}, T0)
    assert cell(heat, ("t", None, "write"), "k") == [1.0, units, 0.0]


def test_computed_read_units_from_returned_items() -> None:
    heat = HeatMap(HeatConfig(buckets=32, capacity_source="computed"), [SCHEMA])
    request = {"TableName": "t", "Key": {"pk": {"S": "k"}}}
    heat.record("GetItem", context(["k"], request=request), {"Item": BIG}, T0)
    heat.record("GetItem", context(["k"], request=request), {}, T0)  # a miss costs the minimum
    # Eventually consistent: 5,006 bytes are 2 x 4 KB at 0.5 each, then 0.5 for the miss.
    assert cell(heat, ("t", None, "read"), "k") == [2.0, 1.5, 0.0]


def test_computed_units_include_index_writes_and_skip_throttled_failures() -> None:
    heat = HeatMap(HeatConfig(buckets=32, capacity_source="computed"), [SCHEMA])
    item = {"pk": {"S": "k"}, "g": {"S": "G"}}
    request = {"TableName": "t", "Item": item}
    ctx = context(["k"], request=request, index_keys={"gsi": ["G"]})
    heat.record("PutItem", ctx, {}, T0)
    assert cell(heat, ("t", None, "write"), "k") == [1.0, 1.0, 0.0]
    assert cell(heat, ("t", "gsi", "write"), "G") == [1.0, 1.0, 0.0]
    failed = context(
        ["k"],
        request=request,
        throttled=10,
        error_code="ProvisionedThroughputExceededException",
    )
    heat.record("PutItem", failed, {}, T0)
    assert cell(heat, ("t", None, "write"), "k") == [2.0, 1.0, 10.0]


def test_computed_without_a_schema_counts_requests_and_warns(caplog) -> None:
    heat = HeatMap(HeatConfig(buckets=32, capacity_source="computed"))
    request = {"TableName": "t", "Item": BIG}
    heat.record("PutItem", context(["k"], request=request), {}, T0)
    heat.record("PutItem", context(["k"], request=request), {}, T0)
    assert cell(heat, ("t", None, "write"), "k") == [2.0, 0.0, 0.0]
    assert sum("no schema for table 't'" in r.getMessage() for r in caplog.records) == 1


def test_top_keys_by_requests_and_by_units_differ() -> None:
    heat = HeatMap(HeatConfig(buckets=16, top_k=2))
    for _ in range(10):
        heat.record("GetItem", context(["small"], consumed={"CapacityUnits": 0.5}), {}, T0)
    heat.record("GetItem", context(["big"], consumed={"CapacityUnits": 40.0}), {}, T0)
    heat.record("GetItem", context(["other"], consumed={"CapacityUnits": 0.5}), {}, T0)
    assert [h.key for h in heat.top_keys("t", None, by="requests")] == ["small", "other"]
    assert [(h.key, h.count) for h in heat.top_keys("t", None, by="units")] == [
        ("big", 40.0),
        ("small", 5.0),
    ]


def test_hashed_keys_are_stable_keyed_and_never_stored_in_plain_text() -> None:
    def heat_with(salt: str) -> HeatMap:
        heat = HeatMap(HeatConfig(buckets=64, hash_keys=salt))
        reported = {"TableName": "t", "CapacityUnits": 1.0}
        heat.record("PutItem", context(["USER#alice@example.com"], consumed=reported), {}, T0)
        return heat

    first, again, other = heat_with("salt-1"), heat_with("salt-1"), heat_with("salt-2")
    (label,) = [h.key for h in first.top_keys("t", None)]
    assert len(label) == 16 and int(label, 16) >= 0
    assert [h.key for h in again.top_keys("t", None)] == [label]
    assert [h.key for h in other.top_keys("t", None)] != [label]
    assert label == key_hasher("salt-1")("USER#alice@example.com")
    # The bucket still comes from the real key, so it lines up with the partition model.
    assert cell(first, ("t", None, "write"), "USER#alice@example.com")[0] == 1.0
    for dump in (first.to_dict(), first.matrix(), first.top_keys_dict()):
        assert "alice" not in json.dumps(dump)


def feed(heat: HeatMap, keys: list[str], first: int = 0) -> None:
    # Request i starts at T0 + i / 10 and was throttled i % 3 times.
    for i, key in enumerate(keys, first):
        reported = {"TableName": "t", "CapacityUnits": 1.0}
        heat.record(
            "UpdateItem", context([key], consumed=reported, throttled=i % 3), {}, T0 + i / 10
        )


def test_worker_reports_merge_to_exactly_what_one_process_counts() -> None:
    keys = [f"k{i % 37}" for i in range(500)]
    alone = HeatMap(HeatConfig(buckets=128))
    feed(alone, keys)
    master = HeatMap(HeatConfig(buckets=128))
    workers = [HeatMap(HeatConfig(buckets=128)) for _ in range(2)]
    # Each worker sends what it gathered since its last report, then forgets it.
    for start in range(0, 500, 50):
        worker = workers[start // 50 % 2]
        feed(worker, keys[start : start + 50], start)
        master.merge_dict(json.loads(json.dumps(worker.to_dict())))
        worker.clear()
    for worker in workers:  # nothing unsent is left, and a second report sends nothing new
        master.merge_dict(worker.to_dict())
    assert master.lanes.keys() == alone.lanes.keys()
    for lane in alone.lanes:
        assert master.lanes[lane].counts() == alone.lanes[lane].counts()
    assert master.matrix() == alone.matrix()
    assert [(h.key, h.count) for h in master.top_keys("t", None)] == [
        (h.key, h.count) for h in alone.top_keys("t", None)
    ]


def test_merge_refuses_a_different_bucket_count() -> None:
    worker = HeatMap(HeatConfig(buckets=64))
    feed(worker, ["a"])
    with pytest.raises(ConfigError, match="64 buckets, the master in 256"):
        HeatMap().merge_dict(worker.to_dict())


def test_timeline_has_one_column_per_second() -> None:
    heat = HeatMap(HeatConfig(buckets=4))
    for second, n in enumerate((3, 0, 2)):
        for _ in range(n):
            heat.record("GetItem", context(["a"], consumed={"CapacityUnits": 0.5}), {}, T0 + second)
    # A request that started in a second already closed counts in the open column.
    heat.record("GetItem", context(["a"], consumed={"CapacityUnits": 0.5}), {}, T0 + 0.5)
    matrix = heat.matrix()
    assert (matrix["start"], matrix["columns"], matrix["resolution_s"]) == (int(T0), 3, 1)
    (lane,) = matrix["lanes"]
    bucket = bucket_of("a", 4)
    assert [row[bucket] for row in lane["requests"]] == [3, 0, 3]
    assert [row[bucket] for row in lane["units"]] == [1.5, 0, 1.5]
    assert all(len(row) == 4 for row in lane["requests"])


def test_long_runs_coarsen_the_timeline_instead_of_growing() -> None:
    heat = HeatMap(HeatConfig(buckets=4, max_columns=8))
    for second in range(40):
        heat.record("GetItem", context(["a"], consumed={"CapacityUnits": 1.0}), {}, T0 + second)
    matrix = heat.matrix()
    assert matrix["resolution_s"] == 8
    assert matrix["columns"] <= 8
    (lane,) = matrix["lanes"]
    assert sum(map(sum, lane["requests"])) == 40
    assert lane_sum(heat, ("t", None, "read"))[0] == 40


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"buckets": 0}, "heat buckets must be 1 to 1024 (got 0)"),
        ({"buckets": 1025}, "heat buckets must be 1 to 1024 (got 1025)"),
        ({"top_k": 0}, "top keys must be 1 to the sketch capacity 1000 (got 0)"),
        ({"capacity_source": "guess"}, "unknown consumed capacity source 'guess'"),
        ({"hash_keys": ""}, "non-empty salt"),
    ],
)
def test_bad_settings_name_the_value(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        HeatConfig(**settings)


def test_latency_histogram_buckets_are_inclusive_upper_bounds() -> None:
    histogram = LatencyHistogram()
    for ms in (0.4, 1.0, 1.2, 9_999.0, 10_000.0, 60_000.0):
        histogram.observe(ms)
    rows = dict(histogram.cumulative())
    assert rows[0.001] == 2  # 0.4 ms and exactly 1 ms
    assert rows[0.0025] == 3
    assert rows[10.0] == 5
    assert rows[float("inf")] == 6
    assert histogram.sum_ms == pytest.approx(80_001.6)


def test_recorder_counts_calls_whose_first_attempt_was_throttled() -> None:
    recorder = RunRecorder(heat=HeatConfig(buckets=8))
    for throttled, first in ((2, True), (1, False), (0, False)):
        ctx = {**context(["k"], throttled=throttled), "first_attempt_throttled": first}
        recorder._on_request(request_type="PutItem", name="p.put", context=ctx, start_time=T0)
    counts = recorder.operations[("PutItem", "p.put")]
    assert (counts.requests, counts.throttled_attempts, counts.throttled_first_attempts) == (
        3,
        3,
        1,
    )
    # A worker's report carries it to the master; a report without it (an earlier worker)
    # counts none.
    master = RunRecorder(heat=HeatConfig(buckets=8))
    master.merge_dict(recorder.to_dict())
    older = recorder.to_dict()
    del older["operations"][0][2]["throttled_first_attempts"]
    master.merge_dict(older)
    assert master.operations[("PutItem", "p.put")].throttled_first_attempts == 1


def test_recorder_is_the_one_listener_feeding_counts_latency_and_heat() -> None:
    recorder = RunRecorder(heat=HeatConfig(buckets=8))
    ctx = context(["k"], consumed={"TableName": "t", "CapacityUnits": 1.0}, throttled=1)
    recorder._on_request(
        request_type="PutItem",
        name="p.put",
        response_time=12.0,
        context=ctx,
        start_time=T0,
        response={},
    )
    counts = recorder.operations[("PutItem", "p.put")]
    assert (counts.requests, counts.throttled_attempts, sum(counts.latency.counts)) == (1, 1, 1)
    assert cell(recorder.heat, ("t", None, "write"), "k") == [1.0, 1.0, 1.0]
    assert recorder.hottest(1)[0]["key"] == "k"
    # What a worker sends is gone from it: a second report adds nothing.
    report: dict[str, Any] = {}
    recorder._on_report_to_master("w1", report)
    master = RunRecorder(heat=HeatConfig(buckets=8))
    master._on_worker_report("w1", report)
    recorder._on_report_to_master("w1", report)
    master._on_worker_report("w1", report)
    assert master.operations[("PutItem", "p.put")].requests == 1
    assert cell(master.heat, ("t", None, "write"), "k") == [1.0, 1.0, 1.0]


@pytest.mark.dynamodb_local
def test_computed_units_agree_with_dynamodb_local(dynamodb_local_endpoint: str) -> None:
    """DynamoDB Local computes ConsumedCapacity by AWS's rules: our computation must match.

    One recorder takes the units DynamoDB Local reports, the other computes them from item
    sizes; per bucket they must be the same.
    """
    from locust.env import Environment

    from loadgen.client import DynamoClient

    table = "heat-units"
    create = {
        "TableName": table,
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST",
    }
    environment = Environment()
    reported = HeatMap(HeatConfig(buckets=64, capacity_source="reported"))
    computed = HeatMap(
        HeatConfig(buckets=64, capacity_source="computed"), [TableSchema.from_create_table(create)]
    )

    def on_request(*, request_type: str, context: dict[str, Any], response: Any, **kw: Any) -> None:
        for heat in (reported, computed):
            heat.record(request_type, context, response, T0)

    environment.events.request.add_listener(on_request)
    client = DynamoClient(environment, endpoint_url=dynamodb_local_endpoint)
    client.botocore.create_table(**create)
    sizes = [10, 1_000, 1_100, 4_000, 4_200, 9_000]
    for n, size in enumerate(sizes):
        pk = f"k{n}"
        item = {"pk": {"S": pk}, "v": {"S": "x" * size}}
        client.call("PutItem", "p", table=table, pk=pk, Item=item)
        client.call("GetItem", "g", table=table, pk=pk, Key={"pk": {"S": pk}})
        client.call("GetItem", "g", table=table, pk=pk, Key={"pk": {"S": pk}}, ConsistentRead=True)
        client.call(
            "Query",
            "q",
            table=table,
            pk=pk,
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": {"S": pk}},
        )
    keys = [f"k{n}" for n in range(len(sizes))]
    client.call(
        "BatchGetItem",
        "b",
        table=table,
        partition_keys=keys,
        RequestItems={table: {"Keys": [{"pk": {"S": k}} for k in keys]}},
    )
    client.call(
        "DeleteItem", "d", table=table, pk="k5", Key={"pk": {"S": "k5"}}, ReturnValues="ALL_OLD"
    )
    # The batch reports one figure for six keys, spread evenly over them, so reads agree
    # per lane; writes agree key by key.
    for lane in ((table, None, "read"), (table, None, "write")):
        assert lane_sum(computed, lane)[1] == pytest.approx(lane_sum(reported, lane)[1])
    writes = (table, None, "write")
    for key in keys:
        assert cell(computed, writes, key) == cell(reported, writes, key)
