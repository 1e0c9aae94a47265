"""Bad input to ``loadgen run``: one line naming the value, exit code 2, no traceback."""

from __future__ import annotations

import os
import socket

import pytest

from tests.test_run import loadgen


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["run", "widgets"], "unknown workload 'widgets'"),
        (["run", "counter", "--distribution", "zipff"], "unknown distribution 'zipff'"),
        (["run", "counter", "--distribution", "zipf:0"], "0"),
        (["run", "counter", "--distribution", "zipf:-1.5"], "-1.5"),
        (["run", "counter", "--distribution", "hotspot:1.2:0.8"], "1.2"),
        (["run", "counter", "--distribution", "hotspot:0.2:0"], "0"),
        (["run", "counter", "--keys", "0"], "--keys must be >= 1 (got 0)"),
        (["run", "counter", "--users", "0"], "--users must be >= 1 (got 0)"),
        (["run", "counter", "--duration", "soon"], "'soon'"),
        (["run", "counter", "--config", "/nonexistent/run.yaml"], "/nonexistent/run.yaml"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], expected: str) -> None:
    result = loadgen(*args, timeout=60)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("loadgen: error: ")
    assert expected in lines[0]
    assert "Traceback" not in result.stderr


def test_unreachable_endpoint() -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    result = loadgen("run", "counter", "--endpoint", url, timeout=60)
    assert result.returncode == 2
    assert url in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_unknown_design_names_the_design(tmp_path) -> None:
    result = loadgen(
        "run", "counter", "--design", "triple", "--duration", "2s", "--engine", "moto", timeout=90
    )
    assert result.returncode == 2
    last = result.stderr.strip().splitlines()[-1]
    assert last == "loadgen: error: unknown design 'triple' (expected one of: single, sharded)"
    assert "Traceback" not in result.stderr


def test_missing_aws_credentials(tmp_path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    env.update(
        AWS_CONFIG_FILE=str(tmp_path / "none"),
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
        AWS_EC2_METADATA_DISABLED="true",
        AWS_REGION="us-east-1",
    )
    result = loadgen("run", "counter", "--aws", env=env, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "loadgen: error: no AWS credentials found for --aws (configure a profile, "
        "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or an instance role)"
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["counter", "--shards", "0"], "--shards must be >= 1 (got 0)"),
        (["orders", "--status-shards", "-1"], "--status-shards must be >= 1 (got -1)"),
        (["sensor", "--clock-speed", "0"], "--clock-speed must be > 0 (got 0.0)"),
        (["counter", "--billing-mode", "free"], "unknown billing mode 'free'"),
    ],
)
def test_bad_workload_options_name_the_value(args: list[str], expected: str) -> None:
    # The workload reads its options once the target is up: the embedded moto, which starts
    # in a second where DynamoDB Local's JVM takes several.
    result = loadgen("run", *args, "--duration", "2s", "--engine", "moto", timeout=90)
    assert result.returncode == 2
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("loadgen: error: ") and expected in last
    assert "Traceback" not in result.stderr
