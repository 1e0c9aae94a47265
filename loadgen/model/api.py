"""DynamoDB's API as the project tests it: the service model (operations, the members each
takes, which are required, their types, lengths, ranges and enums), shipped in the package.

The model is botocore's ``dynamodb`` ``service-2.json`` at `API_SOURCE`, the version
constraints.txt pins, copied byte for byte. The emulator's validation and a design file's
check read it here rather than from the botocore a user has installed: botocore's model moves
between releases (1.44 no longer lists CreateTable's ``KeySchema`` and
``AttributeDefinitions`` as required, though DynamoDB still refuses a table without them), and
what DynamoDB requires must not move with it. ``tests/model/test_api.py`` holds the copy to
the pinned botocore's.

    >>> "KeySchema" in shape("CreateTableInput")["required"]
    True
"""

from __future__ import annotations

import gzip
import json
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["API_FILE", "API_SOURCE", "api_model", "operations", "shape"]

API_SOURCE = "botocore 1.40.61"
"""Where the shipped model comes from: the botocore of the tested set (constraints.txt)."""

API_FILE = Path(__file__).with_name("dynamodb-2012-08-10.json.gz")
"""The shipped model, botocore's ``data/dynamodb/2012-08-10/service-2.json.gz``."""


@cache
def api_model() -> dict[str, Any]:
    """The service model as JSON: ``{"metadata": ..., "operations": ..., "shapes": ...}``.
    Read with the standard library only: a design is read before a run imports Locust, which
    patches ``ssl`` and must do so before anything imports it (botocore does)."""
    with gzip.open(API_FILE, "rt", encoding="utf-8") as text:
        loaded: dict[str, Any] = json.load(text)
    return loaded


def operations() -> frozenset[str]:
    """The operations DynamoDB has, by the shipped model (``PutItem``, ...)."""
    return frozenset(api_model()["operations"])


def shape(name: str) -> dict[str, Any]:
    """One shape of the model by name; a `KeyError` for a name it does not have."""
    found: dict[str, Any] = api_model()["shapes"][name]
    return found
