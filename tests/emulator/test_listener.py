"""The emulator's HTTP server, byte for byte on a socket: what clients and proxies send."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator, Mapping

import pytest

from loadgen.emulator.backends import BackendResponse, NullBackend
from loadgen.emulator.server import Emulator, EmulatorServer
from loadgen.model.partitions import PartitionModel

TARGET = "DynamoDB_20120810."


@pytest.fixture
def address() -> Iterator[tuple[str, int]]:
    with EmulatorServer(Emulator(NullBackend(), PartitionModel())) as server:
        yield server.host, server.port


def request(operation: str, body: bytes, *extra: str) -> bytes:
    head = [
        "POST / HTTP/1.1",
        "Host: localhost",
        f"X-Amz-Target: {TARGET}{operation}",
        f"Content-Length: {len(body)}",
        *extra,
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def read_answers(connection: socket.socket, count: int) -> list[tuple[int, dict[str, str], bytes]]:
    """Read ``count`` answers (each with a Content-Length) from the socket."""
    data, answers = b"", []
    while len(answers) < count:
        while b"\r\n\r\n" not in data:
            chunk = connection.recv(65536)
            if not chunk:
                return answers
            data += chunk
        head, _, data = data.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
        length = int(headers.get("content-length", "0"))
        while len(data) < length:
            data += connection.recv(65536)
        answers.append((int(status_line.split()[1]), headers, data[:length]))
        data = data[length:]
    return answers


def test_pipelined_requests_are_answered_in_order(address: tuple[str, int]) -> None:
    empty = json.dumps({}).encode()
    bad = b"{not json"
    with socket.create_connection(address, timeout=10) as connection:
        connection.sendall(request("ListTables", empty) + request("ListTables", bad) * 2)
        answers = read_answers(connection, 3)
    assert [status for status, _, _ in answers] == [200, 400, 400]
    assert all(h["x-amz-crc32"] and h["x-amzn-requestid"] for _, h, _ in answers)
    assert b"SerializationException" in answers[1][2]


def test_a_chunked_body_and_expect_continue_are_served(address: tuple[str, int]) -> None:
    body = json.dumps({}).encode()
    chunked = (
        f"POST / HTTP/1.1\r\nHost: localhost\r\nX-Amz-Target: {TARGET}ListTables\r\n"
        "Transfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n"
    ).encode() + b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    with socket.create_connection(address, timeout=10) as connection:
        connection.sendall(chunked)
        continued, answered = read_answers(connection, 2)
    assert continued[0] == 100
    assert answered[0] == 200


def test_garbage_gets_400_and_the_connection_is_closed(address: tuple[str, int]) -> None:
    with socket.create_connection(address, timeout=10) as connection:
        connection.sendall(b"\x16\x03\x01 this is not HTTP\r\n\r\n")
        ((status, headers, body),) = read_answers(connection, 1)
        assert connection.recv(1) == b""  # closed
    assert status == 400
    assert headers["connection"] == "close"
    assert json.loads(body)["__type"].endswith("SerializationException")


def test_connection_close_is_honoured(address: tuple[str, int]) -> None:
    with socket.create_connection(address, timeout=10) as connection:
        connection.sendall(request("ListTables", b"{}", "Connection: close"))
        ((status, headers, _),) = read_answers(connection, 1)
        assert connection.recv(1) == b""
    assert (status, headers["connection"]) == (200, "close")


def test_headers_beyond_64_kb_are_refused(address: tuple[str, int]) -> None:
    with socket.create_connection(address, timeout=10) as connection:
        connection.sendall(request("ListTables", b"{}", "X-Padding: " + "p" * 70_000))
        ((status, headers, _),) = read_answers(connection, 1)
    assert status == 431  # Request Header Fields Too Large: not a request to send again
    assert headers["connection"] == "close"


@pytest.mark.parametrize(
    ("method", "path", "status", "says"),
    [
        ("GET", "/", 200, b"healthy: dynamodb."),
        ("GET", "/metrics", 200, b"# HELP"),
        ("GET", "/metrics?x=1", 200, b"# HELP"),
        ("GET", "/nowhere", 404, b"Not Found"),
        ("PUT", "/", 405, b"Method Not Allowed"),
    ],
)
def test_plain_http(
    address: tuple[str, int], method: str, path: str, status: int, says: bytes
) -> None:
    with socket.create_connection(address, timeout=10) as connection:
        connection.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        ((answered, _, body),) = read_answers(connection, 1)
    assert answered == status
    assert says in body


class Slow(NullBackend):
    """Answers after 0.3 s and counts the answers it finished."""

    def __init__(self) -> None:
        self.finished = 0

    async def call(self, path: str, headers: Mapping[str, str], body: bytes) -> BackendResponse:
        await asyncio.sleep(0.3)
        self.finished += 1
        return await super().call(path, headers, body)


def test_a_request_whose_client_left_is_carried_to_its_end() -> None:
    backend = Slow()
    with EmulatorServer(Emulator(backend, PartitionModel())) as server:
        with socket.create_connection((server.host, server.port), timeout=10) as connection:
            connection.sendall(request("ListTables", b"{}"))
            time.sleep(0.1)  # the request is with the backend; the client goes
        time.sleep(0.5)
        assert backend.finished == 1  # not cut short half way
        with socket.create_connection((server.host, server.port), timeout=10) as connection:
            connection.sendall(request("ListTables", b"{}"))
            ((status, _, _),) = read_answers(connection, 1)
    assert status == 200
