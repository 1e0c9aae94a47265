"""A DynamoDB endpoint that throttles like a partitioned table: ``loadgen emulator``.

Local engines never throttle. The emulator sits in front of one (moto in this process by
default, or any DynamoDB-compatible server with ``--upstream``), prices every data request by
DynamoDB's capacity rules (`loadgen.model.capacity`), asks the partition model
(`loadgen.model.partitions`) to admit it, and either answers with DynamoDB's own throttling error
or forwards the request and returns the backend's answer with the model's ConsumedCapacity.
Any SDK points at it unchanged:

    python -m loadgen.emulator --port 8000 --scale 0.1
    aws dynamodb list-tables --endpoint-url http://127.0.0.1:8000

The first line it prints on stdout is the URL it listens on; ``/metrics`` serves the model's
state to Prometheus (`loadgen.emulator.metrics`). This module holds the request flow and the
ways to run it; DynamoDB's JSON protocol is in `loadgen.emulator.wire`, what a request costs in
`loadgen.emulator.pricing`, and where admitted requests go in `loadgen.emulator.backends`.

HTTP is served by `loadgen.emulator.listener` (an asyncio protocol on httptools' parser: about
a quarter of the emulator's CPU per request went to aiohttp's application server). Backend:
moto in this process, called below its HTTP layer on the event loop itself, costs less than
any hop to another process on these 2-core machines (`benchmarks/bench_target.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from loadgen.emulator.admission import Admission
from loadgen.emulator.backends import (
    Backend,
    BackendResponse,
    BackendUnavailable,
)
from loadgen.emulator.capture import EmulatorCapture
from loadgen.emulator.faults import unavailable, unusable_answer
from loadgen.emulator.listener import Answer, Listener, Request, json_answer
from loadgen.emulator.metrics import ModelCollector
from loadgen.emulator.pricing import ItemShadow, Pricing
from loadgen.emulator.projection import WholeRead, whole_read
from loadgen.emulator.quotas import Quotas
from loadgen.emulator.validation import validate
from loadgen.emulator.wire import (
    CORAL,
    MODELED_OPERATIONS,
    TABLE_OPERATIONS,
    TARGET_PREFIX,
    WireError,
    batch_select,
    dumps,
    internal_error,
    loads_answer,
    loads_request,
    merge_unprocessed,
    operation_of,
    tables_of,
    transaction_canceled,
)
from loadgen.errors import ConfigError, TargetError
from loadgen.model.capacity import OperationCost, consumed_capacity_response
from loadgen.model.partitions import PartitionModel
from loadgen.model.schema import TableSchema
from loadgen.model.throttling import Throttle
from loadgen.refusals import HEADER, header_value

__all__ = [
    "DEFAULT_SHADOW_ITEMS",
    "MAX_REQUEST_BYTES",
    "Emulator",
    "EmulatorServer",
    "listen",
    "stop",
]

DEFAULT_SHADOW_ITEMS = 100_000
"""Items the write-pricing shadow keeps (60 MB for items of 260 bytes)."""
MAX_REQUEST_BYTES = 16 * 1024 * 1024
"""DynamoDB's largest request (a BatchWriteItem of 16 MB), with room for the JSON."""

_log = logging.getLogger("loadgen.emulator")
# Hop-by-hop headers, and those whose value a rewritten body invalidates.
STARTING_DATA_HEADER = "X-Partition-Heat-Starting-Data"
"""A write carrying this header (``1``) is what the table held before the load began (a
design's starting data): it is stored and sized, but not admitted through the partition
model, so it neither throttles nor counts toward a table's traffic."""
_STARTING_DATA_OPERATIONS = frozenset({"PutItem", "BatchWriteItem"})

_REQUEST_DROP = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "content-length"}
)
_RESPONSE_DROP = _REQUEST_DROP | {"content-encoding", "x-amz-crc32", "date", "server"}


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
        quotas: Quotas | None = None,
        admission: Admission | None = None,
        capture: EmulatorCapture | None = None,
    ) -> None:
        self.backend = backend
        self.capture = capture
        """Writes each answered data request to a trace (``--capture``; `capture`)."""
        self.model = model
        self.quotas = quotas or Quotas()
        """Provisioned-capacity quotas CreateTable and UpdateTable are held to."""
        self.admission = admission or Admission(largest_body=MAX_REQUEST_BYTES)
        """Limits on requests in flight and the body bytes they hold."""
        self.schemas: dict[str, TableSchema] = {}
        """Tables the model knows, by name."""
        self.shadow = ItemShadow(shadow_items, on_size=model.resize)
        self.requests: Counter[tuple[str, str]] = Counter()
        """Requests answered, by (operation, outcome): forwarded, throttled or rejected."""
        self.registry = CollectorRegistry(auto_describe=False)
        """The registry ``/metrics`` serves (one per emulator, so several can share a process)."""
        self.registry.register(ModelCollector(self))
        self._discovering: dict[str, asyncio.Future[TableSchema | None]] = {}

    def listener(self) -> Listener:
        """The HTTP server for this emulator (`loadgen.emulator.listener`): ``POST`` on any
        path for DynamoDB, ``GET /metrics``, ``GET /``."""
        return Listener(self.serve, self.admission, largest_body=MAX_REQUEST_BYTES)

    async def start(self) -> None:
        """Start the backend (moto loads, connections open); before the first request."""
        await self.backend.start()

    async def close(self) -> None:
        await self.backend.close()

    async def serve(self, request: Request) -> Answer:
        """Answer one HTTP request; never raises."""
        if request.method == "POST":
            return await self.handle(request.path, request.headers, request.body)
        route = request.path.partition("?")[0]
        if request.method == "GET" and route == "/metrics":
            metrics = generate_latest(self.registry)
            return Answer(200, metrics, {"Content-Type": CONTENT_TYPE_LATEST})
        if request.method == "GET" and route == "/":
            # DynamoDB answers a plain GET with a health line; load balancers probe it.
            health = f"healthy: dynamodb.{self.model.region}.amazonaws.com ".encode()
            return Answer(200, health, {"Content-Type": "text/plain; charset=utf-8"})
        if request.method == "GET":
            return Answer(404, b"404: Not Found", {"Content-Type": "text/plain; charset=utf-8"})
        return Answer(
            405, b"405: Method Not Allowed", {"Content-Type": "text/plain; charset=utf-8"}
        )

    async def handle(self, path: str, headers: Mapping[str, str], body: bytes) -> Answer:
        """Answer one DynamoDB request; never raises. ``headers`` are looked up in any case
        (the listener's `Request.headers`)."""
        operation = "unknown"
        try:
            payload = loads_request(body)
            operation = operation_of(headers.get("X-Amz-Target"))
            if payload is None:  # an empty body passes the JSON check but is no request
                raise WireError(400, CORAL + "SerializationException", "Empty request body")
            # Answer malformed requests as DynamoDB does, before the model or a backend sees them.
            validate(operation, payload, len(body))
            self.quotas.check(operation, payload, self.schemas)
            call = _Request(
                operation,
                payload,
                body,
                path,
                {k: v for k, v in headers.items() if k.lower() not in _REQUEST_DROP},
            )
            if operation in _STARTING_DATA_OPERATIONS and headers.get(STARTING_DATA_HEADER):
                reply = await self._starting_data(call)
            elif operation in MODELED_OPERATIONS:
                reply = await self._modeled(call)
                if self.capture is not None:  # --capture: after the answer is known
                    self.capture.observe(operation, payload, reply.status, reply.body)
            elif operation in TABLE_OPERATIONS:
                reply = await self._table_operation(call)
            else:
                reply = _passthrough(await self._send(call))
        except WireError as exc:
            self.requests[(operation, "rejected")] += 1
            return _response(_Reply(exc.status, dumps(exc.body())))
        except BackendUnavailable as exc:
            _log.warning("backend unavailable: %s", exc)
            reply = _Reply(*unavailable(exc))
        except Exception:  # a bug here must cost one request, never the server
            _log.exception("failed on a %s request", operation)
            reply = _Reply(500, dumps(internal_error()))
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
            headers["X-Amz-Target"] = TARGET_PREFIX + "DescribeTable"
            response = await self.backend.call(call.path, headers, dumps({"TableName": name}))
            table = loads_answer(response.body).get("Table") if response.status == 200 else None
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
        asked = call
        whole = whole_read(call.operation, call.payload, schemas)
        if whole is not None:  # priced by the whole items read; projected here
            call = _Request(
                call.operation, whole.request, dumps(whole.request), call.path, call.headers
            )
        pricing = Pricing(call.operation, call.payload, schemas, self.shadow)
        try:
            estimate = pricing.estimate()
        except (ConfigError, KeyError, TypeError, ValueError, AttributeError, IndexError):
            # A request the backend will reject (a key attribute missing, a bad type): let it
            # say why, as DynamoDB would.
            return _passthrough(await self._send(call))
        if call.operation in ("BatchGetItem", "BatchWriteItem"):
            return await self._batch(call, pricing, estimate, asked, whole)
        throttle = self.model.admit(estimate.charges)
        if throttle is not None:
            if call.operation.startswith("Transact"):
                return _throttled(_canceled(call, throttle), 400, [throttle])
            return _throttled(throttle.error_body(), 400, [throttle])
        response, parsed = await self._forward(call, estimate)
        actual = self._settle(pricing, estimate, response.status, parsed)
        return _with_capacity(call, response, parsed, actual, whole=whole)

    async def _starting_data(self, call: _Request) -> _Reply:
        """Store a write of starting data: remembered for pricing, never admitted."""
        schemas = await self._schemas_for(call)
        response = await self._send(call)
        if schemas is None or response.status != 200:
            return _passthrough(response)
        pricing = Pricing(call.operation, call.payload, schemas, self.shadow)
        try:
            estimate = pricing.estimate()
            pricing.actual(estimate, response.status, loads_answer(response.body))
        except (ConfigError, KeyError, TypeError, ValueError, AttributeError, IndexError):
            _log.warning("cannot size starting data in a %s", call.operation, exc_info=True)
        return _passthrough(response)

    async def _batch(
        self,
        call: _Request,
        pricing: Pricing,
        estimate: OperationCost,
        asked: _Request,
        whole: WholeRead | None,
    ) -> _Reply:
        """``call`` as sent to the engine; ``asked`` as the client sent it (``whole`` read)."""
        admitted: list[int] = []
        throttles: list[Throttle] = []
        for index, group in enumerate(estimate.groups):
            throttle = self.model.admit(group)
            if throttle is None:
                admitted.append(index)
            else:
                throttles.append(throttle)
        if not admitted:  # DynamoDB raises only when no item of a batch could be processed
            return _throttled(throttles[0].error_body(), 400, throttles)
        forwarded = call
        if throttles:
            items = batch_select(call.payload, call.operation, admitted)
            payload = {**call.payload, "RequestItems": items}
            forwarded = _Request(call.operation, payload, dumps(payload), call.path, call.headers)
        sent = estimate.select(admitted)
        response, parsed = await self._forward(forwarded, sent)
        pricing = Pricing(forwarded.operation, forwarded.payload, pricing.schemas, self.shadow)
        actual = self._settle(pricing, sent, response.status, parsed)
        if response.status == 200 and throttles:
            field_name = (
                "UnprocessedKeys" if call.operation == "BatchGetItem" else "UnprocessedItems"
            )
            throttled = [i for i in range(len(estimate.groups)) if i not in set(admitted)]
            # Keys to send again as the client asked for them, projection and all.
            ours = batch_select(asked.payload, call.operation, throttled)
            parsed[field_name] = merge_unprocessed(ours, parsed.get(field_name))
            reply = _with_capacity(call, response, parsed, actual, changed=True, whole=whole)
            reply.headers[HEADER] = _causes(throttles)
            return reply
        return _with_capacity(call, response, parsed, actual, whole=whole)

    async def _forward(
        self, call: _Request, admitted: OperationCost
    ) -> tuple[BackendResponse, dict[str, Any]]:
        """Send an admitted request: the answer, raw and parsed. Unanswered, it cost nothing."""
        try:
            response = await self._send(call)
        except BackendUnavailable:
            self.model.settle(admitted.charges, ())
            raise
        return response, loads_answer(response.body)

    def _settle(
        self, pricing: Pricing, admitted: OperationCost, status: int, parsed: dict[str, Any]
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


def _throttled(body: Mapping[str, Any], status: int, throttles: Sequence[Throttle]) -> _Reply:
    return _Reply(status, dumps(body), {HEADER: _causes(throttles)}, throttled=True)


def _causes(throttles: Sequence[Throttle]) -> str:
    """The `loadgen.refusals.HEADER` naming each throttle's cause beside its wire reason."""
    return header_value((t.cause, t.reason, t.resource) for t in throttles)


def _passthrough(response: BackendResponse) -> _Reply:
    headers = {k: v for k, v in response.headers.items() if k.lower() not in _RESPONSE_DROP}
    fault = unusable_answer(response.status, response.body)
    if fault is not None:  # an HTML page, garbage: clients expect DynamoDB's JSON
        return _Reply(*fault)
    return _Reply(response.status, response.body, headers)


def _with_capacity(
    call: _Request,
    response: BackendResponse,
    parsed: dict[str, Any],
    cost: OperationCost,
    *,
    changed: bool = False,
    whole: WholeRead | None = None,
) -> _Reply:
    """The backend's answer with the model's ConsumedCapacity, or none if none was asked;
    projected as the client asked where the engine was asked for ``whole`` items."""
    if response.status != 200 or unusable_answer(response.status, response.body) is not None:
        return _passthrough(response)
    if whole is not None:
        whole.cut(parsed)
        changed = True
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


def _response(reply: _Reply) -> Answer:
    return json_answer(reply.status, reply.body, reply.headers)


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
        self._listener: Listener | None = None

    @property
    def endpoint_url(self) -> str:
        """``http://host:port`` it listens on."""
        if self._listener is None:
            raise TargetError("the emulator is not running: call start() or use `with`")
        return f"http://{self.host}:{self.port}"

    def start(self) -> Self:
        """Bind and serve; returns once requests are answered."""
        with contextlib.suppress(RuntimeError):
            asyncio.get_running_loop()
            # Only where gevent made threads greenlets of this very thread (see above).
            raise TargetError("an event loop already runs in this thread: use EmbeddedEmulator")
        loop = asyncio.new_event_loop()
        listener = self.emulator.listener()
        try:
            self.port = loop.run_until_complete(
                listen(self.emulator, listener, self.host, self.port)
            )
        except BaseException:
            loop.run_until_complete(self.emulator.close())
            loop.close()
            raise
        self._loop, self._listener = loop, listener
        self._thread = threading.Thread(target=loop.run_forever, name="emulator", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and close the backend. Idempotent."""
        loop, listener, thread = self._loop, self._listener, self._thread
        self._loop = self._listener = self._thread = None
        if loop is None or listener is None or thread is None:
            return
        stopping = asyncio.run_coroutine_threadsafe(stop(self.emulator, listener), loop)
        stopping.result(timeout=10)
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


async def listen(emulator: Emulator, listener: Listener, host: str, port: int) -> int:
    """Start the emulator's backend, then serve it on host:port (0: any free port); the port."""
    await emulator.start()
    return await listener.start(host, port)


async def stop(emulator: Emulator, listener: Listener) -> None:
    """Stop serving, then close the backend."""
    await listener.close()
    await emulator.close()
