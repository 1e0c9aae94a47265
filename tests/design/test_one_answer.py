"""One design, one answer: ``check`` (the partition model over the launch's seconds) and a
run on the embedded target name the same failing patterns for the same cause.

The runs are the session's runs of each shipped workload's design file (`design_file_runs`,
every variant at the workload's scale on moto), which the parity tests judge too; the
capacity design runs here, both variants in one command. What a run's diagnosis names the
launch's demand and its remedies by is check's answer, which the run keeps.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from loadgen.design import load_design
from loadgen.simulate import check
from loadgen.verdict.diagnosis import diagnose
from tests.design.conftest import DesignFileRuns
from tests.simulate.test_one_figure import held_to_check

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def checked(workload: str, design: str) -> dict[str, str]:
    """Failing pattern to cause, as ``check`` says."""
    report = check(load_design(str(ROOT / "examples" / "designs" / f"{workload}.yaml"), design))
    return {p.id: str(p.cause) for p in report.patterns if p.verdict == "FAIL"}


def ran(results: dict[str, Any]) -> dict[str, str]:
    """Failing pattern to cause, as a run's verdicts say: the cause that refused most of the
    pattern's throttled attempts."""
    rows = {row["name"]: row for row in results["operations"]}
    found = {}
    for verdict in results["verdicts"]:
        if verdict["status"] != "FAIL":
            continue
        throttles = rows[verdict["id"]].get("throttles") or []
        if verdict.get("behind"):
            # Its table's GSI falls behind: once full, its buffer refuses every write to the
            # table, whatever else a short run saw (orders at 0.02: its busiest user's
            # transactions throttle by chance, below the scale where they are faithful).
            found[verdict["id"]] = "buffer"
            continue
        top = max(throttles, key=lambda t: t["attempts"]) if throttles else {"cause": "none"}
        found[verdict["id"]] = top["cause"]
    return found


@pytest.mark.parametrize(
    ("workload", "design"),
    [
        ("counter", "single"),
        ("counter", "sharded"),
        ("sensor", "by-time"),
        ("sensor", "per-sensor"),
        # Orders runs at 0.02, below the 0.06 where its 6-unit transaction stays within a
        # tenth of a partition's scaled second (docs/targets.md, Scale): its good design
        # throttles a little at random there, so only its hot key is held to agree.
        ("orders", "hot-status"),
    ],
)
def test_check_and_a_run_name_the_same_failing_patterns_and_causes(
    design_file_runs: Callable[[str], DesignFileRuns], workload: str, design: str
) -> None:
    runs = design_file_runs(workload)
    assert runs.returncode in (0, 1), runs.stderr[-2000:]
    assert ran(runs.results(design)) == checked(workload, design)


def test_a_tables_warm_throughput_is_the_one_limit_and_raising_it_passes(tmp_path: Path) -> None:
    out = tmp_path / "capacity.json"
    done = subprocess.run(
        [sys.executable, "-m", "loadgen", "run", "examples/designs/capacity.yaml",
         "--design", "all", "--engine", "moto", "--scale", "0.05", "--duration", "8s",
         "--out", str(out), "--report", str(tmp_path / "report")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-3000:]
    new = json.loads(out.with_name("capacity-new-table.json").read_text())
    warmed = json.loads(out.with_name("capacity-warmed.json").read_text())
    assert ran(new) == checked("capacity", "new-table") == {"place-order": "capacity"}
    assert ran(warmed) == checked("capacity", "warmed") == {}
    text = " ".join(done.stdout.split())  # as printed, wrapped to the terminal
    assert "The on-demand capacity of table Tickets" in text
    assert "WarmThroughput WriteUnitsPerSecond 5,800" in text
    assert "Sharding keys does not help" in text
    report = (tmp_path / "report" / "new-table" / "report.html").read_text()
    assert "WarmThroughput WriteUnitsPerSecond 5,800" in report


@pytest.mark.parametrize(("workload", "variant"), [("counter", "single"), ("orders", "hot-status")])
def test_a_design_run_keeps_checks_answer_and_its_diagnosis_names_it(
    design_file_runs: Callable[[str], DesignFileRuns], workload: str, variant: str
) -> None:
    """What a design run keeps is check's answer for its launch rates, and its diagnosis names
    check's figures (`held_to_check`)."""
    runs = design_file_runs(workload)
    assert runs.returncode in (0, 1), runs.stderr[-2000:]
    results = runs.results(variant)
    design = load_design(str(ROOT / "examples" / "designs" / f"{workload}.yaml"), variant)
    kept = {k: v for k, v in results["design"]["check"].items() if k != "design"}
    assert kept == {k: v for k, v in check(design).to_dict().items() if k != "design"}
    assert held_to_check(results), [f.title for f in diagnose(results)]
