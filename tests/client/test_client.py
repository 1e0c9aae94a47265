"""The client wrapper: one request event per call, every throttled attempt counted.

A small HTTP server on 127.0.0.1 plays DynamoDB's throttle responses byte for byte, so the
real botocore parses them and runs its real retry modes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from locust.event import Events

from loadgen.client import BaseDynamoClient, DynamoDBError, RetryPolicy, make_client
from loadgen.errors import ConfigError
from tests.http_server import QuietHandler, serve

PROVISIONED = {
    "__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
    "message": "The level of configured provisioned throughput for the table was exceeded. "
    "Consider increasing your provisioning level with the UpdateTable API.",
}


class Script:
    """How many throttles the server answers before it succeeds."""

    def __init__(self) -> None:
        self.throttles = 0
        self.requests = 0
        self.body: dict[str, Any] = PROVISIONED


@pytest.fixture
def server() -> Iterator[tuple[str, Script]]:
    script = Script()

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            self.body()
            script.requests += 1
            if script.throttles > 0:
                script.throttles -= 1
                status, body = 400, script.body
            else:
                status, body = 200, {"ConsumedCapacity": {"TableName": "t", "CapacityUnits": 1.0}}
            data = json.dumps(body).encode()
            self.reply(status, data, {"Content-Type": "application/x-amz-json-1.0"})

    with serve(Handler) as url:
        yield url, script


class FakeEnvironment:
    def __init__(self) -> None:
        self.events = Events()
        self.fired: list[dict[str, Any]] = []
        self.events.request.add_listener(lambda **kw: self.fired.append(kw))


@pytest.fixture(params=["boto3", "fast"])
def kind(request) -> str:
    """Every test runs with both clients: they keep one contract."""
    return str(request.param)


def _client(
    endpoint: str, retry: RetryPolicy, kind: str = "boto3"
) -> tuple[BaseDynamoClient, FakeEnvironment]:
    env = FakeEnvironment()
    return make_client(kind, env, endpoint_url=endpoint, region="us-east-1", retry=retry), env


def _put(client: BaseDynamoClient) -> dict[str, Any]:
    return client.call(
        "PutItem",
        "test.put",
        table="t",
        pk="GLOBAL_COUNTER",
        TableName="t",
        Item={"pk": {"S": "GLOBAL_COUNTER"}},
    )


def test_success_after_throttles_counts_each_throttled_attempt(server, kind) -> None:
    endpoint, script = server
    script.throttles = 3
    client, env = _client(endpoint, RetryPolicy("legacy"), kind)
    response = _put(client)
    assert response["ConsumedCapacity"]["CapacityUnits"] == 1.0
    assert script.requests == 4
    assert len(env.fired) == 1
    event = env.fired[0]
    assert event["request_type"] == "PutItem"
    assert event["name"] == "test.put"
    assert event["exception"] is None
    assert isinstance(event["response_time"], float) and event["response_time"] > 0
    context = event["context"]
    assert context["attempts"] == 4
    assert context["retries"] == 3
    assert context["throttled_attempts"] == 3
    assert context["partition_key"] == "GLOBAL_COUNTER"
    assert context["partition_keys"] == ["GLOBAL_COUNTER"]
    assert context["consumed_capacity"] == {"TableName": "t", "CapacityUnits": 1.0}
    assert "GLOBAL_COUNTER" not in event["name"]


@pytest.mark.parametrize(
    ("retry", "attempts"),
    [(RetryPolicy("none"), 1), (RetryPolicy("standard", 2), 2), (RetryPolicy("legacy", 4), 4)],
)
def test_final_failure_after_exhausted_attempts(
    server, kind, retry: RetryPolicy, attempts: int
) -> None:
    endpoint, script = server
    script.throttles = 100
    client, env = _client(endpoint, retry, kind)
    with pytest.raises(DynamoDBError) as raised:
        _put(client)
    assert raised.value.code == "ProvisionedThroughputExceededException"
    assert script.requests == attempts
    (event,) = env.fired
    assert event["exception"] is raised.value
    assert event["context"]["throttled_attempts"] == attempts
    assert event["context"]["retries"] == attempts - 1
    assert event["context"]["error_code"] == "ProvisionedThroughputExceededException"


def test_transaction_cancelled_for_throttling_counts_as_throttle(server, kind) -> None:
    endpoint, script = server
    script.throttles = 1
    script.body = {
        "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
        "message": "Transaction cancelled, please refer cancellation reasons for specific "
        "reasons [ThrottlingError]",
        "CancellationReasons": [{"Code": "ThrottlingError", "Message": "Throughput exceeds"}],
    }
    client, env = _client(endpoint, RetryPolicy("none"), kind)
    with pytest.raises(DynamoDBError, match="TransactionCanceledException"):
        client.call(
            "TransactWriteItems",
            "test.tx",
            table="t",
            partition_keys=["a", "b"],
            TransactItems=[{"Put": {"TableName": "t", "Item": {"pk": {"S": "a"}}}}],
        )
    assert env.fired[0]["context"]["throttled_attempts"] == 1
    assert env.fired[0]["context"]["partition_keys"] == ["a", "b"]


def test_unreachable_endpoint_is_a_final_failure(kind) -> None:
    client, env = _client("http://127.0.0.1:9", RetryPolicy("none"), kind)
    with pytest.raises(DynamoDBError) as raised:
        _put(client)
    assert raised.value.code == "EndpointConnectionError"
    assert env.fired[0]["context"]["error_code"] == "EndpointConnectionError"


def test_retry_policy_validation() -> None:
    with pytest.raises(ConfigError, match="'sometimes'"):
        RetryPolicy("sometimes")
    with pytest.raises(ConfigError, match=r"got 0"):
        RetryPolicy("standard", 0)


def test_first_attempt_throttled_is_told_apart_from_retries_throttled(server, kind) -> None:
    # The first call is throttled twice, then succeeds; the second is answered at once: only
    # the first call's first attempt met the ceiling.
    endpoint, script = server
    script.throttles = 2
    client, env = _client(endpoint, RetryPolicy("legacy"), kind)
    _put(client)
    _put(client)
    first, second = (event["context"] for event in env.fired)
    assert (first["throttled_attempts"], first["first_attempt_throttled"]) == (2, True)
    assert (second["throttled_attempts"], second["first_attempt_throttled"]) == (0, False)
