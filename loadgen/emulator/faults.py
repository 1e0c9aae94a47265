"""Backend failures as DynamoDB-shaped, retryable errors.

Whatever goes wrong behind the emulator (an upstream that refuses connections, times out,
restarts, or answers something that is not DynamoDB's JSON; moto raising) the client gets what
DynamoDB sends when it fails on its side: HTTP 500 ``InternalServerError`` with a JSON body,
which every SDK retries. Never a hang, an HTML page passed through, or a dropped connection.
"""

from __future__ import annotations

import json
from typing import Any

from loadgen.emulator.wire import dumps, error_body, internal_error
from loadgen.model.expressions import expression_error

__all__ = ["backend_raised", "unavailable", "unusable_answer"]

_VALIDATION = "com.amazon.coral.validate#ValidationException"
# What an HTTP server answers to a request too large in one of its parts (DynamoDB Local's
# Jetty answers 431 to headers over 8 KB): passed on as answered, not made a retryable 500.
_REFUSED_AS_SENT = frozenset({413, 414, 431})


def unavailable(reason: object) -> tuple[int, bytes]:
    """Status and body for a backend that gave no answer (refused, reset, timed out)."""
    return 500, dumps(internal_error(f"Backend unavailable: {reason}"))


def backend_raised(error: Exception, request: Any) -> tuple[int, bytes]:
    """Status and body for an in-process backend (moto) that raised instead of answering.

    Where DynamoDB's answer is clear, that answer: an expression moto could not read is one
    DynamoDB rejects with a ValidationException (`loadgen.model.expressions` names the
    error). Otherwise DynamoDB's InternalServerError, naming the operation moto lacks, never
    Python's text: the failure is the engine's, not the request's.
    """
    try:
        message = expression_error(request) if isinstance(request, dict) else None
    except RecursionError:  # parentheses nested thousands deep: no clear answer
        message = None
    if message is not None:
        return 400, dumps(error_body(_VALIDATION, message))
    if isinstance(error, NotImplementedError):
        return 500, dumps(internal_error("The engine (moto) does not implement this operation"))
    return 500, dumps(internal_error())


def unusable_answer(status: int, body: bytes) -> tuple[int, bytes] | None:
    """Status and body to send instead of a backend's answer, or None if it can be sent.

    A DynamoDB answer is a JSON object (errors too); an empty body is accepted only with 200
    (moto answers some control-plane calls so). A refusal of the request's size (413, 414,
    431) goes to the client as the backend sent it. Anything else (an HTML error page, a web
    server's redirect, truncated JSON) is the backend failing, not the request.
    """
    if not 100 <= status <= 599:
        return 500, dumps(internal_error(f"Backend answered HTTP status {status}"))
    if status in _REFUSED_AS_SENT:
        return None  # the request's own fault, in HTTP's words: sending it again cannot help
    if not body:
        return None if status == 200 else (500, dumps(internal_error()))
    if status == 200:
        # The hot path: every answer passes here, so only a cheap look at a success.
        stripped = body.strip()
        if stripped.startswith(b"{") and stripped.endswith(b"}"):
            return None
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):
        parsed = None
    if isinstance(parsed, dict):
        return None
    return 500, dumps(internal_error("Backend answered something that is not DynamoDB's JSON"))
