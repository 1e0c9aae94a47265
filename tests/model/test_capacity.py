"""Capacity units: item sizes, AWS's worked examples, index writes, ConsumedCapacity shapes.

Expected sizes and index costs were measured on DynamoDB Local (AWS's own engine); the
differential test at the end re-checks random items against it when it is available.
"""

from __future__ import annotations

import base64
import random
from typing import Any

import pytest

from loadgen.errors import ConfigError
from loadgen.model.capacity import (
    OperationCost,
    charged_on,
    consumed_capacity_response,
    cost_of,
    item_size,
    key_value,
    page,
    read_units,
    rejected,
    value_size,
    write_units,
)
from loadgen.model.schema import TableSchema

KB = 1024


def sized(size: int, key: str = "k", **extra: dict[str, str]) -> dict[str, dict[str, str]]:
    """An item of exactly ``size`` bytes: pk (2 + len(key)) plus a "pad" string (3 + n)."""
    fixed = 2 + len(key) + 3 + sum(item_size({k: v}) for k, v in extra.items())
    assert size >= fixed
    return {"pk": {"S": key}, "pad": {"S": "x" * (size - fixed)}, **extra}


def table(name: str = "t", **extra: object) -> TableSchema:
    return TableSchema.from_create_table(
        {
            "TableName": name,
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "BillingMode": "PAY_PER_REQUEST",
            **extra,
        }
    )


def gsi_table() -> TableSchema:
    def gsi(name: str, projection: dict[str, object]) -> dict[str, object]:
        return {
            "IndexName": name,
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": projection,
        }

    return table(
        "gsit",
        GlobalSecondaryIndexes=[
            gsi("gkeys", {"ProjectionType": "KEYS_ONLY"}),
            gsi("gall", {"ProjectionType": "ALL"}),
            gsi("ginc", {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x"]}),
        ],
    )


TABLES = {"t": table(), "gsit": gsi_table()}


# Item sizes ----------------------------------------------------------------------------------

# Sizes of {"N": text} as DynamoDB Local counts them.
NUMBERS = {
    "0": 1, "-0": 1, "0.000": 1, "1": 2, "12": 2, "123": 3, "1234": 3, "10": 2, "100": 2,
    "120": 3, "1200": 2, "12000": 3, "-1": 3, "-12": 3, "-120": 4, "-1234": 4, "0.1": 2,
    "0.12": 2, "0.012": 3, "0.0012": 2, "0.001": 2, "0.05": 2, "1.5": 3, "1.50": 3,
    "12.5": 3, "10.5": 3, "1.05": 3, "12.34": 3, "1.234": 4, "-1.234": 5, "-0.5": 3,
    "007": 2, "1E10": 2, "1.2E3": 2, "1E-130": 2, "3.14159": 5, "123456": 4,
    "12345678901234567890123456789012345678": 20,
}  # fmt: skip


@pytest.mark.parametrize(("text", "size"), NUMBERS.items())
def test_number_sizes_count_digit_pairs_aligned_on_the_decimal_point(text: str, size: int) -> None:
    assert value_size({"N": text}) == size


@pytest.mark.parametrize(
    ("value", "size"),
    [
        ({"S": ""}, 0),
        ({"S": "h\u00e9\u20ac\U0001f600"}, 1 + 2 + 3 + 4),  # UTF-8 bytes, not characters
        ({"B": base64.b64encode(b"AAEC").decode()}, 4),  # raw bytes, not base64 text
        ({"B": b"\x00\x01\x02"}, 3),
        ({"BOOL": True}, 1),
        ({"NULL": True}, 1),
        ({"L": []}, 3),
        ({"M": {}}, 3),
        ({"L": [{"S": "ab"}, {"N": "1"}]}, 3 + (1 + 2) + (1 + 2)),
        ({"M": {"xy": {"S": "ab"}, "z": {"BOOL": False}}}, 3 + (1 + 2 + 2) + (1 + 1 + 1)),
        ({"L": [{"M": {"a": {"L": []}}}]}, 3 + 1 + (3 + 1 + 1 + 3)),
        ({"SS": ["a", "bc"]}, 3),
        ({"NS": ["1", "12", "123"]}, 2 + 2 + 3),
        ({"BS": [base64.b64encode(b"AAEC").decode()] * 2}, 8),
    ],
)
def test_value_sizes(value: dict[str, object], size: int) -> None:
    assert value_size(value) == size


def test_item_size_counts_attribute_names_in_utf8() -> None:
    assert item_size({"\u00e9": {"S": "a"}, "pk": {"N": "12"}}) == (2 + 1) + (2 + 2)


@pytest.mark.parametrize("value", [{"N": "abc"}, {"N": "NaN"}, {"B": "!!"}, {"Q": "x"}, {}])
def test_malformed_values_raise_config_error_naming_them(value: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        value_size(value)


def test_key_values_are_canonical() -> None:
    assert key_value({"N": "0042.10"}) == key_value({"N": "42.1"}) == "42.1"
    assert key_value({"N": "1E+3"}) == "1000"
    assert key_value({"N": "-0"}) == "0"
    assert key_value({"S": "a"}) == "a"
    assert key_value({"B": "AAE="}) == b"\x00\x01"


# AWS's worked examples ------------------------------------------------------------------------
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html


def test_read_units_round_to_4kb_by_consistency() -> None:
    assert read_units(3500, "strong") == 1
    assert read_units(3500, "eventual") == 0.5
    assert read_units(8 * KB, "strong") == 2
    assert read_units(8 * KB, "eventual") == 1
    assert read_units(8 * KB, "transactional") == 4
    assert read_units(10 * KB, "strong") == 3  # rounds to 12 KB
    assert read_units(0, "eventual") == 0.5


def test_write_units_round_to_1kb() -> None:
    assert write_units(1536) == 2
    assert write_units(1536, transactional=True) == 4
    assert write_units(0) == 1


def get(key: str = "k", consistent: bool = False) -> dict[str, object]:
    return {"TableName": "t", "Key": {"pk": {"S": key}}, "ConsistentRead": consistent}


def test_get_item_charges_the_item_or_the_minimum() -> None:
    found = cost_of("GetItem", get(consistent=True), tables=TABLES, returned=sized(3500))
    assert found.charges[0].units == 1
    assert found.charges[0].key == "k"
    assert cost_of("GetItem", get(), tables=TABLES, returned=sized(8 * KB)).total() == 1
    assert cost_of("GetItem", get(), tables=TABLES, returned=None).total() == 0.5
    assert cost_of("GetItem", get(consistent=True), tables=TABLES).total() == 1


def test_batch_get_rounds_each_item_but_query_rounds_the_sum() -> None:
    small, large = sized(1536, "a"), sized(6656, "b")
    keys = [{"pk": {"S": "a"}}, {"pk": {"S": "b"}}]
    batch = {"RequestItems": {"t": {"Keys": keys, "ConsistentRead": True}}}
    by_slot = cost_of("BatchGetItem", batch, tables=TABLES, returned=[small, large])
    assert by_slot.total() == 1 + 2  # 4 KB + 8 KB
    assert [len(group) for group in by_slot.groups] == [1, 1]  # throttled item by item
    by_response = cost_of("BatchGetItem", batch, tables=TABLES, returned={"t": [large, small]})
    assert by_response.total() == 3
    query = {
        "TableName": "t",
        "KeyConditionExpression": "pk = :k",
        "ExpressionAttributeValues": {":k": {"S": "a"}},
        "ConsistentRead": True,
    }
    assert cost_of("Query", query, tables=TABLES, returned=[small, large]).total() == 2  # 8 KB


def test_a_query_or_scan_is_charged_for_the_page_it_reads() -> None:
    # 20 items of 330 B of a Query with Limit 20: 6,600 B, two 4 KB blocks, halved (eventual).
    entries = [sized(330, f"u{i}") for i in range(500)]
    query = {
        "TableName": "t",
        "KeyConditionExpression": "pk = :k",
        "ExpressionAttributeValues": {":k": {"S": "u0"}},
        "Limit": 20,
    }
    assert len(page(entries, 20)) == 20
    assert cost_of("Query", query, tables=TABLES, returned=entries).total() == 1.0
    # Without a Limit a page stops once it has read 1 MB: 256 blocks and the item over them.
    many = [sized(4 * KB, f"u{i}") for i in range(1000)]
    read = page(many)
    assert len(read) == 256
    scan = {"TableName": "t"}
    assert cost_of("Scan", scan, tables=TABLES, returned=many).total() == 256 * 0.5


def test_put_charges_the_larger_of_before_and_after() -> None:
    put = {"TableName": "t", "Item": sized(512)}
    assert cost_of("PutItem", put, tables=TABLES).total() == 1
    assert cost_of("PutItem", put, tables=TABLES, before=sized(2560)).total() == 3
    update = {"TableName": "t", "Key": {"pk": {"S": "k"}}}
    assert (
        cost_of("UpdateItem", update, tables=TABLES, before=sized(100), after=sized(1536)).total()
        == 2
    )


def test_delete_charges_the_deleted_item_at_least_one_unit() -> None:
    delete = {"TableName": "t", "Key": {"pk": {"S": "k"}}}
    assert cost_of("DeleteItem", delete, tables=TABLES, before=sized(2560)).total() == 3
    assert cost_of("DeleteItem", delete, tables=TABLES).total() == 1


def test_transactions_double_every_item() -> None:
    request = {
        "TransactItems": [
            {"Put": {"TableName": "t", "Item": sized(1536, "a")}},
            {"ConditionCheck": {"TableName": "t", "Key": {"pk": {"S": "b"}}}},
            {"Delete": {"TableName": "t", "Key": {"pk": {"S": "c"}}}},
        ]
    }
    cost = cost_of("TransactWriteItems", request, tables=TABLES, before=[None, sized(100), None])
    assert [c.units for c in cost.charges] == [4, 2, 2]
    assert len(cost.groups) == 1  # all or nothing
    gets = {"TransactItems": [{"Get": get("a")}, {"Get": get("missing")}]}
    assert (
        cost_of("TransactGetItems", gets, tables=TABLES, returned=[sized(8 * KB), None]).total()
        == 4 + 2
    )


def test_scan_charges_what_it_evaluated_at_its_first_items_partition() -> None:
    evaluated = [sized(3000, "a"), sized(3000, "b")]
    cost = cost_of("Scan", {"TableName": "t"}, tables=TABLES, returned=evaluated)
    assert cost.total() == 1  # 6,000 bytes, eventually consistent: 2 x 4 KB x 0.5
    assert cost.charges[0].key == "a"
    assert cost_of("Scan", {"TableName": "t"}, tables=TABLES).charges[0].key is None


@pytest.mark.parametrize(
    "query",
    [
        {"KeyConditionExpression": "pk = :v", "ExpressionAttributeValues": {":v": {"S": "a"}}},
        {"KeyConditionExpression": ":v=pk", "ExpressionAttributeValues": {":v": {"S": "a"}}},
        {
            "KeyConditionExpression": "#s > :s AND #p = :v",
            "ExpressionAttributeNames": {"#p": "pk", "#s": "sk"},
            "ExpressionAttributeValues": {":v": {"S": "a"}, ":s": {"N": "1"}},
        },
        {"KeyConditions": {"pk": {"AttributeValueList": [{"S": "a"}], "ComparisonOperator": "EQ"}}},
    ],
)
def test_query_estimate_charges_the_partition_key_of_its_key_condition(
    query: dict[str, object],
) -> None:
    cost = cost_of("Query", {"TableName": "t", **query}, tables=TABLES)
    assert cost.charges[0].key == "a"
    assert cost.total() == 0.5


# Global secondary indexes ---------------------------------------------------------------------

BIG = "y" * 1500


def gsi_units(
    before: dict[str, Any] | None, after: dict[str, Any] | None, failed: bool = False
) -> dict[str | None, float]:
    update = {"TableName": "gsit", "Key": {"pk": {"S": "a"}}}
    cost = cost_of("UpdateItem", update, tables=TABLES, before=before, after=after, failed=failed)
    units: dict[str | None, float] = {}
    for charge in cost.charges:
        units[charge.index] = units.get(charge.index, 0) + charge.units
    return units


def item(**attributes: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": "a"}, **{name: {"S": value} for name, value in attributes.items()}}


def test_index_writes_match_dynamodb_local() -> None:
    # Each case replayed on DynamoDB Local with ReturnConsumedCapacity=INDEXES.
    new = item(g="1", big=BIG)
    assert gsi_units(None, new) == {None: 2, "gkeys": 1, "gall": 2, "ginc": 1}
    assert gsi_units(new, new) == {None: 2}  # nothing projected changed
    assert gsi_units(new, item(g="1", big="z" * 1500)) == {None: 2, "gall": 2}
    with_x = item(g="1", big=BIG, x="q")
    assert gsi_units(new, with_x) == {None: 2, "gall": 2, "ginc": 1}
    moved = item(g="2", big=BIG, x="q")
    assert gsi_units(with_x, moved) == {None: 2, "gkeys": 2, "gall": 4, "ginc": 2}
    assert gsi_units(moved, item(big=BIG, x="q")) == {None: 2, "gkeys": 1, "gall": 2, "ginc": 1}
    assert gsi_units(item(big=BIG), item(big=BIG, x="q")) == {None: 2}  # in no index


def test_a_moved_index_key_deletes_the_old_entry_and_puts_the_new_one() -> None:
    update = {"TableName": "gsit", "Key": {"pk": {"S": "a"}}}
    cost = cost_of("UpdateItem", update, tables=TABLES, before=item(g="1"), after=item(g="2"))
    assert [(c.index, c.key) for c in cost.charges if c.index == "gkeys"] == [
        ("gkeys", "1"),
        ("gkeys", "2"),
    ]


def test_failed_condition_charges_the_table_only() -> None:
    assert gsi_units(None, item(g="1"), failed=True) == {None: 1}
    # The larger of the stored item and the one the write would have made (AWS's example: a
    # 300 KB item and a 310 KB update that fails its condition consume 310).
    assert gsi_units(item(g="1"), item(g="1", big=BIG), failed=True) == {None: 2}


def test_what_an_error_is_charged() -> None:
    assert charged_on(None) == "all"
    assert charged_on("ConditionalCheckFailedException") == "table"
    for refused in (
        "ValidationException",
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "ResourceNotFoundException",
    ):
        assert charged_on(refused) == "nothing", refused
    cancelled = "TransactionCanceledException"
    assert charged_on(cancelled, ["None", "ConditionalCheckFailed"]) == "table"
    assert charged_on(cancelled, ["TransactionConflict", "None"]) == "table"
    assert charged_on(cancelled, ["ThrottlingError", "None"]) == "nothing"
    assert charged_on(cancelled) == "table"  # reasons not reported
    # Refused for what it asked (at any rate), or for capacity (served once it allows):
    assert rejected("ValidationException") and rejected("ResourceNotFoundException")
    assert not rejected("ThrottlingException") and not rejected(cancelled, ["ThrottlingError"])
    assert not rejected("ConditionalCheckFailedException") and not rejected(None)


def test_a_cancelled_transaction_charges_its_items_twice_and_no_index() -> None:
    put = {"Put": {"TableName": "gsit", "Item": item(g="1", big=BIG)}}
    request = {"TransactItems": [put]}
    served = cost_of("TransactWriteItems", request, tables=TABLES)
    cancelled = cost_of("TransactWriteItems", request, tables=TABLES, failed=True)
    assert [(c.index, c.units) for c in cancelled.charges] == [(None, 4)]
    assert {(c.index, c.units) for c in served.charges} == {
        (None, 4),
        ("gkeys", 1),
        ("gall", 2),
        ("ginc", 1),
    }


def test_an_index_write_in_a_transaction_costs_what_it_costs_outside_one() -> None:
    # The transactional rate is the table's two underlying writes of each item; its index
    # entries are written once, after the commit (docs/cost.md: Transactions and their
    # indexes). DynamoDB Local charges them twice.
    new = item(g="1", big=BIG)
    plain = cost_of("PutItem", {"TableName": "gsit", "Item": new}, tables=TABLES)
    request = {"TransactItems": [{"Put": {"TableName": "gsit", "Item": new}}]}
    transaction = cost_of("TransactWriteItems", request, tables=TABLES)
    indexes = {c.index: c.units for c in transaction.charges if c.index}
    assert indexes == {c.index: c.units for c in plain.charges if c.index}
    assert indexes == {"gkeys": 1, "gall": 2, "ginc": 1}
    assert [c.units for c in transaction.charges if c.index is None] == [4]


def test_update_estimate_assumes_every_index_holding_the_item_is_rewritten() -> None:
    assert gsi_units(item(g="1", big=BIG), None) == {None: 2, "gkeys": 1, "gall": 2, "ginc": 1}


def test_index_reads_are_eventually_consistent() -> None:
    query = {
        "TableName": "gsit",
        "IndexName": "gall",
        "KeyConditionExpression": "g = :g",
        "ExpressionAttributeValues": {":g": {"S": "1"}},
        "ConsistentRead": True,
    }
    cost = cost_of("Query", query, tables=TABLES, returned=[item(g="1", big=BIG)])
    assert [(c.index, c.units, c.key) for c in cost.charges] == [("gall", 0.5, "1")]


def test_local_index_writes_are_reported_as_local() -> None:
    schema = table(
        "l",
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        LocalSecondaryIndexes=[
            {
                "IndexName": "bydate",
                "KeySchema": [
                    {"AttributeName": "pk", "KeyType": "HASH"},
                    {"AttributeName": "d", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
    )
    put = {"TableName": "l", "Item": {"pk": {"S": "a"}, "sk": {"S": "1"}, "d": {"S": "x"}}}
    cost = cost_of("PutItem", put, tables={"l": schema})
    assert consumed_capacity_response(cost, "INDEXES") == {
        "TableName": "l",
        "CapacityUnits": 2.0,
        "Table": {"CapacityUnits": 1.0},
        "LocalSecondaryIndexes": {"bydate": {"CapacityUnits": 1.0}},
    }


# ConsumedCapacity -----------------------------------------------------------------------------


def test_consumed_capacity_shapes_match_dynamodb_local() -> None:
    put = {"TableName": "gsit", "Item": item(g="1", big=BIG)}
    cost = cost_of("PutItem", put, tables=TABLES)
    assert consumed_capacity_response(cost, "NONE") is None
    assert consumed_capacity_response(cost, "TOTAL") == {"TableName": "gsit", "CapacityUnits": 6.0}
    assert consumed_capacity_response(cost, "INDEXES") == {
        "TableName": "gsit",
        "CapacityUnits": 6.0,
        "Table": {"CapacityUnits": 2.0},
        "GlobalSecondaryIndexes": {
            "gkeys": {"CapacityUnits": 1.0},
            "gall": {"CapacityUnits": 2.0},
            "ginc": {"CapacityUnits": 1.0},
        },
    }
    query = {
        "TableName": "gsit",
        "IndexName": "gall",
        "KeyConditionExpression": "g = :g",
        "ExpressionAttributeValues": {":g": {"S": "1"}},
    }
    read = cost_of("Query", query, tables=TABLES, returned=[item(g="1", big=BIG)])
    assert consumed_capacity_response(read, "INDEXES") == {
        "TableName": "gsit",
        "CapacityUnits": 0.5,
        "Table": {"CapacityUnits": 0.0},
        "GlobalSecondaryIndexes": {"gall": {"CapacityUnits": 0.5}},
    }


def test_batch_and_transaction_capacity_is_a_list_per_table() -> None:
    batch = {
        "RequestItems": {
            "gsit": [
                {"PutRequest": {"Item": {"pk": {"S": "c"}, "g": {"S": "3"}}}},
                {"DeleteRequest": {"Key": {"pk": {"S": "b"}}}},
            ],
            "t": [{"PutRequest": {"Item": sized(100)}}],
        }
    }
    before = [None, {"pk": {"S": "b"}, "g": {"S": "1"}, "big": {"S": BIG}}, None]
    cost = cost_of("BatchWriteItem", batch, tables=TABLES, before=before)
    assert consumed_capacity_response(cost, "INDEXES") == [
        {
            "TableName": "gsit",
            "CapacityUnits": 10.0,
            "Table": {"CapacityUnits": 3.0},
            "GlobalSecondaryIndexes": {
                "gkeys": {"CapacityUnits": 2.0},
                "gall": {"CapacityUnits": 3.0},
                "ginc": {"CapacityUnits": 2.0},
            },
        },
        {"TableName": "t", "CapacityUnits": 1.0, "Table": {"CapacityUnits": 1.0}},
    ]
    processed = cost.select([0, 1])  # the item for "t" came back unprocessed
    assert consumed_capacity_response(processed, "TOTAL") == [
        {"TableName": "gsit", "CapacityUnits": 10.0}
    ]
    transaction = {"TransactItems": [{"Put": {"TableName": "t", "Item": sized(100)}}]}
    assert consumed_capacity_response(
        cost_of("TransactWriteItems", transaction, tables=TABLES), "TOTAL"
    ) == [{"TableName": "t", "CapacityUnits": 2.0, "WriteCapacityUnits": 2.0}]


def test_bad_mode_and_unknown_operation_raise() -> None:
    cost = OperationCost("GetItem", ())
    with pytest.raises(ConfigError, match="'ALL'"):
        consumed_capacity_response(cost, "ALL")
    with pytest.raises(ConfigError, match="'ExecuteStatement'"):
        cost_of("ExecuteStatement", {}, tables=TABLES)
    with pytest.raises(ConfigError, match="'nope'"):
        cost_of("GetItem", {"TableName": "nope", "Key": {}}, tables=TABLES)


# Schemas ---------------------------------------------------------------------------------------


def test_schema_from_create_table_and_describe_table() -> None:
    create: dict[str, Any] = {
        "TableName": "p",
        "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "ProvisionedThroughput": {"ReadCapacityUnits": 100, "WriteCapacityUnits": 50},
        "GlobalSecondaryIndexes": [
            {
                "IndexName": "g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
                "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 2},
            }
        ],
    }
    schema = TableSchema.from_create_table(create)
    assert (schema.on_demand, schema.read_capacity, schema.write_capacity) == (False, 100, 50)
    assert schema.key_attributes == ("pk", "sk")
    assert schema.index("g").write_capacity == 2
    described = {
        **create,
        "BillingModeSummary": {"BillingMode": "PAY_PER_REQUEST"},
        "ProvisionedThroughput": {"ReadCapacityUnits": 0, "WriteCapacityUnits": 0},
        "OnDemandThroughput": {"MaxReadRequestUnits": -1, "MaxWriteRequestUnits": 500},
        "GlobalSecondaryIndexes": [
            {**create["GlobalSecondaryIndexes"][0], "IndexStatus": "ACTIVE"}
        ],
    }
    on_demand = TableSchema.from_description(described)
    assert on_demand.on_demand
    assert (on_demand.max_read_units, on_demand.max_write_units) == (None, 500)
    assert on_demand.index("g").read_capacity == 0


def test_schema_follows_update_table() -> None:
    schema = table("u")
    updated = schema.with_update(
        {
            "BillingMode": "PROVISIONED",
            "ProvisionedThroughput": {"ReadCapacityUnits": 10, "WriteCapacityUnits": 20},
            "AttributeDefinitions": [{"AttributeName": "g", "AttributeType": "N"}],
            "GlobalSecondaryIndexUpdates": [
                {
                    "Create": {
                        "IndexName": "g",
                        "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                        "Projection": {"ProjectionType": "ALL"},
                        "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
                    }
                }
            ],
        }
    )
    assert (updated.read_capacity, updated.write_capacity) == (10, 20)
    assert updated.index("g").projection == "ALL"
    raised = updated.with_update(
        {
            "GlobalSecondaryIndexUpdates": [
                {
                    "Update": {
                        "IndexName": "g",
                        "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 4},
                    }
                }
            ]
        }
    )
    assert raised.index("g").write_capacity == 4
    dropped = raised.with_update({"GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "g"}}]})
    assert dropped.global_indexes == ()


@pytest.mark.parametrize(
    "body",
    [
        {"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]},
        {"TableName": "x", "KeySchema": [{"AttributeName": "pk", "KeyType": "RANGE"}]},
        {"TableName": "x", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]},
        {
            "TableName": "x",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "ProvisionedThroughput": {"ReadCapacityUnits": -1, "WriteCapacityUnits": 1},
        },
    ],
)
def test_bad_schemas_raise_config_error(body: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        TableSchema.from_create_table(body)


# Differential test against DynamoDB Local -----------------------------------------------------


def random_value(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    kinds = ["S", "N", "B", "BOOL", "NULL", "SS", "NS"] + (["L", "M"] if depth < 2 else [])
    kind = rng.choice(kinds)
    if kind == "S":
        return {"S": "".join(rng.choice("ab\u00e9\u20ac") for _ in range(rng.randrange(60)))}
    if kind == "N":
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 20)))
        point = rng.randrange(len(digits) + 1)
        return {
            "N": rng.choice(["", "-"]) + (digits[:point] or "0") + "." + (digits[point:] or "0")
        }
    if kind == "B":
        return {"B": base64.b64encode(rng.randbytes(rng.randrange(1, 40))).decode()}
    if kind == "BOOL":
        return {"BOOL": rng.random() < 0.5}
    if kind == "NULL":
        return {"NULL": True}
    if kind == "SS":
        return {"SS": sorted({f"s{rng.randrange(1000)}" for _ in range(rng.randrange(1, 5))})}
    if kind == "NS":
        return {
            "NS": sorted({str(rng.randrange(-(10**6), 10**6)) for _ in range(rng.randrange(1, 5))})
        }
    if kind == "L":
        return {"L": [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]}
    return {"M": {f"k{i}": random_value(rng, depth + 1) for i in range(rng.randrange(4))}}


def for_boto3(value: dict[str, Any]) -> dict[str, Any]:
    """boto3 base64-encodes B itself: hand it raw bytes."""
    ((kind, v),) = value.items()
    if kind == "B":
        return {"B": base64.b64decode(v)}
    if kind == "L":
        return {"L": [for_boto3(e) for e in v]}
    if kind == "M":
        return {"M": {k: for_boto3(e) for k, e in v.items()}}
    return value


@pytest.mark.dynamodb_local
def test_item_sizes_agree_with_dynamodb_local(request: pytest.FixtureRequest) -> None:
    try:
        endpoint = request.getfixturevalue("dynamodb_local_endpoint")
    except pytest.FixtureLookupError:
        pytest.skip("no dynamodb_local_endpoint fixture")
    import boto3

    client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
    name = f"capacity-sizes-{random.randrange(10**9)}"
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    try:
        rng = random.Random(7)
        for n in range(60):
            # Pad each random item to just under or over a 1 KB boundary, so that one byte of
            # disagreement changes the write units.
            attributes = {f"a{i}": random_value(rng) for i in range(rng.randrange(1, 8))}
            core = {"pk": {"S": f"k{n}"}, **attributes}
            base = item_size(core) + 3
            boundary = KB * (base // KB + 1)
            previous = None
            for size in (boundary, boundary + 1):
                entry = {**core, "pad": {"S": "x" * (size - base)}}
                assert item_size(entry) == size
                body = {"TableName": name, "Item": entry}
                sent = client.put_item(
                    TableName=name,
                    Item={k: for_boto3(v) for k, v in entry.items()},
                    ReturnConsumedCapacity="TOTAL",
                )
                expected = cost_of("PutItem", body, tables={name: table(name)}, before=previous)
                assert sent["ConsumedCapacity"]["CapacityUnits"] == expected.total(), entry
                previous = entry
    finally:
        client.delete_table(TableName=name)
