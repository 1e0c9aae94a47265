"""Creating a workload's table when it is missing, and never touching one otherwise.

`ensure_table` is idempotent: an existing table with the expected key schema is used as it
is; one with another key schema is an error (we never change or delete a table); a missing
one is created only when the caller may create tables (always on a local target, on real AWS
only with ``--create-table``).
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from loadgen.errors import ConfigError, TargetError

__all__ = ["ensure_table"]


def _key_schema(schema: list[dict[str, str]]) -> list[tuple[str, str]]:
    return sorted((k["AttributeName"], k["KeyType"]) for k in schema)


def ensure_table(client: Any, request: dict[str, Any], *, create: bool) -> bool:
    """Make sure the table of CreateTable ``request`` exists; return True if it was created."""
    name = request["TableName"]
    try:
        table = client.describe_table(TableName=name).get("Table")
    except ClientError as e:
        if e.response["Error"]["Code"] != "ResourceNotFoundException":
            raise TargetError(f"cannot describe table {name!r}: {e}") from None
    else:
        if not isinstance(table, dict) or not isinstance(table.get("KeySchema"), list):
            # A server that answers JSON but is not DynamoDB (a web server answering {}).
            raise TargetError(
                f"{client.meta.endpoint_url} answered DescribeTable {name!r} without a table "
                f"description (got {str(table)[:80]}); expected a DynamoDB endpoint"
            )
        want, have = _key_schema(request["KeySchema"]), _key_schema(table["KeySchema"])
        if want != have:
            raise ConfigError(
                f"table {name!r} exists with key schema {have} (expected {want}); "
                "choose another name with --table"
            )
        return False
    if not create:
        raise ConfigError(
            f"table {name!r} does not exist; pass --create-table to create it "
            "(or --table to use another)"
        )
    try:
        client.create_table(**request)
    except ClientError as e:
        if e.response["Error"]["Code"] != "ResourceInUseException":
            raise TargetError(f"cannot create table {name!r}: {e}") from None
        return False  # another process created it first
    client.get_waiter("table_exists").wait(
        TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 120}
    )
    return True
