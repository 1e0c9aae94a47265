"""Where the emulator sends the requests it admits: moto in this process, an upstream server
over HTTP, or nothing at all.

Every backend takes a DynamoDB request (path, headers, body) and gives back what the server
answered, or raises `BackendUnavailable` when no answer came. Called only from the emulator's
event loop.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
import urllib.parse
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from loadgen.emulator.faults import backend_raised
from loadgen.emulator.moto_paths import (
    blob_text,
    fast_query,
    fast_update,
    index_items,
    keep_index_maps,
    note_write,
    undone_by_item,
)
from loadgen.emulator.upstream import ConnectionPool, UpstreamError
from loadgen.emulator.validation import integers_truncated
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
# Requests moto_paths answers on moto's tables when it can be sure of moto's answer.
_SHORTCUTS = {"UpdateItem": fast_update, "Query": fast_query}


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
    """moto's DynamoDB, called below its HTTP layer in this process, on the event loop.

    Each request goes straight to the method of moto's ``DynamoHandler`` that serves it, with
    the request's JSON as its parameters, and the method's result is written as JSON here.
    moto's own HTTP path (Flask, werkzeug, its botocore parameter parser and serializer) cost
    over ten times the method itself: about 1 ms against 70-90 us for GetItem and PutItem
    here. moto's errors still go through moto's own serializer, so they read as moto writes
    them.

    The requests a load test sends most take shorter paths on moto's own tables
    (`loadgen.emulator.moto_paths`, off with ``shortcuts=False``): a plain UpdateItem, a
    base-table Query in sort-key order kept between queries, an index Query over the items
    filed under its key, and a TransactWriteItems that saves only the items it names. Each
    answers exactly as moto's own path would, or leaves the request to it (tests hold the two
    side by side).

    On the loop, not a worker thread: moto's backend is not written for concurrent callers,
    and a thread only added a hand-over per request without running anything alongside.
    """

    name = "moto (in-process)"
    account = _ACCOUNTS["moto"]

    def __init__(self, *, shortcuts: bool = True) -> None:
        self.shortcuts = shortcuts
        """Answer the commonest requests on moto's tables directly (`moto_paths`); False
        sends every request down moto's own path (what the shortcuts are tested against)."""
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="moto")
        self._handler: type[Any] | None = None
        self._operations: dict[str, tuple[str, frozenset[str]]] = {}
        self._moto: tuple[type[Exception], type[Any], type[Any]] | None = None
        self._backends: Any = None

    async def start(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._pool, self._load)

    def _load(self) -> None:
        from moto.core.exceptions import ServiceException
        from moto.core.responses import ActionResult
        from moto.dynamodb.models import dynamodb_backends
        from moto.dynamodb.responses import DynamoHandler
        from werkzeug.exceptions import HTTPException

        class Handler(DynamoHandler):
            """moto's handler below its HTTP layer: moto names the operation and the protocol
            it writes errors in from the werkzeug request that layer makes (from 5.2.6 it
            asks nothing else), which a request sent straight to the method never has; here
            they are the X-Amz-Target's operation and DynamoDB's own protocol (awsJson)."""

            def _get_action(self) -> str:
                return str(self.headers["X-Amz-Target"]).rpartition(".")[2]

            def determine_response_protocol(self, service_model: Any) -> str:
                return str(service_model.protocol)

        _narrow_queries()
        self._handler = Handler
        # Imported once here, not on every request.
        self._moto = (ServiceException, ActionResult, HTTPException)
        self._backends = dynamodb_backends

    async def call(self, path: str, headers: Mapping[str, str], body: bytes) -> BackendResponse:
        # On the event loop itself: a worker thread only added a hand-over per request (and
        # the interpreter lock's switching) without running anything alongside.
        return self._call(headers, body)

    def _call(self, headers: Mapping[str, str], body: bytes) -> BackendResponse:
        assert self._handler is not None, "MotoBackend.start() was not awaited"
        try:
            return self._dispatch(headers, body)
        except Exception as exc:  # moto raises on some requests it cannot handle
            _log.warning("moto failed on a request", exc_info=True)
            try:
                request = json.loads(body)
            except (ValueError, RecursionError):
                request = None
            status, body = backend_raised(exc, request)
            return BackendResponse(status, {"Content-Type": JSON_CONTENT_TYPE}, body)

    def _dispatch(self, headers: Mapping[str, str], body: bytes) -> BackendResponse:
        assert self._handler is not None
        handler = self._handler()
        target = next((v for k, v in headers.items() if k.lower() == "x-amz-target"), "")
        handler.headers = {"X-Amz-Target": target, "Content-Type": JSON_CONTENT_TYPE}
        handler.body = handler.params = _read_body(target, body)
        handler.querystring, handler.uri_match, handler.response_headers = {}, {}, {}
        handler.region = _region_of(headers)
        handler.partition = "aws"
        handler.current_account = self.account
        operation = target.rpartition(".")[2]
        if not (self.shortcuts and isinstance(handler.body, dict)):
            return self._moto_path(handler, operation, target)
        backend = self._backends[self.account][handler.region]
        try:
            shortcut = _SHORTCUTS.get(operation)
            answer = shortcut(backend, handler.body) if shortcut is not None else None
            if answer is not None:
                return _moto_answer(200, {}, answer)
            if operation == "Query" and "IndexName" in handler.body:
                keep_index_maps(backend, handler.body)
            if operation == "TransactWriteItems":
                with undone_by_item(backend, handler.body) as put_back:
                    answered = self._moto_path(handler, operation, target)
                    if answered.status != 200:  # cancelled: moto undid nothing, so we do
                        put_back()
                return answered
            return self._moto_path(handler, operation, target)
        finally:
            note_write(backend, operation, handler.body)

    def _moto_path(self, handler: Any, operation: str, target: str) -> BackendResponse:
        """moto's own answer: the handler's method, its result written as moto writes it."""
        assert self._moto is not None
        ServiceException, ActionResult, HTTPException = self._moto
        method_name, members = self._operation(operation)
        method = getattr(handler, method_name, None)
        if method is None or operation in ("", "Dispatch"):
            raise NotImplementedError(f"The {target} action has not been implemented")
        try:
            result = method()
        except ServiceException as exc:
            return _moto_answer(*handler.serialized(ActionResult(exc)))
        except HTTPException as exc:  # moto's older errors carry their JSON as description
            return _moto_answer(exc.code or 500, {}, exc.description or "")
        if isinstance(result, ActionResult):
            answer = result.result
            if answer is None:  # an operation without output (TagResource): as moto writes it
                return _moto_answer(*handler.serialized(result))
            if isinstance(answer, dict):
                # moto's serializer writes only the members of the operation's output shape
                # (its results carry more, such as ConsumedCapacityUnits): so do we.
                answer = {k: v for k, v in answer.items() if k in members}
            try:
                return _moto_answer(200, {}, json.dumps(answer, default=blob_text))
            except TypeError:  # a value only moto's serializer knows how to write
                return _moto_answer(*handler.serialized(result))
        if isinstance(result, str):
            return _moto_answer(200, {}, result)
        body_out, answer_headers = result[-1], result[-2]
        return _moto_answer(int(answer_headers.get("status", 200)), answer_headers, body_out)

    async def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _operation(self, operation: str) -> tuple[str, frozenset[str]]:
        """The handler method's name and the output shape's members, worked out once."""
        known = self._operations.get(operation)
        if known is None:
            from botocore.model import OperationNotFoundError
            from moto.core.utils import camelcase_to_underscores, get_service_model

            try:
                shape = get_service_model("dynamodb").operation_model(operation).output_shape
            except OperationNotFoundError:
                shape = None
            members = frozenset(shape.members) if shape is not None else frozenset()
            known = self._operations[operation] = (camelcase_to_underscores(operation), members)
        return known


def _read_body(target: str, body: bytes) -> Any:
    """The request as moto takes it: a fraction in an integer member (``"Limit": 1.5``)
    truncated, as DynamoDB reads it, where moto would raise on it."""
    fractions: list[float] = []

    def read_float(text: str) -> float:
        fractions.append(float(text))
        return fractions[-1]

    request = json.loads(body, parse_float=read_float) if body else {}
    if fractions and isinstance(request, dict):
        request = integers_truncated(target.rpartition(".")[2], request)
    return request


def _moto_answer(status: int, headers: Mapping[str, Any], body: str | bytes) -> BackendResponse:
    data = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    kept = {k: str(v) for k, v in headers.items() if k.lower() not in ("status", "content-length")}
    kept.setdefault("Content-Type", JSON_CONTENT_TYPE)
    return BackendResponse(status, kept, data)


_CREDENTIAL_REGION = re.compile(r"Credential=[^/,\s]+/\d{8}/([^/,\s]+)/")


def _region_of(headers: Mapping[str, str]) -> str:
    """The region the request was signed for, as moto keeps one backend per region."""
    authorization = next((v for k, v in headers.items() if k.lower() == "authorization"), "")
    match = _CREDENTIAL_REGION.search(authorization)
    return match.group(1) if match else "us-east-1"


def _narrow_queries() -> None:
    """Make moto's Query read the items of its partition-key value only.

    moto's ``Table.query`` starts from ``self.all_items()``, every item of the table, and
    keeps those of the queried partition-key value. Given just that value's items it gives
    the same answer, so a Query costs what its partition holds, as on DynamoDB: on the base
    table they are the partition's; on an index, the items `moto_paths` has filed under the
    value (where it keeps files for the table; else moto reads the whole table).
    """
    from moto.dynamodb.models.table import Table

    original = Table.query
    if getattr(original, "_narrowed", False):
        return

    @functools.wraps(original)
    def query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = kwargs.get("index_name", args[6] if len(args) > 6 else None)
        if "all_items" in vars(self):
            return original(self, hash_key, *args, **kwargs)
        if index_name:
            conditions: list[tuple[str, Any]] = kwargs.get("hash_key_conditions") or []
            indexed = None
            if len(conditions) == 1:
                indexed = index_items(self, index_name, conditions[0][1])
            if indexed is None:
                return original(self, hash_key, *args, **kwargs)
            partition = indexed
        elif hash_key is None:
            return original(self, hash_key, *args, **kwargs)
        else:
            held = self.items.get(hash_key)
            if held is None:
                partition = []
            elif self.range_key_attr:
                partition = list(held.values())
            else:
                partition = [held]
        self.all_items = lambda: partition  # shadows the method for this call only
        try:
            return original(self, hash_key, *args, **kwargs)
        finally:
            del self.all_items

    query._narrowed = True  # type: ignore[attr-defined]
    Table.query = query  # type: ignore[method-assign]


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
        self._pool: ConnectionPool | None = None

    async def start(self) -> None:
        # Nothing is added to what the client sent but Host (when it sent none) and the
        # body's length: a capture of what went upstream shows the client's request.
        self._pool = ConnectionPool(self.url, timeout=self.timeout, connections=self._connections)

    async def call(self, path: str, headers: Mapping[str, str], body: bytes) -> BackendResponse:
        assert self._pool is not None, "UpstreamBackend.start() was not awaited"
        try:
            status, answer_headers, data = await self._pool.post(path, headers, body)
        except UpstreamError as exc:
            raise BackendUnavailable(f"{self.url}: {exc}") from exc
        return BackendResponse(status, answer_headers, data)

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()


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
