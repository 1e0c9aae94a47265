"""Design files under load, end to end: ``loadgen run DESIGN_FILE`` on the embedded target.

Each shipped workload's designs are shipped as design files too; a run of each file's variant
must reach its Python workload's verdict at the same launch traffic: the same hottest key (by
its shape: the table or index, the key with its digits masked), a share of its touches near
the workload's, and throttled or not alike.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow

SECONDS = "8s"
SHIPPED = [
    # (workload, design, extra flags both runs take)
    ("counter", "single", ()),
    ("counter", "sharded", ()),
    ("sensor", "by-time", ()),
    ("sensor", "per-sensor", ()),
    ("orders", "hot-status", ("--scale", "0.02")),
    ("orders", "sharded-status", ("--scale", "0.02")),
]
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


def verdict(results: dict[str, Any]) -> tuple[str, str, float, bool]:
    """(scope, key shape, share, throttled) of a run."""
    top = results["hot_keys"][0]
    totals = results["totals"]
    attempts = totals["requests"] + totals["retries"]
    throttled = totals["throttled_attempts"] / attempts > THROTTLED
    return top["table"], re.sub(r"[0-9]", "#", top["key"]), top["share"], throttled


@pytest.mark.parametrize(("workload", "design", "extra"), SHIPPED, ids=lambda v: str(v))
def test_a_shipped_design_file_reaches_its_workloads_verdict(
    tmp_path: Path, workload: str, design: str, extra: tuple[str, ...]
) -> None:
    common = ["--design", design, "--duration", SECONDS, "--engine", "moto", *extra]
    python_out, file_out = tmp_path / "python.json", tmp_path / "file.json"
    done = loadgen(
        "run", workload, "--config", f"examples/launch/{workload}.yaml", *common,
        "--out", str(python_out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    done = loadgen("run", f"examples/designs/{workload}.yaml", *common, "--out", str(file_out))
    assert done.returncode == 0, done.stderr[-2000:]
    python = verdict(json.loads(python_out.read_text()))
    file = verdict(json.loads(file_out.read_text()))
    assert file[:2] == python[:2], (file, python)
    assert file[3] == python[3], (file, python)
    assert file[2] == pytest.approx(python[2], abs=0.1), (file, python)


def test_a_run_on_empty_tables_says_so_and_judges_otherwise(tmp_path: Path) -> None:
    """The chat's reads of the status index: with its starting data they read 100 entries of
    STATUS#online and throttle; on empty tables they read nothing, and the run says so."""
    runs = {}
    for name, flags in (("full", ()), ("empty", ("--no-starting-data",))):
        out = tmp_path / f"{name}.json"
        done = loadgen(
            "run", "examples/designs/chat.yaml", "--design", "status-index",
            "--duration", SECONDS, "--starting-limit", "4000",
            "--out", str(out), *flags,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        runs[name] = (json.loads(out.read_text()), done.stdout + done.stderr)
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
