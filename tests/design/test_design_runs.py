"""Design files under load, end to end: ``loadgen run DESIGN_FILE`` on the embedded target.

Each shipped workload's designs are shipped as design files too; a run of each file's variant
must reach its Python workload's verdict at the same launch traffic: the same hottest key (by
its shape: the table or index, the key with its digits masked), a share of its touches near
the workload's, and throttled or not alike.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import LaunchRun, throttled_on
from tests.design.conftest import DESIGN_FILE_SCALES, DesignFileRuns
from tests.test_run import DESIGNS

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow

SECONDS = "6s"
SHIPPED = [
    ("counter", "single"),
    ("counter", "sharded"),
    ("sensor", "by-time"),
    ("sensor", "per-sensor"),
    ("orders", "hot-status"),
    ("orders", "sharded-status"),
]
DESIGN_SCOPES = {workload: scope for workload, _, _, scope in DESIGNS}
"""The table or index where each workload's two designs differ."""
THROTTLED = 0.05
"""A run with more of its attempts throttled than this counts as throttled (a few throttles
in a short run at scale 0.02 are chance, not a verdict)."""


def loadgen(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "loadgen", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def verdict(results: dict[str, Any], scope: str | None = None) -> tuple[str, str, float, bool]:
    """(scope, key shape, share, throttled) of a run: its hottest key overall, or in ``scope``
    (two keys within a point of each other may swap places between runs), and whether
    DynamoDB's reasons put the run's throttles on that table or index."""
    top = results["hot_keys"][0] if scope is None else _top(results, scope)
    totals = results["totals"]
    attempts = totals["requests"] + totals["retries"]
    throttled = throttled_on(totals, top["table"]) / attempts > THROTTLED
    return top["table"], re.sub(r"[0-9]", "#", top["key"]), top["share"], throttled


def _top(results: dict[str, Any], scope: str) -> dict[str, Any]:
    table, _, index = scope.partition("/")
    for row in results["top_keys"]:
        if row["table"] == table and (row["index"] or "") == index and row["by"] == "requests":
            key = row["keys"][0]
            return {
                "table": scope, "key": key["key"], "share": key["count"] / row["total"],
                "touches": int(row["total"]),
            }  # fmt: skip
    raise AssertionError(f"no hot key on {scope}")


@pytest.mark.parametrize(("workload", "design"), SHIPPED)
def test_a_shipped_design_file_reaches_its_workloads_verdict(
    launch_run: Callable[[str, str, str], LaunchRun],
    design_file_runs: Callable[[str], DesignFileRuns],
    workload: str,
    design: str,
) -> None:
    # The Python workload's run is the session's launch run on moto (tests/test_run.py
    # judges it too); the design file's runs are every variant in turn, at the same scale.
    python_run = launch_run(workload, design, "moto")
    assert python_run.returncode == 0, python_run.stderr[-2000:]
    file_runs = design_file_runs(workload)
    assert file_runs.returncode in (0, 1), file_runs.stderr[-2000:]  # 1: a variant fails
    python_results, file_results = python_run.results(), file_runs.results(design)
    assert file_results["run"]["design"] == design
    assert python_results["run"]["scale"] == file_results["run"]["scale"]
    assert python_results["run"]["scale"] == float(DESIGN_FILE_SCALES[workload])
    # Judged where the design decides: orders' designs differ on the status index, and at
    # this scale their busiest user's key on the table throttles a few transactions by
    # chance in either design (`loadgen check` finds no limit there at launch).
    python = verdict(python_results, scope=DESIGN_SCOPES[workload])
    file = verdict(file_results, scope=python[0])
    assert file[:2] == python[:2], (file, python)
    assert file[3] == python[3], (file, python)
    # Within 10 points, and three standard deviations of two draws' difference: the orders
    # workload turns a read or an update into an order placed when its (fresh) user instance
    # has placed none yet, so it puts a little more on STATUS#PLACED than its design file's
    # patterns, which read and update past orders; and each share is a count of a few
    # hundred touches in a 6 s run at scale 0.02 (0.61 against 0.77 in one CI run).
    touches = min(_top(results, python[0])["touches"] for results in (python_results, file_results))
    spread = 3 * math.sqrt(2 * python[2] * (1 - python[2]) / touches)
    assert file[2] == pytest.approx(python[2], abs=0.10 + spread), (file, python, touches)


def test_a_run_on_empty_tables_says_so_and_judges_otherwise(tmp_path: Path) -> None:
    """The chat's reads of the status index: with its starting data they read 100 entries of
    STATUS#online and throttle; on empty tables they read nothing, and the run says so."""
    runs = {}
    for name, flags in (("full", ()), ("empty", ("--no-starting-data",))):
        out = tmp_path / f"{name}.json"
        done = loadgen(
            "run", "examples/designs/chat.yaml", "--design", "status-index",
            "--duration", SECONDS, "--starting-limit", "4000", "--scale", "0.1",
            "--out", str(out), *flags,
        )  # fmt: skip
        results = json.loads(out.read_text())
        failed = any(v["status"] == "FAIL" for v in results["verdicts"])
        assert done.returncode == (1 if failed else 0), done.stderr[-2000:]
        runs[name] = (results, done.stdout + done.stderr)
    full, _ = runs["full"]
    empty, empty_text = runs["empty"]
    assert full["design"]["starting_data"]["empty"] is False
    assert empty["design"]["starting_data"]["empty"] is True
    assert "empty" in empty_text.lower() and "the tables are empty" in empty_text
    rows = {r["name"]: r for r in full["operations"]}
    empty_rows = {r["name"]: r for r in empty["operations"]}
    # Full: the status key's reads throttle; empty: a Query of nothing costs the minimum.
    assert rows["online-now"]["throttled_attempts"] > 0
    assert empty_rows["online-now"]["throttled_attempts"] == 0
