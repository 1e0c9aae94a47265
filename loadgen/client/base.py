"""The call contract every DynamoDB client of the harness keeps: one Locust request event per call.

botocore retries throttled requests without telling anyone (the legacy mode retries a throttle
up to ten attempts in all), so a call that "succeeded" may have been throttled several times.
`DynamoClient` watches every attempt through botocore's ``needs-retry`` event and reports, per
call, the attempts, the throttled attempts and the final outcome.

Two transports share that contract through `BaseDynamoClient`: `loadgen.client.boto.DynamoClient`
(boto3, the default) and `loadgen.client.fast.FastDynamoClient` (geventhttpclient, several
times cheaper per call). This module imports neither; `loadgen.client.make_client` picks one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import botocore.config
import botocore.exceptions
from locust.exception import RescheduleTask

from loadgen.errors import ConfigError
from loadgen.refusals import DEFAULT_RETRY_MODE, RETRY_MODES, Refusal, check_mode, parse_header
from loadgen.refusals import HEADER as CAUSE_HEADER

__all__ = [
    "CLIENTS",
    "RETRY_MODES",
    "THROTTLE_CODES",
    "BaseDynamoClient",
    "DynamoDBError",
    "Outcome",
    "Refusal",
    "RetryPolicy",
    "cancellation_codes",
    "first_answer",
    "intended_start",
    "is_throttle",
    "refusals_of",
]

THROTTLE_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
    }
)
"""Error codes DynamoDB answers a throttled request with."""

CLIENTS = ("boto3", "fast")
"""Client implementations: botocore (the default) and `loadgen.fastclient`."""

# The open model's intended start of the operation running in this greenlet (a
# `time.perf_counter` value), until its first call has read it. gevent gives every greenlet
# its own context, so operations running side by side never see each other's.
_INTENDED_START: ContextVar[float | None] = ContextVar("loadgen_intended_start", default=None)
# Told once when the operation's first attempt has its answer, whatever it says.
_ON_ANSWER: ContextVar[Callable[[], None] | None] = ContextVar("loadgen_on_answer", default=None)


@contextmanager
def intended_start(perf_time: float, on_answer: Callable[[], None] | None = None) -> Iterator[None]:
    """Time the first call made inside from ``perf_time``, when it was meant to start, and
    call ``on_answer`` once its first attempt is answered (throttled or not: the SDK's
    retries after it are the design's load, not the arrival's delivery).

    The open model (`loadgen.workload.arrivals`) schedules each operation for a moment: a
    call sent late, behind a stalled target or a busy generator, is reported with the delay
    included (no coordinated omission), its service time kept beside it in the context.

        with intended_start(arrival, on_answer=lambda: ledger.answer(...)):
            user.increment()
    """
    token = _INTENDED_START.set(perf_time)
    told = _ON_ANSWER.set(on_answer)
    try:
        yield
    finally:
        _ON_ANSWER.reset(told)
        _INTENDED_START.reset(token)


def first_answer() -> None:
    """The running operation's first attempt has its answer: tell `intended_start`'s
    ``on_answer``, once (a client calls this after every attempt it makes)."""
    on_answer = _ON_ANSWER.get()
    if on_answer is not None:
        _ON_ANSWER.set(None)
        on_answer()


_MULTI_TABLE_OPERATIONS = frozenset(
    {"BatchGetItem", "BatchWriteItem", "TransactGetItems", "TransactWriteItems"}
)


@dataclass(frozen=True)
class RetryPolicy:
    """How the SDK retries: botocore's mode and its total attempt count.

    ``RetryPolicy("none")`` makes one attempt per call, so every throttle is a final failure.
    """

    mode: str = DEFAULT_RETRY_MODE
    """One of legacy (botocore's default for DynamoDB), standard, adaptive or none."""
    max_attempts: int | None = None
    """Total attempts per call; None keeps the mode's default (10 for legacy, 3 otherwise)."""

    def __post_init__(self) -> None:
        check_mode(self.mode)
        if self.max_attempts is not None and self.max_attempts < 1:
            raise ConfigError(f"max attempts must be >= 1 (got {self.max_attempts})")

    def botocore_config(self) -> botocore.config.Config:
        if self.mode == "none":
            retries: dict[str, Any] = {"mode": "standard", "total_max_attempts": 1}
        else:
            retries = {"mode": self.mode}
            if self.max_attempts is not None:
                retries["total_max_attempts"] = self.max_attempts
        return botocore.config.Config(retries=retries, max_pool_connections=100)


def is_throttle(parsed: dict[str, Any]) -> bool:
    """Whether a parsed DynamoDB error response is a throttle.

    A transaction is throttled when it is cancelled with a ``ThrottlingError`` reason.
    """
    error = parsed.get("Error") or {}
    code = error.get("Code")
    if code in THROTTLE_CODES:
        return True
    if code == "TransactionCanceledException":
        reasons = parsed.get("CancellationReasons") or []
        return any(r.get("Code") == "ThrottlingError" for r in reasons)
    return False


def refusals_of(parsed: Mapping[str, Any], headers: Mapping[str, Any] | None) -> list[Refusal]:
    """The throttles of one attempt: its parsed response (botocore's shape) and HTTP headers.

    A throttled attempt gives at least one `Refusal` (with nothing reported where the body
    names no reason); a successful batch whose items the emulator left unprocessed gives one
    per throttle its header names; any other answer gives none.
    """
    told = parse_header(_header(headers, CAUSE_HEADER))
    if not is_throttle(dict(parsed)):
        if told and (parsed.get("UnprocessedItems") or parsed.get("UnprocessedKeys")):
            field = "UnprocessedKeys" if parsed.get("UnprocessedKeys") else "UnprocessedItems"
            return [Refusal(field, reason, resource, cause) for cause, reason, resource in told]
        return []
    code = str((parsed.get("Error") or {}).get("Code") or "")
    given = parsed.get("ThrottlingReasons") or parsed.get("throttlingReasons") or []
    causes: dict[tuple[Any, Any], str] = {
        (reason, resource): cause for cause, reason, resource in told
    }
    found = [
        Refusal(
            code,
            entry.get("reason"),
            entry.get("resource"),
            causes.pop((entry.get("reason"), entry.get("resource")), None),
        )
        for entry in given
        if isinstance(entry, Mapping)
    ]
    # A throttled transaction names no reason in its body: the emulator's header does.
    found += [
        Refusal(code, reason, resource, cause) for (reason, resource), cause in causes.items()
    ]
    return found or [Refusal(code)]


def cancellation_codes(parsed: Mapping[str, Any]) -> list[str]:
    """The codes of a cancelled transaction's ``CancellationReasons``, ``None`` left out:
    ``["ConditionalCheckFailed"]``, ``["TransactionConflict"]``, ``["ThrottlingError"]``..."""
    reasons = parsed.get("CancellationReasons") or []
    return [
        str(r.get("Code"))
        for r in reasons
        if isinstance(r, Mapping) and r.get("Code") not in (None, "None")
    ]


def _header(headers: Mapping[str, Any] | None, name: str) -> str | None:
    if not headers:
        return None
    value = headers.get(name)
    if value is None:
        value = headers.get(name.lower())
    return value if isinstance(value, str) else None


class DynamoDBError(RescheduleTask):
    """A call's final failure, named by its error code so Locust groups failures by code.

    It is a `RescheduleTask`: raised out of a task, Locust moves on to the user's next task
    without logging a traceback; the failure itself was already reported as a request event.
    ``response`` is the parsed error response as botocore gives it (``Error``, and the
    error's modeled fields such as ``ThrottlingReasons`` or ``CancellationReasons``), or
    None for a failure with no response (a connection error).
    """

    def __init__(
        self, code: str, message: str = "", response: dict[str, Any] | None = None
    ) -> None:
        super().__init__(code)
        self.code = code
        self.message = message
        self.response = response


@dataclass(slots=True)
class Outcome:
    """What a transport made of one call: the parsed response (empty after a failure), the
    attempts it took, how many of them were throttled, and the final error if any."""

    response: dict[str, Any]
    attempts: int
    throttled_attempts: int
    error: DynamoDBError | None = None
    first_attempt_throttled: bool = False
    """The first attempt was throttled (retries aside: what the offered load met)."""
    refusals: list[Refusal] = field(default_factory=list)
    """Every throttle of every attempt, as the target gave it (`refusals_of`)."""


class BaseDynamoClient:
    """What every DynamoDB client of the harness shares: the call contract and its event.

    A transport implements `_send` (one call, retries included); `call` adds the table and
    ``ReturnConsumedCapacity`` (``INDEXES`` unless told otherwise: the units of each index a
    write touches, which ``TOTAL`` folds into the table's), times the call and reports it
    through `fire`, the one place a request event is built. So the boto3 client and the fast
    client report alike, down to the context keys the recorder, the heat accounting and the
    exporter read.
    """

    botocore: Any
    """A boto3 DynamoDB client on the same endpoint, for the control plane (CreateTable...)."""

    def __init__(
        self,
        environment: Any,
        *,
        retry: RetryPolicy | None = None,
        return_consumed_capacity: str = "INDEXES",
    ) -> None:
        self.environment = environment
        self.retry = retry or RetryPolicy()
        self.return_consumed_capacity = return_consumed_capacity

    def call(
        self,
        operation: str,
        name: str,
        *,
        table: str,
        pk: str | None = None,
        sk: str | None = None,
        index: str | None = None,
        partition_keys: Sequence[str] | None = None,
        index_keys: Mapping[str, Sequence[str]] | None = None,
        **params: Any,
    ) -> dict[str, Any]:
        """Call ``operation`` with ``params`` and report it as access pattern ``name``.

        ``pk``/``sk`` name the key a single-item call touches; multi-item calls (batches,
        transactions) pass every partition key they touch as ``partition_keys``. The index
        entries a write touches are worked out from the table's schema and the request
        (`loadgen.model.index_writes`); ``index_keys`` (partition keys per index) overrides
        that where the caller knows better. Returns the parsed response; a final failure is
        reported to Locust and raised as `DynamoDBError`.
        """
        if operation not in _MULTI_TABLE_OPERATIONS:
            params.setdefault("TableName", table)
        if self.return_consumed_capacity != "NONE":
            params.setdefault("ReturnConsumedCapacity", self.return_consumed_capacity)
        start_time = time.time()
        start = time.perf_counter()
        outcome = self._send(operation, params)
        end = time.perf_counter()
        service_time_ms = response_time_ms = (end - start) * 1000.0
        intended = _INTENDED_START.get()
        if intended is not None:
            # Only the operation's first call was scheduled; later ones follow it at once.
            _INTENDED_START.set(None)
            response_time_ms = (end - intended) * 1000.0
            start_time -= start - intended
        context = {
            "table": table,
            "index": index,
            "partition_key": pk,
            "sort_key": sk,
            "partition_keys": list(partition_keys) if partition_keys is not None else [pk],
            "index_keys": dict(index_keys) if index_keys else {},
            "consumed_capacity": outcome.response.get("ConsumedCapacity"),
            "attempts": outcome.attempts,
            "retries": outcome.attempts - 1,
            "throttled_attempts": outcome.throttled_attempts,
            "first_attempt_throttled": outcome.first_attempt_throttled,
            "unprocessed": _unprocessed_count(outcome.response),
            "error_code": outcome.error.code if outcome.error else None,
            # What the target said: each throttle's reason and cause, the final error's
            # message and a cancelled transaction's reasons.
            "refusals": outcome.refusals,
            "error_message": outcome.error.message if outcome.error else None,
            "cancellation_codes": (
                cancellation_codes(outcome.error.response)
                if outcome.error is not None and outcome.error.response
                else []
            ),
            # From sending to the answer; the response time counts from the intended start.
            "service_time_ms": service_time_ms,
            # The call's parameters (not copied): capacity computed from item sizes needs them.
            "request": params,
        }
        self.fire(operation, name, start_time, response_time_ms, outcome, context)
        if outcome.error is not None:
            raise outcome.error
        return outcome.response

    def fire(
        self,
        operation: str,
        name: str,
        start_time: float,
        response_time_ms: float,
        outcome: Outcome,
        context: dict[str, Any],
    ) -> None:
        """Fire ``environment.events.request`` once for a finished call."""
        self.environment.events.request.fire(
            request_type=operation,
            name=name,
            start_time=start_time,
            response_time=response_time_ms,
            response_length=0,
            response=outcome.response,
            context=context,
            exception=outcome.error,
            url=None,
        )

    def _send(self, operation: str, params: dict[str, Any]) -> Outcome:
        """Make one call, retries included, and say how it went. Never raises for a
        DynamoDB or transport failure: that goes in `Outcome.error`."""
        raise NotImplementedError


def _unprocessed_count(response: dict[str, Any]) -> int:
    """Items a batch call left unprocessed (DynamoDB's partial throttle of a batch)."""
    count = 0
    for requests in (response.get("UnprocessedItems") or {}).values():
        count += len(requests)
    for keys_and_attributes in (response.get("UnprocessedKeys") or {}).values():
        count += len(keys_and_attributes.get("Keys", []))
    return count
