"""Reads priced by the whole items they read: the engine is asked for whole items, and the
request's projection is applied here.

DynamoDB charges a read by the size of the items it reads, whatever the request asks to see of
them (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html:
"the size of the item, not the amount of data that is returned"). A projected answer
(``ProjectionExpression``, ``AttributesToGet``, ``Select: COUNT``) does not say how large the
items were, and may even leave out their key, which places them on a partition. So a projected
read goes to the engine without its projection; the emulator prices the whole items, then cuts
the answer down as DynamoDB would have: the attributes and list elements named, lists keeping
the order of their elements, nothing for a path the item lacks.

A request this module cannot be sure of (a projection DynamoDB would reject, both projection
forms at once, a local secondary index, which fetches unprojected attributes from the table)
goes as it is, for the engine to answer.

    >>> plan = whole_read("GetItem", {"TableName": "t", "Key": {}, "AttributesToGet": ["a"]}, {})
    >>> plan.request
    {'TableName': 't', 'Key': {}}
    >>> answer = {"Item": {"a": {"S": "x"}, "b": {"S": "y"}}}
    >>> plan.cut(answer)
    >>> answer
    {'Item': {'a': {'S': 'x'}}}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from loadgen.model.expressions import first_error, projection_paths
from loadgen.model.schema import TableSchema

__all__ = ["WholeRead", "project", "whole_read"]

_NAME = re.compile(r"#[A-Za-z0-9_]+")
_OTHER_EXPRESSIONS = ("KeyConditionExpression", "FilterExpression")
_COUNT = "COUNT"

# A selection: for each attribute name or list position, True (all of it) or a deeper one.
_Selection = dict[str | int, Any]


@dataclass(frozen=True)
class WholeRead:
    """The request to send instead, and how to cut its answer down to what was asked."""

    request: dict[str, Any]
    """The request without its projections (whole items come back)."""
    selections: tuple[tuple[tuple[str, ...], _Selection | None], ...]
    """Where in the answer items are, and what to keep of each (None: no items, a count)."""

    def cut(self, answer: dict[str, Any]) -> None:
        """Apply the request's projections to an answer of the whole-item request, in place."""
        for where, selection in self.selections:
            _cut(answer, where, selection)


def whole_read(
    operation: str, request: Mapping[str, Any], schemas: Mapping[str, TableSchema]
) -> WholeRead | None:
    """The whole-item form of a projected read, or None where the request should go as it is.

    ``request`` has passed `loadgen.emulator.validation`. ``schemas`` are the tables it names.
    """
    try:
        return _whole_read(operation, request, schemas)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError):
        return None  # a shape validation let pass for the engine to judge


def _whole_read(
    operation: str, request: Mapping[str, Any], schemas: Mapping[str, TableSchema]
) -> WholeRead | None:
    selections: list[tuple[tuple[str, ...], _Selection | None]] = []
    if operation in ("GetItem", "Query", "Scan"):
        planned = _plan(request, schemas.get(request["TableName"]), operation)
        if planned is None:
            return None
        spec, selection = planned
        where = ("Item",) if operation == "GetItem" else ("Items",)
        if spec is request:
            return None
        return WholeRead(dict(spec), ((where, selection),))
    if operation == "BatchGetItem":
        items = {}
        for table, spec in request["RequestItems"].items():
            planned = _plan(spec, schemas.get(table), operation)
            if planned is None:
                return None
            items[table] = planned[0]
            if planned[0] is not spec:
                selections.append((("Responses", table), planned[1]))
        if not selections:
            return None
        return WholeRead({**request, "RequestItems": items}, tuple(selections))
    if operation == "TransactGetItems":
        entries = []
        for i, entry in enumerate(request["TransactItems"]):
            get = entry["Get"]
            planned = _plan(get, schemas.get(get["TableName"]), operation)
            if planned is None:
                return None
            entries.append({**entry, "Get": planned[0]})
            if planned[0] is not get:
                selections.append((("Responses", str(i), "Item"), planned[1]))
        if not selections:
            return None
        return WholeRead({**request, "TransactItems": entries}, tuple(selections))
    return None


def _plan(
    spec: Mapping[str, Any], schema: TableSchema | None, operation: str
) -> tuple[Mapping[str, Any], _Selection | None] | None:
    """``spec`` without its projection and what to keep; ``spec`` itself when it has none;
    None when it is to go as it is."""
    # Members the operation does not have are ignored, as DynamoDB ignores them.
    expression = spec.get("ProjectionExpression")
    attributes = spec.get("AttributesToGet") if operation != "TransactGetItems" else None
    select = spec.get("Select") if operation in ("Query", "Scan") else None
    if expression is None and attributes is None and select != _COUNT:
        return spec, None
    if schema is None or (expression is not None and attributes is not None):
        return None
    if select not in (None, "SPECIFIC_ATTRIBUTES", _COUNT):
        return None
    if (select == _COUNT) == (expression is not None or attributes is not None):
        return None  # COUNT with a projection, SPECIFIC_ATTRIBUTES without one: an error
    index = spec.get("IndexName")
    if index is not None:
        found = next((i for i in schema.indexes if i.name == index), None)
        if found is None or found.local or found.projection != "ALL":
            return None  # the engine knows what the index holds, or what to fetch
    names: Mapping[str, str] = spec.get("ExpressionAttributeNames") or {}
    selection: _Selection | None = None
    if isinstance(expression, str):
        selection = _expression_selection(expression, tuple(sorted(names.items())))
        if selection is None:
            return None
    elif attributes is not None:
        if any(expression in spec for expression in _OTHER_EXPRESSIONS):
            return None  # expressions with AttributesToGet: an error
        if len(set(attributes)) != len(attributes):
            return None
        selection = _selection([(name,) for name in attributes])
        if selection is None:
            return None
    if selection is None and select != _COUNT:
        return None
    whole = dict(spec)
    whole.pop("ProjectionExpression", None)
    if attributes is not None:
        del whole["AttributesToGet"]
    if select is not None:
        del whole["Select"]
    if names:
        used = {name for key in _OTHER_EXPRESSIONS for name in _NAME.findall(spec.get(key) or "")}
        kept = {k: v for k, v in names.items() if k in used}
        if kept:
            whole["ExpressionAttributeNames"] = kept
        else:
            whole.pop("ExpressionAttributeNames", None)
    return whole, selection


@lru_cache(maxsize=4096)
def _expression_selection(expression: str, names: tuple[tuple[str, str], ...]) -> _Selection | None:
    """A ProjectionExpression's selection, or None where DynamoDB would refuse it or two of
    its paths conflict. Read once per text and names: a load test repeats a few of them (the
    selection is only ever read)."""
    if first_error("ProjectionExpression", expression, dict(names), ()) is not None:
        return None
    defined = dict(names)
    paths = [
        tuple(defined[e] if isinstance(e, str) and e.startswith("#") else e for e in path)
        for path in projection_paths(expression)
    ]
    return _selection(paths)


def _selection(paths: list[tuple[str | int, ...]]) -> _Selection | None:
    """The paths as one tree; None where two paths conflict (``a[0]`` and ``a.b``)."""
    root: _Selection = {}
    for path in paths:
        node = root
        for i, element in enumerate(path):
            if node and isinstance(element, int) != isinstance(next(iter(node)), int):
                return None
            if i == len(path) - 1:
                node[element] = True
            else:
                child = node.setdefault(element, {})
                if child is True:
                    return None  # overlap: validation has refused it already
                node = child
    return root


def project(item: Mapping[str, Any], selection: _Selection) -> dict[str, Any]:
    """What DynamoDB returns of ``item`` for a projection (`_selection` of its paths)."""
    kept: dict[str, Any] = {}
    for name, inner in selection.items():
        if isinstance(name, str) and name in item:
            value = _project_value(item[name], inner)
            if value is not None:
                kept[name] = value
    return kept


def _project_value(value: Mapping[str, Any], inner: Any) -> Any:
    if inner is True:
        return value
    first = next(iter(inner))
    if isinstance(first, int):
        elements = value.get("L")
        if not isinstance(elements, list):
            return None
        kept = []
        for position in sorted(inner):
            if position < len(elements):
                element = _project_value(elements[position], inner[position])
                if element is not None:
                    kept.append(element)
        return {"L": kept} if kept else None
    members = value.get("M")
    if not isinstance(members, dict):
        return None
    projected = project(members, inner)
    return {"M": projected} if projected else None


def _cut(answer: Any, where: tuple[str, ...], selection: _Selection | None) -> None:
    parent = answer
    for step in where[:-1]:
        if isinstance(parent, list):
            parent = parent[int(step)] if int(step) < len(parent) else None
        elif isinstance(parent, dict):
            parent = parent.get(step)
        if parent is None:
            return
    last = where[-1]
    if not isinstance(parent, dict) or last not in parent:
        return
    if selection is None:
        del parent[last]  # a count: no items
        return
    found = parent[last]
    if isinstance(found, list):
        parent[last] = [project(item, selection) for item in found]
    elif isinstance(found, dict):
        parent[last] = project(found, selection)
