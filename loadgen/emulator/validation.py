"""Checking every request as DynamoDB does, before the partition model or a backend sees it.

Two passes, in DynamoDB's order. First the request is read against DynamoDB's API model as
the project tests it (`loadgen.model.api`: botocore's service model at the tested version,
shipped in the package, so the rules do not move with the botocore installed): a member of
the wrong JSON type is a 400 ``SerializationException`` at once; then every constraint of the
model is checked (required members, enums, lengths, ranges, list and map sizes) and all
violations are reported together in one 400 ``ValidationException``, worded as DynamoDB words
them ("1 validation error detected: Value null at 'tableName' failed to satisfy constraint:
Member must not be null").
Second, the limits DynamoDB adds to its model: attribute values with exactly one type, numbers
DynamoDB can store, items up to 400 KB, documents nested at most 32 levels, batches and
transactions no larger than DynamoDB takes.

Where DynamoDB's own message is known (from DynamoDB Local, AWS's engine) it is used word for
word. Unknown members are ignored, as DynamoDB ignores them.

    >>> validate("GetItem", {"Key": {"pk": {"S": "a"}}})
    Traceback (most recent call last):
    ...
    loadgen.emulator.wire.WireError: 1 validation error detected: Value null at 'tableName' \
failed to satisfy constraint: Member must not be null
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from loadgen.emulator.wire import CORAL, WireError
from loadgen.errors import ConfigError
from loadgen.model import api
from loadgen.model.expressions import request_error
from loadgen.model.itemsize import item_size
from loadgen.model.limits import (
    MAX_BATCH_GET_KEYS,
    MAX_BATCH_WRITE_REQUESTS,
    MAX_ITEM_BYTES,
    MAX_NESTING_LEVELS,
    MAX_TRANSACTION_ACTIONS,
)

__all__ = [
    "MAX_BATCH_GET_KEYS",
    "MAX_BATCH_WRITE_REQUESTS",
    "MAX_ITEM_BYTES",
    "MAX_NESTING_LEVELS",
    "MAX_TRANSACTION_ACTIONS",
    "VALIDATION",
    "integers_truncated",
    "validate",
]

VALIDATION = "com.amazon.coral.validate#ValidationException"
"""DynamoDB's ``__type`` for a request that breaks a constraint."""
_SERIALIZATION = CORAL + "SerializationException"

# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html
_NUMBER_DIGITS = 38
_NUMBER_MAX_EXPONENT = 126  # magnitudes below 1E+126 ...
_NUMBER_MIN_EXPONENT = -130  # ... and from 1E-130
_NUMBER = re.compile(
    r"[+-]?(?=\.?\d)(?P<whole>\d*)(?:\.(?P<fraction>\d*))?(?:[eE](?P<exp>[+-]?\d{1,12}))?"
)
_TABLE_NAME = re.compile(r"[a-zA-Z0-9_.-]{3,255}")
_TABLE_NAME_MESSAGE = (
    "Invalid table/index name.  Table/index names must be between 3 and 255 characters long, "
    "and may contain only the characters a-z, A-Z, 0-9, '_', '-', and '.'"
)
# Structures of which a request sets exactly one member (the model does not say so).
_ONE_OF = {
    "TransactWriteItem": frozenset({"ConditionCheck", "Put", "Delete", "Update"}),
    "WriteRequest": frozenset({"PutRequest", "DeleteRequest"}),
}
_ONE_OF_MESSAGES = {
    "TransactWriteItem": "TransactItems can only contain one of Check, Put, Update or Delete",
    "WriteRequest": "Supplied WriteRequest must contain exactly one of PutRequest or DeleteRequest",
}
_NESTING_MESSAGE = (
    "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels "
    "beyond supported limit"
)
# Members DynamoDB requires but reports missing in words of its own, after the model's checks
# (DynamoDB Local's words; botocore's model from 1.44 no longer lists these as required, as a
# table made from a global table's source ARN needs neither).
_MISSING = {
    "CreateTableInput": (
        (
            "KeySchema",
            "No defined key schema.  A key schema containing at least a hash key must be "
            "defined for all tables",
        ),
        ("AttributeDefinitions", "No Attribute Schema Defined"),
    ),
}
_WRITE_ITEMS = {"PutItem": "Item"}  # where a request carries a whole item to store


@dataclass(eq=False, slots=True)
class _Node:
    """One shape of the model, read once into what `_walk` needs."""

    name: str
    kind: str
    low: int | None = None
    high: int | None = None
    enum: frozenset[str] = frozenset()
    enum_text: str = ""
    pattern: re.Pattern[str] | None = None
    pattern_text: str = ""
    members: dict[str, tuple[_Node, str]] = field(default_factory=dict)
    """Member name to its node and its name in messages (lower camel case)."""
    required: tuple[tuple[str, str], ...] = ()
    element: _Node | None = None
    """A list's member, a map's value."""
    key: _Node | None = None
    expressions: bool = False
    """Carries ExpressionAttributeNames (and so expressions to check)."""


def _compile(name: str, nodes: dict[str, _Node]) -> _Node:
    node = nodes.get(name)
    if node is not None:  # also ends the recursion of AttributeValue in M and L
        return node
    spec = api.shape(name)
    node = _Node(name, spec["type"], spec.get("min"), spec.get("max"))
    nodes[name] = node
    enum = spec.get("enum")
    if enum:
        node.enum, node.enum_text = frozenset(enum), ", ".join(enum)
    if "pattern" in spec:
        node.pattern, node.pattern_text = _pattern(spec["pattern"]), spec["pattern"]
    if node.kind == "structure":
        for member, ref in spec.get("members", {}).items():
            node.members[member] = (_compile(ref["shape"], nodes), member[:1].lower() + member[1:])
        own = {member for member, _ in _MISSING.get(name, ())}
        node.required = tuple(
            (m, node.members[m][1]) for m in spec.get("required", ()) if m not in own
        )
        node.expressions = "ExpressionAttributeNames" in node.members
    elif node.kind == "list":
        node.element = _compile(spec["member"]["shape"], nodes)
    elif node.kind == "map":
        node.key = _compile(spec["key"]["shape"], nodes)
        node.element = _compile(spec["value"]["shape"], nodes)
    return node


@cache
def _input_node(operation: str) -> _Node | None:
    found = api.api_model()["operations"].get(operation)
    if found is None or "input" not in found:  # the caller has checked the name
        return None
    return _compile(found["input"]["shape"], _nodes())


@cache
def _nodes() -> dict[str, _Node]:
    return {}  # shared by all operations: each shape is read once


@cache
def _pattern(expression: str) -> re.Pattern[str] | None:
    # The model's patterns are Java's; the few Python cannot compile (\p{Print}) are skipped.
    try:
        return re.compile(expression)
    except re.error:
        return None


def validate(operation: str, payload: Mapping[str, Any], body_bytes: int | None = None) -> None:
    """Raise a `WireError` with DynamoDB's answer if ``payload`` is no valid ``operation``.

    ``operation`` must be one the model knows (`loadgen.emulator.wire.operation_of`).
    ``body_bytes``, the size of the JSON text, spares measuring items that cannot be too large.
    """
    node = _input_node(operation)
    if node is None:
        return
    errors: list[str] = []
    _walk(node, payload, "", errors, 0)
    if errors:
        count = f"{len(errors)} validation error{'s' if len(errors) > 1 else ''} detected: "
        raise WireError(400, VALIDATION, count + "; ".join(errors))
    for member, message in _MISSING.get(node.name, ()):
        if payload.get(member) is None:
            raise WireError(400, VALIDATION, message)
    _semantics(operation, payload, body_bytes is None or body_bytes > MAX_ITEM_BYTES)


def integers_truncated(operation: str, payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with every fraction in an integer or long member cut to a whole number, as
    DynamoDB reads ``"Limit": 1.5`` (1); for an engine that would fail on it."""
    node = _input_node(operation)
    truncated = _truncated(node, payload) if node is not None else payload
    return truncated if isinstance(truncated, dict) else payload


def _truncated(node: _Node, value: Any) -> Any:
    if node.kind in ("integer", "long") and isinstance(value, float) and math.isfinite(value):
        return int(value)
    if node.kind == "structure" and isinstance(value, dict):
        members = node.members
        return {k: _truncated(members[k][0], v) if k in members else v for k, v in value.items()}
    if node.kind == "list" and isinstance(value, list) and node.element is not None:
        return [_truncated(node.element, v) for v in value]
    if node.kind == "map" and isinstance(value, dict) and node.element is not None:
        return {k: _truncated(node.element, v) for k, v in value.items()}
    return value


# --- the model's shapes -------------------------------------------------------------------


def _walk(node: _Node, value: Any, path: str, errors: list[str], depth: int) -> None:
    """Check ``value`` against ``node``: raise at a type error, collect constraint errors."""
    kind = node.kind
    if kind == "structure":
        if not isinstance(value, dict):
            raise _type_error(value, "structure")
        if node.name == "AttributeValue":
            _attribute_value(value, depth)
        elif node.name in _ONE_OF:
            _one_of(node.name, value)
        if node.expressions:
            _placeholders(value)
        for name, camel in node.required:
            if value.get(name) is None:
                errors.append(_null(_join(path, camel)))
        members = node.members
        for name, child in value.items():
            if child is None or name not in members:
                continue  # unknown members are ignored, as DynamoDB ignores them
            member, camel = members[name]
            _walk(member, child, _join(path, camel), errors, depth + (name in ("M", "L")))
    elif kind == "list":
        if not isinstance(value, list):
            raise _type_error(value, "list")
        _length(node, value, len(value), path, errors)
        assert node.element is not None
        for i, element in enumerate(value, start=1):
            if element is None:
                errors.append(_null(f"{path}.{i}.member"))
            else:
                _walk(node.element, element, f"{path}.{i}.member", errors, depth)
    elif kind == "map":
        if not isinstance(value, dict):
            raise _type_error(value, "map")
        _length(node, value, len(value), path, errors)
        assert node.key is not None and node.element is not None
        values = path.endswith("expressionAttributeValues")
        for key, element in value.items():
            _walk(node.key, key, f"{path}.{key}.key", errors, depth)
            if element is None:
                errors.append(_null(f"{path}.{key}.member"))
            elif values:
                try:
                    _walk(node.element, element, f"{path}.{key}.member", errors, depth)
                except WireError as error:
                    if error.type != VALIDATION:
                        raise
                    raise WireError(
                        400,
                        VALIDATION,
                        "ExpressionAttributeValues contains invalid value: "
                        f"{error.message} for key {key}",
                    ) from None
            else:
                _walk(node.element, element, f"{path}.{key}.member", errors, depth)
    elif kind == "string":
        if not isinstance(value, str):
            raise _type_error(value, "String")
        _string(node, value, path, errors)
    elif kind in ("integer", "long"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _type_error(value, "an Integer" if kind == "integer" else "a Long")
        if isinstance(value, float) and not math.isfinite(value):
            raise WireError(400, _SERIALIZATION, f"{value} can not be converted to a number")
        bits = 31 if kind == "integer" else 63  # Java's int and long
        if not -(2**bits) <= value < 2**bits:
            raise WireError(400, _SERIALIZATION, f"Numeric value ({value}) out of range of {kind}")
        _range(node, int(value), path, errors)  # DynamoDB truncates a fraction
    elif kind in ("double", "float", "timestamp"):
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise _type_error(value, "a number")
    elif kind == "boolean":
        if not isinstance(value, bool):
            raise _type_error(value, "a Boolean")
    elif kind == "blob":
        if not isinstance(value, str):
            raise _type_error(value, "a Blob")
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise WireError(
                400,
                _SERIALIZATION,
                f"Base64 encoded length is expected a multiple of 4 bytes but found: {len(value)}",
            ) from None
        _length(node, value, len(value) * 3 // 4, path, errors)


def _null(path: str) -> str:
    return f"Value null at '{path}' failed to satisfy constraint: Member must not be null"


def _one_of(shape: str, value: Mapping[str, Any]) -> None:
    present = [name for name, v in value.items() if v is not None and name in _ONE_OF[shape]]
    if len(present) != 1:
        raise WireError(400, VALIDATION, _ONE_OF_MESSAGES[shape])


def _placeholders(request: Mapping[str, Any]) -> None:
    """A request's expressions as DynamoDB reads them before anything else: placeholders
    defined and used, names not empty, expressions within DynamoDB's limits
    (`loadgen.model.expressions.request_error`). Expressions are parsed only where a cheap look
    finds something wrong: a valid request is not parsed here."""
    message = request_error(request, parse=False)
    if message is not None:
        raise WireError(400, VALIDATION, message)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _type_error(value: Any, expected: str) -> WireError:
    """SerializationException worded as DynamoDB's JSON reader words it."""
    if isinstance(value, dict):
        message = "Start of structure or map found where not expected."
    elif isinstance(value, list):
        message = "Start of list found where not expected"
    else:
        token = {bool: f"{str(value).upper()}_VALUE", str: "STRING_VALUE"}.get(
            type(value), "NUMBER_VALUE"
        )
        if expected in ("structure", "map", "list"):
            message = f"Unexpected value type in payload: {token} where a {expected} is expected"
        else:
            message = f"{token} can not be converted to {expected}"
    return WireError(400, _SERIALIZATION, message)


def _show(value: Any) -> str:
    if isinstance(value, str | int | float):
        return str(value)
    return "[...]" if isinstance(value, list) else "{...}"


def _length(node: _Node, value: Any, length: int, path: str, errors: list[str]) -> None:
    low, high = node.low, node.high
    if low is not None and length < low:
        errors.append(f"{_prefix(value, path)} length greater than or equal to {low}")
    elif high is not None and length > high:
        errors.append(f"{_prefix(value, path)} length less than or equal to {high}")


def _range(node: _Node, value: int, path: str, errors: list[str]) -> None:
    low, high = node.low, node.high
    if low is not None and value < low:
        errors.append(f"{_prefix(value, path)} value greater than or equal to {low}")
    elif high is not None and value > high:
        errors.append(f"{_prefix(value, path)} value less than or equal to {high}")


def _prefix(value: Any, path: str) -> str:
    return f"Value '{_show(value)}' at '{path}' failed to satisfy constraint: Member must have"


def _string(node: _Node, value: str, path: str, errors: list[str]) -> None:
    if node.enum and value not in node.enum:
        errors.append(
            f"Value '{value}' at '{path}' failed to satisfy constraint: Member must satisfy "
            f"enum value set: [{node.enum_text}]"
        )
        return
    _length(node, value, len(value), path, errors)
    if node.pattern is not None and node.pattern.fullmatch(value) is None:
        errors.append(
            f"Value '{value}' at '{path}' failed to satisfy constraint: Member must satisfy "
            f"regular expression pattern: {node.pattern_text}"
        )
    # A name, not an ARN: DynamoDB holds it to the rules of table names.
    # (At the top level only: inside batches and transactions DynamoDB Local looks the name
    # up and answers ResourceNotFoundException.)
    named = path == "tableName" and not value.startswith("arn:")
    if named and _TABLE_NAME.fullmatch(value) is None:
        raise WireError(400, VALIDATION, _TABLE_NAME_MESSAGE)


# --- attribute values ---------------------------------------------------------------------


def _attribute_value(value: Mapping[str, Any], depth: int) -> None:
    """DynamoDB's rules for one ``{"S": ...}``-style value, beyond what the model says."""
    present = [tag for tag, v in value.items() if v is not None]
    if depth > MAX_NESTING_LEVELS:
        raise WireError(400, VALIDATION, _NESTING_MESSAGE)
    if not present:
        raise WireError(
            400,
            VALIDATION,
            "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
        )
    if len(present) > 1:
        raise WireError(
            400,
            VALIDATION,
            "Supplied AttributeValue has more than one datatypes set, must contain exactly one "
            "of the supported datatypes",
        )
    (tag,) = present
    member = value[tag]
    if tag == "N" and isinstance(member, str):
        _number(member)
    elif tag == "NS" and isinstance(member, list):
        for number in member:
            if isinstance(number, str):
                _number(number)
    elif tag == "NULL" and member is False:
        raise WireError(
            400,
            VALIDATION,
            "One or more parameter values were invalid: Null attribute value types must have "
            "the value of true",
        )
    if tag in ("SS", "NS", "BS") and isinstance(member, list):
        if not member:
            kind = {"SS": "string", "NS": "number", "BS": "binary"}[tag]
            raise WireError(
                400,
                VALIDATION,
                f"One or more parameter values were invalid: An {kind} set  may not be empty",
            )
        if all(isinstance(m, str) for m in member) and len(set(member)) != len(member):
            raise WireError(
                400,
                VALIDATION,
                f"One or more parameter values were invalid: Input collection "
                f"[{', '.join(member)}] contains duplicates",
            )


def _number(text: str) -> None:
    """DynamoDB's checks of a number, read from its text alone.

    Read as Java's BigDecimal reads it (DynamoDB's engine is Java): decimal digits (any
    script's, as Java's), a point, an exponent that fits an int, as does the scale. The
    magnitude comes from the digits and the exponent, not from arithmetic, so no exponent is
    too large to judge (``1e100000000`` is an overflow, not a crash).
    """
    match = _NUMBER.fullmatch(text)
    if match is None:
        raise WireError(400, VALIDATION, "A value provided cannot be converted into a number")
    whole, fraction = match.group("whole"), match.group("fraction") or ""
    exponent = int(match.group("exp") or 0)
    scale = len(fraction) - exponent
    if not (-(2**31) <= exponent < 2**31 and -(2**31) <= scale < 2**31):
        raise WireError(400, VALIDATION, "A value provided cannot be converted into a number")
    digits = whole + fraction
    if not digits.isascii():
        digits = "".join(str(unicodedata.digit(c)) for c in digits)
    digits = digits.lstrip("0")
    if not digits:
        return  # zero, whatever its exponent
    significant = digits.rstrip("0")
    if len(significant) > _NUMBER_DIGITS:
        raise WireError(
            400, VALIDATION, "Attempting to store more than 38 significant digits in a Number"
        )
    magnitude = len(digits) - 1 - scale  # the power of ten of the leading digit
    if magnitude >= _NUMBER_MAX_EXPONENT:
        raise WireError(
            400,
            VALIDATION,
            "Number overflow. Attempting to store a number with magnitude larger than "
            "supported range",
        )
    if magnitude < _NUMBER_MIN_EXPONENT:
        raise WireError(
            400,
            VALIDATION,
            "Number underflow. Attempting to store a number with magnitude smaller than "
            "supported range",
        )


# --- DynamoDB's limits beyond the model ---------------------------------------------------


def _semantics(operation: str, payload: Mapping[str, Any], measure: bool) -> None:
    """Empty names in ``AttributesToGet``; sizes of batches, transactions and items (the model
    has passed: shapes are right).

    An item's size never exceeds its JSON text's, so a body of 400 KB or less (``measure``
    False) holds no item that is too large.
    """
    specs = payload["RequestItems"].values() if operation == "BatchGetItem" else (payload,)
    for spec in specs:
        names = spec.get("AttributesToGet") if isinstance(spec, dict) else None
        if isinstance(names, list) and "" in names:
            raise WireError(400, VALIDATION, "Empty attribute name")
    items: list[Mapping[str, Any]] = []
    if operation in _WRITE_ITEMS:
        items.append(payload[_WRITE_ITEMS[operation]])
    elif operation == "BatchGetItem":
        requests = payload["RequestItems"]
        if not requests:
            raise WireError(400, VALIDATION, "BatchGetItem must have some requests set")
        if sum(len(spec.get("Keys") or ()) for spec in requests.values()) > MAX_BATCH_GET_KEYS:
            raise WireError(400, VALIDATION, "Too many items requested for the BatchGetItem call")
    elif operation == "BatchWriteItem":
        requests = payload["RequestItems"]
        if not requests:
            raise WireError(400, VALIDATION, "BatchWriteItem cannot have a null or no requests set")
        if sum(len(entries) for entries in requests.values()) > MAX_BATCH_WRITE_REQUESTS:
            raise WireError(
                400,
                VALIDATION,
                "1 validation error detected: Value at 'requestItems' failed to satisfy "
                "constraint: Member must have length less than or equal to 25",
            )
        for entries in requests.values():
            for entry in entries:
                put = entry.get("PutRequest")
                if isinstance(put, dict) and isinstance(put.get("Item"), dict):
                    items.append(put["Item"])
    elif operation == "TransactWriteItems":
        for action in payload["TransactItems"]:
            put = action.get("Put")
            if isinstance(put, dict) and isinstance(put.get("Item"), dict):
                items.append(put["Item"])
    for item in items if measure else ():
        try:
            size = item_size(item)
        except (ConfigError, TypeError, ValueError, AttributeError):
            continue  # a shape the model has let pass, for the backend to judge
        if size > MAX_ITEM_BYTES:
            raise WireError(400, VALIDATION, "Item size has exceeded the maximum allowed size")
