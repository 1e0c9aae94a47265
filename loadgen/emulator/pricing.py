"""What a request costs: estimated to admit it, then settled on what the backend answered.

DynamoDB charges by the items a request touches (`loadgen.model.capacity`): a write by the larger
of the item before and after it, a read by what it returns. The request alone says neither,
so the emulator remembers the items it has seen (`ItemShadow`) and replays updates on them
(`loadgen.model.update_expression`).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from loadgen.emulator.wire import batch_entries, dumps, error_code
from loadgen.model.capacity import (
    Item,
    KeyValue,
    OperationCost,
    charged_on,
    cost_of,
    item_size,
    key_value,
)
from loadgen.model.itemsize import SizedItem
from loadgen.model.schema import TableSchema
from loadgen.model.update_expression import apply_update

__all__ = ["ItemShadow", "Pricing", "primary_key"]

_READ_PROJECTIONS = ("ProjectionExpression", "AttributesToGet")


def primary_key(schema: TableSchema, item: Item) -> tuple[KeyValue, ...] | None:
    """The item's primary key as hashable values, or None if a key attribute is missing."""
    try:
        return tuple(key_value(item[name]) for name in schema.key_attributes)
    except (KeyError, TypeError, ValueError):
        return None


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

    def __init__(self, capacity: int, on_size: Callable[[str, float], None] | None = None) -> None:
        if capacity < 0:
            raise ValueError(f"shadow capacity must be >= 0 items (got {capacity!r})")
        self.capacity = capacity
        """Items kept at most; 0 keeps none (every write is priced as an insert)."""
        self._items: OrderedDict[tuple[str, tuple[KeyValue, ...]], tuple[bytes, int]] = (
            OrderedDict()
        )
        self.table_bytes: dict[str, int] = {}
        """Each table's data size as seen pass by: items added, grown, shrunk or deleted while
        the shadow held them (an item evicted and seen again counts again)."""
        self.on_size = on_size
        """Called with (table, bytes) when a table's size changes (the partition model's
        `resize`)."""
        self.changes = 0
        """How many times an item was remembered or forgotten: unchanged between two reads,
        what the first read gave still holds."""

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
        return SizedItem(json.loads(stored[0]), stored[1])

    def put(self, table: str, key: tuple[KeyValue, ...] | None, item: Item | None) -> None:
        """Remember ``item`` as stored under ``key`` (None: it is gone)."""
        if key is None:
            return
        self.changes += 1
        old = self._items.get((table, key))
        size = item_size(item) if item is not None else 0
        if size != (old[1] if old is not None else 0):
            total = self.table_bytes.get(table, 0) + size - (old[1] if old is not None else 0)
            self.table_bytes[table] = max(0, total)
            if self.on_size is not None:
                self.on_size(table, self.table_bytes[table])
        if item is None:
            self._items.pop((table, key), None)
            return
        if self.capacity == 0:
            return
        self._items[(table, key)] = (dumps(item), size)
        self._items.move_to_end((table, key))
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)

    def drop_table(self, table: str) -> None:
        """Forget every item of a table (it was deleted or created anew). O(items)."""
        self.changes += 1
        self.table_bytes.pop(table, None)
        for entry in [entry for entry in self._items if entry[0] == table]:
            del self._items[entry]


class Pricing:
    """What one request costs: estimated before it runs, then from what the backend answered.

    Writes are priced from the item shadow (before) and the request (after); reads admit
    what the shadow knows (or the minimum) and are settled from the items actually returned.
    Applies what the backend confirmed to the shadow.

        >>> pricing = Pricing("PutItem", request, schemas, shadow)  # doctest: +SKIP
        >>> estimate = pricing.estimate()                           # doctest: +SKIP
        >>> actual = pricing.actual(estimate, 200, answer)          # doctest: +SKIP
    """

    def __init__(
        self,
        operation: str,
        request: Mapping[str, Any],
        schemas: Mapping[str, TableSchema],
        shadow: ItemShadow,
    ) -> None:
        self.operation, self.request = operation, request
        self.schemas, self.shadow = schemas, shadow
        self.known: dict[str, Any] = {}
        self._changes = shadow.changes  # the shadow as the estimate read it

    def estimate(self) -> OperationCost:
        """The cost to admit before the request runs."""
        op, request = self.operation, self.request
        if op in ("GetItem", "PutItem", "UpdateItem", "DeleteItem"):
            table, key = request["TableName"], request.get("Key") or request["Item"]
            stored = self._stored(table, key)
            if op == "GetItem":
                self.known = {"returned": stored}
            elif op == "UpdateItem":
                self.known = {"before": stored, "after": apply_update(stored, key, request)}
            else:
                self.known = {"before": stored}
        elif op == "BatchGetItem":
            entries = batch_entries(request, op)
            self.known = {"returned": [self._stored(t, key) for t, key in entries]}
        elif op == "BatchWriteItem":
            entries = batch_entries(request, op)
            self.known = {"before": [self._stored(t, _write_key(e)) for t, e in entries]}
        elif op == "TransactGetItems":
            gets = [entry["Get"] for entry in request["TransactItems"]]
            self.known = {"returned": [self._stored(g["TableName"], g["Key"]) for g in gets]}
        elif op == "TransactWriteItems":
            befores, afters = [], []
            for entry in request["TransactItems"]:
                ((action, body),) = entry.items()
                key = body.get("Key") or body["Item"]
                stored = self._stored(body["TableName"], key)
                befores.append(stored)
                afters.append(apply_update(stored, key, body) if action == "Update" else None)
            self.known = {"before": befores, "after": afters}
        return self._cost()

    def actual(self, estimate: OperationCost, status: int, parsed: dict[str, Any]) -> OperationCost:
        """The cost to settle on once the backend answered ``status`` and ``parsed``."""
        op, request = self.operation, self.request
        if status != 200:
            cancelled = parsed.get("CancellationReasons") or ()
            reasons = [r.get("Code") for r in cancelled if isinstance(r, dict)]
            if charged_on(error_code(parsed), reasons) == "nothing":
                return OperationCost(op, ())  # refused before any work: nothing consumed
            return self._cost(failed=True)  # a failed condition, a cancellation: the table
        if op == "GetItem":
            item = parsed.get("Item")
            self.known["returned"] = self._whole(request, request["TableName"], item)
        elif op in ("Query", "Scan"):
            self.known["returned"] = self._query_items(parsed)
        elif op == "BatchGetItem":
            self.known["returned"] = self._batch_items(parsed)
        elif op == "TransactGetItems":
            gets = [entry["Get"] for entry in request["TransactItems"]]
            responses = parsed.get("Responses") or [{} for _ in gets]
            self.known["returned"] = [
                self._whole(get, get["TableName"], r.get("Item"))
                for get, r in zip(gets, responses, strict=False)
            ]
        else:
            return self._written(estimate, parsed)
        return self._cost()

    def _written(self, estimate: OperationCost, parsed: Mapping[str, Any]) -> OperationCost:
        op, request = self.operation, self.request
        if op in ("PutItem", "UpdateItem", "DeleteItem"):
            table, key = request["TableName"], request.get("Key") or request["Item"]
            attributes = parsed.get("Attributes")
            returned = request.get("ReturnValues")
            if op == "PutItem":
                after: Any = request["Item"]
            elif op == "DeleteItem":
                after = None
            elif returned == "ALL_NEW" and attributes is not None:
                after = attributes
            elif returned != "ALL_OLD" and self.shadow.changes == self._changes:
                after = self.known["after"]  # nothing landed since the estimate replayed it
            else:  # apply to the latest known item: concurrent updates land in answer order
                base = attributes if returned == "ALL_OLD" else self._stored(table, key)
                after = apply_update(base, key, request)
            self._remember(table, key, after)
            if returned == "ALL_OLD":  # the backend told us what was stored: price exactly
                self.known["before"] = attributes
                return self._cost()
        elif op == "BatchWriteItem":
            unprocessed = parsed.get("UnprocessedItems") or {}
            for table, entry in batch_entries(self.request, op):
                if entry in unprocessed.get(table, ()):
                    continue
                put = entry.get("PutRequest")
                self._remember(table, _write_key(entry), put["Item"] if put else None)
        elif op == "TransactWriteItems":
            for entry in request["TransactItems"]:
                ((action, body),) = entry.items()
                table, key = body["TableName"], body.get("Key") or body["Item"]
                if action == "Put":
                    self._remember(table, key, body["Item"])
                elif action == "Delete":
                    self._remember(table, key, None)
                elif action == "Update":
                    self._remember(table, key, apply_update(self._stored(table, key), key, body))
        return estimate

    def _cost(self, *, failed: bool = False) -> OperationCost:
        return cost_of(
            self.operation, self.request, tables=self.schemas, failed=failed, **self.known
        )

    def _stored(self, table: str, key: Mapping[str, Any]) -> Any:
        return self.shadow.get(table, primary_key(self.schemas[table], key))

    def _remember(self, table: str, key: Mapping[str, Any], item: Any) -> None:
        # An update we could not follow leaves an unknown item: forget rather than keep a
        # stale one.
        self.shadow.put(table, primary_key(self.schemas[table], key), item)

    def _whole(self, spec: Mapping[str, Any], table: str, item: Any) -> Any:
        """The stored item behind a read answer: the shadow's when the answer is projected."""
        schema = self.schemas[table]
        if any(name in spec for name in _READ_PROJECTIONS):
            # A projection may leave the key out: a Get names it in the request.
            known = spec.get("Key") or item
            key = primary_key(schema, known) if known and item else None
            return self.shadow.get(table, key) or item
        if item is None:
            return None
        self.shadow.put(table, primary_key(schema, item), item)
        return item

    def _query_items(self, parsed: Mapping[str, Any]) -> list[Any]:
        request, table = self.request, self.request["TableName"]
        items = list(parsed.get("Items") or ())
        if "IndexName" not in request:  # index entries are what an index read is charged by
            items = [self._whole(request, table, item) for item in items]
        # A filter drops items after they were read and charged: price the ones dropped like
        # the average one kept.
        scanned = parsed.get("ScannedCount")
        if isinstance(scanned, int) and items and scanned > len(items):
            items = [items[i % len(items)] for i in range(scanned)]
        return items

    def _batch_items(self, parsed: Mapping[str, Any]) -> list[Any]:
        found: dict[tuple[str, Any], Any] = {}
        for table, items in (parsed.get("Responses") or {}).items():
            for item in items:
                found[(table, primary_key(self.schemas[table], item))] = item
        returned = []
        for table, key in batch_entries(self.request, self.operation):
            item = found.get((table, primary_key(self.schemas[table], key)))
            spec = self.request["RequestItems"][table]
            returned.append(self._whole(spec, table, item))
        return returned


def _write_key(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    put = entry.get("PutRequest")
    key: Mapping[str, Any] = put["Item"] if put is not None else entry["DeleteRequest"]["Key"]
    return key
