"""A design's items held to DynamoDB's size limits before anything runs.

One execution of each access pattern is built with the design's generators, and every item it
writes, overwrites or reads is sized as the model sizes items (`loadgen.model.itemsize`;
``{size: N}`` is N bytes, a template the length of a drawn value): the sizes starting data and
check's cost are figured from (`loadgen.design.check.stored_bytes`). The item an update,
a delete, a check or a read finds is the entity of its table whose item has its key, drawn
alike, or an item the file lists. Past a limit (`loadgen.model.limits`):

- an item over 400 KB, written by a pattern (its field named: ``entity``, ``set``,
  ``actions[2].entity``) or described by an entity or a listed item: DynamoDB refuses it;
- a transaction whose items come to more than 4 MB: DynamoDB refuses it;
- a BatchGetItem whose items come to more than 16 MB a call: a warning, as DynamoDB returns
  part of them and the rest as ``UnprocessedKeys``.

The counts (100 actions, 25 writes, 100 keys) are checked where a pattern compiles
(`loadgen.model.limits.too_many`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from loadgen.design.generators import Draws, ValueGenerator
from loadgen.design.patterns import CompiledPattern, typed_value
from loadgen.design.spec import AccessPattern, DesignFile
from loadgen.design.templates import RequestTemplate
from loadgen.model.itemsize import item_size
from loadgen.model.limits import MAX_BATCH_GET_BYTES, MAX_ITEM_BYTES, MAX_TRANSACTION_BYTES
from loadgen.model.schema import TableSchema
from loadgen.model.update_expression import apply_update

__all__ = ["size_notes", "size_refusal"]

_ITEM = f"DynamoDB stores items of at most {MAX_ITEM_BYTES:,} bytes (400 KB)"


def size_refusal(
    spec: DesignFile,
    compiled: Mapping[str, CompiledPattern],
    schemas: Mapping[str, TableSchema],
    generators: Mapping[str, ValueGenerator],
) -> tuple[str, str] | None:
    """The first size DynamoDB would refuse: (where in the file, why), or None."""
    stored = _Stored(spec, schemas)
    for pattern in spec.access_patterns:
        draws = Draws(generators)
        for call in compiled[pattern.id].calls(draws):
            found = _request_refusal(pattern, call.operation, call.params, stored, draws)
            if found is not None:
                return f"access_patterns.{pattern.id}.{found[0]}", found[1]
    draws = Draws(generators)
    for name, (_, template) in stored.entities.items():
        size = item_size(template.render(draws)["i"])
        if size > MAX_ITEM_BYTES:
            return f"entities.{name}.item", f"an item of {size:,} bytes; {_ITEM}"
    for table, items in stored.listed.items():
        for i, item in enumerate(items):
            size = item_size(item)
            if size > MAX_ITEM_BYTES:
                return f"items.{table}[{i}]", f"an item of {size:,} bytes; {_ITEM}"
    return None


def size_notes(
    spec: DesignFile,
    compiled: Mapping[str, CompiledPattern],
    schemas: Mapping[str, TableSchema],
    generators: Mapping[str, ValueGenerator],
) -> list[str]:
    """One warning per BatchGetItem whose items come to more than one call returns."""
    stored = _Stored(spec, schemas)
    notes = []
    for pattern in spec.access_patterns:
        if pattern.operation != "BatchGetItem":
            continue
        draws = Draws(generators)
        built = compiled[pattern.id]
        for call in built.calls(draws):
            keys = [(t, k) for t, body in call.params["RequestItems"].items() for k in body["Keys"]]
            if built.key_templates:  # every key of the call from one template: its entity's
                key = RequestTemplate({"k": built.key_templates[0]}).render(draws)["k"]
                item = stored.find(built.table, key, draws)
                total = len(keys) * item_size(item) if item is not None else 0
            else:
                found = [stored.find(table, key, draws) for table, key in keys]
                total = sum(item_size(item) for item in found if item is not None)
            if total > MAX_BATCH_GET_BYTES:
                notes.append(
                    f"access pattern {pattern.id!r} reads {len(keys)} items of about "
                    f"{total:,} bytes in all in one BatchGetItem, more than the "
                    f"{MAX_BATCH_GET_BYTES:,} bytes (16 MB) one call returns: DynamoDB returns "
                    "part of them and the rest as UnprocessedKeys"
                )
                break
    return notes


class _Stored:
    """The items a request finds: each entity's item template, typed as its table types its
    keys, and the items the file lists (boto3's ``batch_write_item`` shape)."""

    def __init__(self, spec: DesignFile, schemas: Mapping[str, TableSchema]) -> None:
        first = next(iter(schemas))  # an entity's table when it names none, as everywhere
        self.entities: dict[str, tuple[str, RequestTemplate]] = {}
        for name, entity in spec.entities.items():
            table = entity.table or first
            types = dict(schemas[table].attribute_types)
            typed = {
                a: typed_value(v, f"entities.{name}.item.{a}", types.get(a))
                for a, v in entity.item.items()
            }
            self.entities[name] = (table, RequestTemplate({"i": typed}))
        self.listed = {
            table: [next(iter(row.values())).get("Item", row) for row in rows]
            for table, rows in (spec.items or {}).items()
        }

    def find(self, table: str, key: Mapping[str, Any], draws: Draws) -> dict[str, Any] | None:
        for owner, template in self.entities.values():
            if owner == table:
                item: dict[str, Any] = template.render(draws)["i"]
                if all(item.get(a) == v for a, v in key.items()):
                    return item
        for listed in self.listed.get(table, ()):
            if all(listed.get(a) == v for a, v in key.items()):
                return dict(listed)
        return None


def _request_refusal(
    pattern: AccessPattern,
    operation: str,
    params: Mapping[str, Any],
    stored: _Stored,
    draws: Draws,
) -> tuple[str, str] | None:
    """(the pattern's field, why) for an item of one request past 400 KB, or a transaction's
    items past 4 MB."""
    total = 0
    for where, kind, body, entity in _bodies(pattern, operation, params):
        grown = kind == "Put"
        if kind == "Put":
            item: Mapping[str, Any] | None = body["Item"]
        else:
            item = stored.find(str(body.get("TableName")), body["Key"], draws)
            if kind == "Update":
                after = apply_update(item, body["Key"], body)
                before = item_size(item or {})
                if after is not None and item_size(after) > before:
                    grown, item = before <= MAX_ITEM_BYTES, after
        size = item_size(item) if item is not None else 0
        # An item found too large already is its entity's or listed item's to answer for.
        if size > MAX_ITEM_BYTES and grown:
            updated = " after the update" if kind == "Update" else ""
            whose = f" (entity {entity!r})" if entity else ""
            return where, f"an item of {size:,} bytes{updated}{whose}; {_ITEM}"
        total += size
    if operation in ("TransactWriteItems", "TransactGetItems") and total > MAX_TRANSACTION_BYTES:
        return (
            "actions" if pattern.request is None else "request",
            f"the items of one {operation} come to {total:,} bytes; DynamoDB takes at most "
            f"{MAX_TRANSACTION_BYTES:,} bytes (4 MB) in one transaction",
        )
    return None


def _bodies(
    pattern: AccessPattern, operation: str, params: Mapping[str, Any]
) -> Iterator[tuple[str, str, Mapping[str, Any], str | None]]:
    """(the pattern's field, Put, Update or another kind, body, the entity the file names) of
    each item a request writes or finds."""
    whole = pattern.request is not None
    if operation in ("TransactWriteItems", "TransactGetItems"):
        for i, action in enumerate(params["TransactItems"]):
            ((kind, body),) = action.items()
            given = pattern.actions[i] if pattern.actions and not whole else None
            if given is None:
                yield "request", kind, body, None
            else:
                yield f"actions[{i}].{_field(kind, given)}", kind, body, given.entity
    elif operation == "BatchWriteItem":
        for table, rows in params["RequestItems"].items():
            for row in rows:
                if "PutRequest" in row:
                    body = {"TableName": table, **row["PutRequest"]}
                    yield "request" if whole else "entity", "Put", body, pattern.entity
    elif operation == "PutItem":
        yield "request" if whole else "entity", "Put", params, pattern.entity
    elif operation == "UpdateItem":
        field = "request" if whole else _field("Update", pattern)
        yield field, "Update", params, pattern.entity


def _field(kind: str, given: Any) -> str:
    """Where the file gives what makes an item large: a Put's entity, an update's ``update``,
    ``set`` or ``add``, else the key."""
    if kind == "Put":
        return "entity"
    if kind == "Update":
        return "update" if given.update is not None else "set" if given.set else "add"
    return "key"
