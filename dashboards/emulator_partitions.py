"""The Emulator partitions dashboard: the partition model's view of the same load.

Reads the emulator's metrics (``partition_heat_emulator_*``, served on the emulator's own
``/metrics``; see loadgen/emulator_metrics.py): per partition the units consumed against
its ceiling and the requests it throttled, per table or GSI the burst capacity left, the
capacity allowed now, the partition count and the splits.

A partition's ceiling is AWS's 1,000 write and 3,000 read units per second (DynamoDB
developer guide, "Burst and adaptive capacity"), times the emulator's ``--scale``, which it
exports: the ceiling lines are computed from it.
"""

from __future__ import annotations

from . import common
from .common import (
    DATASOURCE,
    RATE,
    BarGauge,
    as_ceiling,
    grid,
    index_variable,
    query_variable,
    row,
    stat,
    target,
    targets,
    timeseries,
)

__all__ = ["dashboard"]

PREFIX = "partition_heat_emulator"
INSTANCE = 'instance=~"$instance"'
SCOPE = f'{INSTANCE}, table=~"$table", index=~"$index"'

# Per partition, per second, of AWS's DynamoDB developer guide ("a single partition can
# support a maximum of 3,000 read units or 1,000 write units").
CEILING = {"write": 1000, "read": 3000}


def _ceiling(kind: str) -> str:
    return f"{CEILING[kind]} * max({PREFIX}_scale{{{INSTANCE}}})"


def _per_partition(kind: str) -> str:
    return (
        f"sum by (partition) "
        f"(rate({PREFIX}_partition_consumed_{kind}_units_total{{{SCOPE}}}[{RATE}]))"
    )


variables = [
    query_variable(
        "instance",
        "Emulator",
        f"label_values({PREFIX}_scale, instance)",
        include_all=True,
        multi=True,
    ),
    query_variable("table", "Table", f"label_values({PREFIX}_partitions{{{INSTANCE}}}, table)"),
    index_variable(f'{PREFIX}_partitions{{{INSTANCE}, table=~"$table"}}'),
]


def _units_panel(kind: str, x: int) -> object:
    return timeseries(
        f"Consumed {kind} units per partition",
        f"{kind.capitalize()} units per second on each partition (named by the first hash "
        f"of its range), against a partition's ceiling of {CEILING[kind]:,} units/s times "
        "the emulator's scale (dashed red). One line at the ceiling while the others idle "
        "is a hot partition; a line that drops to zero and reappears with a neighbour is a "
        "split.",
        targets(
            (_per_partition(kind), "{{partition}}"),
            (_ceiling(kind), "partition ceiling"),
        ),
        grid(x, 5, 12, 9),
        overrides=[as_ceiling("partition ceiling")],
    )


def _load_panel(kind: str, x: int) -> BarGauge:
    return BarGauge(
        title=f"{kind.capitalize()} load per partition (share of its ceiling)",
        description=f"Each partition's {kind} units per second now, as a share of its "
        "ceiling. Adaptive capacity lets a partition use unused table capacity, but never "
        "more than this ceiling.",
        dataSource=DATASOURCE,
        targets=[
            target(
                f"{_per_partition(kind)} / scalar({_ceiling(kind)})",
                "{{partition}}",
                instant=True,
            )
        ],
        gridPos=grid(x, 14, 12, 8),
    )


panels = [
    row("Table and GSI", 0),
    stat(
        "Partitions",
        "Partitions of the table or GSI now: as many as its capacity needs, plus splits.",
        targets((f"sum({PREFIX}_partitions{{{SCOPE}}})", "partitions")),
        grid(0, 1, 6, 4),
    ),
    stat(
        "Splits",
        "Partitions added since the emulator started, by capacity growth or by heat (a "
        "partition near its ceiling for minutes splits at its observed key distribution). "
        "No split helps a single hot key.",
        targets((f"sum({PREFIX}_splits_total{{{SCOPE}}})", "splits")),
        grid(6, 1, 6, 4),
    ),
    stat(
        "Burst write units left",
        "Unused write capacity banked for bursts (up to 300 seconds of it). Zero while "
        "writes throttle: the bank is spent.",
        targets((f"sum({PREFIX}_burst_write_units{{{SCOPE}}})", "write")),
        grid(12, 1, 6, 4),
    ),
    stat(
        "Burst read units left",
        "Unused read capacity banked for bursts (up to 300 seconds of it).",
        targets((f"sum({PREFIX}_burst_read_units{{{SCOPE}}})", "read")),
        grid(18, 1, 6, 4),
    ),
    _units_panel("write", 0),
    _units_panel("read", 12),
    _load_panel("write", 0),
    _load_panel("read", 12),
    row("Throttles, burst and capacity over time", 22),
    timeseries(
        "Throttled requests per partition",
        "Requests the emulator throttled, per partition and kind (read or write).",
        targets(
            (
                f"sum by (partition, kind) "
                f"(rate({PREFIX}_partition_throttled_requests_total{{{SCOPE}}}[{RATE}]))",
                "{{partition}} {{kind}}",
            )
        ),
        grid(0, 23, 12, 8),
        unit="reqps",
    ),
    timeseries(
        "Burst tokens left",
        "Read and write units banked for bursts: they fill while traffic stays under the "
        "capacity and drain while it runs over; throttles start when they are gone.",
        targets(
            (f"sum({PREFIX}_burst_write_units{{{SCOPE}}})", "write"),
            (f"sum({PREFIX}_burst_read_units{{{SCOPE}}})", "read"),
        ),
        grid(12, 23, 12, 8),
    ),
    timeseries(
        "Table capacity against consumption",
        "Units per second the table or GSI may consume now (provisioned capacity, or the "
        "on-demand allowance) against what it consumed.",
        targets(
            (f"sum(rate({PREFIX}_consumed_write_units_total{{{SCOPE}}}[{RATE}]))", "write used"),
            (f"sum({PREFIX}_capacity_write_units{{{SCOPE}}})", "write capacity"),
            (f"sum(rate({PREFIX}_consumed_read_units_total{{{SCOPE}}}[{RATE}]))", "read used"),
            (f"sum({PREFIX}_capacity_read_units{{{SCOPE}}})", "read capacity"),
        ),
        grid(0, 31, 12, 8),
    ),
    timeseries(
        "Partition count and splits",
        "Partitions of the table or GSI over time, and splits per interval (bars).",
        targets(
            (f"sum({PREFIX}_partitions{{{SCOPE}}})", "partitions"),
            (f"sum(increase({PREFIX}_splits_total{{{SCOPE}}}[{RATE}]))", "splits"),
        ),
        grid(12, 31, 12, 8),
        overrides=[
            {
                "matcher": {"id": "byName", "options": "splits"},
                "properties": [{"id": "custom.drawStyle", "value": "bars"}],
            }
        ],
    ),
    timeseries(
        "Seconds near the ceiling per partition",
        "How long each partition has run near its ceiling without a break: a split for heat "
        "comes after minutes of it.",
        targets(
            (f"max by (partition) ({PREFIX}_partition_hot_seconds{{{SCOPE}}})", "{{partition}}")
        ),
        grid(0, 39, 12, 8),
        unit="s",
    ),
    timeseries(
        "Emulator requests by outcome",
        "Requests the emulator answered, by outcome: forwarded to the backend, throttled, "
        "or rejected.",
        targets(
            (
                f"sum by (outcome) (rate({PREFIX}_requests_total{{{INSTANCE}}}[{RATE}]))",
                "{{outcome}}",
            )
        ),
        grid(12, 39, 12, 8),
        unit="reqps",
        stacked=True,
    ),
    timeseries(
        "GSI write buffer",
        "Index writes each GSI of the table has taken but not yet applied, by the reason its "
        "partitions or capacity gave, against what its buffer holds (dashed red). DynamoDB "
        "takes an index's writes at once and applies them as the index allows; only a full "
        "buffer pushes back, and then every write to the table is refused until it drains "
        "(docs/fidelity.md). Empty for a table without a GSI.",
        targets(
            (
                f"sum by (index, reason) ({PREFIX}_gsi_buffered_write_units{{{INSTANCE}, "
                f'table=~"$table"}})',
                "{{index}} buffered ({{reason}})",
            ),
            (
                f'max by (index) ({PREFIX}_gsi_buffer_write_units{{{INSTANCE}, table=~"$table"}})',
                "{{index}} buffer",
            ),
        ),
        grid(0, 47, 12, 8),
        overrides=[as_ceiling(".* buffer$", pattern=True)],
    ),
    timeseries(
        "Seconds until a GSI's buffer is full",
        "At the last minute's rate, while a GSI's buffer fills faster than a split for heat "
        "would help; check and a run's verdicts fail the table's writers where it is within "
        "the launch's hour.",
        targets(
            (
                f"min by (index) ({PREFIX}_gsi_buffer_full_in_seconds"
                f'{{{INSTANCE}, table=~"$table"}})',
                "{{index}}",
            )
        ),
        grid(12, 47, 12, 8),
        unit="s",
    ),
]

dashboard = common.dashboard(
    "Emulator partitions",
    "emulator-partitions",
    "The throttling emulator's partition model: per partition the units consumed against "
    "the ceiling, throttles, burst capacity left, partition count and splits. Source: "
    "dashboards/emulator_partitions.py in the Partition Heat repository.",
    variables,
    panels,
)
