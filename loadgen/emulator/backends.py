"""Where the emulator sends the requests it admits: moto in this process, an upstream server
over HTTP, or nothing at all.

Every backend takes a DynamoDB request (path, headers, body) and gives back what the server
answered, or raises `BackendUnavailable` when no answer came. Called only from the emulator's
event loop.
"""

from __future__ import annotations

import asyncio
import io
import logging
import sys
import urllib.parse
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from aiohttp import ClientError, ClientSession, ClientTimeout, TCPConnector

from loadgen.emulator.faults import backend_raised
from loadgen.emulator.wire import JSON_CONTENT_TYPE
from loadgen.errors import ConfigError

__all__ = [
    "Backend",
    "BackendResponse",
    "BackendUnavailable",
    "MotoBackend",
    "NullBackend",
    "UpstreamBackend",
]

_log = logging.getLogger("loadgen.emulator")  # one log for the emulator, whichever module writes
_ACCOUNTS = {"moto": "123456789012", "other": "000000000000"}  # what each backend puts in ARNs


@dataclass(frozen=True, slots=True)
class BackendResponse:
    """What a backend answered."""

    status: int
    headers: Mapping[str, str]
    body: bytes


class BackendUnavailable(Exception):
    """The backend could not be reached or did not answer in time."""


class Backend(Protocol):
    """Where admitted requests go. Called only from the emulator's event loop."""

    name: str
    """What to call it in the startup line."""
    account: str
    """The account id the backend puts in table ARNs."""

    async def start(self) -> None: ...

    async def call(self, path: str, headers: Mapping[str, str], body: bytes) -> BackendResponse:
        """Send one DynamoDB request; raise `BackendUnavailable` when there is no answer."""
        ...

    async def close(self) -> None: ...


class MotoBackend:
    """moto's DynamoDB, as a WSGI application called in this process on one worker thread.

    One thread, because moto's backend is not written for concurrent callers, and a second
    thread would only contend for the same interpreter lock.
    """

    name = "moto (in-process)"
    account = _ACCOUNTS["moto"]

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="moto")
        self._app: Callable[..., Any] | None = None

    async def start(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._pool, self._load)

    def _load(self) -> None:
        from moto.moto_server.werkzeug_app import create_backend_app

        self._app = create_backend_app("dynamodb")

    async def call(self, path: str, headers: Mapping[str, str], body: bytes) -> BackendResponse:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._call, path, headers, body)

    def _call(self, path: str, headers: Mapping[str, str], body: bytes) -> BackendResponse:
        assert self._app is not None, "MotoBackend.start() was not awaited"
        environ: dict[str, Any] = {
            "REQUEST_METHOD": "POST",
            "PATH_INFO": path,
            "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(body),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": False,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
            "CONTENT_LENGTH": str(len(body)),
        }
        for name, value in headers.items():
            key = name.upper().replace("-", "_")
            if key == "CONTENT_TYPE":
                environ[key] = value
            elif key != "CONTENT_LENGTH":
                environ["HTTP_" + key] = value
        answer: list[Any] = []

        def start_response(status: str, response_headers: list[tuple[str, str]], *_: Any) -> None:
            answer[:] = [int(status.split()[0]), dict(response_headers)]

        try:
            chunks = self._app(environ, start_response)
            try:
                data = b"".join(chunks)
            finally:
                if hasattr(chunks, "close"):
                    chunks.close()
        except Exception as exc:  # moto raises on some requests it cannot parse
            _log.warning("moto failed on a request", exc_info=True)
            status, body = backend_raised(exc)
            return BackendResponse(status, {"Content-Type": JSON_CONTENT_TYPE}, body)
        return BackendResponse(answer[0], answer[1], data)

    async def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


class UpstreamBackend:
    """Any DynamoDB-compatible server over HTTP: DynamoDB Local, LocalStack, another emulator.

    The body goes on byte for byte with the client's headers, Host included, so a SigV4
    signature stays valid for a server that checks it (a partially throttled batch is the
    exception: its forwarded part is a new body).
    """

    account = _ACCOUNTS["other"]

    def __init__(self, url: str, *, timeout: float = 30.0, connections: int = 100) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"--upstream must look like http://host:port (got {url!r})")
        if not timeout > 0:
            raise ConfigError(f"upstream timeout must be > 0 seconds (got {timeout!r})")
        self.url = url.rstrip("/")
        self.name = f"upstream {self.url}"
        self.timeout = timeout
        self._connections = connections
        self._session: ClientSession | None = None

    async def start(self) -> None:
        self._session = ClientSession(
            connector=TCPConnector(limit=self._connections),
            timeout=ClientTimeout(total=self.timeout),
            # Add nothing the client did not send: extra headers are harmless, but a
            # client-side default would be a surprise in a capture of what went upstream.
            skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
            trust_env=False,
        )

    async def call(self, path: str, headers: Mapping[str, str], body: bytes) -> BackendResponse:
        assert self._session is not None, "UpstreamBackend.start() was not awaited"
        try:
            async with self._session.post(self.url + path, data=body, headers=headers) as reply:
                return BackendResponse(reply.status, dict(reply.headers), await reply.read())
        except (ClientError, TimeoutError, OSError) as exc:
            raise BackendUnavailable(f"{self.url}: {exc or type(exc).__name__}") from exc

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


class NullBackend:
    """Answers ``{}`` to everything at once: measures what the emulator itself costs."""

    name = "null (answers {})"
    account = _ACCOUNTS["other"]

    async def start(self) -> None:
        pass

    async def call(self, path: str, headers: Mapping[str, str], body: bytes) -> BackendResponse:
        return BackendResponse(200, {"Content-Type": JSON_CONTENT_TYPE}, b"{}")

    async def close(self) -> None:
        pass
