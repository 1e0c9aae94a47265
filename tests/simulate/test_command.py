"""``loadgen simulate`` run as a user runs it: its output, exit codes and results file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_run import loadgen


def test_the_single_counter_fails_and_its_results_feed_report_and_gate(tmp_path: Path) -> None:
    out = tmp_path / "simulated.json"
    done = loadgen(
        "simulate", "counter", "--design", "single", "--rate", "1650", "--duration", "3m",
        "--out", str(out), timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "ph-counter (on-demand)" in done.stdout
    assert "First failure of each access pattern" in done.stdout
    assert "increment: minute 0" in done.stdout
    # The profile's cost: on demand and provisioned with auto scaling, per hour and in total.
    assert "Cost of the profile (us-east-1, AWS Price List 2026-08-15; USD;" in done.stdout
    assert "provisioned and auto scaled" in done.stdout
    results = json.loads(out.read_text())
    cost = results["simulation"]["cost"]
    assert [row["minutes"] for row in cost["hours"]] == [3]
    assert cost["total"]["on_demand"] > 0 and cost["provisioned"]["replayed"]
    assert results["heat"]["columns"] == 180
    assert results["hot_keys"][0]["key"] == "GLOBAL_COUNTER"
    gate = loadgen(
        "gate", str(out), "--thresholds", "examples/thresholds/counter.yaml", timeout=120
    )
    assert gate.returncode == 1, gate.stderr
    assert "GLOBAL_COUNTER takes 100.00%" in gate.stdout
    assert "a simulation delivers the load it simulates" in gate.stdout
    assert "closed-model" not in gate.stdout
    pytest.importorskip("matplotlib")
    report = loadgen("report", str(out), "--out", str(tmp_path / "report"), timeout=180)
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "report" / "report.html").is_file()


def test_the_sharded_counter_passes(tmp_path: Path) -> None:
    profile = tmp_path / "launch.yaml"
    profile.write_text("- 0 -> 1650/s over 2m\n- hold 1m\n")
    done = loadgen(
        "simulate", "counter", "--design", "sharded", "--profile", str(profile), timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "No access pattern fails" in done.stdout


def test_the_legacy_retry_mode_sends_more_requests_than_the_standard_one(tmp_path: Path) -> None:
    # botocore's default retries a throttle ten times with no quota, as a run's clients do.
    totals = {}
    for mode in ("standard", "legacy"):
        out = tmp_path / f"{mode}.json"
        done = loadgen(
            "simulate", "counter", "--design", "single", "--rate", "1650", "--duration", "1m",
            "--retry-mode", mode, "--out", str(out), timeout=120,
        )  # fmt: skip
        assert done.returncode == 1, done.stderr
        totals[mode] = json.loads(out.read_text())["totals"]
    assert totals["legacy"]["attempts"] > 2 * totals["standard"]["attempts"]
    assert totals["legacy"]["failures"] < totals["standard"]["failures"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["simulate", "widgets", "--rate", "5", "--duration", "1m"], "unknown workload 'widgets'"),
        (
            ["simulate", "counter", "--design", "triple", "--rate", "5", "--duration", "1m"],
            "unknown design 'triple'",
        ),
        (["simulate", "counter", "--duration", "0s"], "--duration must be at least 1s"),
        (["simulate", "counter", "--rate", "fast", "--duration", "1m"], "'fast' is not a rate"),
        (["simulate", "counter", "--rate", "5", "--duration", "soon"], "'soon'"),
        (["simulate", "counter", "--profile", "PROFILE"], "'0 -> 20k/s in 10m' does not parse"),
        (["simulate", "counter", "--profile", "/nonexistent.yaml"], "/nonexistent.yaml"),
        (
            ["simulate", "counter", "--rate", "5", "--duration", "1m", "--seed", "-1"],
            "--seed must be 0 or more (got -1)",
        ),
        (
            ["simulate", "counter", "--rate", "5", "--duration", "1m", "--attempts", "0"],
            "--attempts must be 1 to 20 (got 0)",
        ),
        (
            ["simulate", "counter", "--rate", "5", "--duration", "1m", "--clients", "0"],
            "--clients must be at least 1 (got 0)",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], expected: str) -> None:
    profile = tmp_path / "bad.yaml"
    profile.write_text("- 0 -> 20k/s in 10m\n")
    done = loadgen(*[str(profile) if a == "PROFILE" else a for a in args], timeout=60)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("loadgen: error: ")
    assert expected in lines[0]
