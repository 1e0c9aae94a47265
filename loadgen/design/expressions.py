"""A design's requests read as DynamoDB reads them, before anything is sent.

Every access pattern compiles to request templates (`loadgen.design.patterns`); their
expressions and placeholder maps hold no template, so they are read once, with the emulator's
own parser and DynamoDB's rules and limits (`loadgen.model.expressions.request_error`): a
literal in a condition (``remaining > 0``), an undefined or unused placeholder, a reserved
word, an expression over 4 KB are each what DynamoDB would refuse on every call. Beyond the
expressions: a strongly consistent read of a global secondary index, and an update of a key
attribute. `refusal` gives the first, with the field of the pattern it is in; the loader
raises it as one line naming the pattern by its id, so ``loadgen check``, ``run`` and
``simulate`` refuse the same files alike.

A request given whole (``request:``, and every pattern of AWS's data model) is read against
DynamoDB's API model as the project tests it (`loadgen.model.api`, in botocore's words), then
DynamoDB's rules on what it names: its tables, its keys, its batch's size (`request_problem`).

`unwritten_indexes` is a warning, not a refusal: an index a pattern reads whose key no entity,
item or update writes stays empty (a misspelt ``eventID``), and its reads find nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from difflib import get_close_matches
from typing import Any

from loadgen.design.patterns import CompiledPattern
from loadgen.design.spec import AccessPattern, DesignFile
from loadgen.model.api import api_model
from loadgen.model.expressions import (
    EXPRESSION_ORDER,
    attribute_uses,
    request_error,
    update_paths,
)
from loadgen.model.limits import too_many
from loadgen.model.schema import TableSchema

__all__ = ["refusal", "request_problem", "unknown_attributes", "unwritten_indexes"]

_FIELDS = {
    "ConditionExpression": "condition",
    "FilterExpression": "filter",
    "UpdateExpression": "update",
    "ProjectionExpression": "projection",
    "KeyConditionExpression": "key",
}
_KIND = re.compile(r"^Invalid (\w+): ")
_LITERAL = re.compile(r'Syntax error; token: "([0-9]+|\'|"|[^"]*[\'"][^"]*)"')
_GSI_CONSISTENT = "Consistent reads are not supported on global secondary indexes"


def refusal(
    pattern: CompiledPattern, spec: AccessPattern, schemas: Mapping[str, TableSchema]
) -> tuple[str, str] | None:
    """The first thing DynamoDB would refuse in every execution of ``pattern``: (the field of
    the pattern it is in, DynamoDB's message with what to do), or None."""
    if spec.request is not None and pattern.requests:
        problem = request_problem(pattern.operation, pattern.requests[0].request, schemas)
        if problem is not None:
            return "request", problem
    for where, body in _bodies(pattern.requests[0].request if pattern.requests else {}):
        message = request_error(body)
        if message is not None:
            return _field(where, message, spec), _with_hint(message)
        table = schemas.get(str(body.get("TableName")))
        if table is None:
            continue
        index = body.get("IndexName")
        if body.get("ConsistentRead") and index is not None:
            found = next((i for i in table.indexes if i.name == index), None)
            if found is not None and not found.local:
                return (
                    f"{where}consistent" if spec.request is None else f"{where}request",
                    f"{_GSI_CONSISTENT} ({index} of table {table.name} is one: its reads are "
                    "eventually consistent, or read the table or a local index)",
                )
        text = body.get("UpdateExpression")
        if isinstance(text, str):
            names = body.get("ExpressionAttributeNames") or {}
            for _, path in update_paths(text):
                first = path[0]
                attribute = names.get(first, first) if isinstance(first, str) else first
                if attribute in table.key_attributes:
                    return (
                        _update_field(where, spec),
                        "One or more parameter values were invalid: Cannot update attribute "
                        f"{attribute}. This attribute is part of the key",
                    )
    return None


def _bodies(request: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(field prefix, request body) of a request: itself, each action of a transaction, each
    table's part of a batch."""
    actions = request.get("TransactItems")
    if isinstance(actions, list):
        for i, action in enumerate(actions):
            for body in action.values() if isinstance(action, Mapping) else ():
                if isinstance(body, Mapping):
                    yield f"actions[{i}].", body
        return
    items = request.get("RequestItems")
    if isinstance(items, Mapping):
        for table, body in items.items():
            if isinstance(body, Mapping):
                yield "", {"TableName": table, **body}
        return
    yield "", request


def _field(where: str, message: str, spec: AccessPattern) -> str:
    """The pattern's field DynamoDB's message is about."""
    if spec.request is not None:
        return "request"
    kind = _KIND.match(message)
    if kind is not None and kind.group(1) in _FIELDS:
        return where + _FIELDS[kind.group(1)]
    if "ExpressionAttributeNames" in message:
        return where + "names"
    if "ExpressionAttributeValues" in message:
        return where + "values"
    return where.rstrip(".") or "operation"


def _update_field(where: str, spec: AccessPattern) -> str:
    """The field an update expression came from: the file's own (``update``), else ``set``."""
    if spec.request is not None:
        return "request"
    action = re.fullmatch(r"actions\[(\d+)\]\.", where)
    given = spec.actions[int(action.group(1))] if action and spec.actions else spec
    return f"{where}{'update' if given.update is not None else 'set'}"


def _with_hint(message: str) -> str:
    """DynamoDB's message, and what to write instead where it is a literal in an expression."""
    if _LITERAL.search(message):
        return (
            f"{message} (an expression takes no literal: name the value with a placeholder "
            'given under values, e.g. remaining >= :one with values: {":one": 1})'
        )
    return message


def unwritten_indexes(
    spec: DesignFile, compiled: Mapping[str, CompiledPattern], schemas: Mapping[str, TableSchema]
) -> list[str]:
    """One warning per index a pattern reads whose key attributes no entity, listed item or
    write of the design carries: its reads would find nothing."""
    written = _carried(spec, compiled, schemas)
    notes = []
    for pattern in compiled.values():
        if pattern.index is None:
            continue
        schema = pattern.schemas[pattern.table]
        index = schema.index(pattern.index)
        missing = [a for a in index.key_attributes if a not in written.get(schema.name, set())]
        if missing:
            notes.append(
                f"access pattern {pattern.id!r} reads index {index.name} of table {schema.name}, "
                f"but no entity, item or write of the design carries its key attribute "
                f"{', '.join(repr(a) for a in missing)}: the index stays empty and the "
                "pattern's reads find nothing"
            )
    return notes


def unknown_attributes(
    spec: DesignFile, compiled: Mapping[str, CompiledPattern], schemas: Mapping[str, TableSchema]
) -> tuple[list[tuple[str, str]], list[str]]:
    """Attributes a pattern's expressions name that no item of their table carries (no
    entity, listed item or write of the design: a misspelt ``peeple``): (where in the file,
    why) of each a condition, an update or a projection reads, which DynamoDB never finds; one
    warning for each an expression only tests or tolerates absent (``attribute_not_exists(x)``,
    ``if_not_exists(x, :v)``, ``REMOVE x``), which holds as if every item lacked it, and for
    each a filter reads (it only leaves out what a read returns). A key condition names the
    key of what it queries."""
    carried = _carried(spec, compiled, schemas)
    refused: list[tuple[str, str]] = []
    notes: list[str] = []
    for given in spec.access_patterns:
        pattern = compiled[given.id]
        for where, body in _bodies(pattern.requests[0].request if pattern.requests else {}):
            schema = schemas.get(str(body.get("TableName") or pattern.table))
            if schema is None or request_error(body) is not None:
                continue
            names = body.get("ExpressionAttributeNames") or {}
            for kind in EXPRESSION_ORDER:
                text = body.get(kind)
                if not isinstance(text, str):
                    continue
                uses: dict[str, set[str]] = {}
                for name, use in attribute_uses(kind, text):
                    uses.setdefault(str(names.get(name, name)), set()).add(use)
                field_name = (
                    "request"
                    if given.request is not None
                    else _update_field(where, given)
                    if kind == "UpdateExpression"
                    else where + _FIELDS[kind]
                )
                if kind == "KeyConditionExpression":
                    index = body.get("IndexName")
                    owner = schema.index(index) if isinstance(index, str) else schema
                    for attribute in uses:
                        if attribute not in owner.key_attributes:
                            refused.append((
                                f"access_patterns.{given.id}.{field_name}",
                                f"attribute {attribute!r} is not a key attribute of "
                                f"{owner.name} (its key: {', '.join(owner.key_attributes)})",
                            ))  # fmt: skip
                    continue
                known = carried.get(schema.name, set()) | set(schema.key_attributes)
                for attribute, used in uses.items():
                    # A name drawn at each execution (``c{counter}``) is judged by no item.
                    if attribute in known or "writes" in used or "{" in attribute:
                        continue
                    close = get_close_matches(attribute, sorted(known), n=1)
                    carry = sorted(known)
                    more = ", ..." if len(carry) > 12 else ""
                    hint = (
                        f"; did you mean {close[0]!r}?"
                        if close
                        else f" (its items carry {', '.join(carry[:12])}{more})"
                    )
                    if "absent" in used:
                        notes.append(
                            f"access pattern {given.id!r} {field_name}: attribute "
                            f"{attribute!r} is carried by no entity, listed item or write of "
                            f"table {schema.name}, and the expression tests it absent: it "
                            f"finds every item without it{hint}"
                        )
                    elif kind == "FilterExpression":
                        notes.append(
                            f"access pattern {given.id!r} {field_name}: attribute "
                            f"{attribute!r} is carried by no entity, listed item or write of "
                            f"table {schema.name}: the filter never finds it{hint}"
                        )
                    else:
                        refused.append((
                            f"access_patterns.{given.id}.{field_name}",
                            f"attribute {attribute!r} is carried by no entity, listed item "
                            f"or write of table {schema.name}: DynamoDB never finds it{hint}",
                        ))  # fmt: skip
    return refused, notes


def _carried(
    spec: DesignFile, compiled: Mapping[str, CompiledPattern], schemas: Mapping[str, TableSchema]
) -> dict[str, set[str]]:
    """Per table, the attributes an entity, a listed item or a write of the design carries."""
    written: dict[str, set[str]] = {}
    first = next(iter(schemas))  # an entity's table when it names none, as everywhere
    for entity in spec.entities.values():
        written.setdefault(entity.table or first, set()).update(entity.item)
    for table, rows in (spec.items or {}).items():
        for row in rows:  # boto3's batch_write_item shape, as the starting data reads it
            written.setdefault(table, set()).update(next(iter(row.values())).get("Item", row))
    for pattern in compiled.values():
        for request in pattern.requests:
            _written_by(request.request, pattern.table, written)
        for template in pattern.key_templates:
            if pattern.operation == "BatchWriteItem":
                written.setdefault(pattern.table, set()).update(template)
    return written


def _written_by(request: Mapping[str, Any], default: str, written: dict[str, set[str]]) -> None:
    """Attributes a request writes (its items, its batch's puts, what its updates SET or ADD),
    added to their tables'."""
    for table, rows in (request.get("RequestItems") or {}).items():
        for row in rows if isinstance(rows, list) else ():
            put = row.get("PutRequest") if isinstance(row, Mapping) else None
            if isinstance(put, Mapping) and isinstance(put.get("Item"), Mapping):
                written.setdefault(str(table), set()).update(put["Item"])
    bodies = [request] if "TransactItems" not in request else [b for _, b in _bodies(request)]
    for body in bodies:
        found = written.setdefault(str(body.get("TableName") or default), set())
        item = body.get("Item")
        if isinstance(item, Mapping):
            found.update(item)
        text = body.get("UpdateExpression")
        if isinstance(text, str) and request_error(body) is None:
            names = body.get("ExpressionAttributeNames") or {}
            for clause, path in update_paths(text):
                first = path[0]
                if clause in ("SET", "ADD") and isinstance(first, str):
                    found.add(names.get(first, first))


_ACTIONS = {"TransactGetItems": ("Get",),
            "TransactWriteItems": ("ConditionCheck", "Put", "Delete", "Update")}  # fmt: skip


def request_problem(operation: str, request: Any, schemas: Mapping[str, TableSchema]) -> str | None:
    """Why DynamoDB would refuse ``request`` whatever its values, or None: its shape against
    DynamoDB's API model (botocore's words), then a table the design does not have, a key that
    is not the table's, an item without its key, a batch or transaction too large or empty, a
    Query without a key condition. For a request given whole, as AWS's data model gives each."""
    api = api_model()
    found = api["operations"].get(operation)
    if found is None:
        return f"{operation} is not a DynamoDB operation"
    problem = _shape_problem(api["shapes"], found["input"]["shape"], request, "input")
    if problem is not None:
        return problem
    if operation in ("BatchGetItem", "BatchWriteItem"):
        return _batch_problem(operation, request["RequestItems"], schemas)
    if operation in _ACTIONS:
        actions = request["TransactItems"]
        problem = too_many(operation, len(actions))
        if problem is not None:
            return problem
        for i, action in enumerate(actions):
            kinds = [kind for kind in _ACTIONS[operation] if action.get(kind) is not None]
            if len(kinds) != 1:
                return (
                    f"TransactItems[{i}] names {len(kinds)} of "
                    f"{', '.join(_ACTIONS[operation])}: each action names exactly one"
                )
            body = action[kinds[0]]
            problem = _key_problem(
                schemas, body["TableName"], body.get("Key") or body.get("Item"), kinds[0] == "Put"
            )
            if problem is not None:
                return f"TransactItems[{i}]: {problem}"
        return None
    table = request["TableName"]
    if operation == "Query" and not (
        request.get("KeyConditionExpression") or request.get("KeyConditions")
    ):
        return (
            "Either the KeyConditions or KeyConditionExpression parameter must be specified in "
            "the request."
        )
    if operation in ("GetItem", "UpdateItem", "DeleteItem"):
        return _key_problem(schemas, table, request["Key"], item=False)
    if operation == "PutItem":
        return _key_problem(schemas, table, request["Item"], item=True)
    return _key_problem(schemas, table, None, item=False)


def _batch_problem(
    operation: str, requests: Mapping[str, Any], schemas: Mapping[str, TableSchema]
) -> str | None:
    if not requests:
        return f"a {operation} names at least one table (its RequestItems are empty)"
    get = operation == "BatchGetItem"
    count = sum(len(body["Keys"]) if get else len(body) for body in requests.values())
    problem = too_many(operation, count)
    if problem is not None:
        return problem
    for table, body in requests.items():
        for row in body["Keys"] if get else body:
            if get:
                problem = _key_problem(schemas, table, row, item=False)
            else:
                kinds = [k for k in ("PutRequest", "DeleteRequest") if row.get(k) is not None]
                if len(kinds) != 1:
                    return (
                        "Supplied WriteRequest must contain exactly one of PutRequest or "
                        "DeleteRequest"
                    )
                entry = row[kinds[0]]
                put = kinds[0] == "PutRequest"
                problem = _key_problem(schemas, table, entry["Item" if put else "Key"], put)
            if problem is not None:
                return problem
    return None


def _key_problem(
    schemas: Mapping[str, TableSchema], table: str, key: Any, item: bool
) -> str | None:
    """A table the design lacks, or a key (an item's key attributes) that is not its own."""
    schema = schemas.get(table)
    if schema is None:
        return f"no table of the design is named {table!r} (it has: {', '.join(schemas)})"
    if key is None:
        return None
    if item:
        missing = [a for a in schema.key_attributes if a not in key]
        if missing:
            return (
                f"One or more parameter values were invalid: Missing the key {missing[0]} in "
                "the item"
            )
        return None
    if set(key) != set(schema.key_attributes):
        return (
            "The provided key element does not match the schema (the key of table "
            f"{schema.name}: {', '.join(schema.key_attributes)}; given: {', '.join(key)})"
        )
    return None


def _as_any(value: Any) -> Any:
    return value


_TYPES: dict[str, tuple[type, ...]] = {
    "structure": (dict,),
    "map": (dict,),
    "list": (list,),
    "string": (str,),
    "blob": (str, bytes),
    "boolean": (bool,),
    "integer": (int,),
    "long": (int,),
    "double": (int, float),
    "float": (int, float),
    "timestamp": (str, int, float),
}


def _shape_problem(shapes: Mapping[str, Any], name: str, value: Any, path: str) -> str | None:
    """The first of ``value``'s departures from the model's shape ``name``, in botocore's
    words (its client refuses these before sending): a member missing, unknown, of another
    type, a list or a string shorter than its least. Attribute values are DynamoDB's own
    (checked where an item is used)."""
    shape = shapes[name]
    kind = shape["type"]
    types = _TYPES.get(kind, (object,))
    if not isinstance(value, types) or (kind in ("integer", "long") and isinstance(value, bool)):
        valid = ", ".join(str(t) for t in types)
        return (
            f"Invalid type for parameter {path.removeprefix('input.')}, value: {value!s:.60}, "
            f"type: {type(value)}, valid types: {valid}"
        )
    value = _as_any(value)  # of the model's type now
    least = shape.get("min")
    if kind in ("list", "map", "string") and least is not None and len(value) < least:
        return (
            f"Invalid length for parameter {path.removeprefix('input.')}, value: {len(value)}, "
            f"valid min length: {least}"
        )
    if name == "AttributeValue":
        return None
    if kind == "structure":
        members = shape.get("members", {})
        for required in shape.get("required", ()):
            if value.get(required) is None:
                return f'Missing required parameter in {path}: "{required}"'
        for member, item in value.items():
            if member not in members:
                return (
                    f'Unknown parameter in {path}: "{member}", must be one of: {", ".join(members)}'
                )
            problem = _shape_problem(shapes, members[member]["shape"], item, f"{path}.{member}")
            if problem is not None:
                return problem
    elif kind == "list":
        for i, item in enumerate(value):
            problem = _shape_problem(shapes, shape["member"]["shape"], item, f"{path}[{i}]")
            if problem is not None:
                return problem
    elif kind == "map":
        for key, item in value.items():
            problem = _shape_problem(shapes, shape["value"]["shape"], item, f"{path}.{key}")
            if problem is not None:
                return problem
    return None
