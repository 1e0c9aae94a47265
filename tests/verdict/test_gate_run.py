"""``loadgen run --gate --report`` end to end on the embedded target (the partition model).

At each workload's launch traffic (examples/launch, the open model, as the example pipeline
runs it), the example thresholds fail each workload's bad design and pass its good one, and
the report of a failing run names the hot key. Each run takes a few seconds; the runs are the
session's shared launch runs (the ``launch_run`` fixture), which tests/test_run.py judges too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GATED_ENGINE, need_dynamodb_local

ROOT = Path(__file__).resolve().parents[2]

# (workload, design, thresholds, exit code, the hot key and finding the report must name)
RUNS = [
    ("counter", "single", "counter", 1, "One hot key: GLOBAL_COUNTER on ph-counter"),
    ("counter", "sharded", "counter", 0, None),
    ("orders", "hot-status", "orders", 1, "A hot GSI key: STATUS#PLACED on index status"),
    ("orders", "sharded-status", "orders", 0, None),
]

# What the target said of the bad designs' throttles, as the report's table has it: the
# reason, the table or index it named, and the partition model's cause.
SAID = {
    "single": ("TableWriteKeyRangeThroughputExceeded", "ph-counter", "partition"),
}
# What the diagnosis says where nothing was refused yet: an index whose write buffer fills
# (DynamoDB buffers an index's writes for minutes before it pushes back: docs/fidelity.md).
FILLING = {"hot-status": "The write buffer of index status of ph-orders"}


@pytest.mark.slow
@pytest.mark.parametrize(("workload", "design", "thresholds", "code", "named"), RUNS)
def test_example_gates_on_the_embedded_target(
    tmp_path, launch_run, workload, design, thresholds, code, named
) -> None:
    need_dynamodb_local()  # the default engine wherever Java runs, as in CI
    done = launch_run(workload, design, GATED_ENGINE)
    assert done.report is not None, "the launch run did not gate"
    assert done.returncode == code, done.stdout[-4000:] + done.stderr[-2000:]
    assert ("Gate FAILED" if code else "Gate PASSED") in done.stdout
    # The results are written whatever the verdict, and gate the same way again.
    out = done.out
    results = json.loads(out.read_text())
    assert results["run"]["design"] == design
    page = (done.report / "report.html").read_text()
    if named:
        assert named in page, page[:3000]
        if design in SAID:
            cells = "".join(f'<td class="text">{word}</td>' for word in SAID[design])
            assert cells in page.split("What the target refused", 1)[1], page[:3000]
        if design in FILLING:
            assert FILLING[design] in page, page[:3000]
        again = subprocess.run(
            [sys.executable, "-m", "loadgen", "gate", str(out), "--thresholds",
             f"examples/thresholds/{thresholds}.yaml", "--markdown", str(tmp_path / "gate.md")],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert again.returncode == 1
        assert named.replace("_", "\\_") in (tmp_path / "gate.md").read_text()
    else:
        assert "Diagnosis" in page


def test_example_workflow_is_a_valid_github_workflow() -> None:
    workflow = ROOT / ".github" / "workflows" / "heat-gate.yml"
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
         str(workflow)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    import yaml

    job = yaml.safe_load(workflow.read_text())["jobs"]["heat-gate"]
    from loadgen.cli import load_config_file
    from loadgen.verdict.thresholds import load_thresholds

    assert "--config examples/launch/${{ matrix.workload }}.yaml" in workflow.read_text()
    for entry in job["strategy"]["matrix"]["include"]:
        load_thresholds(ROOT / "examples" / "thresholds" / f"{entry['workload']}.yaml")
        # The run states its launch traffic, as rates: the verdict does not hang on a user count.
        launch = load_config_file(str(ROOT / "examples" / "launch" / f"{entry['workload']}.yaml"))
        assert launch["rates"] and "users" not in launch
        assert (ROOT / "workloads" / f"{entry['workload']}.py").is_file()
        assert entry["design"] in (ROOT / "workloads" / f"{entry['workload']}.py").read_text()


@pytest.mark.slow
def test_report_names_the_time_ordered_key_of_the_sensor_by_time_design(tmp_path) -> None:
    # An hour of the simulated clock every 3 s: the hot partition key moves during the run.
    # The simulated clock moves it, whatever the engine: moto, which starts at once.
    done = subprocess.run(
        [
            sys.executable, "-m", "loadgen", "run", "sensor", "--design", "by-time",
            "--users", "10", "--duration", "8s", "--clock-speed", "1200", "--engine", "moto",
            "--report", str(tmp_path),
        ],
        cwd=ROOT, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    page = (tmp_path / "report.html").read_text()
    assert "A time-ordered key on ph-sensor" in page
    assert "READINGS#2026-01-01-00 → READINGS#2026-01-01-01" in page
