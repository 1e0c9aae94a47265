"""``loadgen emulator --capture FILE``: every data request the emulator answers, as a trace.

The request flow (`loadgen.emulator.server`) hands each data request and the answer it is about
to send to `EmulatorCapture.observe`; the trace line is made by `loadgen.traffic.facts` and
written off the event loop by `loadgen.traffic.trace.TraceWriter`. An update's size is the
item as the emulator's shadow holds it after the write.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Protocol

from loadgen.emulator.pricing import ItemShadow, primary_key
from loadgen.emulator.wire import loads_answer
from loadgen.model.schema import TableSchema
from loadgen.traffic.facts import outcome_of, record_of
from loadgen.traffic.trace import TraceWriter, schema_line

__all__ = ["EmulatorCapture"]

_log = logging.getLogger("loadgen.emulator")


class _Emulator(Protocol):
    schemas: dict[str, TableSchema]
    shadow: ItemShadow


class EmulatorCapture:
    """Writes a trace line per data request the emulator answers; never raises.

    >>> emulator.capture = EmulatorCapture(TraceWriter(path, source="emulator"), emulator)
    ...                                                          # doctest: +SKIP
    """

    def __init__(self, writer: TraceWriter, emulator: _Emulator) -> None:
        self.writer = writer
        self.emulator = emulator

    def observe(self, operation: str, payload: Mapping[str, Any], status: int, body: bytes) -> None:
        """Record one answered data request (called on the event loop, after the answer)."""
        try:
            answer = loads_answer(body)
            schemas = self.emulator.schemas
            record = record_of(
                operation,
                payload,
                answer,
                t=self.writer.elapsed(),
                outcome=outcome_of(status, answer),
                schemas=schemas,
                stored=self._stored,
            )
            for table, *_ in record.touches:
                if not self.writer.has_schema(table) and table in schemas:
                    self.writer.schema(schema_line(schemas[table]))
            self.writer.write(record)
        except Exception:  # a request we cannot describe costs its trace line, nothing more
            _log.debug("cannot capture a %s request", operation, exc_info=True)

    def _stored(self, table: str, key: Mapping[str, Any]) -> Mapping[str, Any] | None:
        schema = self.emulator.schemas.get(table)
        if schema is None:
            return None
        return self.emulator.shadow.get(table, primary_key(schema, key))

    def close(self) -> None:
        self.writer.close()
