"""With moto as engine: no 5xx for a request moto carried out, moto's failures in DynamoDB's
shape (never Python's text), and projections applied as DynamoDB applies them."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from loadgen.emulator.backends import MotoBackend
from loadgen.emulator.faults import backend_raised
from loadgen.emulator.server import Emulator, EmulatorServer
from loadgen.model.partitions import PartitionModel


@pytest.fixture(scope="module")
def ddb() -> Iterator[Any]:
    with EmulatorServer(Emulator(MotoBackend(), PartitionModel(scale=1.0))) as server:
        yield boto3.client(
            "dynamodb",
            endpoint_url=server.endpoint_url,
            region_name="us-east-1",
            config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
        )


@pytest.fixture(scope="module")
def table(ddb: Any) -> str:
    name = f"moto-{uuid.uuid4().hex[:8]}"
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    return name


def test_tag_and_untag_answer_200_and_apply(ddb: Any, table: str) -> None:
    arn = ddb.describe_table(TableName=table)["Table"]["TableArn"]
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "team", "Value": "heat"}])
    assert ddb.list_tags_of_resource(ResourceArn=arn)["Tags"] == [{"Key": "team", "Value": "heat"}]
    ddb.untag_resource(ResourceArn=arn, TagKeys=["team"])
    assert ddb.list_tags_of_resource(ResourceArn=arn)["Tags"] == []


def test_an_operation_moto_lacks_is_an_internal_error_in_dynamodb_s_words(ddb: Any) -> None:
    with pytest.raises(ClientError) as raised:
        ddb.list_global_tables()
    error = raised.value.response["Error"]
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500
    assert error["Code"] == "InternalServerError"
    assert "moto" in error["Message"] and "Error:" not in error["Message"]


def test_moto_failing_on_an_expression_dynamodb_accepts_is_an_internal_error(
    ddb: Any, table: str
) -> None:
    # DynamoDB takes a parenthesised operand; moto's reader raises on it.
    with pytest.raises(ClientError) as raised:
        ddb.update_item(
            TableName=table,
            Key={"pk": {"S": "a"}},
            UpdateExpression="SET a = (:v)",
            ExpressionAttributeValues={":v": {"N": "1"}},
        )
    error = raised.value.response["Error"]
    assert error["Code"] == "InternalServerError"
    assert "Error" not in error["Message"].replace("InternalServerError", "")


@pytest.mark.parametrize(
    ("error", "request_", "expected"),
    [
        (
            ValueError("moto could not read it"),
            {
                "UpdateExpression": "SET a = :v + :v + :v",
                "ExpressionAttributeValues": {":v": {"N": "1"}},
            },
            (
                400,
                "ValidationException",
                'Invalid UpdateExpression: Syntax error; token: "+", near: ":v + :v"',
            ),
        ),
        (
            AttributeError("'NoneType' object has no attribute 'value'"),
            {
                "TransactItems": [
                    {"ConditionCheck": {"ConditionExpression": "a IN ()", "TableName": "t"}}
                ]
            },
            (
                400,
                "ValidationException",
                'Invalid ConditionExpression: Syntax error; token: ")", near: "()"',
            ),
        ),
        (
            AttributeError("'NoneType' object has no attribute 'value'"),
            {"UpdateExpression": "SET a = :v", "ExpressionAttributeValues": {":v": {"N": "1"}}},
            (500, "InternalServerError", "Internal server error"),
        ),
        (KeyError("x"), None, (500, "InternalServerError", "Internal server error")),
    ],
)
def test_what_moto_raises_is_answered_as_dynamodb_would(
    error: Exception, request_: Any, expected: tuple[int, str, str]
) -> None:
    status, body = backend_raised(error, request_)
    parsed = json.loads(body)
    assert (status, parsed["__type"].rpartition("#")[2], parsed["message"]) == expected


def test_moto_answers_projections_as_dynamodb_does(ddb: Any, table: str) -> None:
    """moto ignores AttributesToGet and Select; the emulator applies them itself."""
    item = {"pk": {"S": "p"}, "a": {"S": "x"}, "b": {"L": [{"N": "1"}, {"N": "2"}]}}
    ddb.put_item(TableName=table, Item=item)
    key = {"pk": {"S": "p"}}
    got = ddb.get_item(TableName=table, Key=key, AttributesToGet=["a"])
    assert got["Item"] == {"a": {"S": "x"}}
    got = ddb.get_item(TableName=table, Key=key, ProjectionExpression="b[1]")
    assert got["Item"] == {"b": {"L": [{"N": "2"}]}}
    counted = ddb.query(
        TableName=table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
        Select="COUNT",
    )
    assert counted["Count"] == 1 and "Items" not in counted
