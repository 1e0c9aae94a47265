"""``loadgen run`` end to end: each workload in each design, against local targets.

Every run is a real headless Locust run of a few seconds in a child process; the results
file is checked, and each bad design's hottest key must take a visibly larger share than
the good design's.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.client.test_client_parity import on_dynamodb_local
from tests.conftest import (
    GATED_ENGINE,
    TABLES,
    LaunchRun,
    need_dynamodb_local,
    throttled_on,
)

ROOT = Path(__file__).resolve().parent.parent

# (workload, bad design, good design, the table or index whose hottest key tells them apart)
DESIGNS = [
    ("counter", "single", "sharded", "ph-counter"),
    ("sensor", "by-time", "per-sensor", "ph-sensor"),
    ("orders", "hot-status", "sharded-status", "ph-orders/status"),
]


def buffered(results: dict[str, Any], scope: str) -> float:
    """Write units an index's buffer held as the run ended (``table/index``)."""
    return sum(
        float(b.get("buffered_write_units") or 0)
        for b in results.get("gsi_buffers") or ()
        if f"{b['table']}/{b['index']}" == scope
    )


def loadgen(*args: str, timeout: float = 120, env: dict[str, str] | None = None) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "loadgen", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def run_workload(tmp_path: Path, workload: str, design: str, *extra: str) -> dict[str, Any]:
    """A short run: 4 users over 200 keys."""
    out = tmp_path / f"{workload}-{design}.json"
    load = ["--users", "4", "--duration", "4s", "--keys", "200"]
    result = loadgen("run", workload, "--design", design, *load, "--out", str(out), *extra)
    assert result.returncode == 0, result.stderr[-3000:]
    check_summary(result.stdout)
    return json.loads(out.read_text())


def launch_results(launch_run: Callable[..., LaunchRun], *args: str) -> dict[str, Any]:
    """A run at the workload's launch traffic (the open model) over its default key space,
    as the example pipeline runs it; shared with the other tests that judge it."""
    run = launch_run(*args)
    expected = 0
    if run.report is not None:  # gated too: the exit code is the gate's (tests/verdict)
        assert ("Gate PASSED" in run.stdout) != ("Gate FAILED" in run.stdout), run.stdout
        expected = 0 if "Gate PASSED" in run.stdout else 1
    assert run.returncode == expected, run.stdout[-2000:] + run.stderr[-3000:]
    check_summary(run.stdout)
    return run.results()


def check_summary(stdout: str) -> None:
    assert "Hottest partition keys" in stdout
    assert "\nDiagnosis:\n  " in stdout  # the summary ends with the diagnosis


def top_share(results: dict[str, Any], scope: str) -> float:
    shares = [row["share"] for row in results["hot_keys"] if row["table"] == scope]
    assert shares, f"no hot keys for {scope} in {results['hot_keys']}"
    return max(shares)


def check_results(
    results: dict[str, Any], workload: str, design: str, *, throttling: bool = False
) -> None:
    assert results["schema_version"] == 1
    assert results["run"]["workload"] == workload
    assert results["run"]["design"] == design
    totals = results["totals"]
    assert totals["requests"] > 10
    if not throttling:
        # Nothing throttles; the odd transaction conflict is retried by the SDK.
        assert totals["throttled_attempts"] == 0
        assert totals["failures"] <= totals["requests"] * 0.02, totals["errors"]
    names = {row["name"] for row in results["operations"]}
    assert all(name.startswith(f"{workload}.") for name in names), names
    assert sum(row["requests"] for row in results["operations"]) == totals["requests"]
    for row in results["operations"]:
        assert row["p50_ms"] is not None and row["p50_ms"] <= row["p99_ms"]
    # Keys never appear in request names.
    for row in results["hot_keys"]:
        assert row["key"] not in names


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["dynamodb-local", "moto"])
@pytest.mark.parametrize(("workload", "bad", "good", "scope"), DESIGNS)
def test_designs_on_embedded_target(launch_run, workload, bad, good, scope, engine) -> None:
    if engine == "dynamodb-local":
        need_dynamodb_local()
    # At launch traffic: a verdict on the designs must not hang on how fast the engine is.
    bad_results = launch_results(launch_run, workload, bad, engine)
    good_results = launch_results(launch_run, workload, good, engine)
    # The embedded target is the partition model: the bad design's hot key throttles.
    check_results(bad_results, workload, bad, throttling=True)
    check_results(good_results, workload, good, throttling=True)
    assert bad_results["run"]["engine"] == good_results["run"]["engine"] == engine
    if engine == "dynamodb-local":  # what it carried in its warm-up, in the results file
        assert bad_results["run"]["engine_rate"] > 0
    assert bad_results["run"]["scale"] > 0
    assert top_share(bad_results, scope) > 2 * top_share(good_results, scope)
    # Judged by the throttles DynamoDB's reasons put on the design's own table or index: at
    # a small scale a few transactions throttle by chance on a busy key elsewhere (orders'
    # most active user), which is not what the design changes.
    if "/" in scope:
        # A hot index key: DynamoDB buffers the index's writes for minutes before it pushes
        # back (docs/fidelity.md), so a short run sees its buffer fill, not a throttle.
        assert buffered(bad_results, scope) > 3 * buffered(good_results, scope) + 1, (
            bad_results.get("gsi_buffers"),
            good_results.get("gsi_buffers"),
        )
        return
    bad, good = bad_results["totals"], good_results["totals"]
    assert throttled_on(bad, scope) > 0, bad["throttles"]
    assert (
        throttled_on(good, scope) / good["requests"]
        < throttled_on(bad, scope) / bad["requests"] / 3
    ), (good["throttles"], bad["throttles"])


@pytest.mark.slow
@pytest.mark.dynamodb_local
@pytest.mark.parametrize(("workload", "bad", "good", "scope"), DESIGNS)
def test_designs_on_dynamodb_local(task_run, dynamodb_local_endpoint, workload, bad, good, scope):
    """Through ``--endpoint``, on DynamoDB Local, which never throttles: the bad design's hot
    key still shows in its share. The runs are the session's boto3 runs that the client
    parity test compares (one user, a fixed seed and task budget, a table of its own)."""
    shares = {}
    for design in (bad, good):
        run = on_dynamodb_local(task_run, dynamodb_local_endpoint, workload, design, "boto3")
        assert run.returncode == 0, run.stderr[-3000:]
        check_summary(run.stdout)
        results = run.results()
        check_results(results, workload, design)
        assert results["run"]["target"] == dynamodb_local_endpoint
        shares[design] = top_share(results, scope.replace(TABLES[workload], run.table, 1))
    assert shares[bad] > 2 * shares[good], shares


def test_other_workload_options_reach_the_workload(tmp_path) -> None:
    # On the embedded moto, as the next two: what they check does not depend on the engine,
    # and moto starts in a second where DynamoDB Local's JVM takes several.
    results = run_workload(
        tmp_path, "counter", "sharded", "--shards", "3", "--mix", "increment=1,read=0",
        "--distribution", "uniform", "--engine", "moto",
    )  # fmt: skip
    assert {row["name"] for row in results["operations"]} == {"counter.increment"}
    keys = {row["key"] for row in results["hot_keys"]}
    assert keys and all(key.rsplit("#", 1)[1] in {"0", "1", "2"} for key in keys)


def test_config_file_settings_with_flags_overriding(tmp_path) -> None:
    config = tmp_path / "run.yaml"
    out = tmp_path / "out.json"
    config.write_text(
        "users: 2\nduration: 3s\ndesign: single\ndistribution: hotspot:0.2:0.8\nkeys: 50\n"
        f"out: {out}\noptions:\n  mix: increment=1,read=1\n"
    )
    result = loadgen(
        "run", "counter", "--config", str(config), "--design", "sharded", "--engine", "moto"
    )
    assert result.returncode == 0, result.stderr[-2000:]
    run = json.loads(out.read_text())["run"]
    assert run["design"] == "sharded"
    assert run["distribution"] == "hotspot:0.2:0.8"
    assert run["users"] == 2


def test_interrupted_run_still_writes_results(tmp_path) -> None:
    out = tmp_path / "out.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "loadgen", "run", "counter", "--duration", "60s", "--users", "2",
         "--engine", "moto", "--out", str(out)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    # Wait for the first progress line ("[    2s] users ..."): the users are running.
    assert process.stderr is not None
    for line in process.stderr:
        if line.startswith("[") and "requests" in line:
            break
    process.send_signal(signal.SIGINT)
    stdout, _ = process.communicate(timeout=60)
    assert process.returncode == 128 + signal.SIGINT
    assert "Hottest partition keys" in stdout
    results = json.loads(out.read_text())
    assert results["run"]["interrupted"] is True
    assert results["totals"]["requests"] > 0


@pytest.mark.slow
def test_launch_traffic_throttles_the_single_counter_but_not_the_sharded_one(launch_run) -> None:
    """The counter at launch traffic (examples/launch/counter.yaml: 1,650 operations/s, no
    scale, no engine given) on the default engine where Java runs: the embedded target models
    DynamoDB's partitions at its default scale. The runs are the session's launch runs."""
    need_dynamodb_local()
    throttled = {}
    for design in ("single", "sharded"):
        run = launch_run("counter", design, GATED_ENGINE)
        results = launch_results(launch_run, "counter", design, GATED_ENGINE)
        assert "scale 0.1" in run.stdout
        assert results["run"]["scale"] == 0.1
        assert results["totals"]["requests"] > 100
        throttled[design] = results["totals"]["throttled_attempts"] / results["totals"]["requests"]
        # The emulator answered every attempt, those of calls still retrying at the end too.
        answers, totals = results["target_answers"], results["totals"]
        assert answers["throttled"] >= totals["throttled_attempts"]
        assert answers["throttled"] + answers["forwarded"] >= totals["attempts"]
    # Launch traffic of 1,650 operations/s, offered at the same rate however fast the engine
    # answers (closed-model users would offer more where it is faster): one key's partition
    # serves 1,000 write units/s and throttles; ten shards carry it.
    assert throttled["single"] > 0.3
    assert throttled["sharded"] < 0.01
