"""DynamoDB's provisioned-capacity quotas, per table and per account, as the emulator enforces
them on CreateTable and UpdateTable.

DynamoDB refuses a table (or a global secondary index) provisioned beyond the per-table quota,
and any table that would take the account's provisioned total beyond the account quota, with a
400 ``LimitExceededException``; nothing is created. The emulator answers so before the backend
sees the request, which also keeps the partition model from ever being asked for more
partitions than a real table could have. ``loadgen emulator --table-quota/--account-quota``
set them, as an AWS account can have them raised.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from loadgen.emulator.wire import DYNAMODB, WireError
from loadgen.errors import ConfigError
from loadgen.model.schema import IndexSchema, TableSchema

__all__ = ["DEFAULT_ACCOUNT_QUOTA", "DEFAULT_TABLE_QUOTA", "Quotas"]

# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html
DEFAULT_TABLE_QUOTA = 40_000
"""Read units, and write units, one table or global secondary index may be provisioned with."""
DEFAULT_ACCOUNT_QUOTA = 80_000
"""Read units, and write units, all provisioned tables and indexes of an account add up to."""
_LIMIT = DYNAMODB + "LimitExceededException"


@dataclass(frozen=True, slots=True)
class Quotas:
    """Provisioned-capacity quotas; `check` a table request against them.

    >>> Quotas(table=100).check("CreateTable", {
    ...     "TableName": "t1", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    ...     "ProvisionedThroughput": {"ReadCapacityUnits": 500, "WriteCapacityUnits": 1}}, {})
    Traceback (most recent call last):
    ...
    loadgen.emulator.wire.WireError: Subscriber limit exceeded: Provisioned throughput for a \
table or a global secondary index cannot exceed 100 read and 100 write units (t1 asks 500 read \
and 1 write)
    """

    table: float = DEFAULT_TABLE_QUOTA
    """Per table and per global secondary index, read and write units each."""
    account: float = DEFAULT_ACCOUNT_QUOTA
    """All provisioned tables and indexes together, read and write units each."""

    def __post_init__(self) -> None:
        for name, value in (("table", self.table), ("account", self.account)):
            if not (isinstance(value, int | float) and value >= 1 and value == value):
                raise ConfigError(f"the {name} quota must be a number >= 1 (got {value!r})")

    def check(
        self, operation: str, payload: Mapping[str, Any], tables: Mapping[str, TableSchema]
    ) -> None:
        """Raise a `WireError` (LimitExceededException) if the request breaks a quota.

        ``tables`` are the tables that exist now, by name. A request the schema cannot be
        read from passes: the backend words its own error.
        """
        name = payload.get("TableName")
        try:
            if operation == "CreateTable":
                schema = TableSchema.from_create_table(payload)
            elif operation == "UpdateTable" and isinstance(name, str) and name in tables:
                schema = tables[name].with_update(payload)
            else:
                return
        except (ConfigError, KeyError, TypeError, ValueError, AttributeError):
            return
        owners: list[TableSchema | IndexSchema] = [schema, *schema.global_indexes]
        for owner in owners:
            if max(owner.read_capacity, owner.write_capacity) > self.table:
                raise WireError(
                    400,
                    _LIMIT,
                    "Subscriber limit exceeded: Provisioned throughput for a table or a global "
                    f"secondary index cannot exceed {self.table:g} read and {self.table:g} "
                    f"write units ({owner.name} asks {owner.read_capacity:g} read and "
                    f"{owner.write_capacity:g} write)",
                )
        others = [t for n, t in tables.items() if n != schema.name]
        read, write = (sum(_units(t, kind) for t in (schema, *others)) for kind in (0, 1))
        if max(read, write) > self.account:
            raise WireError(
                400,
                _LIMIT,
                "Subscriber limit exceeded: Provisioned throughput for all tables and global "
                f"secondary indexes of the account cannot exceed {self.account:g} read and "
                f"{self.account:g} write units (with {schema.name}: {read:g} read and "
                f"{write:g} write)",
            )


def _units(table: TableSchema, kind: int) -> float:
    owners: list[TableSchema | IndexSchema] = [table, *table.global_indexes]
    return sum(o.read_capacity if kind == 0 else o.write_capacity for o in owners)
