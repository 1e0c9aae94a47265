"""How much work the emulator takes on at once: requests in flight and the body bytes they hold.

Each request in flight may hold a body of up to 16 MB, so without a bound a few hundred
clients posting large batches at once would take all of the machine's memory. Beyond either
limit the emulator answers at once, before reading the body, with HTTP 503
``ServiceUnavailable`` as DynamoDB does when it is busy; every SDK retries it with backoff.
A slow client holds one slot and its own bytes only: requests are served concurrently, so it
holds up no one else.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from loadgen.emulator.wire import DYNAMODB, dumps, error_body
from loadgen.errors import ConfigError

__all__ = ["DEFAULT_MAX_BODY_BYTES", "DEFAULT_MAX_IN_FLIGHT", "Admission"]

DEFAULT_MAX_IN_FLIGHT = 1024
"""Requests served at once (a model choice: well above what a Locust process sends)."""
DEFAULT_MAX_BODY_BYTES = 256 * 1024 * 1024
"""Request body bytes held at once, over all requests in flight."""
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html
_UNAVAILABLE = DYNAMODB + "ServiceUnavailable"


@dataclass
class Admission:
    """Limits on concurrent work, held by the emulator's listener (`loadgen.emulator.listener`).

    >>> admission = Admission(max_in_flight=1)
    >>> admission.admit(100) is None, admission.admit(100) is None
    (True, False)
    """

    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT
    """Requests answered at once; one more gets a 503."""
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    """Declared body bytes of the requests in flight; a request that would pass it gets a 503."""
    largest_body: int = 16 * 1024 * 1024
    """Bytes counted for a body of undeclared length (chunked): the largest one accepted."""
    in_flight: int = field(default=0, init=False)
    body_bytes: int = field(default=0, init=False)
    refused: int = field(default=0, init=False)
    """Requests answered 503 so far."""

    def __post_init__(self) -> None:
        if self.max_in_flight < 1:
            raise ConfigError(f"--max-in-flight must be >= 1 (got {self.max_in_flight})")
        if self.max_body_bytes < 1:
            raise ConfigError(f"the body-bytes limit must be >= 1 (got {self.max_body_bytes})")

    def admit(self, size: int | None) -> bytes | None:
        """Count a request in, or the body of its 503 if there is no room (counted refused).

        ``size`` is the body's declared length (None: undeclared, chunked); the caller reads
        no body it was refused, and calls `release` with the same size once it has answered.
        """
        size = self._counted(size)
        reason = None
        if self.in_flight >= self.max_in_flight:
            reason = f"{self.in_flight} requests in flight (limit {self.max_in_flight})"
        elif self.body_bytes + size > self.max_body_bytes:
            reason = (
                f"{self.body_bytes} request bytes in flight (limit {self.max_body_bytes}; "
                f"this one {size})"
            )
        if reason is not None:
            self.refused += 1
            message = f"The service is currently unavailable or busy: {reason}"
            return dumps(error_body(_UNAVAILABLE, message))
        self.in_flight += 1
        self.body_bytes += size
        return None

    def release(self, size: int | None) -> None:
        """A request admitted with ``size`` was answered."""
        self.in_flight -= 1
        self.body_bytes -= self._counted(size)

    def _counted(self, size: int | None) -> int:
        return self.largest_body if size is None else min(size, self.largest_body)
