"""The CLI tried as a new user would: a missing profile, an endpoint that is not DynamoDB.

Each ends in one line naming the value and what was expected, exit code 2, no traceback.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.http_server import QuietHandler, serve
from tests.test_run import loadgen


def test_a_profile_that_does_not_exist_is_named(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    env.update(
        AWS_CONFIG_FILE=str(tmp_path / "none"),
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
        AWS_EC2_METADATA_DISABLED="true",
        AWS_PROFILE="no-such-profile",
    )
    result = loadgen("run", "counter", "--aws", env=env, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "loadgen: error: AWS profile 'no-such-profile' (from AWS_PROFILE) does not exist; "
        "expected one in ~/.aws/config or ~/.aws/credentials"
    )


class EmptyObject(QuietHandler):
    """A web server that answers ``{}`` to everything: JSON, but not DynamoDB."""

    def do_POST(self) -> None:
        self.body()
        self.reply(200, b"{}", {"Content-Type": "application/json"})


def test_an_endpoint_that_is_not_dynamodb_is_named(tmp_path: Path) -> None:
    with serve(EmptyObject) as url:
        result = loadgen(
            "run", "counter", "--endpoint", url, "--duration", "2s",
            "--out", str(tmp_path / "out.json"), timeout=90,
        )  # fmt: skip
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"loadgen: error: {url} answered DescribeTable 'ph-counter' without a table description "
        "(got None); expected a DynamoDB endpoint"
    )
