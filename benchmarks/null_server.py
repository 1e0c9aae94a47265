"""A null DynamoDB endpoint for benchmarks: answers ``{}`` (with its CRC32) at once.

Table operations get just enough of an answer for a workload to start: CreateTable is
remembered and DescribeTable describes what was created (ACTIVE at once), or answers
ResourceNotFoundException. Every other request gets ``{}``.

Run on its own it prints its URL and serves until killed; `null_endpoint` runs it as a
child process, so the server has its own core and event loop.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import zlib
from collections.abc import Iterator
from contextlib import contextmanager


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


@contextmanager
def null_endpoint() -> Iterator[str]:
    """Run the null server in a child process; yield its URL."""
    process = subprocess.Popen([sys.executable, __file__], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    serve()
