"""What LocalStack in host mode costs here: install, start, memory, and time per request.

    .venv/bin/python benchmarks/bench_localstack.py [--starts 3] [--requests 2000] [--install]

- install (``--install``): `loadgen.targets.localstack_install.install` into a fresh
  directory, pip downloading from PyPI (what a fresh CI machine pays once);
- start: seconds from spawning LocalStack to its DynamoDB's first answer, ``--starts`` times;
- memory: resident set of LocalStack's Python process and of DynamoDB Local's JVM it started,
  after the requests;
- requests: ``--requests`` PutItems one after another on one keep-alive connection, through
  LocalStack and to DynamoDB Local direct (the same engine, started alike), side by side: the
  rate of each and the milliseconds LocalStack adds to a request.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from loadgen.emulator.engines import DynamoConnection, pk_sk_table
from loadgen.targets.local import DynamoDBLocal
from loadgen.targets.localstack import LocalStack
from loadgen.targets.localstack_install import find_python, install
from loadgen.targets.reaper import processes_naming


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def put_rate(endpoint_url: str, requests: int) -> float:
    """PutItems per second, one after another, after 200 untimed ones."""
    connection = DynamoConnection(endpoint_url)
    try:
        connection.call("CreateTable", pk_sk_table("bench"))
        for timed in (False, True):
            started = time.perf_counter()
            for i in range(requests if timed else 200):
                item = {"pk": {"S": f"k{i % 64}"}, "sk": {"S": f"s{i}"}, "v": {"N": "1"}}
                connection.call("PutItem", {"TableName": "bench", "Item": item})
        return requests / (time.perf_counter() - started)
    finally:
        connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--install", action="store_true", help="time an install from nothing")
    args = parser.parse_args()
    if args.install:
        with tempfile.TemporaryDirectory(prefix="bench-localstack-") as directory:
            python = find_python()
            started = time.monotonic()
            install(Path(directory), python, say=False)
            print(f"install from nothing: {time.monotonic() - started:.1f} s")
    for start in range(1, args.starts + 1):
        localstack = LocalStack().start()
        try:
            print(f"start {start}: {localstack.startup_seconds:.1f} s to DynamoDB's first answer")
            if start < args.starts:
                continue
            through = put_rate(localstack.endpoint_url, args.requests)
            assert localstack.pid is not None and localstack._workdir is not None
            pids = processes_naming(str(localstack._workdir))
            jvm = [p for p in pids if b"java" in Path(f"/proc/{p}/cmdline").read_bytes()]
            print(
                f"memory: LocalStack {rss_mb(localstack.pid):.0f} MB, "
                f"its JVM {sum(rss_mb(p) for p in jvm):.0f} MB (resident, after the requests)"
            )
        finally:
            localstack.close()
    with DynamoDBLocal() as direct:
        alone = put_rate(direct.endpoint_url, args.requests)
    print(
        f"{args.requests} PutItems one after another: {through:,.0f}/s through LocalStack, "
        f"{alone:,.0f}/s to DynamoDB Local direct; LocalStack adds "
        f"{1000 / through - 1000 / alone:.1f} ms a request"
    )


if __name__ == "__main__":
    main()
