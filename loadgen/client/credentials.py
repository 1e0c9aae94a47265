"""Which credentials a client signs with: the standard chain, or local ones for a local engine.

A local engine (the emulator, moto, DynamoDB Local, LocalStack) accepts any credentials, but
botocore still refuses to send an unsigned request. So when a client targets an endpoint
that is not one of AWS's and the standard chain (environment, profiles, instance roles) finds
nothing, it signs with `LOCAL_CREDENTIALS`. Credentials that are configured always win:
DynamoDB Local keeps one database per access key id unless started with ``-sharedDb``.
``loadgen run`` and ``locust -f`` both reach this rule through `session_for`.

    session = session_for("http://127.0.0.1:8000")
    session.get_credentials().access_key   # "local" where none are configured
"""

from __future__ import annotations

from urllib.parse import urlsplit

import boto3

__all__ = ["AWS_DOMAINS", "LOCAL_CREDENTIALS", "is_local_endpoint", "session_for"]

LOCAL_CREDENTIALS = {
    # DynamoDB Local wants an alphanumeric access key id; moto accepts anything.
    "aws_access_key_id": "local",
    "aws_secret_access_key": "local",
}
LOCAL_REGION = "us-east-1"
"""The region a local engine's requests are signed for when none is configured."""

AWS_DOMAINS = ("amazonaws.com", "amazonaws.com.cn", "api.aws")
"""Domains of AWS's own endpoints (regional, FIPS, dual-stack, VPC endpoints)."""


def is_local_endpoint(endpoint_url: str | None) -> bool:
    """Whether ``endpoint_url`` is a local engine's: given, and not under one of AWS's domains.

    >>> is_local_endpoint("http://127.0.0.1:8000"), is_local_endpoint("http://emulator:8000")
    (True, True)
    >>> is_local_endpoint(None), is_local_endpoint("https://dynamodb.eu-west-1.amazonaws.com")
    (False, False)
    """
    if not endpoint_url:
        return False
    host = (urlsplit(endpoint_url).hostname or "").lower().rstrip(".")
    return not any(host == domain or host.endswith("." + domain) for domain in AWS_DOMAINS)


def session_for(endpoint_url: str | None) -> boto3.session.Session:
    """A boto3 session for a client of ``endpoint_url``: the standard credential chain, or
    `LOCAL_CREDENTIALS` for a local endpoint where the chain finds none."""
    session = boto3.session.Session()
    if is_local_endpoint(endpoint_url) and session.get_credentials() is None:
        session = boto3.session.Session(
            **LOCAL_CREDENTIALS, region_name=session.region_name or LOCAL_REGION
        )
    return session
