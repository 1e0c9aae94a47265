"""Prometheus metrics of a run: the heat, hot keys, latencies, retries and throttles.

A custom collector (`HeatCollector`) computes metric families from the run's `RunRecorder`
at each scrape, and prometheus_client's own HTTP server serves them on ``/metrics``, bound
to loopback unless told otherwise. One call from a locustfile does it all:

    from locust import events
    from loadgen.heat import exporter

    @events.init.add_listener
    def on_init(environment, **kwargs):
        exporter.register(environment, port=9646)

Workloads built on `loadgen.workload.register` need no code: ``--metrics-port 9646``. In
Locust's distributed mode only the master serves: workers send their counts with Locust's worker
reports and the master's recorder merges them, so every request is counted once. (A worker
resets its counts after each report, so its own counters would not be monotonic.)

Metrics, all prefixed ``partition_heat_``:

=====================================================  =====================================
``bucket_requests_total``                              table, index, access, bucket
``bucket_throttled_attempts_total``                    table, index, access, bucket
``bucket_consumed_read_units_total``                   table, index, bucket (read lanes)
``bucket_consumed_write_units_total``                  table, index, bucket (write lanes)
``key_requests_total``                                 table, index, key (top K)
``key_consumed_units_total``                           table, index, key (top K)
``key_requests_error_bound``, ``key_consumed_units_error_bound``   table, index
``requests_total``, ``attempts_total``, ``retries_total``,         operation, pattern
``throttled_attempts_total``, ``unprocessed_items_total``
``failures_total``                                     operation, pattern, error_code
``throttled_attempts_by_reason_total``,                operation, pattern, table, index,
``unprocessed_items_by_reason_total``                  reason, cause
``cancellation_reasons_total``                         operation, pattern, code
``request_duration_seconds`` (histogram, 1 ms to 10 s) operation, pattern
``buckets``                                            (the number of hash buckets B)
``users``                                              (Locust users running)
``run_info``                                           workload (always 1)
``load_offered_total``, ``load_achieved_total``,       operation (open model only)
``load_dropped_total``
=====================================================  =====================================

``index`` is empty for the table itself; ``bucket`` is 0 to B-1, or ``none`` for requests
without a known key (a Scan); ``access`` is read or write. ``reason`` is DynamoDB's
``ThrottlingReason`` (`loadgen.refusals.THROTTLING_REASONS`), ``cause`` the partition model's
(``partition``, ``capacity``, ``provisioned``, ``account``, ``maximum``, told by the emulator),
each ``not reported`` where the target said nothing; ``table`` and ``index`` are those the
throttle's resource names (empty when it names none). ``code`` is a cancelled transaction's
reason (``ConditionalCheckFailed``, ``TransactionConflict``, ...). Error messages are never
labels: they are in the results file.

``users`` and ``run_info`` come from the Locust environment given to `HeatCollector`
(``register`` gives it): dashboards put the users beside the heat they cause, and select
instances by workload through ``run_info`` (an info metric rather than a label on every
series, as ``node_uname_info``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    InfoMetricFamily,
    Metric,
)

from loadgen.errors import ConfigError
from loadgen.heat.heatmap import FIELDS
from loadgen.heat.recorder import LATENCY_BUCKETS_S, OperationCounts, RunRecorder
from loadgen.refusals import (
    CANCELLATION_CODES,
    CAUSES,
    NOT_REPORTED,
    THROTTLING_REASONS,
    scope_of_arn,
)

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "HeatCollector",
    "MetricsServer",
    "register",
    "workload_name",
]

log = logging.getLogger(__name__)

DEFAULT_PORT = 9646
"""Port of ``register`` unless told otherwise (the one Locust exporters commonly use)."""
DEFAULT_HOST = "127.0.0.1"
"""Loopback: keys are test data; expose them beyond the machine only on purpose."""

_PREFIX = "partition_heat_"

# The reason, cause and cancellation labels take a fixed set of values: DynamoDB's 16
# ThrottlingReasons, the model's 5 causes, the 6 cancellation codes, each with "not
# reported", and "other" for a word outside them (a reason newer than this list, an engine's
# own). A label with whatever a target sends would let one misbehaving target grow the
# series without end; the results file keeps its words as given.
REASON_VALUES = (*THROTTLING_REASONS, NOT_REPORTED, "other")
CAUSE_VALUES = (*CAUSES, NOT_REPORTED, "other")
CANCELLATION_VALUES = (*CANCELLATION_CODES, "other")


class HeatCollector:
    """Metric families computed from a `RunRecorder` at each scrape.

    registry = CollectorRegistry()
    registry.register(HeatCollector(recorder))
    generate_latest(registry)

    Given Locust's ``environment`` too, it also exports the users running (``users``) and
    the workload (``run_info``).

    Bounded series: keys never become labels except the top K per table or index, so the
    number of series depends on the tables, indexes, access patterns, error codes and the
    bucket count, never on the number of distinct keys (see `series_bound`). That is why
    this is a collector over bounded state rather than one labelled child per key.
    """

    def __init__(self, recorder: RunRecorder, environment: Any = None) -> None:
        self.recorder = recorder
        self.environment = environment

    def collect(self) -> Iterator[Metric]:
        # Under Locust this runs in a greenlet between requests (gevent is cooperative and
        # nothing here yields), so it reads a consistent state without locks. Elsewhere
        # (plain threads) the loops work on copies of the containers, not the live ones.
        for family in (
            *self._heat(),
            *self._keys(),
            *self._operations(),
            *self._refusals(),
            *self._load(),
        ):
            if family.samples:  # a family without samples is noise in the exposition
                yield family
        yield GaugeMetricFamily(
            _PREFIX + "buckets",
            "Hash buckets per table or index (bucket b holds hashes in [b, b+1) * 2^64 / B)",
            value=self.recorder.heat.config.buckets,
        )
        if self.environment is not None:
            yield from self._run()

    def _run(self) -> Iterator[Metric]:
        environment = self.environment
        runner = environment.runner
        # On a master, user_count adds up the users the workers report.
        users = runner.user_count if runner is not None else 0
        yield GaugeMetricFamily(_PREFIX + "users", "Locust users running", value=users)
        yield InfoMetricFamily(
            _PREFIX + "run",
            "The run's workload (the locustfile's name)",
            value={"workload": workload_name(environment)},
        )

    def _heat(self) -> Iterator[Metric]:
        heat = self.recorder.heat
        buckets = heat.config.buckets
        labels = ["table", "index", "access", "bucket"]
        requests = CounterMetricFamily(
            _PREFIX + "bucket_requests_total",
            "Partition-key touches per hash bucket (a batch of n keys counts n)",
            labels=labels,
        )
        throttled = CounterMetricFamily(
            _PREFIX + "bucket_throttled_attempts_total",
            "Throttled attempts per hash bucket, counted for each key the attempt touched",
            labels=labels,
        )
        units = {
            "read": CounterMetricFamily(
                _PREFIX + "bucket_consumed_read_units_total",
                "Read capacity units consumed per hash bucket",
                labels=["table", "index", "bucket"],
            ),
            "write": CounterMetricFamily(
                _PREFIX + "bucket_consumed_write_units_total",
                "Write capacity units consumed per hash bucket",
                labels=["table", "index", "bucket"],
            ),
        }
        for lane in list(heat.lanes.values()):
            counts = lane.counts()
            index = lane.index or ""
            for bucket in range(buckets + 1):
                i = FIELDS * bucket
                name = str(bucket)
                if bucket == buckets:
                    if not (counts[i] or counts[i + 1] or counts[i + 2]):
                        continue
                    name = "none"
                requests.add_metric([lane.table, index, lane.access, name], counts[i])
                units[lane.access].add_metric([lane.table, index, name], counts[i + 1])
                throttled.add_metric([lane.table, index, lane.access, name], counts[i + 2])
        yield requests
        yield throttled
        yield from units.values()

    def _keys(self) -> Iterator[Metric]:
        heat = self.recorder.heat
        top_k = heat.config.top_k
        by_requests = CounterMetricFamily(
            _PREFIX + "key_requests_total",
            f"Requests of the top {top_k} partition keys per table or index (Space-Saving "
            "estimate: over by at most the error bound)",
            labels=["table", "index", "key"],
        )
        by_units = CounterMetricFamily(
            _PREFIX + "key_consumed_units_total",
            f"Consumed read and write units of the top {top_k} partition keys per table or "
            "index (Space-Saving estimate: over by at most the error bound)",
            labels=["table", "index", "key"],
        )
        requests_error = GaugeMetricFamily(
            _PREFIX + "key_requests_error_bound",
            "Most that any key's request estimate exceeds its true count",
            labels=["table", "index"],
        )
        units_error = GaugeMetricFamily(
            _PREFIX + "key_consumed_units_error_bound",
            "Most that any key's consumed-units estimate exceeds its true figure",
            labels=["table", "index"],
        )
        for table, index, sketch_requests, sketch_units in list(heat.scopes()):
            scope = [table, index or ""]
            for hitter in sketch_requests.top(top_k):
                by_requests.add_metric([*scope, hitter.key], hitter.count)
            for hitter in sketch_units.top(top_k):
                by_units.add_metric([*scope, hitter.key], hitter.count)
            requests_error.add_metric(scope, sketch_requests.min_count())
            units_error.add_metric(scope, sketch_units.min_count())
        yield from (by_requests, by_units, requests_error, units_error)

    def _operations(self) -> Iterator[Metric]:
        labels = ["operation", "pattern"]
        families = {
            field: CounterMetricFamily(_PREFIX + f"{field}_total", text, labels=labels)
            for field, text in (
                ("requests", "Calls, as Locust counts them"),
                ("attempts", "HTTP attempts, retries included"),
                ("retries", "Attempts the SDK retried"),
                ("throttled_attempts", "Attempts answered with a throttle"),
                ("unprocessed_items", "Batch items returned unprocessed"),
            )
        }
        failures = CounterMetricFamily(
            _PREFIX + "failures_total",
            "Calls that failed after the SDK's retries, by error code",
            labels=[*labels, "error_code"],
        )
        latency = HistogramMetricFamily(
            _PREFIX + "request_duration_seconds",
            "Call duration, retries included",
            labels=labels,
        )
        for (operation, pattern), counts in sorted(self.recorder.operations.items()):
            values = [operation, pattern]
            families["requests"].add_metric(values, counts.requests)
            families["attempts"].add_metric(values, counts.attempts)
            families["retries"].add_metric(values, counts.retries)
            families["throttled_attempts"].add_metric(values, counts.throttled_attempts)
            families["unprocessed_items"].add_metric(values, counts.unprocessed)
            for code, n in sorted(counts.failures.items()):
                failures.add_metric([*values, code], n)
            buckets = [(_le(bound), float(count)) for bound, count in counts.latency.cumulative()]
            latency.add_metric(values, buckets, counts.latency.sum_ms / 1000.0)
        yield from families.values()
        yield failures
        yield latency

    def _refusals(self) -> Iterator[Metric]:
        labels = ["operation", "pattern", "table", "index", "reason", "cause"]
        attempts = CounterMetricFamily(
            _PREFIX + "throttled_attempts_by_reason_total",
            "Throttled attempts by the target's ThrottlingReason and the partition model's "
            "cause (an attempt refused on several tables or indexes counts for each)",
            labels=labels,
        )
        items = CounterMetricFamily(
            _PREFIX + "unprocessed_items_by_reason_total",
            "Batch items left unprocessed, by the ThrottlingReason and cause the emulator gave",
            labels=labels,
        )
        cancellations = CounterMetricFamily(
            _PREFIX + "cancellation_reasons_total",
            "Actions of cancelled transactions, by their CancellationReasons code",
            labels=["operation", "pattern", "code"],
        )
        for (operation, pattern), counts in sorted(self.recorder.operations.items()):
            for (table, index, reason, cause, item), n in sorted(_throttles(counts).items()):
                family = items if item else attempts
                family.add_metric([operation, pattern, table, index, reason, cause], n)
            cancelled: dict[str, int] = {}
            for code, n in list(counts.cancellations.items()):
                code = code if code in CANCELLATION_VALUES else "other"
                cancelled[code] = cancelled.get(code, 0) + n
            for code, n in sorted(cancelled.items()):
                cancellations.add_metric([operation, pattern, code], n)
        yield from (attempts, items, cancellations)

    def _load(self) -> Iterator[Metric]:
        # The open model's arrivals: one series per operation of the workload's mix.
        families = [
            CounterMetricFamily(_PREFIX + f"load_{field}_total", text, labels=["operation"])
            for field, text in (
                ("offered", "Arrivals the open model offered (launched or dropped)"),
                ("achieved", "Arrivals that completed, whatever their outcome"),
                ("dropped", "Arrivals dropped: no free in-flight slot, or the clock fell behind"),
                ("answered", "Arrivals whose first attempt was answered, throttled or not"),
            )  # in the order of `LoadLedger.operations`' counts
        ]
        for operation, counts in sorted(self.recorder.load.operations.items()):
            for family, count in zip(families, counts, strict=True):
                family.add_metric([operation], count)
        yield from families

    def series_bound(self) -> int:
        """The most series `collect` can yield for the tables, patterns and codes seen so far.

        Per lane (table or index, read or write) 3 x (B + 1); per table or index 2 x K + 2;
        per access pattern 5 counters + the histogram's len(LATENCY_BUCKETS_S) + 3 series +
        one per error code + one per (table or index, reason, cause, attempt or batch item)
        throttled + one per cancellation code; per operation of an open-model run 4 (offered,
        achieved, dropped, answered); plus 3 (the bucket count, the users, the run's info). No
        term grows with the number of distinct keys, and the reasons and causes are bounded sets
        (`REASON_VALUES`, `CAUSE_VALUES`, `CANCELLATION_VALUES`).
        """
        heat = self.recorder.heat
        per_pattern = 5 + len(LATENCY_BUCKETS_S) + 3
        return (
            len(heat.lanes) * FIELDS * (heat.config.buckets + 1)
            + len(heat.sketches) * (2 * heat.config.top_k + 2)
            + sum(
                per_pattern + len(c.failures) + len(_throttles(c)) + len(c.cancellations)
                for c in self.recorder.operations.values()
            )
            + 4 * len(self.recorder.load.operations)
            + 3
        )


def _throttles(counts: OperationCounts) -> dict[tuple[str, str, str, str, bool], int]:
    """A pattern's throttles by (table, index, reason, cause, batch item?), each label from
    its bounded set."""
    found: dict[tuple[str, str, str, str, bool], int] = {}
    for (exception, reason, resource, cause), n in list(counts.throttles.items()):
        table, index = scope_of_arn(resource) or ("", None)
        key = (
            table,
            index or "",
            _bounded(reason, REASON_VALUES),
            _bounded(cause, CAUSE_VALUES),
            exception.startswith("Unprocessed"),
        )
        found[key] = found.get(key, 0) + n
    return found


def _bounded(said: str, values: tuple[str, ...]) -> str:
    if not said:
        return NOT_REPORTED
    return said if said in values else "other"


def workload_name(environment: Any) -> str:
    """The workload an environment runs: its locustfile's name (``workloads/counter.py``:
    ``counter``), else its user classes' names."""
    locustfile = getattr(environment, "locustfile", None)
    if locustfile:
        # Locust accepts a comma-separated list of locustfiles: name the run by the first.
        return Path(str(locustfile).split(",")[0]).stem
    classes = getattr(environment, "user_classes", None) or []
    return ",".join(sorted(c.__name__ for c in classes)) or "unknown"


def _le(bound: float) -> str:
    return "+Inf" if bound == float("inf") else repr(bound)


class MetricsServer:
    """prometheus_client's HTTP server for one registry, which `close` stops.

    server = MetricsServer(registry, "127.0.0.1", 0)   # port 0: any free port
    server.url                                          # http://127.0.0.1:41234/metrics
    server.close(linger=2.0)                            # let a last scrape see the end
    """

    def __init__(self, registry: CollectorRegistry, host: str, port: int) -> None:
        if not 0 <= port <= 65535:
            raise ConfigError(f"metrics port must be 0 to 65535 (got {port})")
        try:
            self._httpd, self._thread = start_http_server(port, addr=host, registry=registry)
        except OSError as e:
            raise ConfigError(f"cannot serve metrics on {host}:{port}: {e.strerror or e}") from None
        self.host = host
        self.port = int(self._httpd.server_address[1])
        self._closed = False

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    def close(self, linger: float = 0.0) -> None:
        """Stop serving, after ``linger`` seconds so that a last scrape sees the final counts."""
        if self._closed:
            return
        self._closed = True
        if linger > 0:
            time.sleep(linger)
        self._httpd.shutdown()
        self._httpd.server_close()


def register(
    environment: Any,
    port: int = DEFAULT_PORT,
    host: str = DEFAULT_HOST,
    *,
    buckets: int | None = None,
    top_k: int | None = None,
    hash_keys: str | bytes | None = None,
    capacity_source: str | None = None,
    linger: float = 0.0,
) -> MetricsServer | None:
    """Count heat in ``environment`` and serve it on ``http://host:port/metrics``.

    Settings not given come from Locust's parsed options (``--heat-buckets``, ``--top-keys``,
    ``--hash-keys``, ``--consumed-capacity``) or their defaults. On a Locust worker nothing
    is served (the master serves the merged view) and None is returned. The server stops
    when Locust quits, ``linger`` seconds later. Calling again returns the running server.
    Raises `ConfigError` for bad settings or a port that cannot be bound.
    """
    from locust.runners import WorkerRunner

    recorder = RunRecorder.of(
        environment,
        buckets=buckets,
        top_k=top_k,
        hash_keys=hash_keys,
        capacity_source=capacity_source,
    )
    if isinstance(environment.runner, WorkerRunner):
        return None
    server: MetricsServer | None = environment.__dict__.get("loadgen_metrics")
    if server is not None:
        return server
    registry = CollectorRegistry()
    registry.register(HeatCollector(recorder, environment))
    server = environment.loadgen_metrics = MetricsServer(registry, host, port)
    log.info("Serving Prometheus metrics on %s", server.url)

    def on_quitting(**kwargs: Any) -> None:
        server.close(linger)

    environment.events.quitting.add_listener(on_quitting)
    return server
