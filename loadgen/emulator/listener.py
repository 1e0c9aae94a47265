"""The emulator's HTTP/1.1 server: an asyncio protocol on httptools' parser.

DynamoDB's protocol needs little of HTTP: a POST with a JSON body, answered with a JSON body.
aiohttp's application server did that at about 80 us of CPU per request on these machines,
this protocol at about 20 (measured with the fast client against two null endpoints, one on
each: `benchmarks/bench_target.py` holds the figures of the whole emulator). Per connection,
requests are answered in the order they came (pipelining), each with its own headers; the
next request is parsed while one is answered.

Served: ``POST`` on any path (DynamoDB), ``GET /metrics`` (Prometheus), ``GET /`` (the
health line DynamoDB answers). Bad input is answered, never raised: a malformed request gets
400 and the connection is closed (431 for a request line and headers over 64 KB); a body over
16 MB gets 413 unread; a request beyond the `Admission` limits gets 503 before its body is
read; a connection idle for 75 s is closed.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import http
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, cast

import httptools
from multidict import CIMultiDict

from loadgen.emulator.admission import Admission
from loadgen.emulator.wire import CORAL, JSON_CONTENT_TYPE, crc32, dumps, error_body
from loadgen.errors import TargetError

__all__ = ["Answer", "Listener", "Request", "json_answer"]

_log = logging.getLogger("loadgen.emulator")
IDLE_SECONDS = 75.0
"""A keep-alive connection with nothing asked for this long is closed (aiohttp's default)."""
_HEAD_BYTES = 64 * 1024
"""Request line and headers beyond this are refused: they are never this large."""
_PIPELINED = 64
"""Requests read ahead on one connection before reading pauses."""
_REASONS = {status.value: status.phrase.encode() for status in http.HTTPStatus}
_NOT_ADMITTED = object()


@dataclass(slots=True)
class Request:
    """One request as read: method, path with its query, headers (names as sent, looked up
    in any case), body."""

    method: str
    path: str
    headers: CIMultiDict[str]
    body: bytes


@dataclass(slots=True)
class Answer:
    """What to send back."""

    status: int
    body: bytes
    headers: dict[str, str]


Handler = Callable[[Request], Awaitable[Answer]]


class Listener:
    """Serves ``handler`` on host:port until closed.

    >>> listener = Listener(handler, Admission(), largest_body=2**24)  # doctest: +SKIP
    >>> port = await listener.start("127.0.0.1", 0)                    # doctest: +SKIP
    """

    def __init__(self, handler: Handler, admission: Admission, *, largest_body: int) -> None:
        self.handler = handler
        self.admission = admission
        self.largest_body = largest_body
        self._server: asyncio.AbstractServer | None = None
        self._connections: set[_Connection] = set()

    async def start(self, host: str, port: int) -> int:
        """Listen; the port bound (0 asks for any free one)."""
        loop = asyncio.get_running_loop()
        try:
            self._server = await loop.create_server(
                lambda: _Connection(self), host, port, reuse_address=True, backlog=1024
            )
        except OSError as exc:
            raise TargetError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        """Stop listening and close every connection."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for connection in list(self._connections):
            connection.close()


class _Connection(asyncio.Protocol):
    """One client connection: parse, queue, answer in order."""

    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        # (request or a ready answer, keep-alive, the admitted body size or _NOT_ADMITTED)
        self.queue: collections.deque[tuple[Request | Answer, bool, Any]] = collections.deque()
        self.worker: asyncio.Task[None] | None = None
        self.idle: asyncio.TimerHandle | None = None
        self.writable = asyncio.Event()
        self.writable.set()
        self._reset()

    def _reset(self) -> None:
        self.url = b""
        self.headers: CIMultiDict[str] = CIMultiDict()
        self.head_bytes = 0
        self.body: list[bytes] = []
        self.body_size = 0
        self.refusal: Answer | None = None
        self.admitted: Any = _NOT_ADMITTED  # the declared size it was admitted with

    # --- the transport ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self.listener._connections.add(self)
        self._wait_idle()

    def connection_lost(self, exc: Exception | None) -> None:
        self.listener._connections.discard(self)
        if self.idle is not None:
            self.idle.cancel()
        # A request being answered runs to its end (as under aiohttp, which does not cancel
        # handlers either): cut short, it could leave the model charged and not settled, or
        # an upstream connection with an answer nobody read. The requests queued behind it
        # are dropped.
        for _, _, admitted in self.queue:
            self._release(admitted)
        self.queue.clear()
        self._release(self.admitted)
        self.admitted = _NOT_ADMITTED
        self.transport = None

    def pause_writing(self) -> None:
        self.writable.clear()

    def resume_writing(self) -> None:
        self.writable.set()

    def data_received(self, data: bytes) -> None:
        if self.idle is not None:
            self.idle.cancel()
            self.idle = None
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(400, "Upgrade is not served here")
        except httptools.HttpParserError as exc:
            if self.head_bytes > _HEAD_BYTES:  # raised in a callback, wrapped by httptools
                self._fail(431, f"Request line and headers over {_HEAD_BYTES} bytes")
            else:
                self._fail(400, f"Malformed HTTP request: {exc}")

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    # --- parser callbacks ------------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._reset()

    def on_url(self, url: bytes) -> None:
        self.url += url
        self._count_head(len(url))

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.add(name.decode("latin-1"), value.decode("latin-1"))
        self._count_head(len(name) + len(value))

    def on_headers_complete(self) -> None:
        method = self.parser.get_method().decode("ascii", "replace")
        if method != "POST":
            return
        declared = self.headers.get("Content-Length", "")
        length = int(declared) if declared.isdigit() else None
        largest = self.listener.largest_body
        if length is not None and length > largest:
            self.refusal = _too_large(largest)
            return
        busy = self.listener.admission.admit(length)
        if busy is not None:
            self.refusal = json_answer(503, busy)
            return
        self.admitted = length
        if self.headers.get("Expect", "").lower() == "100-continue" and self.transport:
            self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def on_body(self, body: bytes) -> None:
        if self.refusal is not None:
            return  # refused: the body is read past, not kept
        self.body_size += len(body)
        if self.body_size > self.listener.largest_body:
            self.refusal = _too_large(self.listener.largest_body)
            self.body.clear()
            return
        self.body.append(body)

    def on_message_complete(self) -> None:
        keep_alive = self.parser.should_keep_alive()
        admitted, self.admitted = self.admitted, _NOT_ADMITTED
        if self.refusal is not None:
            self._release(admitted)  # admitted, then found over 16 MB on the way
            self.queue.append((self.refusal, keep_alive, _NOT_ADMITTED))
        else:
            method = self.parser.get_method().decode("ascii", "replace")
            path = self.url.decode("latin-1")
            request = Request(method, path, self.headers, b"".join(self.body))
            self.queue.append((request, keep_alive, admitted))
        if len(self.queue) >= _PIPELINED and self.transport is not None:
            self.transport.pause_reading()
        if self.worker is None or self.worker.done():
            self.worker = asyncio.get_running_loop().create_task(self._answer_all())

    # --- answering -------------------------------------------------------------------------

    async def _answer_all(self) -> None:
        while self.queue and self.transport is not None:
            asked, keep_alive, admitted = self.queue.popleft()
            try:
                if isinstance(asked, Answer):
                    answer = asked
                else:
                    try:
                        answer = await self.listener.handler(asked)
                    except Exception:  # the handler answers everything; a bug costs one request
                        _log.exception("failed on a request to %s", asked.path)
                        answer = _error(500, "InternalServerError", "Internal server error")
            finally:
                self._release(admitted)
            if self.transport is None:
                return
            self.transport.write(_encode(answer, keep_alive))
            if not keep_alive:
                self.transport.close()
                return
            if len(self.queue) < _PIPELINED // 2:
                with contextlib.suppress(RuntimeError):
                    self.transport.resume_reading()
            if not self.writable.is_set():
                await self.writable.wait()  # the client is not reading: hold further answers
        if not self.queue:
            self._wait_idle()

    def _release(self, admitted: Any) -> None:
        if admitted is not _NOT_ADMITTED:
            self.listener.admission.release(admitted)

    def _fail(self, status: int, message: str) -> None:
        if self.transport is not None:
            self.transport.write(_encode(_error(status, "SerializationException", message), False))
            self.transport.close()

    def _wait_idle(self) -> None:
        if self.transport is not None and self.idle is None:
            loop = asyncio.get_running_loop()
            self.idle = loop.call_later(IDLE_SECONDS, self._idle_out)

    def _idle_out(self) -> None:
        self.idle = None
        if not self.queue and (self.worker is None or self.worker.done()):
            self.close()

    def _count_head(self, size: int) -> None:
        self.head_bytes += size
        if self.head_bytes > _HEAD_BYTES:
            raise httptools.HttpParserError(f"request line and headers over {_HEAD_BYTES} bytes")


def _encode(answer: Answer, keep_alive: bool) -> bytes:
    reason = _REASONS.get(answer.status, b"Unknown")
    lines = [b"HTTP/1.1 %d %s" % (answer.status, reason)]
    for name, value in answer.headers.items():
        lines.append(f"{name}: {value}".encode("latin-1", "replace"))
    lines.append(b"Content-Length: %d" % len(answer.body))
    if not keep_alive:
        lines.append(b"Connection: close")
    lines.append(b"\r\n")
    return b"\r\n".join(lines) + answer.body


def _error(status: int, code: str, message: str) -> Answer:
    return json_answer(status, dumps(error_body(CORAL + code, message)))


def _too_large(largest: int) -> Answer:
    return _error(413, "SerializationException", f"Request body larger than {largest} bytes")


def json_answer(status: int, body: bytes, headers: dict[str, str] | None = None) -> Answer:
    """An answer with DynamoDB's headers: its content type and request id unless ``headers``
    (a backend's) carry them, and always the CRC32 of this body."""
    merged = dict(headers or {})
    present = {name.lower() for name in merged}
    if "content-type" not in present:
        merged["Content-Type"] = JSON_CONTENT_TYPE
    if "x-amzn-requestid" not in present:
        merged["x-amzn-RequestId"] = uuid.uuid4().hex
    for name in [name for name in merged if name.lower() == "x-amz-crc32"]:
        del merged[name]
    merged["x-amz-crc32"] = crc32(body)
    return Answer(status, body, merged)
