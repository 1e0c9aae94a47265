"""The package's shape: the public surface a locustfile imports, and the layering contracts."""

from __future__ import annotations

import ast
import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import loadgen.workload

ROOT = Path(__file__).resolve().parent.parent


PUBLIC = {
    "ConfigError",
    "DynamoDBError",
    "DynamoUser",
    "WorkloadOptions",
    "add_argument",
    "add_common_arguments",
    "make_client",
    "register",
    "workload_options",
}
"""What a locustfile imports from `loadgen.workload`: a change here is a change for users."""


def test_the_public_surface_is_held_still() -> None:
    assert set(loadgen.workload.__all__) == PUBLIC
    public = {name for name in vars(loadgen.workload) if not name.startswith("_")}
    # Submodules are attributes of the package; anything else public must be listed.
    modules = {"arrivals", "options", "processes", "tables", "user", "locust"}
    assert public - modules == PUBLIC


@pytest.mark.parametrize("path", sorted((ROOT / "workloads").glob("*.py")), ids=lambda p: p.name)
def test_workloads_import_only_the_public_surface(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("loadgen")
    }
    # The replay workload also takes its trace from the traffic package, the design
    # workload its design file from the design package.
    allowed = {"loadgen.workload"} | {
        "replay": {"loadgen.traffic.replay"},
        "design": {"loadgen.design"},
    }.get(path.stem, set())
    assert imported <= allowed, imported


def test_at_most_nine_modules_sit_directly_in_the_package() -> None:
    # The entry points (cli, runner, __main__, the CLI reference, the config file, the public
    # capture hook) and the vocabularies every layer shares: errors and refusals.
    top = sorted(p.name for p in (ROOT / "loadgen").glob("*.py"))
    assert len(top) <= 9, top


def test_every_subpackage_says_what_it_owns() -> None:
    for init in sorted((ROOT / "loadgen").glob("*/__init__.py")):
        module = importlib.import_module(f"loadgen.{init.parent.name}")
        assert module.__doc__ and "Owns:" in module.__doc__, init


def test_the_import_contracts_hold() -> None:
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if lint is None:
        pytest.skip("import-linter not installed")
    result = subprocess.run(
        [lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert "0 broken" in result.stdout
