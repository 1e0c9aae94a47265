"""A lean HTTP/1.1 client for the emulator's upstream: pooled keep-alive connections.

The emulator sends one kind of request upstream, a POST with a small body, and waits for one
answer on the same connection. aiohttp's client did that at about a fifth of the emulator's
CPU per request (request and response objects, cookie and redirect handling, headers and
body written apart). Here a request is one buffer written to an idle connection and the
answer is read by httptools' parser (the C parser of llhttp, as Node's) straight into a
`BackendResponse`.

Connections are kept open and reused; at most ``connections`` are open at once and a request
waits for one. A connection the upstream closed while idle is noticed on use: a request that
got no byte back on a reused connection is sent once more on a new one (the upstream had
closed it, so it never saw the request).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import urllib.parse
import zlib
from collections.abc import Mapping
from typing import cast

import httptools

__all__ = ["ConnectionPool", "UpstreamError"]


class UpstreamError(Exception):
    """No usable answer: refused, timed out, closed, or not HTTP."""


class _Answer:
    """What the parser reads of one response."""

    __slots__ = ("body", "headers", "status")

    def __init__(self) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body: list[bytes] = []


class _Connection(asyncio.Protocol):
    """One keep-alive connection carrying one request at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.reused = False
        self.received = False
        self._parser = httptools.HttpResponseParser(self)
        self._answer = _Answer()
        self._waiter: asyncio.Future[_Answer] | None = None

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        self.received = True
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(UpstreamError(f"answered something that is not HTTP ({exc})"))
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._fail(UpstreamError(f"closed the connection ({exc or 'no answer'})"))

    # httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        self._answer.headers[name.decode("latin-1")] = value.decode("latin-1")

    def on_body(self, body: bytes) -> None:
        self._answer.body.append(body)

    def on_message_complete(self) -> None:
        answer, self._answer = self._answer, _Answer()
        answer.status = self._parser.get_status_code()
        if not self._parser.should_keep_alive():
            self.close()
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(answer)

    # use
    def send(self, request: bytes) -> asyncio.Future[_Answer]:
        assert self.transport is not None
        self.received = False
        self._waiter = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return self._waiter

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    def _fail(self, error: UpstreamError) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(error)


class ConnectionPool:
    """Keep-alive connections to one ``http://host:port`` server.

    >>> pool = ConnectionPool("http://127.0.0.1:8001", timeout=30.0)  # doctest: +SKIP
    >>> status, headers, body = await pool.post("/", {"X-Amz-Target": ...}, b"{}")
    """

    def __init__(self, url: str, *, timeout: float, connections: int = 100) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"upstream must look like http://host:port (got {url!r})")
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self._ssl = ssl.create_default_context() if parts.scheme == "https" else None
        self.timeout = timeout
        self._netloc = parts.netloc.encode("latin-1")
        self._idle: list[_Connection] = []
        self._open: set[_Connection] = set()
        self._slots = asyncio.Semaphore(connections)

    async def post(
        self, path: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        """Send a POST; its status, headers and body. Raises `UpstreamError`."""
        request = self._request(path, headers, body)
        async with self._slots:
            for _attempt in range(2):
                connection = await self._connection()
                try:
                    answer = await asyncio.wait_for(connection.send(request), self.timeout)
                except TimeoutError:
                    self._discard(connection)
                    raise UpstreamError(f"no answer within {self.timeout:g} s") from None
                except UpstreamError:
                    self._discard(connection)
                    if connection.reused and not connection.received:
                        continue  # closed while idle: the upstream never saw the request
                    raise
                except BaseException:  # cancelled: the connection's state is unknown
                    self._discard(connection)
                    raise
                if connection.closed:
                    self._discard(connection)
                else:
                    connection.reused = True
                    self._idle.append(connection)
                return answer.status, answer.headers, _decoded(answer)
        raise UpstreamError("closed the connection twice before answering")

    async def close(self) -> None:
        for connection in list(self._open):
            connection.close()
        self._open.clear()
        self._idle.clear()

    async def _connection(self) -> _Connection:
        while self._idle:
            connection = self._idle.pop()
            if not connection.closed:
                return connection
            self._open.discard(connection)
        loop = asyncio.get_running_loop()
        try:
            _, connection = await asyncio.wait_for(
                loop.create_connection(_Connection, self.host, self.port, ssl=self._ssl),
                self.timeout,
            )
        except TimeoutError:
            raise UpstreamError(f"no connection within {self.timeout:g} s") from None
        except OSError as exc:
            raise UpstreamError(exc.strerror or str(exc)) from None
        self._open.add(connection)
        return connection

    def _discard(self, connection: _Connection) -> None:
        connection.close()
        self._open.discard(connection)
        with contextlib.suppress(ValueError):
            self._idle.remove(connection)

    def _request(self, path: str, headers: Mapping[str, str], body: bytes) -> bytes:
        lines = [b"POST ", _encode(path), b" HTTP/1.1\r\n"]
        has_host = False
        for name, value in headers.items():
            if name.lower() == "host":
                has_host = True
            lines += [_encode(name), b": ", _encode(value), b"\r\n"]
        if not has_host:
            lines += [b"Host: ", self._netloc, b"\r\n"]
        lines += [b"Content-Length: ", str(len(body)).encode(), b"\r\n\r\n", body]
        return b"".join(lines)


def _encode(text: str) -> bytes:
    # The server decoded what the client sent as UTF-8, undecodable bytes escaped: undo it.
    return text.encode("utf-8", "surrogateescape")


def _decoded(answer: _Answer) -> bytes:
    """The body, inflated where the upstream compressed it (as a client's Accept-Encoding
    may ask): the emulator reads and rewrites answers as JSON."""
    body = b"".join(answer.body)
    encoding = next((v for k, v in answer.headers.items() if k.lower() == "content-encoding"), "")
    if encoding.strip().lower() in ("gzip", "deflate"):
        try:
            body = zlib.decompress(body, wbits=47)  # 47: gzip or zlib header, detected
        except zlib.error as exc:
            raise UpstreamError(f"answered a body that does not inflate ({exc})") from None
    return body
