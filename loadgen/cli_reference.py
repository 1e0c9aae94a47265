"""The command-line reference of the manual, ``docs/cli.md``, written from the parsers.

    python -m loadgen.cli_reference           # rewrite docs/cli.md
    python -m loadgen.cli_reference --check   # exit 1 when docs/cli.md is not what it writes

Each command's section is its ``--help``, as a user sees it, at a fixed width. A workload's own
flags live on Locust's parser once the locustfile is loaded, so each is read in a child process
of its own (Locust monkey-patches the process that imports it, and two workloads loaded in one
process would share one group of flags).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

__all__ = ["COMMANDS", "LOCUSTFILES", "reference"]

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "cli.md"
WIDTH = "100"

# Every ``loadgen`` command, in the order a newcomer meets them.
COMMANDS = (
    "run",
    "check",
    "simulate",
    "gate",
    "report",
    "engine",
    "ci",
    "emulator",
    "replay",
    "prefill",
    "dashboards",
)
LOCUSTFILES = ("counter", "sensor", "orders", "design", "replay")

_WORKLOAD_FLAGS = """
import sys
from locust.argument_parser import get_parser
from locust.util.load_locustfile import load_locustfile

load_locustfile(sys.argv[1])
parser = get_parser(default_config_files=[])
group = parser._loadgen_group
formatter = parser._get_formatter()
formatter.start_section(group.title)
formatter.add_arguments(group._group_actions)
formatter.end_section()
print(formatter.format_help().rstrip())
"""


def _help(argv: list[str]) -> str:
    env = {**os.environ, "COLUMNS": WIDTH, "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, *argv], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.strip()[-500:]}")
    return done.stdout.rstrip()


def reference() -> str:
    """The page: every command's help, then every workload's flags."""
    out = [
        "# Command-line reference",
        "",
        "Written from the parsers by `python -m loadgen.cli_reference`; a test holds this page "
        "to them. Each section is the command's `--help`.",
        "",
    ]
    for command in COMMANDS:
        out += [f"## loadgen {command}", "", "```text"]
        out += [_help(["-m", "loadgen", command, "--help"]), "```", ""]
    out += [
        "## Workload flags",
        "",
        "`loadgen run WORKLOAD` passes the flags it does not know to Locust and the workload, "
        "and `locust -f workloads/NAME.py` takes them too: Locust's own flags "
        "([Locust's configuration](https://docs.locust.io/en/stable/configuration.html)) and "
        "these, each workload's.",
        "",
    ]
    for name in LOCUSTFILES:
        out += [f"### workloads/{name}.py", "", "```text"]
        out += [_help(["-c", _WORKLOAD_FLAGS, f"workloads/{name}.py"]), "```", ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m loadgen.cli_reference", description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    page = reference()
    if args.check:
        if PAGE.read_text() != page:
            print(f"{PAGE} is not what the parsers say: run python -m loadgen.cli_reference")
            return 1
        return 0
    PAGE.write_text(page)
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
