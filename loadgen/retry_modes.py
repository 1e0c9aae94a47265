"""botocore's retry modes for DynamoDB, in figures: what the clients follow
(`loadgen.client.retries`) and the model simulates (`loadgen.simulate.retries`), written once.

This module imports only the package's errors: the clients (which load botocore) and
``loadgen check`` (which must not) both read it.

    modelled("legacy")     # ("legacy", 10): the mode and attempts the model takes for it
"""

from __future__ import annotations

from loadgen.errors import ConfigError

__all__ = [
    "DEFAULT_RETRY_MODE",
    "LEGACY_ATTEMPTS",
    "LEGACY_BASE_S",
    "MAX_BACKOFF_S",
    "MODELLED_MODES",
    "NO_RETRY_INCREMENT",
    "RETRY_COST",
    "RETRY_MODES",
    "RETRY_QUOTA",
    "STANDARD_ATTEMPTS",
    "TIMEOUT_RETRY_COST",
    "check_mode",
    "modelled",
]

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
