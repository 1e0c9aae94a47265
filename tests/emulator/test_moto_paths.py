"""The moto backend's shortcuts answer exactly as moto's own path does.

Each request runs twice, on two regions of the same in-process moto: once through
`MotoBackend` with its shortcuts, once with every request down moto's own path. The answers
(status and JSON) and the items left stored must be the same, errors included: a request the
shortcut cannot be sure of must fall through to moto.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from loadgen.emulator.backends import MotoBackend
from loadgen.emulator.engines import pk_sk_table
from loadgen.emulator.moto_paths import fast_query, fast_update

TABLE = "paths"
_AUTH = "AWS4-HMAC-SHA256 Credential=x/20260101/{}/dynamodb/aws4_request, Signature=0"


class Pair:
    """The same moto, one region through the shortcuts and one without."""

    def __init__(self) -> None:
        self.fast = MotoBackend()
        self.plain = MotoBackend(shortcuts=False)
        for backend in (self.fast, self.plain):
            asyncio.run(backend.start())

    def both(self, operation: str, payload: dict[str, Any]) -> tuple[Any, Any]:
        return (
            self._call(self.fast, "us-west-2", operation, payload),
            self._call(self.plain, "eu-north-1", operation, payload),
        )

    @staticmethod
    def _call(backend: MotoBackend, region: str, operation: str, payload: dict[str, Any]) -> Any:
        headers = {
            "X-Amz-Target": f"DynamoDB_20120810.{operation}",
            "Authorization": _AUTH.format(region),
        }
        answer = asyncio.run(backend.call("/", headers, json.dumps(payload).encode()))
        parsed = json.loads(answer.body)
        parsed.pop("ConsumedCapacity", None)  # the emulator writes its own, always
        return answer.status, parsed


@pytest.fixture(scope="module")
def pair() -> Pair:
    pair = Pair()
    table = pk_sk_table(TABLE, index=("by-g", "gpk"))
    fast, plain = pair.both("CreateTable", table)
    assert fast[0] == plain[0] == 200
    return pair


def _item(pk: str, **attributes: Any) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": "s"}, **attributes}


# (item stored first, or None; the update's members beyond TableName and Key)
UPDATES: list[tuple[dict[str, Any] | None, dict[str, Any]]] = [
    (
        None,
        {
            "UpdateExpression": "ADD #c :one",
            "ExpressionAttributeNames": {"#c": "n"},
            "ExpressionAttributeValues": {":one": {"N": "1"}},
        },
    ),
    (
        {"n": {"N": "41"}},
        {
            "UpdateExpression": "ADD n :one",
            "ExpressionAttributeValues": {":one": {"N": "1"}},
            "ReturnValues": "UPDATED_NEW",
        },
    ),
    (
        {"n": {"N": "7"}, "s": {"S": "x"}},
        {
            "UpdateExpression": "SET n = n + :two, s = :s REMOVE gone",
            "ExpressionAttributeValues": {":two": {"N": "2"}, ":s": {"S": "y"}},
            "ReturnValues": "ALL_NEW",
        },
    ),
    (
        {"n": {"N": "7"}},
        {
            "UpdateExpression": "SET m = if_not_exists(m, :z), n = n - :one",
            "ExpressionAttributeValues": {":z": {"N": "0"}, ":one": {"N": "1"}},
            "ReturnValues": "ALL_OLD",
        },
    ),
    (
        {"l": {"L": [{"S": "a"}]}},
        {
            "UpdateExpression": "SET l = list_append(l, :more)",
            "ExpressionAttributeValues": {":more": {"L": [{"S": "b"}]}},
            "ReturnValues": "UPDATED_OLD",
        },
    ),
    (
        {"s": {"S": "text"}},
        {
            "UpdateExpression": "ADD s :one",  # ADD to a string: an error
            "ExpressionAttributeValues": {":one": {"N": "1"}},
        },
    ),
    (
        None,
        {
            "UpdateExpression": "ADD s :text",  # ADD of a string: an error
            "ExpressionAttributeValues": {":text": {"S": "x"}},
        },
    ),
    (
        None,
        {
            "UpdateExpression": "SET sk = :v",  # a key attribute: an error
            "ExpressionAttributeValues": {":v": {"S": "other"}},
        },
    ),
    (
        None,
        {
            "UpdateExpression": "SET a = :v, a = :w",  # the same path twice: an error
            "ExpressionAttributeValues": {":v": {"S": "1"}, ":w": {"S": "2"}},
        },
    ),
    (
        None,
        {
            "UpdateExpression": "SET a = missing + :v",  # an attribute not in the item
            "ExpressionAttributeValues": {":v": {"N": "1"}},
        },
    ),
    (
        None,
        {
            "UpdateExpression": "SET gpk = :v",  # an index key of the wrong type: an error
            "ExpressionAttributeValues": {":v": {"N": "1"}},
        },
    ),
    (
        None,
        {
            "UpdateExpression": "SET gpk = :v",  # an index key moved
            "ExpressionAttributeValues": {":v": {"S": "G#1"}},
            "ReturnValues": "ALL_NEW",
        },
    ),
    (
        {"n": {"N": "9" * 38}},
        {
            "UpdateExpression": "ADD n :tiny",  # beyond 38 digits
            "ExpressionAttributeValues": {":tiny": {"N": "0.1"}},
        },
    ),
    (
        None,
        {
            "UpdateExpression": "ADD n :one ADD m :one",  # ADD twice: an error
            "ExpressionAttributeValues": {":one": {"N": "1"}},
        },
    ),
]


@pytest.mark.parametrize("number", range(len(UPDATES)))
def test_updates_answer_and_store_as_moto_does(pair: Pair, number: int) -> None:
    stored, members = UPDATES[number]
    key = {"pk": {"S": f"u{number}"}, "sk": {"S": "s"}}
    if stored is not None:
        fast, plain = pair.both(
            "PutItem", {"TableName": TABLE, "Item": _item(f"u{number}", **stored)}
        )
        assert fast == plain
    fast, plain = pair.both("UpdateItem", {"TableName": TABLE, "Key": key, **members})
    assert fast == plain
    read = {"TableName": TABLE, "Key": key, "ConsistentRead": True}
    fast, plain = pair.both("GetItem", read)
    assert fast == plain


def test_the_shortcut_takes_plain_updates_and_leaves_the_rest(pair: Pair) -> None:
    """What the test above compares is the shortcut's own work, not moto's twice."""
    from moto.dynamodb.models import dynamodb_backends

    backend = dynamodb_backends[MotoBackend.account]["us-west-2"]
    key = {"pk": {"S": "taken"}, "sk": {"S": "s"}}
    plain = {
        "TableName": TABLE,
        "Key": key,
        "UpdateExpression": "ADD n :one",
        "ExpressionAttributeValues": {":one": {"N": "1"}},
    }
    assert fast_update(backend, plain) == b"{}"
    assert fast_update(backend, {**plain, "ConditionExpression": "attribute_exists(pk)"}) is None
    assert fast_update(backend, {**plain, "UpdateExpression": "ADD count :one"}) is None
    assert fast_update(backend, {**plain, "TableName": "no-such-table"}) is None


QUERIES: list[dict[str, Any]] = [
    {"KeyConditionExpression": "pk = :p"},
    {"KeyConditionExpression": "pk = :p", "ScanIndexForward": False, "Limit": 3},
    {"KeyConditionExpression": "pk = :p", "Limit": 12},  # exactly all: no LastEvaluatedKey
    {"KeyConditionExpression": "pk = :p AND sk BETWEEN :lo AND :hi", "Limit": 2},
    {"KeyConditionExpression": "pk = :p AND sk BETWEEN :lo AND :hi", "ScanIndexForward": False},
    {"KeyConditionExpression": "#p = :p and begins_with(#s, :pre)"},
    {"KeyConditionExpression": "pk = :p AND sk > :lo", "Limit": 4, "ScanIndexForward": False},
    {"KeyConditionExpression": "pk = :p AND sk <= :hi"},
    {"KeyConditionExpression": "pk = :p AND sk = :lo"},
    {"KeyConditionExpression": "pk = :p AND sk BETWEEN :hi AND :lo"},  # reversed: an error
    {"KeyConditionExpression": "pk = :none"},  # an empty partition
    {"KeyConditionExpression": "pk = :p AND sk > :lo", "FilterExpression": "n > :zero"},
]


@pytest.mark.parametrize("number", range(len(QUERIES)))
def test_queries_answer_as_moto_does(pair: Pair, number: int) -> None:
    if number == 0:
        for i in (5, 1, 11, 3, 7, 9, 0, 2, 4, 6, 8, 10):
            item = _item("q", n={"N": str(i)})
            item["sk"] = {"S": f"r#{i:02d}" if i % 4 else f"x#{i:02d}"}
            fast, plain = pair.both("PutItem", {"TableName": TABLE, "Item": item})
            assert fast == plain
    values = {
        ":p": {"S": "q"},
        ":lo": {"S": "r#03"},
        ":hi": {"S": "r#09"},
        ":pre": {"S": "r#"},
        ":none": {"S": "nobody"},
        ":zero": {"N": "0"},
    }
    query = {"TableName": TABLE, **QUERIES[number]}
    text = query["KeyConditionExpression"] + query.get("FilterExpression", "")
    query["ExpressionAttributeValues"] = {k: v for k, v in values.items() if k in text}
    if "#" in text:
        query["ExpressionAttributeNames"] = {"#p": "pk", "#s": "sk"}
    fast, plain = pair.both("Query", query)
    assert fast == plain
    from moto.dynamodb.models import dynamodb_backends

    taken = fast_query(dynamodb_backends[MotoBackend.account]["us-west-2"], query)
    assert (taken is not None) == (number not in (9, 11))  # moto's own: an error, a filter


def test_a_partition_keeps_its_order_as_items_come_and_go(pair: Pair) -> None:
    from moto.dynamodb.models import dynamodb_backends

    backend = dynamodb_backends[MotoBackend.account]["us-west-2"]
    query = {
        "TableName": TABLE,
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": {"S": "moving"}},
    }
    for step, (add, remove) in enumerate([("c", None), ("a", None), ("b", "c"), ("d", "a")]):
        pair.both(
            "PutItem", {"TableName": TABLE, "Item": {"pk": {"S": "moving"}, "sk": {"S": add}}}
        )
        if remove is not None:
            key = {"pk": {"S": "moving"}, "sk": {"S": remove}}
            pair.both("DeleteItem", {"TableName": TABLE, "Key": key})
        taken = fast_query(backend, query)
        assert taken is not None, step
        fast, plain = pair.both("Query", query)
        assert fast == plain
    assert [item["sk"]["S"] for item in json.loads(taken)["Items"]] == ["b", "d"]


def test_index_queries_follow_every_kind_of_write(pair: Pair) -> None:
    def put(pk: str, gpk: str) -> dict[str, Any]:
        return {"TableName": TABLE, "Item": {"pk": {"S": pk}, "sk": {"S": "s"}, "gpk": {"S": gpk}}}

    def key(pk: str) -> dict[str, Any]:
        return {"pk": {"S": pk}, "sk": {"S": "s"}}

    def move(pk: str, gpk: str, **extra: Any) -> dict[str, Any]:
        return {
            "TableName": TABLE,
            "Key": key(pk),
            "UpdateExpression": "SET gpk = :g",
            "ExpressionAttributeValues": {":g": {"S": gpk}, **extra.pop("values", {})},
            **extra,
        }

    steps: list[tuple[str, dict[str, Any]]] = [
        ("PutItem", put("i1", "G#a")),
        ("PutItem", put("i2", "G#a")),
        ("PutItem", put("i3", "G#b")),
        ("Query", {}),  # the index is filed here, then kept
        ("UpdateItem", move("i1", "G#b")),  # the short path
        ("UpdateItem", move("i2", "G#c", ConditionExpression="attribute_exists(pk)")),  # moto's
        ("DeleteItem", {"TableName": TABLE, "Key": key("i3")}),
        ("BatchWriteItem", {"RequestItems": {TABLE: [{"PutRequest": put("i4", "G#a")}]}}),
        (
            "TransactWriteItems",
            {"TransactItems": [{"Put": put("i5", "G#c")}, {"Update": move("i4", "G#b")}]},
        ),
        ("UpdateItem", {"TableName": TABLE, "Key": key("i5"), "UpdateExpression": "REMOVE gpk"}),
    ]
    for operation, payload in steps:
        if operation != "Query":
            fast, plain = pair.both(operation, payload)
            assert fast == plain, (operation, payload)
        for value in ("G#a", "G#b", "G#c"):
            query = {
                "TableName": TABLE,
                "IndexName": "by-g",
                "KeyConditionExpression": "gpk = :g",
                "ExpressionAttributeValues": {":g": {"S": value}},
            }
            fast, plain = pair.both("Query", query)
            assert fast == plain, (operation, value)
    held = fast[1]["Items"]
    assert [item["pk"]["S"] for item in held] == ["i2"]  # G#c: i2 moved there, i5 left it
    from moto.dynamodb.models import dynamodb_backends

    table = dynamodb_backends[MotoBackend.account]["us-west-2"].tables[TABLE]
    assert "_loadgen_index_maps" in vars(table)  # the fast side read the index's files


def test_a_cancelled_transaction_leaves_every_item_as_it_was(pair: Pair) -> None:
    before = {"pk": {"S": "t1"}, "sk": {"S": "s"}, "n": {"N": "1"}}
    pair.both("PutItem", {"TableName": TABLE, "Item": before})
    cancelled = {
        "TransactItems": [
            {"Put": {"TableName": TABLE, "Item": {**before, "n": {"N": "2"}}}},
            {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "t2"}, "sk": {"S": "s"}}}},
            {
                "ConditionCheck": {
                    "TableName": TABLE,
                    "Key": {"pk": {"S": "t3"}, "sk": {"S": "s"}},
                    "ConditionExpression": "attribute_exists(pk)",
                }
            },
        ]
    }
    fast, plain = pair.both("TransactWriteItems", cancelled)
    assert fast == plain
    assert fast[1]["__type"].endswith("TransactionCanceledException")
    for pk, expected in (("t1", before), ("t2", None)):
        read = {"TableName": TABLE, "Key": {"pk": {"S": pk}, "sk": {"S": "s"}}}
        fast, plain = pair.both("GetItem", read)
        assert fast == plain
        assert fast[1].get("Item") == expected
