"""The fast client against botocore: the same errors, reasons, retries and events.

Error parity: an emulator over in-process moto with a clock that moves only when a test
moves it answers the same situation to both clients (throttles with their reasons, a
cancelled transaction, a validation error, a missing table, a partly throttled batch), and
the fast client must parse what botocore parses. Wire details (CRC32 retries, 5xx pages,
keep-alive, the signature as received, refreshed credentials) run against a scripted HTTP
server on 127.0.0.1.
"""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest import mock

import pytest
from locust.event import Events

from loadgen.client import BaseDynamoClient, DynamoDBError, RetryPolicy, make_client, retries
from loadgen.client.base import intended_start
from loadgen.client.fast import FastDynamoClient, parse_error, transport_error_name
from loadgen.emulator.backends import MotoBackend
from loadgen.emulator.server import Emulator, EmulatorServer
from loadgen.model.partitions import PartitionModel
from tests.http_server import QuietHandler, serve

# botocore is imported inside the tests: Locust (above) must monkey-patch ssl before botocore
# imports it, or a test run of this module alone fails on a recursion in ssl.

CLIENTS = ("boto3", "fast")


class FakeEnvironment:
    def __init__(self) -> None:
        self.events = Events()
        self.fired: list[dict[str, Any]] = []
        self.events.request.add_listener(lambda **kw: self.fired.append(kw))


def without_metadata(response: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in response.items() if k != "ResponseMetadata"}


# --- error parity through the emulator ------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def emulator() -> Iterator[tuple[EmulatorServer, FakeClock]]:
    clock = FakeClock()
    # Scale 0.01: a partition serves 30 read and 10 write units a "second", which never ends.
    # An empty bank at creation: these tests ask for each limit's throttle at once, the
    # provisioned one before a partition's ceiling (the starting burst: tests/oracle).
    model = PartitionModel(
        scale=0.01, clock=clock, account=MotoBackend.account, new_table_burst_s=0
    )
    with EmulatorServer(Emulator(MotoBackend(), model)) as server:
        yield server, clock


@pytest.fixture(scope="module")
def clients(emulator) -> dict[str, tuple[BaseDynamoClient, FakeEnvironment]]:
    server, _ = emulator
    made = {}
    for kind in CLIENTS:
        env = FakeEnvironment()
        client = make_client(
            kind,
            env,
            endpoint_url=server.endpoint_url,
            region="us-east-1",
            retry=RetryPolicy("none"),
        )
        made[kind] = (client, env)
    return made


def make_table(client: BaseDynamoClient, name: str, *, on_demand: bool) -> None:
    request: dict[str, Any] = {
        "TableName": name,
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    }
    if on_demand:
        request["BillingMode"] = "PAY_PER_REQUEST"
    else:
        request["ProvisionedThroughput"] = {"ReadCapacityUnits": 3000, "WriteCapacityUnits": 1000}
    client.botocore.create_table(**request)


def failure(client: BaseDynamoClient, operation: str, **params: Any) -> DynamoDBError:
    with pytest.raises(DynamoDBError) as raised:
        client.call(operation, "test.call", table=params.get("TableName", "t"), **params)
    return raised.value


def hot_writes(client: BaseDynamoClient, table: str, key: str) -> None:
    """Write one key until its partition (10 write units a "second") is in debt."""
    for _ in range(10):
        client.call("PutItem", "test.fill", table=table, pk=key, TableName=table,
                    Item={"pk": {"S": key}})  # fmt: skip


def assert_same_error(
    errors: dict[str, DynamoDBError], code: str, fired: dict[str, dict[str, Any]]
) -> None:
    boto, fast = errors["boto3"], errors["fast"]
    assert boto.code == fast.code == code
    assert boto.message == fast.message
    assert boto.response is not None and fast.response is not None
    assert without_metadata(fast.response) == without_metadata(boto.response)
    assert fast.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    for key in (
        "attempts",
        "retries",
        "throttled_attempts",
        "error_code",
        "unprocessed",
        "error_message",
        "cancellation_codes",
    ):
        assert fired["fast"]["context"][key] == fired["boto3"]["context"][key], key
    # What the target said of each throttle, each client's table named alike.
    refusals = {
        kind: [
            (r.exception, r.reason, (r.resource or "").replace(f"-{kind}", "-K"), r.cause)
            for r in fired[kind]["context"]["refusals"]
        ]
        for kind in CLIENTS
    }
    assert refusals["fast"] == refusals["boto3"]


def both(clients, operation: str, setup=None, **params: Any):
    """The same failing call through each client (on its own table when ``setup`` makes one)."""
    errors, fired = {}, {}
    for kind, (client, env) in clients.items():
        call_params = setup(client, kind) if setup else params
        errors[kind] = failure(client, operation, **call_params)
        fired[kind] = env.fired[-1]
    return errors, fired


def test_provisioned_throttle_with_reasons(clients) -> None:
    def setup(client: BaseDynamoClient, kind: str) -> dict[str, Any]:
        make_table(client, f"prov-{kind}", on_demand=False)
        hot_writes(client, f"prov-{kind}", "hot")
        return {"TableName": f"prov-{kind}", "Item": {"pk": {"S": "hot"}}}

    errors, fired = both(clients, "PutItem", setup)
    # The ARN names each client's own table: compare the rest, then the reasons' shape.
    for kind in CLIENTS:
        ((reason),) = errors[kind].response["ThrottlingReasons"]
        assert reason["reason"] == "TableWriteProvisionedThroughputExceeded"
        assert reason["resource"] == f"arn:aws:dynamodb:us-east-1:123456789012:table/prov-{kind}"
        errors[kind].response["ThrottlingReasons"] = "same"
    assert_same_error(errors, "ProvisionedThroughputExceededException", fired)
    assert fired["fast"]["context"]["throttled_attempts"] == 1
    # DynamoDB's reason, and the model's cause beside it: the table's provisioned capacity.
    (refusal,) = fired["boto3"]["context"]["refusals"]
    assert (refusal.exception, refusal.reason, refusal.cause) == (
        "ProvisionedThroughputExceededException",
        "TableWriteProvisionedThroughputExceeded",
        "provisioned",
    )
    assert refusal.resource == "arn:aws:dynamodb:us-east-1:123456789012:table/prov-boto3"


def test_on_demand_throttle_with_lower_case_reasons(clients) -> None:
    def setup(client: BaseDynamoClient, kind: str) -> dict[str, Any]:
        make_table(client, f"od-{kind}", on_demand=True)
        hot_writes(client, f"od-{kind}", "hot")
        return {"TableName": f"od-{kind}", "Item": {"pk": {"S": "hot"}}}

    errors, fired = both(clients, "PutItem", setup)
    for kind in CLIENTS:
        (reason,) = errors[kind].response["throttlingReasons"]
        assert reason["reason"] == "TableWriteKeyRangeThroughputExceeded"
        errors[kind].response["throttlingReasons"] = "same"
    assert_same_error(errors, "ThrottlingException", fired)
    (refusal,) = fired["fast"]["context"]["refusals"]
    assert (refusal.reason, refusal.cause) == ("TableWriteKeyRangeThroughputExceeded", "partition")


def test_transaction_cancelled_by_throttling(clients) -> None:
    def setup(client: BaseDynamoClient, kind: str) -> dict[str, Any]:
        make_table(client, f"tx-{kind}", on_demand=False)
        hot_writes(client, f"tx-{kind}", "hot")
        return {
            "TransactItems": [
                {"Put": {"TableName": f"tx-{kind}", "Item": {"pk": {"S": "hot"}}}},
                {"Put": {"TableName": f"tx-{kind}", "Item": {"pk": {"S": "cold"}}}},
            ]
        }

    errors, fired = both(clients, "TransactWriteItems", setup)
    for kind in CLIENTS:
        codes = [r["Code"] for r in errors[kind].response["CancellationReasons"]]
        assert codes == ["ThrottlingError", "ThrottlingError"]
    assert_same_error(errors, "TransactionCanceledException", fired)
    assert fired["fast"]["context"]["throttled_attempts"] == 1
    assert fired["fast"]["context"]["cancellation_codes"] == ["ThrottlingError", "ThrottlingError"]
    # DynamoDB's cancellation names no throttling reason: the emulator's header does.
    (refusal,) = fired["boto3"]["context"]["refusals"]
    assert (refusal.exception, refusal.reason, refusal.cause) == (
        "TransactionCanceledException",
        "TableWriteProvisionedThroughputExceeded",
        "provisioned",
    )


def test_validation_error(clients) -> None:
    def setup(client: BaseDynamoClient, kind: str) -> dict[str, Any]:
        make_table(client, f"val-{kind}", on_demand=True)
        return {"TableName": f"val-{kind}", "Item": {"other": {"S": "no key"}}}

    errors, fired = both(clients, "PutItem", setup)
    assert_same_error(errors, "ValidationException", fired)
    assert fired["fast"]["context"]["throttled_attempts"] == 0
    assert fired["fast"]["context"]["refusals"] == []
    assert "pk" in fired["fast"]["context"]["error_message"]  # the engine's own words


def test_missing_table(clients) -> None:
    errors, fired = both(clients, "GetItem", TableName="no-such-table", Key={"pk": {"S": "k"}})
    assert_same_error(errors, "ResourceNotFoundException", fired)


def test_conditional_check_failure_returns_the_item(clients) -> None:
    def setup(client: BaseDynamoClient, kind: str) -> dict[str, Any]:
        make_table(client, f"cond-{kind}", on_demand=True)
        item = {"pk": {"S": "k"}, "n": {"N": "1"}, "s": {"SS": ["a", "b"]}}
        client.call("PutItem", "t", table=f"cond-{kind}", Item=item)
        return {
            "TableName": f"cond-{kind}",
            "Item": {"pk": {"S": "k"}},
            "ConditionExpression": "attribute_not_exists(pk)",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }

    errors, fired = both(clients, "PutItem", setup)
    assert_same_error(errors, "ConditionalCheckFailedException", fired)


def test_partly_throttled_batch_reports_unprocessed_items(clients) -> None:
    responses, fired = {}, {}
    for kind, (client, env) in clients.items():
        table = f"batch-{kind}"
        # On demand: the table has room, the hot key's partition has none ("cold" lives on
        # another partition of the eight).
        make_table(client, table, on_demand=True)
        hot_writes(client, table, "hot")
        responses[kind] = client.call(
            "BatchWriteItem",
            "test.batch",
            table=table,
            partition_keys=["hot", "cold"],
            RequestItems={
                table: [
                    {"PutRequest": {"Item": {"pk": {"S": "hot"}}}},
                    {"PutRequest": {"Item": {"pk": {"S": "cold"}}}},
                ]
            },
        )
        fired[kind] = env.fired[-1]["context"]
    for kind in CLIENTS:
        assert responses[kind]["UnprocessedItems"] == {
            f"batch-{kind}": [{"PutRequest": {"Item": {"pk": {"S": "hot"}}}}]
        }
        assert fired[kind]["unprocessed"] == 1
        # The clients ask for INDEXES: the table's own share beside the total.
        assert responses[kind]["ConsumedCapacity"] == [
            {"TableName": f"batch-{kind}", "CapacityUnits": 1.0, "Table": {"CapacityUnits": 1.0}}
        ]
    for key in ("attempts", "throttled_attempts", "error_code", "unprocessed"):
        assert fired["fast"][key] == fired["boto3"][key]
    # The call succeeded; the item left over was refused by the hot key's partition.
    for kind in CLIENTS:
        (refusal,) = fired[kind]["refusals"]
        assert (refusal.exception, refusal.reason, refusal.cause) == (
            "UnprocessedItems",
            "TableWriteKeyRangeThroughputExceeded",
            "partition",
        )


def test_data_plane_operations_answer_alike(clients) -> None:
    """Every data-plane operation: the same parsed answers, ResponseMetadata aside."""
    answers: dict[str, list[Any]] = {}
    for kind, (client, _) in clients.items():
        table = f"ops-{kind}"
        make_table(client, table, on_demand=True)
        key = {"pk": {"S": "a"}}
        calls = [
            ("PutItem", {"TableName": table, "Item": {**key, "n": {"N": "1"}, "l": {"L": []}}}),
            ("GetItem", {"TableName": table, "Key": key, "ConsistentRead": True}),
            ("UpdateItem", {"TableName": table, "Key": key, "UpdateExpression": "ADD n :one",
                            "ExpressionAttributeValues": {":one": {"N": "2"}},
                            "ReturnValues": "ALL_NEW"}),
            ("Query", {"TableName": table, "KeyConditionExpression": "pk = :pk",
                       "ExpressionAttributeValues": {":pk": {"S": "a"}}}),
            ("BatchWriteItem", {"RequestItems": {table: [
                {"PutRequest": {"Item": {"pk": {"S": "b"}}}},
                {"PutRequest": {"Item": {"pk": {"S": "c"}}}}]}}),
            ("BatchGetItem", {"RequestItems": {table: {"Keys": [{"pk": {"S": "b"}}]}}}),
            ("TransactWriteItems", {"TransactItems": [
                {"Put": {"TableName": table, "Item": {"pk": {"S": "d"}}}}]}),
            ("TransactGetItems", {"TransactItems": [
                {"Get": {"TableName": table, "Key": {"pk": {"S": "d"}}}}]}),
            ("DeleteItem", {"TableName": table, "Key": key, "ReturnValues": "ALL_OLD"}),
            ("Scan", {"TableName": table, "Select": "COUNT"}),
        ]  # fmt: skip
        answers[kind] = []
        for operation, params in calls:
            response = client.call(operation, f"test.{operation}", table=table, **params)
            answer = json.loads(json.dumps(without_metadata(response)).replace(table, "T"))
            answers[kind].append((operation, answer))
    assert answers["fast"] == answers["boto3"]


# --- wire details against a scripted server -------------------------------------------------


class Script:
    """Answers, in turn, then the last one for ever; records what arrives."""

    def __init__(self) -> None:
        self.answers: list[tuple[int, bytes, dict[str, str]]] = [(200, b"{}", {})]
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.ports: set[int] = set()

    def next(self) -> tuple[int, bytes, dict[str, str]]:
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


@pytest.fixture
def scripted() -> Iterator[tuple[str, Script]]:
    script = Script()

    class Handler(QuietHandler):
        protocol_version = "HTTP/1.1"  # keep-alive

        def do_POST(self) -> None:
            body = self.body()
            script.requests.append((dict(self.headers.items()), body))
            script.ports.add(self.client_address[1])
            status, data, headers = script.next()
            headers = {"Content-Type": "application/x-amz-json-1.0", **headers}
            headers.setdefault("x-amz-crc32", str(zlib.crc32(data) & 0xFFFFFFFF))
            self.reply(status, data, headers)

    with serve(Handler) as url:
        yield url, script


def put(client: BaseDynamoClient) -> dict[str, Any]:
    return client.call("PutItem", "test.put", table="t", pk="k", Item={"pk": {"S": "k"}})


@pytest.fixture(autouse=True)
def no_backoff_sleep():
    # Legacy backoff waits 50 ms, 100 ms, ...; standard up to seconds: not in unit tests.
    with mock.patch("gevent.sleep"), mock.patch("time.sleep"):
        yield


@pytest.mark.parametrize("kind", CLIENTS)
def test_crc32_mismatch_is_retried_in_legacy_mode(scripted, kind) -> None:
    url, script = scripted
    script.answers = [(200, b"{}", {"x-amz-crc32": "1"}), (200, b"{}", {})]
    client = make_client(kind, FakeEnvironment(), endpoint_url=url, retry=RetryPolicy("legacy"))
    put(client)
    assert len(script.requests) == 2


@pytest.mark.parametrize("kind", CLIENTS)
def test_crc32_mismatch_on_last_attempt(scripted, kind) -> None:
    url, script = scripted
    script.answers = [(200, b"{}", {"x-amz-crc32": "1"})]
    legacy = make_client(kind, FakeEnvironment(), endpoint_url=url, retry=RetryPolicy("legacy", 3))
    with pytest.raises(DynamoDBError) as raised:
        put(legacy)
    assert raised.value.code == "ChecksumError"
    assert len(script.requests) == 3
    # Standard mode retries it too, then returns the answer as it is.
    standard = make_client(kind, FakeEnvironment(), endpoint_url=url, retry=RetryPolicy("standard"))
    put(standard)
    assert len(script.requests) == 6


@pytest.mark.parametrize(
    ("status", "body", "code"),
    [
        (500, b"", "500"),
        (503, b"<html><body>Service Unavailable</body></html>", "503"),
        (500, b'{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError",'
              b'"message":"Internal server error"}', "InternalServerError"),
        (400, b'{"__type":"com.amazon.coral.service#UnrecognizedClientException:http://x",'
              b'"Message":"bad"}', "UnrecognizedClientException"),
        (400, b"not json", "400"),
        (400, b'{"__type":"TransactionInProgressException","Message":"busy"}',
         "TransactionInProgressException"),
        (409, b'{"__type":"com.amazonaws.dynamodb.v20120810#ReplicatedWriteConflictException",'
              b'"message":"conflict"}', "ReplicatedWriteConflictException"),
        (400, b'{"__type":"com.amazonaws.dynamodb.v20120810#RequestLimitExceeded",'
              b'"message":"account","ThrottlingReasons":[{"reason":"TableWriteAccountLimitExceeded",'
              b'"resource":"arn"}]}', "RequestLimitExceeded"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("mode", ["legacy", "standard"])
def test_errors_parse_and_retry_as_botocore(scripted, status, body, code, mode) -> None:
    url, script = scripted
    script.answers = [(status, body, {})]
    outcome = {}
    for kind in CLIENTS:
        env = FakeEnvironment()
        client = make_client(kind, env, endpoint_url=url, retry=RetryPolicy(mode, 4))
        script.requests.clear()
        with pytest.raises(DynamoDBError) as raised:
            put(client)
        error = raised.value
        outcome[kind] = (
            error.code,
            error.message,
            without_metadata(error.response or {}),
            len(script.requests),
            env.fired[-1]["context"]["throttled_attempts"],
        )
    assert outcome["fast"] == outcome["boto3"]
    assert outcome["fast"][0] == code


@pytest.mark.parametrize("kind", CLIENTS)
def test_the_first_answer_is_told_once_while_the_sdk_retries(scripted, kind) -> None:
    # The open model counts an arrival delivered at its first attempt's answer; the SDK's
    # retries of a throttle are the design's load, told by the call's attempts.
    url, script = scripted
    throttle = b'{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"t"}'
    script.answers = [(400, throttle, {}), (400, throttle, {}), (200, b"{}", {})]
    client = make_client(kind, FakeEnvironment(), endpoint_url=url, retry=RetryPolicy("legacy"))
    told: list[int] = []
    with intended_start(time.perf_counter(), on_answer=lambda: told.append(len(script.requests))):
        put(client)
        put(client)
    assert told == [1]  # after the first attempt of the first call, once
    assert len(script.requests) == 4


def test_parse_error_matches_botocore_on_odd_codes() -> None:
    assert parse_error(400, b'{"__type":"a.b#C:d#e"}')["Error"]["Code"] == "C"
    assert parse_error(400, b"[]")["Error"] == {"Message": "", "Code": "400"}


def test_connections_are_kept_alive(scripted) -> None:
    url, script = scripted
    client = FastDynamoClient(FakeEnvironment(), endpoint_url=url)
    for _ in range(20):
        put(client)
    assert len(script.requests) == 20
    assert len(script.ports) == 1


def test_the_signature_received_is_botocores(scripted) -> None:
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import ReadOnlyCredentials

    url, script = scripted
    put(FastDynamoClient(FakeEnvironment(), endpoint_url=url))
    ((headers, body),) = script.requests
    when = datetime.strptime(headers["X-Amz-Date"], "%Y%m%dT%H%M%SZ")
    request = AWSRequest(method="POST", url=url + "/", data=body)
    for name, value in headers.items():
        if name.lower() not in ("authorization", "content-length", "x-amz-date"):
            request.headers[name] = value
    creds = ReadOnlyCredentials("local", "local", None)
    with mock.patch("botocore.auth.get_current_datetime", return_value=when):
        SigV4Auth(creds, "dynamodb", "us-east-1").add_auth(request)
    assert headers["Authorization"] == request.headers["Authorization"]
    assert json.loads(body) == {
        "Item": {"pk": {"S": "k"}},
        "TableName": "t",
        "ReturnConsumedCapacity": "INDEXES",
    }


def test_expiring_credentials_are_refreshed(scripted) -> None:
    from botocore.credentials import RefreshableCredentials

    url, script = scripted
    refreshed = []

    def refresh() -> dict[str, str]:
        refreshed.append(1)
        expiry = datetime.now(UTC) + timedelta(hours=1)
        return {
            "access_key": f"KEY{len(refreshed)}",
            "secret_key": "s",
            "token": "t",
            "expiry_time": expiry.isoformat(),
        }

    # Expires within botocore's 15-minute advisory window: the first signature refreshes it.
    soon = (datetime.now(UTC) + timedelta(minutes=5)).isoformat()
    credentials = RefreshableCredentials.create_from_metadata(
        {"access_key": "OLD", "secret_key": "s", "token": "t", "expiry_time": soon},
        refresh_using=refresh,
        method="test",
    )
    session = mock.Mock(region_name="us-east-1")
    session.get_credentials.return_value = credentials
    client = FastDynamoClient(FakeEnvironment(), endpoint_url=url, session=session)
    for _ in range(3):
        put(client)
    keys = [h["Authorization"].split("Credential=")[1].split("/")[0] for h, _ in script.requests]
    assert keys == ["KEY1", "KEY1", "KEY1"]
    assert len(refreshed) == 1
    assert {h["X-Amz-Security-Token"] for h, _ in script.requests} == {"t"}


def test_idempotency_token_filled_once_per_call(scripted) -> None:
    url, script = scripted
    script.answers = [(500, b"", {}), (200, b"{}", {})]
    client = FastDynamoClient(FakeEnvironment(), endpoint_url=url, retry=RetryPolicy("legacy"))
    params: dict[str, Any] = {"TransactItems": []}
    client.call("TransactWriteItems", "test.tx", table="t", **params)
    tokens = [json.loads(body)["ClientRequestToken"] for _, body in script.requests]
    assert len(tokens) == 2 and tokens[0] == tokens[1]
    assert "ClientRequestToken" not in params["TransactItems"]


def test_transport_errors_are_named_as_botocore_names_them() -> None:
    from geventhttpclient.response import HTTPConnectionClosed

    assert transport_error_name(ConnectionRefusedError()) == "EndpointConnectionError"
    assert transport_error_name(HTTPConnectionClosed("closed")) == "ConnectionClosedError"
    assert transport_error_name(TimeoutError()) == "ReadTimeoutError"
    assert transport_error_name(ValueError()) == "HTTPClientError"


def test_missing_credentials_fail_at_construction() -> None:
    from loadgen.errors import CredentialsError

    session = mock.Mock(region_name="us-east-1")
    session.get_credentials.return_value = None
    with pytest.raises(CredentialsError, match="no AWS credentials"):
        FastDynamoClient(FakeEnvironment(), endpoint_url="http://127.0.0.1:9", session=session)


def test_default_endpoint_is_botocores() -> None:
    import boto3

    client = FastDynamoClient(FakeEnvironment(), region="eu-west-1")
    assert client.endpoint_url == "https://dynamodb.eu-west-1.amazonaws.com"
    assert (
        client.endpoint_url == boto3.client("dynamodb", region_name="eu-west-1").meta.endpoint_url
    )


# --- the retry modes, held to botocore's tables ----------------------------------------------


def test_legacy_backoff_has_no_jitter() -> None:
    legacy = retries.Legacy()
    throttle = retries.Attempt(400, "ProvisionedThroughputExceededException")
    delays = [legacy.retry_delay(n, throttle, {}) for n in range(1, 11)]
    assert delays == [0.05 * 2**n for n in range(9)] + [None]
    # Not retried in legacy mode, whatever the standard mode does with it.
    assert legacy.retry_delay(1, retries.Attempt(400, "RequestLimitExceeded"), {}) is None


def test_standard_backoff_and_quota() -> None:
    standard = retries.Standard(10, random=lambda: 1.0)
    throttle = retries.Attempt(400, "ThrottlingException")
    assert [standard.retry_delay(n, throttle, {}) for n in range(1, 7)] == [1, 2, 4, 8, 16, 20]
    # 500 tokens, 5 a retry: 100 retries in all, then none until a success gives some back.
    spent = 6 + sum(standard.retry_delay(1, throttle, {}) is not None for _ in range(200))
    assert spent == 100
    assert standard.retry_delay(1, throttle, {}) is None
    call: dict[str, Any] = {"retry_quota_capacity": 5}
    standard.after_call(200, call)
    assert standard.retry_delay(1, throttle, {}) is not None
    timeout = retries.Attempt(None, transport_error="ReadTimeoutError")
    standard.after_call(200, {"retry_quota_capacity": 10})
    call = {}
    assert standard.retry_delay(1, timeout, call) is not None
    assert call["retry_quota_capacity"] == 10


def test_adaptive_limits_the_rate_after_a_throttle() -> None:
    adaptive = retries.Adaptive()
    assert not adaptive.limiter._enabled
    adaptive.retry_delay(1, retries.Attempt(200), {})
    assert not adaptive.limiter._enabled
    adaptive.retry_delay(1, retries.Attempt(400, "ThrottlingException"), {})
    assert adaptive.limiter._enabled


def test_retry_tables_match_botocore() -> None:
    import botocore.session
    from botocore.retries.standard import ThrottledRetryableChecker

    assert set(ThrottledRetryableChecker._THROTTLED_ERROR_CODES) == retries.STANDARD_THROTTLE_CODES
    model = botocore.session.get_session().get_service_model("dynamodb")
    modeled = {
        name
        for name in model.shape_names
        if model.shape_for(name).metadata.get("retryable") is not None
    }
    assert modeled == retries.MODELED_RETRYABLE_CODES
    loader = botocore.session.get_session().get_component("data_loader")
    config = loader.load_data("_retry")["retry"]
    codes = set()
    for policy in [*config["__default__"]["policies"].values(),
                   *config["dynamodb"]["__default__"]["policies"].values()]:  # fmt: skip
        ref = policy.get("$ref")
        policy = loader.load_data("_retry")["definitions"][ref] if ref else policy
        response = policy["applies_when"].get("response", {})
        if response.get("http_status_code") == 400 and "service_error_code" in response:
            codes.add(response["service_error_code"])
    assert codes == retries.LEGACY_THROTTLE_CODES
    assert config["dynamodb"]["__default__"]["max_attempts"] == retries.LEGACY_MAX_ATTEMPTS


def test_client_kind_is_validated() -> None:
    from loadgen.errors import ConfigError
    from loadgen.workload.options import _client_kind

    with pytest.raises(ConfigError, match="'grpc'"):
        make_client("grpc", FakeEnvironment())
    with pytest.raises(ConfigError, match="unknown --client 'grpc'"):
        _client_kind("grpc")
    assert _client_kind("fast") == "fast"
