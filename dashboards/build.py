"""Write each dashboard's JSON beside its source, or check that what is there is current.

python -m dashboards [--out DIR] [--check]
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from grafanalib._gen import write_dashboard

__all__ = [
    "DASHBOARDS",
    "DEFAULT_OUT",
    "HERE",
    "INSTALLED",
    "check",
    "main",
    "render",
    "to_json",
    "write",
]

HERE = Path(__file__).resolve().parent
"""Where the dashboards' source lies."""
INSTALLED = HERE.parent.name == "loadgen" and (HERE.parent / "__init__.py").is_file()
"""Whether this is the installed package's copy (``loadgen/dashboards``) rather than a
checkout's ``dashboards/``."""
DEFAULT_OUT = Path("dashboards") if INSTALLED else HERE
"""Where the JSON is written by default: beside its source in a checkout, where it is committed;
an installed package is no place to write into, so there ``dashboards/`` in the current
directory."""

DASHBOARDS = ("partition_heat", "emulator_partitions")
"""Modules of this package that define a ``dashboard``; each gives ``NAME.json``."""


def render(name: str) -> str:
    """The JSON text of dashboard module ``name``, as grafanalib writes it (sorted keys)."""
    module = importlib.import_module(f"{__package__}.{name}")
    stream = io.StringIO()
    write_dashboard(module.dashboard, stream)
    return stream.getvalue()


def to_json(name: str) -> dict[str, Any]:
    """The dashboard as Grafana reads it."""
    data: dict[str, Any] = json.loads(render(name))
    return data


def write(out: Path = DEFAULT_OUT) -> list[Path]:
    """Write every dashboard's JSON to ``out``; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in DASHBOARDS:
        path = out / f"{name}.json"
        path.write_text(render(name))
        written.append(path)
    return written


def check(out: Path = DEFAULT_OUT) -> list[Path]:
    """The JSON files in ``out`` that are missing or differ from their source."""
    stale = []
    for name in DASHBOARDS:
        path = out / f"{name}.json"
        if not path.is_file() or path.read_text() != render(name):
            stale.append(path)
    return stale


def main(argv: Sequence[str] | None = None, prog: str = "python -m dashboards") -> int:
    parser = argparse.ArgumentParser(
        prog=prog, description="Rebuild the Grafana dashboards' JSON from their grafanalib source."
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help="directory to write to (default: dashboards/ beside their source in a checkout, "
        "./dashboards for an installed package)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if a JSON file is missing or differs from its source",
    )
    args = parser.parse_args(argv)
    if args.check:
        stale = check(args.out)
        for path in stale:
            print(f"{path} is out of date: run {prog}", file=sys.stderr)
        return 1 if stale else 0
    for path in write(args.out):
        print(path)
    return 0
