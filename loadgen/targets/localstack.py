"""LocalStack's DynamoDB, started here in host mode, without Docker and without an account.

LocalStack 4.14.0, the last release whose image starts without an account, runs from the
virtual environment `loadgen.targets.localstack_install` made (Python 3.13 or later; the
harness's own environment is not touched), with DynamoDB only. It runs DynamoDB Local
inside, and takes it from the npm package the embedded target uses rather than downloading
it: each start lays out a directory LocalStack takes for its file system
(``FILESYSTEM_ROOT``) holding a link to the npm package's engine and a small jar built at
install time. That jar is both the agent LocalStack's command line names (LocalStack's own
only lifts the 20-index limit; ours does nothing) and the jar it runs, which starts DynamoDB
Local's server listening on 127.0.0.1 only, as `loadgen.targets.local.DynamoDBLocal` does.
Nothing is downloaded when it starts: no engine, no certificate, no analytics.

LocalStack starts DynamoDB Local's JVM in a session of its own, so a LocalStack killed by
SIGKILL leaves it running. Every process of one start names that start's directory on its
command line: `close()` ends LocalStack (SIGKILL: its data is in memory) and then any
process still naming the directory, and a reaper (`loadgen.targets.reaper`) does the same
should whoever started it die without `close()`.

    >>> with LocalStack(faults=Faults(any=0.1)) as localstack:  # doctest: +SKIP
    ...     client = boto3.client("dynamodb", endpoint_url=localstack.endpoint_url)

Its fault injection (`Faults`) refuses data requests at random with
``ProvisionedThroughputExceededException``, whatever the key: not heat.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from loadgen.errors import ConfigError, TargetError
from loadgen.targets import local, reaper
from loadgen.targets.localstack_install import home, is_installed, jar_classes, venv_python

__all__ = [
    "LOCALSTACK_VERSION",
    "SETTINGS",
    "Faults",
    "LocalStack",
    "LocalStackTarget",
    "localstack_missing",
    "localstack_target",
    "read_faults",
    "write_faults",
]

LOCALSTACK_VERSION = "4.14.0"
"""The LocalStack release run here and in docker-compose.yml's image: the last whose image
starts without an account (later images ask for an auth token)."""

SETTINGS: Mapping[str, str] = {
    "SERVICES": "dynamodb",
    # DynamoDB Local starts with LocalStack, not with the first request of a run.
    "EAGER_SERVICE_LOADING": "1",
    "PERSISTENCE": "0",
    "DYNAMODB_IN_MEMORY": "1",
    # Nothing leaves the machine: no analytics, no certificate download, no DNS server.
    "DISABLE_EVENTS": "1",
    "SKIP_SSL_CERT_DOWNLOAD": "1",
    "DNS_ADDRESS": "0",
    # A log line per request would cost as much as the request.
    "LS_LOG": "warn",
    # GET /_localstack/config tells a run the fault injection in force; POST changes it.
    "ENABLE_CONFIG_UPDATES": "1",
}
"""LocalStack's settings wherever the harness runs it (host mode here, docker-compose.yml)."""

_HOST_MODE: Mapping[str, str] = {
    # These machines look like a container to LocalStack; in a container's paths it finds
    # no engine and answers 500 to every DynamoDB call.
    "OVERRIDE_IN_DOCKER": "0",
}
_ENGINE_DIR = "var/lib/localstack/lib/dynamodb-local/2"
_AGENT_JAR = "ddb-local-loader-0.1.jar"
_CACHE_DIR = "var/lib/localstack/cache"
_CATALOG = "service-catalog-*.dill"
_INSTALL_HINT = "run `bash scripts/setup`, or `python -m loadgen.targets.localstack_install`"

# LocalStack's twisted server listens on every interface whatever GATEWAY_LISTEN's host says;
# here it gets that host. Then LocalStack's own entry point runs, as `python -m` would.
_BOOTSTRAP = """\
import os, runpy
from twisted.internet import endpoints
_tcp4 = endpoints.TCP4ServerEndpoint
def _listen_on_host(reactor, port, backlog=50, interface=""):
    host = os.environ["GATEWAY_LISTEN"].rpartition(":")[0]
    return _tcp4(reactor, port, backlog, interface or host)
endpoints.TCP4ServerEndpoint = _listen_on_host
runpy.run_module("localstack.runtime.main", run_name="__main__")
"""


def localstack_missing() -> str | None:
    """Why LocalStack cannot start here (not installed, no Java, no DynamoDB Local), or None.

    >>> localstack_missing()  # doctest: +SKIP
    'LocalStack is not installed in ~/.cache/partition-heat/localstack-...: run ...'
    """
    directory = home()
    if not is_installed(directory):
        return f"LocalStack is not installed in {directory}: {_INSTALL_HINT}"
    return local.dynamodb_local_missing()


@dataclass(frozen=True)
class Faults:
    """LocalStack's fault injection: the chance that it refuses a data request with
    ``ProvisionedThroughputExceededException``, at random, whatever the key or partition.

    ``any`` applies to every read and write, ``read`` and ``write`` to those alone
    (LocalStack's ``DYNAMODB_ERROR_PROBABILITY``, ``DYNAMODB_READ_ERROR_PROBABILITY`` and
    ``DYNAMODB_WRITE_ERROR_PROBABILITY``); a request draws once, so a read is refused at the
    larger of ``read`` and ``any``.

        >>> Faults.parse("read=0.05,write=0.1").environment()["DYNAMODB_WRITE_ERROR_PROBABILITY"]
        '0.1'
    """

    any: float = 0.0
    read: float = 0.0
    write: float = 0.0

    VARIABLES: ClassVar[dict[str, str]] = {
        "any": "DYNAMODB_ERROR_PROBABILITY",
        "read": "DYNAMODB_READ_ERROR_PROBABILITY",
        "write": "DYNAMODB_WRITE_ERROR_PROBABILITY",
    }

    def __post_init__(self) -> None:
        for name in self.VARIABLES:
            value = getattr(self, name)
            if not (isinstance(value, int | float) and 0.0 <= value <= 1.0):
                raise ConfigError(f"--localstack-faults {name} must be 0 to 1 (got {value!r})")

    @classmethod
    def parse(cls, text: str) -> Faults:
        """``0.1`` (every read and write) or ``read=0.05,write=0.1`` (``any=`` too)."""
        expected = f"a probability like 0.1, or read=P,write=P,any=P (got {text!r})"
        values: dict[str, float] = {}
        for part in str(text).split(","):
            name, sep, number = part.strip().rpartition("=")
            name = name.strip() if sep else "any"
            if name not in cls.VARIABLES or name in values:
                raise ConfigError(f"--localstack-faults must be {expected}")
            try:
                values[name] = float(number)
            except ValueError:
                raise ConfigError(f"--localstack-faults must be {expected}") from None
        return cls(**values)

    def environment(self) -> dict[str, str]:
        """LocalStack's variables for these faults."""
        return {
            variable: repr(float(getattr(self, name))) for name, variable in self.VARIABLES.items()
        }

    def to_dict(self) -> dict[str, float]:
        """By LocalStack's variable names, for a results file."""
        return {variable: float(getattr(self, name)) for name, variable in self.VARIABLES.items()}

    def describe(self) -> str:
        """In LocalStack's words: the variables set, or that none is."""
        chosen = [
            f"{self.VARIABLES[n]}={getattr(self, n):g}" for n in self.VARIABLES if getattr(self, n)
        ]
        return ", ".join(chosen) or "no fault injection"


class LocalStack(local._LocalTarget):
    """LocalStack (DynamoDB only, DynamoDB Local inside) on a free loopback port.

    The lifecycle of `loadgen.targets.local.DynamoDBLocal`, and its JVM ended with it however
    it ends. ``faults`` sets LocalStack's fault injection; ``java_options`` reach DynamoDB
    Local's JVM (through ``JAVA_TOOL_OPTIONS``).
    """

    name = "localstack"
    default_startup_timeout = 90.0  # 4-14 s here; a first start after install compiles more

    def __init__(
        self,
        *,
        faults: Faults | None = None,
        java_options: tuple[str, ...] = (),
        startup_timeout: float | None = None,
    ) -> None:
        super().__init__(startup_timeout=startup_timeout)
        self.faults = faults or Faults()
        """LocalStack's fault injection, from its start."""
        self.java_options = java_options
        self._reaper: subprocess.Popen[bytes] | None = None
        self._reaper_pipe: int | None = None

    def _start(self) -> None:
        missing = localstack_missing()
        if missing is not None:
            raise TargetError(missing)
        super()._start()
        assert self._workdir is not None
        _keep_catalog(self._workdir / "root" / _CACHE_DIR, home() / "cache")

    def _command(self, port: int, workdir: Path) -> list[str]:
        if self._reaper is None:  # before LocalStack, so that nothing runs unwatched
            self._start_reaper(workdir)
        root = workdir / "root"
        if not (root / _ENGINE_DIR).is_dir():  # laid out once, whatever port is tried
            self._lay_out_engine(root)
            _seed_catalog(home() / "cache", root / _CACHE_DIR)
        # The directory on the command line marks the processes of this start (`reaper`).
        return [str(venv_python()), "-c", _BOOTSTRAP, str(workdir)]

    def _environment(self, port: int, workdir: Path) -> dict[str, str]:
        java = Path(local.find_java())
        environment = {
            **os.environ,
            **SETTINGS,
            **_HOST_MODE,
            **self.faults.environment(),
            "GATEWAY_LISTEN": f"{local._LOOPBACK}:{port}",
            "FILESYSTEM_ROOT": str(workdir / "root"),
            # LocalStack runs `java` from PATH: the one the harness found.
            "PATH": os.pathsep.join([str(java.parent), os.environ.get("PATH", "")]),
        }
        if self.java_options:
            environment["JAVA_TOOL_OPTIONS"] = " ".join(self.java_options)
        for name in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"):  # the harness's, not its
            environment.pop(name, None)
        return environment

    def _probe(self, timeout: float) -> None:
        # LocalStack answers before its DynamoDB has started: wait for a ListTables that
        # DynamoDB Local answered.
        local.probe(self.endpoint_url, timeout=timeout)
        if _health(self.endpoint_url, timeout).get("dynamodb") != "running":
            raise TargetError(f"{self.name} at {self.endpoint_url}: DynamoDB not running yet")

    def _lay_out_engine(self, root: Path) -> None:
        """The DynamoDB Local LocalStack finds installed: the npm package's, run by our jar."""
        engine = local._find_dynamodb_local()
        directory = root / _ENGINE_DIR
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "engine").symlink_to(engine, target_is_directory=True)
        (directory / "DynamoDBLocal_lib").symlink_to(engine / "DynamoDBLocal_lib")
        jar = directory / "DynamoDBLocal.jar"  # LocalStack's marker that the engine is there
        _write_jar(jar, jar_classes(home()))
        os.link(jar, directory / _AGENT_JAR)

    def _start_reaper(self, workdir: Path) -> None:
        read_end, write_end = os.pipe()  # both ends not inherited: only the reaper reads
        try:
            self._reaper = subprocess.Popen(
                [sys.executable, "-I", reaper.__file__, str(workdir)],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # a Ctrl-C meant for the run is not for it
            )
        finally:
            os.close(read_end)
        self._reaper_pipe = write_end

    def _stop(self) -> None:
        workdir, process = self._workdir, self._process
        if process is not None and process.poll() is None:
            # Its data is in memory, nothing to save, and its own shutdown takes 1.5-6 s:
            # SIGKILL, then its JVM by the marker.
            process.kill()
            process.wait()
        super()._stop()
        if workdir is not None:
            exclude = () if self._reaper is None else (self._reaper.pid,)
            reaper.kill_naming(str(workdir), exclude=exclude)
        if self._reaper_pipe is not None:
            os.close(self._reaper_pipe)
            self._reaper_pipe = None
        if self._reaper is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._reaper.wait(timeout=5)
            self._reaper = None


def _seed_catalog(kept: Path, cache: Path) -> None:
    """Give a start the service catalog an earlier one built. LocalStack builds it on a first
    start from every AWS service's model: here 27 s and 630 MB resident against 13 s and
    160 MB with it in place (benchmarks/bench_localstack.py)."""
    cache.mkdir(parents=True, exist_ok=True)
    for catalog in kept.glob(_CATALOG):
        shutil.copyfile(catalog, cache / catalog.name)


def _keep_catalog(cache: Path, kept: Path) -> None:
    """Keep the service catalog a start built, for the next (written whole, then renamed)."""
    for catalog in cache.glob(_CATALOG):
        if (kept / catalog.name).exists():
            continue
        with contextlib.suppress(OSError):  # no catalog kept costs time, not correctness
            kept.mkdir(parents=True, exist_ok=True)
            partial = kept / f".{catalog.name}.{os.getpid()}"
            shutil.copyfile(catalog, partial)
            os.replace(partial, kept / catalog.name)


def _write_jar(path: Path, classes: Mapping[str, bytes]) -> None:
    manifest = (
        "Manifest-Version: 1.0\r\n"
        "Main-Class: LoopbackDynamoDBLocal\r\n"
        "Premain-Class: NoPatchAgent\r\n"
        "Class-Path: engine/DynamoDBLocal.jar\r\n\r\n"
    )
    with zipfile.ZipFile(path, "w") as jar:
        jar.writestr("META-INF/MANIFEST.MF", manifest)
        for name, data in classes.items():
            jar.writestr(name, data)


def _health(endpoint_url: str, timeout: float) -> dict[str, str]:
    """LocalStack's services and their states, from ``/_localstack/health``; {} for none."""
    body = _get_json(endpoint_url, "/_localstack/health", timeout)
    services = body.get("services") if isinstance(body, dict) else None
    return services if isinstance(services, dict) else {}


def _get_json(endpoint_url: str, path: str, timeout: float, data: bytes | None = None) -> object:
    parts = urllib.parse.urlsplit(endpoint_url)
    url = urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))
    request = urllib.request.Request(
        url, data=data, headers={"Content-Type": "application/json"} if data else {}
    )
    handlers = [urllib.request.ProxyHandler({})] if local._is_loopback(parts.hostname or "") else []
    try:
        with urllib.request.build_opener(*handlers).open(request, timeout=timeout) as response:
            return json.loads(response.read(local._MAX_PROBE_BODY))
    except (OSError, ValueError):
        return None


def read_faults(endpoint_url: str, timeout: float = 5.0) -> Faults | None:
    """The fault injection a running LocalStack has, from ``GET /_localstack/config``; None
    where it does not say (not LocalStack, or started without ``ENABLE_CONFIG_UPDATES=1``)."""
    config = _get_json(endpoint_url, "/_localstack/config", timeout)
    if not isinstance(config, dict):
        return None
    try:
        values = {n: float(config.get(v) or 0.0) for n, v in Faults.VARIABLES.items()}
        return Faults(**values)
    except (TypeError, ValueError, ConfigError):
        return None


def write_faults(endpoint_url: str, faults: Faults, timeout: float = 5.0) -> None:
    """Set a running LocalStack's fault injection (``POST /_localstack/config``, which it
    serves with ``ENABLE_CONFIG_UPDATES=1``); `TargetError` where it cannot be set."""
    for variable, value in faults.to_dict().items():
        body = json.dumps({"variable": variable, "value": value}).encode()
        answer = _get_json(endpoint_url, "/_localstack/config", timeout, data=body)
        if not isinstance(answer, dict) or answer.get("variable") != variable:
            raise TargetError(
                f"cannot set {variable} on the LocalStack at {endpoint_url}: it serves no "
                "POST /_localstack/config (start it with ENABLE_CONFIG_UPDATES=1)"
            )
    if read_faults(endpoint_url, timeout) != faults:
        raise TargetError(f"the LocalStack at {endpoint_url} did not take {faults.describe()}")


@dataclass(frozen=True)
class LocalStackTarget:
    """A LocalStack a run sends its requests to (`localstack_target`)."""

    endpoint_url: str
    description: str
    faults: Faults | None
    """Its fault injection during the run; None where it does not say."""


@contextlib.contextmanager
def localstack_target(
    endpoint_url: str | None,
    faults: Faults | None,
    *,
    java_options: tuple[str, ...] = (),
) -> Iterator[LocalStackTarget]:
    """A LocalStack for a run: started here on loopback (and stopped after), or the one at
    ``endpoint_url``, which must be LocalStack. ``faults`` are its fault injection for the
    run: set at its start, or on the running one and put back as they were after the run.
    """
    if endpoint_url is None:
        with LocalStack(faults=faults, java_options=java_options) as started:
            yield LocalStackTarget(
                started.endpoint_url,
                f"LocalStack {LOCALSTACK_VERSION} ({started.endpoint_url}), started here, "
                f"DynamoDB Local {local.DYNAMODB_LOCAL_NPM_VERSION} inside",
                started.faults,
            )
        return
    local.probe(endpoint_url, timeout=5.0)
    if "dynamodb" not in _health(endpoint_url, 5.0):
        raise TargetError(
            f"{endpoint_url} is not LocalStack: it answers no /_localstack/health naming dynamodb"
        )
    before = read_faults(endpoint_url)
    if faults is not None:
        write_faults(endpoint_url, faults)
    try:
        yield LocalStackTarget(
            endpoint_url, f"LocalStack ({endpoint_url})", faults if faults is not None else before
        )
    finally:
        if faults is not None and before is not None:
            with contextlib.suppress(TargetError):
                write_faults(endpoint_url, before)
