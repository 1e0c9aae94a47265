"""Shared fixtures: local DynamoDB targets, and an environment that cannot reach real AWS.

The environment is fixed at import, before any test module imports boto3, and inherited by
the CLI runs that tests start as child processes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from loadgen.errors import TargetError
from loadgen.targets import DynamoDBLocal, EmbeddedMoto

# Dummy credentials (alphanumeric, as DynamoDB Local wants) and no way to find real ones: no
# profile, no config files, no instance or container metadata.
for _name in (
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_ROLE_ARN",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_DYNAMODB",
):
    os.environ.pop(_name, None)
os.environ.update(
    AWS_ACCESS_KEY_ID="local",
    AWS_SECRET_ACCESS_KEY="local",
    AWS_DEFAULT_REGION="us-east-1",
    AWS_REGION="us-east-1",
    AWS_CONFIG_FILE=os.devnull,
    AWS_SHARED_CREDENTIALS_FILE=os.devnull,
    AWS_EC2_METADATA_DISABLED="true",
)


def in_ci() -> bool:
    """True where a missing engine must fail the run rather than skip tests."""
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """URL of a moto server shared by the whole session."""
    with EmbeddedMoto() as moto:
        yield moto.endpoint_url


@pytest.fixture(scope="session")
def dynamodb_local() -> Iterator[DynamoDBLocal]:
    """A running DynamoDB Local shared by the whole session (skipped if absent, outside CI)."""
    target = DynamoDBLocal()
    try:
        target.start()
    except TargetError as exc:
        if in_ci():
            pytest.fail(f"DynamoDB Local must run in CI: {exc}", pytrace=False)
        pytest.skip(f"DynamoDB Local unavailable: {exc}")
    with target:
        yield target


@pytest.fixture(scope="session")
def dynamodb_local_endpoint(dynamodb_local: DynamoDBLocal) -> str:
    """URL of the session's DynamoDB Local."""
    return dynamodb_local.endpoint_url
