"""Why a request was refused, in the words every layer shares: the model's causes, and how
the emulator tells them to a client.

DynamoDB's ``ThrottlingReasons`` (16 values: table or index, read or write, and one limit)
give one reason, ``...KeyRangeThroughputExceeded``, both for a hot partition and for an
on-demand table asked for more than its current capacity (its warm throughput, or twice its
previous peak). The partition model knows which of its limits refused, its *cause*:

- ``partition``: one partition's ceiling (3,000 read, 1,000 write units/s): a hot key or range;
- ``capacity``: the table's or index's current on-demand capacity (warm throughput, or twice
  the previous peak);
- ``provisioned``: provisioned capacity, burst included;
- ``account``: the per-table on-demand quota (40,000 units/s unless raised);
- ``maximum``: the table's configured on-demand maximum (``OnDemandThroughput``);
- ``buffer``: a GSI's write buffer is full (its index writes have outrun the index's capacity
  or one of its partitions for minutes), and the table refuses every write until it drains.

The emulator answers each throttle with DynamoDB's own body and adds the header `HEADER`,
``cause reason resource`` per refused part of the request (a batch may refuse several), so a
client learns the cause of a throttled transaction or batch item too, where DynamoDB's body
names no reason. Against DynamoDB itself no header comes: the cause is `NOT_REPORTED`, and
the diagnosis reads the spread of the throttles over the key space instead.

Imports nothing of the project: the model, the emulator and the clients all read it.

    >>> header_value([("capacity", "TableWriteKeyRangeThroughputExceeded", "arn:t")])
    'capacity TableWriteKeyRangeThroughputExceeded arn:t'
    >>> parse_header('partition IndexWriteKeyRangeThroughputExceeded arn:t/index/g')
    [('partition', 'IndexWriteKeyRangeThroughputExceeded', 'arn:t/index/g')]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "CANCELLATION_CODES",
    "CAUSES",
    "CONTENTION_RATE",
    "HEADER",
    "NOT_REPORTED",
    "THROTTLING_REASONS",
    "Cause",
    "Refusal",
    "header_value",
    "parse_header",
    "scope_of_arn",
]

Cause = Literal["partition", "capacity", "provisioned", "account", "maximum", "buffer"]

CAUSES: dict[str, str] = {
    "partition": "a partition's ceiling",
    "capacity": "the on-demand capacity",
    "provisioned": "the provisioned capacity",
    "account": "the per-table on-demand quota",
    "maximum": "the configured on-demand maximum",
    "buffer": "a full GSI write buffer",
}
"""Each cause, as the limit it names (of a table or index)."""

THROTTLING_REASONS: tuple[str, ...] = tuple(
    f"{scope}{kind}{limit}"
    for scope in ("Table", "Index")
    for kind in ("Read", "Write")
    for limit in (
        "KeyRangeThroughputExceeded",
        "ProvisionedThroughputExceeded",
        "AccountLimitExceeded",
        "MaxOnDemandThroughputExceeded",
    )
)
"""DynamoDB's 16 ``ThrottlingReason`` values: table or index, read or write, and the limit.
https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_ThrottlingReason.html"""

CANCELLATION_CODES: tuple[str, ...] = (
    "ConditionalCheckFailed",
    "ItemCollectionSizeLimitExceeded",
    "TransactionConflict",
    "ProvisionedThroughputExceeded",
    "ThrottlingError",
    "ValidationError",
)
"""The codes of a cancelled transaction's ``CancellationReasons`` (``None`` aside).
https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html"""

CONTENTION_RATE = 10.0
"""Transactions per second on one item from which concurrent ones are likely to cancel each
other (``TransactionConflict``): a model choice, as AWS publishes no figure. A transaction
holds its items for some milliseconds; at ten a second on one item, two overlap often.
DynamoDB Local, and so the emulator, never cancels for a conflict: ``check`` and the
diagnosis warn instead."""

HEADER = "X-Partition-Heat-Throttle"
"""Response header in which the emulator names the cause of each throttle it answers."""

NOT_REPORTED = "not reported"
"""What is said where a target gives no reason or no cause: never a guess."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """One throttle of one attempt, in the target's own words; None where it said nothing.

    ``reason`` and ``resource`` are DynamoDB's ``ThrottlingReasons`` (or, for a throttled
    transaction or batch item, whose body names none, the emulator's header); ``cause`` is the
    partition model's (`CAUSES`), reported only by the emulator.
    """

    exception: str
    """The error code the attempt got (``ThrottlingException``, ...), or
    ``UnprocessedItems``/``UnprocessedKeys`` for batch items left unprocessed."""
    reason: str | None = None
    resource: str | None = None
    """ARN of the table or index throttled."""
    cause: str | None = None


def header_value(throttles: Iterable[tuple[str, str, str]]) -> str:
    """The header for (cause, reason, resource) triples, comma-separated."""
    return ", ".join(" ".join(triple) for triple in throttles)


def parse_header(value: str | None) -> list[tuple[str, str, str]]:
    """(cause, reason, resource) triples from the header; [] for none or a malformed one."""
    found = []
    for part in (value or "").split(","):
        words = part.split()
        if len(words) == 3 and words[0] in CAUSES:
            found.append((words[0], words[1], words[2]))
    return found


def scope_of_arn(arn: str | None) -> tuple[str, str | None] | None:
    """(table, index or None) from a table's or index's ARN; None when it is neither.

    >>> scope_of_arn("arn:aws:dynamodb:us-east-1:000000000000:table/ph-orders/index/status")
    ('ph-orders', 'status')
    """
    if not arn or ":table/" not in arn:
        return None
    table, _, index = arn.split(":table/", 1)[1].partition("/index/")
    return (table, index or None)
