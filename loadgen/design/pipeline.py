"""``loadgen ci github`` and ``loadgen ci gitlab``: the pipeline recipe that checks, runs and
gates a team's design file, written into the team's repository from the package.

The recipes are the project's ``examples/ci/`` files, shipped in the wheel as they are (one
source: ``tests/test_ci_recipes.py`` lints them there), with the starter thresholds file the
recipes' gate step reads. Nothing is overwritten without ``--force``.

    loadgen ci github        # .github/workflows/partition-heat.yml and heat/thresholds.yaml
    loadgen ci gitlab --out partition-heat.gitlab-ci.yml
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from loadgen import shipped
from loadgen.errors import ConfigError

__all__ = ["RECIPES", "THRESHOLDS", "Recipe", "add_parser", "run_ci", "write_recipe"]


@dataclass(frozen=True)
class Recipe:
    """One platform's pipeline recipe: the shipped file and where a repository keeps it."""

    source: str
    """Its path in the project (`loadgen.shipped`)."""
    destination: str
    """Where it is written by default, from the repository's root."""


RECIPES = {
    "github": Recipe("examples/ci/github-actions.yml", ".github/workflows/partition-heat.yml"),
    "gitlab": Recipe("examples/ci/gitlab-ci.yml", ".gitlab-ci.yml"),
}
THRESHOLDS = Recipe("examples/ci/thresholds.yaml", "heat/thresholds.yaml")
"""The starter gates, where the recipes' ``THRESHOLDS`` points."""
_DESIGN = "heat/design.yaml"  # the recipes' DESIGN


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``ci`` subcommand's arguments."""
    ci = commands.add_parser(
        "ci",
        help="write the pipeline recipe (GitHub Actions or GitLab CI) that checks, runs and "
        "gates your design file, and its starter thresholds",
        description="Write the pipeline recipe into the repository in the current folder: it "
        "installs Partition Heat, checks the design file against the partition model (loadgen "
        "check), runs it at its launch rates on the embedded target with DynamoDB Local, and "
        f"gates the results (loadgen gate). The design file is {_DESIGN} and the gates "
        f"{THRESHOLDS.destination} (written here from the starter thresholds); set DESIGN and "
        "THRESHOLDS in the recipe to move them. An existing file is left as it is unless "
        "--force.",
    )
    ci.add_argument("platform", choices=sorted(RECIPES), help="github or gitlab")
    ci.add_argument(
        "--out",
        metavar="FILE",
        help="where to write the recipe (default: .github/workflows/partition-heat.yml for "
        "github, .gitlab-ci.yml for gitlab)",
    )
    ci.add_argument("--force", action="store_true", help="replace files that exist")


def run_ci(args: argparse.Namespace) -> int:
    """Run ``loadgen ci``; exit 0 (errors raise `ConfigError`)."""
    for line in write_recipe(args.platform, Path.cwd(), out=args.out, force=args.force):
        print(line)
    return 0


def write_recipe(
    platform: str, root: Path, *, out: str | None = None, force: bool = False
) -> list[str]:
    """Write ``platform``'s recipe (at ``out``, else its default place under ``root``) and the
    starter thresholds where it reads them, if absent; what was done, in lines to print.

    Raises `ConfigError`, before anything is written, for a recipe file that exists (unless
    ``force``)."""
    recipe = RECIPES[platform]
    target = root / (out or recipe.destination)
    if target.exists() and not force:
        hint = (
            " (to keep your .gitlab-ci.yml: --out partition-heat.gitlab-ci.yml, then include "
            "it from .gitlab-ci.yml)"
            if platform == "gitlab"
            else ""
        )
        raise ConfigError(f"{target} exists: give --force to replace it, or --out FILE{hint}")
    said = [_write(shipped(recipe.source), target, f"{platform} pipeline recipe")]
    thresholds = root / THRESHOLDS.destination
    if thresholds.exists() and not force:
        said.append(f"Kept {thresholds}: your thresholds, which the recipe's gate step reads")
    else:
        said.append(_write(shipped(THRESHOLDS.source), thresholds, "starter thresholds"))
    design = root / _DESIGN
    if not design.exists():
        said.append(
            f"Next: put your design file at {design.relative_to(root)} (or set DESIGN in the "
            "recipe), then try the recipe's steps here: loadgen check, loadgen run, loadgen gate"
        )
    return said


def _write(source: Path, target: Path, what: str) -> str:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot write {target}: {e.strerror or e}") from None
    return f"Wrote {target} ({what})"
