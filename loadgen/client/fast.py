"""A lean DynamoDB data-plane client for Locust's gevent world: `FastDynamoClient`.

boto3 spends about a millisecond of CPU per call before any I/O (request signing through
``AWSRequest``, the user-agent builder, parameter validation, response parsing against the
model), so one Locust process drives a few hundred calls a second. This client speaks
DynamoDB's JSON protocol directly on geventhttpclient, the HTTP client Locust's FastHttpUser
uses, and keeps the contract of the boto3 path (`loadgen.client.BaseDynamoClient`): the same
request events and context, the same `DynamoDBError` codes, and retries that follow botocore's
modes (`loadgen.client.retries`).

    client = FastDynamoClient(environment, endpoint_url="http://127.0.0.1:8000",
                              retry=RetryPolicy("legacy"))
    client.call("PutItem", "sensor.put", table="readings", pk="SENSOR#1",
                Item={"pk": {"S": "SENSOR#1"}, "ts": {"S": "2026-01-01T00:00:00"}})

What it does as botocore does:

- SigV4, byte for byte (`loadgen.client.sigv4`), with the derived key cached per day; credentials
  come from boto3's own chain, taken once; refreshable ones (SSO, assumed roles, instance
  profiles) are read at each signature through ``get_frozen_credentials``, which refreshes
  them when they near expiry.
- One connection pool per process with keep-alive (geventhttpclient's ``HTTPClient``).
- Error codes from ``__type`` (the text after the last ``#``, before any ``:``), HTTP 5xx
  with an empty or HTML body as the status code, and the error's modeled fields
  (``ThrottlingReasons``, ``throttlingReasons``, ``CancellationReasons``, ...) in
  `DynamoDBError.response`, as botocore puts them in ``ClientError.response``.
- ``x-amz-crc32`` is checked; a mismatch is retried as botocore retries it.
- TransactWriteItems gets a ``ClientRequestToken`` when the caller gave none, as botocore
  fills idempotency tokens, so a retried transaction is not applied twice.

What it does not: validate parameters against the API model (DynamoDB answers a
ValidationException instead), convert binary attributes (``B``, ``BS``) in responses to
bytes (they stay base64 text as on the wire; ``bytes`` in requests are encoded), or carry
``HTTPHeaders`` in ``ResponseMetadata``. Control-plane calls (CreateTable, ...) go through
`FastDynamoClient.botocore`, a plain boto3 client.
"""

from __future__ import annotations

import base64
import functools
import http.client
import json
import time
import uuid
import zlib
from typing import Any
from urllib.parse import urlsplit

import boto3
import gevent
from geventhttpclient import HTTPClient
from geventhttpclient.response import HTTPConnectionClosed, HTTPParseError

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
from loadgen.client.retries import Attempt, RetryStrategy, retry_strategy
from loadgen.client.sigv4 import SigV4Signer, amz_date, canonical_path, host_header
from loadgen.errors import CredentialsError
from loadgen.refusals import HEADER as CAUSE_HEADER

__all__ = [
    "DEFAULT_MAX_CONNECTIONS",
    "JSON_CONTENT_TYPE",
    "TARGET_PREFIX",
    "FastDynamoClient",
    "parse_error",
    "transport_error_name",
]

JSON_CONTENT_TYPE = "application/x-amz-json-1.0"
TARGET_PREFIX = "DynamoDB_20120810."
USER_AGENT = "partition-heat-fastclient"
DEFAULT_MAX_CONNECTIONS = 1000
"""Connections the pool may open. geventhttpclient makes a caller wait for a free one where
urllib3 (under botocore) opens another: a pool as large as the users keeps waiting out of
the measured latency."""
DEFAULT_TIMEOUT = 60.0
"""Connect and read timeouts, seconds: botocore's defaults."""

_IDEMPOTENCY_TOKENS = {"TransactWriteItems": "ClientRequestToken"}  # from botocore's model


class FastDynamoClient(BaseDynamoClient):
    """A DynamoDB client on geventhttpclient with the contract of `loadgen.client.DynamoClient`.

        client = FastDynamoClient(environment, endpoint_url="http://127.0.0.1:8000")
        client.call("UpdateItem", "counter.increment", table="counters", pk="GLOBAL_COUNTER",
                    Key={"pk": {"S": "GLOBAL_COUNTER"}}, UpdateExpression="ADD n :one",
                    ExpressionAttributeValues={":one": {"N": "1"}})

    Any operation of the JSON protocol passes through; the data-plane ones (GetItem,
    PutItem, UpdateItem, DeleteItem, Query, Scan, BatchGetItem, BatchWriteItem,
    TransactGetItems, TransactWriteItems) are the ones it is tested with. Share one per
    process: the pool, the signing-key cache and the retry quota are per client, as in
    botocore.
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
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        super().__init__(
            environment, retry=retry, return_consumed_capacity=return_consumed_capacity
        )
        self._session = session or session_for(endpoint_url)
        self.region: str = region or self._session.region_name or "us-east-1"
        """Region of the endpoint and the signature."""
        self._endpoint_url = endpoint_url
        credentials = self._session.get_credentials()
        if credentials is None:
            raise CredentialsError(
                "no AWS credentials found (configure a profile, AWS_ACCESS_KEY_ID/"
                "AWS_SECRET_ACCESS_KEY, or an instance role)"
            )
        self._credentials = credentials
        # Without an endpoint, ask botocore where DynamoDB is for this region (partitions,
        # FIPS and AWS_ENDPOINT_URL_DYNAMODB included).
        self.endpoint_url: str = endpoint_url or str(self.botocore.meta.endpoint_url)
        """Where requests go."""
        parts = urlsplit(self.endpoint_url)
        self._request_uri = parts.path or "/"
        self._path = canonical_path(self._request_uri)
        self._host = host_header(self.endpoint_url)
        self._signer = SigV4Signer(self.region, "dynamodb")
        self.strategy: RetryStrategy = retry_strategy(self.retry)
        """The retry mode in force (its quota and limiter are this client's)."""
        self._http = HTTPClient.from_url(
            self.endpoint_url,
            concurrency=max_connections,
            connection_timeout=timeout,
            network_timeout=timeout,
            headers={"User-Agent": USER_AGENT},
        )
        self._second = -1
        self._timestamp = ""

    @functools.cached_property
    def botocore(self) -> Any:
        """A boto3 client on the same endpoint, region and retry mode, for the control plane
        (CreateTable, DescribeTable): created on first use."""
        return self._session.client(
            "dynamodb",
            endpoint_url=self._endpoint_url,
            region_name=self.region,
            config=self.retry.botocore_config(),
        )

    def close(self) -> None:
        """Close the pooled connections."""
        self._http.close()

    def _send(self, operation: str, params: dict[str, Any]) -> Outcome:
        token = _IDEMPOTENCY_TOKENS.get(operation)
        if token is not None and token not in params:
            params = {**params, token: str(uuid.uuid4())}
        # One body for every attempt: a retry sends the same bytes, signed afresh.
        body = json.dumps(params, separators=(",", ":"), default=_json_default).encode()
        target = TARGET_PREFIX + operation
        strategy = self.strategy
        scratch: dict[str, Any] = {}
        attempts = throttled = 0
        first_throttled = False
        refusals: list[Refusal] = []
        while True:
            attempts += 1
            strategy.before_attempt()
            attempt, parsed, error, cause = self._attempt(target, body)
            if attempt.status is not None:
                first_answer()
            if error is not None and error.response is not None and is_throttle(error.response):
                throttled += 1
                first_throttled = first_throttled or attempts == 1
            told = {CAUSE_HEADER: cause} if cause is not None else None
            if error is not None and error.response is not None:
                refusals += refusals_of(error.response, told)
            elif told is not None:  # a batch's items the emulator left unprocessed
                refusals += refusals_of(parsed, told)
            delay = strategy.retry_delay(attempts, attempt, scratch)
            if delay is None:
                break
            gevent.sleep(delay)
        strategy.after_call(attempt.status, scratch)
        if attempt.crc32_mismatch and error is None and strategy.checksum_error_on_last_attempt:
            error = DynamoDBError("ChecksumError", "CRC32 of the response body does not match")
        if error is not None:
            return Outcome({}, attempts, throttled, error, first_throttled, refusals)
        parsed["ResponseMetadata"]["RetryAttempts"] = attempts - 1
        return Outcome(parsed, attempts, throttled, None, first_throttled, refusals)

    def _attempt(
        self, target: str, body: bytes
    ) -> tuple[Attempt, dict[str, Any], DynamoDBError | None, str | None]:
        """Send one signed request; never raises for a DynamoDB or transport failure. Also
        returns the emulator's throttle header (`loadgen.refusals.HEADER`), if any."""
        headers = {
            "Host": self._host,
            "Content-Type": JSON_CONTENT_TYPE,
            "X-Amz-Target": target,
        }
        now = int(time.time())
        if now != self._second:  # one strftime a second, not one a request
            self._second, self._timestamp = now, amz_date(now)
        self._signer.sign(
            headers,
            body,
            self._credentials.get_frozen_credentials(),
            self._timestamp,
            path=self._path,
        )
        try:
            response = self._http.request("POST", self._request_uri, body=body, headers=headers)
            data = response.read()
            status = response.status_code
            checksum = response.get("x-amz-crc32")
            request_id = response.get("x-amzn-requestid")
            cause = response.get(CAUSE_HEADER)
        except Exception as exc:  # the transport's failures are reported, never raised
            name = transport_error_name(exc)
            error = DynamoDBError(name, f"{self.endpoint_url}: {exc or type(exc).__name__}")
            return Attempt(None, transport_error=name), {}, error, None
        cause = cause if isinstance(cause, str) else None
        mismatch = isinstance(checksum, str) and (zlib.crc32(data) & 0xFFFFFFFF) != int(checksum)
        metadata = {
            "RequestId": request_id if isinstance(request_id, str) else "",
            "HTTPStatusCode": status,
        }
        if status < 300:
            try:
                parsed = json.loads(data) if data else {}
            except ValueError:
                parsed = {}  # botocore too parses an unreadable body to nothing
            if not isinstance(parsed, dict):
                parsed = {}
            parsed["ResponseMetadata"] = metadata
            return Attempt(status, crc32_mismatch=mismatch), parsed, None, cause
        parsed = parse_error(status, data)
        parsed["ResponseMetadata"] = metadata
        error_info = parsed["Error"]
        code = error_info["Code"]
        return (
            Attempt(status, code, crc32_mismatch=mismatch),
            {},
            DynamoDBError(code, error_info["Message"], parsed),
            cause,
        )


def parse_error(status: int, body: bytes) -> dict[str, Any]:
    """An error response parsed as botocore's JSON parser parses it.

    ``{"Error": {"Code": ..., "Message": ...}}`` plus the modeled fields of the error's shape
    (``ThrottlingReasons``, ``CancellationReasons``, ...):

        >>> parse_error(400, b'{"__type":"com.amazonaws.dynamodb.v20120810#'
        ...     b'ResourceNotFoundException","message":"no table"}')["Error"]
        {'Message': 'no table', 'Code': 'ResourceNotFoundException'}
    """
    stripped = body.strip()
    if status >= 500 and (not stripped or stripped.startswith(b"<html>")):
        # A proxy's or load balancer's page: botocore names the error by the status.
        message = http.client.responses.get(status, "")
        return {"Error": {"Code": str(status), "Message": message}}
    try:
        document = json.loads(body.decode()) if body else {}
    except ValueError:
        document = {"message": body.decode(errors="replace")}
    if not isinstance(document, dict):
        document = {}
    message = document.get("message", document.get("Message", ""))
    code = document.get("__type", str(status))
    if not isinstance(code, str):
        code = str(code)
    # "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException", maybe with ":..." after.
    if ":" in code:
        code = code.split(":", 1)[0]
    if "#" in code:
        code = code.rsplit("#", 1)[1]
    parsed: dict[str, Any] = {"Error": {"Message": message, "Code": code}}
    for member, wire_name in _error_members().get(code, ()):
        value = document.get(wire_name)
        if value is not None:
            parsed[member] = value
    return parsed


@functools.cache
def _error_members() -> dict[str, tuple[tuple[str, str], ...]]:
    """Per error code, its shape's (member, JSON name) pairs, from botocore's API model."""
    import botocore.session

    model = botocore.session.get_session().get_service_model("dynamodb")
    members: dict[str, tuple[tuple[str, str], ...]] = {}
    for name in model.shape_names:
        shape = model.shape_for(name)
        if not shape.metadata.get("exception"):
            continue
        code = shape.metadata.get("error", {}).get("code") or shape.name
        members[code] = tuple(
            (member, member_shape.serialization.get("name", member))
            for member, member_shape in shape.members.items()
        )
    return members


def transport_error_name(exc: BaseException) -> str:
    """The botocore exception name a transport failure is reported under."""
    if isinstance(exc, HTTPConnectionClosed | ConnectionResetError | BrokenPipeError):
        return "ConnectionClosedError"
    if isinstance(exc, TimeoutError):
        return "ReadTimeoutError"
    if isinstance(exc, HTTPParseError):
        return "HTTPClientError"
    if isinstance(exc, OSError):  # refused, unreachable, no such host
        return "EndpointConnectionError"
    return "HTTPClientError"


def _json_default(value: Any) -> Any:
    # Binary attributes may be given as bytes, as botocore accepts them.
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(value).decode()
    raise TypeError(f"cannot send a {type(value).__name__} in a DynamoDB request")
