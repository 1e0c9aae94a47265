"""Sensor workload: readings from N sensors, write-heavy, on a simulated clock.

Sensor popularity follows the key distribution over ``--keys`` sensors. Timestamps come from
a simulated clock running ``--clock-speed`` times faster than wall time (60 by default, so a
one-minute test crosses an hour bucket).

Designs:
- ``by-time``: every sensor's readings for the current hour under one partition key,
  ``READINGS#<yyyy-mm-dd-hh>`` with sort key ``<sensor>#<ts>``: the "timestamp as partition
  key" mistake, a hot partition that moves with the clock.
- ``per-sensor``: ``SENSOR#<id>`` with a timestamp sort key.
- ``per-sensor-day``: ``SENSOR#<id>#DATE#<yyyy-mm-dd>``, bounding each item collection.

Each design also keeps an hourly aggregate item per sensor (count and sum of readings) in
the same partition as that sensor's readings.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

from loadgen.workload import ConfigError, DynamoUser, WorkloadOptions, add_argument, register

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
"""Where the simulated clock starts."""


class SimulatedClock:
    """Wall time sped up ``speed`` times from ``start``: ``SimulatedClock(60)`` runs an hour a
    minute."""

    def __init__(self, speed: float, start: datetime = EPOCH) -> None:
        if speed <= 0:
            raise ValueError(f"--clock-speed must be > 0 (got {speed})")
        self.speed = speed
        self.start = start
        self._wall_start = time.monotonic()

    def now(self) -> datetime:
        return self.start + timedelta(seconds=(time.monotonic() - self._wall_start) * self.speed)


class SensorUser(DynamoUser):
    designs = ("by-time", "per-sensor", "per-sensor-day")
    default_table = "ph-sensor"
    default_mix = {"put_reading": 8, "query_recent": 1, "query_range": 1, "read_aggregate": 1}

    @classmethod
    def add_arguments(cls, parser: Any) -> None:
        add_argument(
            parser,
            "--clock-speed",
            type=float,
            default=60.0,
            help="Simulated seconds per wall second (sensor)",
        )

    @classmethod
    def create_table_request(cls, options: WorkloadOptions) -> dict[str, Any]:
        return {
            "TableName": options.table,
            "KeySchema": [
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            "AttributeDefinitions": [
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            # Launch traffic is 3,000 readings/s, each with its aggregate: 6,000 write units/s,
            # more than a new on-demand table's 4,000. A team launching it raises the table's
            # warm throughput ahead of launch, as AWS lets it; the designs differ by their keys.
            "WarmThroughput": {"WriteUnitsPerSecond": 8000, "ReadUnitsPerSecond": 12000},
        }

    @classmethod
    def check_options(cls, parsed: Any) -> None:
        if not parsed.clock_speed > 0:
            raise ConfigError(f"--clock-speed must be > 0 (got {parsed.clock_speed})")

    def on_start(self) -> None:
        # One clock per process, so all users agree on the current hour.
        clock = self.environment.__dict__.get("_sensor_clock")
        if clock is None:
            clock = SimulatedClock(float(self.environment.parsed_options.clock_speed))
            self.environment._sensor_clock = clock
        self.clock: SimulatedClock = clock

    @classmethod
    def prefill_item(cls, options: WorkloadOptions, parsed: Any, number: int) -> dict[str, Any]:
        # Readings of every sensor in turn, one a minute, ending where the simulated clock
        # starts: the history a table holds before the test.
        sensor = f"s{number % options.keys:07d}"
        ts = EPOCH - timedelta(minutes=1 + number // options.keys)
        pk, sk = reading_key(options.design, sensor, ts)
        value = round(20.0 + (number * 7919 % 1000) / 100.0, 2)
        return {
            "pk": {"S": pk},
            "sk": {"S": sk},
            "sensor": {"S": sensor},
            "value": {"N": str(value)},
        }

    def _reading_key(self, sensor: str, ts: datetime) -> tuple[str, str]:
        return reading_key(self.options.design, sensor, ts)

    def _aggregate_key(self, sensor: str, ts: datetime) -> tuple[str, str]:
        pk, _ = self._reading_key(sensor, ts)
        if self.options.design == "by-time":
            return pk, f"AGG#{sensor}"
        return pk, f"AGG#{ts:%Y-%m-%d-%H}"

    def _sensor(self) -> str:
        return f"s{self.keys.next():07d}"

    def put_reading(self) -> None:
        sensor, ts = self._sensor(), self.clock.now()
        value = round(self.random.gauss(20.0, 5.0), 2)
        pk, sk = self._reading_key(sensor, ts)
        table = self.options.table
        self.db.call(
            "PutItem",
            "sensor.put_reading",
            table=table,
            pk=pk,
            sk=sk,
            Item={
                "pk": {"S": pk},
                "sk": {"S": sk},
                "sensor": {"S": sensor},
                "value": {"N": str(value)},
            },
        )
        pk, sk = self._aggregate_key(sensor, ts)
        self.db.call(
            "UpdateItem",
            "sensor.update_aggregate",
            table=table,
            pk=pk,
            sk=sk,
            Key={"pk": {"S": pk}, "sk": {"S": sk}},
            UpdateExpression="ADD #n :one, #s :v",
            ExpressionAttributeNames={"#n": "count", "#s": "sum"},
            ExpressionAttributeValues={":one": {"N": "1"}, ":v": {"N": str(value)}},
        )

    def _query(self, name: str, sensor: str, start: datetime, end: datetime, limit: int) -> None:
        pk, low = self._reading_key(sensor, start)
        _, high = self._reading_key(sensor, end)
        self.db.call(
            "Query",
            name,
            table=self.options.table,
            pk=pk,
            KeyConditionExpression="pk = :pk AND sk BETWEEN :lo AND :hi",
            ExpressionAttributeValues={":pk": {"S": pk}, ":lo": {"S": low}, ":hi": {"S": high}},
            ScanIndexForward=False,
            Limit=limit,
        )

    def query_recent(self) -> None:
        """The latest readings of one sensor (within its current partition)."""
        now = self.clock.now()
        start = now.replace(minute=0, second=0, microsecond=0)
        self._query("sensor.query_recent", self._sensor(), start, now, 10)

    def query_range(self) -> None:
        """A time range of one sensor's readings: the last simulated quarter hour."""
        now = self.clock.now()
        start = max(now - timedelta(minutes=15), now.replace(minute=0, second=0, microsecond=0))
        self._query("sensor.query_range", self._sensor(), start, now, 100)

    def read_aggregate(self) -> None:
        sensor, ts = self._sensor(), self.clock.now()
        pk, sk = self._aggregate_key(sensor, ts)
        self.db.call(
            "GetItem",
            "sensor.read_aggregate",
            table=self.options.table,
            pk=pk,
            sk=sk,
            Key={"pk": {"S": pk}, "sk": {"S": sk}},
        )


def reading_key(design: str, sensor: str, ts: datetime) -> tuple[str, str]:
    """A reading's (partition key, sort key) in a design."""
    stamp = ts.strftime("%Y-%m-%dT%H:%M:%S.%f")
    if design == "by-time":
        return f"READINGS#{ts:%Y-%m-%d-%H}", f"{sensor}#{stamp}"
    if design == "per-sensor":
        return f"SENSOR#{sensor}", stamp
    return f"SENSOR#{sensor}#DATE#{ts:%Y-%m-%d}", stamp


register(SensorUser)
