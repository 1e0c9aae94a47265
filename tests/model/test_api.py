"""The service model shipped in the package is the tested botocore's, byte for byte, and the
emulator's rules come from it whatever botocore is installed."""

from __future__ import annotations

import gzip
import importlib.metadata
import re
from pathlib import Path

import pytest

from loadgen.emulator.validation import VALIDATION, validate
from loadgen.emulator.wire import WireError
from loadgen.model import api

ROOT = Path(__file__).resolve().parents[2]


def _pinned(name: str) -> str:
    text = (ROOT / "constraints.txt").read_text()
    found = re.search(rf"^{name}==(\S+)$", text, re.MULTILINE)
    assert found is not None, name
    return found.group(1)


def test_the_shipped_model_is_the_tested_set_s() -> None:
    assert f"botocore {_pinned('botocore')}" == api.API_SOURCE


def test_the_shipped_model_is_botocore_s_file_byte_for_byte() -> None:
    installed = importlib.metadata.version("botocore")
    if installed != _pinned("botocore"):
        pytest.skip(f"botocore {installed} is not the tested set's: its model may differ")
    import botocore

    theirs = Path(botocore.__file__).parent / "data/dynamodb/2012-08-10/service-2.json.gz"
    assert gzip.decompress(api.API_FILE.read_bytes()) == gzip.decompress(theirs.read_bytes())


@pytest.mark.parametrize(
    ("missing", "message"),
    [
        (
            "KeySchema",
            "No defined key schema.  A key schema containing at least a hash key must be defined "
            "for all tables",
        ),
        ("AttributeDefinitions", "No Attribute Schema Defined"),
    ],
)
def test_create_table_without_its_key_is_refused_whatever_botocore_says(
    missing: str, message: str
) -> None:
    request = {
        "TableName": "abc",
        "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    }
    del request[missing]
    with pytest.raises(WireError) as refused:
        validate("CreateTable", request)
    assert (refused.value.status, refused.value.type, refused.value.message) == (
        400,
        VALIDATION,
        message,
    )


def test_operations_are_the_shipped_model_s() -> None:
    assert {"PutItem", "CreateTable", "TransactWriteItems"} <= api.operations()
    assert api.shape("CreateTableInput")["required"]  # read from the file, not botocore
