"""Every shell command in the manual and the README works as written.

A command in a ``sh`` block after a ``<!-- quick -->`` line (``<!-- quick exit=1 -->`` when
its answer is a failing verdict) runs, on the embedded target, in a scratch directory that
sees the repository's examples. Every other command must at least parse: its program's own
parser (``loadgen``'s, Locust's with the workload loaded, a benchmark's ``--help``) knows every
flag it gives, and every file of the repository it names exists. A flag renamed in the code
then fails here, not in a reader's terminal.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELLS = {"sh", "bash", "shell"}
QUICK = re.compile(r"<!--\s*quick(?:\s+exit=(\d+))?\s*-->")
EXIT = re.compile(r"#\s*exit (\d+)\b")
REPO_DIRS = ("benchmarks/", "dashboards/", "deploy/", "docs/", "examples/", "loadgen/",
             "scripts/", "tests/", "workloads/")  # fmt: skip
FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
OPERATORS = {"&&", "||", "|", ";", "&"}
LOCUST_CHECK = """
import json, sys
from locust.argument_parser import get_parser
from locust.util.load_locustfile import load_locustfile

load_locustfile(sys.argv[1])
verdicts = []
for args in json.load(sys.stdin):
    parser = get_parser(default_config_files=[])
    parser.exit = lambda status=0, message=None: (_ for _ in ()).throw(ValueError(message))
    parser.error = lambda message: (_ for _ in ()).throw(ValueError(message))
    try:
        parser.parse_args(["-f", sys.argv[1], *args])
        verdicts.append(None)
    except ValueError as e:
        verdicts.append(str(e).strip())
print(json.dumps(verdicts))
"""


@dataclass(frozen=True)
class Command:
    page: str
    block: int
    line: int
    argv: tuple[str, ...]
    quick: bool
    exit_code: int

    @property
    def text(self) -> str:
        return shlex.join(self.argv)


def _blocks(path: Path) -> Iterator[tuple[int, list[tuple[int, str]], re.Match[str] | None]]:
    """Each shell code block: the line it starts on, its lines, and its quick marker."""
    lines = path.read_text().splitlines()
    marker: re.Match[str] | None = None
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if QUICK.fullmatch(stripped):
            marker = QUICK.fullmatch(stripped)
        elif stripped.startswith("```"):
            info = stripped[3:].strip().split(" ")[0]
            end = i + 1
            while not lines[end].strip().startswith("```"):
                end += 1
            if info in SHELLS:
                yield i + 1, [(n + 1, lines[n]) for n in range(i + 1, end)], marker
            marker = None
            i = end
        elif stripped:
            marker = None
        i += 1


def _simple_commands(text: str) -> Iterator[list[str]]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    command: list[str] = []
    for token in lexer:
        if token in OPERATORS:
            if command:
                yield command
            command = []
        else:
            command.append(token)
    if command:
        yield command


def commands_of(path: Path) -> list[Command]:
    page = path.relative_to(ROOT).as_posix()
    found = []
    for block, body, marker in _blocks(path):
        logical: list[tuple[int, str]] = []
        for number, line in body:
            if logical and logical[-1][1].endswith("\\"):
                logical[-1] = (logical[-1][0], logical[-1][1][:-1] + " " + line.strip())
            else:
                logical.append((number, line))
        for number, line in logical:
            for argv in _simple_commands(line):
                while argv and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", argv[0]):
                    argv = argv[1:]  # VAR=value before the program
                if argv:
                    # "# exit 1" on the line, else the block's marker, else 0
                    said = EXIT.search(line) or (marker if marker and marker.group(1) else None)
                    exit_code = int(said.group(1)) if said else 0
                    found.append(
                        Command(page, block, number, tuple(argv), marker is not None, exit_code)
                    )
    return found


COMMANDS = [command for page in PAGES for command in commands_of(page)]


def _ids(commands: list[Command]) -> list[str]:
    return [f"{c.page}:{c.line}:{c.argv[0].rsplit('/', 1)[-1]}" for c in commands]


def _program(argv: tuple[str, ...]) -> str:
    return argv[0].removeprefix(".venv/bin/")


@functools.cache
def _help_flags(argv: tuple[str, ...]) -> frozenset[str]:
    done = subprocess.run(
        [*argv, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, f"{' '.join(argv)} --help: {done.stderr[-500:]}"
    return frozenset(FLAG.findall(done.stdout))


def _given_flags(args: tuple[str, ...] | list[str]) -> list[str]:
    return [a.split("=", 1)[0] for a in args if FLAG.fullmatch(a.split("=", 1)[0])]


def _locustfile_of(command: str, source: str) -> str | None:
    if command == "replay":
        return "workloads/replay.py"
    if source.endswith((".yaml", ".yml", ".json")):
        return "workloads/design.py" if command == "run" else None
    if source.endswith(".py"):
        return source
    return f"workloads/{source}.py"


def _loadgen_problems(args: tuple[str, ...]) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """What loadgen's parser refuses, and the flags it passes on to a locustfile."""
    from loadgen.cli import _parser

    if args[:1] in (("emulator",), ("dashboards",)):
        return _unknown_flags((sys.executable, "-m", "loadgen", args[0]), args[1:]), []
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            parsed, extra = _parser().parse_known_args(list(args))
    except SystemExit:
        return [stderr.getvalue().strip().splitlines()[-1]], []
    if not extra:
        return [], []
    source = getattr(parsed, "workload", None) or getattr(parsed, "source", None) or ""
    locustfile = _locustfile_of(parsed.command, source)
    if parsed.command in ("run", "replay", "prefill") and locustfile:
        return [], [(locustfile, extra)]
    return [f"loadgen {parsed.command} does not take {' '.join(extra)}"], []


@functools.cache
def _checks(command: Command) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """Problems found here, and (locustfile, arguments) for Locust's parser to judge."""
    problems = [
        f"{token} does not exist"
        for token in (a.split("=", 1)[-1] for a in command.argv[1:])
        if token.startswith(REPO_DIRS) and not (ROOT / token).exists()
    ]
    program, args = _program(command.argv), command.argv[1:]
    if program == "loadgen":
        found, for_locust = _loadgen_problems(args)
        return problems + found, for_locust
    if program == "locust":
        locustfile = args[args.index("-f") + 1] if "-f" in args else "locustfile.py"
        rest = [a for i, a in enumerate(args) if a != "-f" and (i == 0 or args[i - 1] != "-f")]
        return problems, [(locustfile, rest)]
    if program == "python" and args[:1] == ("-m",):
        return problems + _unknown_flags((sys.executable, *args[:2]), args[2:]), []
    if program == "python" or program in ("bash", "sh"):
        if not args or not (ROOT / args[0]).is_file():
            return [*problems, f"{' '.join(command.argv[:2])}: no such file"], []
        if program == "python":
            return problems + _unknown_flags((sys.executable, args[0]), args[1:]), []
    if program == "mkdocs":
        return problems + _unknown_flags((str(ROOT / ".venv/bin/mkdocs"), args[0]), args[1:]), []
    return problems, []


def _unknown_flags(program: tuple[str, ...], args: tuple[str, ...]) -> list[str]:
    known = _help_flags(program)
    name = " ".join(Path(p).name for p in program)
    return [f"{flag} is not a flag of {name}" for flag in _given_flags(args) if flag not in known]


@pytest.fixture(scope="module")
def locust_verdicts() -> dict[tuple[str, tuple[str, ...]], str | None]:
    """Locust's parser, with each locustfile loaded, on every argument list the pages give it."""
    asked: dict[str, list[list[str]]] = {}
    for command in COMMANDS:
        for locustfile, args in _checks(command)[1]:
            asked.setdefault(locustfile, []).append(args)
    verdicts = {}
    for locustfile, lists in asked.items():
        done = subprocess.run(
            [sys.executable, "-c", LOCUST_CHECK, locustfile], input=json.dumps(lists),
            cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        for args, verdict in zip(lists, json.loads(done.stdout), strict=True):
            verdicts[locustfile, tuple(args)] = verdict
    return verdicts


def test_the_pages_give_commands_and_quick_ones() -> None:
    assert len(COMMANDS) > 60
    assert len(QUICK_BLOCKS) >= 5
    assert {_program(c.argv) for c in COMMANDS} >= {"loadgen", "locust", "python", "bash"}


@pytest.mark.parametrize("command", COMMANDS, ids=_ids(COMMANDS))
def test_command_parses(command: Command, locust_verdicts: dict) -> None:
    found, for_locust = _checks(command)  # cached: the fixture asked first
    problems = list(found)
    for locustfile, args in for_locust:
        verdict = locust_verdicts[locustfile, tuple(args)]
        if verdict:
            problems.append(f"Locust with {locustfile}: {verdict}")
    assert not problems, f"{command.page}:{command.line}: {command.text}: {'; '.join(problems)}"


QUICK_BLOCKS: dict[tuple[str, int], list[Command]] = {}
for _command in COMMANDS:
    if _command.quick:
        QUICK_BLOCKS.setdefault((_command.page, _command.block), []).append(_command)


@pytest.mark.slow
@pytest.mark.parametrize("block", QUICK_BLOCKS.values(), ids=[f"{p}:{b}" for p, b in QUICK_BLOCKS])
def test_quick_commands_run(block: list[Command], tmp_path: Path) -> None:
    """A quick block's commands, one after another in one directory, as a reader runs them."""
    for name in (".venv", "examples", "workloads", "benchmarks"):
        (tmp_path / name).symlink_to(ROOT / name)
    for command in block:
        done = subprocess.run(
            command.text, shell=True, cwd=tmp_path, capture_output=True, text=True,
            timeout=180, check=False,
        )  # fmt: skip
        assert done.returncode == command.exit_code, (
            f"{command.page}:{command.line}: {command.text} exited {done.returncode}, "
            f"expected {command.exit_code}:\n{done.stderr[-3000:]}"
        )


def test_readme_is_short_and_points_to_the_manual() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 100
    for page in ("getting-started", "your-design", "cli"):
        assert f"docs/{page}.md" in readme
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", readme):
        assert (ROOT / target).exists(), f"README links to {target}, which does not exist"


def test_the_command_line_reference_is_current() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "loadgen.cli_reference", "--check"], cwd=ROOT,
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
