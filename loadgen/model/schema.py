"""Table schemas as the capacity model sees them.

A `TableSchema` holds what decides what a request costs and where it lands: the key schema,
the secondary indexes with their keys and projections, the billing mode and the capacity of
the table and of each global secondary index. Build one from the JSON of a CreateTable request
or of a DescribeTable response's ``Table``, and follow an UpdateTable with `with_update`:

    schema = TableSchema.from_create_table(request_body)
    schema = schema.with_update(update_table_body)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, cast

from loadgen.errors import ConfigError

__all__ = ["BillingMode", "IndexSchema", "ProjectionType", "TableSchema"]

BillingMode = Literal["PROVISIONED", "PAY_PER_REQUEST"]
ProjectionType = Literal["ALL", "KEYS_ONLY", "INCLUDE"]

_BILLING_MODES = ("PROVISIONED", "PAY_PER_REQUEST")
_PROJECTIONS = ("ALL", "KEYS_ONLY", "INCLUDE")


@dataclass(frozen=True, slots=True)
class IndexSchema:
    """A secondary index: its key, its projection and, for a global one, its own capacity.

    A local secondary index shares the table's partition key and capacity; its capacity
    fields stay 0.
    """

    name: str
    partition_key: str
    sort_key: str | None = None
    projection: ProjectionType = "ALL"
    non_key_attributes: tuple[str, ...] = ()
    """Attributes an ``INCLUDE`` projection copies besides the keys."""
    local: bool = False
    read_capacity: float = 0.0
    """Provisioned read capacity units per second (0 when on-demand or local)."""
    write_capacity: float = 0.0
    max_read_units: float | None = None
    """``OnDemandThroughput.MaxReadRequestUnits``; None when uncapped."""
    max_write_units: float | None = None
    warm_read_units: float | None = None
    """``WarmThroughput.ReadUnitsPerSecond``: what it serves at once; None for AWS's default."""
    warm_write_units: float | None = None

    @property
    def key_attributes(self) -> tuple[str, ...]:
        """The index's own key attributes: an item without all of them is not in the index."""
        return (
            (self.partition_key,) if self.sort_key is None else (self.partition_key, self.sort_key)
        )


@dataclass(frozen=True, slots=True)
class TableSchema:
    """What the capacity accounting and the partition model need to know about a table.

    >>> schema = TableSchema.from_create_table({
    ...     "TableName": "orders",
    ...     "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    ...     "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    ...     "BillingMode": "PAY_PER_REQUEST",
    ... })
    >>> schema.on_demand, schema.partition_key
    (True, 'pk')
    """

    name: str
    partition_key: str
    sort_key: str | None = None
    attribute_types: tuple[tuple[str, str], ...] = ()
    """``AttributeDefinitions`` as (name, "S" | "N" | "B") pairs."""
    billing_mode: BillingMode = "PROVISIONED"
    read_capacity: float = 0.0
    """Provisioned read capacity units per second (0 when on-demand)."""
    write_capacity: float = 0.0
    max_read_units: float | None = None
    """``OnDemandThroughput.MaxReadRequestUnits``; None when uncapped."""
    max_write_units: float | None = None
    warm_read_units: float | None = None
    """``WarmThroughput.ReadUnitsPerSecond``: what the table serves at once, raised ahead of a
    launch; None for AWS's default (12,000 read and 4,000 write units/s). It only grows."""
    warm_write_units: float | None = None
    global_indexes: tuple[IndexSchema, ...] = ()
    local_indexes: tuple[IndexSchema, ...] = ()

    def __post_init__(self) -> None:
        if self.billing_mode not in _BILLING_MODES:
            raise ConfigError(f"billing mode {self.billing_mode!r} is not one of {_BILLING_MODES}")
        owners: list[TableSchema | IndexSchema] = [self, *self.global_indexes]
        for owner in owners:
            for value in (owner.read_capacity, owner.write_capacity):
                if value < 0 or (value == 0 and not self.on_demand):
                    raise ConfigError(
                        f"{owner.name!r} has capacity {value!r}: a provisioned table and each of"
                        " its global indexes need positive read and write capacity"
                    )

    @property
    def on_demand(self) -> bool:
        """True for ``PAY_PER_REQUEST`` billing."""
        return self.billing_mode == "PAY_PER_REQUEST"

    @property
    def key_attributes(self) -> tuple[str, ...]:
        """The table's primary-key attributes."""
        return (
            (self.partition_key,) if self.sort_key is None else (self.partition_key, self.sort_key)
        )

    @property
    def indexes(self) -> tuple[IndexSchema, ...]:
        """Global then local secondary indexes."""
        return self.global_indexes + self.local_indexes

    def index(self, name: str) -> IndexSchema:
        """The secondary index called ``name``."""
        for index in self.indexes:
            if index.name == name:
                return index
        raise ConfigError(f"table {self.name!r} has no index {name!r}")

    @classmethod
    def from_create_table(cls, request: Mapping[str, Any]) -> TableSchema:
        """Schema from a CreateTable request body."""
        return cls._parse(request, request.get("BillingMode") or "PROVISIONED")

    @classmethod
    def from_description(cls, table: Mapping[str, Any]) -> TableSchema:
        """Schema from the ``Table`` of a DescribeTable (or CreateTable) response."""
        summary = table.get("BillingModeSummary") or {}
        return cls._parse(table, summary.get("BillingMode") or "PROVISIONED")

    def with_update(self, request: Mapping[str, Any]) -> TableSchema:
        """This schema after an UpdateTable request (capacity, billing mode, GSI changes)."""
        mode = request.get("BillingMode") or self.billing_mode
        changes: dict[str, Any] = {"billing_mode": mode}
        if mode == "PAY_PER_REQUEST":
            changes.update(read_capacity=0.0, write_capacity=0.0)
        read, write = _throughput(request.get("ProvisionedThroughput"))
        if read or write:
            changes.update(read_capacity=read, write_capacity=write)
        if "OnDemandThroughput" in request:
            max_read, max_write = _on_demand(request["OnDemandThroughput"])
            changes.update(max_read_units=max_read, max_write_units=max_write)
        if "WarmThroughput" in request:
            changes.update(_warmer(self, request["WarmThroughput"]))
        indexes = {index.name: index for index in self.global_indexes}
        if mode == "PAY_PER_REQUEST":
            indexes = {
                name: replace(index, read_capacity=0.0, write_capacity=0.0)
                for name, index in indexes.items()
            }
        for update in request.get("GlobalSecondaryIndexUpdates") or ():
            if "Create" in update:
                created = _index(update["Create"], local=False)
                indexes[created.name] = created
            elif "Delete" in update:
                indexes.pop(update["Delete"]["IndexName"], None)
            elif "Update" in update:
                body = update["Update"]
                index = indexes.get(body["IndexName"])
                if index is None:
                    raise ConfigError(f"table {self.name!r} has no index {body['IndexName']!r}")
                read, write = _throughput(body.get("ProvisionedThroughput"))
                if read or write:
                    index = replace(index, read_capacity=read, write_capacity=write)
                if "OnDemandThroughput" in body:
                    max_read, max_write = _on_demand(body["OnDemandThroughput"])
                    index = replace(index, max_read_units=max_read, max_write_units=max_write)
                if "WarmThroughput" in body:
                    index = replace(index, **_warmer(index, body["WarmThroughput"]))
                indexes[index.name] = index
        types = dict(self.attribute_types)
        types.update(_attribute_types(request.get("AttributeDefinitions") or ()))
        return replace(
            self,
            **changes,
            attribute_types=tuple(types.items()),
            global_indexes=tuple(indexes.values()),
        )

    @classmethod
    def _parse(cls, body: Mapping[str, Any], mode: str) -> TableSchema:
        name = body.get("TableName")
        if not name:
            raise ConfigError(f"a table needs a TableName, got {name!r}")
        partition_key, sort_key = _key_schema(body.get("KeySchema"), name)
        read, write = _throughput(body.get("ProvisionedThroughput"))
        max_read, max_write = _on_demand(body.get("OnDemandThroughput"))
        warm_read, warm_write = _warm(body.get("WarmThroughput"))
        if mode == "PAY_PER_REQUEST":
            read = write = 0.0
        return cls(
            name=name,
            partition_key=partition_key,
            sort_key=sort_key,
            attribute_types=tuple(_attribute_types(body.get("AttributeDefinitions") or ())),
            billing_mode=cast(BillingMode, mode),  # checked in __post_init__
            read_capacity=read,
            write_capacity=write,
            max_read_units=max_read,
            max_write_units=max_write,
            warm_read_units=warm_read,
            warm_write_units=warm_write,
            global_indexes=tuple(
                _index(gsi, local=False, on_demand=mode == "PAY_PER_REQUEST")
                for gsi in body.get("GlobalSecondaryIndexes") or ()
            ),
            local_indexes=tuple(
                _index(lsi, local=True) for lsi in body.get("LocalSecondaryIndexes") or ()
            ),
        )


def _key_schema(
    key_schema: Sequence[Mapping[str, str]] | None, owner: str
) -> tuple[str, str | None]:
    partition_key = sort_key = None
    for element in key_schema or ():
        if element.get("KeyType") == "HASH":
            partition_key = element["AttributeName"]
        elif element.get("KeyType") == "RANGE":
            sort_key = element["AttributeName"]
    if partition_key is None:
        raise ConfigError(f"{owner!r} has no HASH key in its KeySchema {key_schema!r}")
    return partition_key, sort_key


def _attribute_types(definitions: Sequence[Mapping[str, str]]) -> list[tuple[str, str]]:
    return [(d["AttributeName"], d["AttributeType"]) for d in definitions]


def _throughput(throughput: Mapping[str, Any] | None) -> tuple[float, float]:
    throughput = throughput or {}
    return (
        float(throughput.get("ReadCapacityUnits") or 0),
        float(throughput.get("WriteCapacityUnits") or 0),
    )


def _on_demand(throughput: Mapping[str, Any] | None) -> tuple[float | None, float | None]:
    # -1 is the API's spelling of "no maximum".
    throughput = throughput or {}
    return _cap(throughput.get("MaxReadRequestUnits")), _cap(throughput.get("MaxWriteRequestUnits"))


def _warm(throughput: Mapping[str, Any] | None) -> tuple[float | None, float | None]:
    # https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput.html
    throughput = throughput or {}
    read, write = throughput.get("ReadUnitsPerSecond"), throughput.get("WriteUnitsPerSecond")
    for value in (read, write):
        if value is not None and not float(value) > 0:
            raise ConfigError(f"WarmThroughput units must be positive, got {value!r}")
    return (
        None if read is None else float(read),
        None if write is None else float(write),
    )


def _warmer(owner: TableSchema | IndexSchema, throughput: Mapping[str, Any]) -> dict[str, Any]:
    """Warm throughput after an update: it only grows (a lower figure leaves it as it was)."""
    read, write = _warm(throughput)
    changes: dict[str, Any] = {}
    for field_name, value in (("warm_read_units", read), ("warm_write_units", write)):
        current = getattr(owner, field_name)
        if value is not None and (current is None or value > current):
            changes[field_name] = value
    return changes


def _cap(value: Any) -> float | None:
    return None if value is None or float(value) < 0 else float(value)


def _index(body: Mapping[str, Any], *, local: bool, on_demand: bool = False) -> IndexSchema:
    name = body.get("IndexName")
    if not name:
        raise ConfigError(f"an index needs an IndexName, got {name!r}")
    partition_key, sort_key = _key_schema(body.get("KeySchema"), name)
    projection = body.get("Projection") or {}
    kind = projection.get("ProjectionType") or "ALL"
    if kind not in _PROJECTIONS:
        raise ConfigError(f"index {name!r} has projection {kind!r}, expected one of {_PROJECTIONS}")
    read, write = (
        (0.0, 0.0) if local or on_demand else _throughput(body.get("ProvisionedThroughput"))
    )
    max_read, max_write = _on_demand(body.get("OnDemandThroughput"))
    warm_read, warm_write = _warm(body.get("WarmThroughput"))
    return IndexSchema(
        name=name,
        partition_key=partition_key,
        sort_key=sort_key,
        projection=cast(ProjectionType, kind),
        non_key_attributes=tuple(projection.get("NonKeyAttributes") or ()),
        local=local,
        read_capacity=read,
        write_capacity=write,
        max_read_units=max_read,
        max_write_units=max_write,
        warm_read_units=warm_read,
        warm_write_units=warm_write,
    )
