"""How long installing the package takes: pip's resolution of its dependencies, and the
project's setup from nothing with pip and with uv, side by side (downloads from PyPI).

    .venv/bin/python benchmarks/bench_install.py resolve [--rounds 2]
    .venv/bin/python benchmarks/bench_install.py setup [--rounds 2] [--uv 0.13.9]

``resolve``: ``pip install --dry-run`` of the package's dependencies, in a fresh virtual
environment with an empty pip cache (a user's first install), as declared (ranges), pinned at
the tested versions (constraints.txt), opened (no bounds at all), and as declared beside a
project's own boto3 of another minor. Each variant's wall time (median of the rounds, taken in
turn), the distributions pip downloaded to decide (a candidate it later drops counts too) and
the boto3 it chose.

``setup``: the Python part of scripts/setup from nothing (a copy of the project, no .venv,
empty caches): ``pip install -e '.[dev,dashboards]' -c constraints.txt``, against installing
uv with pip and then ``uv pip install`` of the same.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = "python3.11"
BESIDE = "boto3==1.36.26"
"""A boto3 of another minor than the tested one: the range's lower bound."""


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0]


def _variants() -> dict[str, list[str]]:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    tested = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            tested[name.lower().replace("_", "-")] = version
    pinned = []
    for requirement in declared:
        name = _name(requirement)
        extra = requirement[len(name) :].split("]")[0] + "]" if "[" in requirement else ""
        pinned.append(f"{name}{extra}=={tested[name.lower().replace('_', '-')]}")
    opened = [
        _name(r) + (r[len(_name(r)) :].split("]")[0] + "]" if "[" in r else "") for r in declared
    ]
    return {
        "declared ranges": declared,
        "pinned (tested set)": pinned,
        "open (no bounds)": opened,
        f"declared, beside {BESIDE}": [*declared, BESIDE],
    }


def _venv(where: Path) -> Path:
    subprocess.run([PYTHON, "-m", "venv", str(where)], check=True)
    return where / "bin" / "python"


def _resolve_once(requirements: list[str]) -> tuple[float, int, str]:
    with tempfile.TemporaryDirectory() as scratch:
        python = _venv(Path(scratch) / "venv")
        report = Path(scratch) / "report.json"
        env = {"PIP_CACHE_DIR": str(Path(scratch) / "cache")}
        started = time.perf_counter()
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "--dry-run", "--ignore-installed",
             "--disable-pip-version-check", "-v", "--report", str(report), *requirements],
            capture_output=True, text=True, env={**dict(os.environ), **env}, check=False,
        )  # fmt: skip
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            return seconds, -1, "failed: " + done.stderr.strip().splitlines()[-1]
        fetched = len(re.findall(r"^\s+Downloading ", done.stdout, re.MULTILINE))
        chosen = {
            item["metadata"]["name"].lower(): item["metadata"]["version"]
            for item in json.loads(report.read_text())["install"]
        }
        return seconds, fetched, chosen.get("boto3", "?")


def resolve(rounds: int) -> None:
    variants = _variants()
    times: dict[str, list[float]] = {name: [] for name in variants}
    notes: dict[str, tuple[int, str]] = {}
    for _ in range(rounds):
        for name, requirements in variants.items():
            seconds, fetched, boto3 = _resolve_once(requirements)
            times[name].append(seconds)
            notes[name] = (fetched, boto3)
            print(f"  {name}: {seconds:.1f} s", file=sys.stderr, flush=True)
    pip = subprocess.run(
        [PYTHON, "-m", "pip", "--version"], capture_output=True, text=True, check=False
    ).stdout.split()[1]
    base = statistics.median(times["declared ranges"])
    print(f"pip {pip}, empty cache, medians of {rounds} rounds taken in turn")
    print(f"{'variant':<40} {'wall s':>8} {'x ranges':>9} {'downloaded':>11}  boto3")
    for name, values in times.items():
        fetched, boto3 = notes[name]
        median = statistics.median(values)
        print(f"{name:<40} {median:>8.1f} {median / base:>9.2f} {fetched:>11}  {boto3}")


def _project_copy(into: Path) -> None:
    for name in ("pyproject.toml", "README.md", "constraints.txt"):
        shutil.copy(ROOT / name, into / name)
    for name in ("loadgen", "workloads", "dashboards", "examples"):
        shutil.copytree(ROOT / name, into / name, ignore=shutil.ignore_patterns("__pycache__"))


def _setup_once(tool: str, uv: str) -> float:
    with tempfile.TemporaryDirectory() as scratch:
        project = Path(scratch) / "project"
        project.mkdir()
        _project_copy(project)
        env = {
            **dict(os.environ),
            "PIP_CACHE_DIR": str(Path(scratch) / "pip-cache"),
            "UV_CACHE_DIR": str(Path(scratch) / "uv-cache"),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        }
        started = time.perf_counter()
        python = _venv(project / ".venv")
        install = ["-e", ".[dev,dashboards]", "-c", "constraints.txt"]
        if tool == "pip":
            steps = [[str(python), "-m", "pip", "install", "--quiet", *install]]
        else:
            steps = [
                [str(python), "-m", "pip", "install", "--quiet", f"uv=={uv}"],
                [str(project / ".venv/bin/uv"), "pip", "install", "--quiet",
                 "--python", str(python), *install],
            ]  # fmt: skip
        for step in steps:
            subprocess.run(step, cwd=project, env=env, check=True)
        return time.perf_counter() - started


def setup(rounds: int, uv: str) -> None:
    times: dict[str, list[float]] = {"pip": [], f"uv {uv}": []}
    for _ in range(rounds):
        for tool in times:
            seconds = _setup_once(tool.split()[0], uv)
            times[tool].append(seconds)
            print(f"  {tool}: {seconds:.1f} s", file=sys.stderr, flush=True)
    print(f"The Python part of scripts/setup from nothing (empty caches), {rounds} rounds in turn")
    base = statistics.median(times["pip"])
    for tool, values in times.items():
        median = statistics.median(values)
        each = ", ".join(f"{v:.0f}" for v in values)
        print(f"{tool:<10} median {median:6.1f} s ({each}), x pip {median / base:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("resolve", "setup"))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--uv", default="0.13.9", help="uv version for setup (default 0.13.9)")
    args = parser.parse_args()
    if args.what == "resolve":
        resolve(args.rounds)
    else:
        setup(args.rounds, args.uv)


if __name__ == "__main__":
    main()
