"""SigV4: byte-identical to botocore's ``SigV4Auth`` for the same request, time and credentials."""

from __future__ import annotations

import datetime
import string
from unittest import mock

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import ReadOnlyCredentials
from hypothesis import given, settings
from hypothesis import strategies as st

from loadgen.client import sigv4
from loadgen.client.sigv4 import SigV4Signer, amz_date, canonical_path, host_header

# Headers botocore treats specially when signing (it rewrites Date, takes the payload hash
# from X-Amz-Content-SHA256), or that the signer sets itself: left out of the random set.
_SPECIAL = {
    "authorization",
    "date",
    "host",
    "x-amz-date",
    "x-amz-security-token",
    "x-amz-content-sha256",
}
header_names = st.text(string.ascii_letters + string.digits + "-", min_size=1, max_size=20).filter(
    lambda name: name.lower() not in _SPECIAL
)
# Printable latin-1 with runs of spaces and tabs, so trimming and folding are exercised.
header_values = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f")
    | st.sampled_from([" ", "\t", "\xa0"]),
    max_size=40,
)
# Unique names as given; names equal but for case are kept apart, as a dict keeps them, and
# both clients then sign them as one header of comma-joined values.
headers = st.lists(st.tuples(header_names, header_values), max_size=8, unique_by=lambda p: p[0])
endpoints = st.sampled_from(
    [
        "http://127.0.0.1:8000",
        "http://localhost",
        "https://dynamodb.us-east-1.amazonaws.com",
        "https://dynamodb.eu-west-1.amazonaws.com:443",
        "http://[::1]:4566",
    ]
)
credentials = st.builds(
    ReadOnlyCredentials,
    st.text(string.ascii_uppercase + string.digits, min_size=1, max_size=20),
    st.text(string.ascii_letters + string.digits + "/+", min_size=1, max_size=40),
    st.none() | st.text(string.ascii_letters + string.digits + "/+=", min_size=1, max_size=60),
)
times = st.datetimes(
    min_value=datetime.datetime(2000, 1, 1), max_value=datetime.datetime(2099, 12, 31)
)


def botocore_signature(
    url: str,
    pairs: list[tuple[str, str]],
    body: bytes,
    creds: ReadOnlyCredentials,
    when: datetime.datetime,
    region: str,
) -> dict[str, str]:
    request = AWSRequest(method="POST", url=url, data=body)
    for name, value in pairs:
        request.headers[name] = value  # HTTPHeaders appends: duplicates are kept, as on the wire
    with mock.patch("botocore.auth.get_current_datetime", return_value=when):
        SigV4Auth(creds, "dynamodb", region).add_auth(request)
    return {
        name: request.headers[name]
        for name in ("Authorization", "X-Amz-Date", "X-Amz-Security-Token")
        if name in request.headers
    }


def our_signature(
    url: str,
    pairs: list[tuple[str, str]],
    body: bytes,
    creds: ReadOnlyCredentials,
    when: datetime.datetime,
    region: str,
) -> dict[str, str]:
    headers = {"Host": host_header(url), **dict(pairs)}
    signer = SigV4Signer(region, "dynamodb")
    timestamp = when.strftime("%Y%m%dT%H%M%SZ")
    signer.sign(headers, body, creds, timestamp, path=canonical_path("/"))
    return {
        name: headers[name]
        for name in ("Authorization", "X-Amz-Date", "X-Amz-Security-Token")
        if name in headers
    }


@settings(max_examples=300, deadline=None)
@given(
    url=endpoints,
    pairs=headers,
    body=st.binary(max_size=2000),
    creds=credentials,
    when=times,
    region=st.sampled_from(["us-east-1", "eu-west-1", "ap-southeast-2"]),
)
def test_signature_is_byte_identical_to_botocore(url, pairs, body, creds, when, region) -> None:
    ours = our_signature(url, pairs, body, creds, when, region)
    assert ours == botocore_signature(url, pairs, body, creds, when, region)


@settings(max_examples=100, deadline=None)
@given(
    body=st.binary(max_size=500),
    target=st.sampled_from(["PutItem", "GetItem", "TransactWriteItems", "Query"]),
    creds=credentials,
    when=times,
)
def test_dynamodb_request_headers_sign_like_botocore(body, target, creds, when) -> None:
    # Exactly the headers the fast client sends.
    pairs = [
        ("Content-Type", "application/x-amz-json-1.0"),
        ("X-Amz-Target", f"DynamoDB_20120810.{target}"),
        ("User-Agent", "partition-heat"),
    ]
    url = "https://dynamodb.us-east-1.amazonaws.com"
    assert our_signature(url, pairs, body, creds, when, "us-east-1") == botocore_signature(
        url, pairs, body, creds, when, "us-east-1"
    )


def test_signing_key_is_cached_per_day() -> None:
    signer = SigV4Signer("us-east-1", "dynamodb")
    with mock.patch.object(sigv4, "_hmac", wraps=sigv4._hmac) as derive:
        first = signer.signing_key("secret", "20260101")
        assert signer.signing_key("secret", "20260101") is first
        assert derive.call_count == 4
        assert signer.signing_key("secret", "20260102") != first
        assert derive.call_count == 8


def test_a_retry_is_signed_afresh() -> None:
    signer = SigV4Signer("us-east-1", "dynamodb")
    creds = ReadOnlyCredentials("AKID", "secret", "token")
    headers = {"Host": "localhost"}
    signer.sign(headers, b"{}", creds, "20260101T000000Z")
    first = headers["Authorization"]
    signer.sign(headers, b"{}", creds, "20260101T000001Z")
    assert headers["Authorization"] != first
    assert headers["X-Amz-Date"] == "20260101T000001Z"
    assert headers["X-Amz-Security-Token"] == "token"
    assert "x-amz-security-token" in headers["Authorization"]


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://127.0.0.1:8000", "127.0.0.1:8000"),
        ("https://dynamodb.us-east-1.amazonaws.com:443", "dynamodb.us-east-1.amazonaws.com"),
        ("http://LOCALHOST:80/", "localhost"),
        ("http://[::1]:4566", "[::1]:4566"),
    ],
)
def test_host_header(url: str, host: str) -> None:
    assert host_header(url) == host


def test_amz_date() -> None:
    assert amz_date(0) == "19700101T000000Z"
