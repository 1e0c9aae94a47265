"""The emulator in front of DynamoDB Local (``--upstream``), AWS's own engine.

DynamoDB Local ignores throughput but computes ConsumedCapacity by AWS's rules, so besides
the end-to-end checks it serves as an oracle: the emulator's numbers for random items must
equal the ones DynamoDB Local computed for the very same request.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Iterator, Mapping
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from loadgen.emulator.backends import BackendResponse, UpstreamBackend
from loadgen.emulator.server import Emulator, EmulatorServer
from loadgen.model.partitions import PartitionModel

pytestmark = pytest.mark.dynamodb_local

SCALE = 0.01


class RecordingUpstream(UpstreamBackend):
    """An upstream that keeps the last ConsumedCapacity DynamoDB Local answered."""

    last: Any = None

    async def call(self, path: str, headers: Mapping[str, str], body: bytes) -> BackendResponse:
        response = await super().call(path, headers, body)
        if headers.get("X-Amz-Target", "").endswith(("DescribeTable",)):
            return response
        try:
            self.last = json.loads(response.body).get("ConsumedCapacity")
        except ValueError:
            self.last = None
        return response


class Clock:
    def __init__(self) -> None:
        self.now = 5_000.0

    def __call__(self) -> float:
        return self.now


def client_for(url: str) -> Any:
    return boto3.client(
        "dynamodb",
        endpoint_url=url,
        region_name="us-east-1",
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )


@pytest.fixture
def upstream(dynamodb_local_endpoint: str) -> RecordingUpstream:
    return RecordingUpstream(dynamodb_local_endpoint)


@pytest.fixture
def emulator(upstream: RecordingUpstream) -> Iterator[EmulatorServer]:
    model = PartitionModel(scale=SCALE, clock=Clock(), account="000000000000")
    with EmulatorServer(Emulator(upstream, model)) as running:
        yield running


def table_request(name: str, *, gsi: bool = False, provisioned: bool = True) -> dict[str, Any]:
    request: dict[str, Any] = {
        "TableName": name,
        "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        "AttributeDefinitions": [
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
        ],
    }
    throughput = {"ReadCapacityUnits": 12000, "WriteCapacityUnits": 4000}
    if provisioned:
        request["ProvisionedThroughput"] = throughput
    else:
        request["BillingMode"] = "PAY_PER_REQUEST"
    if gsi:
        request["AttributeDefinitions"].append({"AttributeName": "g", "AttributeType": "S"})
        index: dict[str, Any] = {
            "IndexName": "by_g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
        }
        if provisioned:
            index["ProvisionedThroughput"] = throughput
        request["GlobalSecondaryIndexes"] = [index]
    return request


def unique(prefix: str) -> str:
    return f"{prefix}_{random.randrange(1 << 40):x}"


def test_hot_key_throttles_in_front_of_dynamodb_local(
    emulator: EmulatorServer, dynamodb_local_endpoint: str
) -> None:
    ddb, direct = client_for(emulator.endpoint_url), client_for(dynamodb_local_endpoint)
    table = unique("hot")
    ddb.create_table(**table_request(table))
    throttled = 0
    for i in range(30):
        try:
            ddb.put_item(TableName=table, Item={"pk": {"S": "hot"}, "sk": {"N": str(i)}})
        except ClientError as exc:
            assert exc.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
            assert exc.response["ThrottlingReasons"][0]["reason"] == (
                "TableWriteKeyRangeThroughputExceeded"
            )
            throttled += 1
    assert throttled == 20
    stored = direct.query(
        TableName=table,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": "hot"}},
    )
    assert [item["sk"]["N"] for item in stored["Items"]] == [str(i) for i in range(10)]
    # Errors are DynamoDB Local's own words, passed through.
    with pytest.raises(ClientError) as raised:
        ddb.get_item(TableName=unique("missing"), Key={"pk": {"S": "a"}, "sk": {"N": "1"}})
    assert raised.value.response["Error"]["Code"] == "ResourceNotFoundException"


def test_table_made_before_the_emulator_is_described_from_upstream(
    emulator: EmulatorServer, dynamodb_local_endpoint: str
) -> None:
    table = unique("early")
    client_for(dynamodb_local_endpoint).create_table(**table_request(table))
    ddb = client_for(emulator.endpoint_url)
    outcomes = []
    for i in range(12):
        try:
            ddb.put_item(TableName=table, Item={"pk": {"S": "hot"}, "sk": {"N": str(i)}})
            outcomes.append("ok")
        except ClientError as exc:
            outcomes.append(exc.response["Error"]["Code"])
    assert outcomes == ["ok"] * 10 + ["ProvisionedThroughputExceededException"] * 2


# --- differential: our ConsumedCapacity against DynamoDB Local's ---------------------------


def random_value(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    kinds = ["S", "N", "B", "BOOL", "NULL", "SS", "NS"] + (["L", "M"] if depth < 2 else [])
    kind = rng.choice(kinds)
    if kind == "S":
        return {"S": random_text(rng, rng.choice([1, 10, 300, 1500, 5000]))}
    if kind == "N":
        return {"N": random_number(rng)}
    if kind == "B":
        return {"B": base64.b64encode(rng.randbytes(rng.randrange(1, 2000))).decode()}
    if kind == "BOOL":
        return {"BOOL": rng.random() < 0.5}
    if kind == "NULL":
        return {"NULL": True}
    if kind == "SS":
        return {"SS": sorted({random_text(rng, rng.randrange(1, 40)) for _ in range(3)})}
    if kind == "NS":
        return {"NS": sorted({random_number(rng) for _ in range(3)})}
    if kind == "L":
        return {"L": [random_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]}
    return {"M": {random_name(rng): random_value(rng, depth + 1) for _ in range(3)}}


def random_text(rng: random.Random, length: int) -> str:
    # Multi-byte characters check that sizes are counted in UTF-8 bytes.
    return "".join(rng.choice(string.ascii_letters + "é€") for _ in range(length))


def random_number(rng: random.Random) -> str:
    return rng.choice(
        [
            str(rng.randrange(-(10**12), 10**12)),
            f"{rng.uniform(-1e6, 1e6):.{rng.randrange(0, 8)}f}",
            str(rng.randrange(0, 100) * 10 ** rng.randrange(0, 20)),
        ]
    )


def random_name(rng: random.Random) -> str:
    # The prefix keeps clear of the key attributes (pk, sk, g) and of the names updates use.
    return "x" + "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randrange(0, 12)))


def random_item(rng: random.Random, pk: str, sk: int) -> dict[str, Any]:
    item = {"pk": {"S": pk}, "sk": {"N": str(sk)}}
    for _ in range(rng.randrange(0, 6)):
        item[random_name(rng)] = random_value(rng)
    if rng.random() < 0.5:
        item["g"] = {"S": random_text(rng, 5)}
    return item


@pytest.fixture
def unscaled(upstream: RecordingUpstream) -> Iterator[EmulatorServer]:
    """AWS's own capacities: nothing in the differential test comes near a throttle."""
    with EmulatorServer(Emulator(upstream, PartitionModel(scale=1.0))) as running:
        yield running


def without_split(value: Any) -> Any:
    if isinstance(value, list):
        return [without_split(v) for v in value]
    if isinstance(value, dict):
        return {
            k: without_split(v)
            for k, v in value.items()
            if k not in ("ReadCapacityUnits", "WriteCapacityUnits")
        }
    return value


def index_writes_doubled(consumed: Any) -> Any:
    """Our ``INDEXES`` capacity of a transaction as DynamoDB Local reports it: each global
    index's units twice, and the total with them."""
    if isinstance(consumed, list):
        return [index_writes_doubled(entry) for entry in consumed]
    indexes = (consumed or {}).get("GlobalSecondaryIndexes")
    if not indexes:
        return consumed
    extra = sum(units["CapacityUnits"] for units in indexes.values())
    return {
        **consumed,
        "CapacityUnits": consumed["CapacityUnits"] + extra,
        "GlobalSecondaryIndexes": {
            name: {"CapacityUnits": 2 * units["CapacityUnits"]} for name, units in indexes.items()
        },
    }


def test_consumed_capacity_matches_dynamodb_local(
    unscaled: EmulatorServer, upstream: RecordingUpstream
) -> None:
    ddb = client_for(unscaled.endpoint_url)
    table = unique("diff")
    ddb.create_table(**table_request(table, gsi=True, provisioned=False))
    rng = random.Random(20260101)
    mismatches: list[tuple[str, Any, Any]] = []

    def check(operation: str, call: Any, **kwargs: Any) -> dict[str, Any]:
        response: dict[str, Any] = call(ReturnConsumedCapacity="INDEXES", **kwargs)
        ours, theirs = response.get("ConsumedCapacity"), upstream.last
        if operation.startswith("Transact"):
            # Ours also splits a transaction's units into read and write; DynamoDB Local
            # gives only the totals, and charges a transaction's index writes twice, where AWS
            # charges them once (docs/cost.md: Transactions and their indexes).
            ours = index_writes_doubled(without_split(ours))
        if ours != theirs:
            mismatches.append((operation, ours, theirs))
        return response

    keys = []
    for sk in range(40):
        item = random_item(rng, f"p{sk % 4}", sk)
        keys.append({"pk": item["pk"], "sk": item["sk"]})
        check("PutItem", ddb.put_item, TableName=table, Item=item)
    for sk in range(0, 40, 3):  # overwrite: the larger of before and after
        check("PutItem", ddb.put_item, TableName=table, Item=random_item(rng, f"p{sk % 4}", sk))
    for key in keys[:20]:
        check("GetItem", ddb.get_item, TableName=table, Key=key, ConsistentRead=rng.random() < 0.5)
    for i, key in enumerate(keys[20:30]):
        check(
            "UpdateItem",
            ddb.update_item,
            TableName=table,
            Key=key,
            UpdateExpression="SET #a = :v, g = :g ADD c :one",
            ExpressionAttributeNames={"#a": random_name(rng)},
            ExpressionAttributeValues={
                ":v": random_value(rng),
                ":g": {"S": f"g{i % 3}"},
                ":one": {"N": "1"},
            },
        )
    for pk in ("p0", "p1", "p2", "p3"):
        check(
            "Query",
            ddb.query,
            TableName=table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": pk}},
            ConsistentRead=pk in ("p0", "p2"),
        )
    check(
        "BatchGetItem",
        ddb.batch_get_item,
        RequestItems={table: {"Keys": keys[:25], "ConsistentRead": True}},
    )
    check(
        "BatchWriteItem",
        ddb.batch_write_item,
        RequestItems={
            table: [{"PutRequest": {"Item": random_item(rng, "p9", sk)}} for sk in range(10)]
            + [{"DeleteRequest": {"Key": key}} for key in keys[30:35]]
        },
    )
    # One item per transaction: for several items on one table DynamoDB Local reports only
    # the last item's units (two 1 KB puts: 2.0, where AWS's rule gives 4.0).
    transact_writes = [
        {"Put": {"TableName": table, "Item": random_item(rng, "p8", 1)}},
        {"Delete": {"TableName": table, "Key": keys[36]}},
        {
            "Update": {
                "TableName": table,
                "Key": keys[37],
                "UpdateExpression": "SET n = :n, g = :g",
                "ExpressionAttributeValues": {":n": {"N": "7"}, ":g": {"S": "moved"}},
            }
        },
    ]
    for entry in transact_writes:
        check("TransactWriteItems", ddb.transact_write_items, TransactItems=[entry])
    check(
        "TransactGetItems",
        ddb.transact_get_items,
        TransactItems=[{"Get": {"TableName": table, "Key": key}} for key in keys[:5]],
    )
    for key in keys[35:40]:
        check("DeleteItem", ddb.delete_item, TableName=table, Key=key)
    assert mismatches == []
