"""What one call consumed, and where: reported by the target or computed from item sizes.

DynamoDB returns ``ConsumedCapacity`` when asked (`DynamoClient` asks for ``TOTAL``), and
DynamoDB Local computes it by AWS's rules. moto returns constants (a 5 KB PutItem "costs"
1.0, an UpdateItem 0.5), and some targets return nothing. So the source is a setting:

- ``reported``: take the response's ``ConsumedCapacity`` (nothing when it is absent);
- ``computed``: always compute from item sizes with `loadgen.model.capacity` (needs the table's
  schema and the call's request parameters);
- ``auto`` (default): reported when the response carries it, computed otherwise.

``loadgen run`` picks ``computed`` for its embedded moto target, whose figures are constants.

    >>> reported_units("GetItem", {"TableName": "t", "CapacityUnits": 0.5}, "t", None)
    [('t', None, 0.5, 0.0)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from loadgen.errors import ConfigError
from loadgen.model.capacity import Charge, charged_on, cost_of
from loadgen.model.schema import TableSchema

__all__ = [
    "CAPACITY_SOURCES",
    "READ_OPERATIONS",
    "Access",
    "ScopeUnits",
    "access_of",
    "computed_charges",
    "reported_units",
]

Access = Literal["read", "write"]
CAPACITY_SOURCES = ("auto", "reported", "computed")
"""Where consumed capacity comes from; see the module docstring."""
READ_OPERATIONS = frozenset({"GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"})
"""Operations that read; every other data operation writes."""

ScopeUnits = tuple[str, str | None, float, float]
"""(table, index or None, read units, write units) reported for one table or index."""


def access_of(operation: str) -> Access:
    """``"read"`` for GetItem, Query, Scan, BatchGetItem and TransactGetItems, else ``"write"``."""
    return "read" if operation in READ_OPERATIONS else "write"


def reported_units(
    operation: str,
    consumed: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None,
    table: str,
    index: str | None,
) -> list[ScopeUnits]:
    """Units per table and index from a response's ``ConsumedCapacity`` (a dict or a list).

    With ``INDEXES`` the breakdown (``Table``, ``GlobalSecondaryIndexes``,
    ``LocalSecondaryIndexes``) is used; with ``TOTAL`` the whole figure goes to the table, or
    to ``index`` when the call read an index of ``table``. Units that DynamoDB does not split
    into read and write (it splits only for transactions) are read or write by ``operation``.
    """
    if not consumed:
        return []
    entries = [consumed] if isinstance(consumed, Mapping) else consumed
    access = access_of(operation)
    scopes: list[ScopeUnits] = []
    for entry in entries:
        name = entry.get("TableName") or table
        if "Table" not in entry:
            scope_index = index if name == table else None
            scopes.append((name, scope_index, *_split(entry, access)))
            continue
        scopes.append((name, None, *_split(entry["Table"], access)))
        for group in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
            for index_name, units in (entry.get(group) or {}).items():
                scopes.append((name, index_name, *_split(units, access)))
    return scopes


def _split(units: Mapping[str, Any], access: Access) -> tuple[float, float]:
    read = units.get("ReadCapacityUnits")
    write = units.get("WriteCapacityUnits")
    if read is not None or write is not None:
        return float(read or 0.0), float(write or 0.0)
    total = float(units.get("CapacityUnits") or 0.0)
    return (total, 0.0) if access == "read" else (0.0, total)


def computed_charges(
    operation: str,
    request: Mapping[str, Any],
    response: Mapping[str, Any],
    error_code: str | None,
    tables: Mapping[str, TableSchema],
) -> tuple[Charge, ...]:
    """Charges per table, index and partition key, computed from item sizes.

    What the call read is taken from the response (``Item``, ``Items``, ``Responses``);
    what a write replaced, from ``Attributes`` when the request asked for ``ALL_OLD`` or
    ``ALL_NEW``. Without them `loadgen.model.capacity.cost_of` estimates: an UpdateItem of an
    unknown item costs the minimum write, and a read projected by ``ProjectionExpression``
    is sized as returned (so it may be undercounted). A call that failed is charged as
    `loadgen.model.capacity.charged_on` says (a cancelled transaction by the reasons in
    ``response``). Raises `ConfigError` for a table without a schema or an operation
    without a capacity rule.
    """
    reasons = [
        r.get("Code") for r in response.get("CancellationReasons") or () if isinstance(r, Mapping)
    ]
    charged = charged_on(error_code, reasons)
    if charged == "nothing":
        return ()
    returned: Any = None
    before: Any = None
    after: Any = None
    if operation == "GetItem":
        returned = response.get("Item")
    elif operation in ("Query", "Scan"):
        returned = response.get("Items")
    elif operation == "BatchGetItem":
        returned = response.get("Responses") or None
    elif operation == "TransactGetItems":
        responses = response.get("Responses")
        returned = [r.get("Item") for r in responses] if responses is not None else None
    elif operation in ("PutItem", "UpdateItem", "DeleteItem"):
        image = request.get("ReturnValues")
        if image == "ALL_OLD":
            before = response.get("Attributes")
        elif image == "ALL_NEW":
            after = response.get("Attributes")
    try:
        cost = cost_of(
            operation,
            request,
            tables=tables,
            before=before,
            after=after,
            returned=returned,
            failed=charged == "table",
        )
    except (KeyError, TypeError, ValueError) as e:
        raise ConfigError(f"cannot compute the capacity of a {operation} request: {e!r}") from e
    return cost.charges
