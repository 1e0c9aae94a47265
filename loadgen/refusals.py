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

A refused request comes back as the SDK retries it: botocore's retry modes for DynamoDB are
here in figures too (`RETRY_MODES` to `modelled`), what the clients follow
(`loadgen.client.retries`) and the model simulates (`loadgen.simulate.retries`).

Imports nothing of the project but its errors: the model, the emulator, the clients and
``loadgen check`` (which must not load botocore) all read it.

    >>> header_value([("capacity", "TableWriteKeyRangeThroughputExceeded", "arn:t")])
    'capacity TableWriteKeyRangeThroughputExceeded arn:t'
    >>> parse_header('partition IndexWriteKeyRangeThroughputExceeded arn:t/index/g')
    [('partition', 'IndexWriteKeyRangeThroughputExceeded', 'arn:t/index/g')]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from loadgen.errors import ConfigError

__all__ = [
    "CANCELLATION_CODES",
    "CAUSES",
    "CONTENTION_RATE",
    "DEFAULT_RETRY_MODE",
    "HEADER",
    "LEGACY_ATTEMPTS",
    "LEGACY_BASE_S",
    "MAX_BACKOFF_S",
    "MODELLED_MODES",
    "NOT_REPORTED",
    "NO_RETRY_INCREMENT",
    "RETRY_COST",
    "RETRY_MODES",
    "RETRY_QUOTA",
    "STANDARD_ATTEMPTS",
    "THROTTLING_REASONS",
    "TIMEOUT_RETRY_COST",
    "Cause",
    "Refusal",
    "check_mode",
    "header_value",
    "modelled",
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


# -- how the SDK retries a refused request -----------------------------------------------

RETRY_MODES = ("legacy", "standard", "adaptive", "none")
"""A client's ``--retry-mode``: botocore's three, and one attempt per call."""
DEFAULT_RETRY_MODE = "legacy"
"""botocore's default mode, and a run's clients' without ``--retry-mode``."""

# botocore/data/_retry.json: retry.dynamodb.__default__ (max_attempts 10, base 0.05, factor 2)
LEGACY_ATTEMPTS = 10
"""Attempts per call in botocore's legacy mode for DynamoDB."""
LEGACY_BASE_S = 0.05
"""The legacy mode's first wait for DynamoDB, doubled at each retry, without jitter."""

# https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html; botocore's
# retries/standard.py (DEFAULT_MAX_ATTEMPTS, RetryQuotaChecker's _RETRY_COST,
# _TIMEOUT_RETRY_REQUEST and _NO_RETRY_INCREMENT) and retries/quota.py (INITIAL_CAPACITY)
STANDARD_ATTEMPTS = 3
"""Attempts per call in the standard mode (the first and two retries)."""
MAX_BACKOFF_S = 20.0
"""The standard mode's longest wait before a retry."""
RETRY_QUOTA = 500
"""Retry tokens one client holds in the standard mode."""
RETRY_COST = 5
"""Tokens a retry takes (given back if it succeeds)."""
NO_RETRY_INCREMENT = 1
"""Tokens a call that succeeds at its first attempt gives back."""
TIMEOUT_RETRY_COST = 10
"""Tokens a retry after a timeout takes."""

MODELLED_MODES = ("standard", "legacy")
"""How the simulated SDK retries: ``standard`` (jittered waits, a retry quota; the other
SDKs' default) or ``legacy`` (botocore's default: fixed waits, no quota)."""


def check_mode(mode: str) -> None:
    """ConfigError, in one line, for a ``--retry-mode`` botocore does not have."""
    if mode not in RETRY_MODES:
        raise ConfigError(
            f"unknown retry mode {mode!r} (expected one of: {', '.join(RETRY_MODES)})"
        )


def modelled(mode: str, max_attempts: int | None = None) -> tuple[str, int]:
    """The simulated retry mode and attempts for a client's ``--retry-mode`` and
    ``--max-attempts``: ``adaptive`` retries as ``standard`` (its client-side rate limiter is
    not modelled), ``none`` makes one attempt.

        >>> modelled("legacy"), modelled("adaptive", 5), modelled("none")
        (('legacy', 10), ('standard', 5), ('standard', 1))
    """
    check_mode(mode)
    if mode == "none":
        return "standard", 1
    if mode == "legacy":
        return "legacy", LEGACY_ATTEMPTS if max_attempts is None else max_attempts
    return "standard", STANDARD_ATTEMPTS if max_attempts is None else max_attempts
