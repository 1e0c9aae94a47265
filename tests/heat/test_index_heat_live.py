"""GSI heat of real calls, without ``index_keys``: a client, the emulator over in-process moto,
and the recorder as a run registers it. The emulator prices each call by AWS's rules and
answers ``ReturnConsumedCapacity=INDEXES``, so the index's write units come from the target."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from locust.event import Events

from loadgen.client import RetryPolicy, make_client
from loadgen.emulator.backends import MotoBackend
from loadgen.emulator.server import Emulator, EmulatorServer
from loadgen.heat.recorder import RunRecorder
from loadgen.model.partitions import PartitionModel
from loadgen.model.schema import TableSchema

CREATE = {
    "TableName": "chat",
    "KeySchema": [
        {"AttributeName": "pk", "KeyType": "HASH"},
        {"AttributeName": "sk", "KeyType": "RANGE"},
    ],
    "AttributeDefinitions": [
        {"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "GSI1PK")
    ],
    "GlobalSecondaryIndexes": [
        {
            "IndexName": "GSI1",
            "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
        }
    ],
    "BillingMode": "PAY_PER_REQUEST",
}


class Environment:
    def __init__(self) -> None:
        self.events = Events()


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    model = PartitionModel(scale=1.0, account=MotoBackend.account)
    with EmulatorServer(Emulator(MotoBackend(), model)) as server:
        yield server.endpoint_url


def s(value: str) -> dict[str, str]:
    return {"S": value}


@pytest.mark.parametrize("kind", ["fast", "boto3"])
def test_index_writes_and_units_counted_without_index_keys(endpoint: str, kind: str) -> None:
    environment = Environment()
    recorder = RunRecorder.register(environment)
    recorder.heat.add_table(TableSchema.from_create_table({**CREATE, "TableName": kind}))
    client = make_client(
        kind, environment, endpoint_url=endpoint, region="us-east-1", retry=RetryPolicy("none")
    )
    client.botocore.create_table(**{**CREATE, "TableName": kind})
    table = kind
    for user in range(10):
        pk = f"USER#{user}"
        key = {"pk": s(pk), "sk": s("PROFILE")}
        client.call("PutItem", "chat.join", table=table, pk=pk,
                    Item={**key, "GSI1PK": s("STATUS#away")})  # fmt: skip
        client.call(
            "UpdateItem", "chat.go_online", table=table, pk=pk, Key=key,
            UpdateExpression="SET #s = :s, GSI1PK = :g",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={":s": s("online"), ":g": s("STATUS#online")},
        )  # fmt: skip
    rows: dict[str, Any] = {name: c for (_, name), c in recorder.operations.items()}
    # A put adds an index entry (1 unit); an update moving it to a new key, 2 (AWS's rule).
    assert rows["chat.join"].units() == {
        table: {"read": 0, "write": 10},
        f"{table}/GSI1": {"read": 0, "write": 10},
    }
    assert rows["chat.go_online"].units() == {
        table: {"read": 0, "write": 10},
        f"{table}/GSI1": {"read": 0, "write": 20},
    }
    index_lane = recorder.heat.lanes[(table, "GSI1", "write")].counts()
    assert sum(index_lane[0::3]) == 20  # 20 index touches: 10 puts, 10 updates
    assert sum(index_lane[1::3]) == 30
    keys = {h.key: h.count for h in recorder.heat.top_keys(table, "GSI1")}
    assert keys == {"STATUS#away": 10, "STATUS#online": 10}
    hot = rows["chat.go_online"].hot_key()
    assert hot is not None
    assert (hot["key"], hot["index"], hot["share"]) == ("STATUS#online", "GSI1", 1.0)
