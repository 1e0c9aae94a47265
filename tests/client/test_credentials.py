"""Local engines need no configured credentials; AWS's endpoints keep the standard chain."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import locust  # noqa: F401  (patches the standard library for gevent before boto3 loads)
import pytest

from loadgen.client.credentials import LOCAL_CREDENTIALS, is_local_endpoint, session_for

ROOT = Path(__file__).resolve().parents[2]


def _no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000",
        "http://localhost:4566",
        "http://[::1]:8000",
        "http://emulator:8000",
        "http://dynamodb.internal.example:8000",
    ],
)
def test_endpoints_that_are_not_aws_are_local(url: str) -> None:
    assert is_local_endpoint(url)


@pytest.mark.parametrize(
    "url",
    [
        None,
        "",
        "https://dynamodb.us-east-1.amazonaws.com",
        "https://dynamodb-fips.us-gov-west-1.amazonaws.com",
        "https://dynamodb.cn-north-1.amazonaws.com.cn",
        "https://vpce-1a2b.dynamodb.us-east-1.vpce.amazonaws.com",
        "https://dynamodb.us-east-1.api.aws",
    ],
)
def test_aws_endpoints_and_no_endpoint_are_not_local(url: str | None) -> None:
    assert not is_local_endpoint(url)


def test_a_local_endpoint_without_credentials_signs_with_local_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _no_credentials(monkeypatch)
    assert session_for(None).get_credentials() is None  # AWS: nothing invented
    session = session_for("http://127.0.0.1:8000")
    credentials = session.get_credentials()
    assert credentials is not None
    assert credentials.access_key == LOCAL_CREDENTIALS["aws_access_key_id"]
    assert session.region_name == "us-east-1"


def test_configured_credentials_win_on_a_local_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_credentials(monkeypatch)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "mine")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    session = session_for("http://127.0.0.1:8000")
    credentials = session.get_credentials()
    assert credentials is not None and credentials.access_key == "mine"
    assert session.region_name == "eu-west-1"


@pytest.mark.slow
@pytest.mark.parametrize("client", ["boto3", "fast"])
def test_plain_locust_runs_against_a_local_endpoint_with_no_credentials(
    tmp_path: Path, moto_endpoint: str, client: str
) -> None:
    """`locust -f` as a new user runs it: no AWS configuration at all on the machine."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("AWS_") or name in ("AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE")
    }
    environment["AWS_EC2_METADATA_DISABLED"] = "true"
    out = tmp_path / "results.json"
    result = subprocess.run(
        [
            sys.executable, "-m", "locust", "-f", "workloads/counter.py", "--headless",
            "-u", "2", "-r", "2", "-t", "2s", "-H", moto_endpoint, "--client", client,
            "--table", f"ph-counter-nocreds-{client}", "--results-file", str(out),
            "--only-summary",
        ],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert "NoCredentialsError" not in result.stderr
    totals = json.loads(out.read_text())["totals"]
    assert totals["requests"] > 0
    assert totals["failures"] == 0
