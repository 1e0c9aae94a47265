"""Replaying an UpdateItem on a known item, to learn what it leaves stored.

A write is priced by the item before and after it (`loadgen.emulator.pricing` for a request,
`loadgen.simulate.demand` for a pattern); for an UpdateItem the request names only the changes.
`apply_update` applies them to the item as last seen: SET, REMOVE, ADD and DELETE of an
``UpdateExpression``, or legacy ``AttributeUpdates``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation, localcontext
from typing import Any

from loadgen.model.capacity import Item
from loadgen.model.itemsize import SizedItem

__all__ = ["apply_update", "apply_update_exactly"]


class _Unsupported(Exception):
    """An update the shadow cannot follow (nested paths, unknown functions, bad types)."""


_TOKENS = re.compile(r"#\w+|:\w+|[A-Za-z_]\w*|\[\d+\]|\.|[=+\-,()]")
_CLAUSES = ("SET", "REMOVE", "ADD", "DELETE")
_SETS = ("SS", "NS", "BS")


def apply_update(
    before: Item | None, key: Mapping[str, Any], request: Mapping[str, Any]
) -> Item | None:
    """The item an UpdateItem request leaves, or None when the update is beyond this reader.

    Follows ``UpdateExpression`` (SET with ``+``, ``-``, ``if_not_exists`` and
    ``list_append``; REMOVE; ADD; DELETE) and legacy ``AttributeUpdates`` on top-level
    attributes, which covers counters, status changes and GSI key moves. Nested paths return
    None, and the caller prices the write as an estimate.

        >>> apply_update(None, {"pk": {"S": "a"}}, {
        ...     "UpdateExpression": "ADD #n :one",
        ...     "ExpressionAttributeNames": {"#n": "n"},
        ...     "ExpressionAttributeValues": {":one": {"N": "1"}},
        ... })
        {'pk': {'S': 'a'}, 'n': {'N': '1'}}
    """
    item: dict[str, Any] = dict(before) if before is not None else dict(key)
    try:
        if "UpdateExpression" in request:
            _Expression(request).apply(item)
        for name, update in (request.get("AttributeUpdates") or {}).items():
            _legacy_update(item, name, update)
    except (_Unsupported, KeyError, TypeError, ValueError, InvalidOperation, IndexError):
        return None
    if isinstance(before, SizedItem):
        return SizedItem.derived(before, item)
    return item


def apply_update_exactly(
    before: Item | None,
    key: Mapping[str, Any],
    request: Mapping[str, Any],
    reserved: frozenset[str],
) -> tuple[Item, frozenset[str]] | None:
    """The item an UpdateItem leaves and the attributes it names, where DynamoDB would accept it.

    A stricter reading than `apply_update`, for an engine that carries the update out: None
    unless the request is an ``UpdateExpression`` of SET (values, ``+``, ``-``,
    ``if_not_exists``, ``list_append``), REMOVE and ADD of numbers on top-level attributes,
    each clause once, no attribute named twice, no bare name among ``reserved`` (upper case),
    and every number it computes within DynamoDB's 38 digits. Everything else (conditions,
    sets, nested paths, anything DynamoDB would reject) is None: the engine's own path decides.
    """
    if "AttributeUpdates" in request or not isinstance(request.get("UpdateExpression"), str):
        return None
    item: dict[str, Any] = dict(before) if before is not None else dict(key)
    try:
        with localcontext(prec=80):  # wide enough that a sum of two 38-digit numbers is exact
            expression = _Expression(request, reserved=reserved)
            expression.apply(item)
            # Every number the update leaves (sums included) within DynamoDB's 38 digits.
            if not all(_exact(item[n]) for n in expression.named if "N" in item.get(n, ())):
                return None
    except (_Unsupported, KeyError, TypeError, ValueError, InvalidOperation, IndexError):
        return None
    return item, frozenset(expression.named)


@functools.lru_cache(maxsize=256)
def _tokens(text: str) -> tuple[str, ...]:
    """The tokens of an UpdateExpression, read once per text (an update replayed per execution
    repeats its text)."""
    tokens = tuple(_TOKENS.findall(text))
    # Anything the token pattern skipped (other than spaces) is syntax we do not follow.
    if "".join(tokens) != "".join(text.split()):
        raise _Unsupported(text)
    if "." in tokens or any(t.startswith("[") for t in tokens):
        raise _Unsupported("nested path")
    return tokens


class _Expression:
    """A recursive-descent reader of one UpdateExpression over top-level attributes.

    With ``reserved`` given it reads strictly (`apply_update_exactly`): anything DynamoDB
    might reject, or this reader might apply differently, is `_Unsupported`.
    """

    def __init__(self, request: Mapping[str, Any], reserved: frozenset[str] | None = None) -> None:
        self.strict = reserved is not None
        self.reserved = reserved or frozenset()
        self.named: list[str] = []
        self.clauses: set[str] = set()
        self.tokens = _tokens(str(request["UpdateExpression"]))
        self.names: Mapping[str, str] = request.get("ExpressionAttributeNames") or {}
        self.values: Mapping[str, Any] = request.get("ExpressionAttributeValues") or {}
        self.position = 0

    def apply(self, item: dict[str, Any]) -> None:
        actions: list[Callable[[], None]] = []
        while self.position < len(self.tokens):
            clause = self._next().upper()
            if clause not in _CLAUSES:
                raise _Unsupported(clause)
            if self.strict and (clause in self.clauses or clause == "DELETE"):
                raise _Unsupported(f"{clause} again, or DELETE")
            self.clauses.add(clause)
            while True:
                actions.append(self._action(clause, item))
                if self._peek() != ",":
                    break
                self._next()
        # Every operand reads the item as it was before the update, as DynamoDB evaluates.
        for action in actions:
            action()

    def _action(self, clause: str, item: dict[str, Any]) -> Callable[[], None]:
        name = self._path()
        if self.strict:
            if name in self.named:
                raise _Unsupported(f"{name} named twice")  # DynamoDB: paths overlap
            self.named.append(name)
        if clause == "REMOVE":
            return lambda: item.pop(name, None)
        if clause == "SET":
            if self._next() != "=":
                raise _Unsupported("SET without =")
            value = self._value(item)
            return lambda: item.__setitem__(name, value)
        operand = self._operand(item)
        if clause == "ADD":
            if self.strict and not (_exact(operand) and _exact(item.get(name, operand))):
                raise _Unsupported("ADD of other than a number")
            return lambda: _add(item, name, operand)
        return lambda: _delete(item, name, operand)

    def _value(self, item: Mapping[str, Any]) -> Any:
        left = self._operand(item)
        if self._peek() in ("+", "-"):
            sign = self._next()
            right = self._operand(item)
            total = Decimal(left["N"]) + (Decimal(right["N"]) * (1 if sign == "+" else -1))
            if self.strict and not (_exact(left) and _exact(right)):
                raise _Unsupported("an operand beyond DynamoDB's numbers")
            return {"N": _number(total)}
        return left

    def _operand(self, item: Mapping[str, Any]) -> Any:
        token = self._peek()
        if token is not None and token.startswith(":"):
            self._next()
            return self.values[token]
        if token in ("if_not_exists", "list_append") and self._lookahead(1) == "(":
            self._next()
            self._next()
            first = self._operand_or_path(item, token == "if_not_exists")
            self._expect(",")
            second = self._operand(item)
            self._expect(")")
            if token == "if_not_exists":
                return first if first is not None else second
            return {"L": [*first["L"], *second["L"]]}
        value = item.get(self._path())
        if value is None:
            raise _Unsupported("operand names a missing attribute")
        return value

    def _operand_or_path(self, item: Mapping[str, Any], path_only: bool) -> Any:
        if path_only:
            return item.get(self._path())
        return self._operand(item)

    def _path(self) -> str:
        token = self._next()
        if token.startswith("#"):
            return str(self.names[token])
        if not (token[0].isalpha() or token[0] == "_") or token.upper() in _CLAUSES:
            raise _Unsupported(token)
        if token.upper() in self.reserved:
            raise _Unsupported(f"{token} is a reserved word")
        return token

    def _expect(self, token: str) -> None:
        if self._next() != token:
            raise _Unsupported(f"expected {token}")

    def _peek(self) -> str | None:
        return self._lookahead(0)

    def _lookahead(self, offset: int) -> str | None:
        index = self.position + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def _next(self) -> str:
        if self.position >= len(self.tokens):
            raise _Unsupported("unexpected end")
        token: str = self.tokens[self.position]
        self.position += 1
        return token


def _exact(value: Mapping[str, Any]) -> bool:
    """A number value (``{"N": ...}``) within DynamoDB's numbers; False for any other type."""
    return "N" in value and _within(Decimal(value["N"]))


def _within(value: Decimal) -> bool:
    """Within DynamoDB's numbers: 38 significant digits, magnitude 1E-130 to below 1E+126."""
    if not value.is_finite():
        return False
    if value.is_zero():
        return True
    normal = value.normalize()
    return len(normal.as_tuple().digits) <= 38 and -130 <= normal.adjusted() < 126


def _number(value: Decimal) -> str:
    return "0" if value.is_zero() else format(value.normalize(), "f")


def _add(item: dict[str, Any], name: str, operand: Mapping[str, Any]) -> None:
    current = item.get(name)
    ((tag, value),) = operand.items()
    if current is None:
        item[name] = dict(operand)
    elif tag == "N":
        item[name] = {"N": _number(Decimal(current["N"]) + Decimal(value))}
    elif tag in _SETS:
        item[name] = {tag: [*current[tag], *(v for v in value if v not in current[tag])]}
    else:
        raise _Unsupported(f"ADD of {tag}")


def _delete(item: dict[str, Any], name: str, operand: Mapping[str, Any]) -> None:
    current = item.get(name)
    if current is None:
        return
    ((tag, value),) = operand.items()
    if tag not in _SETS:
        raise _Unsupported(f"DELETE of {tag}")
    kept = [v for v in current[tag] if v not in value]
    if kept:
        item[name] = {tag: kept}
    else:
        item.pop(name)


def _legacy_update(item: dict[str, Any], name: str, update: Mapping[str, Any]) -> None:
    action = update.get("Action", "PUT")
    value = update.get("Value")
    if action == "PUT":
        item[name] = value
    elif action == "ADD":
        _add(item, name, update["Value"])
    elif value is None:
        item.pop(name, None)
    else:
        _delete(item, name, value)
