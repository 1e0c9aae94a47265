"""DynamoDB's JSON protocol as the emulator reads and writes it.

Everything here is pure: parsing the operation out of ``X-Amz-Target`` and the JSON out of
bodies, DynamoDB's error bodies, the CRC32 header, and slicing batch requests into admitted
and unprocessed parts. The HTTP server lives in `loadgen.emulator.server`, the backends in
`loadgen.emulator.backends`, what a request costs in `loadgen.emulator.pricing`.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Any

__all__ = [
    "CORAL",
    "DYNAMODB",
    "JSON_CONTENT_TYPE",
    "MODELED_OPERATIONS",
    "TABLE_OPERATIONS",
    "TARGET_PREFIX",
    "WireError",
    "batch_entries",
    "batch_select",
    "crc32",
    "dumps",
    "error_body",
    "error_code",
    "internal_error",
    "loads_answer",
    "loads_request",
    "merge_unprocessed",
    "operation_of",
    "tables_of",
    "transaction_canceled",
]

JSON_CONTENT_TYPE = "application/x-amz-json-1.0"
TARGET_PREFIX = "DynamoDB_20120810."
"""What ``X-Amz-Target`` starts with, before the operation's name."""
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
_INTERNAL_MESSAGE = "Internal server error"


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


def internal_error(message: str = _INTERNAL_MESSAGE) -> dict[str, Any]:
    """DynamoDB's InternalServerError body, for answers no backend gave in JSON."""
    return error_body(DYNAMODB + "InternalServerError", message)


@cache
def _known_operations() -> frozenset[str]:
    # The shipped model is the list of operations DynamoDB has, as the project tests it.
    from loadgen.model.api import operations

    return operations()


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


def loads_request(body: bytes) -> dict[str, Any] | None:
    """A request body as a JSON object, None if empty; a `WireError` as DynamoDB words it."""
    if not body:
        return None
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than Python's stack
        raise WireError(400, CORAL + "SerializationException", "Invalid JSON") from None
    if not isinstance(payload, dict):
        raise WireError(400, CORAL + "SerializationException", "Start of structure or map expected")
    return payload


def loads_answer(body: bytes) -> dict[str, Any]:
    """A backend's answer as a JSON object; ``{}`` for anything else (HTML, nothing)."""
    try:
        parsed = json.loads(body) if body else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


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
