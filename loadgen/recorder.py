"""What Locust's own stats do not keep: throttles, retries and the hottest partition keys.

`RunRecorder` is a request-event listener. Per access pattern it counts throttled attempts,
retries, final failures by error code and unprocessed batch items; per table (and index) it
feeds every partition key a request touched into a Space-Saving sketch. In Locust's
distributed mode each worker sends what it gathered since its last report with Locust's own
worker report, and the master merges it, so nothing is counted twice.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from loadgen.sketch import SpaceSaving

__all__ = ["OperationCounts", "RunRecorder", "key_scope"]

_REPORT_KEY = "loadgen_recorder"


def key_scope(table: str, index: str | None) -> str:
    """The label under which a table's (or a GSI's) partition keys are counted."""
    return table if index is None else f"{table}/{index}"


@dataclass
class OperationCounts:
    """Counts for one (operation, access pattern) pair."""

    requests: int = 0
    attempts: int = 0
    retries: int = 0
    throttled_attempts: int = 0
    unprocessed: int = 0
    failures: Counter[str] = field(default_factory=Counter)

    def merge(self, other: OperationCounts) -> None:
        self.requests += other.requests
        self.attempts += other.attempts
        self.retries += other.retries
        self.throttled_attempts += other.throttled_attempts
        self.unprocessed += other.unprocessed
        self.failures.update(other.failures)

    def to_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "attempts": self.attempts,
            "retries": self.retries,
            "throttled_attempts": self.throttled_attempts,
            "unprocessed": self.unprocessed,
            "failures": dict(self.failures),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OperationCounts:
        return cls(
            requests=data["requests"],
            attempts=data["attempts"],
            retries=data["retries"],
            throttled_attempts=data["throttled_attempts"],
            unprocessed=data["unprocessed"],
            failures=Counter(data["failures"]),
        )


class RunRecorder:
    """Listens to request events and keeps per-pattern counts and per-table hot keys.

    recorder = RunRecorder.register(environment)
    ...
    recorder.hottest(10)
    """

    def __init__(self, sketch_capacity: int = 1000) -> None:
        self.sketch_capacity = sketch_capacity
        self.operations: dict[tuple[str, str], OperationCounts] = {}
        self.keys: dict[str, SpaceSaving] = {}

    @classmethod
    def register(cls, environment: Any, sketch_capacity: int = 1000) -> RunRecorder:
        recorder = cls(sketch_capacity)
        events = environment.events
        events.request.add_listener(recorder._on_request)
        events.report_to_master.add_listener(recorder._on_report_to_master)
        events.worker_report.add_listener(recorder._on_worker_report)
        return recorder

    def _on_request(
        self,
        *,
        request_type: str,
        name: str,
        context: dict[str, Any] | None = None,
        exception: BaseException | None = None,
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
        counts.unprocessed += context["unprocessed"]
        if exception is not None:
            counts.failures[context.get("error_code") or type(exception).__name__] += 1
        table = context["table"]
        self._count_keys(key_scope(table, context.get("index")), context["partition_keys"])
        for index, keys in context.get("index_keys", {}).items():
            self._count_keys(key_scope(table, index), keys)

    def _count_keys(self, scope: str, keys: list[str | None]) -> None:
        sketch = self.keys.get(scope)
        if sketch is None:
            sketch = self.keys[scope] = SpaceSaving(self.sketch_capacity)
        for key in keys:
            if key is not None:
                sketch.add(key)

    def _on_report_to_master(self, client_id: str, data: dict[str, Any]) -> None:
        data[_REPORT_KEY] = self.to_dict()
        self.operations = {}
        self.keys = {}

    def _on_worker_report(self, client_id: str, data: dict[str, Any]) -> None:
        if _REPORT_KEY in data:
            self.merge(RunRecorder.from_dict(data[_REPORT_KEY]))

    def merge(self, other: RunRecorder) -> None:
        for op, counts in other.operations.items():
            self.operations.setdefault(op, OperationCounts()).merge(counts)
        for scope, sketch in other.keys.items():
            mine = self.keys.get(scope)
            if mine is None:
                self.keys[scope] = sketch
            else:
                mine.merge(sketch)

    def hottest(self, k: int = 10) -> list[dict[str, Any]]:
        """The ``k`` hottest partition keys over all tables, with their share of requests.

        A key's share is its estimated requests over all key touches of its table (or index).
        """
        rows: list[dict[str, Any]] = []
        for scope, sketch in self.keys.items():
            for hitter in sketch.top(k):
                rows.append(
                    {
                        "table": scope,
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
            "keys": {scope: sketch.to_dict() for scope, sketch in self.keys.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunRecorder:
        recorder = cls()
        for request_type, name, counts in data["operations"]:
            recorder.operations[(request_type, name)] = OperationCounts.from_dict(counts)
        for scope, sketch in data["keys"].items():
            recorder.keys[scope] = SpaceSaving.from_dict(sketch)
        return recorder
