"""The Partition heat dashboard: where in the key space the load lands, and what it costs.

Reads the harness's own metrics (``partition_heat_*``, served by ``loadgen run
--metrics-port`` or a Locust master with ``--metrics-port``; see loadgen/exporter.py). The
top rows are the cause (users, request rate, throttles and what the target said of them),
the middle the heat (one heatmap per signal, hash bucket against time), the bottom the
consequences (hot keys, latency, errors).

Reading the heatmaps: a bright horizontal band is a hot key or partition; vertical stripes
are bursts; an even glow is a key design that spreads the load. A monotonically increasing
key, the diagonal of a key-ordered heatmap, shows here (rows are hash buckets, as DynamoDB
places keys) as a short band that jumps to another row each time the key moves on.
"""

from __future__ import annotations

from grafanalib import core

from . import common
from .common import (
    DATASOURCE,
    RANGE,
    RATE,
    grid,
    heatmap,
    index_variable,
    on_right_axis,
    query_variable,
    row,
    target,
    targets,
    timeseries,
)

__all__ = ["dashboard"]

INSTANCE = 'instance=~"$instance"'
SCOPE = f'{INSTANCE}, table=~"$table", index=~"$index"'
# Requests without a key (Scans) have bucket "none": not a row of the key space.
BUCKETS = f'{SCOPE}, bucket!="none"'


def _heat(metric: str) -> str:
    return f"sum by (bucket) (rate(partition_heat_{metric}{{{BUCKETS}}}[{RATE}]))"


def _per_pattern(metric: str) -> str:
    return f"sum by (pattern) (rate(partition_heat_{metric}{{{INSTANCE}}}[{RATE}]))"


_KEYS = f"last_over_time(partition_heat_key_{{metric}}_total{{{{{SCOPE}}}}}[{RANGE}])"
_TOTAL_REQUESTS = f"last_over_time(partition_heat_bucket_requests_total{{{SCOPE}}}[{RANGE}])"
# Read and write units add up; a table may have only one kind ("or vector(0)").
_TOTAL_UNITS = " + ".join(
    f"(sum(last_over_time(partition_heat_bucket_consumed_{kind}_units_total{{{SCOPE}}}"
    f"[{RANGE}])) or vector(0))"
    for kind in ("read", "write")
)


def _by_reason(by: str, function: str, window: str) -> str:
    """Throttled attempts by what the target said, summed by the labels ``by``."""
    return (
        f"sum by ({by}) ({function}(partition_heat_throttled_attempts_by_reason_total"
        f"{{{INSTANCE}}}[{window}]))"
    )


def _top(metric: str) -> str:
    # last_over_time: the counters count from the start of the run, and the run may be
    # over (its exporter gone) by the end of the dashboard's range.
    return f"topk(10, sum by (key) ({_KEYS.format(metric=metric)}))"


def _latency(quantile: float) -> str:
    return (
        f"histogram_quantile({quantile}, sum by (le, operation) "
        f"(rate(partition_heat_request_duration_seconds_bucket{{{INSTANCE}}}[{RATE}])))"
    )


variables = [
    query_variable(
        "workload",
        "Workload",
        "label_values(partition_heat_run_info, workload)",
        include_all=True,
    ),
    # An instance is one exporter: a loadgen run or a Locust master. The workload picks them
    # through the run's info metric, so no other series needs a workload label.
    query_variable(
        "instance",
        "Instance",
        'label_values(partition_heat_run_info{workload=~"$workload"}, instance)',
        include_all=True,
        multi=True,
    ),
    query_variable(
        "table",
        "Table",
        f"label_values(partition_heat_bucket_requests_total{{{INSTANCE}}}, table)",
    ),
    index_variable(f'partition_heat_bucket_requests_total{{{INSTANCE}, table=~"$table"}}'),
]

HEATMAP_NOTE = (
    " Rows are the {buckets} hash buckets of the partition key (bucket b holds the keys a "
    "modeled partition b would), columns are time. A bright horizontal band is a hot key or "
    "partition; vertical stripes are bursts. A monotonically increasing key (a time bucket), "
    "a diagonal where rows follow key order, shows here as a band that jumps to another row "
    "each time the key moves on: keys are hashed, as DynamoDB hashes them."
).format(buckets="B (--heat-buckets, 256 by default)")

panels = [
    row("Cause: load", 0),
    timeseries(
        "Users and request rate",
        "Locust users running (right axis) against the calls they make and the throttled "
        "attempts those calls meet: a throttle line that rises with the users is the load "
        "finding a ceiling.",
        targets(
            (f"sum(partition_heat_users{{{INSTANCE}}})", "users"),
            (f"sum(rate(partition_heat_requests_total{{{INSTANCE}}}[{RATE}]))", "requests/s"),
            (
                f"sum(rate(partition_heat_throttled_attempts_total{{{INSTANCE}}}[{RATE}]))",
                "throttled attempts/s",
            ),
        ),
        grid(0, 1, 12, 8),
        unit="reqps",
        overrides=[on_right_axis("users", "none")],
    ),
    timeseries(
        "Throttle ratio",
        "Throttled attempts over all attempts (SDK retries included), per access pattern "
        "and overall. The SDK retries throttles, so a pattern can throttle heavily and still "
        "succeed: this is where it shows.",
        targets(
            (
                f"{_per_pattern('throttled_attempts_total')} / {_per_pattern('attempts_total')}",
                "{{pattern}}",
            ),
            (
                f"sum(rate(partition_heat_throttled_attempts_total{{{INSTANCE}}}[{RATE}])) / "
                f"sum(rate(partition_heat_attempts_total{{{INSTANCE}}}[{RATE}]))",
                "all",
            ),
        ),
        grid(12, 1, 12, 8),
        unit="percentunit",
    ),
    timeseries(
        "Throttled attempts by reason",
        "Throttled attempts per second by what the target said: DynamoDB's ThrottlingReason "
        "(table or index, read or write, and the limit) and, in brackets, the partition "
        "model's cause, which the emulator sends beside it. DynamoDB gives one reason, "
        "...KeyRangeThroughputExceeded, both for a hot partition (cause: partition; shard the "
        "key) and for an on-demand table or index asked for more than it has grown to "
        "(cause: capacity; raise its warm throughput): the cause tells them apart. Against "
        "DynamoDB itself the cause is 'not reported', and so is a reason the target did not "
        "give: never a guess.",
        targets((_by_reason("reason, cause", "rate", RATE), "{{reason}} ({{cause}})")),
        grid(0, 9, 12, 8),
        unit="reqps",
    ),
    core.Table(
        title="Throttles by reason, per access pattern",
        description="Throttled attempts since the start of the run, per access pattern and "
        "the table or index the throttle named (the index itself when a GSI's write capacity "
        "held back the table's write), by DynamoDB's ThrottlingReason and the partition "
        "model's cause ('not reported' where the target gave none).",
        dataSource=DATASOURCE,
        targets=targets(
            (_by_reason("pattern, table, index, reason, cause", "last_over_time", RANGE), ""),
            instant=True,
        ),
        gridPos=grid(12, 9, 12, 8),
        transformations=[
            {
                "id": "organize",
                "options": {
                    "excludeByName": {"Time": True},
                    "indexByName": {
                        "pattern": 0,
                        "table": 1,
                        "index": 2,
                        "reason": 3,
                        "cause": 4,
                        "Value": 5,
                    },
                    "renameByName": {
                        "pattern": "Access pattern",
                        "table": "Table",
                        "index": "Index",
                        "reason": "Reason",
                        "cause": "Cause",
                        "Value": "Throttled attempts",
                    },
                },
            },
            {"id": "sortBy", "options": {"sort": [{"field": "Throttled attempts", "desc": True}]}},
        ],
    ),
    row("Heat: key space over time", 17),
    heatmap(
        "Requests per bucket",
        "Partition-key touches per second (a batch of n keys counts n)." + HEATMAP_NOTE,
        _heat("bucket_requests_total"),
        grid(0, 18, 12, 10),
        unit="reqps",
    ),
    heatmap(
        "Throttled attempts per bucket",
        "Throttled attempts per second, counted for every key an attempt touched. Heat "
        "without throttles is fine; a band here is the partition that is short of capacity."
        + HEATMAP_NOTE,
        _heat("bucket_throttled_attempts_total"),
        grid(12, 18, 12, 10),
        unit="reqps",
    ),
    heatmap(
        "Consumed write units per bucket",
        "Write capacity units per second. A partition serves at most 1,000 (times the "
        "emulator's scale)." + HEATMAP_NOTE,
        _heat("bucket_consumed_write_units_total"),
        grid(0, 28, 12, 10),
        unit="short",
    ),
    heatmap(
        "Consumed read units per bucket",
        "Read capacity units per second. A partition serves at most 3,000 (times the "
        "emulator's scale)." + HEATMAP_NOTE,
        _heat("bucket_consumed_read_units_total"),
        grid(12, 28, 12, 10),
        unit="short",
    ),
    row("Consequences: hot keys, latency, errors", 38),
    core.Table(
        title="Hottest partition keys",
        description="The ten keys with the most requests in the table or index, since the "
        "start of the run, and their share of its key touches and consumed units. Counts "
        "are Space-Saving estimates: over by at most partition_heat_key_requests_error_bound.",
        dataSource=DATASOURCE,
        targets=targets(
            (_top("requests"), ""),
            (f"{_top('requests')} / scalar(sum({_TOTAL_REQUESTS}))", ""),
            (_top("consumed_units"), ""),
            (f"{_top('consumed_units')} / scalar({_TOTAL_UNITS})", ""),
            instant=True,
        ),
        gridPos=grid(0, 39, 12, 10),
        transformations=[
            # One row per key: the four instant queries joined on it.
            {"id": "merge", "options": {}},
            {
                "id": "organize",
                "options": {
                    "excludeByName": {"Time": True},
                    "renameByName": {
                        "key": "Key",
                        "Value #A": "Requests",
                        "Value #B": "Share of requests",
                        "Value #C": "Consumed units",
                        "Value #D": "Share of units",
                    },
                },
            },
            {"id": "sortBy", "options": {"sort": [{"field": "Requests", "desc": True}]}},
        ],
        overrides=[
            {
                "matcher": {"id": "byRegexp", "options": "Share.*"},
                "properties": [
                    {"id": "unit", "value": "percentunit"},
                    {"id": "min", "value": 0},
                    {"id": "max", "value": 1},
                    {"id": "custom.cellOptions", "value": {"type": "gauge", "mode": "gradient"}},
                ],
            }
        ],
    ),
    timeseries(
        "Latency p50 / p95 / p99 by operation",
        "Call duration, SDK retries included: a throttled call retried with backoff shows "
        "here as a p99 far above the p50.",
        [
            target(_latency(0.5), "{{operation}} p50", ref="A"),
            target(_latency(0.95), "{{operation}} p95", ref="B"),
            target(_latency(0.99), "{{operation}} p99", ref="C"),
        ],
        grid(12, 39, 12, 10),
        unit="s",
    ),
    timeseries(
        "Requests by access pattern",
        "Calls per second per access pattern, stacked: the mix the heat above comes from.",
        targets((_per_pattern("requests_total"), "{{pattern}}")),
        grid(0, 49, 12, 8),
        unit="reqps",
        stacked=True,
    ),
    timeseries(
        "Failures by error code",
        "Calls that failed after the SDK's retries, per error code: throttles the retries "
        "could not hide (ProvisionedThroughputExceededException, ThrottlingException, a "
        "TransactionCanceledException with ThrottlingError) and anything else.",
        targets(
            (
                f"sum by (error_code) (rate(partition_heat_failures_total{{{INSTANCE}}}[{RATE}]))",
                "{{error_code}}",
            )
        ),
        grid(12, 49, 12, 8),
        unit="reqps",
        draw_style="bars",
    ),
]

dashboard = common.dashboard(
    "Partition heat",
    "partition-heat",
    "Where a load test's requests land in the partition-key space, what they consume, and "
    "where they throttle. Source: dashboards/partition_heat.py in the Partition Heat repository.",
    variables,
    panels,
)
