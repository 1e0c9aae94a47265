"""Record an application's own DynamoDB traffic: a hook on botocore's event system.

    import boto3
    from loadgen import capture

    dynamodb = boto3.client("dynamodb")
    recording = capture.install(dynamodb, "staging.jsonl.gz")   # or a boto3 Session, a resource
    ...                                                        # the application runs as ever
    recording.close()                                          # also at exit

Each data request the client makes becomes a trace line (`loadgen.traffic.trace`) when its
answer arrives, SDK retries included (one line per call, its final outcome). Nothing is sent
that the application did not send, except one DescribeTable per table when installed on a
client (read-only: the key schema tells the partition key from the sort key); installed on a
session, schemas come from the application's own CreateTable and DescribeTable calls, else a
key's first attribute is taken as its partition key. The writer never blocks the
application: a full queue drops the line and counts it (`TraceWriter.dropped`).
"""

from __future__ import annotations

import atexit
import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from loadgen.errors import ConfigError
from loadgen.model.schema import TableSchema
from loadgen.traffic.facts import DATA_OPERATIONS, outcome_of, record_of
from loadgen.traffic.trace import TraceWriter, schema_line

__all__ = ["Capture", "install"]

log = logging.getLogger(__name__)

_CONTEXT_KEY = "loadgen_capture"


def install(
    target: Any, path: str | Path, *, hash_keys: str | None = None, describe_tables: bool = True
) -> Capture:
    """Record every DynamoDB data request made through ``target`` to the trace at ``path``.

    ``target`` is a botocore/boto3 DynamoDB client, a boto3 DynamoDB resource, or a boto3
    or botocore Session (clients it creates afterwards are recorded). ``hash_keys`` records
    keys as their BLAKE2b hash keyed with the salt. Returns the `Capture`; close it (or let
    the process exit) to finish the file.
    """
    client = _client_of(target)
    if client is not None:
        service = getattr(client.meta, "service_model", None)
        if service is not None and service.service_name != "dynamodb":
            raise ConfigError(
                f"capture.install needs a DynamoDB client (got a {service.service_name} client)"
            )
        events = client.meta.events
    elif hasattr(target, "events") and hasattr(target, "client"):  # boto3.Session
        events = target.events
    elif hasattr(target, "get_component"):  # botocore.session.Session
        events = target.get_component("event_emitter")
    else:
        raise ConfigError(
            f"capture.install needs a boto3/botocore client, resource or session "
            f"(got {type(target).__name__})"
        )
    capture = Capture(
        TraceWriter(path, source="boto3", hash_keys=hash_keys),
        events,
        client if describe_tables else None,
    )
    atexit.register(capture.close)
    return capture


def _client_of(target: Any) -> Any:
    meta = getattr(target, "meta", None)
    if meta is None:
        return None
    if hasattr(meta, "events"):
        return target  # a client
    return getattr(meta, "client", None)  # a resource


class Capture:
    """An installed capture: its writer, and the hooks it registered (see `install`)."""

    def __init__(self, writer: TraceWriter, events: Any, client: Any = None) -> None:
        self.writer = writer
        self.events = events
        self.client = client
        self.schemas: dict[str, TableSchema] = {}
        """Key schemas of the tables seen, by name."""
        self._described: set[str] = set()
        self._hooks = (
            ("before-call.dynamodb", self._before),
            ("after-call.dynamodb", self._after),
            ("after-call-error.dynamodb", self._failed),
        )
        for event, handler in self._hooks:
            events.register(event, handler, unique_id=f"loadgen-capture-{event}-{id(self)}")

    @property
    def records(self) -> int:
        """Requests written so far."""
        return self.writer.records

    def close(self) -> None:
        """Stop recording, write what is queued and finish the file. Idempotent."""
        for event, _ in self._hooks:
            self.events.unregister(event, unique_id=f"loadgen-capture-{event}-{id(self)}")
        self.writer.close()

    def __enter__(self) -> Capture:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- botocore's events ----------------------------------------------------------------

    def _before(
        self, *, model: Any, params: Mapping[str, Any], context: Any, **kwargs: Any
    ) -> None:
        if model.name not in DATA_OPERATIONS:
            return
        try:
            body = params.get("body") or b"{}"
            request = json.loads(body)
        except (TypeError, ValueError):
            return
        context[_CONTEXT_KEY] = (self.writer.elapsed(), model.name, request)

    def _after(self, *, http_response: Any, model: Any, context: Any, **kwargs: Any) -> None:
        started = context.pop(_CONTEXT_KEY, None) if isinstance(context, dict) else None
        try:
            answer = _answer(http_response)
            status = int(getattr(http_response, "status_code", 200))
            if model.name in ("CreateTable", "DescribeTable") and status == 200:
                self._learn(answer.get("TableDescription") or answer.get("Table"))
            if started is None or model.name not in DATA_OPERATIONS:
                return
            t, _, request = started
            self._describe(request)
            record = record_of(
                model.name,
                request,
                answer,
                t=t,
                outcome=outcome_of(status, answer),
                schemas=self.schemas,
            )
            for table, *_ in record.touches:
                if not self.writer.has_schema(table) and table in self.schemas:
                    self.writer.schema(schema_line(self.schemas[table]))
            self.writer.write(record)
        except Exception:  # the application's call must never fail for its trace line
            log.debug("cannot capture a %s call", model.name, exc_info=True)

    def _failed(self, *, exception: BaseException, context: Any, **kwargs: Any) -> None:
        """A call that ended without an answer (a connection error): its outcome is the
        exception's name."""
        started = context.pop(_CONTEXT_KEY, None) if isinstance(context, dict) else None
        if started is None:
            return
        t, name, request = started
        try:
            record = record_of(
                name, request, {}, t=t, outcome=type(exception).__name__, schemas=self.schemas
            )
            self.writer.write(record)
        except Exception:
            log.debug("cannot capture a failed %s call", name, exc_info=True)

    def _learn(self, table: Any) -> None:
        if isinstance(table, dict) and isinstance(table.get("TableName"), str):
            try:
                self.schemas[table["TableName"]] = TableSchema.from_description(table)
            except (ConfigError, KeyError, TypeError, ValueError):
                log.debug("cannot read the schema of %r", table.get("TableName"))

    def _describe(self, request: Mapping[str, Any]) -> None:
        """Ask for the key schema of a table not seen yet, once (installed on a client only)."""
        if self.client is None:
            return
        names = [request["TableName"]] if "TableName" in request else []
        names += list(request.get("RequestItems") or {})
        for entry in request.get("TransactItems") or ():
            names += [body.get("TableName") for body in entry.values()]
        for name in names:
            if isinstance(name, str) and name not in self.schemas and name not in self._described:
                self._described.add(name)
                try:
                    self.client.describe_table(TableName=name)  # learnt in _after
                except Exception as exc:
                    log.debug("cannot describe %r: %s", name, exc)


def _answer(http_response: Any) -> dict[str, Any]:
    """The raw JSON answer: botocore's parsed one may already be converted by boto3's
    resource layer (Python values instead of DynamoDB JSON)."""
    try:
        answer = json.loads(getattr(http_response, "content", b"") or b"{}")
    except (TypeError, ValueError):
        return {}
    return answer if isinstance(answer, dict) else {}
