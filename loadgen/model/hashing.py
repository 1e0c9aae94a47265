"""The one partition-key hash of the project.

DynamoDB hashes the partition key with an internal, unpublished function. Any well-mixed hash
serves a model; we use MD5 of the key's bytes, as the dynalite emulator does, and read the first
8 bytes as an unsigned big-endian integer. The partition model places partitions on equal
ranges of this 64-bit space, and the heat exporter buckets keys by the same value, so a heat
bucket and a modeled partition cover the same keys.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable

from loadgen.errors import ConfigError

__all__ = [
    "HASH_SPACE",
    "bucket_of",
    "key_bytes",
    "key_hasher",
    "partition_hash",
    "partition_hashes",
]

HASH_SPACE = 1 << 64
"""Size of the hash space: partition hashes lie in ``[0, HASH_SPACE)``."""


def key_bytes(value: str | bytes | int | float) -> bytes:
    """The bytes hashed for a partition-key value (S as UTF-8, N as its decimal text, B raw)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return str(value).encode("ascii")


def partition_hash(value: str | bytes | int | float) -> int:
    """64-bit hash of a partition-key value."""
    return _hash(key_bytes(value))


def partition_hashes(texts: Iterable[str]) -> list[int]:
    """`partition_hash` of each of ``texts`` (string values): a key list's hashes, without
    the type checks of a call per key.

    >>> partition_hashes(["USER#1", "7"]) == [partition_hash("USER#1"), partition_hash("7")]
    True
    """
    return [_hash(text.encode("utf-8")) for text in texts]


def _hash(data: bytes) -> int:
    """The first 8 bytes of MD5, unsigned big-endian: the rule both of the above follow."""
    return int.from_bytes(hashlib.md5(data, usedforsecurity=False).digest()[:8], "big")


def bucket_of(value: str | bytes | int | float, buckets: int) -> int:
    """Index in ``[0, buckets)`` of the equal slice of the hash space holding ``value``."""
    return (partition_hash(value) * buckets) >> 64


def key_hasher(salt: str | bytes) -> Callable[[str | bytes], str]:
    """A function mapping a key to 16 hex digits of keyed BLAKE2b: stable for one salt.

    The heat exporter's ``--hash-keys`` and the trace's (`loadgen.traffic.trace`) use it, so
    one salt gives one name to a key in metrics, results and traces.

    >>> key_hasher("s3cret")("USER#42") == key_hasher("s3cret")("USER#42")
    True
    """
    secret = salt.encode("utf-8") if isinstance(salt, str) else salt
    if not secret:
        raise ConfigError("--hash-keys (hash_keys) needs a non-empty salt (got an empty one)")
    # BLAKE2b takes keys of up to 64 bytes: derive one from a salt of any length.
    secret = hashlib.blake2b(secret, digest_size=64).digest()

    def hashed(key: str | bytes) -> str:
        return hashlib.blake2b(key_bytes(key), key=secret, digest_size=8).hexdigest()

    return hashed
