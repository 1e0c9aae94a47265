"""Shorter paths through moto for the requests a load test sends most.

moto serves every request the way its tests need: an UpdateItem is parsed twice into a tree,
walked by ten validators and deep-copied (400-800 us for ``ADD #c :one``); a Query on an index
reads every item of the table. `MotoBackend` answers those requests here instead, on moto's
own tables, wherever the answer is certain to be moto's (and DynamoDB's); anything else,
including every request that should fail, goes down moto's own path and reads as moto writes.
"""

from __future__ import annotations

import base64
import bisect
import contextlib
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from loadgen.model.update_expression import apply_update_exactly

__all__ = [
    "blob_text",
    "fast_query",
    "fast_update",
    "index_items",
    "keep_index_maps",
    "note_write",
    "undone_by_item",
]

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
_LARGEST_ITEM = 300 * 1024
"""Items whose JSON is larger go down moto's path, which knows the 400 KB rule exactly."""


def fast_update(backend: Any, payload: Mapping[str, Any]) -> bytes | None:
    """Carry out an unconditional UpdateItem on moto's table; its answer, or None for moto.

    ``backend`` is moto's DynamoDB backend of the request's account and region. Taken here:
    an UpdateExpression `apply_update_exactly` reads (SET, REMOVE, ADD of numbers, top-level
    attributes) with a well-formed key, touching neither a key attribute of the table nor one
    of an index unless it writes a non-empty value of the attribute's declared type. The
    stored item is changed in place, as moto's own update does; a new item (or a table with a
    stream) goes through moto's own ``put_item``, so streams stay moto's.
    """
    if not _UPDATE_MEMBERS.issuperset(payload):
        return None
    return_values = payload.get("ReturnValues", "NONE")
    table = backend.tables.get(payload.get("TableName"))
    key = payload.get("Key")
    moto_key = _checked_key(table, key) if table is not None else None
    if return_values not in _RETURN_VALUES or moto_key is None or not isinstance(key, dict):
        return None
    held = table.get_item(*moto_key)
    before = held.to_json()["Attributes"] if held is not None else None
    done = apply_update_exactly(before, key, payload, _reserved())
    if done is None:
        return None
    after, named = done
    if named & set(key):
        return None  # DynamoDB refuses to update a key attribute: moto says so in its words
    types = _types(table)
    for name in named & _index_keys(table):
        if name in after and not _typed(after[name], types.get(name, "")):
            return None
    if len(repr(after)) > _LARGEST_ITEM:
        return None
    if held is None or table.stream_shard is not None:
        table.put_item(after, overwrite=True)
    else:  # in place, as moto's own update does (its attrs dict re-measures on every set)
        for name in named:
            if name in after:
                dict.__setitem__(held.attrs, name, _dynamo(after[name]))
            else:
                held.attrs.pop(name, None)
    return _json(_answer(return_values, before, after, named))


_QUERY_MEMBERS = frozenset(
    {
        "TableName",
        "KeyConditionExpression",
        "ExpressionAttributeNames",
        "ExpressionAttributeValues",
        "ScanIndexForward",
        "Limit",
        "ConsistentRead",
        "ReturnConsumedCapacity",
    }
)
_NAME = r"#?[A-Za-z_][A-Za-z0-9_]*"
_KEY_CONDITION = re.compile(
    rf"\s*(?P<pk>{_NAME})\s*=\s*(?P<pv>:\w+)\s*(?:AND\s+(?:"
    rf"(?P<sk>{_NAME})\s*(?P<op><=|>=|<|>|=)\s*(?P<sv>:\w+)"
    rf"|(?P<bk>{_NAME})\s+BETWEEN\s+(?P<lo>:\w+)\s+AND\s+(?P<hi>:\w+)"
    rf"|begins_with\s*\(\s*(?P<wk>{_NAME})\s*,\s*(?P<prefix>:\w+)\s*\)"
    r")\s*)?",
    re.IGNORECASE,
)
_PAGE_BYTES = 1_000_000
"""moto's (and DynamoDB's) 1 MB page: an answer whose JSON is shorter holds less than that."""


def fast_query(backend: Any, payload: Mapping[str, Any]) -> bytes | None:
    """A Query on a table's partition, read in sort-key order; its answer, or None for moto.

    Taken here: a base-table query (no index, filter, projection, Select or start key) whose
    KeyConditionExpression is ``pk = :v`` with at most one sort-key condition (``=``, ``<``,
    ``<=``, ``>``, ``>=``, ``BETWEEN``, ``begins_with``) on a string or number sort key. moto
    sorts the partition's items on every Query and measures each; here each partition's sort
    keys are kept in order between queries (`_Partition`), so a Query costs the items it
    returns, as on DynamoDB. Pages end where moto's do (``Limit``, ``LastEvaluatedKey``).
    """
    if not _QUERY_MEMBERS.issuperset(payload):
        return None
    table = backend.tables.get(payload.get("TableName"))
    expression = payload.get("KeyConditionExpression")
    if table is None or not table.range_key_attr or not isinstance(expression, str):
        return None
    matched = _KEY_CONDITION.fullmatch(expression)
    if matched is None:
        return None
    names = payload.get("ExpressionAttributeNames") or {}
    values = payload.get("ExpressionAttributeValues") or {}
    types = _types(table)
    range_type = types[table.range_key_attr]
    try:
        if _named(matched["pk"], names) != table.hash_key_attr:
            return None
        hash_value = values[matched["pv"]]
        sort_name = matched["sk"] or matched["bk"] or matched["wk"]
        if sort_name is not None and _named(sort_name, names) != table.range_key_attr:
            return None
        bounds = [values[matched[g]] for g in ("sv", "lo", "hi", "prefix") if matched[g]]
    except (KeyError, _Reserved):
        return None
    if not _typed(hash_value, types[table.hash_key_attr]) or range_type not in ("S", "N"):
        return None
    if not all(_typed(v, range_type) for v in bounds):
        return None
    limit = payload.get("Limit")
    forward = payload.get("ScanIndexForward", True)
    if not (limit is None or (type(limit) is int and limit >= 1)) or type(forward) is not bool:
        return None
    hashed = _dynamo(hash_value)
    partition = table.items.get(hashed)
    if partition is None:
        ordered: list[tuple[Any, Any]] = []
    elif not isinstance(partition, dict):
        return None
    else:
        ordered = _Partition.of(table, hashed, partition).ordered
    start, stop = _span(ordered, matched, bounds, range_type)
    if start > stop:
        return None  # a BETWEEN whose bounds are reversed: moto says what DynamoDB says
    picked = ordered[start:stop] if forward else ordered[start:stop][::-1]
    last_key = None
    if limit is not None and len(picked) >= limit:
        picked = picked[:limit]
        at = start + limit - 1 if forward else stop - limit
        if (forward and at < len(ordered) - 1) or (not forward and at > 0):
            last_key = {
                table.hash_key_attr: hash_value,
                table.range_key_attr: picked[-1][1].to_json(),
            }
    items = [partition[key].to_json()["Attributes"] for _, key in picked] if picked else []
    answer: dict[str, Any] = {"Count": len(items), "ScannedCount": len(items), "Items": items}
    if last_key is not None:
        answer["LastEvaluatedKey"] = last_key
    encoded = _json(answer)
    return encoded if len(encoded) <= _PAGE_BYTES else None


@dataclass
class _Partition:
    """One partition-key value's sort keys in order, built at its first Query and kept in
    step by `note_write` from then on (so a Query does not re-read the partition's keys)."""

    items: dict[Any, Any]
    ordered: list[tuple[Any, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, table: Any, hash_value: Any, partition: dict[Any, Any]) -> _Partition:
        kept: dict[Any, _Partition] = table.__dict__.setdefault(_PARTITIONS, {})
        entry = kept.get(hash_value)
        if entry is None or entry.items is not partition:
            entry = kept[hash_value] = cls(partition, sorted((_sort_key(k), k) for k in partition))
        return entry

    def written(self, range_value: Any) -> None:
        """An item of this partition was written or deleted: keep its key in order."""
        place = (_sort_key(range_value), range_value)
        at = bisect.bisect_left(self.ordered, place)
        listed = at < len(self.ordered) and self.ordered[at][1] == range_value
        if range_value in self.items and not listed:
            self.ordered.insert(at, place)
        elif range_value not in self.items and listed:
            del self.ordered[at]


def _sort_key(key: Any) -> Any:
    """How moto orders sort keys: numbers by value, strings by code point."""
    return Decimal(key.value) if key.type == "N" else key.value


def _span(
    ordered: list[tuple[Any, Any]], matched: re.Match[str], bounds: list[Any], range_type: str
) -> tuple[int, int]:
    """The slice of ``ordered`` the sort-key condition keeps."""
    keys = [Decimal(v[range_type]) if range_type == "N" else v[range_type] for v in bounds]
    low, high = 0, len(ordered)
    if matched["op"]:
        (value,) = keys
        op = matched["op"]
        if op in (">", ">="):
            low = _bisect(ordered, value, after=op == ">")
        elif op in ("<", "<="):
            high = _bisect(ordered, value, after=op == "<=")
        else:
            low, high = _bisect(ordered, value, after=False), _bisect(ordered, value, after=True)
    elif matched["lo"]:
        low, high = _bisect(ordered, keys[0], after=False), _bisect(ordered, keys[1], after=True)
        if keys[0] > keys[1]:
            return 1, 0
    elif matched["prefix"]:
        (prefix,) = keys
        if range_type != "S":
            return 1, 0  # begins_with on a number: moto's error
        low = high = _bisect(ordered, prefix, after=False)
        while high < len(ordered) and ordered[high][0].startswith(prefix):
            high += 1
    return low, high


def _bisect(ordered: list[tuple[Any, Any]], value: Any, *, after: bool) -> int:
    """Where ``value`` goes among the sort keys: before equal keys, or after them."""
    find = bisect.bisect_right if after else bisect.bisect_left
    return find(ordered, value, key=_first)


def _first(entry: tuple[Any, Any]) -> Any:
    return entry[0]


class _Reserved(Exception):
    """A bare attribute name DynamoDB reserves."""


def _named(token: str, names: Mapping[str, str]) -> str:
    if token.startswith("#"):
        return str(names[token])
    if token.upper() in _reserved():
        raise _Reserved(token)
    return token


def _json(answer: Mapping[str, Any]) -> bytes:
    return json.dumps(answer, default=blob_text).encode()


def blob_text(value: object) -> str:
    """Binary values moto keeps as bytes, written as DynamoDB's JSON writes them (base64)."""
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"{type(value).__name__} is not JSON")


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


def _types(table: Any) -> dict[str, str]:
    """The table's declared attribute types (S, N or B), by name."""
    return {d["AttributeName"]: d["AttributeType"] for d in table.attr}


def _checked_key(table: Any, key: Any) -> tuple[Any, Any] | None:
    """moto's (hash, range) for a request's key, or None unless it names exactly the table's
    key attributes, each a non-empty value of its declared type."""
    names = [table.hash_key_attr] + ([table.range_key_attr] if table.range_key_attr else [])
    if not isinstance(key, dict) or len(key) != len(names):
        return None
    types = _types(table)
    if not all(_typed(key.get(name), types[name]) for name in names):
        return None
    return _moto_key(table, key)


def _moto_key(table: Any, key: Mapping[str, Any]) -> tuple[Any, Any]:
    """moto's (hash, range) for a key or an item (range None without a sort key)."""
    hash_value = _dynamo(key[table.hash_key_attr])
    return hash_value, _dynamo(key[table.range_key_attr]) if table.range_key_attr else None


def _index_keys(table: Any) -> set[str]:
    names: set[str] = set()
    for index in table.all_indexes():
        names.update(k["AttributeName"] for k in index.schema)
    return names


def _dynamo(value: dict[str, Any]) -> Any:
    from moto.dynamodb.models.dynamo_type import DynamoType

    return DynamoType(value)


_RESERVED: frozenset[str] | None = None


def _reserved() -> frozenset[str]:
    """DynamoDB's reserved words, upper case, as moto lists them (read once)."""
    global _RESERVED
    if _RESERVED is None:
        from moto.dynamodb.parsing.reserved_keywords import ReservedKeywords

        _RESERVED = frozenset(w.upper() for w in ReservedKeywords.get_reserved_keywords())
    return _RESERVED


# --- index queries --------------------------------------------------------------------------

_READS = frozenset(
    {
        "GetItem",
        "BatchGetItem",
        "Query",
        "Scan",
        "TransactGetItems",
        "DescribeTable",
        "ListTables",
        "DescribeTimeToLive",
        "DescribeContinuousBackups",
        "ListTagsOfResource",
        "DescribeLimits",
        "DescribeEndpoints",
    }
)
_INDEX_MAPS = "_loadgen_index_maps"
_PARTITIONS = "_loadgen_partitions"


@dataclass
class _IndexMap:
    """One index's items by the value of its partition key (items without it are not in it)."""

    attribute: str
    by_value: dict[Any, dict[Any, Any]] = field(default_factory=dict)
    filed: dict[Any, Any] = field(default_factory=dict)

    def file(self, key: Any, item: Any | None) -> None:
        old = self.filed.pop(key, None)
        if old is not None:
            held = self.by_value.get(old)
            if held is not None:
                held.pop(key, None)
                if not held:
                    del self.by_value[old]
        value = item.attrs.get(self.attribute) if item is not None else None
        if value is not None:
            self.by_value.setdefault(value, {})[key] = item
            self.filed[key] = value


def index_items(table: Any, index_name: str, value: Any) -> list[Any] | None:
    """The items an index holds under one partition-key value, or None where none are kept."""
    maps = table.__dict__.get(_INDEX_MAPS)
    index = maps.get(index_name) if maps is not None else None
    if index is None:
        return None
    return list(index.by_value.get(value, {}).values())


def keep_index_maps(backend: Any, payload: Mapping[str, Any]) -> None:
    """Before a Query on an index: file the table's items by each index's partition key,
    once; `note_write` keeps the files from then on."""
    table = backend.tables.get(payload.get("TableName"))
    if table is None or _INDEX_MAPS in table.__dict__:
        return
    maps = {}
    for index in table.all_indexes():
        hashes = [k["AttributeName"] for k in index.schema if k["KeyType"] == "HASH"]
        if len(hashes) == 1:
            maps[index.name] = _IndexMap(hashes[0])
    for item in table.all_items():
        for index_map in maps.values():
            index_map.file((item.hash_key, item.range_key), item)
    table.__dict__[_INDEX_MAPS] = maps


def note_write(backend: Any, operation: str, payload: Mapping[str, Any]) -> None:
    """After a request moto answered: re-file the items it wrote in the index files and the
    partitions' key orders, or drop both for every table where the request's writes cannot
    be told from it (PartiQL, table changes)."""
    if operation in _READS:
        return
    try:
        touched = list(_written_keys(operation, payload))
    except (KeyError, TypeError, AttributeError, ValueError):
        touched = None
    if touched is None:
        for table in backend.tables.values():
            table.__dict__.pop(_INDEX_MAPS, None)
            table.__dict__.pop(_PARTITIONS, None)
        return
    for name, key in touched:
        table = backend.tables.get(name)
        if table is None:
            continue
        maps = table.__dict__.get(_INDEX_MAPS)
        partitions = table.__dict__.get(_PARTITIONS)
        if not maps and not partitions:
            continue
        try:
            hash_value, range_value = _moto_key(table, key)
            item = table.get_item(hash_value, range_value) if maps else None
        except Exception:  # a key moto refused: nothing was written, but start afresh
            table.__dict__.pop(_INDEX_MAPS, None)
            table.__dict__.pop(_PARTITIONS, None)
            continue
        for index_map in (maps or {}).values():
            index_map.file((hash_value, range_value), item)
        partition = partitions.get(hash_value) if partitions else None
        if partition is not None:
            if table.items.get(hash_value) is partition.items:
                partition.written(range_value)
            else:  # the partition emptied and came back: order it afresh when next read
                del partitions[hash_value]


def _written_keys(operation: str, payload: Mapping[str, Any]) -> Any:
    """(table, key or item) of each item a write names; raises where it names none."""
    if operation in ("PutItem", "UpdateItem", "DeleteItem"):
        yield payload["TableName"], payload.get("Key") or payload["Item"]
    elif operation == "BatchWriteItem":
        for name, entries in payload["RequestItems"].items():
            for entry in entries:
                put = entry.get("PutRequest")
                yield name, put["Item"] if put else entry["DeleteRequest"]["Key"]
    elif operation == "TransactWriteItems":
        for entry in payload["TransactItems"]:
            ((_, body),) = entry.items()
            yield body["TableName"], body.get("Key") or body["Item"]
    else:
        raise ValueError(operation)


# --- transactions ---------------------------------------------------------------------------


@contextlib.contextmanager
def undone_by_item(backend: Any, payload: Mapping[str, Any]) -> Iterator[Callable[[], None]]:
    """Run moto's TransactWriteItems inside: it saves the items the request names, not every
    table the request touches; call what it yields to put them back (a cancelled transaction).

    To undo a cancelled transaction moto deep-copies each table the transaction names, once
    per action: 110 ms at 2,000 items, 1.5 s at 20,000. Here the items the actions name (at
    most 100) are saved before it runs, and moto's table "copies" are the tables themselves,
    so putting the saved items back undoes the same writes.
    """
    import copy

    import moto.dynamodb.models as models
    from moto.dynamodb.models.table import Table

    try:
        saved = []
        for name, key in _written_keys("TransactWriteItems", payload):
            table = backend.tables.get(name)
            if table is not None:
                moto_key = _moto_key(table, key)
                saved.append((table, moto_key, copy.deepcopy(table.get_item(*moto_key))))
    except Exception:  # a malformed request: moto's own way, and its own error
        yield lambda: None
        return

    class _TablesStay:
        """moto's ``copy`` module inside its transaction: a table "copy" is the table."""

        def __getattr__(self, name: str) -> Any:
            return getattr(copy, name)

        @staticmethod
        def deepcopy(value: Any, memo: Any = None) -> Any:
            return value if isinstance(value, Table) else copy.deepcopy(value, memo)

    def put_back() -> None:
        for table, (hash_value, range_value), item in reversed(saved):
            _put_back(table, hash_value, range_value, item)

    setattr(models, "copy", _TablesStay())  # noqa: B010 (mypy: moto does not export it)
    try:
        yield put_back
    except BaseException:
        put_back()
        raise
    finally:
        setattr(models, "copy", copy)  # noqa: B010


def _put_back(table: Any, hash_value: Any, range_value: Any, item: Any) -> None:
    if table.range_key_attr:
        partition = table.items[hash_value]
        if item is None:
            partition.pop(range_value, None)
        else:
            partition[range_value] = item
    elif item is None:
        table.items.pop(hash_value, None)
    else:
        table.items[hash_value] = item
