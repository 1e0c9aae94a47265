"""Requests per CPU-second of the two DynamoDB clients in Locust, and of plain FastHttpUser.

    .venv/bin/python benchmarks/bench_client.py [--seconds 5] [--users 10] [--rounds 3]

One run, one null endpoint: a minimal aiohttp server in its own process answering ``{}``
(with ``x-amz-crc32``, as DynamoDB does) to every POST. Against it, each in a fresh Locust
process of its own, one after the other and ``--rounds`` times over:

- ``boto3``: `loadgen.client.DynamoClient` (botocore) calling PutItem from Locust users;
- ``fast``: `loadgen.client.fast.FastDynamoClient` making the same calls;
- ``fasthttp``: Locust's own FastHttpUser posting the same PutItem bodies, pre-serialized and
  unsigned: the floor a DynamoDB client on geventhttpclient can approach.

Each process counts the requests Locust recorded and the CPU time it used (user + system)
over the same window, after a warm-up; the server's CPU is its own process's and is not
counted. Printed: per variant the median over rounds of requests per CPU-second, and the
ratios fast/boto3 and fast/fasthttp (the issue's targets: at least 2.5 and 0.8). Ratios
hold across machines better than the absolute figures, which move with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from null_server import null_endpoint

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

VARIANTS = ("boto3", "fast", "fasthttp")
TABLE = "bench_client"
KEYS = 1000
WARM_UP_S = 1.5


def items() -> list[dict[str, Any]]:
    """The PutItem items every variant sends, in turn (about 120 bytes of JSON each)."""
    return [
        {
            "pk": {"S": f"SENSOR#{i:04d}"},
            "sk": {"S": f"2026-01-01T00:00:{i % 60:02d}.000000"},
            "value": {"N": str(20 + i % 17)},
        }
        for i in range(KEYS)
    ]


# --- one variant in one Locust process ------------------------------------------------------


def run_variant(variant: str, url: str, users: int, seconds: float) -> dict[str, float]:
    """Run ``users`` Locust users of ``variant`` against ``url``; count over ``seconds``."""
    import gevent
    from locust import FastHttpUser, User, task
    from locust.env import Environment

    from loadgen.client import RetryPolicy, make_client

    bodies = items()

    if variant == "fasthttp":
        payloads = [
            json.dumps(
                {"TableName": TABLE, "Item": item, "ReturnConsumedCapacity": "TOTAL"}
            ).encode()
            for item in bodies
        ]
        headers = {
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": "DynamoDB_20120810.PutItem",
        }

        class PlainUser(FastHttpUser):
            host = url

            def on_start(self) -> None:
                self.i = 0

            @task
            def put(self) -> None:
                self.i += 1
                self.client.post("/", data=payloads[self.i % KEYS], headers=headers, name="put")

        user_class: type[User] = PlainUser
    else:

        class ClientUser(User):
            def on_start(self) -> None:
                self.i = 0
                client = self.environment.__dict__.get("_bench_client")
                if client is None:
                    client = make_client(
                        variant, self.environment, endpoint_url=url, retry=RetryPolicy("legacy")
                    )
                    self.environment._bench_client = client
                self.db = client

            @task
            def put(self) -> None:
                self.i += 1
                item = bodies[self.i % KEYS]
                self.db.call("PutItem", "put", table=TABLE, pk=item["pk"]["S"], Item=item)

        user_class = ClientUser

    environment = Environment(user_classes=[user_class], host=url)
    runner = environment.create_local_runner()
    runner.start(users, spawn_rate=users)
    gevent.sleep(WARM_UP_S)
    requests0 = environment.stats.total.num_requests
    failures0 = environment.stats.total.num_failures
    cpu0, wall0 = time.process_time(), time.perf_counter()
    gevent.sleep(seconds)
    requests1 = environment.stats.total.num_requests
    failures1 = environment.stats.total.num_failures
    cpu1, wall1 = time.process_time(), time.perf_counter()
    runner.quit()
    return {
        "requests": requests1 - requests0,
        "failures": failures1 - failures0,
        "cpu_s": cpu1 - cpu0,
        "wall_s": wall1 - wall0,
    }


# --- orchestration ----------------------------------------------------------------------------


def child(variant: str, url: str, users: int, seconds: float) -> dict[str, float]:
    command = [sys.executable, __file__, "--variant", variant, "--url", url]
    command += ["--users", str(users), "--seconds", str(seconds)]
    env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    if out.returncode != 0:
        raise SystemExit(f"{variant} failed:\n{out.stderr[-3000:]}")
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measured seconds per run")
    parser.add_argument("--users", type=int, default=10, help="Locust users per run")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each variant")
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.variant:
        print(json.dumps(run_variant(args.variant, args.url, args.users, args.seconds)))
        return

    with null_endpoint() as url:
        print(f"null endpoint {url}; {args.users} users, {args.seconds:g} s per run", flush=True)
        rates: dict[str, list[float]] = {v: [] for v in VARIANTS}
        for round_number in range(1, args.rounds + 1):
            for variant in VARIANTS:
                result = child(variant, url, args.users, args.seconds)
                if result["failures"]:
                    raise SystemExit(f"{variant}: {result['failures']:g} failed requests")
                rate = result["requests"] / result["cpu_s"]
                rates[variant].append(rate)
                print(
                    f"  round {round_number} {variant:9} {result['requests']:7.0f} requests "
                    f"{result['cpu_s']:5.2f} CPU-s  {rate:7.0f} req/CPU-s  "
                    f"({result['requests'] / result['wall_s']:.0f} req/s)",
                    flush=True,
                )
    median = {v: statistics.median(r) for v, r in rates.items()}
    print("\nmedian requests per CPU-second:")
    for variant in VARIANTS:
        print(f"  {variant:9} {median[variant]:7.0f}")
    print(f"fast / boto3    {median['fast'] / median['boto3']:.2f}x   (target >= 2.5)")
    print(f"fast / fasthttp {median['fast'] / median['fasthttp']:.0%}   (target >= 80%)")


if __name__ == "__main__":
    main()
