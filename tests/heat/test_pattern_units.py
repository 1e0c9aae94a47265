"""Index writes worked out from the schema, and units and the hot key per access pattern."""

from __future__ import annotations

from typing import Any

import pytest

from loadgen.heat.heatmap import HeatConfig, ScopeTally
from loadgen.heat.recorder import RunRecorder
from loadgen.model.capacity import consumed_capacity_response, cost_of
from loadgen.model.schema import TableSchema

T0 = 1_800_000_000.0
SCHEMA = TableSchema.from_create_table(
    {
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
)


def s(value: str) -> dict[str, str]:
    return {"S": value}


def call(
    recorder: RunRecorder,
    operation: str,
    name: str,
    request: dict[str, Any],
    *,
    keys: list[str],
    index: str | None = None,
    consumed: Any = None,
    second: float = 0.0,
    throttled: int = 0,
) -> None:
    """Fire one request event as `BaseDynamoClient.call` does, with no ``index_keys``."""
    recorder._on_request(
        request_type=operation,
        name=name,
        response_time=5.0,
        start_time=T0 + second,
        response={},
        context={
            "table": "chat",
            "index": index,
            "partition_key": keys[0],
            "sort_key": None,
            "partition_keys": keys,
            "index_keys": {},
            "consumed_capacity": consumed,
            "attempts": 1 + throttled,
            "retries": throttled,
            "throttled_attempts": throttled,
            "unprocessed": 0,
            "error_code": None,
            "request": request,
        },
    )


def set_status(user: int, status: str) -> dict[str, Any]:
    return {
        "TableName": "chat",
        "Key": {"pk": s(f"USER#{user}"), "sk": s("PROFILE")},
        "UpdateExpression": "SET #s = :s, GSI1PK = :g",
        "ExpressionAttributeNames": {"#s": "status"},
        "ExpressionAttributeValues": {":s": s(status), ":g": s(f"STATUS#{status}")},
    }


def indexes_reply(operation: str, request: dict[str, Any], **known: Any) -> Any:
    """The ``ConsumedCapacity`` the emulator answers ``INDEXES`` with (its own pricing)."""
    cost = cost_of(operation, request, tables={"chat": SCHEMA}, **known)
    return consumed_capacity_response(cost, "INDEXES")


def lane_totals(recorder: RunRecorder, index: str | None, access: str) -> tuple[float, float]:
    counts = recorder.heat.lanes[("chat", index, access)].counts()
    return sum(counts[0::3]), sum(counts[1::3])


def status_run(capacity_source: str) -> RunRecorder:
    recorder = RunRecorder(heat=HeatConfig(capacity_source=capacity_source))
    recorder.heat.add_table(SCHEMA)
    for user in range(20):
        before = {"pk": s(f"USER#{user}"), "sk": s("PROFILE"), "GSI1PK": s("STATUS#away")}
        after = {**before, "status": s("online"), "GSI1PK": s("STATUS#online")}
        request = set_status(user, "online")
        consumed = (
            indexes_reply("UpdateItem", request, before=before, after=after)
            if capacity_source == "reported"
            else None
        )
        call(recorder, "UpdateItem", "chat.go_online", request, keys=[f"USER#{user}"],
             consumed=consumed)  # fmt: skip
        item = {"pk": s(f"USER#{user}"), "sk": s(f"POST#{user}"), "text": s("x" * 1500)}
        put = {"TableName": "chat", "Item": item}
        consumed = indexes_reply("PutItem", put) if capacity_source == "reported" else None
        call(recorder, "PutItem", "chat.post", put, keys=[f"USER#{user}"], consumed=consumed)
    for i in range(60):
        query = {
            "TableName": "chat",
            "IndexName": "GSI1",
            "KeyConditionExpression": "GSI1PK = :g",
            "ExpressionAttributeValues": {":g": s("STATUS#online")},
        }
        consumed = (
            {"TableName": "chat", "CapacityUnits": 2.5, "Table": {"CapacityUnits": 0.0},
             "GlobalSecondaryIndexes": {"GSI1": {"CapacityUnits": 2.5}}}
            if capacity_source == "reported"
            else None
        )  # fmt: skip
        call(recorder, "Query", "chat.online_now", query, keys=["STATUS#online"], index="GSI1",
             consumed=consumed, throttled=1 if i % 2 else 0)  # fmt: skip
    return recorder


def test_an_update_setting_a_gsi_key_heats_the_index_without_index_keys() -> None:
    recorder = status_run("reported")
    # Each update moved its item between index keys: 2 index write units (AWS's rule), all on
    # the new key, which is the one the request shows.
    assert lane_totals(recorder, "GSI1", "write") == (20.0, 40.0)
    assert lane_totals(recorder, None, "write") == (40.0, 20.0 + 40.0)
    top = recorder.heat.top_keys("chat", "GSI1")
    assert top[0].key == "STATUS#online"


def test_units_per_pattern_are_the_lanes_units_read_and_write() -> None:
    recorder = status_run("reported")
    rows = {name: counts for (_, name), counts in recorder.operations.items()}
    assert rows["chat.go_online"].units() == {
        "chat": {"read": 0, "write": 20},
        "chat/GSI1": {"read": 0, "write": 40},
    }
    assert rows["chat.post"].units() == {"chat": {"read": 0, "write": 40}}
    assert rows["chat.online_now"].units() == {"chat/GSI1": {"read": 150, "write": 0}}
    # Every pattern's units add up to the lanes'.
    for index, access in ((None, "write"), ("GSI1", "write"), ("GSI1", "read")):
        scope = "chat" if index is None else f"chat/{index}"
        spent = sum(counts.units().get(scope, {}).get(access, 0) for counts in rows.values())
        assert spent == lane_totals(recorder, index, access)[1]


def test_computed_units_count_index_writes_of_puts_without_index_keys() -> None:
    recorder = status_run("computed")
    post = next(c for (_, n), c in recorder.operations.items() if n == "chat.post")
    # The post is in no index (no GSI1PK): 2 write units each on the table, none elsewhere.
    assert post.units() == {"chat": {"read": 0, "write": 40}}
    online = next(c for (_, n), c in recorder.operations.items() if n == "chat.go_online")
    # The update's index touch is counted (requests), its units unknown without the item.
    assert set(online.units()) == {"chat", "chat/GSI1"}
    assert lane_totals(recorder, "GSI1", "write")[0] == 20.0


def test_the_hot_key_of_a_pattern_and_its_share() -> None:
    recorder = status_run("reported")
    rows = {name: counts for (_, name), counts in recorder.operations.items()}
    assert rows["chat.online_now"].hot_key() == {
        "key": "STATUS#online", "share": 1.0, "table": "chat", "index": "GSI1",
        "touches": 60, "error": 0,
    }  # fmt: skip
    # A status write: every call lands on STATUS#online in the index, each user once.
    hot = rows["chat.go_online"].hot_key()
    assert hot is not None
    assert (hot["key"], hot["index"], hot["share"]) == ("STATUS#online", "GSI1", 1.0)
    hot = rows["chat.post"].hot_key()
    assert hot is not None and hot["share"] == pytest.approx(1 / 20)


def test_explicit_index_keys_still_win() -> None:
    recorder = RunRecorder(heat=HeatConfig(capacity_source="reported"))
    recorder.heat.add_table(SCHEMA)
    request = set_status(1, "online")
    context = {
        "table": "chat", "index": None, "partition_key": "USER#1", "partition_keys": ["USER#1"],
        "index_keys": {"GSI1": ["STATUS#declared"]}, "consumed_capacity": None, "attempts": 1,
        "retries": 0, "throttled_attempts": 0, "unprocessed": 0, "error_code": None,
        "request": request,
    }  # fmt: skip
    recorder._on_request(
        request_type="UpdateItem", name="x", context=context, start_time=T0, response={}
    )
    assert [h.key for h in recorder.heat.top_keys("chat", "GSI1")] == ["STATUS#declared"]


def test_tallies_merge_across_workers_as_one_would_count() -> None:
    whole = status_run("reported")
    a, b = status_run("reported"), status_run("reported")
    master = RunRecorder.from_dict(a.to_dict())
    master.merge_dict(b.to_dict())
    for key, counts in whole.operations.items():
        merged = master.operations[key]
        doubled = {
            scope: {kind: 2 * units for kind, units in spent.items()}
            for scope, spent in counts.units().items()
        }
        assert merged.units() == doubled
        assert merged.hot_key() is not None
        assert merged.hot_key()["key"] == counts.hot_key()["key"]  # type: ignore[index]


def test_a_tally_round_trips_through_its_plain_form() -> None:
    recorder = status_run("reported")
    for counts in recorder.operations.values():
        again = ScopeTally.from_dict(counts.tally.to_dict())
        assert again.units == counts.tally.units
        assert again.hottest() == counts.tally.hottest()


def test_the_hot_key_share_is_of_its_own_table_or_index() -> None:
    """A transaction writing an order's header and two items: three table keys a call, one
    status key in the index. The status key is the pattern's hottest, on every call's index
    entry, though a quarter of the call's key touches."""
    recorder = RunRecorder(heat=HeatConfig(capacity_source="computed"))
    recorder.heat.add_table(SCHEMA)
    for order in range(8):
        header = {"pk": s(f"ORDER#{order}"), "sk": s("HEADER"), "GSI1PK": s("STATUS#PLACED")}
        items = [{"pk": s(f"ORDER#{order}"), "sk": s(f"ITEM#{i}")} for i in range(2)]
        request = {
            "TransactItems": [{"Put": {"TableName": "chat", "Item": item}}
                              for item in (header, *items)]
        }  # fmt: skip
        call(recorder, "TransactWriteItems", "orders.create", request,
             keys=[f"ORDER#{order}"] * 3)  # fmt: skip
    ((_, counts),) = recorder.operations.items()
    assert counts.hot_key() == {
        "key": "STATUS#PLACED", "share": 1.0, "table": "chat", "index": "GSI1",
        "touches": 8, "error": 0,
    }  # fmt: skip
    # Transactional writes: 2 units per KB-item, 3 on the table a call; the index entry 1
    # (an index write costs the standard rate in a transaction too).
    assert counts.units() == {
        "chat": {"read": 0, "write": 48},
        "chat/GSI1": {"read": 0, "write": 8},
    }


def test_a_batch_pattern_estimates_each_keys_share_from_one_key_a_call() -> None:
    recorder = RunRecorder(heat=HeatConfig(capacity_source="reported"))
    for i in range(200):
        keys = ["HOT", *(f"K{(i * 9 + j) % 997}" for j in range(9))]
        consumed = [{"TableName": "chat", "CapacityUnits": 5.0}]
        call(recorder, "BatchGetItem", "feed.batch", {}, keys=keys, consumed=consumed)
    ((_, counts),) = recorder.operations.items()
    hot = counts.hot_key()
    assert hot is not None
    # HOT is one of each call's ten keys: 10% of the pattern's key touches, exactly here
    # because the sketch takes the calls' keys in turn.
    assert (hot["key"], hot["share"], hot["touches"]) == ("HOT", 0.1, 200)
    assert counts.units() == {"chat": {"read": 1000, "write": 0}}
