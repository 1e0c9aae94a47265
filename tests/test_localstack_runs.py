"""``loadgen run`` against LocalStack, both ways a team uses it: straight (LocalStack's own
answers, no partition model) and through the emulator (the model decides throttles,
LocalStack stores the data); and LocalStack's fault injection counted as its own refusals.

Every run but one goes to the session's LocalStack (`localstack_endpoint`: started once, it
takes seconds), as ``--localstack --endpoint URL``; runs are short. The faults through the
emulator run with LocalStack as the run's engine (``--engine localstack``), started for it;
tests/targets/test_localstack.py starts its own too.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from loadgen.emulator.engines import DynamoConnection
from loadgen.targets.localstack import Faults, read_faults
from tests.test_run import (
    DESIGNS,
    ROOT,
    buffered,
    check_results,
    check_summary,
    loadgen,
    top_share,
)

pytestmark = [pytest.mark.slow, pytest.mark.localstack]

NO_MODEL = "No partition model judged this run: LocalStack answered every request itself"
DESIGN_FILE = "examples/designs/counter.yaml"


@pytest.fixture(autouse=True)
def no_tables(localstack_endpoint: str) -> None:
    """Each test starts on an empty LocalStack: a table left by another run (the single
    counter's item grown by its increments, starting data) would change what this one sees."""
    connection = DynamoConnection(localstack_endpoint)
    try:
        for table in connection.call("ListTables", {}).get("TableNames", []):
            connection.call("DeleteTable", {"TableName": table})
    finally:
        connection.close()


def run(tmp_path: Path, name: str, *args: str) -> tuple[dict[str, Any], str]:
    """A run against the session's LocalStack; its results and its printed summary."""
    out = tmp_path / f"{name}.json"
    result = loadgen("run", *args, "--out", str(out), timeout=180)
    assert result.returncode in (0, 1), result.stdout[-2000:] + result.stderr[-3000:]
    check_summary(result.stdout)
    results = json.loads(out.read_text())
    # A design run exits 1 where a pattern fails, as check and simulate do.
    failed = any(v["status"] == "FAIL" for v in results.get("verdicts") or ())
    assert result.returncode == (1 if failed else 0), result.stderr[-3000:]
    return results, result.stdout


def short(workload: str, design: str) -> list[str]:
    return [workload, "--design", design, "--users", "4", "--duration", "4s", "--keys", "200"]


def share_target(results: dict[str, Any]) -> float:
    """Throttled attempts over attempts as the partition model answered them."""
    answers = results["target_answers"]
    return float(answers["throttled"] / (answers["throttled"] + answers["forwarded"]))


# --- straight: LocalStack's own answers --------------------------------------------------------


@pytest.mark.parametrize(("workload", "bad", "good", "scope"), DESIGNS)
def test_each_workload_straight_against_localstack(
    tmp_path: Path, localstack_endpoint: str, workload: str, bad: str, good: str, scope: str
) -> None:
    results, stdout = run(
        tmp_path, workload, *short(workload, bad), "--localstack", "--endpoint", localstack_endpoint
    )
    check_results(results, workload, bad)  # nothing throttled: LocalStack models no partitions
    assert results["run"]["engine"] == "localstack" and results["run"]["scale"] is None
    assert results["run"]["target"] == f"LocalStack ({localstack_endpoint})"
    assert results["run"]["localstack_faults"] == Faults().to_dict()
    assert "target_answers" not in results  # no emulator to ask
    assert NO_MODEL in stdout and "no partition heat was modelled" in stdout
    # The bad design's hot key is the traffic's, and shows as such.
    assert top_share(results, scope) > 0.05


def test_a_design_file_straight_against_localstack(
    tmp_path: Path, localstack_endpoint: str
) -> None:
    results, stdout = run(
        tmp_path, "design", DESIGN_FILE, "--design", "single", "--users", "2", "--duration", "4s",
        "--localstack", "--endpoint", localstack_endpoint,
    )  # fmt: skip
    assert results["run"]["scale"] is None and NO_MODEL in stdout
    verdicts = {v["id"]: v for v in results["verdicts"]}
    assert set(verdicts) == {"increment", "read"}
    for verdict in verdicts.values():  # judged, and never on a throttle: there was none
        assert verdict["requests"] > 0 and verdict["throttled_attempts"] == 0
        assert not any("throttled" in reason for reason in verdict["reasons"]), verdict
    assert verdicts["increment"]["hot_key"] == "GLOBAL_COUNTER"


# --- through the emulator: the partition model in front, LocalStack storing ----------------------


# The counter's run through the emulator is the comparison with DynamoDB Local below. At
# launch traffic (the open model) and a small scale: the model sees the bad design's hot key
# past its ceiling while LocalStack, some 150 requests/s here, carries what it admits.
SCALES = {"sensor": "0.03", "orders": "0.03"}

# Times its launch rates a workload runs at. The orders' hot status takes 1.25 times its index
# partition's ceiling at launch (loadgen check examples/designs/orders.yaml --design
# hot-status): over 5 s its buffer took 8-18 write units, and none in CI where LocalStack
# carried less of the rate. At twice the rates and half the scale LocalStack is sent the same
# requests and the status 2.5 times the ceiling: 152-172 units buffered here.
RATE_TIMES = {"sensor": 1, "orders": 2}


def launch_config(tmp_path: Path, workload: str) -> Path:
    """The workload's launch traffic (examples/launch), its rates times `RATE_TIMES`."""
    config = yaml.safe_load((ROOT / "examples" / "launch" / f"{workload}.yaml").read_text())
    config["rates"] = {op: rate * RATE_TIMES[workload] for op, rate in config["rates"].items()}
    path = tmp_path / f"{workload}-launch.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.parametrize(("workload", "bad", "good", "scope"), DESIGNS[1:])
def test_each_workload_through_the_emulator_in_front_of_localstack(
    tmp_path: Path, localstack_endpoint: str, workload: str, bad: str, good: str, scope: str
) -> None:
    results, stdout = run(
        tmp_path, workload, workload, "--design", bad,
        "--config", str(launch_config(tmp_path, workload)), "--duration", "5s",
        "--scale", SCALES[workload], "--localstack", "--emulate", "--endpoint", localstack_endpoint,
    )  # fmt: skip
    check_results(results, workload, bad, throttling=True)
    assert results["run"]["scale"] > 0 and NO_MODEL not in stdout
    assert f"in front of LocalStack ({localstack_endpoint})" in results["run"]["target"]
    # The model throttled the hot key (a hot index key: filled its index's write buffer, which
    # DynamoDB holds for minutes before it pushes back); LocalStack stored what it admitted.
    if "/" in scope:
        assert buffered(results, scope) > 0, results.get("gsi_buffers")
    else:
        assert results["target_answers"]["throttled"] > 0
    assert results["target_answers"]["forwarded"] > 0
    assert top_share(results, scope) > 0.3


def test_the_single_counter_through_the_emulator_agrees_with_dynamodb_local(
    tmp_path: Path, localstack_endpoint: str, dynamodb_local_endpoint: str
) -> None:
    """The counter's single design at launch traffic, the model in front of LocalStack and,
    the same way, in front of the session's DynamoDB Local: the engine stores, the model
    judges, so the hot key and its throttled share agree. At scale 0.03 (a partition takes
    30 write units/s) LocalStack carries what the model admits on a busy machine too; the
    throttled share does not depend on the scale (docs/targets.md: Scale)."""
    shares, hot = {}, {}
    for engine, endpoint in (
        ("localstack", localstack_endpoint),
        ("local", dynamodb_local_endpoint),
    ):
        flags = ["--localstack"] if engine == "localstack" else []
        table = f"ph-counter-{uuid.uuid4().hex[:8]}"  # the session's DynamoDB Local is shared
        results, _ = run(
            tmp_path, f"counter-single-{engine}", "counter", "--design", "single",
            "--config", "examples/launch/counter.yaml", "--duration", "8s", "--scale", "0.03",
            "--table", table, *flags, "--emulate", "--endpoint", endpoint,
        )  # fmt: skip
        check_results(results, "counter", "single", throttling=True)
        shares[engine] = share_target(results)
        hot[engine] = next(
            (r["key"], r["share"]) for r in results["hot_keys"] if r["table"] == table
        )
    assert hot["localstack"] == hot["local"] == ("GLOBAL_COUNTER", 1.0)
    assert shares["local"] > 0.3, shares  # the model throttled the hot key
    assert abs(shares["localstack"] - shares["local"]) <= 0.1 * shares["local"], shares


def test_a_design_file_through_the_emulator_in_front_of_localstack(
    tmp_path: Path, localstack_endpoint: str
) -> None:
    results, stdout = run(
        tmp_path, "design", DESIGN_FILE, "--design", "single", "--duration", "5s",
        "--scale", "0.05", "--localstack", "--emulate", "--endpoint", localstack_endpoint,
    )  # fmt: skip
    assert results["run"]["scale"] == 0.05 and NO_MODEL not in stdout
    verdicts = {v["id"]: v for v in results["verdicts"]}
    # The single counter's increments run past one partition's ceiling: the model says so.
    increment = verdicts["increment"]
    assert increment["status"] == "FAIL", increment
    assert increment["throttled_attempts"] > 0 and increment["hot_key"] == "GLOBAL_COUNTER"
    assert any("throttled" in reason for reason in increment["reasons"]), increment


# --- LocalStack's fault injection: its refusals, not heat --------------------------------------


def test_fault_injection_straight_is_counted_as_localstacks(
    tmp_path: Path, localstack_endpoint: str
) -> None:
    results, stdout = run(
        tmp_path, "faults", *short("counter", "sharded"),
        "--localstack", "--endpoint", localstack_endpoint, "--localstack-faults", "0.1",
    )  # fmt: skip
    totals = results["totals"]
    assert results["run"]["localstack_faults"]["DYNAMODB_ERROR_PROBABILITY"] == 0.1
    # About a tenth of attempts refused, at random (SDK retries hide almost all of them).
    assert 0.04 < totals["throttled_attempts"] / totals["attempts"] < 0.2, totals
    assert totals["failures"] <= totals["requests"] * 0.01
    line = next(line for line in stdout.splitlines() if line.startswith("Refusals:"))
    assert f"{totals['throttled_attempts']:,} throttled, all LocalStack's" in line
    assert "fault injection (DYNAMODB_ERROR_PROBABILITY=0.1)" in line and "not heat" in line
    assert NO_MODEL in stdout
    # Each throttle's source: LocalStack's own, with no reason given.
    assert {row["source"] for row in totals["throttles"]} == {"engine"}
    assert {row["reason"] for row in totals["throttles"]} == {"not reported"}
    assert "reason not reported" in line
    # The run's faults were for the run: the LocalStack has its own back.
    assert read_faults(localstack_endpoint) == Faults()


def test_fault_injection_through_the_emulator_is_split_from_the_models_throttles(
    tmp_path: Path,
) -> None:
    """LocalStack as the run's embedded engine, started by the emulator with its faults set
    after the warm-up (which they would refuse)."""
    results, stdout = run(
        tmp_path, "faults-emulated", "counter", "--design", "single",
        "--config", "examples/launch/counter.yaml", "--duration", "6s", "--scale", "0.03",
        "--engine", "localstack", "--localstack-faults", "write=0.1",
    )  # fmt: skip
    assert results["run"]["engine"] == "localstack" and results["run"]["engine_rate"] > 0
    assert "in front of embedded LocalStack 4.14.0" in results["run"]["target"]
    assert results["run"]["localstack_faults"]["DYNAMODB_WRITE_ERROR_PROBABILITY"] == 0.1
    totals = results["totals"]
    by_source = {"model": 0, "engine": 0}
    for row in totals["throttles"]:
        by_source[row["source"]] += row["attempts"]
    # The model refused the hot key's excess; LocalStack refused some of what it admitted.
    assert by_source["model"] > 0 and by_source["engine"] > 0, totals["throttles"]
    assert by_source["model"] + by_source["engine"] == totals["throttled_attempts"]
    # The emulator counts its own throttles only: LocalStack's reach it as forwarded answers.
    assert results["target_answers"]["throttled"] >= by_source["model"]
    line = next(line for line in stdout.splitlines() if line.startswith("Refusals:"))
    assert f"{by_source['model']:,} (" in line and "by the partition model," in line
    assert f"{by_source['engine']:,} (" in line
    assert "fault injection (DYNAMODB_WRITE_ERROR_PROBABILITY=0.1)" in line
