"""Prefill paces itself to what the table takes, whatever its concurrency.

At the seam: a client whose table serves a fixed number of items a second, throttling a call
when none is left and leaving the rest of a batch unprocessed, as DynamoDB does. End to end:
the documented command against ``loadgen emulator`` at its defaults (scale 0.1: a new
on-demand table's 400 write units/s), which used to run out of attempts.
"""

from __future__ import annotations

import random
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from loadgen.design.starting import TablePlan
from loadgen.emulator.embedded import EmbeddedEmulator
from loadgen.traffic.prefill import Pace, fill

ROOT = Path(__file__).resolve().parents[2]


class Table:
    """A table of 8 partitions serving ``per_s`` items a second together, each a token bucket
    of its share: an item whose partition has no token left is returned unprocessed, a call
    of which nothing is written is throttled, as DynamoDB answers."""

    PARTITIONS = 8

    def __init__(self, per_s: float, rtt: float = 0.002) -> None:
        self.rtt = rtt
        self.share = per_s / self.PARTITIONS
        self.tokens = [self.share / 10] * self.PARTITIONS  # a tenth of a second's worth
        self.at = time.monotonic()
        self.stored: set[str] = set()
        self.lock = threading.Lock()  # the prefill's threads call it at once

    def batch_write_item(self, RequestItems: Any, **_: Any) -> dict[str, Any]:
        time.sleep(self.rtt)  # a round trip
        with self.lock:
            return self._answer(RequestItems)

    def _answer(self, RequestItems: Any) -> dict[str, Any]:
        now = time.monotonic()
        self.tokens = [min(self.share, t + (now - self.at) * self.share) for t in self.tokens]
        self.at = now
        ((table, entries),) = RequestItems.items()
        left = []
        for entry in entries:
            key = entry["PutRequest"]["Item"]["pk"]["S"]
            partition = zlib.crc32(key.encode()) % self.PARTITIONS
            if self.tokens[partition] >= 1:
                self.tokens[partition] -= 1
                self.stored.add(key)
            else:
                left.append(entry)
        if len(left) == len(entries):
            error = {"Code": "ProvisionedThroughputExceededException", "Message": "slow"}
            raise ClientError({"Error": error}, "BatchWriteItem")
        return {"UnprocessedItems": {table: left} if left else {}}


def _plan(count: int) -> TablePlan:
    return TablePlan({"TableName": "t"}, lambda n: {"pk": {"S": f"k{n}"}}, count, "test")


@pytest.mark.parametrize("concurrency", [16, 128])
def test_prefill_paces_to_the_table_whatever_its_concurrency(concurrency: int) -> None:
    table = Table(per_s=2_000)
    summary = fill(table, _plan(3_000), concurrency=concurrency, rng=random.Random(1))
    assert len(table.stored) == summary.items == 3_000
    assert summary.throttled_calls + summary.unprocessed > 0  # the table did throttle
    assert summary.paced_to is not None and summary.paced_to < concurrency
    assert "paced down to" in summary.line("t")


def test_a_table_that_writes_nothing_stops_the_prefill_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from loadgen.errors import TargetError
    from loadgen.traffic import prefill

    monkeypatch.setattr(prefill, "BACKOFF_BASE_S", 0.0005)  # 12 attempts in well under 5 s
    table = Table(per_s=0.0)
    with pytest.raises(
        TargetError, match=r"wrote nothing in 12 attempts in a row, nor did any other call"
    ):
        fill(table, _plan(50), concurrency=4, rng=random.Random(1))


class Unlucky(Table):
    """A table that refuses the call carrying ``k0`` up to ``refusals`` times, each time other
    calls have written since (they emptied its bucket), and serves everything else: a batch
    meeting its partition empty again and again while others go by."""

    def __init__(self, refusals: int) -> None:
        super().__init__(per_s=1e9)
        self.refusals = refusals
        self._seen = -1

    def _answer(self, RequestItems: Any) -> dict[str, Any]:
        ((_, entries),) = RequestItems.items()
        keys = {entry["PutRequest"]["Item"]["pk"]["S"] for entry in entries}
        if "k0" in keys and self.refusals > 0 and len(self.stored) > self._seen:
            self.refusals -= 1
            self._seen = len(self.stored)
            error = {"Code": "ProvisionedThroughputExceededException", "Message": "unlucky"}
            raise ClientError({"Error": error}, "BatchWriteItem")
        return super()._answer(RequestItems)


def test_a_batch_refused_while_other_calls_write_keeps_its_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from loadgen.traffic import prefill

    monkeypatch.setattr(prefill, "BACKOFF_BASE_S", 0.0005)  # 12 attempts in well under 5 s
    table = Unlucky(refusals=2 * prefill.MAX_ATTEMPTS)
    summary = fill(table, _plan(20_000), concurrency=16, rng=random.Random(1))
    assert len(table.stored) == summary.items == 20_000
    # Its batch was refused MAX_ATTEMPTS times in a row or more, each while others wrote.
    assert table.refusals <= prefill.MAX_ATTEMPTS


def test_the_window_halves_once_for_the_calls_in_flight_and_grows_back() -> None:
    pace = Pace(16)
    sent = time.monotonic()
    pace.throttled(sent)
    pace.throttled(sent)  # sent before the cut: the same burst
    assert pace.limit == 8
    pace.throttled(time.monotonic() + 1)
    assert pace.limit == 4
    for _ in range(200):  # one more call a window: 4 + 5 + ... + 15 calls back to 16
        pace.served()
    assert pace.limit == 16 and pace.lowest == 4


@pytest.mark.slow
def test_prefill_of_a_design_against_the_emulator_at_its_defaults() -> None:
    # The emulator's defaults decide what throttles (scale 0.1: 400 write units/s on a new
    # on-demand table); moto answers behind it, so the test needs no JVM.
    with EmbeddedEmulator(engine="moto") as emulator:
        done = subprocess.run(
            [sys.executable, "-m", "loadgen", "prefill", "examples/designs/ecommerce.yaml",
             "--endpoint", emulator.endpoint_url, "--items", "4000"],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("Prefilled 3,997 items"), done.stdout
    assert "of 16 calls in flight" in done.stdout  # the table throttled, and it paced down
