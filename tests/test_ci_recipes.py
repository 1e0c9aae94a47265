"""The pipeline recipes (examples/ci/, and the project's own .github/workflows/heat-gate.yml):
each passes its platform's linter and schema, and every loadgen command in it parses.

actionlint reads a GitHub workflow as GitHub does (expressions, the actions' inputs, deprecated
runtimes); check-jsonschema holds each file to GitHub's and GitLab's own schemas (vendored in
it, so no network). The commands are put to loadgen's own parser, so a renamed flag fails here
and not in a team's pipeline. What they do when run is tests/test_packaging.py's: the same
commands from an installed wheel, in an empty folder.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from loadgen.cli import _parser

ROOT = Path(__file__).resolve().parent.parent
GITHUB = [ROOT / "examples/ci/github-actions.yml", ROOT / ".github/workflows/heat-gate.yml"]
GITLAB = ROOT / "examples/ci/gitlab-ci.yml"
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(BIN))
    if found is None:
        pytest.fail(f"{name} is not installed in {BIN}: run scripts/setup", pytrace=False)
    return found


@pytest.mark.parametrize("path", GITHUB, ids=lambda p: p.name)
def test_actionlint_passes_the_github_workflows(path: Path) -> None:
    done = subprocess.run(
        [_tool("actionlint"), "-no-color", str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_is_a_linter_that_fails_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(GITHUB[0].read_text().replace("runs-on:", "runs_on:", 1))
    done = subprocess.run(
        [_tool("actionlint"), "-no-color", str(broken)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert 'unexpected key "runs_on"' in done.stdout


@pytest.mark.parametrize(
    ("path", "schema"),
    [*((p, "vendor.github-workflows") for p in GITHUB), (GITLAB, "vendor.gitlab-ci")],
    ids=lambda v: v.name if isinstance(v, Path) else v,
)
def test_the_recipes_match_their_platforms_schema(path: Path, schema: str) -> None:
    done = subprocess.run(
        [_tool("check-jsonschema"), "--builtin-schema", schema, str(path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def _commands(path: Path) -> list[list[str]]:
    """Every loadgen command of a workflow's run steps or a GitLab job's scripts."""
    document: Any = yaml.safe_load(path.read_text())
    scripts: list[str] = []
    if "jobs" in document:
        for job in document["jobs"].values():
            scripts += [step["run"] for step in job["steps"] if "run" in step]
    else:
        for job in document.values():
            scripts += job.get("before_script", []) + job.get("script", [])
    commands = []
    for script in scripts:
        for line in script.replace("\\\n", " ").splitlines():
            for part in line.replace("&&", ";").split(";"):
                words = shlex.split(part)
                if words[:1] == ["loadgen"]:
                    commands.append(words[1:])
    return commands


@pytest.mark.parametrize("path", [GITHUB[0], GITLAB], ids=lambda p: p.name)
def test_the_recipes_install_run_gate_and_keep_the_report_and_junit(path: Path) -> None:
    commands = _commands(path)
    verbs = [c[0] for c in commands]
    assert verbs == ["engine", "engine", "run", "gate"], verbs
    for args in commands:
        _, extra = _parser().parse_known_args(args)
        assert extra == [], (args, extra)
    run, gate = commands[2], commands[3]
    assert run[1] == "$DESIGN" and "--rate" not in run  # the design's own launch rates
    out = Path(run[run.index("--out") + 1]).parent
    junit = Path(gate[gate.index("--junit") + 1])
    assert gate[1] == run[run.index("--out") + 1] and junit.parent == out
    assert Path(run[run.index("--report") + 1]).parent == out
    text = path.read_text()
    if path == GITLAB:
        job = yaml.safe_load(text)["partition-heat"]
        assert job["artifacts"]["when"] == "always"
        assert job["artifacts"]["paths"] == [f"{out}/"]
        assert job["artifacts"]["reports"]["junit"] == str(junit)
    else:
        (upload,) = [
            s
            for s in yaml.safe_load(text)["jobs"]["heat-gate"]["steps"]
            if s.get("uses", "").startswith("actions/upload-artifact@")
        ]
        assert upload["if"] == "always()" and upload["with"]["path"] == f"{out}/"


def test_the_manual_shows_the_recipes_as_they_are() -> None:
    page = (ROOT / "docs/gates-and-report.md").read_text()
    for path in (GITHUB[0], GITLAB):
        assert f"```yaml\n{path.read_text()}```" in page, f"docs/gates-and-report.md: {path.name}"
