"""botocore's retry modes for a transport that is not botocore: legacy, standard, adaptive, none.

A test should retry as the production SDK would, or it measures another system: a throttle
the SDK retries three times is three throttled attempts and one slow success, not a failure.
Each mode below follows botocore (1.40) as it runs against DynamoDB:

- **legacy** (botocore's default): ``data/_retry.json``'s DynamoDB entry merged with the
  defaults. 10 attempts in all; backoff ``0.05 * 2 ** (attempts - 1)`` seconds, no jitter.
  Retried: connection errors and timeouts; HTTP 429, 500, 502, 503, 504 and 509; on HTTP
  400 the codes `LEGACY_THROTTLE_CODES`; ``ReplicatedWriteConflictException`` on 409; and an
  ``x-amz-crc32`` mismatch, which on the last attempt becomes the error ``ChecksumError``.
- **standard** (``botocore/retries/standard.py``): 3 attempts; backoff ``random() *
  min(2 ** (attempts - 1), 20)``; retried: transient codes, HTTP 500/502/503/504, any
  connection error, the throttling codes `STANDARD_THROTTLE_CODES`, errors the model marks
  retryable, and a CRC32 mismatch; each retry takes 5 tokens (10 after a timeout) from a
  500-token quota per client, which a success gives back.
- **adaptive** (``botocore/retries/adaptive.py``): standard, plus a client-side rate limiter
  that a throttle switches on: a token bucket whose rate follows CUBIC. botocore's own
  limiter classes are used as they are: they know nothing of HTTP.
- **none**: one attempt.

    strategy = retry_strategy(RetryPolicy("standard"))
    strategy.before_attempt()                      # adaptive: may wait for a token
    delay = strategy.retry_delay(1, Attempt(400, "ThrottlingException"), call)
    strategy.after_call(200, call)                 # standard: returns quota
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from botocore.retries import adaptive, bucket, quota, throttling

from loadgen.client.base import RetryPolicy
from loadgen.refusals import (
    LEGACY_ATTEMPTS,
    LEGACY_BASE_S,
    MAX_BACKOFF_S,
    NO_RETRY_INCREMENT,
    RETRY_COST,
    STANDARD_ATTEMPTS,
    TIMEOUT_RETRY_COST,
)

__all__ = [
    "CONNECTION_ERRORS",
    "LEGACY_THROTTLE_CODES",
    "MODELED_RETRYABLE_CODES",
    "STANDARD_THROTTLE_CODES",
    "TIMEOUT_ERRORS",
    "Adaptive",
    "Attempt",
    "Legacy",
    "NoRetries",
    "RetryStrategy",
    "Standard",
    "retry_strategy",
]

LEGACY_MAX_ATTEMPTS = LEGACY_ATTEMPTS  # _retry.json: retry.dynamodb.__default__.max_attempts
STANDARD_MAX_ATTEMPTS = STANDARD_ATTEMPTS  # botocore.retries.standard.DEFAULT_MAX_ATTEMPTS

CONNECTION_ERRORS = frozenset(
    {
        "EndpointConnectionError",
        "ConnectionClosedError",
        "ConnectTimeoutError",
        "ReadTimeoutError",
        "ConnectionError",
    }
)
"""Transport failures, by the botocore exception name they are reported as. All are
``botocore.exceptions.ConnectionError`` or ``HTTPClientError``: legacy retries these
(``GENERAL_CONNECTION_ERROR``), standard retries any of them."""
TIMEOUT_ERRORS = frozenset({"ConnectTimeoutError", "ReadTimeoutError"})
"""Failures a standard-mode retry pays 10 quota tokens for, not 5."""

LEGACY_THROTTLE_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
    }
)
"""Codes legacy mode retries when they come with HTTP 400 (``_retry.json``). Not
``RequestLimitExceeded``: legacy mode lets that one through as a failure."""
_LEGACY_STATUS = frozenset({429, 500, 502, 503, 504, 509})
_LEGACY_409_CODES = frozenset({"ReplicatedWriteConflictException"})

STANDARD_THROTTLE_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "LimitExceededException",
        "RequestThrottled",
        "SlowDown",
        "PriorRequestNotComplete",
        "EC2ThrottledException",
    }
)
"""``ThrottledRetryableChecker._THROTTLED_ERROR_CODES``: retried, and what the adaptive
limiter counts as a throttle."""
_TRANSIENT_CODES = frozenset(
    {"RequestTimeout", "RequestTimeoutException", "PriorRequestNotComplete"}
)
_TRANSIENT_STATUS = frozenset({500, 502, 503, 504})
MODELED_RETRYABLE_CODES = frozenset({"ReplicatedWriteConflictException"})
"""DynamoDB errors its API model marks ``retryable`` (none of them as throttling); a test
holds this to the model botocore ships."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """What one attempt came back with."""

    status: int | None
    """HTTP status; None when no response arrived."""
    code: str | None = None
    """Error code (from ``__type``), None on success."""
    transport_error: str | None = None
    """botocore's name for a transport failure (``EndpointConnectionError``, ...)."""
    crc32_mismatch: bool = False
    """The body does not match its ``x-amz-crc32`` header."""


class RetryStrategy:
    """Decides whether and when a call makes another attempt. One per client, shared by
    every greenlet calling through it (as botocore keeps one per client)."""

    mode = "none"
    max_attempts = 1
    checksum_error_on_last_attempt = False
    """Whether a CRC32 mismatch on the last attempt fails the call (legacy) or the response
    is returned as it is (standard)."""

    def before_attempt(self) -> None:
        """Called before every attempt is sent (adaptive mode may wait here)."""

    def retry_delay(self, attempts: int, attempt: Attempt, call: dict[str, Any]) -> float | None:
        """Seconds to wait before the next attempt, or None to stop after ``attempts``.

        ``call`` is scratch space for one call (botocore's request context).
        """
        return None

    def after_call(self, status: int | None, call: dict[str, Any]) -> None:
        """Called once per call with the last attempt's HTTP status."""


class NoRetries(RetryStrategy):
    """One attempt per call: every throttle is a final failure."""


class Legacy(RetryStrategy):
    """botocore's legacy mode for DynamoDB (see the module docstring)."""

    mode = "legacy"
    checksum_error_on_last_attempt = True

    def __init__(self, max_attempts: int | None = None) -> None:
        self.max_attempts = max_attempts or LEGACY_MAX_ATTEMPTS

    def retryable(self, attempt: Attempt) -> bool:
        if attempt.transport_error is not None:
            return attempt.transport_error in CONNECTION_ERRORS
        status, code = attempt.status, attempt.code
        return (
            status in _LEGACY_STATUS
            or (status == 400 and code in LEGACY_THROTTLE_CODES)
            or (status == 409 and code in _LEGACY_409_CODES)
            or attempt.crc32_mismatch
        )

    def retry_delay(self, attempts: int, attempt: Attempt, call: dict[str, Any]) -> float | None:
        if attempts >= self.max_attempts or not self.retryable(attempt):
            return None
        return float(LEGACY_BASE_S * 2 ** (attempts - 1))


class Standard(RetryStrategy):
    """botocore's standard mode: jittered exponential backoff and a retry quota."""

    mode = "standard"

    def __init__(
        self, max_attempts: int | None = None, *, random: Callable[[], float] = random.random
    ) -> None:
        self.max_attempts = max_attempts or STANDARD_MAX_ATTEMPTS
        self.quota = quota.RetryQuota()
        """botocore's own quota (500 tokens); shared by every call of this client."""
        self._random = random

    def retryable(self, attempt: Attempt) -> bool:
        code = attempt.code
        return (
            attempt.transport_error is not None
            or code in _TRANSIENT_CODES
            or attempt.status in _TRANSIENT_STATUS
            or code in STANDARD_THROTTLE_CODES
            or code in MODELED_RETRYABLE_CODES
            or attempt.crc32_mismatch
        )

    def retry_delay(self, attempts: int, attempt: Attempt, call: dict[str, Any]) -> float | None:
        if attempts >= self.max_attempts or not self.retryable(attempt):
            return None
        cost = TIMEOUT_RETRY_COST if attempt.transport_error in TIMEOUT_ERRORS else RETRY_COST
        if not self.quota.acquire(cost):
            return None  # quota spent: fail now rather than pile retries on a sick service
        call["retry_quota_capacity"] = cost
        return float(self._random() * min(2 ** (attempts - 1), MAX_BACKOFF_S))

    def after_call(self, status: int | None, call: dict[str, Any]) -> None:
        if status is not None and 200 <= status < 300:
            self.quota.release(call.get("retry_quota_capacity", NO_RETRY_INCREMENT))


class _ThrottleDetector:
    # Stands in for botocore's ThrottlingErrorDetector, which reads botocore's event kwargs.
    def is_throttling_error(self, code: str | None = None, **kwargs: Any) -> bool:
        return code in STANDARD_THROTTLE_CODES


class Adaptive(Standard):
    """Standard mode plus botocore's client-side rate limiter (token bucket, CUBIC rate)."""

    mode = "adaptive"

    def __init__(
        self, max_attempts: int | None = None, *, random: Callable[[], float] = random.random
    ) -> None:
        super().__init__(max_attempts, random=random)
        # Wired as botocore.retries.adaptive.register_retry_handler wires it.
        clock = bucket.Clock()
        self.limiter = adaptive.ClientRateLimiter(
            rate_adjustor=throttling.CubicCalculator(
                starting_max_rate=0, start_time=clock.current_time()
            ),
            rate_clocker=adaptive.RateClocker(clock),
            token_bucket=bucket.TokenBucket(max_rate=1, clock=clock),
            throttling_detector=_ThrottleDetector(),
            clock=clock,
        )

    def before_attempt(self) -> None:
        self.limiter.on_sending_request(request=None)

    def retry_delay(self, attempts: int, attempt: Attempt, call: dict[str, Any]) -> float | None:
        # botocore's limiter hears of every response, success or not, before the retry check.
        self.limiter.on_receiving_response(code=attempt.code)
        return super().retry_delay(attempts, attempt, call)


def retry_strategy(policy: RetryPolicy) -> RetryStrategy:
    """The strategy that mirrors ``policy`` (a new one: quotas and limiters are per client)."""
    if policy.mode == "legacy":
        return Legacy(policy.max_attempts)
    if policy.mode == "standard":
        return Standard(policy.max_attempts)
    if policy.mode == "adaptive":
        return Adaptive(policy.max_attempts)
    return NoRetries()
