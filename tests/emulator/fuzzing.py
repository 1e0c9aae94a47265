"""A seeded corpus of hostile DynamoDB requests, and a client that sends it.

Each request starts from a valid one (every data operation and a few control-plane ones, on
`TABLE`) and is usually broken in one way: random bytes, truncated or non-object JSON, a
missing or unknown ``X-Amz-Target``, a member of the wrong JSON type or null or missing, a bad
enum value, a value out of range, a broken attribute value (numbers with huge exponents too), an
expression DynamoDB cannot read, an item over 400 KB, nesting deeper than 32 levels, batches
and transactions over their limits. Valid reads carry projections that leave the key out, and
tagging is among the operations. The same seed gives the same corpus, so a failure names the
request that caused it.
"""

from __future__ import annotations

import copy
import http.client
import json
import random
import threading
import urllib.parse
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

TABLE = "fuzz_table"
"""The table every request names: key ``pk`` (S), on-demand."""
CREATE_TABLE = {
    "TableName": TABLE,
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "BillingMode": "PAY_PER_REQUEST",
}
HEADERS = {
    "Content-Type": "application/x-amz-json-1.0",
    # DynamoDB Local wants an alphanumeric access key id; nothing checks the signature.
    "Authorization": "AWS4-HMAC-SHA256 Credential=fuzz/20260101/us-east-1/dynamodb/"
    "aws4_request, SignedHeaders=host;x-amz-date, Signature=0",
    "X-Amz-Date": "20260101T000000Z",
}


@dataclass(frozen=True)
class Case:
    """One request: its operation header (None: no header), body, and how it was broken."""

    target: str | None
    body: bytes
    mutation: str


@dataclass(frozen=True)
class Answer:
    status: int
    code: str
    """The error code after the last ``#`` of ``__type`` ('' for a success)."""
    body: bytes


def _key(rng: random.Random) -> dict[str, Any]:
    return {"pk": {"S": f"k{rng.randrange(50)}"}}


def _item(rng: random.Random) -> dict[str, Any]:
    return {
        **_key(rng),
        "n": {"N": str(rng.randrange(-1000, 1000))},
        "tags": {"SS": ["a", "b"]},
        "doc": {"M": {"l": {"L": [{"S": "x"}, {"BOOL": True}, {"NULL": True}]}}},
    }


def _valid(operation: str, rng: random.Random) -> dict[str, Any]:
    """A request DynamoDB accepts against `TABLE`."""
    if operation == "GetItem":
        request = {"TableName": TABLE, "Key": _key(rng), "ConsistentRead": True}
        projection = rng.choice(_PROJECTIONS)  # a projection may leave the key out
        return {**request, **projection}
    if operation == "PutItem":
        return {"TableName": TABLE, "Item": _item(rng), "ReturnConsumedCapacity": "TOTAL"}
    if operation == "UpdateItem":
        return {
            "TableName": TABLE,
            "Key": _key(rng),
            "UpdateExpression": "ADD #n :one",
            "ExpressionAttributeNames": {"#n": "n"},
            "ExpressionAttributeValues": {":one": {"N": "1"}},
            "ReturnValues": "UPDATED_NEW",
        }
    if operation == "DeleteItem":
        return {"TableName": TABLE, "Key": _key(rng), "ReturnValues": "ALL_OLD"}
    if operation == "Query":
        return {
            "TableName": TABLE,
            "KeyConditionExpression": "pk = :k",
            "ExpressionAttributeValues": {":k": {"S": "k1"}},
            "Limit": 10,
            "Select": "ALL_ATTRIBUTES",
        }
    if operation == "Scan":
        scan = {"TableName": TABLE, "Limit": 5, "Segment": 0, "TotalSegments": 2}
        return {**scan, **rng.choice([{}, {"Select": "COUNT"}, *_PROJECTIONS])}
    if operation == "BatchGetItem":
        keys = [{"pk": {"S": f"k{i}"}} for i in range(rng.randrange(1, 5))]
        return {"RequestItems": {TABLE: {"Keys": keys}}}
    if operation == "BatchWriteItem":
        return {"RequestItems": {TABLE: [{"PutRequest": {"Item": _item(rng)}}]}}
    if operation == "TransactGetItems":
        return {"TransactItems": [{"Get": {"TableName": TABLE, "Key": _key(rng)}}]}
    if operation == "TransactWriteItems":
        return {
            "TransactItems": [
                {"Put": {"TableName": TABLE, "Item": _item(rng)}},
                {
                    "ConditionCheck": {
                        "TableName": TABLE,
                        "Key": {"pk": {"S": "other"}},
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
            ]
        }
    if operation == "DescribeTable":
        return {"TableName": TABLE}
    if operation == "ListTables":
        return {"Limit": 10}
    if operation == "TagResource":
        return {"ResourceArn": MOTO_ARN, "Tags": [{"Key": "team", "Value": str(rng.randrange(9))}]}
    if operation == "UntagResource":
        return {"ResourceArn": MOTO_ARN, "TagKeys": ["team"]}
    if operation == "CreateTable":
        return {**copy.deepcopy(CREATE_TABLE), "TableName": f"fuzz_new_{rng.randrange(10**6)}"}
    raise AssertionError(operation)


OPERATIONS = (
    "GetItem",
    "PutItem",
    "UpdateItem",
    "DeleteItem",
    "Query",
    "Scan",
    "BatchGetItem",
    "BatchWriteItem",
    "TransactGetItems",
    "TransactWriteItems",
    "DescribeTable",
    "ListTables",
    "CreateTable",
    "TagResource",
    "UntagResource",
)
MOTO_ARN = f"arn:aws:dynamodb:us-east-1:123456789012:table/{TABLE}"
"""`TABLE`'s ARN as moto writes it (DynamoDB Local does not tag)."""
_PROJECTIONS: tuple[dict[str, Any], ...] = (
    {},
    {"ProjectionExpression": "n, doc.l[1]"},
    {"ProjectionExpression": "#t", "ExpressionAttributeNames": {"#t": "tags"}},
    {"AttributesToGet": ["n"]},
)
_BAD_EXPRESSIONS = (
    "a IN ()",
    "SET a[#xyz] = :one",
    "(",
    "a = :nope",
    "SET",
    "ADD n",
    "n = = :k",
    "size(n)",
    "SET a = :one + :one + :one",
    "SET a = ((:one))",
    "attribute_exists(n, tags)",
)
_BAD_ATTRIBUTE_VALUES: tuple[dict[str, Any], ...] = (
    {},
    {"S": "a", "N": "1"},
    {"N": "abc"},
    {"N": "1e200"},
    {"N": "1" * 40},
    {"NULL": False},
    {"SS": []},
    {"SS": ["a", "a"]},
    {"NS": ["1", "x"]},
    {"BOOL": "true"},
    {"L": "x"},
    {"M": []},
    {"B": "!!not base64"},
    {"N": "1.0e100000000"},
    {"N": "-1e-100000000"},
    {"N": "1e2147483648"},
)
_WRONG_TYPE_ATTRIBUTE_VALUES: tuple[dict[str, Any], ...] = (
    {"BOOL": "true"},
    {"L": "x"},
    {"M": []},
    {"B": "!!not base64"},
)
"""A member of the wrong JSON type: DynamoDB's SerializationException, not a validation."""


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _nodes(child, (*path, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _nodes(child, (*path, i))


def _set(root: Any, path: Sequence[Any], value: Any) -> None:
    for step in path[:-1]:
        root = root[step]
    root[path[-1]] = value


def _delete(root: Any, path: Sequence[Any]) -> None:
    for step in path[:-1]:
        root = root[step]
    del root[path[-1]]


def _other_type(value: Any, rng: random.Random) -> Any:
    choices: list[Any] = ["text", 7, 1.5, True, [], [1], {}, {"x": 1}]
    kind = type(value)
    return rng.choice([c for c in choices if type(c) is not kind])


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"S": "deep"}
    for _ in range(depth):
        value = {"M": {"a": value}}
    return value


def _mutate(operation: str, request: dict[str, Any], rng: random.Random) -> tuple[Any, str]:
    """The request broken one way, and the way's name."""
    roll = rng.random()
    nodes = list(_nodes(request))[1:]
    path, value = rng.choice(nodes)
    if roll < 0.25:
        _set(request, path, _other_type(value, rng))
        return request, "wrong-type"
    if roll < 0.35:
        _delete(request, path)
        return request, "missing-member"
    if roll < 0.40:
        _set(request, path, None)
        return request, "null-member"
    if roll < 0.50:
        strings = [(p, v) for p, v in nodes if isinstance(v, str)]
        spot, _ = rng.choice(strings) if strings else (path, value)
        _set(request, spot, rng.choice(["BOGUS", "", "x" * 300, "a"]))
        return request, "bad-string"
    if roll < 0.57:
        numbers = [(p, v) for p, v in nodes if isinstance(v, int) and not isinstance(v, bool)]
        if numbers:
            spot, _ = rng.choice(numbers)
            _set(request, spot, rng.choice([0, -1, 10**12, 2**63]))
            return request, "out-of-range"
        request["Limit"] = rng.choice([0, -5])
        return request, "out-of-range"
    if roll < 0.72:
        values = [(p, v) for p, v in nodes if isinstance(v, dict) and _is_attribute_value(v)]
        if values:
            spot, _ = rng.choice(values)
            bad = copy.deepcopy(rng.choice(_BAD_ATTRIBUTE_VALUES))
            _set(request, spot, bad)
            typed = bad in _WRONG_TYPE_ATTRIBUTE_VALUES
            return request, "wrong-type" if typed else "bad-attribute-value"
        _set(request, path, _other_type(value, rng))
        return request, "wrong-type"
    if roll < 0.75:
        values = [p for p, v in nodes if isinstance(v, dict) and _is_attribute_value(v)]
        if values:
            _set(request, rng.choice(values), _nested(rng.choice([33, 40, 200])))
            return request, "deep-nesting"
    if roll < 0.77 and operation in ("PutItem", "BatchWriteItem", "TransactWriteItems"):
        big = {"S": "x" * (400 * 1024 + rng.randrange(1, 5000))}
        items = [p for p, _ in nodes if p and p[-1] == "Item"]
        if items:
            _set(request, (*rng.choice(items), "big"), big)
            return request, "oversized-item"
    if roll < 0.80:
        if operation == "BatchGetItem":
            keys = [{"pk": {"S": f"k{i}"}} for i in range(101)]
            return {"RequestItems": {TABLE: {"Keys": keys}}}, "batch-too-large"
        if operation == "BatchWriteItem":
            puts = [{"PutRequest": {"Item": {"pk": {"S": f"k{i}"}}}} for i in range(26)]
            return {"RequestItems": {TABLE: puts}}, "batch-too-large"
        if operation.startswith("Transact"):
            action = "Get" if operation == "TransactGetItems" else "Put"
            member = "Key" if action == "Get" else "Item"
            actions = [
                {action: {"TableName": TABLE, member: {"pk": {"S": f"k{i}"}}}} for i in range(101)
            ]
            return {"TransactItems": actions}, "transaction-too-large"
    expressions = [p for p, v in nodes if p and str(p[-1]).endswith("Expression")]
    if roll < 0.86 and expressions:
        _set(request, rng.choice(expressions), rng.choice(_BAD_EXPRESSIONS))
        return request, "bad-expression"
    request["Unknown" + str(rng.randrange(10))] = _other_type(None, rng)
    return request, "unknown-member"


def _is_attribute_value(value: dict[str, Any]) -> bool:
    return len(value) == 1 and next(iter(value)) in {
        "S",
        "N",
        "B",
        "SS",
        "NS",
        "BS",
        "M",
        "L",
        "NULL",
        "BOOL",
    }


def corpus(count: int, seed: int = 0) -> list[Case]:
    """``count`` requests, about one in twenty left valid."""
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        operation = rng.choice(OPERATIONS)
        target: str | None = "DynamoDB_20120810." + operation
        request = _valid(operation, rng)
        roll = rng.random()
        if roll < 0.05:
            cases.append(Case(target, json.dumps(request).encode(), "valid"))
            continue
        if roll < 0.08:
            body = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
            cases.append(Case(target, body, "random-bytes"))
            continue
        if roll < 0.11:
            text = json.dumps(request).encode()
            cases.append(Case(target, text[: rng.randrange(1, len(text))], "truncated-json"))
            continue
        if roll < 0.13:
            body = rng.choice([b"[1,2]", b'"text"', b"42", b"null", b"true", b"[" * 5000])
            cases.append(Case(target, body, "not-an-object"))
            continue
        if roll < 0.16:
            target = rng.choice([None, "", "DynamoDB_20120810.Bogus", "Other.GetItem", operation])
            cases.append(Case(target, json.dumps(request).encode(), "bad-target"))
            continue
        mutated, mutation = _mutate(operation, request, rng)
        cases.append(Case(target, json.dumps(mutated).encode(), mutation))
    return cases


def _send_all(urls: Sequence[str], cases: Sequence[Case], concurrency: int) -> list[list[Answer]]:
    """Each case to every url in turn, from ``concurrency`` threads on keep-alive connections.

    Threads rather than an event loop: where locust was imported, gevent has made threads
    greenlets and an `EmulatorServer` loop may already run in this OS thread.
    """
    answers: list[list[Answer]] = [[] for _ in cases]
    queue = iter(range(len(cases)))
    lock = threading.Lock()

    def next_index() -> int | None:
        with lock:
            return next(queue, None)

    def worker() -> None:
        parsed = [urllib.parse.urlsplit(url) for url in urls]
        connections = [http.client.HTTPConnection(p.netloc, timeout=60) for p in parsed]
        try:
            while (i := next_index()) is not None:
                case = cases[i]
                headers = dict(HEADERS)
                if case.target is not None:
                    headers["X-Amz-Target"] = case.target
                for n, connection in enumerate(connections):
                    answers[i].append(_post(connection, parsed[n].path or "/", case.body, headers))
        finally:
            for connection in connections:
                connection.close()

    with ThreadPoolExecutor(concurrency) as pool:
        for future in [pool.submit(worker) for _ in range(concurrency)]:
            future.result()
    return answers


def _post(
    connection: http.client.HTTPConnection, path: str, body: bytes, headers: dict[str, str]
) -> Answer:
    for attempt in (1, 2):  # a server may close a kept-alive connection after an error
        try:
            connection.request("POST", path, body=body, headers=headers)
            reply = connection.getresponse()
            data = reply.read()
            if reply.getheader("Connection", "").lower() == "close":
                connection.close()
            return Answer(reply.status, _code(data), data)
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            connection.close()
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def dynamodb_local_is_the_oracle(case: Case, direct: Answer) -> bool:
    """Whether DynamoDB Local's answer to ``case`` is DynamoDB's.

    It is for constraint violations it answers 400. It is not for members of the wrong JSON
    type (it coerces 7 to "7" where DynamoDB answers SerializationException), nor for a target of
    another service (its InvalidAction, DynamoDB's UnknownOperationException), nor for an
    operation it does not have (TagResource: UnknownOperationException).
    """
    return (
        direct.status == 400
        and case.mutation != "wrong-type"
        and (not case.target or case.target.startswith("DynamoDB_20120810."))
        and direct.code != "UnknownOperationException"  # an operation it lacks (tagging)
    )


def send(url: str, cases: Sequence[Case], concurrency: int = 32) -> list[Answer]:
    """Send every case to ``url``, ``concurrency`` at once; the answers in corpus order."""
    return [answers[0] for answers in _send_all([url], cases, concurrency)]


def send_to_both(
    first: str, second: str, cases: Sequence[Case], concurrency: int = 32
) -> list[tuple[Answer, Answer]]:
    """Each case to ``first`` then at once to ``second``: both see the same table state.

    CreateTable cases go last, one at a time, so a table one of them creates is not there
    for some earlier requests and not for others.
    """
    creates = [i for i, case in enumerate(cases) if (case.target or "").endswith(".CreateTable")]
    others = [i for i in range(len(cases)) if i not in set(creates)]
    pairs: dict[int, tuple[Answer, Answer]] = {}
    for indices, width in ((others, concurrency), (creates, 1)):
        answered = _send_all([first, second], [cases[i] for i in indices], width)
        for i, (a, b) in zip(indices, answered, strict=True):
            pairs[i] = (a, b)
    return [pairs[i] for i in range(len(cases))]


def _code(body: bytes) -> str:
    try:
        parsed = json.loads(body)
    except ValueError:
        return "<not JSON>"
    if not isinstance(parsed, dict):
        return "<not an object>"
    return str(parsed.get("__type", "")).rpartition("#")[2]
