"""The emulator answers malformed requests as DynamoDB does: differential against DynamoDB Local.

Each request goes to DynamoDB Local directly and to the emulator in front of the same DynamoDB
Local; status, error code and message must agree. The emulator answers many of these itself
(its validation runs before any backend), so a difference is ours. Where DynamoDB Local words
a rule unlike DynamoDB (the 38-digit message) the test holds us to DynamoDB's documented text.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest

from loadgen.emulator.backends import UpstreamBackend
from loadgen.emulator.server import Emulator, EmulatorServer
from loadgen.model.partitions import PartitionModel
from tests.emulator.test_emulator_dynamodb_local import table_request

pytestmark = pytest.mark.dynamodb_local

TABLE = "conformance"
KEY = {"pk": {"S": "k"}}
HEADERS = {
    "Content-Type": "application/x-amz-json-1.0",
    "Authorization": "AWS4-HMAC-SHA256 Credential=local/20200101/us-east-1/dynamodb/"
    "aws4_request, SignedHeaders=host, Signature=0",
}
ONE = {":v": {"N": "1"}}


def _post(url: str, operation: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """One request on a connection of its own: the status and the parsed body."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        headers = {**HEADERS, "X-Amz-Target": f"DynamoDB_20120810.{operation}"}
        connection.request("POST", "/", json.dumps(body), headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        connection.close()


def send(url: str, operation: str, body: dict[str, Any]) -> tuple[int, str, str]:
    """Status, error code and message (empty for a success)."""
    status, parsed = _post(url, operation, body)
    if status == 200:
        return 200, "", ""
    message = parsed.get("message", parsed.get("Message", ""))
    return status, str(parsed.get("__type", "")).rpartition("#")[2], message


@pytest.fixture(scope="module")
def endpoints(dynamodb_local_endpoint: str) -> Iterator[tuple[str, str]]:
    """(DynamoDB Local, the emulator in front of it), with `TABLE` made on DynamoDB Local."""
    send(dynamodb_local_endpoint, "DeleteTable", {"TableName": TABLE})
    created = send(
        dynamodb_local_endpoint,
        "CreateTable",
        {
            "TableName": TABLE,
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "BillingMode": "PAY_PER_REQUEST",
        },
    )
    assert created[0] == 200, created
    model = PartitionModel(scale=1.0, account="000000000000")
    with EmulatorServer(Emulator(UpstreamBackend(dynamodb_local_endpoint), model)) as emulator:
        yield dynamodb_local_endpoint, emulator.endpoint_url


def put(value: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "PutItem", {"TableName": TABLE, "Item": {"pk": {"S": "put"}, "n": value}}


def nested(depth: int, tag: str) -> dict[str, Any]:
    value: dict[str, Any] = {"S": "x"}
    for _ in range(depth):
        value = {"M": {"a": value}} if tag == "M" else {"L": [value]}
    return value


def update(expression: str, condition: str | None = None, **members: Any) -> tuple[str, Any]:
    body = {"TableName": TABLE, "Key": KEY, "UpdateExpression": expression, **members}
    if condition is not None:
        body["ConditionExpression"] = condition
    return "UpdateItem", body


NUMBERS = [
    "1.0e100000000",  # an exponent Python's decimal context cannot normalise
    "1.0E+100000000",
    "-1e100000000",
    "1e-100000000",
    "1e2147483647",
    "1e2147483648",  # beyond Java's int: not a number at all
    "1e-2147483648",
    "1e999999999999",
    "1e126",
    "9.9999e125",
    "1e-130",
    "1e-131",
    "0e1000000000",
    "+1",
    ".5",
    "5.",
    "-0",
    "00012",
    "12345678901234567890123456789012345678",
    "0x10",
    "Infinity",
    "NaN",
    " 1",
    "1_0",
    "1e",
    "e5",
    "-",
    ".",
    "",
    "\u0661\u0662",  # Arabic-Indic digits: Java's reader takes them
]


@pytest.mark.parametrize("number", NUMBERS)
def test_numbers_answered_as_dynamodb_local_does(endpoints: tuple[str, str], number: str) -> None:
    direct, emulator = endpoints
    for operation, body in (
        put({"N": number}),
        put({"NS": ["7", number]}),
        ("GetItem", {"TableName": TABLE, "Key": {"pk": {"N": number}}}),
        update("SET n = :v", ExpressionAttributeValues={":v": {"N": number}}),
    ):
        assert send(emulator, operation, body) == send(direct, operation, body), body


@pytest.mark.parametrize("number", ["123456789012345678901234567890123456789", "1" * 40 + "e200"])
def test_more_than_38_digits_in_dynamodb_s_words(endpoints: tuple[str, str], number: str) -> None:
    # DynamoDB Local says "DynamoDB only supports precision up to 38 digits"; DynamoDB itself
    # answers as below (and checks the digits before the magnitude).
    _, emulator = endpoints
    assert send(emulator, *put({"N": number})) == (
        400,
        "ValidationException",
        "Attempting to store more than 38 significant digits in a Number",
    )


@pytest.mark.parametrize(
    "request_",
    [
        *(put(nested(depth, tag)) for depth in (31, 32, 40) for tag in ("M", "L")),
        ("GetItem", {"TableName": TABLE, "Key": {"pk": nested(33, "M")}}),
        update("SET n = :v", ExpressionAttributeValues={":v": nested(33, "L")}),
        update("SET n = :v", ExpressionAttributeValues={":v": {"SS": []}}),
        update("SET n = :v", ExpressionAttributeValues={":v": {}}),
        update("SET n = :v", ExpressionAttributeValues={":v": {"S": "a", "N": "1"}}),
        update("SET n = :v", ExpressionAttributeValues={":v": {"NULL": False}}),
        update("SET n = :v", ExpressionAttributeValues={":v": {"SS": ["a", "a"]}}),
        update("SET n = :v", ExpressionAttributeValues={":v": {"N": "1e999"}}),
    ],
    ids=lambda r: json.dumps(r[1])[:60],
)
def test_attribute_values_answered_as_dynamodb_local_does(
    endpoints: tuple[str, str], request_: tuple[str, dict[str, Any]]
) -> None:
    direct, emulator = endpoints
    assert send(emulator, *request_) == send(direct, *request_)


EXPRESSIONS = [
    # Syntax errors with placeholders that do not add up: DynamoDB parses first.
    ("ConditionExpression", "a IN ()", ONE),
    ("ConditionExpression", "a IN (:v, )", {":w": {"N": "1"}}),
    ("ConditionExpression", "a == :x", ONE),
    ("ConditionExpression", "(a = :v", {**ONE, ":w": {"N": "1"}}),
    ("ConditionExpression", "a[#xyz] = :v", ONE),
    ("ConditionExpression", "a = :v AND AND b = :v", {**ONE, ":w": {"N": "1"}}),
    ("ConditionExpression", "   ", ONE),
    ("ConditionExpression", "a = 'x'", ONE),
    ("ConditionExpression", "foo(a)", ONE),
    ("ConditionExpression", "contains(a)", ONE),
    ("ConditionExpression", "size(a)", ONE),
    ("ConditionExpression", "attribute_exists(size(a))", ONE),
    ("ConditionExpression", "if_not_exists(a, :v) = :v", {**ONE, ":w": {"N": "1"}}),
    ("ConditionExpression", "a = :v AND ((b = :v))", {**ONE, ":w": {"N": "1"}}),
    ("ConditionExpression", "(a = :v) = :v", {**ONE, ":w": {"N": "1"}}),
    ("ConditionExpression", "a = :v AND (b = :x OR c = :v)", ONE),
    ("ConditionExpression", "a IN (" + ", ".join([":v"] * 101) + ")", {**ONE, ":w": {"N": "1"}}),
    ("UpdateExpression", "SET a[#xyz] = :v", ONE),
    ("UpdateExpression", "SET", ONE),
    ("UpdateExpression", "FOO a", ONE),
    ("UpdateExpression", "ADD a", ONE),
    ("UpdateExpression", "SET a = :v + :v + :v", {**ONE, ":w": {"N": "1"}}),
    ("UpdateExpression", "SET a = :v + (:v - :v)", {**ONE, ":w": {"N": "1"}}),
    ("UpdateExpression", "SET a = if_not_exists(a)", ONE),
    ("UpdateExpression", "SET a = list_append(:x)", ONE),
    ("UpdateExpression", "SET a = foo(:x)", ONE),
    ("UpdateExpression", "SET a = size(:x)", ONE),
    ("UpdateExpression", "SET a = ((:x))", ONE),
    ("UpdateExpression", "SET a = :x SET b = :v", ONE),
    ("UpdateExpression", "SET name = :x", ONE),
    ("UpdateExpression", "SET a = :x, a = :v", ONE),
    ("UpdateExpression", "SET a._b = :x", ONE),
    ("UpdateExpression", "SET a[01] = :x", ONE),
    ("UpdateExpression", "SET a = :v, b = :x", ONE),
    ("UpdateExpression", "REMOVE a, b[1], c.d", ONE),
    ("ProjectionExpression", "a,", None),
    ("ProjectionExpression", "a[#z]", None),
    ("ProjectionExpression", "a, a.b", None),
    ("ProjectionExpression", "a, #x", None),
]


@pytest.mark.parametrize(("kind", "text", "values"), EXPRESSIONS, ids=lambda v: repr(v)[:40])
def test_expression_errors_in_dynamodb_s_order(
    endpoints: tuple[str, str], kind: str, text: str, values: dict[str, Any] | None
) -> None:
    direct, emulator = endpoints
    names = {"#unused": "u"} if kind == "ProjectionExpression" else None
    body: dict[str, Any] = {"TableName": TABLE, "Key": KEY, kind: text}
    if kind == "ProjectionExpression":
        operation = "GetItem"
    elif kind == "UpdateExpression":
        operation = "UpdateItem"
    else:
        operation, body = "UpdateItem", {**body, "UpdateExpression": "SET u = :v"}
    if values is not None:
        body["ExpressionAttributeValues"] = values
    if names is not None:
        body["ExpressionAttributeNames"] = names
    theirs = send(direct, operation, body)
    assert theirs[0] == 400, theirs  # each case is one DynamoDB rejects
    assert send(emulator, operation, body) == theirs


def test_expressions_read_in_dynamodb_s_order(endpoints: tuple[str, str]) -> None:
    """A Query's filter, then its projection, then its key condition; an update before its
    condition: each parsed, then its placeholders checked, before the next."""
    direct, emulator = endpoints
    value = {":v": {"S": "1"}}
    requests = [
        ("Query", {"KeyConditionExpression": "pk = :v AND", "FilterExpression": "a = :x"}),
        ("Query", {"KeyConditionExpression": "pk = :x", "ProjectionExpression": "a,"}),
        ("Query", {"KeyConditionExpression": "pk = :x", "FilterExpression": "a IN ()"}),
        ("UpdateItem", {"UpdateExpression": "SET a = :x", "ConditionExpression": "a IN ()"}),
        ("UpdateItem", {"UpdateExpression": "SET a = :v", "ConditionExpression": "b = :x AND"}),
        ("UpdateItem", {"UpdateExpression": "SET a = :v", "ExpressionAttributeValues": {}}),
        ("UpdateItem", {"UpdateExpression": "SET a = :v", "ExpressionAttributeNames": {}}),
        ("GetItem", {"ProjectionExpression": "a", "ExpressionAttributeNames": {}}),
    ]
    for operation, members in requests:
        body = {"TableName": TABLE, "ExpressionAttributeValues": value, **members}
        if operation != "Query":
            body["Key"] = KEY
        if operation == "GetItem":
            del body["ExpressionAttributeValues"]
        theirs = send(direct, operation, body)
        assert theirs[0] == 400, theirs
        assert send(emulator, operation, body) == theirs


DEEP = ".".join(["a"] * 33)  # a document path of 33 levels: one past DynamoDB's 32
HUGE = "[99999999999999]"  # a list position no Java int holds
LIMITS = [
    # An attribute name given empty through ExpressionAttributeNames: refused before any
    # expression is read, whether used or not.
    ("GetItem", {"ProjectionExpression": "#a", "ExpressionAttributeNames": {"#a": ""}}),
    (
        "GetItem",
        {"ProjectionExpression": "#a.#b", "ExpressionAttributeNames": {"#a": "y", "#b": ""}},
    ),
    ("GetItem", {"ProjectionExpression": "b", "ExpressionAttributeNames": {"#a": ""}}),
    ("GetItem", {"ProjectionExpression": "a" * 4097, "ExpressionAttributeNames": {"#a": ""}}),
    # An expression longer than 4,096 characters, before its syntax and its placeholders.
    ("GetItem", {"ProjectionExpression": "a" * 4097}),
    ("GetItem", {"ProjectionExpression": ", ".join(f"attribute{i}" for i in range(400))}),
    ("GetItem", {"ProjectionExpression": "a" * 4090 + ",,,,,,,"}),
    ("GetItem", {"ProjectionExpression": "a" * 4097, "ExpressionAttributeNames": {"#b": "x"}}),
    update("SET a = :v", "a" * 4090 + " = :v", ExpressionAttributeValues=ONE),
    # A list position too large to be an integer: after the syntax, in path order with
    # reserved words, before a clause given twice, overlaps and undefined placeholders.
    ("GetItem", {"ProjectionExpression": f"a{HUGE}"}),
    ("GetItem", {"ProjectionExpression": "a[2147483648].b"}),
    ("GetItem", {"ProjectionExpression": f"a{HUGE}, #x"}),
    ("GetItem", {"ProjectionExpression": f"a{HUGE}" + "[0]" * 40}),
    ("GetItem", {"ProjectionExpression": f"a{HUGE}, a{HUGE}"}),
    ("GetItem", {"ProjectionExpression": f"name{HUGE}"}),
    update(f"SET a{HUGE} = :v SET b = :v", ExpressionAttributeValues=ONE),
    update("SET a = :v", f"b = :x AND a{HUGE} = :v", ExpressionAttributeValues=ONE),
    # A path nested past 32 levels: after undefined placeholders, operand by operand.
    ("GetItem", {"ProjectionExpression": DEEP}),
    ("GetItem", {"ProjectionExpression": "a" + "[0]" * 32}),
    ("GetItem", {"ProjectionExpression": DEEP + "[0]", "ExpressionAttributeNames": {"#b": "x"}}),
    ("GetItem", {"ProjectionExpression": f"{DEEP}, #x"}),
    ("GetItem", {"ProjectionExpression": f"{DEEP}.name"}),
    update("SET a = :v", f"contains({DEEP}, :v, :v)", ExpressionAttributeValues=ONE),
    update("SET a = :v", f"attribute_exists(:v) AND {DEEP} = :v", ExpressionAttributeValues=ONE),
    update(
        "SET a = :v",
        f"{DEEP} = :v AND a IN ({', '.join([':v'] * 101)})",
        ExpressionAttributeValues=ONE,
    ),
    update(f"SET {DEEP} = :v", ExpressionAttributeValues=ONE),
]


@pytest.mark.parametrize("request_", LIMITS, ids=lambda r: json.dumps(r[1])[:60])
def test_expressions_past_dynamodb_s_limits_answered_as_dynamodb_local_does(
    endpoints: tuple[str, str], request_: tuple[str, dict[str, Any]]
) -> None:
    """Empty names, expressions over 4 KB, list positions past an int and paths deeper than 32
    levels: each refused (the emulator used to read a projection of them itself and answer
    200), in DynamoDB's order among the other checks."""
    direct, emulator = endpoints
    operation, members = request_
    body = {"TableName": TABLE, "Key": KEY, **members}
    theirs = send(direct, operation, body)
    assert theirs[0] == 400, theirs
    assert send(emulator, operation, body) == theirs


@pytest.mark.parametrize("padding", [2_000, 17_000, 40_000])
def test_large_headers_answered_as_dynamodb_local_does(
    endpoints: tuple[str, str], padding: int
) -> None:
    """DynamoDB Local refuses headers over 8 KB with 431, which SDKs do not retry; the
    emulator passes that on (it answered 500, which SDKs retry, until it knew 431)."""
    statuses = []
    for url in endpoints:
        parts = urllib.parse.urlsplit(url)
        head = [
            "POST / HTTP/1.1",
            "Host: localhost",
            "X-Amz-Target: DynamoDB_20120810.ListTables",
            *(f"{name}: {value}" for name, value in HEADERS.items()),
            "X-Padding: " + "p" * padding,
            "Content-Length: 2",
        ]
        with socket.create_connection((parts.hostname, parts.port), timeout=30) as connection:
            # A server may answer and close before it has read all the headers.
            with contextlib.suppress(OSError):
                connection.sendall(("\r\n".join(head) + "\r\n\r\n{}").encode())
            statuses.append(int(connection.recv(64).split()[1]))
    assert statuses[0] == statuses[1] == (200 if padding < 8_000 else 431)


# --- answers DynamoDB words itself -------------------------------------------------------

LONG_CONDITION = "a" * 4093 + " = :v"  # 4,098 characters: two past the limit
NESTED_CONDITION = "a<b " + "and (a<b " * 20_000 + ")" * 20_000  # 200,004: too long to parse
TWO_BYTES = "\u00e9" * 4093 + " = :v"  # as many characters, twice the bytes
REFUSED = [
    # A too-long condition, filter or key condition: the message ends with the expression's
    # size in characters; a projection's or an update's does not (LIMITS above).
    update("SET z = :v", NESTED_CONDITION, ExpressionAttributeValues=ONE),
    update("SET z = :v", LONG_CONDITION, ExpressionAttributeValues=ONE),
    update("SET z = :v", TWO_BYTES, ExpressionAttributeValues=ONE),
    ("PutItem", {"TableName": TABLE, "Item": KEY, "ConditionExpression": LONG_CONDITION,
                 "ExpressionAttributeValues": ONE}),
    ("DeleteItem", {"TableName": TABLE, "Key": KEY, "ConditionExpression": LONG_CONDITION,
                    "ExpressionAttributeValues": ONE}),
    ("Scan", {"TableName": TABLE, "FilterExpression": LONG_CONDITION,
              "ExpressionAttributeValues": ONE}),
    ("Query", {"TableName": TABLE, "KeyConditionExpression": "pk = :v AND " + LONG_CONDITION,
               "ExpressionAttributeValues": ONE}),
    ("TransactWriteItems", {"TransactItems": [{"ConditionCheck": {
        "TableName": TABLE, "Key": KEY, "ConditionExpression": LONG_CONDITION,
        "ExpressionAttributeValues": ONE}}]}),
    # An empty name in AttributesToGet, wherever a read takes one.
    ("GetItem", {"TableName": TABLE, "Key": KEY, "AttributesToGet": [""]}),
    ("GetItem", {"TableName": TABLE, "Key": KEY, "AttributesToGet": ["a", ""]}),
    ("Scan", {"TableName": TABLE, "AttributesToGet": [""]}),
    ("Query", {"TableName": TABLE, "AttributesToGet": ["a", ""], "KeyConditions": {
        "pk": {"AttributeValueList": [{"S": "k"}], "ComparisonOperator": "EQ"}}}),
    ("BatchGetItem", {"RequestItems": {TABLE: {"Keys": [KEY], "AttributesToGet": [""]}}}),
    # A table without a key schema or attribute definitions (botocore's model no longer
    # requires them from 1.44: a table made from a global table's source needs neither).
    ("CreateTable", {"TableName": "no-key-schema", "BillingMode": "PAY_PER_REQUEST"}),
    ("CreateTable", {"TableName": "no-key-schema", "BillingMode": "PAY_PER_REQUEST",
                     "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}),
    ("CreateTable", {"TableName": "no-key-schema", "BillingMode": "PAY_PER_REQUEST",
                     "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}),
]  # fmt: skip


@pytest.mark.parametrize("request_", REFUSED, ids=lambda r: f"{r[0]}-{json.dumps(r[1])[:50]}")
def test_refusals_in_dynamodb_local_s_words(
    endpoints: tuple[str, str], request_: tuple[str, dict[str, Any]]
) -> None:
    direct, emulator = endpoints
    theirs = send(direct, *request_)
    assert theirs[0] == 400 and theirs[1] == "ValidationException", theirs
    assert send(emulator, *request_) == theirs


def test_a_too_long_condition_says_its_size(endpoints: tuple[str, str]) -> None:
    _, emulator = endpoints
    assert send(emulator, *REFUSED[0]) == (
        400,
        "ValidationException",
        "Invalid ConditionExpression: Expression size has exceeded the maximum allowed size; "
        "expression size: 200004",
    )


# --- reads priced by the whole items read, whatever the projection ------------------------

READS = "conformance_reads"
STORED = [
    {
        "pk": {"S": f"p{i % 2}"},
        "sk": {"N": str(i)},
        "g": {"S": "g"},
        "big": {"S": "x" * (1500 * i)},  # whole items of 0 to 9 KB: projections cost the same
        "doc": {
            "M": {
                "a": {"L": [{"S": "zero"}, {"M": {"b": {"N": str(i)}}}, {"S": "two"}]},
                "c": {"S": "sea"},
            }
        },
        "name": {"S": f"n{i}"},
    }
    for i in range(7)
]
PROJECTIONS: list[dict[str, Any]] = [
    {},
    {"ProjectionExpression": "doc.c"},
    {"ProjectionExpression": "doc.a[2], doc.a[0], #n", "ExpressionAttributeNames": {"#n": "name"}},
    {"ProjectionExpression": "doc.a[1].b, sk, nothing, doc.a[7]"},
    {"ProjectionExpression": "nothing"},
    {"AttributesToGet": ["doc", "nothing"]},
    {"AttributesToGet": ["pk"]},
]


@pytest.fixture(scope="module")
def reads(endpoints: tuple[str, str]) -> tuple[str, str]:
    direct, emulator = endpoints
    send(direct, "DeleteTable", {"TableName": READS})
    created = send(emulator, "CreateTable", table_request(READS, gsi=True, provisioned=False))
    assert created[0] == 200, created
    for item in STORED:
        assert send(direct, "PutItem", {"TableName": READS, "Item": item})[0] == 200
    return endpoints


def answer(url: str, operation: str, body: dict[str, Any]) -> dict[str, Any]:
    status, parsed = _post(url, operation, body)
    assert status == 200, parsed
    return parsed


def read_requests(projection: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    key = {"pk": {"S": "p0"}, "sk": {"N": "6"}}
    table = {"TableName": READS}
    query = {
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": {"S": "p1"}},
    }
    if "AttributesToGet" in projection:  # not with expressions: the legacy key condition
        query = {
            "KeyConditions": {
                "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "p1"}]}
            }
        }
    index_query = {
        "IndexName": "by_g",
        "KeyConditionExpression": "g = :g",
        "ExpressionAttributeValues": {":g": {"S": "g"}},
    }
    requests = [
        ("GetItem", {**table, "Key": key, "ConsistentRead": True, **projection}),
        ("Query", {**table, **query, **projection}),
        ("Scan", {**table, "Limit": 5, **projection}),
        ("BatchGetItem", {"RequestItems": {READS: {"Keys": [key], **projection}}}),
        ("TransactGetItems", {"TransactItems": [{"Get": {**table, "Key": key, **projection}}]}),
    ]
    if "AttributesToGet" not in projection:
        requests.append(("Query", {**table, **index_query, **projection}))
    if not projection:
        requests += [
            ("Query", {**table, **query, "Select": "COUNT"}),
            ("Scan", {**table, "Select": "COUNT", "Limit": 3}),
            ("Query", {**table, **index_query, "Select": "COUNT"}),
        ]
    elif "ExpressionAttributeNames" not in projection:
        requests.append(("Scan", {**table, "Select": "SPECIFIC_ATTRIBUTES", **projection}))
    return requests


@pytest.mark.parametrize("projection", PROJECTIONS, ids=lambda p: json.dumps(p)[:50])
def test_every_read_with_every_projection_priced_by_whole_items(
    reads: tuple[str, str], projection: dict[str, Any]
) -> None:
    """The same answer as DynamoDB Local, and the same ConsumedCapacity: the whole items'."""
    direct, emulator = reads
    for operation, body in read_requests(projection):
        body = {**body, "ReturnConsumedCapacity": "TOTAL"}
        ours, theirs = answer(emulator, operation, body), answer(direct, operation, body)
        if operation.startswith("Transact"):
            # Ours also splits a transaction's units into read and write; DynamoDB Local
            # gives only the totals.
            for consumed in ours["ConsumedCapacity"]:
                consumed.pop("ReadCapacityUnits", None)
        assert ours == theirs, (operation, body)
