"""A null DynamoDB endpoint for benchmarks: answers ``{}`` (with its CRC32) at once.

Two servers answer alike, each in a child process of its own (its own core and event loop):

- ``aiohttp`` (this file, run on its own: it prints its URL and serves until killed). Table
  operations get just enough of an answer for a workload to start: CreateTable is remembered
  and DescribeTable describes what was created (ACTIVE at once), or answers
  ResourceNotFoundException. Every other request gets ``{}``.
- ``nginx``: Debian's ``nginx`` package (``apt-get install nginx``; nothing else is
  downloaded), run unprivileged from a generated config in a temporary folder: one process
  (``master_process off``), its own pid, log and temp paths, a free 127.0.0.1 port. It keeps
  no state: it chooses each answer by the ``X-Amz-Target`` header, so DescribeTable and
  CreateTable describe the counter workload's table (``ph-counter``: a string ``pk``,
  on-demand, ACTIVE) whatever table was named. It costs the least CPU per request of any
  server here, so a load generator's rate against it is the load generator's own ceiling.

    with null_endpoint("nginx") as url: ...
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

NULL_KINDS = ("nginx", "aiohttp")
"""The null endpoints `null_endpoint` runs."""
NGINX_PATHS = ("/usr/sbin/nginx",)
"""Where Debian's package puts nginx (not on an unprivileged user's PATH), after PATH."""
COUNTER_TABLE = {
    "TableName": "ph-counter",
    "TableStatus": "ACTIVE",
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "BillingModeSummary": {"BillingMode": "PAY_PER_REQUEST"},
    "ItemCount": 0,
}
"""What the nginx endpoint describes for any table: the counter workload's."""
NGINX_ANSWERS = {
    "DescribeTable": {"Table": COUNTER_TABLE},
    "CreateTable": {"TableDescription": COUNTER_TABLE},
}
"""Bodies by operation (the ``X-Amz-Target`` after its prefix); every other one is ``{}``."""


def serve() -> None:
    """Serve on a free loopback port; print the URL first."""
    from aiohttp import web

    body = b"{}"
    headers = {
        "Content-Type": "application/x-amz-json-1.0",
        "x-amz-crc32": str(zlib.crc32(body) & 0xFFFFFFFF),
        "x-amzn-RequestId": "bench",
    }

    tables: dict[str, dict[str, object]] = {}

    def json_response(status: int, payload: object) -> web.Response:
        data = json.dumps(payload).encode()
        answer_headers = {**headers, "x-amz-crc32": str(zlib.crc32(data) & 0xFFFFFFFF)}
        return web.Response(status=status, body=data, headers=answer_headers)

    async def answer(request: web.Request) -> web.Response:
        data = await request.read()  # read the body, as a real server must
        operation = request.headers.get("X-Amz-Target", "").rpartition(".")[2]
        if operation not in ("CreateTable", "DescribeTable"):
            return web.Response(body=body, headers=headers)
        asked = json.loads(data)
        name = asked.get("TableName", "")
        if operation == "CreateTable":
            tables[name] = {**asked, "TableStatus": "ACTIVE", "ItemCount": 0}
            return json_response(200, {"TableDescription": tables[name]})
        if name in tables:
            return json_response(200, {"Table": tables[name]})
        missing = "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException"
        return json_response(400, {"__type": missing, "message": "Requested resource not found"})

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/{path:.*}", answer)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        print(f"http://127.0.0.1:{runner.addresses[0][1]}", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


def nginx_binary() -> str | None:
    """Debian's nginx where installed (PATH, then `NGINX_PATHS`); None otherwise."""
    found = shutil.which("nginx")
    if found:
        return found
    return next((path for path in NGINX_PATHS if Path(path).is_file()), None)


def default_kind() -> str:
    """``nginx`` where its binary is installed, else ``aiohttp``."""
    return "nginx" if nginx_binary() else "aiohttp"


@contextmanager
def null_endpoint(kind: str = "aiohttp") -> Iterator[str]:
    """Run a null server (one of `NULL_KINDS`) in a child process; yield its URL."""
    if kind == "nginx":
        with _nginx() as url:
            yield url
        return
    if kind != "aiohttp":
        raise SystemExit(f"null endpoint must be one of {', '.join(NULL_KINDS)} (got {kind!r})")
    process = subprocess.Popen([sys.executable, __file__], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait(timeout=10)


def nginx_config(folder: Path, port: int) -> str:
    """nginx's config for a null endpoint on 127.0.0.1:``port``, its files under ``folder``."""
    targets, checksums = [], []
    for operation, answer in NGINX_ANSWERS.items():
        body = json.dumps(answer, separators=(",", ":"))
        target = f"DynamoDB_20120810.{operation}"
        targets.append(f"        {target} '{body}';")
        checksums.append(f"        {target} {zlib.crc32(body.encode())};")
    temp = "\n".join(
        f"    {kind}_temp_path {folder / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return f"""daemon off;
master_process off;
worker_processes 1;
pid {folder / "nginx.pid"};
error_log {folder / "error.log"} warn;
events {{
    worker_connections 4096;
}}
http {{
    access_log off;
    server_tokens off;
{temp}
    default_type application/x-amz-json-1.0;
    # The load generator's connections stay open for the whole run, as DynamoDB's do.
    keepalive_requests 100000000;
    keepalive_timeout 75s;
    map $http_x_amz_target $answer {{
        default '{{}}';
{chr(10).join(targets)}
    }}
    map $http_x_amz_target $answer_crc32 {{
        default {zlib.crc32(b"{}")};
{chr(10).join(checksums)}
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            add_header x-amz-crc32 $answer_crc32;
            add_header x-amzn-RequestId bench;
            return 200 $answer;
        }}
    }}
}}
"""


@contextmanager
def _nginx() -> Iterator[str]:
    binary = nginx_binary()
    if binary is None:
        raise SystemExit(
            "nginx is not installed: apt-get install nginx (Debian's package), or --null aiohttp"
        )
    with tempfile.TemporaryDirectory(prefix="partition-heat-nginx-") as scratch:
        folder = Path(scratch)
        for attempt in range(3):
            port = _free_port()
            config = folder / "nginx.conf"
            config.write_text(nginx_config(folder, port))
            process = subprocess.Popen(
                [binary, "-p", str(folder), "-c", str(config), "-e", str(folder / "error.log")],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                if _answers(port, process):
                    yield f"http://127.0.0.1:{port}"
                    return
            finally:
                process.terminate()
                process.wait(timeout=10)
            if attempt == 2:  # another process took the port in between, three times
                log = (folder / "error.log").read_text(errors="replace")[-2000:]
                raise SystemExit(f"nginx did not start:\n{log}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answers(port: int, process: subprocess.Popen[bytes], timeout: float = 10.0) -> bool:
    """Whether nginx listens on ``port`` within ``timeout`` (False once it has exited)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(0.05)
    return False


if __name__ == "__main__":
    serve()
