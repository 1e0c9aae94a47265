"""LocalStack started here: its install, its faults, its loopback sockets, and no process
left behind however it or its starter ends.

The lifecycle tests start a LocalStack of their own (4-14 s here); the run tests share one
(`localstack_endpoint`, tests/test_localstack_runs.py).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from loadgen.errors import ConfigError, TargetError
from loadgen.targets.localstack import Faults, localstack_target, read_faults
from tests.conftest import in_ci, need_localstack
from tests.test_run import loadgen

ROOT = Path(__file__).resolve().parents[2]


# --- fault injection, as LocalStack's variables say it --------------------------------------


@pytest.mark.parametrize(
    ("text", "faults"),
    [
        ("0.1", Faults(any=0.1)),
        ("read=0.05,write=0.1", Faults(read=0.05, write=0.1)),
        (" write = 1 , any=0 ", Faults(write=1.0)),
    ],
)
def test_faults_read_as_localstack_variables(text: str, faults: Faults) -> None:
    assert Faults.parse(text) == faults
    variables = faults.environment()
    assert set(variables) == {
        "DYNAMODB_ERROR_PROBABILITY",
        "DYNAMODB_READ_ERROR_PROBABILITY",
        "DYNAMODB_WRITE_ERROR_PROBABILITY",
    }
    assert float(variables["DYNAMODB_WRITE_ERROR_PROBABILITY"]) == faults.write


@pytest.mark.parametrize("text", ["1.5", "-0.1", "often", "reads=0.1", "write=0.1,write=0.2", ""])
def test_bad_faults_name_the_value(text: str) -> None:
    with pytest.raises(ConfigError, match="--localstack-faults"):
        Faults.parse(text)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--localstack-faults", "0.1"], "--localstack-faults 0.1 needs LocalStack"),
        (["--localstack", "--localstack-faults", "2"], "any must be 0 to 1 (got 2.0)"),
        (["--localstack", "--aws"], "--localstack and --aws exclude each other"),
        (["--localstack", "--engine", "moto"], "--localstack and --engine moto exclude"),
        (["--engine", "dynamo"], "--engine must be auto, dynamodb-local, moto or localstack"),
    ],
)
def test_bad_localstack_flags_are_one_line_and_exit_2(args: list[str], expected: str) -> None:
    result = loadgen("run", "counter", *args, timeout=60)
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("loadgen: error: ") and expected in line, line


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--localstack-faults", "0.1"], "--localstack-faults 0.1 goes with --engine localstack"),
        (["--engine", "localstack", "--localstack-faults", "nope"], "(got 'nope')"),
    ],
)
def test_bad_emulator_faults_are_one_line_and_exit_2(args: list[str], expected: str) -> None:
    result = loadgen("emulator", "--port", "0", *args, timeout=60)
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("loadgen: error: ") and expected in line, line


def test_an_endpoint_that_is_not_localstack_is_refused(moto_endpoint: str) -> None:
    assert read_faults(moto_endpoint, timeout=2.0) is None
    with (
        pytest.raises(TargetError, match="is not LocalStack"),
        localstack_target(moto_endpoint, None),
    ):
        pass


# --- install ----------------------------------------------------------------------------------


@pytest.mark.localstack
def test_the_install_is_done_once() -> None:
    need_localstack()
    result = subprocess.run(
        [sys.executable, "-m", "loadgen.targets.localstack_install"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("localstack: up to date in "), result.stdout


# --- a LocalStack of its own: offline, on loopback, faults at start, no JVM left ---------------

# Run in a network namespace holding only loopback where one can be made (root and unshare,
# as CI has): a start that tried to download anything would fail there.
_LIFECYCLE = textwrap.dedent(
    """
    import json, os, signal, sys, time
    import boto3, botocore.config
    from loadgen.targets.localstack import Faults, LocalStack, read_faults
    from loadgen.targets.reaper import processes_naming

    def listening(pid):
        inodes = set()
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
        found = []
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            for line in open(table).read().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and fields[9] in inodes:
                    found.append(fields[1].rsplit(":", 1)[0])
        return found

    seen = {}
    localstack = LocalStack(faults=Faults(write=0.5)).start()
    workdir = str(localstack._workdir)
    seen["faults"] = read_faults(localstack.endpoint_url).to_dict()
    client = boto3.client(
        "dynamodb", endpoint_url=localstack.endpoint_url, region_name="us-east-1",
        aws_access_key_id="local", aws_secret_access_key="local",
        config=botocore.config.Config(retries={"total_max_attempts": 1}),
    )
    client.create_table(
        TableName="faults", BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
    )
    refused = {"PutItem": 0, "GetItem": 0}
    for i in range(40):
        for operation, call in (
            ("PutItem", lambda: client.put_item(TableName="faults", Item={"pk": {"S": f"k{i}"}})),
            ("GetItem", lambda: client.get_item(TableName="faults", Key={"pk": {"S": f"k{i}"}})),
        ):
            try:
                call()
            except client.exceptions.ProvisionedThroughputExceededException:
                refused[operation] += 1
    seen["refused"] = refused
    pids = processes_naming(workdir)
    jvm = [p for p in pids if "java" in open(f"/proc/{p}/cmdline").read()]
    seen["jvm_found"] = len(jvm)
    seen["listening"] = {"localstack": listening(localstack.pid), "jvm": listening(jvm[0])}
    os.kill(localstack.pid, signal.SIGKILL)
    time.sleep(1)
    seen["jvm_after_sigkill"] = all(os.path.exists(f"/proc/{p}") for p in jvm)
    localstack.close()
    seen["left"] = processes_naming(workdir)
    seen["workdir_left"] = os.path.exists(workdir)
    print(json.dumps(seen))
    """
)


@pytest.mark.slow
@pytest.mark.localstack
def test_it_starts_offline_on_loopback_with_its_faults_and_leaves_no_jvm() -> None:
    need_localstack()
    command = [sys.executable, "-c", _LIFECYCLE]
    offline = os.geteuid() == 0 and shutil.which("unshare") and shutil.which("ip")
    if offline:
        command = ["unshare", "--net", "sh", "-c", 'ip link set lo up && exec "$@"', "-", *command]
    elif in_ci():
        pytest.fail("CI runs as root with unshare and ip: the offline start must be checked")
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["faults"] == {
        "DYNAMODB_ERROR_PROBABILITY": 0.0,
        "DYNAMODB_READ_ERROR_PROBABILITY": 0.0,
        "DYNAMODB_WRITE_ERROR_PROBABILITY": 0.5,
    }
    # Writes refused at random at about half (binomial 40, 0.5: 5 to 35 fails once in 10^7),
    # reads never: the faults were asked for writes only.
    assert 5 <= seen["refused"]["PutItem"] <= 35, seen
    assert seen["refused"]["GetItem"] == 0, seen
    # LocalStack and DynamoDB Local's JVM listen on 127.0.0.1 only (hex, as /proc/net has it).
    loopback = {"0100007F", "0000000000000000FFFF00000100007F"}
    assert seen["listening"]["localstack"] and set(seen["listening"]["localstack"]) <= loopback
    assert seen["listening"]["jvm"] and set(seen["listening"]["jvm"]) <= loopback, seen
    # SIGKILL leaves the JVM running (its own session); close() ends it by its marker.
    assert seen["jvm_found"] == 1 and seen["jvm_after_sigkill"], seen
    assert seen["left"] == [] and not seen["workdir_left"], seen


# --- a run killed mid-way -----------------------------------------------------------------------


def descendants(pid: int) -> set[int]:
    """``pid`` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        current = todo.pop()
        found.add(current)
        todo += children.get(current, [])
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie has ended; only its parent has not read its status


@pytest.mark.slow
@pytest.mark.localstack
def test_a_run_killed_midway_leaves_no_localstack_or_jvm(tmp_path: Path) -> None:
    need_localstack()
    # The longest chain: run -> emulator -> LocalStack -> JVM (in a session of its own).
    process = subprocess.Popen(
        [sys.executable, "-m", "loadgen", "run", "counter", "--engine", "localstack",
         "--users", "2", "--duration", "100s", "--out", str(tmp_path / "results.json")],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stderr is not None
    lines = []
    deadline = time.monotonic() + 150
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        lines.append(line)
        if line.startswith("[") and "requests" in line and " 0  req/s" not in line:
            break
        if not line and process.poll() is not None:
            break
    assert any("in front of embedded LocalStack 4.14.0" in line for line in lines), lines
    tree = descendants(process.pid)
    commands = " ".join(Path(f"/proc/{p}/cmdline").read_text() for p in tree if alive(p))
    assert "java" in commands and "localstack" in commands and "reaper.py" in commands
    process.kill()  # SIGKILL: nothing of the run's own cleanup runs
    process.wait()
    deadline = time.monotonic() + 20
    while any(alive(p) for p in tree) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = {p: Path(f"/proc/{p}/cmdline").read_text()[:120] for p in tree if alive(p)}
    assert not left, left
    assert process.returncode == -signal.SIGKILL
