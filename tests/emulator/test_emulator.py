"""The emulator through boto3: real botocore parses every answer.

Each test serves a fresh `Emulator` over in-process moto on 127.0.0.1 port 0, with a fake
clock that only moves when the test moves it, at scale 0.01 (a partition serves 30 read and
10 write units a "second"). moto's tables outlive a test, so each test names its own.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from botocore.parsers import JSONParser
from prometheus_client.parser import text_string_to_metric_families

from loadgen.emulator.backends import MotoBackend, UpstreamBackend
from loadgen.emulator.command import main
from loadgen.emulator.embedded import DEFAULT_SCALE, EmbeddedEmulator
from loadgen.emulator.metrics import answered
from loadgen.emulator.server import Emulator, EmulatorServer
from loadgen.model.hashing import bucket_of
from loadgen.model.partitions import PartitionModel
from tests.http_server import QuietHandler, serve

SCALE = 0.01
PROVISIONED = {"ReadCapacityUnits": 12000, "WriteCapacityUnits": 4000}
"""8 partitions (12000/3000 + 4000/1000); scaled: 120 RCU and 40 WCU a second for the table,
30 and 10 for each partition."""
PARTITIONS = 8
ACCOUNT = MotoBackend.account


class FakeClock:
    """Seconds that pass only when a test says so."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def server(clock: FakeClock) -> Iterator[EmulatorServer]:
    model = PartitionModel(scale=SCALE, clock=clock, account=ACCOUNT)
    with EmulatorServer(Emulator(MotoBackend(), model)) as running:
        yield running


def client_for(endpoint_url: str) -> Any:
    # One attempt: a throttle must surface here, not be retried away.
    return boto3.client(
        "dynamodb",
        endpoint_url=endpoint_url,
        region_name="us-east-1",
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )


@pytest.fixture
def ddb(server: EmulatorServer) -> Any:
    return client_for(server.endpoint_url)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def create_table(
    ddb: Any,
    *,
    sort_key: bool = False,
    on_demand: bool = False,
    gsi: dict[str, Any] | None = None,
) -> str:
    name = unique("t")
    keys = [{"AttributeName": "pk", "KeyType": "HASH"}]
    attributes = [{"AttributeName": "pk", "AttributeType": "S"}]
    if sort_key:
        keys.append({"AttributeName": "sk", "KeyType": "RANGE"})
        attributes.append({"AttributeName": "sk", "AttributeType": "S"})
    request: dict[str, Any] = {"TableName": name, "KeySchema": keys}
    if on_demand:
        request["BillingMode"] = "PAY_PER_REQUEST"
    else:
        request["ProvisionedThroughput"] = PROVISIONED
    if gsi is not None:
        attributes.append({"AttributeName": gsi["attribute"], "AttributeType": "S"})
        index: dict[str, Any] = {
            "IndexName": gsi["name"],
            "KeySchema": [{"AttributeName": gsi["attribute"], "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
        }
        if not on_demand:
            index["ProvisionedThroughput"] = gsi["throughput"]
        request["GlobalSecondaryIndexes"] = [index]
    request["AttributeDefinitions"] = attributes
    ddb.create_table(**request)
    return name


def attempt(call: Callable[[], Any]) -> tuple[Any, ClientError | None]:
    try:
        return call(), None
    except ClientError as exc:
        return None, exc


def load(ddb: Any, table: str, keys: list[str], *, seconds: int, clock: FakeClock) -> list[int]:
    """Put each key once per simulated second; return the throttled puts of each second."""
    throttled = []
    for _ in range(seconds):
        count = 0
        for key in keys:
            _, error = attempt(
                lambda key=key: ddb.put_item(TableName=table, Item={"pk": {"S": key}})
            )
            if error is not None:
                assert error.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
                count += 1
        throttled.append(count)
        clock.advance(1.0)
    return throttled


def put_many(ddb: Any, table: str, key: str, count: int) -> int:
    """Put one key ``count`` times within the current second; return how many were throttled."""
    errors = [
        attempt(lambda: ddb.put_item(TableName=table, Item={"pk": {"S": key}}))[1]
        for _ in range(count)
    ]
    return sum(error is not None for error in errors)


def raw(
    endpoint_url: str, body: bytes, target: str | None = "DynamoDB_20120810.ListTables"
) -> tuple[int, dict[str, str], bytes]:
    headers = {
        "Content-Type": "application/x-amz-json-1.0",
        "Authorization": "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/"
        "aws4_request, SignedHeaders=host, Signature=0",
    }
    if target is not None:
        headers["X-Amz-Target"] = target
    request = urllib.request.Request(endpoint_url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def botocore_error(status: int, headers: dict[str, str], body: bytes) -> dict[str, Any]:
    """What botocore's JSON-protocol parser makes of an error answer."""
    parsed = JSONParser().parse({"status_code": status, "headers": headers, "body": body}, None)
    error: dict[str, Any] = parsed["Error"]
    return error


# --- partitions -------------------------------------------------------------------------


def test_hot_key_is_held_to_its_partition_ceiling_while_cold_keys_pass(
    ddb: Any, clock: FakeClock
) -> None:
    table = create_table(ddb)
    throttled = load(ddb, table, ["hot"] * 30, seconds=4, clock=clock)
    assert throttled == [20, 20, 20, 20]  # 10 write units a second get through, no more

    assert put_many(ddb, table, "hot", 10) == 0
    _, error = attempt(lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "hot"}}))
    assert error is not None
    assert error.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
    assert error.response["Error"]["Message"].startswith(
        "The level of configured provisioned throughput for the table was exceeded."
    )
    assert error.response["ThrottlingReasons"] == [
        {
            "reason": "TableWriteKeyRangeThroughputExceeded",
            "resource": f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/{table}",
        }
    ]
    # Beside DynamoDB's reason, the model's cause: this partition's ceiling.
    assert error.response["ResponseMetadata"]["HTTPHeaders"]["x-partition-heat-throttle"] == (
        "partition TableWriteKeyRangeThroughputExceeded "
        f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/{table}"
    )
    # The hot partition is exhausted; keys on the other partitions still pass.
    hot = bucket_of("hot", PARTITIONS)
    cold = [f"cold-{i}" for i in range(60) if bucket_of(f"cold-{i}", PARTITIONS) != hot][:20]
    for key in cold:
        ddb.put_item(TableName=table, Item={"pk": {"S": key}})


def test_burst_never_lifts_a_partition_above_its_ceiling(ddb: Any, clock: FakeClock) -> None:
    table = create_table(ddb)
    clock.advance(120.0)  # the table banks two minutes of unused capacity
    assert load(ddb, table, ["hot"] * 30, seconds=1, clock=clock) == [20]


def test_write_sharded_keys_pass_the_same_load(ddb: Any, clock: FakeClock) -> None:
    table = create_table(ddb)
    shards = [f"COUNTER#c1#SHARD#{i}" for i in range(30)]
    per_partition = [0] * PARTITIONS
    for key in shards:
        per_partition[bucket_of(key, PARTITIONS)] += 1
    assert max(per_partition) < 10  # the design spreads: no partition sees its ceiling
    assert load(ddb, table, shards, seconds=4, clock=clock) == [0, 0, 0, 0]


def test_on_demand_hot_key_gets_throttling_exception(ddb: Any, clock: FakeClock) -> None:
    table = create_table(ddb, on_demand=True)
    errors = []
    for _ in range(30):
        _, error = attempt(lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "hot"}}))
        if error is not None:
            errors.append(error)
    assert len(errors) == 20
    response = errors[0].response
    assert response["Error"]["Code"] == "ThrottlingException"
    assert "check if you have a hot key" in response["Error"]["Message"]
    assert response["throttlingReasons"] == [
        {
            "reason": "TableWriteKeyRangeThroughputExceeded",
            "resource": f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/{table}",
        }
    ]


def test_gsi_short_of_write_capacity_buffers_then_pushes_back_on_every_table_write(
    ddb: Any, clock: FakeClock
) -> None:
    gsi = {
        "name": "by_status",
        "attribute": "status",
        "throughput": {"ReadCapacityUnits": 100, "WriteCapacityUnits": 100},  # 1 a second
    }
    table = create_table(ddb, gsi=gsi)

    def put(key: str, **extra: Any) -> ClientError | None:
        item = {"pk": {"S": key}, **{k: {"S": v} for k, v in extra.items()}}
        return attempt(lambda: ddb.put_item(TableName=table, Item=item))[1]

    # The index takes its writes into its buffer (1,800 units at this scale) beyond its
    # capacity and its new table's burst (81 units): then it pushes back. The table's own
    # throttles (its 5 units a second) are waited out, as the index drains 1 a second.
    taken, error = 0, None
    for _ in range(4000):
        error = put(f"k{taken}", status="open")
        if error is None:
            taken += 1
        elif error.response["ThrottlingReasons"][0]["reason"].startswith("Table"):
            clock.advance(1.0)
        else:
            break
    assert 1800 <= taken <= 2600, taken
    assert error is not None
    assert error.response["ThrottlingReasons"] == [
        {
            "reason": "IndexWriteProvisionedThroughputExceeded",
            "resource": f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/{table}/index/by_status",
        }
    ]
    assert error.response["Error"]["Message"].startswith(
        "The level of configured provisioned throughput for one or more global secondary"
    )
    cause = error.response["ResponseMetadata"]["HTTPHeaders"]["x-partition-heat-throttle"]
    assert cause.startswith("buffer IndexWriteProvisionedThroughputExceeded ")
    assert ddb.get_item(TableName=table, Key={"pk": {"S": "x"}}).get("Item") is None
    assert put("x") is not None  # not in the index, refused all the same while it is full
    clock.advance(1.0)
    assert put("x", status="open") is None  # a second drained: room for one


# --- batches and transactions -----------------------------------------------------------


def test_batch_write_partially_throttled_returns_unprocessed_items(
    ddb: Any, clock: FakeClock
) -> None:
    table = create_table(ddb, sort_key=True)
    puts = [
        {"PutRequest": {"Item": {"pk": {"S": "hot"}, "sk": {"S": f"{i:02}"}}}} for i in range(25)
    ]
    response = ddb.batch_write_item(RequestItems={table: puts})
    unprocessed = response["UnprocessedItems"][table]
    assert len(unprocessed) == 15
    assert unprocessed == puts[10:]  # the admitted part went to the backend, in order
    stored = ddb.query(
        TableName=table,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": "hot"}},
    )
    assert stored["Count"] == 10
    # Nothing left for this partition this second: no item processed, so the batch raises.
    _, error = attempt(lambda: ddb.batch_write_item(RequestItems={table: puts[10:]}))
    assert error is not None
    assert error.response["Error"]["Code"] == "ProvisionedThroughputExceededException"


def test_batch_get_partially_throttled_returns_unprocessed_keys(ddb: Any, clock: FakeClock) -> None:
    table = create_table(ddb, sort_key=True)
    ddb.put_item(TableName=table, Item={"pk": {"S": "hot"}, "sk": {"S": "00"}})
    keys = [{"pk": {"S": "hot"}, "sk": {"S": f"{i:02}"}} for i in range(100)]
    response = ddb.batch_get_item(
        RequestItems={table: {"Keys": keys, "ConsistentRead": True}},
        ReturnConsumedCapacity="TOTAL",
    )
    # A strongly consistent miss costs 1 read unit; the partition serves 30 a second.
    unprocessed = response["UnprocessedKeys"][table]
    assert unprocessed["Keys"] == keys[30:]
    assert unprocessed["ConsistentRead"] is True
    assert response["Responses"][table] == [{"pk": {"S": "hot"}, "sk": {"S": "00"}}]
    assert response["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 30.0}]


def test_throttled_transaction_is_canceled_with_throttling_error(
    ddb: Any, clock: FakeClock
) -> None:
    hot_table, cold_table = create_table(ddb), create_table(ddb)
    assert put_many(ddb, hot_table, "hot", 10) == 0  # uses up this second
    _, error = attempt(
        lambda: ddb.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": hot_table, "Item": {"pk": {"S": "hot"}, "n": {"N": "1"}}}},
                {"Put": {"TableName": cold_table, "Item": {"pk": {"S": "cold"}}}},
            ]
        )
    )
    assert error is not None
    assert error.response["Error"]["Code"] == "TransactionCanceledException"
    reasons = error.response["CancellationReasons"]
    assert [reason["Code"] for reason in reasons] == ["ThrottlingError", "None"]
    assert reasons[0]["Message"].startswith("The level of configured provisioned throughput")
    assert "[ThrottlingError, None]" in error.response["Error"]["Message"]
    assert "Item" not in ddb.get_item(TableName=cold_table, Key={"pk": {"S": "cold"}})

    _, error = attempt(
        lambda: ddb.transact_get_items(
            TransactItems=[{"Get": {"TableName": hot_table, "Key": {"pk": {"S": "hot"}}}}]
        )
    )
    assert error is None  # reads have their own capacity
    clock.advance(1.0)
    response = ddb.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": hot_table, "Item": {"pk": {"S": "hot"}, "n": {"N": "1"}}}}
        ],
        ReturnConsumedCapacity="TOTAL",
    )
    # Transactions double: 2 write units for a 1 KB item, split by kind.
    assert response["ConsumedCapacity"] == [
        {"TableName": hot_table, "CapacityUnits": 2.0, "WriteCapacityUnits": 2.0}
    ]


# --- consumed capacity --------------------------------------------------------------------


def test_consumed_capacity_carries_the_models_numbers(ddb: Any) -> None:
    gsi = {"name": "by_g", "attribute": "g"}
    table = create_table(ddb, on_demand=True, gsi=gsi)
    # 2 + 1 + 1 + 1 + 4 + 1500 = 1509 bytes: 2 write units in the table and in the index.
    item = {"pk": {"S": "a"}, "g": {"S": "x"}, "data": {"S": "d" * 1500}}
    response = ddb.put_item(TableName=table, Item=item, ReturnConsumedCapacity="INDEXES")
    assert response["ConsumedCapacity"] == {
        "TableName": table,
        "CapacityUnits": 4.0,
        "Table": {"CapacityUnits": 2.0},
        "GlobalSecondaryIndexes": {"by_g": {"CapacityUnits": 2.0}},
    }
    # Moving the index key removes one index entry and adds another: 2 + 2 there.
    response = ddb.update_item(
        TableName=table,
        Key={"pk": {"S": "a"}},
        UpdateExpression="SET g = :y",
        ExpressionAttributeValues={":y": {"S": "y"}},
        ReturnConsumedCapacity="INDEXES",
    )
    assert response["ConsumedCapacity"] == {
        "TableName": table,
        "CapacityUnits": 6.0,
        "Table": {"CapacityUnits": 2.0},
        "GlobalSecondaryIndexes": {"by_g": {"CapacityUnits": 4.0}},
    }
    response = ddb.get_item(
        TableName=table, Key={"pk": {"S": "a"}}, ConsistentRead=True, ReturnConsumedCapacity="TOTAL"
    )
    assert response["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 1.0}
    response = ddb.query(
        TableName=table,
        IndexName="by_g",
        KeyConditionExpression="g = :y",
        ExpressionAttributeValues={":y": {"S": "y"}},
        ReturnConsumedCapacity="INDEXES",
    )
    assert response["Count"] == 1
    assert response["ConsumedCapacity"] == {
        "TableName": table,
        "CapacityUnits": 0.5,
        "Table": {"CapacityUnits": 0.0},
        "GlobalSecondaryIndexes": {"by_g": {"CapacityUnits": 0.5}},
    }
    # Not asked, not sent (moto would send its constants otherwise).
    assert "ConsumedCapacity" not in ddb.get_item(TableName=table, Key={"pk": {"S": "a"}})
    deleted = ddb.delete_item(
        TableName=table, Key={"pk": {"S": "a"}}, ReturnConsumedCapacity="TOTAL"
    )
    assert deleted["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 4.0}


def test_update_items_are_priced_by_their_size_after_the_update(ddb: Any) -> None:
    table = create_table(ddb, on_demand=True)

    def grow(text: str) -> float:
        response = ddb.update_item(
            TableName=table,
            Key={"pk": {"S": "k"}},
            UpdateExpression="SET #d = :d ADD n :one",
            ExpressionAttributeNames={"#d": "data"},
            ExpressionAttributeValues={":d": {"S": text}, ":one": {"N": "1"}},
            ReturnConsumedCapacity="TOTAL",
        )
        units: float = response["ConsumedCapacity"]["CapacityUnits"]
        return units

    assert grow("x" * 100) == 1.0
    assert grow("x" * 2500) == 3.0  # larger of before (small) and after (2.5 KB)
    assert grow("x") == 3.0  # larger of before (2.5 KB) and after (small)
    assert grow("x") == 1.0


def test_failed_condition_is_still_charged(ddb: Any) -> None:
    table = create_table(ddb, on_demand=True)
    ddb.put_item(TableName=table, Item={"pk": {"S": "k"}})
    _, error = attempt(
        lambda: ddb.put_item(
            TableName=table,
            Item={"pk": {"S": "k"}},
            ConditionExpression="attribute_not_exists(pk)",
        )
    )
    assert error is not None
    assert error.response["Error"]["Code"] == "ConditionalCheckFailedException"
    write_units = server_metric(ddb, "partition_heat_emulator_consumed_write_units", table)
    assert write_units == 2.0


def consumed_writes(ddb: Any, table: str, index: str = "") -> float:
    url = ddb.meta.endpoint_url + "/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    return sum(
        sample.value
        for metric in text_string_to_metric_families(text)
        if metric.name == "partition_heat_emulator_consumed_write_units"
        for sample in metric.samples
        if sample.labels.get("table") == table and sample.labels.get("index") == index
    )


def test_a_cancelled_transaction_charges_its_items_not_their_index_and_a_bad_request_nothing(
    ddb: Any,
) -> None:
    gsi = {"name": "by-g", "attribute": "g"}
    table = create_table(ddb, on_demand=True, gsi=gsi)
    item = {"pk": {"S": "k"}, "g": {"S": "1"}}
    ddb.put_item(TableName=table, Item=item)
    before = consumed_writes(ddb, table), consumed_writes(ddb, table, "by-g")
    assert before == (1.0, 1.0)
    put = {"TableName": table, "Item": item, "ConditionExpression": "attribute_not_exists(pk)"}
    _, error = attempt(lambda: ddb.transact_write_items(TransactItems=[{"Put": put}]))
    assert error is not None
    assert error.response["Error"]["Code"] == "TransactionCanceledException"
    # Two underlying writes of the item, consumed though the transaction did not succeed;
    # its index entry is never written.
    assert consumed_writes(ddb, table) == 3.0
    assert consumed_writes(ddb, table, "by-g") == 1.0
    _, error = attempt(lambda: ddb.put_item(TableName=table, Item={"g": {"S": "no key"}}))
    assert error is not None and error.response["Error"]["Code"] == "ValidationException"
    assert (consumed_writes(ddb, table), consumed_writes(ddb, table, "by-g")) == (3.0, 1.0)


# --- the wire ---------------------------------------------------------------------------


def test_every_body_written_carries_its_crc32(server: EmulatorServer, ddb: Any) -> None:
    table = create_table(ddb)
    url = server.endpoint_url
    put = json.dumps(
        {"TableName": table, "Item": {"pk": {"S": "hot"}}, "ReturnConsumedCapacity": "TOTAL"}
    ).encode()
    answers = [raw(url, put, "DynamoDB_20120810.PutItem") for _ in range(12)]  # some throttled
    answers.append(raw(url, b"{}"))  # forwarded as it is
    answers.append(raw(url, b"{oops"))  # the emulator's own error
    assert {status for status, _, _ in answers} == {200, 400}
    for _, headers, body in answers:
        assert headers["x-amz-crc32"] == str(zlib.crc32(body))
        assert headers["Content-Type"] == "application/x-amz-json-1.0"


def test_bad_requests_get_dynamodb_errors_and_the_server_keeps_serving(
    server: EmulatorServer, ddb: Any
) -> None:
    url = server.endpoint_url
    cases = [
        (b"{not json", "DynamoDB_20120810.GetItem", 400, "SerializationException"),
        (b"[1, 2]", "DynamoDB_20120810.GetItem", 400, "SerializationException"),
        (b"", "DynamoDB_20120810.GetItem", 400, "SerializationException"),
        (b"{}", "DynamoDB_20120810.Frobnicate", 400, "UnknownOperationException"),
        (b"{}", None, 400, "UnknownOperationException"),
        (b"{}", "Other_20120810.GetItem", 400, "UnknownOperationException"),
    ]
    for body, target, status, code in cases:
        answer = raw(url, body, target)
        assert answer[0] == status, (body, target)
        assert botocore_error(*answer)["Code"] == code
    _, error = attempt(lambda: ddb.get_item(TableName="missing-table", Key={"pk": {"S": "a"}}))
    assert error is not None
    assert error.response["Error"]["Code"] == "ResourceNotFoundException"
    # Malformed items go to the backend, which says what DynamoDB would.
    table = create_table(ddb)
    _, error = attempt(lambda: ddb.put_item(TableName=table, Item={"other": {"S": "a"}}))
    assert error is not None
    assert error.response["Error"]["Code"] == "ValidationException"
    assert table in ddb.list_tables()["TableNames"]


def test_unreachable_backend_answers_500_and_the_server_stays_up(clock: FakeClock) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"  # nothing listens once closed
    model = PartitionModel(scale=SCALE, clock=clock)
    with EmulatorServer(Emulator(UpstreamBackend(dead, timeout=2.0), model)) as running:
        ddb = client_for(running.endpoint_url)
        for _ in range(2):
            _, error = attempt(ddb.list_tables)
            assert error is not None
            assert error.response["Error"]["Code"] == "InternalServerError"
            assert error.response["ResponseMetadata"]["HTTPStatusCode"] == 500


def test_tables_created_before_the_emulator_are_described_and_modeled(clock: FakeClock) -> None:
    # Two emulators over the same (process-wide) moto, one after the other: the second has
    # never seen the table created. (Not side by side: where Locust's gevent has patched
    # threading, as in this test run, their loops would share one OS thread.)
    first = EmulatorServer(Emulator(MotoBackend(), PartitionModel(scale=SCALE, clock=clock)))
    with first:
        table = create_table(client_for(first.endpoint_url))
    model = PartitionModel(scale=SCALE, clock=clock, account=ACCOUNT)
    with EmulatorServer(Emulator(MotoBackend(), model)) as second:
        ddb = client_for(second.endpoint_url)
        assert load(ddb, table, ["hot"] * 30, seconds=1, clock=clock) == [20]


def test_metrics_parse_as_prometheus_text(server: EmulatorServer, ddb: Any) -> None:
    table = create_table(ddb)
    assert put_many(ddb, table, "hot", 12) == 2
    with urllib.request.urlopen(server.endpoint_url + "/metrics", timeout=10) as response:
        text = response.read().decode()
    families = {family.name: family for family in text_string_to_metric_families(text)}
    prefix = "partition_heat_emulator_"

    def samples(name: str) -> list[Any]:
        return [s for s in families[prefix + name].samples if s.labels.get("table") == table]

    written = samples("partition_consumed_write_units")
    assert [s.name for s in written] == [prefix + "partition_consumed_write_units_total"] * 8
    assert sum(s.value for s in written) == 10.0
    assert [s.value for s in samples("consumed_write_units")] == [10.0]
    assert [s.value for s in samples("partitions")] == [PARTITIONS]
    throttled = {s.labels["kind"]: s.value for s in samples("throttled_requests")}
    assert throttled == {"read": 0.0, "write": 2.0}
    assert [s.value for s in samples("splits")] == [0.0]
    assert samples("burst_write_units")[0].value >= 0
    assert families[prefix + "scale"].samples[0].value == SCALE
    requests = {
        (s.labels["operation"], s.labels["outcome"]): s.value
        for s in families[prefix + "requests"].samples
    }
    assert requests[("PutItem", "throttled")] == 2.0
    # What `loadgen run` puts in its results as the target's answers: every attempt.
    outcomes = answered(text)
    assert outcomes["throttled"] == 2
    assert outcomes["forwarded"] >= 10  # the puts admitted (and the CreateTable)


def server_metric(ddb: Any, family: str, table: str) -> float:
    url = ddb.meta.endpoint_url + "/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    return sum(
        sample.value
        for metric in text_string_to_metric_families(text)
        if metric.name == family
        for sample in metric.samples
        if sample.labels.get("table") == table
    )


# --- the command and the child process ------------------------------------------------------


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "loadgen.emulator", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "args",
    [
        ["--engine", "moto", "--scale", "0"],
        ["--engine", "moto", "--scale", "nan"],
        ["--engine", "moto", "--port", "70000"],
        ["--engine", "moto", "--bogus"],
        ["--upstream", "ftp://x"],
        ["--engine", "moto", "--shadow-items", "-1"],
    ],
)
def test_bad_flags_exit_2_with_one_line(args: list[str]) -> None:
    result = run_cli(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("loadgen: error: "), result.stderr


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--scale", "0"), ("--port", "70000"), ("--shadow-items", "-1"), ("--table-quota", "0"),
     ("--partition-size", "big"), ("--hash-keys", "salt")],
)  # fmt: skip
def test_bad_flags_are_refused_before_an_engine_starts(
    flag: str, value: str, tmp_path: Path
) -> None:
    # DynamoDB Local asked for by name where Java cannot be found: had the engine been started
    # first, its error would come out, not the flag's.
    env = {**os.environ, "PATH": str(tmp_path), "JAVA_HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "loadgen.emulator", "--engine", "dynamodb-local", flag, value],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.startswith(f"loadgen: error: {flag}"), result.stderr


def test_main_rejects_bad_input_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--engine", "moto", "--scale", "-1"]) == 2
    assert capsys.readouterr().err.startswith("loadgen: error: --scale must be a positive")


def test_command_prints_its_url_first_and_stops_on_sigterm() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "loadgen.emulator", "--port", "0", "--scale", "0.5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        assert "scale 0.5" in process.stderr.readline()
        assert client_for(url).list_tables()["TableNames"] is not None
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0


def test_embedded_emulator_lifecycle() -> None:
    # On moto: the emulator's own process is what must go (tests/emulator/test_engines.py
    # stops an emulator with DynamoDB Local's process tree), and moto starts in a second.
    with EmbeddedEmulator(scale=0.5, engine="moto") as emulator:
        pid = emulator.pid
        assert emulator.endpoint_url.startswith("http://127.0.0.1:")
        assert client_for(emulator.endpoint_url).list_tables()["TableNames"] is not None
    assert emulator.pid is None
    assert pid is not None
    with pytest.raises(ProcessLookupError):
        import os

        os.kill(pid, 0)


def test_default_scale_lets_one_key_throttle_below_the_engines_rate() -> None:
    # A hot key gets 1000 * scale writes/s; the embedded engine serves a few hundred.
    assert 1000 * DEFAULT_SCALE <= 100
    # An on-demand table's warm 4000 write units/s, scaled, take that load spread out.
    assert 4000 * DEFAULT_SCALE >= 400


def test_upstream_gets_the_body_and_signed_headers_unchanged(clock: FakeClock) -> None:
    seen: list[tuple[dict[str, str], bytes]] = []

    class Upstream(QuietHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            seen.append((dict(self.headers), self.body()))
            answer = b'{"ConsumedCapacity":{"TableName":"x","CapacityUnits":99.0}}'
            self.reply(200, answer, {"Content-Type": "application/x-amz-json-1.0"})

    with serve(Upstream) as url:
        model = PartitionModel(scale=SCALE, clock=clock)
        with EmulatorServer(Emulator(UpstreamBackend(url), model)) as running:
            ddb = client_for(running.endpoint_url)
            sent: list[Any] = []
            ddb.meta.events.register("before-send", lambda request, **_: sent.append(request))
            response = ddb.list_tables(Limit=5)
            assert "ConsumedCapacity" not in response  # a constant from a backend is not ours
            headers, body = seen[-1]
            assert body == sent[-1].body
            # Host is what the client signed: the emulator's address, not the upstream's.
            assert headers["Host"] == running.endpoint_url.removeprefix("http://")
            for name in ("Authorization", "X-Amz-Date", "X-Amz-Target", "Content-Type"):
                value = sent[-1].headers[name]
                assert headers[name] == (value.decode() if isinstance(value, bytes) else value)


def test_oversized_request_is_refused_with_413(server: EmulatorServer) -> None:
    body = b'{"TableName":"' + b"x" * (17 * 1024 * 1024) + b'"}'
    status, headers, answer = raw(server.endpoint_url, body, "DynamoDB_20120810.GetItem")
    assert status == 413
    assert headers["x-amz-crc32"] == str(zlib.crc32(answer))
    assert raw(server.endpoint_url, b"{}")[0] == 200


def test_projected_reads_are_charged_by_the_whole_item(ddb: Any) -> None:
    table = create_table(ddb, on_demand=True)
    ddb.put_item(TableName=table, Item={"pk": {"S": "k"}, "big": {"S": "x" * 9000}})
    response = ddb.get_item(
        TableName=table,
        Key={"pk": {"S": "k"}},
        ProjectionExpression="big",
        ConsistentRead=True,
        ReturnConsumedCapacity="TOTAL",
    )
    assert set(response["Item"]) == {"big"}
    assert response["ConsumedCapacity"]["CapacityUnits"] == 3.0  # 9 KB: three 4 KB units
