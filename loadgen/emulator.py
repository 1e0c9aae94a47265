"""A DynamoDB endpoint that throttles like a partitioned table: ``loadgen emulator``.

Local engines never throttle. The emulator sits in front of one (moto in this process by
default, or any DynamoDB-compatible server with ``--upstream``), prices every data request by
DynamoDB's capacity rules (`loadgen.capacity`), asks the partition model
(`loadgen.partitions`) to admit it, and either answers with DynamoDB's own throttling error
or forwards the request and returns the backend's answer with the model's ConsumedCapacity.
Any SDK points at it unchanged:

    python -m loadgen.emulator --port 8000 --scale 0.1
    aws dynamodb list-tables --endpoint-url http://127.0.0.1:8000

The first line it prints on stdout is the URL it listens on; ``/metrics`` serves the model's
state to Prometheus.

Server stack, measured on these 2-core machines with an aiohttp client in another process
posting small DynamoDB bodies: an aiohttp server answering ``{}`` held 10,400 requests/s
where the standard library's threading server held 590 (1,930 against 580 while other jobs
loaded the machine; gevent's pywsgi, per the project's facts file, about 350). Backend: moto's
WSGI application called in this process on one worker thread held 700 PutItem or GetItem
requests/s at a 2.1 ms sequential median, where forwarding over HTTP to a moto server child
process held 400-470/s at 5.1 ms: the extra HTTP hop costs more than the second core gains.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import io
import json
import logging
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, Protocol, Self

from aiohttp import ClientError, ClientSession, ClientTimeout, TCPConnector, web
from multidict import CIMultiDict
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from loadgen import targets
from loadgen.capacity import OperationCost, consumed_capacity_response, cost_of
from loadgen.errors import ConfigError, HarnessError, TargetError
from loadgen.partitions import PartitionModel
from loadgen.schema import TableSchema
from loadgen.throttling import Throttle
from loadgen.wire import (
    CORAL,
    DYNAMODB,
    JSON_CONTENT_TYPE,
    MODELED_OPERATIONS,
    ItemShadow,
    WireError,
    apply_update,
    batch_entries,
    batch_select,
    crc32,
    dumps,
    error_body,
    error_code,
    merge_unprocessed,
    operation_of,
    primary_key,
    tables_of,
    transaction_canceled,
)

__all__ = [
    "DEFAULT_SCALE",
    "Backend",
    "BackendResponse",
    "BackendUnavailable",
    "EmbeddedEmulator",
    "Emulator",
    "EmulatorServer",
    "ModelCollector",
    "MotoBackend",
    "NullBackend",
    "UpstreamBackend",
    "main",
]

DEFAULT_SCALE = 0.1
"""Default ``--scale``: partitions serve 300 read and 100 write units/s, a tenth of AWS's.

The embedded engine answers a few hundred requests a second here. At 0.1 one hot
partition-key value is held to 100 writes/s, well under that, while an on-demand table's
warm throughput (4,000 write units/s, so 400 scaled, over 8 partitions) takes the same load
spread over many keys without a throttle.
"""
DEFAULT_SHADOW_ITEMS = 100_000
"""Items the write-pricing shadow keeps (60 MB for items of 260 bytes)."""
MAX_REQUEST_BYTES = 16 * 1024 * 1024
"""DynamoDB's largest request (a BatchWriteItem of 16 MB), with room for the JSON."""

_log = logging.getLogger("loadgen.emulator")
_METRIC = "partition_heat_emulator"
_ACCOUNTS = {"moto": "123456789012", "other": "000000000000"}  # what each backend puts in ARNs
# Hop-by-hop headers, and those whose value a rewritten body invalidates.
_REQUEST_DROP = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "content-length"}
)
_RESPONSE_DROP = _REQUEST_DROP | {"content-encoding", "x-amz-crc32", "date", "server"}
_READ_PROJECTIONS = ("ProjectionExpression", "AttributesToGet")
_INTERNAL_MESSAGE = "Internal server error"


# --- backends -----------------------------------------------------------------------------


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
        except Exception:  # moto raises on requests it cannot parse: answer as a 500 does
            _log.exception("moto failed on a request")
            return BackendResponse(500, {}, dumps(_internal_error()))
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


def _internal_error(message: str = _INTERNAL_MESSAGE) -> dict[str, Any]:
    return error_body(DYNAMODB + "InternalServerError", message)


# --- the emulator -------------------------------------------------------------------------


@dataclass
class _Request:
    """One client request, parsed."""

    operation: str
    payload: dict[str, Any]
    body: bytes
    path: str
    headers: dict[str, str]

    @property
    def capacity_mode(self) -> str | None:
        mode = self.payload.get("ReturnConsumedCapacity")
        return mode if isinstance(mode, str) else None


@dataclass
class _Reply:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    throttled: bool = False


class Emulator:
    """The request pipeline: parse, price, admit, forward, settle, answer.

    Build one with a backend and a `PartitionModel`, then serve `app()` with aiohttp, or let
    `EmulatorServer` run it on a thread (tests), or `main` (the command line):

        >>> emulator = Emulator(MotoBackend(), PartitionModel(scale=0.1))  # doctest: +SKIP
        >>> with EmulatorServer(emulator) as server:                        # doctest: +SKIP
        ...     boto3.client("dynamodb", endpoint_url=server.endpoint_url)

    Everything runs on the server's event loop, so the model (not thread-safe) is only ever
    touched from one thread.
    """

    def __init__(
        self,
        backend: Backend,
        model: PartitionModel,
        *,
        shadow_items: int = DEFAULT_SHADOW_ITEMS,
    ) -> None:
        self.backend = backend
        self.model = model
        self.schemas: dict[str, TableSchema] = {}
        """Tables the model knows, by name."""
        self.shadow = ItemShadow(shadow_items)
        self.requests: Counter[tuple[str, str]] = Counter()
        """Requests answered, by (operation, outcome): forwarded, throttled or rejected."""
        self.registry = CollectorRegistry(auto_describe=False)
        """The registry ``/metrics`` serves (one per emulator, so several can share a process)."""
        self.registry.register(ModelCollector(self))
        self._discovering: dict[str, asyncio.Future[TableSchema | None]] = {}

    def app(self) -> web.Application:
        """The aiohttp application: ``POST /`` for DynamoDB, ``GET /metrics``."""
        app = web.Application(client_max_size=MAX_REQUEST_BYTES)
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/", self._health)
        app.router.add_post("/{path:.*}", self.handle)

        async def started(_: web.Application) -> None:
            await self.backend.start()

        async def stopped(_: web.Application) -> None:
            await self.backend.close()

        app.on_startup.append(started)
        app.on_cleanup.append(stopped)
        return app

    async def handle(self, request: web.Request) -> web.Response:
        """Answer one DynamoDB request; never raises."""
        operation = "unknown"
        try:
            body = await request.read()
            payload = _parse(body)
            operation = operation_of(request.headers.get("X-Amz-Target"))
            if payload is None:  # an empty body passes the JSON check but is no request
                raise WireError(400, CORAL + "SerializationException", "Empty request body")
            call = _Request(
                operation,
                payload,
                body,
                request.path_qs,
                {k: v for k, v in request.headers.items() if k.lower() not in _REQUEST_DROP},
            )
            if operation in MODELED_OPERATIONS:
                reply = await self._modeled(call)
            elif operation in ("CreateTable", "UpdateTable", "DeleteTable"):
                reply = await self._table_operation(call)
            else:
                reply = _passthrough(await self._send(call))
        except WireError as exc:
            self.requests[(operation, "rejected")] += 1
            return _response(_Reply(exc.status, dumps(exc.body())))
        except web.HTTPRequestEntityTooLarge:
            self.requests[(operation, "rejected")] += 1
            message = f"Request body larger than {MAX_REQUEST_BYTES} bytes"
            return _response(
                _Reply(413, dumps(error_body(CORAL + "SerializationException", message)))
            )
        except BackendUnavailable as exc:
            _log.warning("backend unavailable: %s", exc)
            reply = _Reply(500, dumps(_internal_error(f"Backend unavailable: {exc}")))
        except Exception:  # a bug here must cost one request, never the server
            _log.exception("failed on a %s request", operation)
            reply = _Reply(500, dumps(_internal_error()))
        self.requests[(operation, "throttled" if reply.throttled else "forwarded")] += 1
        return _response(reply)

    # --- tables ---------------------------------------------------------------------------

    async def _table_operation(self, call: _Request) -> _Reply:
        response = await self._send(call)
        name = call.payload.get("TableName")
        if response.status == 200 and isinstance(name, str):
            try:
                if call.operation == "CreateTable":
                    self._register(TableSchema.from_create_table(call.payload))
                elif call.operation == "DeleteTable":
                    self._forget(name)
                elif name in self.schemas:
                    schema = self.schemas[name].with_update(call.payload)
                    self.model.update_table(schema)
                    self.schemas[name] = schema
            except (ConfigError, KeyError, TypeError, ValueError):
                # The backend accepted what we cannot model: forget the table, and it is
                # described afresh (or forwarded unmodeled) on its next use.
                _log.warning("cannot model %s of %r", call.operation, name, exc_info=True)
                self._forget(name)
        return _passthrough(response)

    def _register(self, schema: TableSchema) -> None:
        self._forget(schema.name)
        self.model.create_table(schema)
        self.schemas[schema.name] = schema

    def _forget(self, name: str) -> None:
        if self.schemas.pop(name, None) is not None:
            self.model.delete_table(name)
        self.shadow.drop_table(name)

    async def _schemas_for(self, call: _Request) -> dict[str, TableSchema] | None:
        """Schemas of every table the request names, or None if one is not to be had."""
        try:
            names = tables_of(call.operation, call.payload)
        except (KeyError, TypeError, AttributeError):
            return None
        schemas = {}
        for name in names:
            schema = self.schemas.get(name)
            if schema is None and isinstance(name, str):
                schema = await self._discover(name, call)
            if schema is None:
                return None
            schemas[name] = schema
        return schemas

    async def _discover(self, name: str, call: _Request) -> TableSchema | None:
        """Describe a table the emulator has not seen created (one request per table at once)."""
        pending = self._discovering.get(name)
        if pending is not None:
            return await pending
        future: asyncio.Future[TableSchema | None] = asyncio.get_running_loop().create_future()
        self._discovering[name] = future
        schema = None
        try:
            # The client's own headers carry its credentials and region, which some backends
            # (DynamoDB Local without -sharedDb) use to choose the database.
            # (No backend we know checks the signature, which cannot match this body.)
            headers = {k: v for k, v in call.headers.items() if k.lower() != "x-amz-target"}
            headers["X-Amz-Target"] = "DynamoDB_20120810.DescribeTable"
            response = await self.backend.call(call.path, headers, dumps({"TableName": name}))
            table = _json(response.body).get("Table") if response.status == 200 else None
            if isinstance(table, dict) and name not in self.schemas:
                self._register(TableSchema.from_description(table))
            schema = self.schemas.get(name)
        except (ConfigError, KeyError, TypeError, ValueError):
            _log.warning("cannot model table %r", name, exc_info=True)
        finally:
            del self._discovering[name]
            future.set_result(schema)
        return schema

    # --- data operations ------------------------------------------------------------------

    async def _modeled(self, call: _Request) -> _Reply:
        schemas = await self._schemas_for(call)
        if schemas is None:  # a missing table: the backend says so in its own words
            return _passthrough(await self._send(call))
        pricing = _Pricing(call, schemas, self.shadow)
        try:
            estimate = pricing.estimate()
        except (ConfigError, KeyError, TypeError, ValueError, AttributeError, IndexError):
            # A request the backend will reject (a key attribute missing, a bad type): let it
            # say why, as DynamoDB would.
            return _passthrough(await self._send(call))
        if call.operation in ("BatchGetItem", "BatchWriteItem"):
            return await self._batch(call, pricing, estimate)
        throttle = self.model.admit(estimate.charges)
        if throttle is not None:
            if call.operation.startswith("Transact"):
                return _throttled(_canceled(call, throttle), 400)
            return _throttled(throttle.error_body(), 400)
        try:
            response = await self._send(call)
        except BackendUnavailable:
            self.model.settle(estimate.charges, ())
            raise
        parsed = _json(response.body)
        actual = self._settle(pricing, estimate, response.status, parsed)
        return _with_capacity(call, response, parsed, actual)

    async def _batch(self, call: _Request, pricing: _Pricing, estimate: OperationCost) -> _Reply:
        admitted: list[int] = []
        throttles: list[Throttle] = []
        for index, group in enumerate(estimate.groups):
            throttle = self.model.admit(group)
            if throttle is None:
                admitted.append(index)
            else:
                throttles.append(throttle)
        if not admitted:  # DynamoDB raises only when no item of a batch could be processed
            return _throttled(throttles[0].error_body(), 400)
        forwarded = call
        if throttles:
            items = batch_select(call.payload, call.operation, admitted)
            payload = {**call.payload, "RequestItems": items}
            forwarded = _Request(call.operation, payload, dumps(payload), call.path, call.headers)
        sent = estimate.select(admitted)
        try:
            response = await self._send(forwarded)
        except BackendUnavailable:
            self.model.settle(sent.charges, ())
            raise
        parsed = _json(response.body)
        pricing = _Pricing(forwarded, pricing.schemas, self.shadow)
        actual = self._settle(pricing, sent, response.status, parsed)
        if response.status == 200 and throttles:
            field_name = (
                "UnprocessedKeys" if call.operation == "BatchGetItem" else "UnprocessedItems"
            )
            throttled = [i for i in range(len(estimate.groups)) if i not in set(admitted)]
            ours = batch_select(call.payload, call.operation, throttled)
            parsed[field_name] = merge_unprocessed(ours, parsed.get(field_name))
            return _with_capacity(call, response, parsed, actual, changed=True)
        return _with_capacity(call, response, parsed, actual)

    def _settle(
        self, pricing: _Pricing, admitted: OperationCost, status: int, parsed: dict[str, Any]
    ) -> OperationCost:
        """Correct the model by what the request really cost; return that cost."""
        try:
            actual = pricing.actual(admitted, status, parsed)
        except (ConfigError, KeyError, TypeError, ValueError, AttributeError, IndexError):
            # An answer shaped unlike DynamoDB's: keep the estimate rather than fail a
            # request the backend has already carried out.
            _log.warning("cannot price the answer to a %s", pricing.operation, exc_info=True)
            return admitted
        if actual is not admitted:
            self.model.settle(admitted.charges, actual.charges)
        return actual

    async def _send(self, call: _Request) -> BackendResponse:
        return await self.backend.call(call.path, call.headers, call.body)

    # --- plain HTTP -----------------------------------------------------------------------

    async def _metrics(self, request: web.Request) -> web.Response:
        body = generate_latest(self.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def _health(self, request: web.Request) -> web.Response:
        # DynamoDB answers a plain GET with a health line; load balancers probe it.
        return web.Response(text=f"healthy: dynamodb.{self.model.region}.amazonaws.com ")


class _Pricing:
    """What one request costs: estimated before it runs, then from what the backend answered.

    Writes are priced from the item shadow (before) and the request (after); reads admit
    what the shadow knows (or the minimum) and are settled from the items actually returned.
    Applies what the backend confirmed to the shadow.
    """

    def __init__(
        self, call: _Request, schemas: Mapping[str, TableSchema], shadow: ItemShadow
    ) -> None:
        self.call, self.schemas, self.shadow = call, schemas, shadow
        self.operation, self.request = call.operation, call.payload
        self.known: dict[str, Any] = {}

    def estimate(self) -> OperationCost:
        op, request = self.operation, self.request
        if op in ("GetItem", "PutItem", "UpdateItem", "DeleteItem"):
            table, key = request["TableName"], request.get("Key") or request["Item"]
            stored = self._stored(table, key)
            if op == "GetItem":
                self.known = {"returned": stored}
            elif op == "UpdateItem":
                self.known = {"before": stored, "after": apply_update(stored, key, request)}
            else:
                self.known = {"before": stored}
        elif op == "BatchGetItem":
            entries = batch_entries(request, op)
            self.known = {"returned": [self._stored(t, key) for t, key in entries]}
        elif op == "BatchWriteItem":
            entries = batch_entries(request, op)
            self.known = {"before": [self._stored(t, _write_key(e)) for t, e in entries]}
        elif op == "TransactGetItems":
            gets = [entry["Get"] for entry in request["TransactItems"]]
            self.known = {"returned": [self._stored(g["TableName"], g["Key"]) for g in gets]}
        elif op == "TransactWriteItems":
            befores, afters = [], []
            for entry in request["TransactItems"]:
                ((action, body),) = entry.items()
                key = body.get("Key") or body["Item"]
                stored = self._stored(body["TableName"], key)
                befores.append(stored)
                afters.append(apply_update(stored, key, body) if action == "Update" else None)
            self.known = {"before": befores, "after": afters}
        return self._cost()

    def actual(self, estimate: OperationCost, status: int, parsed: dict[str, Any]) -> OperationCost:
        """The cost to settle on once the backend answered ``status`` and ``parsed``."""
        op, request = self.operation, self.request
        if status != 200:
            if error_code(parsed) == "ConditionalCheckFailedException":
                return self._cost(failed=True)  # still charged, indexes excepted
            if error_code(parsed) == "TransactionCanceledException":
                return estimate
            return OperationCost(op, ())  # rejected requests consume nothing
        if op == "GetItem":
            item = parsed.get("Item")
            self.known["returned"] = self._whole(request, request["TableName"], item)
        elif op in ("Query", "Scan"):
            self.known["returned"] = self._query_items(parsed)
        elif op == "BatchGetItem":
            self.known["returned"] = self._batch_items(parsed)
        elif op == "TransactGetItems":
            gets = [entry["Get"] for entry in request["TransactItems"]]
            responses = parsed.get("Responses") or [{} for _ in gets]
            self.known["returned"] = [
                self._whole(get, get["TableName"], r.get("Item"))
                for get, r in zip(gets, responses, strict=False)
            ]
        else:
            return self._written(estimate, parsed)
        return self._cost()

    def _written(self, estimate: OperationCost, parsed: Mapping[str, Any]) -> OperationCost:
        op, request = self.operation, self.request
        if op in ("PutItem", "UpdateItem", "DeleteItem"):
            table, key = request["TableName"], request.get("Key") or request["Item"]
            attributes = parsed.get("Attributes")
            returned = request.get("ReturnValues")
            if op == "PutItem":
                after: Any = request["Item"]
            elif op == "DeleteItem":
                after = None
            elif returned == "ALL_NEW" and attributes is not None:
                after = attributes
            else:  # apply to the latest known item: concurrent updates land in answer order
                base = attributes if returned == "ALL_OLD" else self._stored(table, key)
                after = apply_update(base, key, request)
            self._remember(table, key, after)
            if returned == "ALL_OLD":  # the backend told us what was stored: price exactly
                self.known["before"] = attributes
                return self._cost()
        elif op == "BatchWriteItem":
            unprocessed = parsed.get("UnprocessedItems") or {}
            for table, entry in batch_entries(self.request, op):
                if entry in unprocessed.get(table, ()):
                    continue
                put = entry.get("PutRequest")
                self._remember(table, _write_key(entry), put["Item"] if put else None)
        elif op == "TransactWriteItems":
            for entry in request["TransactItems"]:
                ((action, body),) = entry.items()
                table, key = body["TableName"], body.get("Key") or body["Item"]
                if action == "Put":
                    self._remember(table, key, body["Item"])
                elif action == "Delete":
                    self._remember(table, key, None)
                elif action == "Update":
                    self._remember(table, key, apply_update(self._stored(table, key), key, body))
        return estimate

    def _cost(self, *, failed: bool = False) -> OperationCost:
        return cost_of(
            self.operation, self.request, tables=self.schemas, failed=failed, **self.known
        )

    def _stored(self, table: str, key: Mapping[str, Any]) -> Any:
        return self.shadow.get(table, primary_key(self.schemas[table], key))

    def _remember(self, table: str, key: Mapping[str, Any], item: Any) -> None:
        # An update we could not follow leaves an unknown item: forget rather than keep a
        # stale one.
        self.shadow.put(table, primary_key(self.schemas[table], key), item)

    def _whole(self, spec: Mapping[str, Any], table: str, item: Any) -> Any:
        """The stored item behind a read answer: the shadow's when the answer is projected."""
        schema = self.schemas[table]
        if any(name in spec for name in _READ_PROJECTIONS):
            # A projection may leave the key out: a Get names it in the request.
            known = spec.get("Key") or item
            key = primary_key(schema, known) if known and item else None
            return self.shadow.get(table, key) or item
        if item is None:
            return None
        self.shadow.put(table, primary_key(schema, item), item)
        return item

    def _query_items(self, parsed: Mapping[str, Any]) -> list[Any]:
        request, table = self.request, self.request["TableName"]
        items = list(parsed.get("Items") or ())
        if "IndexName" not in request:  # index entries are what an index read is charged by
            items = [self._whole(request, table, item) for item in items]
        # A filter drops items after they were read and charged: price the ones dropped like
        # the average one kept.
        scanned = parsed.get("ScannedCount")
        if isinstance(scanned, int) and items and scanned > len(items):
            items = [items[i % len(items)] for i in range(scanned)]
        return items

    def _batch_items(self, parsed: Mapping[str, Any]) -> list[Any]:
        found: dict[tuple[str, Any], Any] = {}
        for table, items in (parsed.get("Responses") or {}).items():
            for item in items:
                found[(table, primary_key(self.schemas[table], item))] = item
        returned = []
        for table, key in batch_entries(self.request, self.operation):
            item = found.get((table, primary_key(self.schemas[table], key)))
            spec = self.request["RequestItems"][table]
            returned.append(self._whole(spec, table, item))
        return returned


def _write_key(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    put = entry.get("PutRequest")
    key: Mapping[str, Any] = put["Item"] if put is not None else entry["DeleteRequest"]["Key"]
    return key


def _parse(body: bytes) -> dict[str, Any] | None:
    if not body:
        return None
    try:
        payload = json.loads(body)
    except ValueError:
        raise WireError(400, CORAL + "SerializationException", "Invalid JSON") from None
    if not isinstance(payload, dict):
        raise WireError(400, CORAL + "SerializationException", "Start of structure or map expected")
    return payload


def _json(body: bytes) -> dict[str, Any]:
    try:
        parsed = json.loads(body) if body else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _canceled(call: _Request, throttle: Throttle) -> dict[str, Any]:
    """TransactionCanceledException naming ThrottlingError for the items on the hot table."""
    codes, messages = [], {}
    for i, entry in enumerate(call.payload["TransactItems"]):
        ((_, body),) = entry.items()
        if body.get("TableName") == throttle.table:
            codes.append("ThrottlingError")
            messages[i] = throttle.message
        else:
            codes.append("None")
    return transaction_canceled(codes, messages)


def _throttled(body: Mapping[str, Any], status: int) -> _Reply:
    return _Reply(status, dumps(body), throttled=True)


def _passthrough(response: BackendResponse) -> _Reply:
    headers = {k: v for k, v in response.headers.items() if k.lower() not in _RESPONSE_DROP}
    if response.status >= 500 and not _json(response.body):
        # moto answers HTML for requests it cannot parse; clients expect DynamoDB's JSON.
        return _Reply(response.status, dumps(_internal_error()), headers)
    return _Reply(response.status, response.body, headers)


def _with_capacity(
    call: _Request,
    response: BackendResponse,
    parsed: dict[str, Any],
    cost: OperationCost,
    *,
    changed: bool = False,
) -> _Reply:
    """The backend's answer with the model's ConsumedCapacity, or none if none was asked."""
    if response.status != 200:
        return _passthrough(response)
    try:
        consumed = consumed_capacity_response(cost, call.capacity_mode)
    except ConfigError:
        consumed = None  # an invalid mode: the backend has already said so
    if consumed is not None:
        parsed["ConsumedCapacity"] = consumed
        changed = True
    elif "ConsumedCapacity" in parsed:
        del parsed["ConsumedCapacity"]
        changed = True
    reply = _passthrough(response)
    if changed:
        reply.body = dumps(parsed)
    return reply


def _response(reply: _Reply) -> web.Response:
    headers = CIMultiDict(reply.headers)  # the backend's header names may be lower case
    headers.setdefault("Content-Type", JSON_CONTENT_TYPE)
    headers.setdefault("x-amzn-RequestId", uuid.uuid4().hex)
    headers["x-amz-crc32"] = crc32(reply.body)
    return web.Response(status=reply.status, body=reply.body, headers=headers)


# --- metrics ------------------------------------------------------------------------------


class ModelCollector(Collector):
    """Prometheus metric families computed from the partition model at each scrape.

    The series are bounded: tables and their GSIs are few, and so are their partitions (a
    table has as many as its capacity needs, plus the splits for heat, each of which waits
    minutes); keys never appear in labels.
    """

    def __init__(self, emulator: Emulator) -> None:
        self._emulator = emulator

    def collect(self) -> Iterator[Metric]:
        model, p = self._emulator.model, _METRIC
        space = ["table", "index"]
        part = [*space, "partition"]
        families: dict[str, Any] = {
            "read": CounterMetricFamily(
                f"{p}_consumed_read_units", "Read units consumed.", labels=space
            ),
            "write": CounterMetricFamily(
                f"{p}_consumed_write_units", "Write units consumed.", labels=space
            ),
            "part_read": CounterMetricFamily(
                f"{p}_partition_consumed_read_units",
                "Read units consumed on a partition (from zero again when it splits).",
                labels=part,
            ),
            "part_write": CounterMetricFamily(
                f"{p}_partition_consumed_write_units",
                "Write units consumed on a partition (from zero again when it splits).",
                labels=part,
            ),
            "part_throttled": CounterMetricFamily(
                f"{p}_partition_throttled_requests",
                "Requests throttled on a partition.",
                labels=[*part, "kind"],
            ),
            "hot": GaugeMetricFamily(
                f"{p}_partition_hot_seconds",
                "Consecutive seconds the partition has run near its ceiling.",
                labels=part,
            ),
            "throttled": CounterMetricFamily(
                f"{p}_throttled_requests",
                "Requests throttled on a table or GSI (partition or table capacity).",
                labels=[*space, "kind"],
            ),
            "burst_read": GaugeMetricFamily(
                f"{p}_burst_read_units", "Unused read units banked for bursts.", labels=space
            ),
            "burst_write": GaugeMetricFamily(
                f"{p}_burst_write_units", "Unused write units banked for bursts.", labels=space
            ),
            "cap_read": GaugeMetricFamily(
                f"{p}_capacity_read_units", "Read units per second allowed now.", labels=space
            ),
            "cap_write": GaugeMetricFamily(
                f"{p}_capacity_write_units", "Write units per second allowed now.", labels=space
            ),
            "partitions": GaugeMetricFamily(
                f"{p}_partitions", "Partitions of the table or GSI.", labels=space
            ),
            "splits": CounterMetricFamily(
                f"{p}_splits", "Partitions added by capacity growth or heat.", labels=space
            ),
        }
        for stats in model.snapshot():
            labels = [stats.table, stats.index or ""]
            families["read"].add_metric(labels, stats.consumed_read_units)
            families["write"].add_metric(labels, stats.consumed_write_units)
            for kind, count in (("read", stats.throttled_reads), ("write", stats.throttled_writes)):
                families["throttled"].add_metric([*labels, kind], count)
            families["burst_read"].add_metric(labels, stats.burst_read_units)
            families["burst_write"].add_metric(labels, stats.burst_write_units)
            families["cap_read"].add_metric(labels, stats.read_capacity)
            families["cap_write"].add_metric(labels, stats.write_capacity)
            families["partitions"].add_metric(labels, len(stats.partitions))
            families["splits"].add_metric(labels, stats.splits)
            for partition in stats.partitions:
                # The first hash of its range names a partition: stable while others split.
                at = [*labels, f"{partition.start:016x}"]
                families["part_read"].add_metric(at, partition.consumed_read_units)
                families["part_write"].add_metric(at, partition.consumed_write_units)
                families["part_throttled"].add_metric([*at, "read"], partition.throttled_reads)
                families["part_throttled"].add_metric([*at, "write"], partition.throttled_writes)
                families["hot"].add_metric(at, partition.hot_seconds)
        yield from families.values()
        requests = CounterMetricFamily(
            f"{p}_requests",
            "Requests answered, by operation and outcome (forwarded, throttled, rejected).",
            labels=["operation", "outcome"],
        )
        for (operation, outcome), count in sorted(self._emulator.requests.items()):
            requests.add_metric([operation, outcome], count)
        yield requests
        scale = GaugeMetricFamily(f"{p}_scale", "Factor applied to every AWS capacity figure.")
        scale.add_metric([], model.scale)
        yield scale


# --- running it ---------------------------------------------------------------------------


class EmulatorServer:
    """An `Emulator` served on its own event loop in a background thread.

    For tests and for embedding in a process that has its own loop. Not for a Locust process:
    there gevent has patched threading, the "thread" is a greenlet sharing the caller's OS
    thread, and two servers' loops would collide; use `EmbeddedEmulator`.

        >>> model = PartitionModel(scale=0.01, clock=fake_clock)          # doctest: +SKIP
        >>> with EmulatorServer(Emulator(MotoBackend(), model)) as server:  # doctest: +SKIP
        ...     client = boto3.client("dynamodb", endpoint_url=server.endpoint_url)
    """

    def __init__(self, emulator: Emulator, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.emulator = emulator
        self.host, self.port = host, port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None

    @property
    def endpoint_url(self) -> str:
        """``http://host:port`` it listens on."""
        if self._runner is None:
            raise TargetError("the emulator is not running: call start() or use `with`")
        return f"http://{self.host}:{self.port}"

    def start(self) -> Self:
        """Bind and serve; returns once requests are answered."""
        with contextlib.suppress(RuntimeError):
            asyncio.get_running_loop()
            # Only where gevent made threads greenlets of this very thread (see above).
            raise TargetError("an event loop already runs in this thread: use EmbeddedEmulator")
        loop = asyncio.new_event_loop()
        runner = web.AppRunner(self.emulator.app(), access_log=None, handle_signals=False)
        try:
            self.port = loop.run_until_complete(_listen(runner, self.host, self.port))
        except BaseException:
            loop.run_until_complete(runner.cleanup())
            loop.close()
            raise
        self._loop, self._runner = loop, runner
        self._thread = threading.Thread(target=loop.run_forever, name="emulator", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and close the backend. Idempotent."""
        loop, runner, thread = self._loop, self._runner, self._thread
        self._loop = self._runner = self._thread = None
        if loop is None or runner is None or thread is None:
            return
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()

    def call(self, function: Callable[[], Any]) -> Any:
        """Run ``function`` on the server's loop (the model is not thread-safe) and return."""
        if self._loop is None:
            raise TargetError("the emulator is not running")

        async def run() -> Any:
            return function()

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(timeout=10)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()


async def _listen(runner: web.AppRunner, host: str, port: int) -> int:
    """Start ``runner`` on host:port (0: any free port) and return the port bound."""
    await runner.setup()
    site = web.TCPSite(runner, host, port, reuse_address=True)
    try:
        await site.start()
    except OSError as exc:
        raise TargetError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    for address in runner.addresses:
        if isinstance(address, tuple):
            return int(address[1])
    return port


class EmbeddedEmulator(targets._LocalTarget):
    """``python -m loadgen.emulator`` in a child process on a free loopback port.

    The same lifecycle as `loadgen.targets.EmbeddedMoto`: a context manager, ``endpoint_url``,
    a bounded wait until it answers, and no process left behind. The child picks its own port
    (``--port 0``) and prints its URL, so no other process can take the port in between.

        >>> with EmbeddedEmulator(scale=0.1) as emulator:  # doctest: +SKIP
        ...     dynamodb = boto3.client("dynamodb", endpoint_url=emulator.endpoint_url)
    """

    name = "emulator"
    default_startup_timeout = 30.0

    def __init__(
        self,
        *,
        scale: float | None = None,
        seed: int | None = None,
        upstream: str | None = None,
        extra_args: Sequence[str] = (),
        startup_timeout: float | None = None,
    ) -> None:
        super().__init__(startup_timeout=startup_timeout)
        if scale is not None and not (math.isfinite(scale) and scale > 0):
            raise ConfigError(f"scale must be a positive number (got {scale!r})")
        self.scale = DEFAULT_SCALE if scale is None else scale
        """Factor on every AWS capacity figure."""
        self.seed = seed
        self.upstream = upstream
        self.extra_args = tuple(extra_args)

    def _command(self, port: int, workdir: Path) -> list[str]:
        command = [sys.executable, "-m", "loadgen.emulator", "--port", str(port)]
        command += ["--scale", repr(self.scale)]
        if self.seed is not None:
            command += ["--seed", str(self.seed)]
        if self.upstream is not None:
            command += ["--upstream", self.upstream]
        return command + list(self.extra_args)

    def _start(self) -> None:
        workdir = Path(tempfile.mkdtemp(prefix="partition-heat-emulator-"))
        self._workdir = workdir
        atexit.register(self.close)
        command = self._command(0, workdir)
        url_path, log_path = workdir / "stdout.txt", workdir / "server.log"
        environment = dict(os.environ)
        # The child must import this very package, installed or not.
        package_root = str(Path(__file__).resolve().parent.parent)
        environment["PYTHONPATH"] = os.pathsep.join(
            filter(None, [package_root, environment.get("PYTHONPATH")])
        )
        started = time.monotonic()
        try:
            with open(url_path, "wb") as out, open(log_path, "wb") as log:
                self._process = subprocess.Popen(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=log,
                    cwd=workdir,
                    env=environment,
                    preexec_fn=targets._die_with_parent_hook(),
                )
        except OSError as exc:
            raise TargetError(f"cannot run {command[0]} for the emulator: {exc}") from exc
        self._port = self._read_port(url_path, started)
        exit_code = self._wait_ready(started)
        if exit_code is not None:
            self._port = None
            raise TargetError(
                f"emulator exited with code {exit_code} while starting; last output:\n"
                f"{targets._tail(log_path)}"
            )
        self.startup_seconds = time.monotonic() - started

    def _read_port(self, url_path: Path, started: float) -> int:
        """Wait for the child's first stdout line, its URL, and return the port in it."""
        assert self._process is not None and self._workdir is not None
        while True:
            text = url_path.read_text(encoding="utf-8", errors="replace")
            if "\n" in text:
                port = urllib.parse.urlsplit(text.splitlines()[0].strip()).port
                if port is None:
                    raise TargetError(f"emulator printed {text.splitlines()[0]!r}, not its URL")
                return port
            exit_code = self._process.poll()
            if exit_code is not None or time.monotonic() - started > self.startup_timeout:
                state = (
                    f"exited with code {exit_code}"
                    if exit_code is not None
                    else (f"printed no URL within {self.startup_timeout:g} s")
                )
                raise TargetError(
                    f"emulator {state}; last output:\n{targets._tail(self._workdir / 'server.log')}"
                )
            time.sleep(0.05)


# --- command line -------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One line, like every other loadgen error, not argparse's usage block.
        self.exit(2, f"loadgen: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="loadgen emulator",
        description="A DynamoDB endpoint that throttles like a partitioned table. It prints the "
        "URL it listens on as its first line; GET /metrics serves Prometheus metrics.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=8000, help="port (default 8000); 0 picks a free one"
    )
    backend = parser.add_mutually_exclusive_group()
    backend.add_argument(
        "--upstream",
        metavar="URL",
        help="forward to this DynamoDB-compatible server "
        "(DynamoDB Local, LocalStack, ...) instead of the embedded moto",
    )
    backend.add_argument(
        "--null-backend",
        action="store_true",
        help="answer {} to every admitted request (measures the emulator's own cost)",
    )
    parser.add_argument(
        "--scale",
        type=float,
        default=DEFAULT_SCALE,
        help=f"factor on every AWS capacity figure (default {DEFAULT_SCALE:g})",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the partition model")
    parser.add_argument("--region", default="us-east-1", help="region in resource ARNs")
    parser.add_argument("--account", help="account id in resource ARNs (default: the backend's)")
    parser.add_argument(
        "--shadow-items",
        type=int,
        default=DEFAULT_SHADOW_ITEMS,
        help="items remembered to price writes (default %(default)s)",
    )
    parser.add_argument(
        "--upstream-timeout", type=float, default=30.0, help="seconds to wait for the upstream"
    )
    return parser


def _build(args: argparse.Namespace) -> Emulator:
    if not (math.isfinite(args.scale) and args.scale > 0):
        raise ConfigError(f"--scale must be a positive number (got {args.scale!r})")
    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must be 0..65535 (got {args.port})")
    if args.shadow_items < 0:
        raise ConfigError(f"--shadow-items must be >= 0 (got {args.shadow_items})")
    backend: Backend
    if args.upstream:
        backend = UpstreamBackend(args.upstream, timeout=args.upstream_timeout)
    elif args.null_backend:
        backend = NullBackend()
    else:
        backend = MotoBackend()
    model = PartitionModel(
        scale=args.scale,
        seed=args.seed,
        region=args.region,
        account=args.account or backend.account,
    )
    return Emulator(backend, model, shadow_items=args.shadow_items)


async def _serve(emulator: Emulator, host: str, port: int) -> None:
    runner = web.AppRunner(emulator.app(), access_log=None, handle_signals=False)
    try:
        bound = await _listen(runner, host, port)
        shown = f"[{host}]" if ":" in host else host
        print(f"http://{shown}:{bound}", flush=True)
        scale = emulator.model.scale
        print(
            f"loadgen emulator: backend {emulator.backend.name}; scale {scale:g}: a partition "
            f"serves {3000 * scale:g} read and {1000 * scale:g} write units/s "
            "(AWS: 3000 and 1000)",
            file=sys.stderr,
            flush=True,
        )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(signum, stop.set)
        await stop.wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> int:
    """Run the emulator until SIGINT or SIGTERM; 0 on a clean stop, 2 on bad input."""
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="loadgen emulator: %(message)s")
    try:
        emulator = _build(args)
        if isinstance(emulator.backend, UpstreamBackend):
            try:
                targets.probe(emulator.backend.url, timeout=2.0)
            except TargetError as exc:  # it may come up later: answer 500s until then
                print(f"loadgen emulator: warning: {exc}", file=sys.stderr, flush=True)
        asyncio.run(_serve(emulator, args.host, args.port))
    except HarnessError as exc:
        print(f"loadgen: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
