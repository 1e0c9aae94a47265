"""The index entries a write touches, read from the schema and the request alone."""

from __future__ import annotations

from typing import Any

from loadgen.model.index_writes import index_writes, set_values
from loadgen.model.schema import TableSchema


def s(value: str) -> dict[str, str]:
    return {"S": value}


SCHEMA = TableSchema.from_create_table(
    {
        "TableName": "chat",
        "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        "AttributeDefinitions": [
            {"AttributeName": n, "AttributeType": "S"}
            for n in ("pk", "sk", "GSI1PK", "GSI1SK", "lsk")
        ],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": "GSI1",
                "KeySchema": [
                    {"AttributeName": "GSI1PK", "KeyType": "HASH"},
                    {"AttributeName": "GSI1SK", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            },
            {
                "IndexName": "inverted",
                "KeySchema": [
                    {"AttributeName": "sk", "KeyType": "HASH"},
                    {"AttributeName": "pk", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            },
        ],
        "LocalSecondaryIndexes": [
            {
                "IndexName": "by-lsk",
                "KeySchema": [
                    {"AttributeName": "pk", "KeyType": "HASH"},
                    {"AttributeName": "lsk", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        "BillingMode": "PAY_PER_REQUEST",
    }
)
TABLES = {"chat": SCHEMA}


def update(expression: str, values: dict[str, Any], names: dict[str, str] | None = None) -> Any:
    request: dict[str, Any] = {
        "TableName": "chat",
        "Key": {"pk": s("USER#1"), "sk": s("PROFILE")},
        "UpdateExpression": expression,
        "ExpressionAttributeValues": values,
    }
    if names:
        request["ExpressionAttributeNames"] = names
    return request


def test_a_put_writes_every_index_whose_keys_the_item_holds() -> None:
    item = {"pk": s("USER#1"), "sk": s("PROFILE"), "GSI1PK": s("STATUS#online")}
    # GSI1 needs GSI1SK too: the item is not in it. The inverted index holds every item.
    assert index_writes("PutItem", {"TableName": "chat", "Item": item}, TABLES) == [
        ("chat", "inverted", "PROFILE")
    ]
    item |= {"GSI1SK": s("USER#1"), "lsk": s("2026")}
    assert index_writes("PutItem", {"TableName": "chat", "Item": item}, TABLES) == [
        ("chat", "GSI1", "STATUS#online"),
        ("chat", "inverted", "PROFILE"),
        ("chat", "by-lsk", "USER#1"),
    ]


def test_an_update_that_sets_an_index_key_writes_the_new_key() -> None:
    request = update(
        "SET #s = :s, GSI1PK = :g",
        {":s": s("online"), ":g": s("STATUS#online")},
        {"#s": "status"},
    )
    assert index_writes("UpdateItem", request, TABLES) == [
        ("chat", "GSI1", "STATUS#online"),
        ("chat", "inverted", "PROFILE"),
    ]


def test_an_update_of_a_local_index_key_takes_the_partition_key_from_the_key() -> None:
    request = update("SET lsk = :v ADD n :one", {":v": s("2026"), ":one": {"N": "1"}})
    assert ("chat", "by-lsk", "USER#1") in index_writes("UpdateItem", request, TABLES)


def test_an_update_of_other_attributes_writes_only_the_index_on_table_keys() -> None:
    request = update("SET #n = #n + :one", {":one": {"N": "1"}}, {"#n": "n"})
    assert index_writes("UpdateItem", request, TABLES) == [("chat", "inverted", "PROFILE")]


def test_computed_values_and_removals_are_not_taken_as_new_keys() -> None:
    request = update("SET GSI1PK = if_not_exists(GSI1PK, :g) REMOVE lsk", {":g": s("STATUS#x")})
    assert set_values(request) == {}
    assert index_writes("UpdateItem", request, TABLES) == [("chat", "inverted", "PROFILE")]


def test_a_delete_writes_nothing_known() -> None:
    request = {"TableName": "chat", "Key": {"pk": s("USER#1"), "sk": s("PROFILE")}}
    assert index_writes("DeleteItem", request, TABLES) == []


def test_batch_puts_and_transaction_puts_and_updates() -> None:
    item = {"pk": s("U"), "sk": s("S"), "GSI1PK": s("G"), "GSI1SK": s("H")}
    batch = {
        "RequestItems": {
            "chat": [
                {"PutRequest": {"Item": item}},
                {"DeleteRequest": {"Key": {"pk": s("U"), "sk": s("T")}}},
            ],
            "unknown-table": [{"PutRequest": {"Item": item}}],
        }
    }
    assert index_writes("BatchWriteItem", batch, TABLES) == [
        ("chat", "GSI1", "G"),
        ("chat", "inverted", "S"),
    ]
    transaction = {
        "TransactItems": [
            {"Put": {"TableName": "chat", "Item": item}},
            {"Update": update("SET GSI1PK = :g", {":g": s("G2")})},
            {"Delete": {"TableName": "chat", "Key": {"pk": s("U"), "sk": s("S")}}},
            {"ConditionCheck": {"TableName": "chat", "Key": {"pk": s("U"), "sk": s("S")}}},
        ]
    }
    assert index_writes("TransactWriteItems", transaction, TABLES) == [
        ("chat", "GSI1", "G"),
        ("chat", "inverted", "S"),
        ("chat", "GSI1", "G2"),
        ("chat", "inverted", "PROFILE"),
    ]


def test_reads_and_malformed_requests_write_no_index() -> None:
    assert index_writes("Query", {"TableName": "chat"}, TABLES) == []
    assert index_writes("PutItem", {"TableName": "chat"}, TABLES) == []
    assert index_writes("UpdateItem", {"TableName": "nope", "Key": {}}, TABLES) == []
