"""Shared fixtures: local DynamoDB targets, a real Prometheus, and an environment that
cannot reach real AWS.

The environment is fixed at import, before any test module imports boto3, and inherited by
the CLI runs that tests start as child processes.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Locust patches the standard library for gevent when it is imported: first, before any test
# module imports botocore (whose sessions keep ssl's names), as `locust -f` and a run do. A
# session of test files whose first module imported botocore ended in a RecursionError once
# a test reached the workload package (`tests/simulate tests/test_scale_auto.py`).
import locust  # noqa: F401
import pytest

from loadgen.errors import TargetError
from loadgen.targets.local import DynamoDBLocal, EmbeddedMoto, dynamodb_local_missing

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


def need_dynamodb_local() -> None:
    """Skip the calling test where DynamoDB Local cannot run (fail it in CI)."""
    missing = dynamodb_local_missing()
    if missing is not None:
        if in_ci():
            pytest.fail(f"DynamoDB Local must run in CI: {missing}", pytrace=False)
        pytest.skip(f"DynamoDB Local unavailable: {missing}")


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


def need_localstack() -> None:
    """Skip the calling test where LocalStack cannot start (fail it in CI)."""
    from loadgen.targets.localstack import localstack_missing

    missing = localstack_missing()
    if missing is not None:
        if in_ci():
            pytest.fail(f"LocalStack must run in CI: {missing}", pytrace=False)
        pytest.skip(f"LocalStack unavailable: {missing}")


@pytest.fixture(scope="session")
def localstack_endpoint() -> Iterator[str]:
    """URL of a LocalStack shared by the whole session (it takes seconds to start), warmed
    up as the embedded engine is (skipped if not installed, outside CI)."""
    from loadgen.emulator.engines import warm
    from loadgen.targets.localstack import LocalStack

    need_localstack()
    with LocalStack() as localstack:
        warm(localstack.endpoint_url, requests=200)
        yield localstack.endpoint_url


# --- runs at launch traffic ---------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent

LAUNCH_SECONDS = "6s"
"""How long a shared launch run lasts: the 2 s ramp and four seconds at full traffic."""

GATED_ENGINE = "dynamodb-local"
"""The engine whose launch runs also gate and report (the default engine where Java runs)."""


@dataclass(frozen=True)
class LaunchRun:
    """One ``loadgen run WORKLOAD --config examples/launch/WORKLOAD.yaml`` and what it left."""

    returncode: int
    stdout: str
    stderr: str
    out: Path
    report: Path | None
    """The report's directory, where the run gated against the workload's example
    thresholds (``--gate``) and wrote its report (``--report``); None where it did not."""

    def results(self) -> dict[str, Any]:
        results: dict[str, Any] = json.loads(self.out.read_text())
        return results


@pytest.fixture(scope="session")
def launch_run(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str, str], LaunchRun]:
    """``launch_run(workload, design, engine)``: the design at the workload's launch traffic
    on an embedded engine, run once a session. Several tests judge the same run in their own
    way (bad against good design, a design file against its workload, the example gates), and
    each run takes 8 to 13 s; each test asserts on the run's own output.

    On `GATED_ENGINE`, a workload with example thresholds is also gated and reported: the
    exit code is then the gate's."""
    runs: dict[tuple[str, str, str], LaunchRun] = {}

    def launch_run(workload: str, design: str, engine: str) -> LaunchRun:
        if (workload, design, engine) not in runs:
            directory = tmp_path_factory.mktemp(f"launch-{workload}-{design}-{engine}")
            out, report = directory / "results.json", None
            args = [
                "run", workload, "--design", design, "--engine", engine,
                "--config", f"examples/launch/{workload}.yaml", "--duration", LAUNCH_SECONDS,
                "--out", str(out),
            ]  # fmt: skip
            thresholds = Path("examples", "thresholds", f"{workload}.yaml")
            if engine == GATED_ENGINE and (ROOT / thresholds).is_file():
                report = directory / "report"
                args += ["--gate", str(thresholds), "--report", str(report)]
            done = subprocess.run(
                [sys.executable, "-m", "loadgen", *args],
                cwd=ROOT, capture_output=True, text=True, timeout=240,
            )  # fmt: skip
            runs[workload, design, engine] = LaunchRun(
                done.returncode, done.stdout, done.stderr, out, report
            )
        return runs[workload, design, engine]

    return launch_run


def throttled_on(totals: dict[str, Any], scope: str) -> int:
    """Attempts a run's totals say DynamoDB refused on ``scope`` (a table, or ``table/index``),
    by the refusal's own resource: a design judged on its index is not judged by throttles
    that fell on a key elsewhere."""
    return sum(row["attempts"] for row in totals["throttles"] if row["scope"] == scope)


# --- runs of a task budget ----------------------------------------------------------------

TASKS = 60
"""The task budget of a `task_run`: calls of its one user."""

TABLES = {"counter": "ph-counter", "sensor": "ph-sensor", "orders": "ph-orders"}
"""Each workload's default table; a `task_run` writes to a table of its own, named from it."""


@dataclass(frozen=True)
class TaskRun:
    """One ``loadgen run`` of one user and a task budget into a table of its own."""

    returncode: int
    stdout: str
    stderr: str
    out: Path
    table: str

    def results(self) -> dict[str, Any]:
        results: dict[str, Any] = json.loads(self.out.read_text())
        return results


@pytest.fixture(scope="session")
def task_run(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., TaskRun]:
    """``task_run(workload, design, client, *flags)``: one user with a fixed seed and a
    budget of `TASKS` calls, so that a run sends the same requests in the same order whichever
    client sends them, into a table of its own; run once a session. The client parity tests
    compare the two clients' runs; tests/test_run.py judges the boto3 client's runs of each
    design on DynamoDB Local; each test asserts on the run's own output."""
    runs: dict[tuple[str, ...], TaskRun] = {}

    def task_run(workload: str, design: str, client: str, *flags: str) -> TaskRun:
        if (workload, design, client, *flags) not in runs:
            directory = tmp_path_factory.mktemp(f"task-{workload}-{design}-{client}")
            out = directory / "results.json"
            table = f"{TABLES[workload]}-{client}-{uuid.uuid4().hex[:8]}"
            done = subprocess.run(
                [sys.executable, "-m", "loadgen", "run", workload, "--design", design,
                 "--client", client, "--users", "1", "--duration", "120s", "--keys", "40",
                 "--seed", "7", "--tasks-per-user", str(TASKS), "--table", table,
                 "--out", str(out), *flags],
                cwd=ROOT, capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            runs[workload, design, client, *flags] = TaskRun(
                done.returncode, done.stdout, done.stderr, out, table
            )
        return runs[workload, design, client, *flags]

    return task_run


# --- Prometheus ---------------------------------------------------------------------------

SCRAPE_INTERVAL_S = 1
"""How often the tests' Prometheus scrapes: runs last seconds, not minutes."""


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scrape_config(jobs: Mapping[str, int]) -> str:
    """A Prometheus configuration scraping ``127.0.0.1:port`` for each job, every second."""
    lines = [
        f"global:\n  scrape_interval: {SCRAPE_INTERVAL_S}s\n  evaluation_interval: 1s\n",
        "scrape_configs:\n",
    ]
    for job, port in jobs.items():
        lines.append(
            f"  - job_name: {job}\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
        )
    return "".join(lines)


@dataclass
class Prometheus:
    """A running Prometheus and the ports of the jobs it scrapes (job name to port)."""

    url: str
    ports: dict[str, int] = field(default_factory=dict)

    @property
    def metrics_port(self) -> int:
        """The port of the ``loadgen`` job: where a run's exporter should listen."""
        return self.ports["loadgen"]

    def query(self, promql: str, at: float | None = None) -> list[dict[str, Any]]:
        params = {"query": promql, **({"time": f"{at:.3f}"} if at is not None else {})}
        return self._get("/api/v1/query", params)

    def query_range(
        self, promql: str, start: float, end: float, step: float = 1
    ) -> list[dict[str, Any]]:
        params = {"query": promql, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step}"}
        return self._get("/api/v1/query_range", params)

    def scalar(self, promql: str) -> float:
        (sample,) = self.query(promql)
        return float(sample["value"][1])

    def targets(self) -> list[dict[str, Any]]:
        """The active scrape targets with their job, health and last error."""
        with urllib.request.urlopen(f"{self.url}/api/v1/targets", timeout=10) as response:
            body = json.load(response)
        active: list[dict[str, Any]] = body["data"]["activeTargets"]
        return active

    def _get(self, path: str, params: dict[str, str]) -> list[dict[str, Any]]:
        url = f"{self.url}{path}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=10) as response:
            body = json.load(response)
        assert body["status"] == "success", body
        result: list[dict[str, Any]] = body["data"]["result"]
        return result


def installed(name: str) -> str:
    """The path of a program that scripts/setup installs from Debian's packages (prometheus,
    promtool, chromium); the test is skipped if it is absent, and fails under CI."""
    binary = shutil.which(name) or (
        f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None
    )
    if binary is None:
        if in_ci():
            pytest.fail(f"{name} must be installed in CI (scripts/setup installs it)")
        pytest.skip(f"{name} is not installed (bash scripts/setup installs it as root)")
    return binary


def prometheus_binary() -> str:
    """Debian's /usr/bin/prometheus (skipped if absent, outside CI)."""
    return installed("prometheus")


@contextlib.contextmanager
def running_prometheus(directory: Path, config: str) -> Iterator[str]:
    """Prometheus on a free loopback port with ``config`` and storage in ``directory``;
    yields its URL once ready and stops it afterwards."""
    binary = prometheus_binary()
    directory.mkdir(parents=True, exist_ok=True)
    config_file = directory / "prometheus.yml"
    config_file.write_text(config)
    web_port = free_port()
    log_path = directory / "prometheus.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={config_file}",
                f"--storage.tsdb.path={directory / 'data'}",
                f"--web.listen-address=127.0.0.1:{web_port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{web_port}"
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as response:
                        if response.status == 200:
                            break
                except OSError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"prometheus did not start: {log_path.read_text()}")
                time.sleep(0.2)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture
def start_prometheus(tmp_path: Path) -> Iterator[Callable[[str, dict[str, int]], Prometheus]]:
    """Start Prometheus with a given configuration (and the job ports it scrapes); every
    one started is stopped when the test ends."""
    with contextlib.ExitStack() as stack:
        started = iter(range(1_000))

        def start(config: str, ports: dict[str, int]) -> Prometheus:
            directory = tmp_path / f"prometheus-{next(started)}"
            url = stack.enter_context(running_prometheus(directory, config))
            return Prometheus(url, dict(ports))

        yield start


@pytest.fixture
def prometheus(start_prometheus: Callable[[str, dict[str, int]], Prometheus]) -> Prometheus:
    """Prometheus on a free loopback port, scraping a metrics port chosen here (job
    ``loadgen``)."""
    ports = {"loadgen": free_port()}
    return start_prometheus(scrape_config(ports), ports)
