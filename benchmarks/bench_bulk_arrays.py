"""Whether a keyspace's partitions held as numpy arrays would make a second's bulk admission
cheaper: the model's `PartitionModel.admit_bulk` (per-partition objects, Python floats)
against a sketch of the same water-filling on arrays, at 8, 35 and 256 partitions.

    .venv/bin/python benchmarks/bench_bulk_arrays.py [--seconds 2000] [--repeats 5]

A provisioned table of ``P x 1000 - 1`` write units and one read unit (``P`` partitions,
each at its 1,000-unit ceiling) is asked ``--seconds`` seconds of random demand, per
partition, that over-asks a few of them, as a hot key does. The sketch keeps each
partition's tokens and the second it was last topped up as arrays, as an array-held model
would (nothing gathered from objects), and does what `admit_bulk` does for such a table and
what closing a second does to count a partition's heat (`PartitionModel._roll`, splits
aside): top up, each partition's room, the level that shares the table's bucket
(`_fill_level`), take. Before timing, the script checks that the sketch admits the model's
units, partition by partition, for the first 50 seconds. Printed per count: microseconds a
second takes each way (the fastest of ``--repeats``), and the ratio.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from loadgen.model.partitions import (
    BURST_SECONDS,
    HEAT_FRACTION,
    PARTITION_WRITE_UNITS,
    PartitionModel,
)
from loadgen.model.schema import TableSchema

_FLOOR = 1e-9  # the model's `_TOKEN_FLOOR`
COUNTS = (8, 35, 256)


def _table(partitions: int) -> TableSchema:
    return TableSchema.from_create_table(
        {
            "TableName": "bench",
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "ProvisionedThroughput": {
                "ReadCapacityUnits": 1,  # with the writes' units, P partitions exactly
                "WriteCapacityUnits": partitions * PARTITION_WRITE_UNITS - 1,
            },
        }
    )


def _demand(partitions: int, seconds: int) -> np.ndarray:
    """Units per partition per second: most partitions under their ceiling, a few over."""
    rng = np.random.default_rng(1)
    units = rng.random((seconds, partitions)) * 900.0
    units[:, :: max(1, partitions // 4)] *= 2.0  # a hot key's partitions
    return units


class _Arrays:
    """The sketch: one table's write buckets as arrays."""

    def __init__(self, model: PartitionModel, now: int) -> None:
        table = model.snapshot()[0]
        self.tokens = np.array([PARTITION_WRITE_UNITS] * len(table.partitions))
        self.stamps = np.full(len(table.partitions), now)
        self.rate = table.write_capacity
        self.bucket = table.burst_write_units + self.rate  # the model's, as it starts
        self.bank = self.rate * (1.0 + BURST_SECONDS)
        self.stamp = now
        self.current = now
        self.used = np.zeros(len(self.tokens))  # this second's units, for its heat
        self.hot = np.zeros(len(self.tokens), dtype=np.int64)

    def close(self, now: int) -> None:
        """`PartitionModel._roll`'s heat: a second at `HEAT_FRACTION` of the ceiling counts."""
        hot = self.used >= HEAT_FRACTION * PARTITION_WRITE_UNITS
        self.hot = np.where(hot, self.hot + 1, 0) if now - self.current == 1 else self.hot * 0
        self.used[:] = 0.0
        self.current = now

    def admit(self, now: int, units: np.ndarray) -> np.ndarray:
        if now != self.current:
            self.close(now)
        if now > self.stamp:
            self.bucket = min(self.bank, self.bucket + (now - self.stamp) * self.rate)
            self.stamp = now
        stale = self.stamps < now
        topped = self.tokens + (now - self.stamps) * PARTITION_WRITE_UNITS
        self.tokens = np.where(stale, np.minimum(topped, PARTITION_WRITE_UNITS), self.tokens)
        self.stamps[stale] = now
        rooms = np.where(self.tokens > _FLOOR, self.tokens, 0.0)
        level = _level(units, rooms, max(0.0, self.bucket))
        got = np.minimum(units * level, rooms)
        self.tokens = self.tokens - got
        self.used += got
        self.bucket -= float(got.sum())
        return got


def _level(asked: np.ndarray, rooms: np.ndarray, shared: float) -> float:
    """`_fill_level` on arrays."""
    if float(np.minimum(asked, rooms).sum()) <= shared:
        return 1.0
    mask = asked > 0
    ratio, a, r = rooms[mask] / asked[mask], asked[mask], rooms[mask]
    order = np.argsort(ratio, kind="stable")
    ratio, a, r = ratio[order], a[order], r[order]
    capped = np.concatenate(([0.0], np.cumsum(r)[:-1]))
    flowing = a.sum() - np.concatenate(([0.0], np.cumsum(a)[:-1]))
    over = np.flatnonzero(capped + ratio * flowing >= shared)
    if not len(over):
        return 1.0
    i = int(over[0])
    return float((shared - capped[i]) / flowing[i]) if flowing[i] > 0 else 1.0


def _model(partitions: int) -> tuple[PartitionModel, list[int]]:
    now = [0]
    model = PartitionModel(clock=lambda: now[0])
    model.create_table(_table(partitions))
    return model, now


def _agree(partitions: int, demand: np.ndarray) -> None:
    model, now = _model(partitions)
    sketch = _Arrays(model, 0)
    for second in range(50):
        now[0] = second
        model.partition_starts("bench")
        asked = demand[second].tolist()
        admitted = model.admit_bulk("bench", None, "write", asked, asked).admitted
        got = sketch.admit(second, demand[second])
        if not np.allclose(admitted, got, rtol=0, atol=1e-6):
            raise SystemExit(f"the sketch admits other units than the model at {partitions}")


def _time_model(partitions: int, demand: np.ndarray) -> float:
    model, now = _model(partitions)
    rows = demand.tolist()
    started = time.perf_counter()
    for second, asked in enumerate(rows):
        now[0] = second
        model.admit_bulk("bench", None, "write", asked, asked)
    return time.perf_counter() - started


def _time_arrays(partitions: int, demand: np.ndarray) -> float:
    sketch = _Arrays(_model(partitions)[0], 0)
    started = time.perf_counter()
    for second in range(len(demand)):
        sketch.admit(second, demand[second])
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    for flag in ("seconds", "repeats"):
        if getattr(args, flag) < 1:
            print(f"error: --{flag} must be at least 1 (got {getattr(args, flag)})")
            return 1
    print(f"{'partitions':>10} {'model us/s':>11} {'arrays us/s':>12} {'arrays/model':>13}")
    for partitions in COUNTS:
        demand = _demand(partitions, max(args.seconds, 50))
        _agree(partitions, demand)
        model = min(_time_model(partitions, demand) for _ in range(args.repeats))
        arrays = min(_time_arrays(partitions, demand) for _ in range(args.repeats))
        per = 1e6 / len(demand)
        print(
            f"{partitions:>10} {model * per:>11.1f} {arrays * per:>12.1f} {arrays / model:>13.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
