"""Which secondary-index entries a write touches, read from the table's schema and the request.

A write reaches an index when the item it leaves holds the index's key attributes. The client
knows only the request, not the item stored before it, so this module counts what the request
itself shows:

- PutItem, a BatchWriteItem PutRequest, a TransactWriteItems Put: the item carries every
  key attribute of the indexes it is in, so each such index gets an entry at the item's value
  of the index's partition key;
- UpdateItem, a TransactWriteItems Update: an index whose key attribute the update SETs to a
  value (``SET GSI1PK = :g``), at the index's partition-key value taken from the SET or from
  the request's ``Key`` (an LSI, or a GSI keyed on the table's own keys); and an index keyed
  on the table's key attributes alone, which holds every item, at the value ``Key`` carries,
  where the update changes what the index projects (any attribute for ``ALL``). Whether the
  stored item holds the index's other key attributes is not known: the entry is counted.
  The value the update replaces is not in the request, so a key move counts one entry, on the
  new key;
- DeleteItem, a BatchWriteItem DeleteRequest, a TransactWriteItems Delete: nothing. Which
  index keys the deleted item had is in the stored item, which the request does not carry.

    writes = index_writes("PutItem", request, {"orders": schema})
    # [("orders", "status", "STATUS#PLACED")]
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from loadgen.model.itemsize import KeyValue, key_value
from loadgen.model.schema import IndexSchema, TableSchema

__all__ = ["IndexWrite", "index_writes", "set_values", "writes_indexes"]

IndexWrite = tuple[str, str, KeyValue]
"""(table, index, the index's partition-key value) of one index entry a write touches."""

_WRITES = frozenset({"PutItem", "UpdateItem", "BatchWriteItem", "TransactWriteItems"})
# One ``path = :value`` assignment of a SET clause; anything else (arithmetic, functions,
# nested paths) is not an assignment of a known value and is left out.
_ASSIGNMENT = re.compile(r"^\s*(#?[A-Za-z_][\w]*)\s*=\s*(:[\w]+)\s*$")
_CLAUSE = re.compile(r"\b(SET|REMOVE|ADD|DELETE)\b", re.IGNORECASE)


def writes_indexes(schema: TableSchema) -> bool:
    """Whether a write to the table can touch an index (it has one)."""
    return bool(schema.global_indexes or schema.local_indexes)


def set_values(request: Mapping[str, Any]) -> dict[str, Any]:
    """The top-level attributes an UpdateItem's SET clause assigns a value to, with the value.

    Only plain assignments of a placeholder (``SET #s = :s, GSI1PK = :g``) are read; an
    assignment computed from the stored item (``n = n + :one``, ``if_not_exists``) has a
    value the request does not hold. Legacy ``AttributeUpdates`` with ``PUT`` count too.

    >>> set_values({"UpdateExpression": "SET #s = :s, g = :g ADD n :one",
    ...             "ExpressionAttributeNames": {"#s": "status"},
    ...             "ExpressionAttributeValues": {":s": {"S": "A"}, ":g": {"S": "G"},
    ...                                           ":one": {"N": "1"}}})
    {'status': {'S': 'A'}, 'g': {'S': 'G'}}
    """
    found: dict[str, Any] = {}
    expression = request.get("UpdateExpression")
    if isinstance(expression, str):
        names: Mapping[str, str] = request.get("ExpressionAttributeNames") or {}
        values: Mapping[str, Any] = request.get("ExpressionAttributeValues") or {}
        for path, placeholder in _assignments(expression):
            name = names.get(path) if path.startswith("#") else path
            if name is not None and placeholder in values:
                found[name] = values[placeholder]
    for name, update in (request.get("AttributeUpdates") or {}).items():
        if update.get("Action", "PUT") == "PUT" and "Value" in update:
            found[name] = update["Value"]
    return found


@lru_cache(maxsize=1024)
def _assignments(expression: str) -> tuple[tuple[str, str], ...]:
    """(path, placeholder) of each plain SET assignment; a pattern's calls share one text."""
    found = []
    for clause, body in _clauses(expression):
        if clause == "SET":
            for part in _top_level_parts(body):
                match = _ASSIGNMENT.match(part)
                if match is not None:
                    found.append((match.group(1), match.group(2)))
    return tuple(found)


def _clauses(expression: str) -> Iterator[tuple[str, str]]:
    """(clause keyword, its text) of an update expression, in order."""
    marks = list(_CLAUSE.finditer(expression))
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(expression)
        yield mark.group(1).upper(), expression[mark.end() : end]


def _top_level_parts(body: str) -> Iterator[str]:
    """A clause's comma-separated actions; commas inside function calls do not split."""
    depth = start = 0
    for i, char in enumerate(body):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            yield body[start:i]
            start = i + 1
    yield body[start:]


_Plan = tuple[tuple[IndexSchema, frozenset[str], bool], ...]
# Plans by the schema object's identity (the schema is kept with its plan, so the identity is
# not reused): hashing a frozen schema with its indexes on every request would cost more than
# the lookup saves. A table changed by UpdateTable is a new schema object, so a new plan.
_PLANS: dict[int, tuple[TableSchema, _Plan]] = {}


def _plan(schema: TableSchema) -> _Plan:
    """Per index: the index, its key attributes, and whether the table's key holds them all."""
    cached = _PLANS.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    table_keys = frozenset(schema.key_attributes)
    plan = tuple(
        (index, frozenset(index.key_attributes), table_keys >= set(index.key_attributes))
        for index in schema.indexes
    )
    if len(_PLANS) > 1024:
        _PLANS.clear()  # schemas come and go in tests; a run holds a handful
    _PLANS[id(schema)] = (schema, plan)
    return plan


def index_writes(
    operation: str, request: Mapping[str, Any], tables: Mapping[str, TableSchema]
) -> list[IndexWrite]:
    """The index entries ``request`` (the JSON body of a write ``operation``) writes.

    Tables without a schema in ``tables`` and requests of other shapes give nothing: this is
    accounting, and a request DynamoDB would reject is the target's to answer.
    """
    if operation not in _WRITES:
        return []
    found: list[IndexWrite] = []
    try:
        if operation == "PutItem":
            _put(found, tables.get(request["TableName"]), request["Item"])
        elif operation == "UpdateItem":
            _update(found, tables.get(request["TableName"]), request)
        elif operation == "BatchWriteItem":
            for table, entries in request["RequestItems"].items():
                schema = tables.get(table)
                for entry in entries:
                    if "PutRequest" in entry:
                        _put(found, schema, entry["PutRequest"]["Item"])
        else:
            for entry in request["TransactItems"]:
                if "Put" in entry:
                    body = entry["Put"]
                    _put(found, tables.get(body["TableName"]), body["Item"])
                elif "Update" in entry:
                    body = entry["Update"]
                    _update(found, tables.get(body["TableName"]), body)
    except (KeyError, TypeError, AttributeError, ValueError):
        return found
    return found


def _put(found: list[IndexWrite], schema: TableSchema | None, item: Mapping[str, Any]) -> None:
    if schema is None:
        return
    for index, keys, _ in _plan(schema):
        if all(name in item for name in keys):
            found.append((schema.name, index.name, key_value(item[index.partition_key])))


def _update(
    found: list[IndexWrite], schema: TableSchema | None, request: Mapping[str, Any]
) -> None:
    if schema is None:
        return
    plan = _plan(schema)
    if not plan:
        return
    key: Mapping[str, Any] = request["Key"]
    assigned = set_values(request)
    for index, keys, on_table_keys in plan:
        if keys.isdisjoint(assigned) and not (on_table_keys and _rewrites(index, assigned)):
            continue
        value = assigned.get(index.partition_key) or key.get(index.partition_key)
        if value is not None:
            found.append((schema.name, index.name, key_value(value)))


def _rewrites(index: IndexSchema, assigned: Mapping[str, Any]) -> bool:
    """Whether an update of an item in ``index`` rewrites its entry: with every attribute
    projected, any change does; with keys only, none that leaves the keys; with ``INCLUDE``,
    one that sets an included attribute."""
    if index.projection == "ALL":
        return True
    return index.projection == "INCLUDE" and any(n in assigned for n in index.non_key_attributes)
