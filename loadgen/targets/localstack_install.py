"""Install LocalStack for `loadgen.targets.localstack`: once, pinned, then offline.

    python -m loadgen.targets.localstack_install [--python PYTHON] [--dir DIRECTORY]

Into the directory (`home`: in the user's cache, one per set of pins) it puts:

- ``venv/``: a virtual environment of Python 3.13 or later (LocalStack 4.14.0 imports on
  nothing older) with every package of ``localstack-requirements.txt`` at its pinned version,
  downloaded from PyPI by pip; the harness's own environment is not touched;
- ``cache/``: LocalStack's index of the AWS services' models, which it would otherwise build
  at every start in a fresh directory (twice the time, four times the memory);
- ``classes/``: the two classes of the jar each start lays out (compiled here with the Java
  compiler DynamoDB Local's loopback launcher already needs): one starts DynamoDB Local on
  127.0.0.1 only, the other is an agent that does nothing, standing in for the one LocalStack
  would download;
- ``installed``: a stamp of the requirements and the classes' source. Run again, it does
  nothing while they are unchanged; after a change it installs what differs.

Nothing else is downloaded, then or when LocalStack starts.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from loadgen.errors import HarnessError, TargetError
from loadgen.targets import local

__all__ = [
    "MIN_PYTHON",
    "REQUIREMENTS",
    "find_python",
    "home",
    "install",
    "is_installed",
    "jar_classes",
    "venv_python",
]

REQUIREMENTS = Path(__file__).with_name("localstack-requirements.txt")
"""Every package LocalStack's environment holds, each at one version."""
MIN_PYTHON = (3, 13)
"""LocalStack 4.14.0 imports on Python 3.13 or later only (its code uses newer syntax than
its metadata says)."""

_PYTHON_VARIABLE = "PARTITION_HEAT_LOCALSTACK_PYTHON"
_HOME_VARIABLE = "PARTITION_HEAT_LOCALSTACK_DIR"
_STAMP = "installed"

_NO_PATCH_AGENT = """\
/** Stands in for LocalStack's DynamoDB Local agent, which only lifts the 20-index limit. */
public class NoPatchAgent {
    public static void premain(String arguments) {}
}
"""
_COMPILE = """\
public class Compile {
    public static void main(String[] arguments) {
        javax.tools.JavaCompiler javac = javax.tools.ToolProvider.getSystemJavaCompiler();
        System.exit(javac.run(null, null, null, arguments));
    }
}
"""
_BUILD_CATALOG = """\
import sys
from localstack.aws.spec import _get_catalog_filename, build_service_index_cache
build_service_index_cache(f"{sys.argv[1]}/{_get_catalog_filename()}")
"""
_SOURCES = {"LoopbackDynamoDBLocal": local._LOOPBACK_LAUNCHER, "NoPatchAgent": _NO_PATCH_AGENT}


def home() -> Path:
    """Where LocalStack is installed: ``$PARTITION_HEAT_LOCALSTACK_DIR``, else a directory of
    the user's cache named for what it holds (``~/.cache/partition-heat/localstack-<hash of
    the requirements and the classes' source>``). Every checkout, and CI's fresh clone on a
    machine that has one, shares the install of the same pins (250 MB); other pins get a
    directory of their own rather than reinstall over it."""
    override = os.environ.get(_HOME_VARIABLE)
    if override:
        return Path(override)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "partition-heat" / f"localstack-{_stamp_text()[:12]}"


def venv_python(directory: Path | None = None) -> Path:
    """The Python of LocalStack's virtual environment."""
    return (directory or home()) / "venv" / "bin" / "python"


def _stamp_text() -> str:
    digest = hashlib.sha256(REQUIREMENTS.read_bytes())
    for name, source in sorted(_SOURCES.items()):
        digest.update(name.encode() + source.encode())
    return digest.hexdigest()


def is_installed(directory: Path) -> bool:
    """Whether ``directory`` holds this version's LocalStack, ready to start."""
    try:
        stamp = (directory / _STAMP).read_text(encoding="utf-8").strip()
    except OSError:
        return False
    venv = directory / "venv" / "bin" / "python"
    classes = all((directory / "classes" / f"{name}.class").is_file() for name in _SOURCES)
    return stamp == _stamp_text() and venv.exists() and classes


def jar_classes(directory: Path) -> dict[str, bytes]:
    """The compiled classes for the jar each start lays out, by their name in it."""
    return {
        path.name: path.read_bytes() for path in sorted((directory / "classes").glob("*.class"))
    }


def _version(python: str) -> tuple[int, int] | None:
    try:
        done = subprocess.run(
            [python, "-c", "import sys; print(*sys.version_info[:2])"],
            capture_output=True, text=True, timeout=30, check=True,
        )  # fmt: skip
        major, minor = done.stdout.split()
        return int(major), int(minor)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def find_python() -> str:
    """A Python of `MIN_PYTHON` or later: ``$PARTITION_HEAT_LOCALSTACK_PYTHON``, else
    ``python3.N`` on PATH, else pyenv's newest; `TargetError` where there is none."""
    override = os.environ.get(_PYTHON_VARIABLE)
    if override:
        if (_version(override) or (0, 0)) < MIN_PYTHON:
            raise TargetError(f"{_PYTHON_VARIABLE}={override} is not Python 3.13 or later")
        return override
    candidates = [shutil.which(f"python3.{minor}") for minor in range(20, MIN_PYTHON[1] - 1, -1)]
    pyenv_root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    versions = sorted(
        (p for p in (pyenv_root / "versions").glob("3.*") if re.fullmatch(r"3\.\d+\.\d+", p.name)),
        key=lambda p: tuple(int(n) for n in p.name.split(".")),
        reverse=True,
    )
    candidates += [str(version / "bin" / "python3") for version in versions]
    for python in candidates:
        if python and (_version(python) or (0, 0)) >= MIN_PYTHON:
            return python
    raise TargetError(
        "LocalStack 4.14.0 needs Python 3.13 or later and none was found (python3.13 on PATH, "
        f"pyenv's versions, or {_PYTHON_VARIABLE})"
    )


def install(directory: Path, python: str | None = None, *, say: bool = True) -> bool:
    """Install LocalStack into ``directory`` unless it is there already; True if it did."""
    if is_installed(directory):
        return False

    def step(text: str) -> None:
        if say:
            print(f"localstack: {text}", flush=True)

    directory.mkdir(parents=True, exist_ok=True)
    (directory / _STAMP).unlink(missing_ok=True)
    venv = directory / "venv"
    if (_version(str(venv / "bin" / "python")) or (0, 0)) < MIN_PYTHON:
        python = python or find_python()
        shutil.rmtree(venv, ignore_errors=True)
        step(f"creating {venv} with {python}")
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
    step(f"installing the packages pinned in {REQUIREMENTS.name} (pip, from PyPI)")
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-input",
         "--disable-pip-version-check", "-r", str(REQUIREMENTS)],
        check=True,
    )  # fmt: skip
    step("compiling the DynamoDB Local launcher and agent (Java)")
    _compile(directory / "classes")
    # The index of every AWS service's model LocalStack builds on a first start (twice the
    # time and four times the memory of a start with it), built once here for every start.
    step("building LocalStack's service catalog")
    (directory / "cache").mkdir(exist_ok=True)
    subprocess.run(
        [str(venv / "bin" / "python"), "-c", _BUILD_CATALOG, str(directory / "cache")], check=True
    )
    (directory / _STAMP).write_text(_stamp_text() + "\n", encoding="utf-8")
    return True


def _compile(out: Path) -> None:
    java = local.find_java()
    local._runtime_without_compiler(java)
    engine = local._find_dynamodb_local()
    with tempfile.TemporaryDirectory(prefix="partition-heat-localstack-build-") as build:
        sources = []
        for name, source in {**_SOURCES, "Compile": _COMPILE}.items():
            path = Path(build, f"{name}.java")
            path.write_text(source, encoding="utf-8")
            sources.append(path)
        compile_, *rest = sorted(sources, key=lambda p: p.name != "Compile.java")
        classes = Path(build, "classes")
        done = subprocess.run(
            [java, str(compile_), "-d", str(classes), "-cp", str(engine / "DynamoDBLocal.jar"),
             *map(str, rest)],
            capture_output=True, text=True,
        )  # fmt: skip
        if done.returncode != 0:
            raise TargetError(f"compiling the LocalStack launcher failed:\n{done.stderr[-2000:]}")
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(classes, out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m loadgen.targets.localstack_install",
        description="Install LocalStack (DynamoDB only) for loadgen run --localstack and "
        "--engine localstack: a virtual environment of its own, every package pinned.",
    )
    parser.add_argument("--python", help="Python 3.13 or later to build it with (default: found)")
    parser.add_argument("--dir", type=Path, help="where (default: in the user's cache)")
    args = parser.parse_args(argv)
    directory = args.dir or home()
    try:
        done = install(directory, args.python)
    except (HarnessError, subprocess.CalledProcessError, OSError) as exc:
        print(f"localstack: error: {exc}", file=sys.stderr)
        return 1
    print(f"localstack: {'installed in' if done else 'up to date in'} {directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
