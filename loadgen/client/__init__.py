"""DynamoDB clients: one call contract, two transports, and the factory that picks one.

Owns: the call contract and its one request event (`base`), the boto3 transport (`boto`), the
fast transport on geventhttpclient (`fast`) with its SigV4 signer (`sigv4`) and botocore's retry
modes (`retries`), and which credentials a client signs with (`credentials`: local ones for a
local engine when none are configured). Each call's context carries what the target said of
its refusals (`refusals_of`: throttling reasons, the emulator's causes, cancellation reasons).
Imports `loadgen.errors` and `loadgen.refusals` only: no model, emulator, heat or verdict.
The base imports no transport; `make_client` below is the one place that names them.

    client = make_client("fast", environment, endpoint_url="http://127.0.0.1:8000")
"""

from __future__ import annotations

from typing import Any

from loadgen.client.base import (
    CLIENTS,
    RETRY_MODES,
    THROTTLE_CODES,
    BaseDynamoClient,
    DynamoDBError,
    Outcome,
    Refusal,
    RetryPolicy,
    is_throttle,
    refusals_of,
)
from loadgen.client.boto import DynamoClient
from loadgen.errors import ConfigError

__all__ = [
    "CLIENTS",
    "RETRY_MODES",
    "THROTTLE_CODES",
    "BaseDynamoClient",
    "DynamoClient",
    "DynamoDBError",
    "Outcome",
    "Refusal",
    "RetryPolicy",
    "is_throttle",
    "make_client",
    "refusals_of",
]


def make_client(kind: str, environment: Any, **kwargs: Any) -> BaseDynamoClient:
    """A client of kind ``"boto3"`` or ``"fast"``; ``kwargs`` as `DynamoClient` takes them."""
    if kind == "boto3":
        return DynamoClient(environment, **kwargs)
    if kind == "fast":
        # Imported here: only runs that ask for it pay for geventhttpclient's import.
        from loadgen.client.fast import FastDynamoClient

        return FastDynamoClient(environment, **kwargs)
    raise ConfigError(f"unknown client {kind!r} (expected one of: {', '.join(CLIENTS)})")
