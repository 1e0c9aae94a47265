"""Item sizes and key values, as DynamoDB counts them.

The size of an item decides what reading or writing it costs (see `loadgen.model.capacity`); the
canonical form of a key value decides which partition it lands on (see `loadgen.model.hashing`).
Checked against DynamoDB Local (AWS's own engine), digit for digit on numbers.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from decimal import Context, Decimal, InvalidOperation
from typing import Any

from loadgen.errors import ConfigError

__all__ = ["Item", "KeyValue", "SizedItem", "item_size", "key_value", "value_size"]

Item = Mapping[str, Any]
"""An item in DynamoDB JSON: attribute name to ``{"S": ...}``, ``{"N": ...}``, ..."""
KeyValue = str | bytes
"""A partition-key value as hashed: S as str, N as canonical decimal text, B as raw bytes."""

# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html
DOCUMENT_OVERHEAD_BYTES = 3
"""A List or Map costs 3 bytes whatever it holds..."""
ELEMENT_OVERHEAD_BYTES = 1
"""...plus 1 byte per element."""

# Numbers have at most 38 significant digits; 28 (the default precision) would round them.
_DECIMALS = Context(prec=50)


def item_size(item: Item) -> int:
    """Bytes DynamoDB counts for an item: UTF-8 attribute names plus their values."""
    if type(item) is SizedItem:
        return item.size
    return sum(len(name.encode("utf-8")) + value_size(value) for name, value in item.items())


class SizedItem(dict[str, Any]):
    """An item whose size is counted once, for `item_size` to answer from: the emulator's
    stored items, sized at every request that touches them (an item of a thousand counters
    takes a thousand values to size). Never changed in place; ``derived`` sizes a copy changed
    in a few attributes by those alone.

        >>> stored = SizedItem({"pk": {"S": "a"}, "n": {"N": "1"}})
        >>> stored.size, SizedItem.derived(stored, {**stored, "n": {"N": "123"}}).size
        (6, 7)
    """

    __slots__ = ("size",)

    def __init__(self, item: Item, size: int | None = None) -> None:
        super().__init__(item)
        self.size: int = item_size(item) if size is None else size

    @classmethod
    def derived(cls, before: SizedItem, after: Item) -> SizedItem:
        """``after`` sized from ``before``: the attributes whose values are not ``before``'s
        own objects (a copy shares those it did not change) are counted again."""
        size = before.size
        for name, value in after.items():
            old = before.get(name)
            if old is None:
                size += len(name.encode("utf-8")) + value_size(value)
            elif old is not value:
                size += value_size(value) - value_size(old)
        for name, old in before.items():
            if name not in after:
                size -= len(name.encode("utf-8")) + value_size(old)
        return cls(after, size)


def value_size(value: Mapping[str, Any]) -> int:
    """Bytes DynamoDB counts for one attribute value, without its name.

    S: UTF-8 bytes. N: 1 byte plus 1 per pair of significant digits, pairs aligned on the
    decimal point, plus 1 if negative. B: raw bytes (the JSON carries base64). BOOL, NULL: 1.
    L, M: 3 bytes plus, per element, 1 byte and its size (and a map key's UTF-8 bytes).
    SS, NS, BS: the sum of their members.
    """
    if len(value) != 1:
        raise ConfigError(f"an attribute value has exactly one type, got {value!r}")
    ((tag, v),) = value.items()
    if tag == "S":
        return len(v.encode("utf-8"))
    if tag == "N":
        return _number_size(v)
    if tag == "B":
        return len(_binary(v))
    if tag in ("BOOL", "NULL"):
        return 1
    if tag == "SS":
        return sum(len(s.encode("utf-8")) for s in v)
    if tag == "NS":
        return sum(_number_size(n) for n in v)
    if tag == "BS":
        return sum(len(_binary(b)) for b in v)
    if tag == "L":
        overhead = DOCUMENT_OVERHEAD_BYTES + ELEMENT_OVERHEAD_BYTES * len(v)
        return overhead + sum(value_size(e) for e in v)
    if tag == "M":
        overhead = DOCUMENT_OVERHEAD_BYTES + ELEMENT_OVERHEAD_BYTES * len(v)
        return overhead + item_size(v)
    raise ConfigError(f"unknown attribute value type {tag!r}")


_NUMBER_SIZES: dict[str, int] = {}
"""Sizes of numbers seen, by their text: an item of a thousand counters is sized at every
write to it, and its numbers' texts repeat."""
_NUMBER_SIZES_KEPT = 1 << 16


def _number_size(text: str) -> int:
    if type(text) is not str:
        return _count_number_size(text)
    size = _NUMBER_SIZES.get(text)
    if size is None:
        size = _count_number_size(text)
        if len(_NUMBER_SIZES) >= _NUMBER_SIZES_KEPT:
            _NUMBER_SIZES.clear()
        _NUMBER_SIZES[text] = size
    return size


def _count_number_size(text: str) -> int:
    # DynamoDB stores a number as a base-100 mantissa (two decimal digits a byte, aligned on
    # the decimal point) after an exponent byte; negatives carry one more byte. So "120" is
    # 1|20 (3 bytes) while "1200" is 12|00 (2 bytes). DynamoDB Local agrees digit for digit.
    try:
        sign, digits, exponent = Decimal(text).as_tuple()
    except (InvalidOperation, TypeError) as exc:
        raise ConfigError(f"not a DynamoDB number: {text!r}") from exc
    if not isinstance(exponent, int):
        raise ConfigError(f"not a DynamoDB number: {text!r}")
    significant = list(digits)
    while significant and significant[-1] == 0:
        significant.pop()
        exponent += 1
    while significant and significant[0] == 0:
        significant.pop(0)
    if not significant:
        return 1
    lowest, highest = exponent, exponent + len(significant) - 1
    pairs = highest // 2 - lowest // 2 + 1
    return 1 + pairs + sign


def _binary(value: str | bytes) -> bytes:
    if isinstance(value, bytes):
        return value
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ConfigError(f"binary value is not base64: {value!r}") from exc


def key_value(value: Mapping[str, Any]) -> KeyValue:
    """The hash input for a key attribute: S as str, N as canonical decimal text, B as bytes.

    Numbers are canonical (``"0042.10"`` and ``"42.1"`` are one key to DynamoDB and hash alike
    here): the heat exporter should hash through this function too.
    """
    ((tag, v),) = value.items()
    if tag == "S":
        return str(v)
    if tag == "B":
        return _binary(v)
    if tag == "N":
        number = _DECIMALS.normalize(Decimal(v))
        return "0" if number.is_zero() else format(number, "f")
    raise ConfigError(f"a key attribute is S, N or B, got {value!r}")
