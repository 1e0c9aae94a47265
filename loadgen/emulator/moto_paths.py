"""Shorter paths through moto for the requests a load test sends most.

moto serves every request the way its tests need: an UpdateItem is parsed twice into a tree,
walked by ten validators and deep-copied (400-800 us for ``ADD #c :one``); a Query on an index
reads every item of the table. `MotoBackend` answers those requests here instead, on moto's
own tables, wherever the answer is certain to be moto's (and DynamoDB's); anything else,
including every request that should fail, goes down moto's own path and reads as moto writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadgen.emulator.update_expression import apply_update_exactly
from loadgen.model.capacity import item_size

__all__ = ["fast_batch_get", "fast_update"]

_RETURN_VALUES = frozenset({"NONE", "ALL_OLD", "ALL_NEW", "UPDATED_OLD", "UPDATED_NEW"})
_UPDATE_MEMBERS = frozenset(
    {
        "TableName",
        "Key",
        "UpdateExpression",
        "ExpressionAttributeNames",
        "ExpressionAttributeValues",
        "ReturnValues",
        "ReturnConsumedCapacity",
        "ReturnItemCollectionMetrics",
    }
)
_BATCH_GET_KEYS = 100
_BATCH_GET_BYTES = 16 * 1024 * 1024
_LARGEST_ITEM = 300 * 1024
"""Items whose JSON is larger go down moto's path, which knows the 400 KB rule exactly."""


def fast_update(backend: Any, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """Carry out an unconditional UpdateItem on moto's table; its answer, or None for moto.

    ``backend`` is moto's DynamoDB backend of the request's account and region. Taken here:
    an UpdateExpression `apply_update_exactly` reads (SET, REMOVE, ADD of numbers, top-level
    attributes) with a well-formed key, touching neither a key attribute of the table nor one
    of an index unless it writes a non-empty value of the attribute's declared type. The new
    item is stored with moto's own ``put_item``, so streams and index checks stay moto's.
    """
    if not _UPDATE_MEMBERS.issuperset(payload):
        return None
    return_values = payload.get("ReturnValues", "NONE")
    table = backend.tables.get(payload.get("TableName"))
    key = payload.get("Key")
    if return_values not in _RETURN_VALUES or table is None or not isinstance(key, dict):
        return None
    types = {d["AttributeName"]: d["AttributeType"] for d in table.attr}
    key_names = [table.hash_key_attr] + ([table.range_key_attr] if table.range_key_attr else [])
    if len(key) != len(key_names) or not all(_typed(key.get(n), types[n]) for n in key_names):
        return None
    held = table.get_item(_dynamo(key[table.hash_key_attr]), _range(table, key))
    before = held.to_json()["Attributes"] if held is not None else None
    done = apply_update_exactly(before, key, payload, _reserved())
    if done is None:
        return None
    after, named = done
    if named & set(key_names):
        return None  # DynamoDB refuses to update a key attribute: moto says so in its words
    for name in named & _index_keys(table):
        if name in after and not _typed(after[name], types.get(name, "")):
            return None
    if len(repr(after)) > _LARGEST_ITEM:
        return None
    table.put_item(after, overwrite=True)
    return _answer(return_values, before, after, named)


def fast_batch_get(backend: Any, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """Read a BatchGetItem's keys from moto's tables; its answer, or None for moto.

    Taken here: whole items (no projection), at most 100 well-formed keys, none twice. moto's
    own path computes each item's size and writes its answer through botocore's serializer,
    about 50 us a key; this reads each key in a few.
    """
    requested = payload.get("RequestItems")
    if set(payload) - {"RequestItems", "ReturnConsumedCapacity"} or not isinstance(requested, dict):
        return None
    responses: dict[str, list[Any]] = {}
    count = 0
    for name, spec in requested.items():
        table = backend.tables.get(name)
        keys = spec.get("Keys") if isinstance(spec, dict) else None
        if table is None or set(spec) - {"Keys", "ConsistentRead"} or not isinstance(keys, list):
            return None
        count += len(keys)
        types = {d["AttributeName"]: d["AttributeType"] for d in table.attr}
        key_names = [table.hash_key_attr] + [table.range_key_attr] * bool(table.range_key_attr)
        seen: list[Any] = []
        found = responses[name] = []
        for key in keys:
            if (
                count > _BATCH_GET_KEYS
                or not isinstance(key, dict)
                or len(key) != len(key_names)
                or not all(_typed(key.get(n), types[n]) for n in key_names)
                or key in seen
            ):
                return None
            seen.append(key)
            held = table.get_item(_dynamo(key[table.hash_key_attr]), _range(table, key))
            if held is not None:
                found.append(held.to_json()["Attributes"])
    if (
        count * _LARGEST_ITEM > _BATCH_GET_BYTES
        and sum(item_size(item) for found in responses.values() for item in found)
        > _BATCH_GET_BYTES // 2
    ):
        return None  # near the 16 MB an answer holds: moto decides what is left unprocessed
    return {"Responses": responses, "UnprocessedKeys": {}}


def _answer(
    return_values: str,
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any],
    named: frozenset[str],
) -> dict[str, Any]:
    if return_values == "ALL_NEW":
        return {"Attributes": after}
    if return_values == "ALL_OLD":
        return {"Attributes": before} if before else {}
    if return_values == "UPDATED_NEW":
        chosen = {n: after[n] for n in named if n in after}
    elif return_values == "UPDATED_OLD":
        chosen = {n: before[n] for n in named if before and n in before}
    else:
        return {}
    return {"Attributes": chosen} if chosen else {}


def _typed(value: Any, declared: str) -> bool:
    """A non-empty scalar of the declared key type (S, N or B)."""
    if not isinstance(value, dict) or len(value) != 1:
        return False
    ((tag, text),) = value.items()
    return tag == declared and isinstance(text, str) and text != ""


def _index_keys(table: Any) -> set[str]:
    names: set[str] = set()
    for index in table.all_indexes():
        names.update(k["AttributeName"] for k in index.schema)
    return names


def _dynamo(value: dict[str, Any]) -> Any:
    from moto.dynamodb.models.dynamo_type import DynamoType

    return DynamoType(value)


def _range(table: Any, key: dict[str, Any]) -> Any:
    return _dynamo(key[table.range_key_attr]) if table.range_key_attr else None


_RESERVED: frozenset[str] | None = None


def _reserved() -> frozenset[str]:
    """DynamoDB's reserved words, upper case, as moto lists them (read once)."""
    global _RESERVED
    if _RESERVED is None:
        from moto.dynamodb.parsing.reserved_keywords import ReservedKeywords

        _RESERVED = frozenset(w.upper() for w in ReservedKeywords.get_reserved_keywords())
    return _RESERVED
