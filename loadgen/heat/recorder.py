"""What Locust's own stats do not keep: throttles, retries, latency buckets and partition heat.

`RunRecorder` is the one request-event listener. Per access pattern it counts throttled
attempts, retries, final failures by error code and unprocessed batch items, and keeps a
latency histogram; every partition key a request touched goes to its `HeatMap` (hash-bucket
heat and Space-Saving sketches of the hottest keys, see `loadgen.heat.heatmap`). In Locust's
distributed mode each worker sends what it gathered since its last report with Locust's own
worker report, and the master merges it, so nothing is counted twice and a worker that
vanishes loses at most what it gathered since its last report.
"""

from __future__ import annotations

import logging
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from loadgen.errors import ConfigError
from loadgen.heat.heatmap import HeatConfig, HeatMap, ScopeTally
from loadgen.heat.load import LoadLedger
from loadgen.model.capacity import rejected
from loadgen.refusals import NOT_REPORTED, scope_of_arn

__all__ = [
    "LATENCY_BUCKETS_S",
    "MESSAGES_PER_CODE",
    "LatencyHistogram",
    "OperationCounts",
    "RunRecorder",
    "key_scope",
    "makes_heat",
]

log = logging.getLogger(__name__)

_REPORT_KEY = "loadgen_recorder"

LATENCY_BUCKETS_S = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Upper bounds of the latency histogram buckets: DynamoDB answers in single-digit
milliseconds, a throttled call retried by the SDK takes up to seconds."""
_BOUNDS_MS = tuple(bound * 1000.0 for bound in LATENCY_BUCKETS_S)


MESSAGES_PER_CODE = 5
"""Distinct messages kept per error code and pattern; more are counted as `OTHER_MESSAGES`
(a message may carry an item's values: its variety must not grow the results)."""
OTHER_MESSAGES = "(other messages)"


_NOT_REPORTED = ""  # a reason, resource or cause the target did not give, as a counting key


def makes_heat(error_code: str | None, reasons: Sequence[str | None] = ()) -> bool:
    """Whether a call ending in ``error_code`` (None: it succeeded; ``reasons``: a cancelled
    transaction's codes) touched its partitions: all but what DynamoDB refuses before any work
    (`loadgen.model.capacity.rejected`: a ValidationException, a missing table), which makes
    no heat and costs nothing."""
    return not rejected(error_code, reasons)


def key_scope(table: str, index: str | None) -> str:
    """The label under which a table's (or a GSI's) partition keys are counted."""
    return table if index is None else f"{table}/{index}"


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else round(value, 6)


class LatencyHistogram:
    """Counts of response times per bucket of `LATENCY_BUCKETS_S`, plus one above 10 s.

    histogram = LatencyHistogram()
    histogram.observe(12.5)  # milliseconds, as Locust reports them
    histogram.cumulative()   # [(0.001, 0), ..., (0.025, 1), ..., (inf, 1)]
    """

    __slots__ = ("counts", "sum_ms")

    def __init__(self, counts: list[int] | None = None, sum_ms: float = 0.0) -> None:
        self.counts = counts if counts is not None else [0] * (len(_BOUNDS_MS) + 1)
        self.sum_ms = sum_ms

    def observe(self, response_time_ms: float) -> None:
        # bisect_left: a time equal to a bound belongs to that bound's bucket (le).
        self.counts[bisect_left(_BOUNDS_MS, response_time_ms)] += 1
        self.sum_ms += response_time_ms

    def merge(self, other: LatencyHistogram) -> None:
        self.counts = [a + b for a, b in zip(self.counts, other.counts, strict=True)]
        self.sum_ms += other.sum_ms

    def cumulative(self) -> list[tuple[float, int]]:
        """(upper bound in seconds, observations at or below it), ending with infinity."""
        rows, running = [], 0
        for bound, count in zip((*LATENCY_BUCKETS_S, float("inf")), self.counts, strict=True):
            running += count
            rows.append((bound, running))
        return rows


@dataclass
class OperationCounts:
    """Counts for one (operation, access pattern) pair.

    ``tally`` holds the units the pattern's calls consumed per table and index, read and
    write, and a small sketch of the partition keys they touched (`ScopeTally`): the same
    figures the heat lanes were given.
    """

    requests: int = 0
    attempts: int = 0
    retries: int = 0
    throttled_attempts: int = 0
    throttled_first_attempts: int = 0
    """Calls whose first attempt was throttled: the offered load against the ceiling,
    whatever the SDK's retries did after it."""
    unprocessed: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    latency: LatencyHistogram = field(default_factory=LatencyHistogram)
    tally: ScopeTally = field(default_factory=ScopeTally)
    throttles: Counter[tuple[str, str, str, str]] = field(default_factory=Counter)
    """Throttled attempts (and batch items left unprocessed) by what the target said:
    (exception, reason, resource ARN, the model's cause), ``""`` where it said nothing."""
    final_throttles: Counter[tuple[str, str, str, str]] = field(default_factory=Counter)
    """Calls that finally failed on a throttle, by its last refusal."""
    messages: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Final errors by (code, the target's message), `MESSAGES_PER_CODE` messages a code."""
    cancellations: Counter[str] = field(default_factory=Counter)
    """Cancelled transactions' reasons by code (``ConditionalCheckFailed``, ...), one count
    per action cancelled for it."""
    looked: int = 0
    """Items a read asked for (a GetItem one, a BatchGetItem its keys, a Query one page)."""
    found: int = 0
    """Of those, the ones that found an item (a Query: a page with any)."""
    rejected: int = 0
    """Calls refused before any work (`makes_heat`): no heat, no units."""

    def merge(self, other: OperationCounts) -> None:
        self.requests += other.requests
        self.attempts += other.attempts
        self.retries += other.retries
        self.throttled_attempts += other.throttled_attempts
        self.throttled_first_attempts += other.throttled_first_attempts
        self.unprocessed += other.unprocessed
        self.failures.update(other.failures)
        self.latency.merge(other.latency)
        self.tally.merge(other.tally)
        self.throttles.update(other.throttles)
        self.final_throttles.update(other.final_throttles)
        for (code, message), n in other.messages.items():
            self.add_message(code, message, n)
        self.cancellations.update(other.cancellations)
        self.looked += other.looked
        self.found += other.found
        self.rejected += other.rejected

    def add_message(self, code: str, message: str, n: int = 1) -> None:
        """Count a final error's message, keeping `MESSAGES_PER_CODE` distinct ones a code."""
        key = (code, message)
        if key not in self.messages:
            kept = sum(1 for c, m in self.messages if c == code and m != OTHER_MESSAGES)
            if kept >= MESSAGES_PER_CODE and message != OTHER_MESSAGES:
                key = (code, OTHER_MESSAGES)
        self.messages[key] += n

    def scope_keys(self) -> dict[str, dict[str, Any]]:
        """The pattern's hottest key on each table and index it touched, with its share of
        the pattern's touches there: which key a throttle of that table or index fell on."""
        found = {}
        for (table, index), sketch in sorted(
            self.tally.keys.items(), key=lambda item: (item[0][0], item[0][1] or "")
        ):
            top = sketch.top(1)
            if top and sketch.total:
                found[key_scope(table, index)] = {
                    "key": top[0].key,
                    "share": round(top[0].count / sketch.total, 6),
                }
        return found

    def throttle_rows(self) -> list[dict[str, Any]]:
        """Throttles by reason, most attempts first, as the results file keeps them."""
        rows = []
        for (exception, reason, resource, cause), attempts in self.throttles.most_common():
            scope = scope_of_arn(resource) if resource else None
            rows.append(
                {
                    "reason": reason or NOT_REPORTED,
                    "scope": key_scope(*scope) if scope else None,
                    "cause": cause or NOT_REPORTED,
                    # The partition model's own refusal, told by the emulator; else the
                    # target's (DynamoDB's, an engine's injected fault).
                    "source": "model" if cause else "engine",
                    "exception": exception,
                    "attempts": attempts,
                    "final": self.final_throttles.get((exception, reason, resource, cause), 0),
                    "resource": resource or None,
                }
            )
        return rows

    def message_rows(self) -> list[dict[str, Any]]:
        """Final errors by code and message, most first."""
        return [
            {"code": code, "message": message, "count": n}
            for (code, message), n in sorted(
                self.messages.items(), key=lambda item: (-item[1], item[0])
            )
        ]

    def units(self) -> dict[str, dict[str, float]]:
        """Units consumed per table and index (``table`` or ``table/index``), read and write."""
        return {
            key_scope(table, index): {"read": _number(read), "write": _number(write)}
            for (table, index), (read, write) in sorted(
                self.tally.units.items(), key=lambda item: (item[0][0], item[0][1] or "")
            )
        }

    def hot_key(self) -> dict[str, Any] | None:
        """The pattern's hottest partition key: key, its share, and the table and index."""
        hottest = self.tally.hottest()
        if hottest is None:
            return None
        table, index, hitter, share = hottest
        return {
            "key": hitter.key,
            "share": round(share, 6),
            "table": table,
            "index": index,
            "touches": _number(hitter.count),
            "error": _number(hitter.error),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "attempts": self.attempts,
            "retries": self.retries,
            "throttled_attempts": self.throttled_attempts,
            "throttled_first_attempts": self.throttled_first_attempts,
            "unprocessed": self.unprocessed,
            "failures": dict(self.failures),
            "latency": [self.latency.counts, self.latency.sum_ms],
            "tally": self.tally.to_dict(),
            "throttles": [[*key, n] for key, n in self.throttles.items()],
            "final_throttles": [[*key, n] for key, n in self.final_throttles.items()],
            "messages": [[*key, n] for key, n in self.messages.items()],
            "cancellations": dict(self.cancellations),
            "looked": self.looked,
            "found": self.found,
            "rejected": self.rejected,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OperationCounts:
        return cls(
            requests=data["requests"],
            attempts=data["attempts"],
            retries=data["retries"],
            throttled_attempts=data["throttled_attempts"],
            # A worker of an earlier version reports no first attempts.
            throttled_first_attempts=data.get("throttled_first_attempts", 0),
            unprocessed=data["unprocessed"],
            failures=Counter(data["failures"]),
            latency=LatencyHistogram(list(data["latency"][0]), float(data["latency"][1])),
            tally=ScopeTally.from_dict(data.get("tally") or {}),
            throttles=Counter({tuple(row[:4]): row[4] for row in data.get("throttles") or ()}),
            final_throttles=Counter(
                {tuple(row[:4]): row[4] for row in data.get("final_throttles") or ()}
            ),
            messages=Counter({(row[0], row[1]): row[2] for row in data.get("messages") or ()}),
            cancellations=Counter(data.get("cancellations") or {}),
            looked=data.get("looked", 0),
            found=data.get("found", 0),
            rejected=data.get("rejected", 0),
        )


def _said(refusal: Any) -> tuple[str, str, str, str]:
    """A `loadgen.client.Refusal` as a counting key, ``""`` where the target said nothing."""
    return (
        refusal.exception,
        refusal.reason or _NOT_REPORTED,
        refusal.resource or _NOT_REPORTED,
        refusal.cause or _NOT_REPORTED,
    )


def _found(operation: str, response: dict[str, Any], context: dict[str, Any]) -> tuple[int, int]:
    """(items a read asked for, items it found) from its response; (0, 0) for a write."""
    if operation == "GetItem":
        return 1, int("Item" in response)
    if operation in ("Query", "Scan"):
        return 1, int(bool(response.get("Count")))
    if operation == "BatchGetItem":
        asked = 0
        for keys_and_attributes in (
            (context.get("request") or {}).get("RequestItems") or {}
        ).values():
            asked += len(keys_and_attributes.get("Keys") or ())
        got = sum(len(items) for items in (response.get("Responses") or {}).values())
        return max(0, asked), got
    if operation == "TransactGetItems":
        responses = response.get("Responses") or []
        return len(responses), sum(1 for r in responses if r.get("Item"))
    return 0, 0


class RunRecorder:
    """Listens to request events; keeps per-pattern counts and the heat of keys and buckets.

    recorder = RunRecorder.of(environment)   # registered once per environment
    ...
    recorder.hottest(10)
    recorder.heat.matrix()
    """

    def __init__(self, sketch_capacity: int = 1000, heat: HeatConfig | None = None) -> None:
        self.operations: dict[tuple[str, str], OperationCounts] = {}
        self.heat = HeatMap(heat or HeatConfig(sketch_capacity=sketch_capacity))
        self.load = LoadLedger()
        """The open model's offered, achieved and dropped arrivals (`loadgen.heat.load`)."""

    @property
    def sketch_capacity(self) -> int:
        return self.heat.config.sketch_capacity

    @classmethod
    def register(
        cls, environment: Any, sketch_capacity: int = 1000, heat: HeatConfig | None = None
    ) -> RunRecorder:
        recorder = cls(sketch_capacity, heat)
        events = environment.events
        events.request.add_listener(recorder._on_request)
        events.report_to_master.add_listener(recorder._on_report_to_master)
        events.worker_report.add_listener(recorder._on_worker_report)
        # Locust's web UI resets its stats with a button: the heat starts over with them.
        events.reset_stats.add_listener(recorder.reset)
        return recorder

    def reset(self) -> None:
        """Forget what was counted (keeping the heat settings and the open model's plan)."""
        self.operations = {}
        self.heat.clear()
        self.load.clear()

    @classmethod
    def of(cls, environment: Any, **heat: Any) -> RunRecorder:
        """The environment's recorder, registered on first use, with current heat settings.

        Settings: those given here now or earlier (``buckets=512``, see `HeatConfig`), else
        Locust's parsed options (``--heat-buckets``, ...), else the defaults. Options are read
        again at each call because a worker receives the master's options only with its
        first spawn message; settings may change until requests are counted, never after
        (counts in two bucket layouts cannot be merged): that raises `ConfigError`.
        """
        given = environment.__dict__.setdefault("_loadgen_heat_settings", {})
        given.update({name: value for name, value in heat.items() if value is not None})
        config = HeatConfig.from_options(getattr(environment, "parsed_options", None), given)
        recorder: RunRecorder | None = environment.__dict__.get("loadgen_recorder")
        if recorder is None:
            recorder = cls.register(environment, heat=config)
            environment.loadgen_recorder = recorder
        elif config != recorder.heat.config:
            if recorder.heat.lanes or recorder.operations:
                raise ConfigError(
                    f"heat settings {config} differ from those already counting "
                    f"({recorder.heat.config})"
                )
            recorder.heat = HeatMap(config, recorder.heat.tables.values())
        return recorder

    def _on_request(
        self,
        *,
        request_type: str,
        name: str,
        response_time: float = 0.0,
        context: dict[str, Any] | None = None,
        exception: BaseException | None = None,
        start_time: float | None = None,
        response: Any = None,
        **kwargs: Any,
    ) -> None:
        if not context or "attempts" not in context:
            return  # not one of our DynamoDB calls
        counts = self.operations.get((request_type, name))
        if counts is None:
            counts = self.operations[(request_type, name)] = OperationCounts()
        counts.requests += 1
        counts.attempts += context["attempts"]
        counts.retries += context["retries"]
        counts.throttled_attempts += context["throttled_attempts"]
        counts.throttled_first_attempts += bool(context.get("first_attempt_throttled"))
        counts.unprocessed += context["unprocessed"]
        counts.latency.observe(response_time)
        code = None
        refusals = context.get("refusals") or ()
        for refusal in refusals:
            counts.throttles[_said(refusal)] += 1
        if exception is not None:
            code = context.get("error_code") or type(exception).__name__
            counts.failures[code] += 1
            message = context.get("error_message")
            counts.add_message(code, message if isinstance(message, str) else "")
            counts.cancellations.update(context.get("cancellation_codes") or ())
            if refusals and context.get("throttled_attempts"):
                counts.final_throttles[_said(refusals[-1])] += 1
        if not makes_heat(code, context.get("cancellation_codes") or ()):
            counts.rejected += 1
            return  # refused before any work: no key was touched, nothing was consumed
        if isinstance(response, dict) and exception is None:
            looked, found = _found(request_type, response, context)
            counts.looked += looked
            counts.found += found
        self.heat.record(
            request_type,
            context,
            response if isinstance(response, dict) else None,
            start_time,
            counts.tally,
        )

    def _on_report_to_master(self, client_id: str, data: dict[str, Any]) -> None:
        data[_REPORT_KEY] = self.to_dict()
        self.reset()

    def _on_worker_report(self, client_id: str, data: dict[str, Any]) -> None:
        if _REPORT_KEY in data:
            try:
                self.merge_dict(data[_REPORT_KEY])
            except ConfigError as e:
                log.error("dropped a report of worker %s: %s", client_id, e)

    def merge(self, other: RunRecorder) -> None:
        self.merge_dict(other.to_dict())

    def merge_dict(self, data: dict[str, Any]) -> None:
        """Add a report made by `to_dict` (a worker's, since its previous report)."""
        self.heat.merge_dict(data["heat"])
        if "load" in data:
            self.load.merge_dict(data["load"])
        for request_type, name, counts in data["operations"]:
            op = (request_type, name)
            self.operations.setdefault(op, OperationCounts()).merge(
                OperationCounts.from_dict(counts)
            )

    def hottest(self, k: int = 10) -> list[dict[str, Any]]:
        """The ``k`` hottest partition keys over all tables, with their share of requests.

        A key's share is its estimated requests over all key touches of its table (or index).
        """
        rows: list[dict[str, Any]] = []
        for table, index, sketch, _ in self.heat.scopes():
            for hitter in sketch.top(k):
                rows.append(
                    {
                        "table": key_scope(table, index),
                        "key": hitter.key,
                        "requests": hitter.count,
                        "error": hitter.error,
                        "share": hitter.count / sketch.total if sketch.total else 0.0,
                    }
                )
        rows.sort(key=lambda row: (-row["share"], -row["requests"], row["key"]))
        return rows[:k]

    def to_dict(self) -> dict[str, Any]:
        return {
            "operations": [
                [request_type, name, counts.to_dict()]
                for (request_type, name), counts in self.operations.items()
            ],
            "heat": self.heat.to_dict(),
            "load": self.load.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], heat: HeatConfig | None = None) -> RunRecorder:
        recorder = cls(heat=heat or HeatConfig(buckets=data["heat"]["buckets"]))
        recorder.merge_dict(data)
        return recorder
