"""The pure parts of the emulator's protocol handling: no server, no backend."""

from __future__ import annotations

from typing import Any

import pytest

from loadgen.emulator.pricing import ItemShadow
from loadgen.emulator.wire import (
    WireError,
    batch_entries,
    batch_select,
    crc32,
    dumps,
    error_code,
    merge_unprocessed,
    operation_of,
    tables_of,
    transaction_canceled,
)
from loadgen.model.capacity import item_size
from loadgen.model.itemsize import SizedItem
from loadgen.model.update_expression import apply_update

KEY = {"pk": {"S": "a"}}


def update(before: dict[str, Any] | None, expression: str, **values: Any) -> Any:
    names = {f"#{name}": name for name in ("n", "s", "l", "tags", "g")}
    request: dict[str, Any] = {"UpdateExpression": expression, "ExpressionAttributeNames": names}
    if values:
        request["ExpressionAttributeValues"] = {f":{k}": v for k, v in values.items()}
    return apply_update(before, KEY, request)


def test_operation_of_reads_the_target() -> None:
    assert operation_of("DynamoDB_20120810.TransactWriteItems") == "TransactWriteItems"
    for target in (None, "", "DynamoDB_20120810.Nope", "DynamoDB_20111205.GetItem", "GetItem"):
        with pytest.raises(WireError) as raised:
            operation_of(target)
        assert raised.value.status == 400
        assert error_code(raised.value.body()) == "UnknownOperationException"


def test_crc32_is_zlibs_unsigned_decimal() -> None:
    assert crc32(b"{}") == "2745614147"  # what moto and DynamoDB Local send for "{}"
    assert dumps({"a": [1, "é"]}) == '{"a":[1,"é"]}'.encode()


def test_tables_of_every_shape() -> None:
    assert tables_of("GetItem", {"TableName": "t"}) == ["t"]
    assert tables_of("BatchWriteItem", {"RequestItems": {"a": [], "b": []}}) == ["a", "b"]
    transact = {"TransactItems": [{"Put": {"TableName": "a"}}, {"Get": {"TableName": "a"}}]}
    assert tables_of("TransactWriteItems", transact) == ["a"]


def test_set_add_remove_delete() -> None:
    item = update(None, "SET #s = :s, #n = :n", s={"S": "open"}, n={"N": "5"})
    assert item == {"pk": {"S": "a"}, "s": {"S": "open"}, "n": {"N": "5"}}
    item = update(item, "ADD #n :one, #tags :t", one={"N": "1"}, t={"SS": ["x", "y"]})
    assert item["n"] == {"N": "6"} and item["tags"] == {"SS": ["x", "y"]}
    item = update(item, "DELETE #tags :t REMOVE #s", t={"SS": ["x"]})
    assert item == {"pk": {"S": "a"}, "n": {"N": "6"}, "tags": {"SS": ["y"]}}
    item = update(item, "DELETE #tags :t", t={"SS": ["y"]})
    assert "tags" not in item


def test_set_arithmetic_and_functions_read_the_item_before_the_update() -> None:
    before = {"pk": {"S": "a"}, "n": {"N": "10"}}
    item = update(before, "SET #n = #n - :d, #g = #n", d={"N": "2.5"})
    assert item["n"] == {"N": "7.5"} and item["g"] == {"N": "10"}
    item = update(
        before, "SET #s = if_not_exists(#s, :z), #n = if_not_exists(#n, :z)", z={"N": "0"}
    )
    assert item["s"] == {"N": "0"} and item["n"] == {"N": "10"}
    item = update(
        {**before, "l": {"L": [{"N": "1"}]}}, "SET #l = list_append(#l, :x)", x={"L": [{"S": "b"}]}
    )
    assert item["l"] == {"L": [{"N": "1"}, {"S": "b"}]}
    assert before == {"pk": {"S": "a"}, "n": {"N": "10"}}  # never mutated


def test_keywords_and_plain_names_are_case_insensitive_clauses() -> None:
    item = apply_update(
        None,
        KEY,
        {
            "UpdateExpression": "set status_code = :v",
            "ExpressionAttributeValues": {":v": {"N": "1"}},
        },
    )
    assert item == {"pk": {"S": "a"}, "status_code": {"N": "1"}}


@pytest.mark.parametrize(
    "expression",
    [
        "SET a.b = :v",
        "SET a[0] = :v",
        "SET #n = size(#n)",
        "SET #n = :v +",
        "FROB #n :v",
        "SET #n :v",
    ],
)
def test_updates_beyond_the_reader_are_unknown(expression: str) -> None:
    request = {
        "UpdateExpression": expression,
        "ExpressionAttributeNames": {"#n": "n"},
        "ExpressionAttributeValues": {":v": {"N": "1"}},
    }
    assert apply_update({"pk": {"S": "a"}, "n": {"N": "1"}}, KEY, request) is None


def test_legacy_attribute_updates() -> None:
    request = {
        "AttributeUpdates": {
            "n": {"Action": "ADD", "Value": {"N": "2"}},
            "s": {"Action": "PUT", "Value": {"S": "x"}},
            "gone": {"Action": "DELETE"},
        }
    }
    before = {"pk": {"S": "a"}, "n": {"N": "1"}, "gone": {"S": "y"}}
    assert apply_update(before, KEY, request) == {
        "pk": {"S": "a"},
        "n": {"N": "3"},
        "s": {"S": "x"},
    }


def test_an_update_the_size_of_which_is_known_prices_exactly() -> None:
    item = update(None, "SET #s = :big", big={"S": "x" * 2000})
    assert item_size(item) == 2 + 1 + 1 + 2000


@pytest.mark.parametrize(
    "expression",
    [
        "SET #s = :s",
        "SET #n = #n + :one",
        "SET #g = :s",
        "SET #s = #n",
        "ADD #tags :t",
        "DELETE #tags :t",
        "REMOVE #l",
        "REMOVE #n SET #g = :s",
        "SET #l = list_append(#l, :l)",
    ],
)
def test_a_stored_item_updated_is_sized_as_if_counted_whole(expression: str) -> None:
    # The emulator's stored items carry their size; an update counts only what it changed.
    before = {
        "pk": {"S": "a"},
        "n": {"N": "99"},
        "s": {"S": "open"},
        "l": {"L": [{"N": "1"}]},
        "tags": {"SS": ["x", "z"]},
        **{f"c{i}": {"N": str(i * 7)} for i in range(50)},
    }
    values = {"s": {"S": "closed, at length"}, "one": {"N": "1"}, "t": {"SS": ["x", "y"]}}
    values["l"] = {"L": [{"S": "more"}]}
    used = {k: v for k, v in values.items() if f":{k}" in expression}
    plain, sized = update(before, expression, **used), update(SizedItem(before), expression, **used)
    assert type(sized) is SizedItem and sized == plain
    assert item_size(sized) == sum(item_size({k: v}) for k, v in plain.items())


def test_shadow_forgets_least_recent_first() -> None:
    shadow = ItemShadow(2)
    for key in "abc":
        shadow.put("t", (key,), {"pk": {"S": key}})
        if key == "b":
            shadow.get("t", ("a",))  # a is now more recent than b
    assert shadow.get("t", ("b",)) is None
    assert shadow.get("t", ("a",)) is not None and shadow.get("t", ("c",)) is not None
    shadow.put("t", ("a",), None)
    assert shadow.get("t", ("a",)) is None and len(shadow) == 1
    shadow.put("u", ("c",), {"pk": {"S": "c"}})
    shadow.drop_table("t")
    assert shadow.get("t", ("c",)) is None and shadow.get("u", ("c",)) is not None
    with pytest.raises(ValueError, match="-1"):
        ItemShadow(-1)
    none = ItemShadow(0)
    none.put("t", ("a",), {"pk": {"S": "a"}})
    assert len(none) == 0


def test_batch_select_keeps_order_and_table_parameters() -> None:
    request = {
        "RequestItems": {
            "a": {"Keys": [{"k": 1}, {"k": 2}], "ConsistentRead": True},
            "b": {"Keys": [{"k": 3}], "ProjectionExpression": "k"},
        }
    }
    assert [key for _, key in batch_entries(request, "BatchGetItem")] == [
        {"k": 1},
        {"k": 2},
        {"k": 3},
    ]
    assert batch_select(request, "BatchGetItem", [1, 2]) == {
        "a": {"Keys": [{"k": 2}], "ConsistentRead": True},
        "b": {"Keys": [{"k": 3}], "ProjectionExpression": "k"},
    }
    assert batch_select(request, "BatchGetItem", [0]) == {
        "a": {"Keys": [{"k": 1}], "ConsistentRead": True}
    }
    writes = {
        "RequestItems": {"a": [{"PutRequest": 1}, {"PutRequest": 2}], "b": [{"DeleteRequest": 3}]}
    }
    assert batch_select(writes, "BatchWriteItem", [0, 2]) == {
        "a": [{"PutRequest": 1}],
        "b": [{"DeleteRequest": 3}],
    }


def test_merge_unprocessed_adds_the_backends_own() -> None:
    ours = {"a": {"Keys": [{"k": 1}], "ConsistentRead": True}}
    theirs = {"a": {"Keys": [{"k": 2}], "ConsistentRead": True}, "b": {"Keys": [{"k": 3}]}}
    assert merge_unprocessed(ours, theirs) == {
        "a": {"Keys": [{"k": 1}, {"k": 2}], "ConsistentRead": True},
        "b": {"Keys": [{"k": 3}]},
    }
    assert merge_unprocessed({"a": [1]}, {"a": [2]}) == {"a": [1, 2]}
    assert merge_unprocessed({"a": [1]}, None) == {"a": [1]}


def test_transaction_canceled_lists_codes_in_order() -> None:
    body = transaction_canceled(["None", "ThrottlingError"], {1: "slow down"})
    assert body["__type"].endswith("#TransactionCanceledException")
    assert body["CancellationReasons"] == [
        {"Code": "None"},
        {"Code": "ThrottlingError", "Message": "slow down"},
    ]
    assert body["Message"].endswith("[None, ThrottlingError]")
