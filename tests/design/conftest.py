"""Runs of the shipped design files, shared by the tests that judge them."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import LAUNCH_SECONDS, ROOT

DESIGN_FILE_SCALES = {"counter": "0.1", "sensor": "0.1", "orders": "0.02"}
"""The scale of each workload's embedded runs (`loadgen.runner.EMULATOR_DEFAULTS`; a design
file run takes the default, 0.1, unless told)."""


@dataclass(frozen=True)
class DesignFileRuns:
    """``loadgen run examples/designs/WORKLOAD.yaml --design all``: every variant in turn."""

    returncode: int
    stdout: str
    stderr: str
    out: Path

    def results(self, design: str) -> dict[str, Any]:
        path = self.out.with_name(f"{self.out.stem}-{design}.json")
        results: dict[str, Any] = json.loads(path.read_text())
        return results


@pytest.fixture(scope="session")
def design_file_runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> Callable[[str], DesignFileRuns]:
    """``design_file_runs(workload)``: each variant of the workload's design file at its
    launch traffic on the embedded moto, at the workload's scale, run once a session (the
    parity runs and the measured cost read the same runs)."""
    runs: dict[str, DesignFileRuns] = {}

    def design_file_runs(workload: str) -> DesignFileRuns:
        if workload not in runs:
            out = tmp_path_factory.mktemp(f"design-file-{workload}") / f"{workload}.json"
            done = subprocess.run(
                [sys.executable, "-m", "loadgen", "run", f"examples/designs/{workload}.yaml",
                 "--design", "all", "--engine", "moto", "--scale", DESIGN_FILE_SCALES[workload],
                 "--duration", LAUNCH_SECONDS, "--out", str(out)],
                cwd=ROOT, capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            runs[workload] = DesignFileRuns(done.returncode, done.stdout, done.stderr, out)
        return runs[workload]

    return design_file_runs
