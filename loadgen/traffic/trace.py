"""The trace file: what was asked of DynamoDB, one request a line, gzip-compressed JSON lines.

A trace is written by ``loadgen emulator --capture FILE`` or by `loadgen.capture.install` and
read by ``loadgen replay`` and ``loadgen prefill``. Every line is one JSON object:

- the first line, the header: ``{"trace": "partition-heat", "version": 1, "source":
  "emulator" | "boto3", "started": <unix seconds>, "scale": <the emulator's scale> | null,
  "hashed": <keys hashed>}``;
- a table, before its first request: ``{"schema": {"name": "app", "pk": ["pk", "S"], "sk":
  ["sk", "S"] | null, "indexes": {"by-status": {"pk": ["status", "S"], "sk": null}}}}``;
- a request: ``{"t": 1.25, "op": "PutItem", "table": "app", "pk": "user#1", "sk": "x",
  "size": 310, "units": 1.0, "out": "ok"}``: seconds since the header's ``started``, the
  operation, the table, ``index`` when one was read, the partition and sort key touched,
  the item bytes written or read (DynamoDB's item size), the capacity units consumed, and
  the outcome (``ok``, ``throttled`` or DynamoDB's error code). A batch or transaction also
  lists each item it touched: ``"items": [[table, pk, sk, size], ...]`` (size 0: a delete or
  a key read that found nothing); a Query or Scan the items it returned in ``"count"``.
  Members that would be null or empty are left out;
- the last line, on a clean close: ``{"end": {"records": N, "dropped": D}}``.

Lines are queued and written by a background thread; a full queue drops the request (and
counts it) rather than slow the caller. The gzip stream is flushed (``Z_SYNC_FLUSH``) every
second, so a file still being written, or cut short by a crash, reads up to its last flush:
`read_trace` stops quietly at a truncated tail.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import queue
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from loadgen.errors import ConfigError
from loadgen.model.hashing import key_hasher

__all__ = [
    "FORMAT",
    "VERSION",
    "Trace",
    "TraceRecord",
    "TraceWriter",
    "read_trace",
]

FORMAT = "partition-heat"
VERSION = 1
DEFAULT_QUEUE = 100_000
"""Requests waiting to be written at most; beyond, new ones are dropped and counted."""
FLUSH_S = 1.0
"""Seconds between flushes: a reader sees what was captured up to the last one."""

Touch = tuple[str, str | None, str | None, int]
"""One item of a batch or transaction: (table, partition key, sort key, size in bytes)."""


@dataclass(frozen=True, slots=True)
class TraceRecord:
    """One data request, as a trace line holds it."""

    t: float
    """Seconds since the trace started."""
    op: str
    table: str
    pk: str | None = None
    sk: str | None = None
    index: str | None = None
    size: int = 0
    """Item bytes written or read."""
    units: float = 0.0
    """Capacity units consumed (0 when throttled or unknown)."""
    out: str = "ok"
    """``ok``, ``throttled`` or DynamoDB's error code."""
    items: tuple[Touch, ...] = ()
    """Every item of a batch or transaction."""
    count: int | None = None
    """Items a Query or Scan returned."""

    def to_json(self) -> dict[str, Any]:
        line: dict[str, Any] = {"t": round(self.t, 4), "op": self.op, "table": self.table}
        for name in ("pk", "sk", "index", "count"):
            value = getattr(self, name)
            if value is not None:
                line[name] = value
        line["size"] = self.size
        line["units"] = round(self.units, 3)
        line["out"] = self.out
        if self.items:
            line["items"] = [list(item) for item in self.items]
        return line

    @classmethod
    def from_json(cls, line: dict[str, Any]) -> TraceRecord:
        return cls(
            t=float(line["t"]),
            op=str(line["op"]),
            table=str(line["table"]),
            pk=line.get("pk"),
            sk=line.get("sk"),
            index=line.get("index"),
            size=int(line.get("size", 0)),
            units=float(line.get("units", 0.0)),
            out=str(line.get("out", "ok")),
            items=tuple((str(t), pk, sk, int(size)) for t, pk, sk, size in line.get("items") or ()),
            count=line.get("count"),
        )

    @property
    def touches(self) -> tuple[Touch, ...]:
        """Every item the request touched (one for a single-item request)."""
        return self.items or ((self.table, self.pk, self.sk, self.size),)


def schema_line(schema: Any) -> dict[str, Any]:
    """The trace's description of a `loadgen.model.schema.TableSchema`: keys and their types."""
    types = dict(schema.attribute_types)

    def key(name: str | None) -> list[str] | None:
        return None if name is None else [name, types.get(name, "S")]

    return {
        "name": schema.name,
        "pk": key(schema.partition_key),
        "sk": key(schema.sort_key),
        "indexes": {
            index.name: {"pk": key(index.partition_key), "sk": key(index.sort_key)}
            for index in schema.global_indexes
        },
    }


class TraceWriter:
    """Writes a trace from any thread without blocking it: a bounded queue, a writer thread.

        >>> with TraceWriter("t.jsonl.gz", source="boto3") as trace:  # doctest: +SKIP
        ...     trace.schema({"name": "app", "pk": ["pk", "S"], "sk": None, "indexes": {}})
        ...     trace.write(TraceRecord(trace.elapsed(), "GetItem", "app", pk="user#1"))

    ``hash_keys`` replaces every key by 16 hex digits of BLAKE2b keyed with the salt, the
    heat exporter's hash: the same key always hashes alike, so popularity and per-key order
    survive, and no key in plain text reaches the file.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        source: str,
        scale: float | None = None,
        hash_keys: str | None = None,
        max_queue: int = DEFAULT_QUEUE,
        flush_s: float = FLUSH_S,
    ) -> None:
        if max_queue < 1:
            raise ConfigError(f"the capture queue must hold at least 1 request (got {max_queue})")
        self._hash: Callable[[str], str] | None = key_hasher(hash_keys) if hash_keys else None
        try:
            self._raw: BinaryIO = open(path, "wb")  # noqa: SIM115 (closed by close())
        except OSError as exc:
            raise ConfigError(f"cannot write the trace {str(path)!r}: {exc.strerror}") from None
        self.path = Path(path)
        self._gzip = gzip.GzipFile(filename="", fileobj=self._raw, mode="wb", mtime=0)
        self.started = time.time()
        self._start = time.perf_counter()
        self.records = 0
        """Requests written so far."""
        self.dropped = 0
        """Requests dropped because the queue was full."""
        self._tables: set[str] = set()
        self._queue: queue.Queue[dict[str, Any] | TraceRecord | None] = queue.Queue(max_queue)
        self._flush_s = flush_s
        self._closed = False
        header = {
            "trace": FORMAT,
            "version": VERSION,
            "source": source,
            "started": round(self.started, 3),
            "scale": scale,
            "hashed": self._hash is not None,
        }
        self._write_line(header)
        self._flush()
        self._thread = threading.Thread(target=self._run, name="trace-writer", daemon=True)
        self._thread.start()

    def elapsed(self) -> float:
        """Seconds since the trace started: a record's ``t``."""
        return time.perf_counter() - self._start

    def has_schema(self, table: str) -> bool:
        return table in self._tables

    def schema(self, line: dict[str, Any]) -> None:
        """Describe a table (once; later calls for the same table are ignored)."""
        if line["name"] in self._tables or self._closed:
            return
        self._tables.add(line["name"])
        self._put({"schema": line})

    def write(self, record: TraceRecord) -> None:
        """Queue one request; never blocks (a full queue drops it and counts it)."""
        if not self._closed:
            self._put(record)

    def _put(self, entry: dict[str, Any] | TraceRecord) -> None:
        try:
            self._queue.put_nowait(entry)
        except queue.Full:
            self.dropped += 1

    def close(self) -> None:
        """Write what is queued, the end line, and close the file. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        self._thread.join(timeout=30)
        with contextlib.suppress(OSError, ValueError):
            self._write_line({"end": {"records": self.records, "dropped": self.dropped}})
            self._gzip.close()
        with contextlib.suppress(OSError):
            self._raw.close()

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _run(self) -> None:
        last_flush = time.monotonic()
        pending = False
        while True:
            try:
                entry = self._queue.get(timeout=self._flush_s)
            except queue.Empty:
                entry = {}  # nothing new: only the flush below may be due
            if entry is None:
                break
            try:
                if isinstance(entry, TraceRecord):
                    self._write_line(self._hashed(entry).to_json())
                    self.records += 1
                    pending = True
                elif entry:
                    self._write_line(entry)
                    pending = True
                if pending and time.monotonic() - last_flush >= self._flush_s:
                    self._flush()
                    pending, last_flush = False, time.monotonic()
            except (OSError, ValueError):
                # A full disk must not take the application down: stop writing, keep counting.
                self.dropped += 1
        with contextlib.suppress(OSError, ValueError):
            self._flush()

    def _hashed(self, record: TraceRecord) -> TraceRecord:
        hashed = self._hash
        if hashed is None:
            return record

        def h(key: str | None) -> str | None:
            return None if key is None else hashed(key)

        return TraceRecord(
            record.t,
            record.op,
            record.table,
            h(record.pk),
            h(record.sk),
            record.index,
            record.size,
            record.units,
            record.out,
            tuple((t, h(pk), h(sk), size) for t, pk, sk, size in record.items),
            record.count,
        )

    def _write_line(self, line: dict[str, Any]) -> None:
        self._gzip.write(json.dumps(line, separators=(",", ":")).encode("utf-8") + b"\n")

    def _flush(self) -> None:
        self._gzip.flush()  # Z_SYNC_FLUSH: everything so far decodes without the trailer
        self._raw.flush()


# --- reading ------------------------------------------------------------------------------


@dataclass
class Trace:
    """A trace read back: its header, its tables and its requests in order."""

    header: dict[str, Any]
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Tables by name, as in their ``schema`` lines."""
    records: list[TraceRecord] = field(default_factory=list)
    end: dict[str, Any] | None = None
    """The end line's counts; None when the file was cut short or is still being written."""

    @property
    def scale(self) -> float:
        """The capacity scale the trace was captured at (1 for AWS, or unknown)."""
        scale = self.header.get("scale")
        return float(scale) if isinstance(scale, int | float) and scale > 0 else 1.0

    @property
    def span_s(self) -> float:
        """Seconds from the first request to the last."""
        if not self.records:
            return 0.0
        return self.records[-1].t - self.records[0].t


def read_trace(path: str | Path) -> Trace:
    """Read a trace (gzip or plain JSON lines); a truncated tail is ignored, not an error.

    Raises `ConfigError` naming the file for anything that is not a trace.
    """
    try:
        lines = _lines(Path(path))
        first = next(lines, None)
    except OSError as exc:
        raise ConfigError(f"cannot read the trace {str(path)!r}: {exc.strerror}") from None
    try:
        header = json.loads(first) if first is not None else None
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("trace") != FORMAT:
        raise ConfigError(
            f'{path}: not a trace file (expected a first line with "trace": "{FORMAT}")'
        )
    if header.get("version") != VERSION:
        raise ConfigError(f"{path}: trace version {header.get('version')!r} (expected {VERSION})")
    trace = Trace(header)
    for number, text in enumerate(lines, start=2):
        line = _json(text, path, number)
        if line is None:  # a line cut short: the file ends here
            break
        try:
            if "schema" in line:
                trace.schemas[line["schema"]["name"]] = line["schema"]
            elif "end" in line:
                trace.end = line["end"]
            else:
                trace.records.append(TraceRecord.from_json(line))
        except (KeyError, TypeError, ValueError):
            raise ConfigError(f"{path}: line {number} is not a trace line: {text[:80]!r}") from None
    return trace


def _json(text: str, path: str | Path, number: int) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        if not text.endswith("\n"):
            return None  # the last, unfinished line of a file being written
        raise ConfigError(f"{path}: line {number} is not JSON: {text[:80]!r}") from None


def _lines(path: Path) -> Iterator[str]:
    """The file's lines, newline kept; a gzip stream is decoded up to where it was cut."""
    with open(path, "rb") as raw:
        magic = raw.read(2)
        raw.seek(0)
        chunks = _gunzip(raw) if magic == b"\x1f\x8b" else iter(lambda: raw.read(1 << 16), b"")
        rest = b""
        for chunk in chunks:
            rest += chunk
            *complete, rest = rest.split(b"\n")
            for line in complete:
                yield line.decode("utf-8", "replace") + "\n"
        if rest:
            yield rest.decode("utf-8", "replace")


def _gunzip(raw: BinaryIO) -> Iterator[bytes]:
    decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
    while True:
        data = raw.read(1 << 16)
        if not data:
            return  # a missing trailer: the stream was cut, what decoded is kept
        while data:
            try:
                yield decoder.decompress(data)
            except zlib.error:
                return  # garbage where the stream was cut
            if not decoder.eof:
                break
            # One gzip member ended; another may follow (concatenated members).
            data = decoder.unused_data
            decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
