"""DynamoDB's hard limits on one request and one item: one place for every door.

The emulator refuses a request past them (`loadgen.emulator.validation`) and a design file is
checked against them before anything runs (`loadgen.design.limits`). Sizes are counted as
`loadgen.model.itemsize` counts an item; a KB is 1,024 bytes and an MB 1,048,576, as the
facts the project models count them.
"""

from __future__ import annotations

__all__ = [
    "MAX_BATCH_GET_BYTES",
    "MAX_BATCH_GET_KEYS",
    "MAX_BATCH_WRITE_REQUESTS",
    "MAX_ITEM_BYTES",
    "MAX_NESTING_LEVELS",
    "MAX_TRANSACTION_ACTIONS",
    "MAX_TRANSACTION_BYTES",
    "MOST_IN_ONE_REQUEST",
    "too_many",
]

# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html
MAX_ITEM_BYTES = 400 * 1024
"""Largest item, attribute names and values together."""
MAX_NESTING_LEVELS = 32
"""Deepest nesting of lists and maps in an attribute value."""
MAX_BATCH_GET_KEYS = 100
"""Keys one BatchGetItem may ask for, over all its tables."""
MAX_BATCH_WRITE_REQUESTS = 25
"""Put and delete requests in one BatchWriteItem, over all its tables."""
MAX_TRANSACTION_ACTIONS = 100
"""Actions in one TransactWriteItems or TransactGetItems."""
# https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html
MAX_TRANSACTION_BYTES = 4 * 1024 * 1024
"""The aggregate size of the items in one transaction (TransactWriteItems, TransactGetItems):
past it DynamoDB refuses the transaction."""
# https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html
MAX_BATCH_GET_BYTES = 16 * 1024 * 1024
"""Data one BatchGetItem returns: past it DynamoDB returns a partial result and the rest as
``UnprocessedKeys`` (no error). A BatchWriteItem may carry 16 MB too, which its 25 items of
at most 400 KB never reach."""

MOST_IN_ONE_REQUEST = {
    "BatchGetItem": MAX_BATCH_GET_KEYS,
    "BatchWriteItem": MAX_BATCH_WRITE_REQUESTS,
    "TransactGetItems": MAX_TRANSACTION_ACTIONS,
    "TransactWriteItems": MAX_TRANSACTION_ACTIONS,
}
"""Keys, items or actions one request of each operation may carry."""
_WHAT = {
    "BatchGetItem": "keys",
    "BatchWriteItem": "put and delete requests",
    "TransactGetItems": "actions",
    "TransactWriteItems": "actions",
}


def too_many(operation: str, count: int) -> str | None:
    """Why one ``operation`` request of ``count`` keys, items or actions is refused, or None.

    >>> too_many("TransactWriteItems", 101)
    'a TransactWriteItems takes at most 100 actions (101 given)'
    """
    most = MOST_IN_ONE_REQUEST.get(operation)
    if most is None or count <= most:
        return None
    return f"a {operation} takes at most {most} {_WHAT[operation]} ({count:,} given)"
