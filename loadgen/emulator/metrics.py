"""The emulator's Prometheus metrics: the partition model's state, computed at each scrape.

``GET /metrics`` on the emulator serves them from `ModelCollector`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector

from loadgen.model.partitions import PartitionModel

__all__ = ["ModelCollector", "answered"]

_METRIC = "partition_heat_emulator"


class Source(Protocol):
    """What the collector reads: the partition model and the requests answered so far."""

    @property
    def model(self) -> PartitionModel: ...

    @property
    def requests(self) -> Mapping[tuple[str, str], int]: ...


class ModelCollector(Collector):
    """Prometheus metric families computed from the partition model at each scrape.

    The series are bounded: tables and their GSIs are few, and so are their partitions (a
    table has as many as its capacity needs, plus the splits for heat, each of which waits
    minutes); keys never appear in labels.
    """

    def __init__(self, emulator: Source) -> None:
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
            "size": GaugeMetricFamily(
                f"{p}_table_size_bytes",
                "The table's data size as the emulator saw it written (0 for a GSI).",
                labels=space,
            ),
            "buffered": GaugeMetricFamily(
                f"{p}_gsi_buffered_write_units",
                "A GSI's index writes taken but not yet applied (its write buffer's content).",
                labels=[*space, "reason"],
            ),
            "buffer": GaugeMetricFamily(
                f"{p}_gsi_buffer_write_units",
                "What a GSI's write buffer holds at most before it pushes back on its table.",
                labels=space,
            ),
            "full_in": GaugeMetricFamily(
                f"{p}_gsi_buffer_full_in_seconds",
                "Seconds until a GSI's write buffer is full at the last minute's rate "
                "(only while it fills faster than a split for heat would help).",
                labels=space,
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
            families["size"].add_metric(labels, stats.size_bytes)
            if stats.buffer_write_units:
                reason = [*labels, stats.buffer_reason]
                families["buffered"].add_metric(reason, stats.buffered_write_units)
                families["buffer"].add_metric(labels, stats.buffer_write_units)
                if stats.buffer_full_in_s is not None:
                    families["full_in"].add_metric(labels, stats.buffer_full_in_s)
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


def buffers(exposition: str) -> list[dict[str, Any]]:
    """Each GSI's write buffer, from the emulator's ``GET /metrics`` text: what it holds, at
    most, the reason it refuses with once full, and the seconds until it is full (None where
    it is not filling), as the partition model reports them (`ThroughputStats`)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for family in text_string_to_metric_families(exposition):
        for sample in family.samples:
            name = sample.name
            if not name.startswith(f"{_METRIC}_gsi_buffer"):
                continue
            where = (sample.labels["table"], sample.labels["index"])
            row = found.setdefault(
                where,
                {"table": where[0], "index": where[1], "full_in_s": None, "reason": None},
            )
            if name == f"{_METRIC}_gsi_buffered_write_units":
                row["buffered_write_units"] = sample.value
                row["reason"] = sample.labels.get("reason")
            elif name == f"{_METRIC}_gsi_buffer_write_units":
                row["buffer_write_units"] = sample.value
            elif name == f"{_METRIC}_gsi_buffer_full_in_seconds":
                row["full_in_s"] = sample.value
    return list(found.values())


def answered(exposition: str) -> dict[str, int]:
    """Requests the emulator answered, by outcome (``forwarded``, ``throttled``, ``rejected``),
    from its ``GET /metrics`` text: every attempt a client made, counted as it was answered.

        >>> answered('partition_heat_emulator_requests_total{operation="PutItem",'
        ...          'outcome="throttled"} 3.0')
        {'forwarded': 0, 'throttled': 3, 'rejected': 0}
    """
    counts = dict.fromkeys(("forwarded", "throttled", "rejected"), 0)
    for family in text_string_to_metric_families(exposition):
        for sample in family.samples:
            if sample.name == f"{_METRIC}_requests_total":
                outcome = sample.labels["outcome"]
                counts[outcome] = counts.get(outcome, 0) + round(sample.value)
    return counts
