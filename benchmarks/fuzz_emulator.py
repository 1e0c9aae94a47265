"""Send a seeded corpus of malformed requests to the emulator and count what it answers.

    .venv/bin/python -m benchmarks.fuzz_emulator --count 10000            # loadgen emulator
    .venv/bin/python -m benchmarks.fuzz_emulator --count 10000 --dynamodb-local

Without ``--dynamodb-local`` the corpus goes to ``loadgen emulator`` (moto in process) in a
child process, whose resident memory is reported, then a CreateTable of 10^12 units. With
``--dynamodb-local`` each request goes first to DynamoDB Local directly, then to the emulator
in front of the same DynamoDB Local, and the report compares the two where DynamoDB Local
answered 400. The corpus is `tests.emulator.fuzzing.corpus`, the one the tests send.
"""

from __future__ import annotations

import argparse
import collections
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from loadgen.emulator.backends import UpstreamBackend
from loadgen.emulator.server import Emulator, EmulatorServer
from loadgen.model.partitions import PartitionModel
from loadgen.targets.local import DynamoDBLocal
from tests.emulator import fuzzing


def _create(url: str) -> None:
    body = json.dumps(fuzzing.CREATE_TABLE).encode()
    fuzzing.send(url, [fuzzing.Case("DynamoDB_20120810.CreateTable", body, "setup")])


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _against_a_child(cases: list[fuzzing.Case]) -> None:
    """``loadgen emulator`` (moto in process) in a child: the corpus, then a 10^12-unit table."""
    child = subprocess.Popen(
        [sys.executable, "-m", "loadgen.emulator", "--port", "0", "--engine", "moto"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert child.stdout is not None
        url = child.stdout.readline().decode().strip()
        _create(url)
        print(f"loadgen emulator {url}: {_rss_mb(child.pid):.0f} MB resident at start")
        started = time.perf_counter()
        answers = fuzzing.send(url, cases)
        _report("emulator (moto)", cases, answers, time.perf_counter() - started)
        print(f"  resident after the corpus: {_rss_mb(child.pid):.0f} MB")
        huge = {
            **fuzzing.CREATE_TABLE,
            "TableName": "trillion",
            "BillingMode": "PROVISIONED",
            "ProvisionedThroughput": {"ReadCapacityUnits": 10**12, "WriteCapacityUnits": 10**12},
        }
        body = json.dumps(huge).encode()
        (answer,) = fuzzing.send(url, [fuzzing.Case("DynamoDB_20120810.CreateTable", body, "")])
        print(f"CreateTable of 10^12 units: HTTP {answer.status} {answer.body.decode()[:200]}")
        print(
            f"  resident after it: {_rss_mb(child.pid):.0f} MB; still serving: "
            f"{child.poll() is None}"
        )
    finally:
        child.terminate()
        child.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dynamodb-local", action="store_true")
    args = parser.parse_args()
    cases = fuzzing.corpus(args.count, seed=args.seed)
    if not args.dynamodb_local:
        _against_a_child(cases)
        return
    with DynamoDBLocal() as local:
        _create(local.endpoint_url)
        upstream = Emulator(UpstreamBackend(local.endpoint_url), PartitionModel(scale=1.0))
        with EmulatorServer(upstream) as server:
            started = time.perf_counter()
            pairs = fuzzing.send_to_both(local.endpoint_url, server.endpoint_url, cases)
            seconds = time.perf_counter() - started
    direct, answers = [d for d, _ in pairs], [a for _, a in pairs]
    _report("DynamoDB Local direct", cases, direct, seconds)
    _report("emulator (DynamoDB Local)", cases, answers, seconds)
    compared = [
        (c, d, a) for c, d, a in zip(cases, direct, answers, strict=True) if d.status == 400
    ]
    same = [x for x in compared if x[2].status == 400 and x[2].code == x[1].code]
    print(
        f"DynamoDB Local answered 400 to {len(compared)}; the emulator gave the same status and "
        f"error code to {len(same)} ({100 * len(same) / max(1, len(compared)):.2f}%)"
    )
    # Where DynamoDB Local's answer is DynamoDB's (not for wrong JSON types, which it coerces,
    # nor for another service's target): the figure the tests hold at 99%.
    oracle = [x for x in compared if fuzzing.dynamodb_local_is_the_oracle(x[0], x[1])]
    oracle_same = [x for x in oracle if x in same]
    print(
        f"  where DynamoDB Local is the oracle: {len(oracle_same)} of {len(oracle)} "
        f"({100 * len(oracle_same) / max(1, len(oracle)):.2f}%)"
    )
    differ = collections.Counter(
        (c.mutation, d.code, a.status, a.code) for c, d, a in compared if (c, d, a) not in same
    )
    for (mutation, theirs, status, ours), n in differ.most_common(20):
        print(f"  {n:5d}  {mutation}: DynamoDB Local {theirs}, emulator {status} {ours}")


def _report(
    label: str, cases: list[fuzzing.Case], answers: list[fuzzing.Answer], seconds: float
) -> None:
    statuses = collections.Counter(a.status for a in answers)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{label}: {len(answers)} requests in {seconds:.1f} s; "
        f"statuses {dict(sorted(statuses.items()))}; peak RSS of this process {rss_mb:.0f} MB"
    )
    failures = collections.Counter(
        (c.mutation, a.code) for c, a in zip(cases, answers, strict=True) if a.status >= 500
    )
    for (mutation, code), n in failures.most_common(10):
        print(f"  {n:5d} x 5xx  {mutation}: {code}")


if __name__ == "__main__":
    main()
