"""The boto3 transport: botocore makes the call and retries it; its ``needs-retry`` event tells
us about every attempt, throttled or not."""

from __future__ import annotations

import threading
from typing import Any

import boto3
import botocore.exceptions
from botocore import xform_name

from loadgen.client.base import (
    BaseDynamoClient,
    DynamoDBError,
    Outcome,
    Refusal,
    RetryPolicy,
    first_answer,
    is_throttle,
    refusals_of,
)
from loadgen.client.credentials import session_for

__all__ = ["DynamoClient"]


class _Attempts(threading.local):
    # Under Locust the standard library is monkey-patched, so this is greenlet-local: one
    # call's botocore handlers run in the greenlet that made the call.
    attempts = 0
    throttled = 0
    first_throttled = False
    refusals: list[Refusal] = []


class DynamoClient(BaseDynamoClient):
    """A botocore DynamoDB client that reports each call to Locust.

        client = DynamoClient(environment, endpoint_url="http://127.0.0.1:8000")
        client.call("UpdateItem", "counter.increment", table="counters", pk="GLOBAL_COUNTER",
                    Key={"pk": {"S": "GLOBAL_COUNTER"}}, UpdateExpression="ADD n :one",
                    ExpressionAttributeValues={":one": {"N": "1"}})

    Each call fires ``environment.events.request`` once: ``request_type`` is the DynamoDB
    operation, ``name`` the access pattern, and ``context`` carries the table, index, partition
    and sort keys, consumed capacity, attempts, retries and throttled attempts, and the
    call's parameters as ``request``. Keys never go
    into ``name``: Locust keeps one stats entry per name.
    """

    def __init__(
        self,
        environment: Any,
        *,
        endpoint_url: str | None = None,
        region: str | None = None,
        retry: RetryPolicy | None = None,
        return_consumed_capacity: str = "INDEXES",
        session: boto3.session.Session | None = None,
    ) -> None:
        super().__init__(
            environment, retry=retry, return_consumed_capacity=return_consumed_capacity
        )
        session = session or session_for(endpoint_url)
        self.botocore = session.client(
            "dynamodb",
            endpoint_url=endpoint_url,
            region_name=region or session.region_name or "us-east-1",
            config=self.retry.botocore_config(),
        )
        self._attempts = _Attempts()
        # needs-retry is emitted to every handler after every attempt, success or not.
        self.botocore.meta.events.register("needs-retry.dynamodb", self._on_attempt)

    def _on_attempt(
        self,
        attempts: int,
        response: tuple[Any, dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> None:
        self._attempts.attempts = attempts
        if response is None:
            return
        first_answer()
        parsed = response[1]
        if is_throttle(parsed):
            self._attempts.throttled += 1
            self._attempts.first_throttled |= attempts == 1
        headers = (parsed.get("ResponseMetadata") or {}).get("HTTPHeaders")
        self._attempts.refusals += refusals_of(parsed, headers)

    def _send(self, operation: str, params: dict[str, Any]) -> Outcome:
        method = getattr(self.botocore, xform_name(operation))
        self._attempts.attempts = 0
        self._attempts.throttled = 0
        self._attempts.first_throttled = False
        self._attempts.refusals = []
        response: dict[str, Any] = {}
        error: DynamoDBError | None = None
        try:
            response = method(**params)
        except botocore.exceptions.ClientError as e:
            err = e.response.get("Error", {})
            error = DynamoDBError(err.get("Code", "Unknown"), err.get("Message", ""), e.response)
        except botocore.exceptions.BotoCoreError as e:
            error = DynamoDBError(type(e).__name__, str(e))
        attempts = max(self._attempts.attempts, 1)
        return Outcome(
            response,
            attempts,
            self._attempts.throttled,
            error,
            self._attempts.first_throttled,
            self._attempts.refusals,
        )
