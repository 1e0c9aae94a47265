"""What a trace line says about one request, from its DynamoDB JSON request and answer.

Both capture points call `record_of`: the emulator (`loadgen.emulator.capture`) with the
answer it is about to send, the botocore hook (`loadgen.traffic.capture`) with the answer an
application received. Keys are read through the table's schema when it is known; without one
the key's first attribute is taken as the partition key, the second as the sort key.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from loadgen.errors import ConfigError
from loadgen.model.capacity import OPERATIONS, cost_of, item_size, key_value, query_key
from loadgen.model.schema import TableSchema
from loadgen.traffic.trace import Touch, TraceRecord

__all__ = ["DATA_OPERATIONS", "Stored", "consumed_units", "outcome_of", "record_of"]

DATA_OPERATIONS = OPERATIONS
"""The requests a trace records (PartiQL and the control plane are not)."""

Stored = Callable[[str, Mapping[str, Any]], Mapping[str, Any] | None]
"""The item stored under (table, key) now, where the caller knows it (the emulator does)."""

_THROTTLES = frozenset(
    {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}
)
_PRICING_ERRORS = (ConfigError, KeyError, TypeError, ValueError, AttributeError, IndexError)


def record_of(
    operation: str,
    request: Mapping[str, Any],
    response: Mapping[str, Any],
    *,
    t: float,
    outcome: str,
    schemas: Mapping[str, TableSchema],
    stored: Stored | None = None,
) -> TraceRecord:
    """The trace record of one data request and its answer (an error body when it failed).

    Raises KeyError, TypeError or ValueError for a request too malformed to describe.
    """
    ok = outcome == "ok"
    if operation in ("BatchGetItem", "BatchWriteItem", "TransactGetItems", "TransactWriteItems"):
        items = _multi(operation, request, response if ok else {}, schemas, stored)
        if not items:
            raise ValueError(f"{operation} without items")
        return TraceRecord(
            t,
            operation,
            items[0][0],
            size=sum(item[3] for item in items),
            units=consumed_units(operation, request, response, schemas) if ok else 0.0,
            out=outcome,
            items=tuple(items),
        )
    table = request["TableName"]
    schema = schemas.get(table)
    index = request.get("IndexName")
    count = None
    sk: str | None = None
    if operation in ("Query", "Scan"):
        returned = list(response.get("Items") or ()) if ok else []
        size = sum(item_size(item) for item in returned)
        count = len(returned) if ok else None
        pk = None
        if operation == "Query":
            owner: Any = schema.index(index) if schema is not None and index else schema
            name = owner.partition_key if owner is not None else _guess_query_key(request)
            value = query_key(request, name) if name else None
            pk = None if value is None else _text(value)
    else:
        key = request.get("Key") or request["Item"]
        pk, sk = _key(schema, key)
        size = _size(operation, table, request, response if ok else {}, stored)
    return TraceRecord(
        t,
        operation,
        table,
        pk,
        sk,
        index,
        size,
        consumed_units(operation, request, response, schemas) if ok else 0.0,
        outcome,
        count=count,
    )


def outcome_of(status: int, answer: Mapping[str, Any]) -> str:
    """``ok``, ``throttled`` (a throttle, or a transaction cancelled by one) or the error code."""
    if status == 200:
        return "ok"
    code = str(answer.get("__type", "")).rpartition("#")[2] or f"HTTP{status}"
    reasons = answer.get("CancellationReasons") or ()
    if code in _THROTTLES or any(r.get("Code") == "ThrottlingError" for r in reasons):
        return "throttled"
    return code


def consumed_units(
    operation: str,
    request: Mapping[str, Any],
    response: Mapping[str, Any],
    schemas: Mapping[str, TableSchema],
) -> float:
    """Units the answer reports (``ConsumedCapacity``), else by DynamoDB's rules from sizes."""
    reported = response.get("ConsumedCapacity")
    if isinstance(reported, Mapping):
        reported = [reported]
    if isinstance(reported, list) and reported:
        return float(sum(float(c.get("CapacityUnits") or 0.0) for c in reported))
    known: dict[str, Any] = {}
    if operation in ("GetItem", "Query", "Scan"):
        known["returned"] = (
            response.get("Item") if operation == "GetItem" else response.get("Items")
        )
    elif operation in ("BatchGetItem", "TransactGetItems"):
        known["returned"] = response.get("Responses")
        if operation == "TransactGetItems":
            known["returned"] = [r.get("Item") for r in response.get("Responses") or ()]
    try:
        return cost_of(operation, request, tables=schemas, **known).total()
    except _PRICING_ERRORS:
        return 0.0  # a table whose schema is unknown: the units are too


def _size(
    operation: str,
    table: str,
    request: Mapping[str, Any],
    response: Mapping[str, Any],
    stored: Stored | None,
) -> int:
    if operation == "PutItem":
        return item_size(request["Item"])
    if operation == "GetItem":
        item = response.get("Item")
        return item_size(item) if item else 0
    attributes = response.get("Attributes")
    if operation == "DeleteItem":
        return item_size(attributes) if attributes else 0
    # UpdateItem: the item as it stands after the update, where it is known.
    if attributes and request.get("ReturnValues") == "ALL_NEW":
        return item_size(attributes)
    now = stored(table, request["Key"]) if stored is not None else None
    if now:
        return item_size(now)
    values = request.get("ExpressionAttributeValues") or {}
    return item_size(request["Key"]) + sum(item_size({"": value}) for value in values.values())


def _multi(
    operation: str,
    request: Mapping[str, Any],
    response: Mapping[str, Any],
    schemas: Mapping[str, TableSchema],
    stored: Stored | None,
) -> list[Touch]:
    touches: list[Touch] = []
    if operation == "BatchWriteItem":
        for table, entries in (request.get("RequestItems") or {}).items():
            for entry in entries:
                put = entry.get("PutRequest")
                key = put["Item"] if put else entry["DeleteRequest"]["Key"]
                touches.append((table, *_key(schemas.get(table), key), _sized(put and put["Item"])))
    elif operation == "BatchGetItem":
        found: dict[tuple[str, tuple[str | None, str | None]], int] = {}
        for table, items in (response.get("Responses") or {}).items():
            for item in items:
                found[(table, _key(schemas.get(table), item))] = item_size(item)
        for table, spec in (request.get("RequestItems") or {}).items():
            for key in spec["Keys"]:
                pk_sk = _key(schemas.get(table), key)
                touches.append((table, *pk_sk, found.get((table, pk_sk), 0)))
    elif operation == "TransactGetItems":
        answers = response.get("Responses") or ()
        for i, entry in enumerate(request.get("TransactItems") or ()):
            get = entry["Get"]
            item = answers[i].get("Item") if i < len(answers) else None
            touches.append((get["TableName"], *_key(schemas.get(get["TableName"]), get["Key"]),
                            _sized(item)))  # fmt: skip
    else:  # TransactWriteItems
        for entry in request.get("TransactItems") or ():
            ((action, body),) = entry.items()
            table = body["TableName"]
            key = body.get("Key") or body["Item"]
            if action == "Put":
                size = item_size(body["Item"])
            elif action == "Update":
                size = _size("UpdateItem", table, body, {}, stored)
            else:
                size = 0
            touches.append((table, *_key(schemas.get(table), key), size))
    return touches


def _sized(item: Mapping[str, Any] | None) -> int:
    return item_size(item) if item else 0


def _key(schema: TableSchema | None, key: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(partition key, sort key) of a key or item, as text."""
    if schema is not None:
        pk = key.get(schema.partition_key)
        sk = key.get(schema.sort_key) if schema.sort_key else None
        return (_text(key_value(pk)) if pk else None, _text(key_value(sk)) if sk else None)
    values: Sequence[Any] = list(key.values())[:2]
    texts = [_text(key_value(v)) for v in values]
    return (texts[0] if texts else None, texts[1] if len(texts) > 1 else None)


def _guess_query_key(request: Mapping[str, Any]) -> str | None:
    """The first attribute a Query's key condition compares, when the schema is unknown."""
    names = request.get("ExpressionAttributeNames") or {}
    expression = str(request.get("KeyConditionExpression") or "").strip()
    first = expression.split("=")[0].strip() if "=" in expression else ""
    if first:
        return str(names.get(first, first))
    conditions = request.get("KeyConditions") or {}
    return next(iter(conditions), None)


def _text(value: str | bytes) -> str:
    """A key value as trace text: S and N as they are, B in base64."""
    return value if isinstance(value, str) else base64.b64encode(value).decode("ascii")
