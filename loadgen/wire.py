"""DynamoDB's JSON protocol as the emulator reads and writes it.

Everything here is pure: parsing the operation out of ``X-Amz-Target``, DynamoDB's error
bodies, the CRC32 header, slicing batch requests into admitted and unprocessed parts, and
knowing items well enough to price writes (`ItemShadow`, `apply_update`). The HTTP server and
the backends live in `loadgen.emulator`.
"""

from __future__ import annotations

import json
import re
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import Any

from loadgen.capacity import Item, KeyValue, key_value
from loadgen.schema import TableSchema

__all__ = [
    "CORAL",
    "DYNAMODB",
    "JSON_CONTENT_TYPE",
    "MODELED_OPERATIONS",
    "TABLE_OPERATIONS",
    "ItemShadow",
    "WireError",
    "apply_update",
    "batch_entries",
    "batch_select",
    "crc32",
    "dumps",
    "error_body",
    "error_code",
    "merge_unprocessed",
    "operation_of",
    "primary_key",
    "tables_of",
    "transaction_canceled",
]

JSON_CONTENT_TYPE = "application/x-amz-json-1.0"
TARGET_PREFIX = "DynamoDB_20120810."
DYNAMODB = "com.amazonaws.dynamodb.v20120810#"
"""Namespace of the service's own errors (throttles, missing tables, ...)."""
CORAL = "com.amazon.coral.service#"
"""Namespace of the protocol layer's errors (bad JSON, unknown operation)."""

MODELED_OPERATIONS = frozenset(
    {
        "GetItem",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "Query",
        "Scan",
        "BatchGetItem",
        "BatchWriteItem",
        "TransactGetItems",
        "TransactWriteItems",
    }
)
"""Operations the partition model charges; every other operation is forwarded untouched."""
TABLE_OPERATIONS = frozenset({"CreateTable", "UpdateTable", "DeleteTable"})
"""Operations the emulator follows to learn table schemas."""


class WireError(Exception):
    """A request the emulator answers itself with a DynamoDB error.

    >>> WireError(400, CORAL + "SerializationException", "Invalid JSON").body()
    {'__type': 'com.amazon.coral.service#SerializationException', 'message': 'Invalid JSON'}
    """

    def __init__(self, status: int, type_: str, message: str) -> None:
        super().__init__(message)
        self.status, self.type, self.message = status, type_, message

    def body(self) -> dict[str, Any]:
        """The JSON body DynamoDB sends for this error."""
        return error_body(self.type, self.message)


def error_body(type_: str, message: str) -> dict[str, Any]:
    """``{"__type": ..., "message": ...}``: botocore takes the code after the last ``#``."""
    return {"__type": type_, "message": message}


def error_code(body: Mapping[str, Any]) -> str:
    """The error code of a DynamoDB error body, e.g. ``ConditionalCheckFailedException``."""
    return str(body.get("__type", "")).rpartition("#")[2]


@cache
def _known_operations() -> frozenset[str]:
    # botocore's model is the list of operations DynamoDB has, at the pinned version.
    from botocore.loaders import Loader

    return frozenset(Loader().load_service_model("dynamodb", "service-2")["operations"])


def operation_of(target: str | None) -> str:
    """The operation named by an ``X-Amz-Target`` header, or a `WireError` as DynamoDB says it.

    >>> operation_of("DynamoDB_20120810.PutItem")
    'PutItem'
    """
    # Like DynamoDB (and dynalite, which copies its answers), an unknown or missing target is
    # UnknownOperationException with no message.
    if target and target.startswith(TARGET_PREFIX):
        operation = target[len(TARGET_PREFIX) :]
        if operation in _known_operations():
            return operation
    raise WireError(400, CORAL + "UnknownOperationException", "")


def dumps(body: Any) -> bytes:
    """Compact JSON, as DynamoDB writes it."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def crc32(body: bytes) -> str:
    """The ``x-amz-crc32`` header value: CRC32 of the body as an unsigned decimal."""
    return str(zlib.crc32(body))


def tables_of(operation: str, request: Mapping[str, Any]) -> list[str]:
    """Names of the tables a request touches, in order of first mention."""
    if operation in ("BatchGetItem", "BatchWriteItem"):
        return list(request.get("RequestItems") or {})
    if operation in ("TransactGetItems", "TransactWriteItems"):
        names: dict[str, None] = {}
        for entry in request.get("TransactItems") or ():
            for body in entry.values():
                names[body["TableName"]] = None
        return list(names)
    return [request["TableName"]]


def primary_key(schema: TableSchema, item: Item) -> tuple[KeyValue, ...] | None:
    """The item's primary key as hashable values, or None if a key attribute is missing."""
    try:
        return tuple(key_value(item[name]) for name in schema.key_attributes)
    except (KeyError, TypeError, ValueError):
        return None


# --- batches ------------------------------------------------------------------------------


def batch_entries(request: Mapping[str, Any], operation: str) -> list[tuple[str, Any]]:
    """(table, key or write request) per batch entry, in the order `cost_of` groups them."""
    items = request.get("RequestItems") or {}
    if operation == "BatchGetItem":
        return [(table, key) for table, spec in items.items() for key in spec["Keys"]]
    return [(table, entry) for table, entries in items.items() for entry in entries]


def batch_select(
    request: Mapping[str, Any], operation: str, indices: Iterable[int]
) -> dict[str, Any]:
    """``RequestItems`` holding only the entries at ``indices`` (flat, as `batch_entries`).

    For BatchGetItem each table keeps its other parameters (ProjectionExpression, ...), so the
    result serves both as a forwarded request's RequestItems and as ``UnprocessedKeys``.
    """
    wanted = set(indices)
    selected: dict[str, Any] = {}
    position = 0
    for table, spec in (request.get("RequestItems") or {}).items():
        entries = spec["Keys"] if operation == "BatchGetItem" else spec
        kept = [e for i, e in enumerate(entries, start=position) if i in wanted]
        position += len(entries)
        if kept:
            selected[table] = {**spec, "Keys": kept} if operation == "BatchGetItem" else kept
    return selected


def merge_unprocessed(ours: Mapping[str, Any], theirs: Mapping[str, Any] | None) -> dict[str, Any]:
    """Our throttled entries plus the backend's own unprocessed ones, per table."""
    merged: dict[str, Any] = {table: _copy_entries(spec) for table, spec in ours.items()}
    for table, spec in (theirs or {}).items():
        if table not in merged:
            merged[table] = spec
        elif isinstance(spec, Mapping):
            merged[table]["Keys"] = [*merged[table]["Keys"], *spec.get("Keys", ())]
        else:
            merged[table] = [*merged[table], *spec]
    return merged


def _copy_entries(spec: Any) -> Any:
    return dict(spec) if isinstance(spec, Mapping) else list(spec)


def transaction_canceled(codes: Sequence[str], messages: Mapping[int, str]) -> dict[str, Any]:
    """The TransactionCanceledException body for per-item ``codes`` ("None", ...)."""
    # Shape and wording as DynamoDB Local answers a failed condition in a transaction; the
    # list in the message repeats the codes in request order.
    reasons: list[dict[str, str]] = []
    for i, code in enumerate(codes):
        reason = {"Code": code}
        if i in messages:
            reason["Message"] = messages[i]
        reasons.append(reason)
    return {
        "__type": DYNAMODB + "TransactionCanceledException",
        "CancellationReasons": reasons,
        "Message": "Transaction cancelled, please refer cancellation reasons for specific "
        f"reasons [{', '.join(codes)}]",
    }


# --- knowing items ------------------------------------------------------------------------


class ItemShadow:
    """The last known stored form of recently touched items, bounded, least recent out first.

    A write is priced by the larger of the item before and after it, and a GSI write by
    whether the item is in the index before and after; the request alone does not say what is
    stored. The emulator keeps what it saw pass by (items written, items read whole) rather
    than asking the backend before every write, which would double the backend's work. An
    item the shadow does not hold (never seen, or evicted) is priced as absent: exact for
    inserts, an undercount for overwriting a large item written before the emulator started.
    Items are kept as compact JSON: 100,000 items of 260 bytes take 60 MB (parsed, 170 MB);
    a lookup parses one, about 10 microseconds.

        >>> shadow = ItemShadow(2)
        >>> shadow.put("t", ("a",), {"pk": {"S": "a"}})
        >>> shadow.get("t", ("a",))
        {'pk': {'S': 'a'}}
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 0:
            raise ValueError(f"shadow capacity must be >= 0 items (got {capacity!r})")
        self.capacity = capacity
        """Items kept at most; 0 keeps none (every write is priced as an insert)."""
        self._items: OrderedDict[tuple[str, tuple[KeyValue, ...]], bytes] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, table: str, key: tuple[KeyValue, ...] | None) -> Item | None:
        """The stored item, or None when it is absent or unknown."""
        if key is None:
            return None
        stored = self._items.get((table, key))
        if stored is None:
            return None
        self._items.move_to_end((table, key))
        item: Item = json.loads(stored)
        return item

    def put(self, table: str, key: tuple[KeyValue, ...] | None, item: Item | None) -> None:
        """Remember ``item`` as stored under ``key`` (None: it is gone)."""
        if key is None:
            return
        if item is None:
            self._items.pop((table, key), None)
            return
        if self.capacity == 0:
            return
        self._items[(table, key)] = dumps(item)
        self._items.move_to_end((table, key))
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)

    def drop_table(self, table: str) -> None:
        """Forget every item of a table (it was deleted or created anew). O(items)."""
        for entry in [entry for entry in self._items if entry[0] == table]:
            del self._items[entry]


class _Unsupported(Exception):
    """An update the shadow cannot follow (nested paths, unknown functions, bad types)."""


_TOKENS = re.compile(r"#\w+|:\w+|[A-Za-z_]\w*|\[\d+\]|\.|[=+\-,()]")
_CLAUSES = ("SET", "REMOVE", "ADD", "DELETE")
_SETS = ("SS", "NS", "BS")


def apply_update(
    before: Item | None, key: Mapping[str, Any], request: Mapping[str, Any]
) -> Item | None:
    """The item an UpdateItem request leaves, or None when the update is beyond this reader.

    Follows ``UpdateExpression`` (SET with ``+``, ``-``, ``if_not_exists`` and
    ``list_append``; REMOVE; ADD; DELETE) and legacy ``AttributeUpdates`` on top-level
    attributes, which covers counters, status changes and GSI key moves. Nested paths return
    None, and the caller prices the write as an estimate.

        >>> apply_update(None, {"pk": {"S": "a"}}, {
        ...     "UpdateExpression": "ADD #n :one",
        ...     "ExpressionAttributeNames": {"#n": "n"},
        ...     "ExpressionAttributeValues": {":one": {"N": "1"}},
        ... })
        {'pk': {'S': 'a'}, 'n': {'N': '1'}}
    """
    item: dict[str, Any] = dict(before) if before is not None else dict(key)
    try:
        if "UpdateExpression" in request:
            _Expression(request).apply(item)
        for name, update in (request.get("AttributeUpdates") or {}).items():
            _legacy_update(item, name, update)
    except (_Unsupported, KeyError, TypeError, ValueError, InvalidOperation, IndexError):
        return None
    return item


class _Expression:
    """A recursive-descent reader of one UpdateExpression over top-level attributes."""

    def __init__(self, request: Mapping[str, Any]) -> None:
        text = str(request["UpdateExpression"])
        self.tokens = _TOKENS.findall(text)
        # Anything the token pattern skipped (other than spaces) is syntax we do not follow.
        if "".join(self.tokens) != "".join(text.split()):
            raise _Unsupported(text)
        if "." in self.tokens or any(t.startswith("[") for t in self.tokens):
            raise _Unsupported("nested path")
        self.names: Mapping[str, str] = request.get("ExpressionAttributeNames") or {}
        self.values: Mapping[str, Any] = request.get("ExpressionAttributeValues") or {}
        self.position = 0

    def apply(self, item: dict[str, Any]) -> None:
        actions: list[Callable[[], None]] = []
        while self.position < len(self.tokens):
            clause = self._next().upper()
            if clause not in _CLAUSES:
                raise _Unsupported(clause)
            while True:
                actions.append(self._action(clause, item))
                if self._peek() != ",":
                    break
                self._next()
        # Every operand reads the item as it was before the update, as DynamoDB evaluates.
        for action in actions:
            action()

    def _action(self, clause: str, item: dict[str, Any]) -> Callable[[], None]:
        name = self._path()
        if clause == "REMOVE":
            return lambda: item.pop(name, None)
        if clause == "SET":
            if self._next() != "=":
                raise _Unsupported("SET without =")
            value = self._value(item)
            return lambda: item.__setitem__(name, value)
        operand = self._operand(item)
        if clause == "ADD":
            return lambda: _add(item, name, operand)
        return lambda: _delete(item, name, operand)

    def _value(self, item: Mapping[str, Any]) -> Any:
        left = self._operand(item)
        if self._peek() in ("+", "-"):
            sign = self._next()
            right = self._operand(item)
            total = Decimal(left["N"]) + (Decimal(right["N"]) * (1 if sign == "+" else -1))
            return {"N": _number(total)}
        return left

    def _operand(self, item: Mapping[str, Any]) -> Any:
        token = self._peek()
        if token is not None and token.startswith(":"):
            self._next()
            return self.values[token]
        if token in ("if_not_exists", "list_append") and self._lookahead(1) == "(":
            self._next()
            self._next()
            first = self._operand_or_path(item, token == "if_not_exists")
            self._expect(",")
            second = self._operand(item)
            self._expect(")")
            if token == "if_not_exists":
                return first if first is not None else second
            return {"L": [*first["L"], *second["L"]]}
        value = item.get(self._path())
        if value is None:
            raise _Unsupported("operand names a missing attribute")
        return value

    def _operand_or_path(self, item: Mapping[str, Any], path_only: bool) -> Any:
        if path_only:
            return item.get(self._path())
        return self._operand(item)

    def _path(self) -> str:
        token = self._next()
        if token.startswith("#"):
            return str(self.names[token])
        if not (token[0].isalpha() or token[0] == "_") or token.upper() in _CLAUSES:
            raise _Unsupported(token)
        return token

    def _expect(self, token: str) -> None:
        if self._next() != token:
            raise _Unsupported(f"expected {token}")

    def _peek(self) -> str | None:
        return self._lookahead(0)

    def _lookahead(self, offset: int) -> str | None:
        index = self.position + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def _next(self) -> str:
        if self.position >= len(self.tokens):
            raise _Unsupported("unexpected end")
        token: str = self.tokens[self.position]
        self.position += 1
        return token


def _number(value: Decimal) -> str:
    return "0" if value.is_zero() else format(value.normalize(), "f")


def _add(item: dict[str, Any], name: str, operand: Mapping[str, Any]) -> None:
    current = item.get(name)
    ((tag, value),) = operand.items()
    if current is None:
        item[name] = dict(operand)
    elif tag == "N":
        item[name] = {"N": _number(Decimal(current["N"]) + Decimal(value))}
    elif tag in _SETS:
        item[name] = {tag: [*current[tag], *(v for v in value if v not in current[tag])]}
    else:
        raise _Unsupported(f"ADD of {tag}")


def _delete(item: dict[str, Any], name: str, operand: Mapping[str, Any]) -> None:
    current = item.get(name)
    if current is None:
        return
    ((tag, value),) = operand.items()
    if tag not in _SETS:
        raise _Unsupported(f"DELETE of {tag}")
    kept = [v for v in current[tag] if v not in value]
    if kept:
        item[name] = {tag: kept}
    else:
        item.pop(name)


def _legacy_update(item: dict[str, Any], name: str, update: Mapping[str, Any]) -> None:
    action = update.get("Action", "PUT")
    value = update.get("Value")
    if action == "PUT":
        item[name] = value
    elif action == "ADD":
        _add(item, name, update["Value"])
    elif value is None:
        item.pop(name, None)
    else:
        _delete(item, name, value)
