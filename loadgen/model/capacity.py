"""Capacity units from item sizes, by DynamoDB's documented rules.

Pure functions over DynamoDB-JSON items (``{"pk": {"S": "a"}, "n": {"N": "12"}}``). The HTTP
emulator calls `cost_of` per request to learn what to admit in the partition model and what
``ConsumedCapacity`` to return; the heat exporter calls it where the target reports no
consumed capacity. Both get the same numbers.

What a request that did not succeed consumes is decided here too (`charged_on`): nothing for
one DynamoDB refused before doing any work (a throttle, a validation error), the table's
units without its indexes' for a failed condition or a cancelled transaction.

Checked against DynamoDB Local (AWS's own engine) on these machines, which rounds the same way.
Three deliberate differences: a Query or Scan that reads nothing, and a BatchGetItem key that
finds nothing, cost the minimum read here as a GetItem miss does, where DynamoDB Local
reports 0; and an index write inside a transaction costs what it costs outside one, where
DynamoDB Local doubles it (see `_Call.write`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from loadgen.errors import ConfigError
from loadgen.model.itemsize import Item, KeyValue, item_size, key_value, value_size
from loadgen.model.schema import IndexSchema, TableSchema

__all__ = [
    "OPERATIONS",
    "THROTTLES",
    "Charge",
    "Charged",
    "Consistency",
    "Item",
    "Items",
    "KeyValue",
    "Kind",
    "OperationCost",
    "charged_on",
    "consumed_capacity_response",
    "cost_of",
    "item_size",
    "key_value",
    "page",
    "projected",
    "query_key",
    "read_units",
    "rejected",
    "value_size",
    "write_units",
]

Kind = Literal["read", "write"]
Consistency = Literal["eventual", "strong", "transactional"]
Charged = Literal["all", "table", "nothing"]
"""What an answer is charged (`charged_on`): every charge of the request, the table's alone
(its indexes' not), or nothing."""

# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html
READ_UNIT_BYTES = 4096
"""A read unit covers up to 4 KB; item sizes round up to the next 4 KB."""
WRITE_UNIT_BYTES = 1024
"""A write unit covers up to 1 KB; item sizes round up to the next 1 KB."""
READ_FACTORS: Mapping[str, float] = {"eventual": 0.5, "strong": 1.0, "transactional": 2.0}
"""Read units per 4 KB by consistency."""
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling
TRANSACTION_FACTOR = 2.0
"""Transactions do two underlying reads or writes of every item."""
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.Pagination.html
PAGE_BYTES = 1024 * 1024
"""A Query or Scan reads at most 1 MB a page (before any filter), then returns."""
_LIST_OPERATIONS = frozenset(
    {"BatchGetItem", "BatchWriteItem", "TransactGetItems", "TransactWriteItems"}
)
CONDITION_FAILED = "ConditionalCheckFailedException"
TRANSACTION_CANCELLED = "TransactionCanceledException"
THROTTLED_CANCELLATION = "ThrottlingError"
"""The cancellation reason code of a transaction item DynamoDB throttled."""
THROTTLES = frozenset(
    {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}
)
"""The error codes of a throttle: a request refused for capacity, which more capacity serves."""


def charged_on(error_code: str | None, reasons: Sequence[str | None] = ()) -> Charged:
    """What DynamoDB charges an answer with ``error_code`` (None: it succeeded) and, for a
    cancelled transaction, its items' cancellation ``reasons`` (codes, in request order).

    - ``all``: the request succeeded; every charge of `cost_of`.
    - ``table``: a failed condition, or a transaction cancelled by a condition, a conflict or
      a validation of what it would write: the table's units (`cost_of` with ``failed``),
      none of its indexes'.
    - ``nothing``: a throttle (a transaction cancelled with a ``ThrottlingError`` among its
      reasons too), a validation error or any other error DynamoDB answers before doing the
      work.

    >>> charged_on("ConditionalCheckFailedException"), charged_on("ValidationException")
    ('table', 'nothing')
    """
    if error_code is None:
        return "all"
    if error_code == CONDITION_FAILED:
        # https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html
        # (Capacity unit consumption for write operations): "If the expression evaluates to
        # false, DynamoDB still consumes write capacity units from the table. The amount of
        # consumed write capacity units depends on the size of the item. This item can be an
        # existing item in the table or a new one you're attempting to create or update."
        # From the table: no index entry changes, so no index is charged.
        return "table"
    if error_code == TRANSACTION_CANCELLED:
        if THROTTLED_CANCELLATION in reasons:
            return "nothing"  # throttled: DynamoDB charges no capacity for a throttled request
        # https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html
        # (Capacity management for transactions): DynamoDB performs two underlying reads or
        # writes of every item in the transaction, one to prepare it and one to commit it, and
        # this capacity is consumed even when the transaction does not succeed. Its indexes
        # are not written: "Changes made with transactions are propagated to global secondary
        # indexes (GSIs) ... after the transaction completes successfully".
        return "table"
    # A throttle (ProvisionedThroughputExceededException, ThrottlingException,
    # RequestLimitExceeded), a ValidationException, a missing table: refused before any item
    # was read or written, so nothing is consumed.
    return "nothing"


def rejected(error_code: str | None, reasons: Sequence[str | None] = ()) -> bool:
    """Whether DynamoDB refused the request before any work for what it asked, not for
    capacity: it charges nothing (`charged_on`), and would refuse it at any rate (a
    validation error, a missing table), where a throttle is served once capacity allows."""
    if charged_on(error_code, reasons) != "nothing":
        return False
    return error_code not in THROTTLES and THROTTLED_CANCELLATION not in reasons


@dataclass(frozen=True, slots=True)
class Charge:
    """Capacity that one request consumes on one table or index, at one partition-key value."""

    table: str
    index: str | None
    """Index name, None for the table itself."""
    kind: Kind
    units: float
    key: KeyValue | None
    """Partition-key value charged (the index's own key for an index); None when unknown."""
    eventual: bool = False
    """An eventually consistent read: any of the partition's replicas may serve it
    (`loadgen.model.partitions.EVENTUAL_READ_FACTOR`)."""
    sort: KeyValue | None = None
    """The sort-key value of the item charged, where one item is and the key has one: where
    an item collection (one partition-key value) splits by sort key."""


@dataclass(frozen=True, slots=True)
class OperationCost:
    """What one request costs, grouped as the partition model should admit it.

    Each group is admitted or throttled as a whole: one group for a single-item request or a
    transaction, one group per item for BatchGetItem and BatchWriteItem (DynamoDB returns the
    throttled ones as unprocessed).
    """

    operation: str
    groups: tuple[tuple[Charge, ...], ...]
    transactional: bool = False
    local_indexes: frozenset[tuple[str, str]] = field(default=frozenset())
    """(table, index) pairs among the charges that are local secondary indexes."""

    @property
    def charges(self) -> tuple[Charge, ...]:
        """Every charge of every group."""
        return tuple(charge for group in self.groups for charge in group)

    def total(self, kind: Kind | None = None) -> float:
        """Units over all tables and indexes, of one kind or both."""
        return sum(c.units for c in self.charges if kind is None or c.kind == kind)

    def totals(self) -> dict[tuple[str, str | None], tuple[float, float]]:
        """(read, write) units per (table, index or None), in order of first charge."""
        totals: dict[tuple[str, str | None], tuple[float, float]] = {}
        for c in self.charges:
            read, write = totals.get((c.table, c.index), (0.0, 0.0))
            if c.kind == "read":
                read += c.units
            else:
                write += c.units
            totals[(c.table, c.index)] = (read, write)
        return totals

    def select(self, groups: Sequence[int]) -> OperationCost:
        """The cost of only the given groups, e.g. the batch items that were processed."""
        return OperationCost(
            self.operation,
            tuple(self.groups[i] for i in groups),
            self.transactional,
            self.local_indexes,
        )


def read_units(size_bytes: int, consistency: Consistency = "eventual") -> float:
    """Read units for ``size_bytes`` read in one go; reading nothing costs the minimum."""
    return max(1, math.ceil(size_bytes / READ_UNIT_BYTES)) * READ_FACTORS[consistency]


def write_units(size_bytes: int, *, transactional: bool = False) -> float:
    """Write units for writing ``size_bytes``; at least 1 (2 in a transaction)."""
    units = float(max(1, math.ceil(size_bytes / WRITE_UNIT_BYTES)))
    return units * TRANSACTION_FACTOR if transactional else units


def projected(item: Item | None, table: TableSchema, index: IndexSchema) -> Item | None:
    """The entry ``item`` has in ``index``, or None when it lacks an index key attribute."""
    if item is None or any(name not in item for name in index.key_attributes):
        return None
    if index.projection == "ALL":
        return item
    names = {*table.key_attributes, *index.key_attributes}
    if index.projection == "INCLUDE":
        names.update(index.non_key_attributes)
    return {name: v for name, v in item.items() if name in names}


def page(items: Iterable[Item], limit: int | None = None) -> list[Item]:
    """The items one Query or Scan page reads of ``items`` (in key order): at most ``limit``
    (its ``Limit``, the items evaluated), and no more once 1 MB has been read: what it is
    charged for, their sizes summed and rounded up to 4 KB once (`read_units`).

    >>> len(page([{"s": {"S": "x" * 329}}] * 500, limit=20))
    20
    """
    read: list[Item] = []
    size = 0
    for item in items:
        if (limit is not None and len(read) >= limit) or size >= PAGE_BYTES:
            break
        read.append(item)
        size += item_size(item)
    return read


Items = Item | Sequence[Item | None] | None
"""One item, or one per request item (None where there is none), or None when unknown."""


def cost_of(
    operation: str,
    request: Mapping[str, Any],
    *,
    tables: Mapping[str, TableSchema],
    before: Items = None,
    after: Items = None,
    returned: Items | Mapping[str, Sequence[Item]] = None,
    failed: bool = False,
) -> OperationCost:
    """What ``request`` (the JSON body of ``operation``) costs, per table, index and key.

    Items are whole stored items (before any ProjectionExpression), because DynamoDB charges
    by the stored size. Give what you know; with less you get an estimate to admit on, and
    `PartitionModel.settle` corrects it once the request has run:

    - GetItem, Query, Scan: ``returned`` is the item or the items read (for a filtered Query
      or Scan, every item evaluated; an index's entries for an index). A Query or Scan is
      charged for the page it reads of them (`page`: its ``Limit``, 1 MB). Unknown: the
      minimum read.
    - PutItem, UpdateItem, DeleteItem: ``before`` is the stored item (None if none) and
      ``after`` the item written. PutItem's ``after`` defaults to the request's Item. An
      UpdateItem without ``after`` is estimated as rewriting ``before`` in every index.
    - BatchGetItem: ``returned`` per requested key, in request order, or the response's
      ``Responses`` mapping. BatchWriteItem, TransactWriteItems: ``before`` and ``after`` per
      request item, in request order. TransactGetItems: ``returned`` per Get.
    - ``failed``: the request failed after DynamoDB did its work (`charged_on` says
      ``table``: a failed condition, a cancelled transaction): the table is charged, its
      indexes are not.
    """
    handler = _OPERATIONS.get(operation)
    if handler is None:
        raise ConfigError(f"no capacity rule for operation {operation!r}")
    call = _Call(operation, request, tables, before, after, returned, failed)
    return handler(call)


@dataclass
class _Call:
    operation: str
    request: Mapping[str, Any]
    tables: Mapping[str, TableSchema]
    before: Items
    after: Items
    returned: Items | Mapping[str, Sequence[Item]]
    failed: bool
    locals_seen: set[tuple[str, str]] = field(default_factory=set)

    def table(self, name: str) -> TableSchema:
        schema = self.tables.get(name)
        if schema is None:
            raise ConfigError(f"no schema for table {name!r}")
        return schema

    def cost(
        self, groups: Sequence[tuple[Charge, ...]], transactional: bool = False
    ) -> OperationCost:
        return OperationCost(
            self.operation, tuple(groups), transactional, frozenset(self.locals_seen)
        )

    def write(
        self,
        schema: TableSchema,
        key: Item,
        before: Item | None,
        after: Item | None,
        *,
        transactional: bool = False,
        estimate: bool = False,
    ) -> Iterator[Charge]:
        size = max(item_size(before) if before else 0, item_size(after) if after else 0)
        pk = key_value(key[schema.partition_key])
        units = write_units(size, transactional=transactional)
        yield Charge(schema.name, None, "write", units, pk, sort=_sk(key, schema))
        if self.failed:
            return
        for index in schema.indexes:
            old, new = projected(before, schema, index), projected(after, schema, index)
            for entry, size in _index_writes(index, old, new, estimate=estimate):
                if index.local:
                    self.locals_seen.add((schema.name, index.name))
                # An index write in a transaction is charged at the standard rate: the
                # transactional rate pays for "two underlying reads or writes of every item in
                # the transaction: one to prepare the transaction and one to commit the
                # transaction" (transaction-apis.html, Capacity management for transactions),
                # and an index entry is no item of the transaction: "Transactions cannot be
                # performed using indexes", its changes are "propagated to global secondary
                # indexes (GSIs) ... after the transaction completes successfully" (same page),
                # as every GSI is updated, "asynchronously, using an eventually consistent
                # model" (gsi-throttling.html). Measured on AWS by others the same way; DynamoDB
                # Local doubles it (docs/cost.md, "Transactions and their indexes").
                units = write_units(size)
                where = _pk(entry, index)
                yield Charge(schema.name, index.name, "write", units, where, sort=_sk(entry, index))


def _index_writes(
    index: IndexSchema, old: Item | None, new: Item | None, *, estimate: bool
) -> Iterator[tuple[Item, int]]:
    # https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations.Writes
    if estimate and old is not None:
        yield old, item_size(old)
    elif old is None and new is not None:
        yield new, item_size(new)
    elif old is not None and new is None:
        yield old, item_size(old)
    elif old is not None and new is not None:
        keys = index.key_attributes
        if any(key_value(old[k]) != key_value(new[k]) for k in keys):
            yield old, item_size(old)
            yield new, item_size(new)
        elif old != new:
            yield new, max(item_size(old), item_size(new))


def _pk(item: Item, index: IndexSchema | TableSchema) -> KeyValue:
    return key_value(item[index.partition_key])


def _sk(item: Item, index: IndexSchema | TableSchema) -> KeyValue | None:
    name = index.sort_key
    return key_value(item[name]) if name is not None and name in item else None


def _slots(items: Items, count: int | None) -> list[Item | None]:
    # One slot per request item; count None takes any number (the items a Query read).
    if items is None:
        return [None] * (count or 0)
    if isinstance(items, Mapping):
        return [items] + [None] * ((count or 1) - 1)
    slots = list(items)
    if count is not None and len(slots) != count:
        raise ConfigError(f"expected {count} items, one per request item, got {len(slots)}")
    return slots


def _get_item(call: _Call) -> OperationCost:
    schema = call.table(call.request["TableName"])
    (item,) = _slots(call.returned, 1)
    consistency: Consistency = "strong" if call.request.get("ConsistentRead") else "eventual"
    units = read_units(item_size(item) if item else 0, consistency)
    key = key_value(call.request["Key"][schema.partition_key])
    sort = _sk(call.request["Key"], schema)
    charge = Charge(schema.name, None, "read", units, key, consistency == "eventual", sort)
    return call.cost([(charge,)])


def _put_item(call: _Call) -> OperationCost:
    request = call.request
    schema = call.table(request["TableName"])
    (before,), (after,) = _slots(call.before, 1), _slots(call.after, 1)
    after = after or request["Item"]
    return call.cost([tuple(call.write(schema, after, before, after))])


def _update_item(call: _Call) -> OperationCost:
    schema = call.table(call.request["TableName"])
    (before,), (after,) = _slots(call.before, 1), _slots(call.after, 1)
    key = call.request["Key"]
    charges = call.write(schema, key, before, after or before, estimate=after is None)
    return call.cost([tuple(charges)])


def _delete_item(call: _Call) -> OperationCost:
    schema = call.table(call.request["TableName"])
    (before,) = _slots(call.before, 1)
    return call.cost([tuple(call.write(schema, call.request["Key"], before, None))])


def _query_or_scan(call: _Call) -> OperationCost:
    request = call.request
    schema = call.table(request["TableName"])
    index_name = request.get("IndexName")
    index = schema.index(index_name) if index_name else None
    if index is not None and index.local:
        call.locals_seen.add((schema.name, index.name))
    owner: IndexSchema | TableSchema = index or schema
    items = page((i for i in _slots(call.returned, None) if i is not None), request.get("Limit"))
    strong = request.get("ConsistentRead") and (index is None or index.local)
    units = read_units(sum(item_size(i) for i in items), "strong" if strong else "eventual")
    # A Scan page reads a run of the hash space: charge the partition of its first item.
    # (An answer projected by the engine may lack the key: then the request's key names it.)
    key = _pk(items[0], owner) if items and owner.partition_key in items[0] else None
    if key is None and call.operation == "Query":
        key = query_key(request, owner.partition_key)
    # A Query reads a run of one item collection: charged at the sort key of its first item,
    # so that queries over a collection's ranges spread as the collection splits.
    sort = _sk(items[0], owner) if items and call.operation == "Query" else None
    charge = Charge(schema.name, index_name, "read", units, key, not strong, sort)
    return call.cost([(charge,)])


def query_key(request: Mapping[str, Any], partition_key: str) -> KeyValue | None:
    """The partition-key value a Query names (``KeyConditionExpression`` or ``KeyConditions``)."""
    conditions = request.get("KeyConditions")
    if conditions and partition_key in conditions:
        return key_value(conditions[partition_key]["AttributeValueList"][0])
    expression = request.get("KeyConditionExpression") or ""
    names = request.get("ExpressionAttributeNames") or {}
    values = request.get("ExpressionAttributeValues") or {}
    for left, right in re.findall(r"([#:]?[\w.]+)\s*=\s*([#:]?[\w.]+)", expression):
        for name, placeholder in ((left, right), (right, left)):
            if names.get(name, name) == partition_key and placeholder in values:
                return key_value(values[placeholder])
    return None


def _batch_get_item(call: _Call) -> OperationCost:
    requested = [
        (table, spec, key)
        for table, spec in call.request["RequestItems"].items()
        for key in spec["Keys"]
    ]
    if isinstance(call.returned, Mapping) and not _is_item(call.returned):
        found = _by_key(call.returned, call)
        items = [found.get((table, _key_of(call.table(table), key))) for table, _, key in requested]
    else:
        items = _slots(call.returned, len(requested))
    groups = []
    for (table, spec, key), item in zip(requested, items, strict=True):
        schema = call.table(table)
        consistency: Consistency = "strong" if spec.get("ConsistentRead") else "eventual"
        units = read_units(item_size(item) if item else 0, consistency)
        eventual = consistency == "eventual"
        charge = Charge(table, None, "read", units, _pk(key, schema), eventual, _sk(key, schema))
        groups.append((charge,))
    return call.cost(groups)


def _is_item(value: Mapping[str, Any]) -> bool:
    return all(isinstance(v, Mapping) for v in value.values())


def _key_of(schema: TableSchema, item: Item) -> tuple[KeyValue, ...]:
    return tuple(key_value(item[name]) for name in schema.key_attributes)


def _by_key(
    responses: Mapping[str, Sequence[Item]], call: _Call
) -> dict[tuple[str, tuple[KeyValue, ...]], Item]:
    return {
        (table, _key_of(call.table(table), item)): item
        for table, items in responses.items()
        for item in items
    }


def _batch_write_item(call: _Call) -> OperationCost:
    requested = [
        (table, entry)
        for table, entries in call.request["RequestItems"].items()
        for entry in entries
    ]
    befores = _slots(call.before, len(requested))
    afters = _slots(call.after, len(requested))
    groups = []
    for (table, entry), before, after in zip(requested, befores, afters, strict=True):
        schema = call.table(table)
        if "PutRequest" in entry:
            after = after or entry["PutRequest"]["Item"]
            groups.append(tuple(call.write(schema, after, before, after)))
        else:
            groups.append(tuple(call.write(schema, entry["DeleteRequest"]["Key"], before, None)))
    return call.cost(groups)


def _transact_get_items(call: _Call) -> OperationCost:
    gets = [entry["Get"] for entry in call.request["TransactItems"]]
    charges = []
    for get, item in zip(gets, _slots(call.returned, len(gets)), strict=True):
        schema = call.table(get["TableName"])
        units = read_units(item_size(item) if item else 0, "transactional")
        charges.append(Charge(schema.name, None, "read", units, _pk(get["Key"], schema)))
    return call.cost([tuple(charges)], transactional=True)


def _transact_write_items(call: _Call) -> OperationCost:
    entries = call.request["TransactItems"]
    befores = _slots(call.before, len(entries))
    afters = _slots(call.after, len(entries))
    charges: list[Charge] = []
    for entry, before, after in zip(entries, befores, afters, strict=True):
        ((action, body),) = entry.items()
        schema = call.table(body["TableName"])
        if action == "Put":
            after = after or body["Item"]
            charges.extend(call.write(schema, after, before, after, transactional=True))
        elif action == "Update":
            estimate = after is None
            after = after or before
            charges.extend(
                call.write(
                    schema, body["Key"], before, after, transactional=True, estimate=estimate
                )
            )
        elif action == "Delete":
            charges.extend(call.write(schema, body["Key"], before, None, transactional=True))
        else:  # ConditionCheck: reads the item, writes nothing, charged as a transactional write
            units = write_units(item_size(before) if before else 0, transactional=True)
            charges.append(Charge(schema.name, None, "write", units, _pk(body["Key"], schema)))
    return call.cost([tuple(charges)], transactional=True)


_OPERATIONS = {
    "GetItem": _get_item,
    "PutItem": _put_item,
    "UpdateItem": _update_item,
    "DeleteItem": _delete_item,
    "Query": _query_or_scan,
    "Scan": _query_or_scan,
    "BatchGetItem": _batch_get_item,
    "BatchWriteItem": _batch_write_item,
    "TransactGetItems": _transact_get_items,
    "TransactWriteItems": _transact_write_items,
}
OPERATIONS = frozenset(_OPERATIONS)
"""The data operations DynamoDB charges by item size: the ones `cost_of` prices."""


def consumed_capacity_response(
    cost: OperationCost, mode: str | None
) -> dict[str, Any] | list[dict[str, Any]] | None:
    """The ``ConsumedCapacity`` DynamoDB returns for ``ReturnConsumedCapacity`` = ``mode``.

    ``TOTAL``: table name and units (indexes included). ``INDEXES``: also the table's own
    units and each index's. Batch and transaction operations return a list, one entry per
    table. Like DynamoDB, only transactions split units into read and write.
    """
    # https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_ConsumedCapacity.html
    if mode in (None, "NONE"):
        return None
    if mode not in ("TOTAL", "INDEXES"):
        raise ConfigError(f"ReturnConsumedCapacity {mode!r} is not one of NONE, TOTAL, INDEXES")
    per_table: dict[str, dict[str | None, tuple[float, float]]] = {}
    for (table, index), units in cost.totals().items():
        per_table.setdefault(table, {})[index] = units
    entries = []
    for table, resources in per_table.items():
        read = sum(r for r, _ in resources.values())
        write = sum(w for _, w in resources.values())
        entry: dict[str, Any] = {"TableName": table, **_units(read, write, cost.transactional)}
        if mode == "INDEXES":
            entry["Table"] = _units(*resources.get(None, (0.0, 0.0)), cost.transactional)
            for index, (r, w) in resources.items():
                if index is not None:
                    local = (table, index) in cost.local_indexes
                    group = "LocalSecondaryIndexes" if local else "GlobalSecondaryIndexes"
                    entry.setdefault(group, {})[index] = _units(r, w, cost.transactional)
        entries.append(entry)
    if cost.operation in _LIST_OPERATIONS:
        return entries
    return entries[0] if entries else None


def _units(read: float, write: float, split: bool) -> dict[str, float]:
    units = {"CapacityUnits": read + write}
    if split and read:
        units["ReadCapacityUnits"] = read
    if split and write:
        units["WriteCapacityUnits"] = write
    return units
