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
def test_the_recipes_check_install_run_gate_and_keep_the_report_and_junit(path: Path) -> None:
    commands = _commands(path)
    verbs = [c[0] for c in commands]
    # The check first: it needs no engine and fails a design in seconds, before any load.
    assert verbs == ["check", "engine", "engine", "run", "gate"], verbs
    for args in commands:
        _, extra = _parser().parse_known_args(args)
        assert extra == [], (args, extra)
    check, run, gate = commands[0], commands[3], commands[4]
    assert check[1] == "$DESIGN"
    assert run[1] == "$DESIGN" and "--rate" not in run  # the design's own launch rates
    out = Path(run[run.index("--out") + 1]).parent
    junit = Path(gate[gate.index("--junit") + 1])
    assert gate[1] == run[run.index("--out") + 1] and junit.parent == out
    assert Path(run[run.index("--report") + 1]).parent == out
    assert Path(check[check.index("--out") + 1]).parent == out
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


# --- loadgen ci: the recipes from the package --------------------------------------------


def _ci(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "loadgen", "ci", *args],
        cwd=folder, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("platform", "source", "written"),
    [
        ("github", GITHUB[0], ".github/workflows/partition-heat.yml"),
        ("gitlab", GITLAB, ".gitlab-ci.yml"),
    ],
)
def test_loadgen_ci_writes_the_recipe_and_its_thresholds(
    tmp_path: Path, platform: str, source: Path, written: str
) -> None:
    done = _ci(tmp_path, platform)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / written).read_text() == source.read_text()  # one source
    thresholds = tmp_path / "heat/thresholds.yaml"
    assert thresholds.read_text() == (ROOT / "examples/ci/thresholds.yaml").read_text()
    # Where the recipe looks for them.
    assert "THRESHOLDS: heat/thresholds.yaml" in source.read_text()
    assert done.stdout.splitlines() == [
        f"Wrote {tmp_path / written} ({platform} pipeline recipe)",
        f"Wrote {thresholds} (starter thresholds)",
        "Next: put your design file at heat/design.yaml (or set DESIGN in the recipe), then "
        "try the recipe's steps here: loadgen check, loadgen run, loadgen gate",
    ]


def test_loadgen_ci_overwrites_nothing_without_force(tmp_path: Path) -> None:
    (tmp_path / ".gitlab-ci.yml").write_text("ours: {}\n")
    (tmp_path / "heat").mkdir()
    (tmp_path / "heat/thresholds.yaml").write_text("run: {}\n")
    done = _ci(tmp_path, "gitlab")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"loadgen: error: {tmp_path / '.gitlab-ci.yml'} exists: give --force to replace it, or "
        "--out FILE (to keep your .gitlab-ci.yml: --out partition-heat.gitlab-ci.yml, then "
        "include it from .gitlab-ci.yml)"
    )
    assert (tmp_path / ".gitlab-ci.yml").read_text() == "ours: {}\n"
    done = _ci(tmp_path, "gitlab", "--out", "partition-heat.gitlab-ci.yml")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "partition-heat.gitlab-ci.yml").read_text() == GITLAB.read_text()
    assert (tmp_path / "heat/thresholds.yaml").read_text() == "run: {}\n"  # the team's, kept
    done = _ci(tmp_path, "gitlab", "--force")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".gitlab-ci.yml").read_text() == GITLAB.read_text()


def test_the_starter_thresholds_judge_by_verdicts_and_gate_hot_keys_by_name_only() -> None:
    """No pattern may fail its verdict, each pattern's throttled and failed shares are bounded,
    and no hot-key share is set on every table and index: on an index keyed by a handful of
    values (a status, a map) one key takes a large share whatever the design."""
    from loadgen.verdict.thresholds import load_thresholds

    path = ROOT / "examples/ci/thresholds.yaml"
    gates = {(g.section, g.selector, g.name): g.limit for g in load_thresholds(path).gates}
    assert gates[("run", "", "min_patterns_passed_ratio")] == 1
    assert gates[("operations", "*", "max_throttled_ratio")] <= 0.05
    assert gates[("operations", "*", "max_failure_ratio")] <= 0.01
    assert not [k for k in gates if k[2] == "max_hot_key_share"]
    assert "max_hot_key_share" in path.read_text()  # shown, by a table's name, in a comment
