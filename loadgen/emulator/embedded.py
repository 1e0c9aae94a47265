"""The emulator in a child process, for runs that start their own target.

The child gets its own core and event loop; a Locust process is one gevent loop and would
compete with an emulator started inside it.
"""

from __future__ import annotations

import atexit
import math
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Sequence
from pathlib import Path

from loadgen.emulator.engines import Engine, choose_engine, jvm_choice
from loadgen.errors import ConfigError, TargetError
from loadgen.targets import local as targets

__all__ = ["DEFAULT_SCALE", "EmbeddedEmulator"]

# Engines on Java, which the child warms up and measures (it prints the rate it saw).
_MEASURED = ("dynamodb-local", "localstack")

DEFAULT_SCALE = 0.1
"""Default ``--scale``: partitions serve 300 read and 100 write units/s, a tenth of AWS's.

The embedded engine answers a few hundred requests a second here. At 0.1 one hot
partition-key value is held to 100 writes/s, well under that, while an on-demand table's
warm throughput (4,000 write units/s, so 400 scaled, over 8 partitions) takes the same load
spread over many keys without a throttle.
"""


class EmbeddedEmulator(targets._LocalTarget):
    """``python -m loadgen.emulator`` in a child process on a free loopback port.

    The same lifecycle as `loadgen.targets.local.EmbeddedMoto`: a context manager, ``endpoint_url``,
    a bounded wait until it answers, and no process left behind. The child picks its own port
    (``--port 0``) and prints its URL, so no other process can take the port in between.

        >>> with EmbeddedEmulator(scale=0.1) as emulator:  # doctest: +SKIP
        ...     dynamodb = boto3.client("dynamodb", endpoint_url=emulator.endpoint_url)
    """

    name = "emulator"
    default_startup_timeout = 120.0  # DynamoDB Local starts and warms up (long runs: 8,000 calls)

    def __init__(
        self,
        *,
        scale: float | str | None = None,
        launch_rate: float | None = None,
        largest_units: float | None = None,
        seed: int | None = None,
        upstream: str | None = None,
        engine: str = "auto",
        extra_args: Sequence[str] = (),
        startup_timeout: float | None = None,
        run_seconds: float | None = None,
    ) -> None:
        super().__init__(startup_timeout=startup_timeout)
        self.auto = scale == "auto"
        """Whether the child chooses the scale for ``launch_rate`` (``--scale auto``)."""
        if self.auto:
            if launch_rate is None or not (math.isfinite(launch_rate) and launch_rate > 0):
                raise ConfigError(
                    "--scale auto needs the launch rate, operations/s at AWS scale "
                    f"(--rate, or rates in the config file; got {launch_rate!r})"
                )
        elif scale is not None and not (
            isinstance(scale, float | int) and math.isfinite(scale) and scale > 0
        ):
            raise ConfigError(f"scale must be a positive number or auto (got {scale!r})")
        self.launch_rate = launch_rate
        self.largest_units = largest_units
        """With ``--scale auto``: write units the largest request takes on one partition (AWS
        scale), a floor under the scale chosen (`loadgen.emulator.engines.auto_scale`)."""
        self.scale: float = (
            DEFAULT_SCALE if scale is None or isinstance(scale, str) else float(scale)
        )
        """Factor on every AWS capacity figure (with ``--scale auto``: the one the child chose,
        once started)."""
        self.seed = seed
        self.upstream = upstream
        self.engine: Engine | None = None if upstream is not None else choose_engine(engine)
        """The embedded engine behind the emulator (None when it forwards to ``upstream``)."""
        self.engine_rate: float | None = None
        """Requests/s the engine answered its warm-up at (DynamoDB Local only; after start)."""
        self.extra_args = tuple(extra_args)
        self.run_seconds = run_seconds
        """How long the run it serves lasts (None: unknown, taken as short): decides the
        DynamoDB Local JVM's options (`loadgen.emulator.engines.jvm_choice`)."""

    @property
    def behind(self) -> str:
        """What answers the requests the emulator admits, for a startup line."""
        if self.engine is None:
            return str(self.upstream)
        if self.engine_rate is None:
            return f"embedded {self.engine.description}"
        return (
            f"embedded {self.engine.description}, which answered its warm-up at "
            f"{self.engine_rate:,.0f} requests/s"
        )

    def _command(self, port: int, workdir: Path) -> list[str]:
        command = [sys.executable, "-m", "loadgen.emulator", "--port", str(port)]
        if self.auto:
            command += ["--scale", "auto", "--launch-rate", repr(self.launch_rate)]
            if self.largest_units is not None:
                command += ["--largest-request-units", repr(self.largest_units)]
        else:
            command += ["--scale", repr(self.scale)]
        if self.seed is not None:
            command += ["--seed", str(self.seed)]
        if self.upstream is not None:
            command += ["--upstream", self.upstream]
        if self.engine is not None:
            command += ["--engine", self.engine.name]
            if self.engine.name in _MEASURED:
                options, warm_up = jvm_choice(self.run_seconds)
                command += [f"--jvm-options={' '.join(options)}", f"--warm-up-requests={warm_up}"]
        return command + list(self.extra_args)

    def _start(self) -> None:
        workdir = Path(tempfile.mkdtemp(prefix="partition-heat-emulator-"))
        self._workdir = workdir
        atexit.register(self.close)
        command = self._command(0, workdir)
        url_path, log_path = workdir / "stdout.txt", workdir / "server.log"
        environment = dict(os.environ)
        # The child must import this very package, installed or not.
        package_root = str(Path(__file__).resolve().parents[2])
        environment["PYTHONPATH"] = os.pathsep.join(
            filter(None, [package_root, environment.get("PYTHONPATH")])
        )
        started = time.monotonic()
        try:
            with open(url_path, "wb") as out, open(log_path, "wb") as log:
                self._process = subprocess.Popen(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=log,
                    cwd=workdir,
                    env=environment,
                    preexec_fn=targets._die_with_parent_hook(),
                )
        except OSError as exc:
            raise TargetError(f"cannot run {command[0]} for the emulator: {exc}") from exc
        self._port = self._read_port(url_path, started)
        exit_code = self._wait_ready(started)
        if exit_code is not None:
            self._port = None
            raise TargetError(
                f"emulator exited with code {exit_code} while starting; last output:\n"
                f"{targets._tail(log_path)}"
            )
        self.startup_seconds = time.monotonic() - started

    def _read_port(self, url_path: Path, started: float) -> int:
        """Wait for the child's first stdout line, its URL, and return the port in it.

        A child that warmed up DynamoDB Local prints the rate it measured on the next line.
        """
        assert self._process is not None and self._workdir is not None
        measured = self.engine is not None and self.engine.name in _MEASURED
        lines_wanted = 1 + (measured or self.auto) + self.auto
        while True:
            text = url_path.read_text(encoding="utf-8", errors="replace")
            if text.count("\n") >= lines_wanted:
                lines = text.splitlines()
                for line in lines[1:lines_wanted]:
                    if line.startswith("engine-rate "):
                        self.engine_rate = float(line.split()[1])
                    elif line.startswith("scale "):
                        self.scale = float(line.split()[1])
                port = urllib.parse.urlsplit(lines[0].strip()).port
                if port is None:
                    raise TargetError(f"emulator printed {text.splitlines()[0]!r}, not its URL")
                return port
            exit_code = self._process.poll()
            if exit_code is not None or time.monotonic() - started > self.startup_timeout:
                state = (
                    f"exited with code {exit_code}"
                    if exit_code is not None
                    else (f"printed no URL within {self.startup_timeout:g} s")
                )
                raise TargetError(
                    f"emulator {state}; last output:\n{targets._tail(self._workdir / 'server.log')}"
                )
            time.sleep(0.05)
