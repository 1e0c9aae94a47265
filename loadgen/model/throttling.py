"""A throttle as DynamoDB reports it: reason, resource ARN, exception name and message.

The partition model decides *that* a request is throttled and why; this module says it in
DynamoDB's words, so the HTTP emulator can answer with the body the real service sends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from loadgen.refusals import Cause

__all__ = ["Cause", "Limit", "Throttle", "cause_of", "message", "resource_arn", "throttle"]

Limit = Literal[
    "KeyRangeThroughputExceeded",
    "ProvisionedThroughputExceeded",
    "AccountLimitExceeded",
    "MaxOnDemandThroughputExceeded",
]
"""Why: a partition's ceiling, provisioned capacity, the per-table quota, the on-demand cap."""

# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html
PROVISIONED_MESSAGE = (
    "The level of configured provisioned throughput for the table was exceeded. "
    "Consider increasing your provisioning level with the UpdateTable API."
)
# AWS's DynamoDB workshop (aws-samples/amazon-dynamodb-labs), design patterns, Exercise 1,
# Step 7: the message of a provisioned GSI's back-pressure, as a client printed it.
PROVISIONED_INDEX_MESSAGE = (
    "The level of configured provisioned throughput for one or more global secondary indexes "
    "of the table was exceeded. Consider increasing your provisioning level for the "
    "under-provisioned global secondary indexes with the UpdateTable API"
)
# An on-demand GSI's, as BrighterCommand/Brighter issue 2810 quotes it.
ON_DEMAND_INDEX_MESSAGE = (
    "Throughput exceeds the current capacity for one or more global secondary indexes. "
    "DynamoDB is automatically scaling your index so please try again shortly."
)
ON_DEMAND_MESSAGE = (
    "Throughput exceeds the current capacity of your table or index. DynamoDB is "
    "automatically scaling your table or index so please try again shortly. If exceptions "
    "persist, check if you have a hot key: https://docs.aws.amazon.com/amazondynamodb/latest/"
    "developerguide/bp-partition-key-design.html"
)


@dataclass(frozen=True, slots=True)
class Throttle:
    """Why a request was throttled, in the terms DynamoDB's error response uses.

    ``reason`` follows API_ThrottlingReason (``TableWriteKeyRangeThroughputExceeded``, ...);
    ``exception`` is ``ProvisionedThroughputExceededException`` for a provisioned table or
    index and ``ThrottlingException`` for an on-demand one.
    """

    # https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_ThrottlingReason.html
    table: str
    index: str | None
    kind: str
    """``"read"`` or ``"write"``."""
    on_demand: bool
    reason: str
    resource: str
    """ARN of the table or index throttled."""
    exception: str
    message: str
    cause: Cause = "partition"
    """Which limit of the model refused (`loadgen.refusals`): the wire reason alone does not
    tell a hot partition from an on-demand table that has not grown to its demand."""

    def error_body(self) -> dict[str, Any]:
        """The JSON body of DynamoDB's HTTP 400 for this throttle."""
        field = (
            "throttlingReasons" if self.exception == "ThrottlingException" else "ThrottlingReasons"
        )
        return {
            "__type": f"com.amazonaws.dynamodb.v20120810#{self.exception}",
            "message": self.message,
            field: [{"reason": self.reason, "resource": self.resource}],
        }


def resource_arn(region: str, account: str, table: str, index: str | None = None) -> str:
    """ARN of a table, or of one of its indexes."""
    # https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazondynamodb.html#amazondynamodb-resources-for-iam-policies
    arn = f"arn:aws:dynamodb:{region}:{account}:table/{table}"
    return arn if index is None else f"{arn}/index/{index}"


def cause_of(limit: Limit, *, by_partition: bool) -> Cause:
    """The model's cause of a throttle: a partition's ceiling, or the keyspace's ``limit``
    (``KeyRangeThroughputExceeded`` of a whole on-demand table is its current capacity)."""
    if by_partition:
        return "partition"
    return {
        "KeyRangeThroughputExceeded": "capacity",
        "ProvisionedThroughputExceeded": "provisioned",
        "AccountLimitExceeded": "account",
        "MaxOnDemandThroughputExceeded": "maximum",
    }[limit]  # type: ignore[return-value]


def message(*, index: str | None, kind: str, on_demand: bool) -> str:
    """DynamoDB's message for a throttle: a GSI's writes (its back-pressure on the table) in
    the index's words, anything else in the table's (no other wording is published)."""
    if index is not None and kind == "write":
        return ON_DEMAND_INDEX_MESSAGE if on_demand else PROVISIONED_INDEX_MESSAGE
    return ON_DEMAND_MESSAGE if on_demand else PROVISIONED_MESSAGE


def throttle(
    *,
    table: str,
    index: str | None,
    kind: str,
    on_demand: bool,
    limit: Limit,
    resource: str,
    cause: Cause | None = None,
) -> Throttle:
    """The throttle DynamoDB reports when ``limit`` stops a ``kind`` ("read", "write") request;
    ``cause`` defaults to the keyspace's own limit (`cause_of`)."""
    # https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/troubleshooting-throttling-diagnostics.html
    reason = f"{'Table' if index is None else 'Index'}{kind.capitalize()}{limit}"
    return Throttle(
        table=table,
        index=index,
        kind=kind,
        on_demand=on_demand,
        reason=reason,
        resource=resource,
        exception="ThrottlingException" if on_demand else "ProvisionedThroughputExceededException",
        message=message(index=index, kind=kind, on_demand=on_demand),
        cause=cause if cause is not None else cause_of(limit, by_partition=False),
    )
