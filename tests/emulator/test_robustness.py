"""The emulator under hostile input: it answers every request as DynamoDB does and stays up.

A fuzzed corpus (`tests.emulator.fuzzing`) against ``loadgen emulator`` in its own process,
each resource-exhaustion case on its own, and backends that refuse, hang, answer garbage or
restart. Where DynamoDB Local answers a malformed request with a 400, the emulator gives the
same error code.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import botocore.config
import botocore.session
import pytest
from botocore.exceptions import ClientError

from loadgen.emulator.admission import Admission
from loadgen.emulator.backends import BackendResponse, MotoBackend, NullBackend, UpstreamBackend
from loadgen.emulator.quotas import Quotas
from loadgen.emulator.server import MAX_REQUEST_BYTES, Emulator, EmulatorServer
from loadgen.model.partitions import PartitionModel
from loadgen.targets.local import DynamoDBLocal
from tests.emulator import fuzzing
from tests.http_server import QuietHandler, serve

ROOT = Path(__file__).resolve().parents[2]
TARGET = "DynamoDB_20120810."
RSS_LIMIT_MB = 300


# --- helpers ------------------------------------------------------------------------------


class RecordingNull(NullBackend):
    """Answers ``{}`` and remembers which operations reached it."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def call(self, path: str, headers: Mapping[str, str], body: bytes) -> BackendResponse:
        self.seen.append(headers.get("X-Amz-Target", ""))
        return await super().call(path, headers, body)


def post(url: str, operation: str | None, body: bytes | dict[str, Any]) -> fuzzing.Answer:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    (answer,) = fuzzing.send(url, [fuzzing.Case(operation and TARGET + operation, data, "")])
    return answer


def message(answer: fuzzing.Answer) -> str:
    return str(json.loads(answer.body).get("message"))


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for {pid}")


class EmulatorProcess:
    """``loadgen emulator`` in a child process on a free port."""

    def __init__(self, *args: str) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "loadgen.emulator", "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
            env=env,
        )
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().decode().strip()
        assert self.url.startswith("http://127.0.0.1:"), self.url

    @property
    def rss_mb(self) -> float:
        return rss_mb(self.process.pid)

    def alive(self) -> bool:
        return self.process.poll() is None and post(self.url, "ListTables", {}).status == 200

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


@pytest.fixture(scope="module")
def emulator_process() -> Iterator[EmulatorProcess]:
    """One ``loadgen emulator`` for the module's tests of it: each hostile input must leave it
    up and small, and its engine (DynamoDB Local) takes seconds to start."""
    running = EmulatorProcess()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def recording() -> Iterator[tuple[str, RecordingNull]]:
    backend = RecordingNull()
    with EmulatorServer(Emulator(backend, PartitionModel())) as server:
        yield server.endpoint_url, backend


# --- the fuzzed corpus --------------------------------------------------------------------


@pytest.mark.slow
def test_a_fuzzed_corpus_gets_no_5xx_and_the_emulator_stays_small(
    emulator_process: EmulatorProcess,
) -> None:
    cases = fuzzing.corpus(10_000, seed=1)
    assert post(emulator_process.url, "CreateTable", fuzzing.CREATE_TABLE).status == 200
    answers = fuzzing.send(emulator_process.url, cases)
    failed = [
        (c.mutation, c.body[:120], a.body[:200])
        for c, a in zip(cases, answers, strict=True)
        if a.status >= 500
    ]
    assert failed == []
    # Every error is DynamoDB's JSON with an error code botocore can read.
    assert all(a.code for a in answers if a.status != 200)
    broken = sum(c.mutation != "valid" for c in cases)
    assert sum(a.status == 400 for a in answers) > broken // 2
    assert emulator_process.alive()
    assert emulator_process.rss_mb < RSS_LIMIT_MB


@pytest.mark.slow
@pytest.mark.dynamodb_local
def test_the_emulator_answers_malformed_requests_as_dynamodb_local_does(
    dynamodb_local: DynamoDBLocal,
) -> None:
    cases = fuzzing.corpus(3_000, seed=2)
    local = dynamodb_local.endpoint_url
    post(local, "CreateTable", fuzzing.CREATE_TABLE)  # may exist from an earlier test
    with EmulatorServer(Emulator(UpstreamBackend(local), PartitionModel())) as server:
        pairs = fuzzing.send_to_both(local, server.endpoint_url, cases)
    direct, answers = [d for d, _ in pairs], [a for _, a in pairs]
    assert [a.code for a in answers if a.status >= 500] == []
    compared = [
        (c, d, a)
        for c, d, a in zip(cases, direct, answers, strict=True)
        if fuzzing.dynamodb_local_is_the_oracle(c, d)
    ]
    differ = [
        (c.body[:120], d.code, a.code)
        for c, d, a in compared
        if (a.status, a.code) != (400, d.code)
    ]
    assert len(compared) > 500
    assert len(differ) <= len(compared) // 100, differ[:10]


# --- resource exhaustion, one case at a time ----------------------------------------------


@pytest.mark.slow
def test_a_table_of_a_trillion_units_is_refused_and_the_emulator_stays_small(
    emulator_process: EmulatorProcess,
) -> None:
    request = {
        **fuzzing.CREATE_TABLE,
        "BillingMode": "PROVISIONED",
        "ProvisionedThroughput": {"ReadCapacityUnits": 10**12, "WriteCapacityUnits": 10**12},
    }
    answer = post(emulator_process.url, "CreateTable", request)
    assert (answer.status, answer.code) == (400, "LimitExceededException")
    assert "40000" in message(answer)
    assert emulator_process.alive()
    assert emulator_process.rss_mb < RSS_LIMIT_MB


def _table(name: str, read: int, write: int, **extra: Any) -> dict[str, Any]:
    return {
        **fuzzing.CREATE_TABLE,
        "TableName": name,
        "BillingMode": "PROVISIONED",
        "ProvisionedThroughput": {"ReadCapacityUnits": read, "WriteCapacityUnits": write},
        **extra,
    }


def test_quotas_hold_per_table_per_index_and_per_account() -> None:
    emulator = Emulator(MotoBackend(), PartitionModel(), quotas=Quotas(table=100, account=150))
    with EmulatorServer(emulator) as server:
        url = server.endpoint_url
        assert post(url, "CreateTable", _table("quota_a", 100, 100)).status == 200
        over_table = post(url, "CreateTable", _table("quota_b", 101, 1))
        over_account = post(url, "CreateTable", _table("quota_b", 60, 1))
        assert post(url, "CreateTable", _table("quota_b", 50, 50)).status == 200
        raise_a = post(
            url,
            "UpdateTable",
            {
                "TableName": "quota_a",
                "ProvisionedThroughput": {"ReadCapacityUnits": 101, "WriteCapacityUnits": 1},
            },
        )
        index = {
            "IndexName": "by_g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
            "ProvisionedThroughput": {"ReadCapacityUnits": 500, "WriteCapacityUnits": 1},
        }
        over_index = post(
            url,
            "CreateTable",
            _table(
                "quota_c",
                1,
                1,
                AttributeDefinitions=[
                    {"AttributeName": "pk", "AttributeType": "S"},
                    {"AttributeName": "g", "AttributeType": "S"},
                ],
                GlobalSecondaryIndexes=[index],
            ),
        )
        # (moto's tables are shared by the whole process: look at these three only.)
        tables = json.loads(post(url, "ListTables", {"Limit": 100}).body)["TableNames"]
        described = post(url, "DescribeTable", {"TableName": "quota_a"})
    for answer in (over_table, over_account, raise_a, over_index):
        assert (answer.status, answer.code) == (400, "LimitExceededException"), answer.body
    assert "account" in message(over_account) and "by_g" in message(over_index)
    assert {"quota_a", "quota_b"} <= set(tables) and "quota_c" not in tables
    # Nothing refused was changed: quota_a keeps its 100 read units.
    assert json.loads(described.body)["Table"]["ProvisionedThroughput"]["ReadCapacityUnits"] == 100


def test_the_quota_flags_are_checked() -> None:
    # On moto, which starts at once: the engine starts before the flags are checked.
    result = subprocess.run(
        [sys.executable, "-m", "loadgen.emulator", "--engine", "moto", "--port", "0",
         "--account-quota", "0"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "loadgen: error: --account-quota must be a number of units >= 1 (got 0)"
    )


def _item(**extra: Any) -> dict[str, Any]:
    return {"pk": {"S": "k"}, **extra}


def _nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"S": "leaf"}
    for _ in range(levels):
        value = {"L": [value]}
    return value


LIMITS = {
    "item over 400 KB": (
        "PutItem",
        {"TableName": fuzzing.TABLE, "Item": _item(big={"S": "x" * (400 * 1024)})},
        "Item size has exceeded the maximum allowed size",
    ),
    "nested 33 levels": (
        "PutItem",
        {"TableName": fuzzing.TABLE, "Item": _item(deep=_nested(33))},
        "Nesting Levels have exceeded supported limits",
    ),
    "101 keys in a BatchGetItem, over two tables": (
        "BatchGetItem",
        {
            "RequestItems": {
                table: {"Keys": [{"pk": {"S": f"k{i}"}} for i in range(count)]}
                for table, count in ((fuzzing.TABLE, 51), ("other_table", 50))
            }
        },
        "Too many items requested for the BatchGetItem call",
    ),
    "26 writes in a BatchWriteItem": (
        "BatchWriteItem",
        {
            "RequestItems": {
                fuzzing.TABLE: [{"PutRequest": {"Item": {"pk": {"S": f"k{i}"}}}} for i in range(26)]
            }
        },
        "Member must have length less than or equal to 25",
    ),
    "101 actions in a transaction": (
        "TransactWriteItems",
        {
            "TransactItems": [
                {"Put": {"TableName": fuzzing.TABLE, "Item": {"pk": {"S": f"k{i}"}}}}
                for i in range(101)
            ]
        },
        "Member must have length less than or equal to 100",
    ),
    "JSON nested 100,000 deep": ("PutItem", b"[" * 100_000, "Invalid JSON"),
}


@pytest.mark.parametrize("case", LIMITS)
def test_each_limit_is_answered_before_the_backend_sees_the_request(
    recording: tuple[str, RecordingNull], case: str
) -> None:
    url, backend = recording
    operation, body, expected = LIMITS[case]
    answer = post(url, operation, body)
    assert answer.status == 400
    assert answer.code in ("ValidationException", "SerializationException")
    assert expected in message(answer)
    assert backend.seen == []
    assert post(url, "GetItem", {"TableName": fuzzing.TABLE, "Key": _item()}).status == 200


def test_the_item_limit_counts_400_kb_exactly(recording: tuple[str, RecordingNull]) -> None:
    url, backend = recording
    # Names and values count: "pk" + "k" + "big" + the string make 400 KB exactly.
    fits = _item(big={"S": "x" * (400 * 1024 - len("pk") - len("k") - len("big"))})
    assert post(url, "PutItem", {"TableName": fuzzing.TABLE, "Item": fits}).status == 200
    fits["big"]["S"] += "x"
    assert post(url, "PutItem", {"TableName": fuzzing.TABLE, "Item": fits}).status == 400
    assert backend.seen.count(TARGET + "PutItem") == 1


def test_a_body_over_16_mb_is_refused_and_the_next_request_served(
    recording: tuple[str, RecordingNull],
) -> None:
    url, backend = recording
    answer = post(url, "PutItem", b"{" + b" " * MAX_REQUEST_BYTES + b"}")
    assert (answer.status, answer.code) == (413, "SerializationException")
    assert backend.seen == []
    assert post(url, "ListTables", {}).status == 200


def test_botocore_reads_the_validation_errors() -> None:
    # What a user debugging a request sees: the code and DynamoDB's message, no retries.
    with EmulatorServer(Emulator(RecordingNull(), PartitionModel())) as server:
        client = botocore.session.get_session().create_client(
            "dynamodb",
            endpoint_url=server.endpoint_url,
            region_name="us-east-1",
            aws_access_key_id="local",
            aws_secret_access_key="local",
            config=botocore.config.Config(parameter_validation=False),
        )
        with pytest.raises(ClientError) as raised:
            client.scan(TableName=fuzzing.TABLE, Segment=1, TotalSegments=1, Limit=0)
    error = raised.value.response
    assert error["Error"]["Code"] == "ValidationException"
    assert error["Error"]["Message"] == (
        "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: "
        "Member must have value greater than or equal to 1"
    )
    assert error["ResponseMetadata"]["RetryAttempts"] == 0


# --- backend faults -----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get_item() -> dict[str, Any]:
    return {"TableName": fuzzing.TABLE, "Key": _item()}


def test_an_upstream_that_refuses_gives_internal_server_error() -> None:
    backend = UpstreamBackend(f"http://127.0.0.1:{_free_port()}", timeout=5)
    with EmulatorServer(Emulator(backend, PartitionModel())) as server:
        answers = [post(server.endpoint_url, "GetItem", _get_item()) for _ in range(3)]
    assert {(a.status, a.code) for a in answers} == {(500, "InternalServerError")}
    assert "Backend unavailable" in message(answers[0])


class Garbage(QuietHandler):
    """Answers what is not DynamoDB's JSON, a different way each time."""

    answers = (
        (200, b"<html>not dynamodb</html>"),
        (200, b'{"Item": {"pk"'),
        (502, b"Bad Gateway"),
        (404, b""),
    )
    served = itertools.count()

    def do_POST(self) -> None:
        self.body()
        status, data = self.answers[next(self.served) % len(self.answers)]
        self.reply(status, data, {"Content-Type": "text/html"})


def test_an_upstream_that_answers_garbage_gives_internal_server_error() -> None:
    Garbage.served = itertools.count()
    with (
        serve(Garbage) as url,
        EmulatorServer(Emulator(UpstreamBackend(url), PartitionModel())) as server,
    ):
        answers = [post(server.endpoint_url, "ListTables", {}) for _ in Garbage.answers]
        answers.append(post(server.endpoint_url, "GetItem", _get_item()))
    assert [(a.status, a.code) for a in answers] == [(500, "InternalServerError")] * 5


class Hang(QuietHandler):
    """Reads the request and answers nothing until released."""

    release = threading.Event()

    def do_POST(self) -> None:
        self.body()
        self.release.wait(30)


def test_an_upstream_that_hangs_times_out_into_internal_server_error() -> None:
    Hang.release = threading.Event()
    with serve(Hang) as url:
        backend = UpstreamBackend(url, timeout=0.5)
        with EmulatorServer(Emulator(backend, PartitionModel())) as server:
            try:
                answer = post(server.endpoint_url, "ListTables", {})
            finally:
                Hang.release.set()
    assert (answer.status, answer.code) == (500, "InternalServerError")


class Tables(QuietHandler):
    def do_POST(self) -> None:
        self.body()
        self.reply(200, b'{"TableNames":[]}', {"Content-Type": "application/x-amz-json-1.0"})


@contextlib.contextmanager
def _upstream_on(port: int) -> Iterator[None]:
    httpd = ThreadingHTTPServer(("127.0.0.1", port), Tables)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


def test_an_upstream_that_restarts_is_served_again() -> None:
    port = _free_port()
    backend = UpstreamBackend(f"http://127.0.0.1:{port}", timeout=5)
    with EmulatorServer(Emulator(backend, PartitionModel())) as server:
        url = server.endpoint_url
        with _upstream_on(port):
            before = post(url, "ListTables", {})
        down = post(url, "ListTables", {})
        with _upstream_on(port):
            after = post(url, "ListTables", {})
    assert [(a.status, a.code) for a in (before, down, after)] == [
        (200, ""),
        (500, "InternalServerError"),
        (200, ""),
    ]


def test_a_client_sending_a_byte_at_a_time_holds_up_no_one(
    recording: tuple[str, RecordingNull],
) -> None:
    url, backend = recording
    host, port = url.removeprefix("http://").split(":")
    body = json.dumps(_get_item()).encode()
    head = (
        f"POST / HTTP/1.1\r\nHost: {host}\r\nX-Amz-Target: {TARGET}GetItem\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection((host, int(port)), timeout=10) as slow:
        for byte in head[:20]:  # a request begun and not finished
            slow.sendall(bytes([byte]))
        others = [post(url, "GetItem", _get_item()) for _ in range(20)]
        for byte in head[20:] + body:
            slow.sendall(bytes([byte]))
        reply = slow.recv(65536)
    assert [a.status for a in others] == [200] * 20
    assert reply.startswith(b"HTTP/1.1 200")
    assert backend.seen.count(TARGET + "GetItem") == 21


# --- limits on concurrent work ------------------------------------------------------------


class Held(NullBackend):
    """Holds every request until released; says when ``expected`` are held at once."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.held = 0
        self.all_held = threading.Event()
        self.release = threading.Event()

    async def call(self, path: str, headers: Mapping[str, str], body: bytes) -> BackendResponse:
        self.held += 1
        if self.held >= self.expected:
            self.all_held.set()
        while not self.release.is_set():
            await asyncio.sleep(0.01)
        return await super().call(path, headers, body)


def test_requests_beyond_the_in_flight_limit_get_service_unavailable() -> None:
    backend = Held(expected=4)
    emulator = Emulator(backend, PartitionModel(), admission=Admission(max_in_flight=4))
    with EmulatorServer(emulator) as server, ThreadPoolExecutor(4) as pool:
        url = server.endpoint_url
        held = [pool.submit(post, url, "ListTables", {}) for _ in range(4)]
        try:
            assert backend.all_held.wait(30)
            refused = post(url, "ListTables", {})
        finally:
            backend.release.set()
        served = [future.result(timeout=30) for future in held]
        after = post(url, "ListTables", {})
    assert (refused.status, refused.code) == (503, "ServiceUnavailable")
    assert "4 requests in flight (limit 4)" in message(refused)
    assert [a.status for a in served] == [200] * 4
    assert after.status == 200
    assert emulator.admission.refused == 1


def test_bodies_beyond_the_byte_limit_get_service_unavailable_unread() -> None:
    backend = RecordingNull()
    admission = Admission(max_body_bytes=10_000)
    with EmulatorServer(Emulator(backend, PartitionModel(), admission=admission)) as server:
        large = {"TableName": fuzzing.TABLE, "Item": _item(big={"S": "x" * 20_000})}
        refused = post(server.endpoint_url, "PutItem", large)
        served = post(server.endpoint_url, "GetItem", _get_item())
    assert (refused.status, refused.code) == (503, "ServiceUnavailable")
    assert served.status == 200
    assert TARGET + "PutItem" not in backend.seen
