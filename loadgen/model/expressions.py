"""DynamoDB's expression grammar, read to find the first error DynamoDB reports in an expression.

DynamoDB reads each expression of a request in turn: it parses it (a syntax error names the
token and the text around it), checks what parsing shows (function names, where a function may
stand, redundant parentheses, a clause used twice, reserved words, overlapping paths), then
substitutes its ``#name`` and ``:value`` placeholders (an undefined one is an error), then checks
the functions' operands. Only when every expression has passed does it look for placeholders
defined and never used. `first_error` follows that order, so a request that breaks several rules
gets the answer DynamoDB gives (``a IN ()`` is a syntax error even when ``:v`` goes unused).

One parser for the package: the emulator answers with it (`loadgen.emulator.validation` calls
it only for a request whose placeholders do not add up, or that a cheap look finds past a limit,
so it stays off the hot path) and a design file's expressions are checked by it before anything
runs (`loadgen.design.expressions`).

    >>> first_error("ConditionExpression", "a IN ()", set(), set())
    'Invalid ConditionExpression: Syntax error; token: ")", near: "()"'
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

__all__ = [
    "EXPRESSION_ORDER",
    "MAX_EXPRESSION_LENGTH",
    "MAX_LIST_INDEX",
    "MAX_PATH_DEPTH",
    "attribute_uses",
    "expression_error",
    "first_error",
    "names_error",
    "projection_paths",
    "request_error",
    "reserved_words",
    "update_paths",
]

EXPRESSION_ORDER = (
    "UpdateExpression",
    "ConditionExpression",
    "FilterExpression",
    "ProjectionExpression",
    "KeyConditionExpression",
)
"""The order DynamoDB reads a request's expressions in (DynamoDB Local: an UpdateItem's update
before its condition; a Query's filter, then its projection, then its key condition)."""

_TOKEN = re.compile(
    r"\s+|(?P<name>[A-Za-z][A-Za-z0-9_]*)|(?P<hash>#[A-Za-z0-9_]+)|(?P<value>:[A-Za-z0-9_]+)"
    r"|(?P<number>0|[1-9][0-9]*)|(?P<op><>|<=|>=|[=<>(),.\[\]+-])|(?P<other>.)",
    re.DOTALL,
)
_PLACEHOLDER = re.compile(r"([#:])([A-Za-z0-9_]+)")
_LONG_INDEX = re.compile(r"\[\s*[0-9]{10,}")
_KEYWORDS = frozenset({"AND", "OR", "NOT", "BETWEEN", "IN", "SET", "REMOVE", "ADD", "DELETE"})
_COMPARATORS = frozenset({"=", "<>", "<", "<=", ">", ">="})
# Functions and how many operands each takes.
_CONDITION_FUNCTIONS = {
    "attribute_exists": 1,
    "attribute_not_exists": 1,
    "attribute_type": 2,
    "begins_with": 2,
    "contains": 2,
    "size": 1,
}
_UPDATE_FUNCTIONS = {"if_not_exists": 2, "list_append": 2}
_PATH_FUNCTIONS = frozenset({"attribute_exists", "attribute_not_exists", "attribute_type"})
_BOOLEAN_FUNCTIONS = frozenset({"begins_with", "contains"})
_MAX_IN_OPERANDS = 100
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html
# (Expression parameters), worded and counted as DynamoDB Local answers them (2026-11-28):
MAX_EXPRESSION_LENGTH = 4096
"""Characters of one expression (not bytes: 2,049 two-byte characters are read, and refused
only for what they say)."""
_SIZE_TOLD = frozenset({"ConditionExpression", "FilterExpression", "KeyConditionExpression"})
"""The expressions whose too-long message ends with their size ("; expression size: 4097");
a ProjectionExpression's and an UpdateExpression's end at the semicolon."""
MAX_LIST_INDEX = 2**31 - 1
"""Largest list position a document path may name (Java's int)."""
MAX_PATH_DEPTH = 32
"""Elements of one document path, names and list positions alike (``a.b[0]`` is three)."""


@cache
def reserved_words() -> frozenset[str]:
    """DynamoDB's reserved words, upper case (moto ships AWS's list).

    Read from moto's data file without importing moto: importing it imports ``ssl``, and a
    design is read (its expressions checked) before a run imports Locust, which must patch
    ``ssl`` first.
    """
    spec = importlib.util.find_spec("moto")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("moto is not installed: its list of DynamoDB's reserved words is read")
    listed = Path(next(iter(spec.submodule_search_locations)))
    text = (listed / "dynamodb" / "parsing" / "reserved_keywords.txt").read_text("utf-8")
    return frozenset(word.upper() for word in text.split())


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str
    """name, keyword, hash, value, number, op, other or eof."""
    text: str
    start: int
    end: int


@dataclass(slots=True)
class _Node:
    """What parsing learns of an operand or a condition."""

    kind: str
    """path, value, function, compare, between, in, logic, group."""
    text: str = ""
    """A function's name; a path's elements joined for messages."""
    children: list[_Node] = field(default_factory=list)
    path: tuple[str, ...] = ()


class _Error(Exception):
    def __init__(self, message: str) -> None:
        self.message = message


def _tokens(text: str) -> list[_Token]:
    tokens = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        if kind is None:
            continue  # white space
        word = match.group()
        if kind == "name" and word.upper() in _KEYWORDS:
            kind = "keyword"
        tokens.append(_Token(kind, word, match.start(), match.end()))
    tokens.append(_Token("eof", "<EOF>", len(text), len(text)))
    return tokens


class _Parser:
    def __init__(self, kind: str, text: str) -> None:
        self.kind, self.text = kind, text
        self.tokens = _tokens(text)
        self.at = 0
        self.functions: list[_Node] = []
        self.paths: list[_Node] = []
        self.placeholders: list[str] = []
        self.done: list[_Node] = []
        """Paths, functions and IN lists as each is complete: the order DynamoDB checks their
        operands in (an operand before what takes it, left before right)."""
        self.repeated: str | None = None
        """The first clause an update expression gives twice."""

    # --- tokens ---------------------------------------------------------------------------

    @property
    def token(self) -> _Token:
        return self.tokens[self.at]

    def take(self) -> _Token:
        token = self.tokens[self.at]
        self.at = min(self.at + 1, len(self.tokens) - 1)
        return token

    def is_op(self, *ops: str) -> bool:
        return self.token.kind == "op" and self.token.text in ops

    def is_keyword(self, *words: str) -> bool:
        return self.token.kind == "keyword" and self.token.text.upper() in words

    def expect_op(self, op: str) -> None:
        if not self.is_op(op):
            raise self.syntax_error()
        self.take()

    def syntax_error(self) -> _Error:
        """DynamoDB's syntax error: the token, and the text from the token before it to the
        token after it."""
        at = self.at
        start = self.tokens[at - 1].start if at > 0 else 0
        end = self.tokens[at + 1].end if at + 1 < len(self.tokens) else len(self.text)
        token = self.tokens[at]
        return _Error(f'Syntax error; token: "{token.text}", near: "{self.text[start:end]}"')

    def end(self) -> None:
        if self.token.kind != "eof":
            raise self.syntax_error()

    # --- operands -------------------------------------------------------------------------

    def path(self) -> _Node:
        elements: list[str] = []
        token = self.token
        if token.kind not in ("name", "hash"):
            raise self.syntax_error()
        while True:
            token = self.take()
            if token.kind == "hash":
                self.placeholders.append(token.text)
            elements.append(token.text)
            if self.is_op("."):
                self.take()
                if self.token.kind not in ("name", "hash"):
                    raise self.syntax_error()
                continue
            while self.is_op("["):
                self.take()
                if self.token.kind != "number":
                    raise self.syntax_error()
                elements.append(f"[{self.take().text}]")
                self.expect_op("]")
            if not self.is_op("."):
                break
            self.take()
            if self.token.kind not in ("name", "hash"):
                raise self.syntax_error()
        node = _Node("path", path=tuple(elements))
        self.paths.append(node)
        self.done.append(node)
        return node

    def operand(self, *, group: bool = True) -> _Node:
        """A path, a value, a function call, or (with ``group``) an operand in parentheses."""
        token = self.token
        if token.kind == "value":
            self.placeholders.append(self.take().text)
            return _Node("value")
        if token.kind == "name" and self.tokens[self.at + 1].text == "(":
            return self.function()
        if token.kind in ("name", "hash"):
            return self.path()
        if group and self.is_op("("):
            self.take()
            inner = self.operand()
            self.expect_op(")")
            return _Node("group", children=[inner])
        raise self.syntax_error()

    def function(self) -> _Node:
        name = self.take().text
        self.take()  # (
        node = _Node("function", name, [self.operand()])
        while self.is_op(","):
            self.take()
            node.children.append(self.operand())
        self.expect_op(")")
        self.functions.append(node)
        self.done.append(node)
        return node

    # --- conditions -----------------------------------------------------------------------

    def condition(self) -> _Node:
        node = self.conjunction()
        while self.is_keyword("OR"):
            self.take()
            node = _Node("logic", "OR", [node, self.conjunction()])
        return node

    def conjunction(self) -> _Node:
        node = self.negation()
        while self.is_keyword("AND"):
            self.take()
            node = _Node("logic", "AND", [node, self.negation()])
        return node

    def negation(self) -> _Node:
        if self.is_keyword("NOT"):
            self.take()
            return _Node("logic", "NOT", [self.negation()])
        return self.predicate(in_group=False)

    def predicate(self, *, in_group: bool) -> _Node:
        """A comparison, BETWEEN, IN, a function, or a condition in parentheses; inside
        parentheses a lone operand too (``(a) = :v``)."""
        if self.is_op("("):
            self.take()
            left = _Node("group", children=[self.condition_or_operand()])
            self.expect_op(")")
            if not _is_operand(left):
                return left  # a condition in parentheses: nothing may follow but AND, OR, )
        else:
            left = self.operand(group=False)
        if self.is_comparison():
            return self.comparison(left)
        if in_group or _innermost(left).kind == "function":
            return left
        raise self.syntax_error()

    def condition_or_operand(self) -> _Node:
        """What stands in parentheses: an operand, a function, or a whole condition."""
        saved = (
            self.at,
            len(self.functions),
            len(self.paths),
            len(self.placeholders),
            len(self.done),
        )
        try:
            node = self.predicate(in_group=True)
            if self.is_op(")"):
                return node
        except _Error:
            pass
        self.at = saved[0]  # a whole condition after all: read it again as one
        del self.functions[saved[1] :], self.paths[saved[2] :], self.placeholders[saved[3] :]
        del self.done[saved[4] :]
        return self.condition()

    def is_comparison(self) -> bool:
        token = self.token
        return (token.kind == "op" and token.text in _COMPARATORS) or self.is_keyword(
            "BETWEEN", "IN"
        )

    def comparison(self, left: _Node) -> _Node:
        if self.is_keyword("BETWEEN"):
            self.take()
            low = self.operand()
            if not self.is_keyword("AND"):
                raise self.syntax_error()
            self.take()
            return _Node("between", children=[left, low, self.operand()])
        if self.is_keyword("IN"):
            self.take()
            self.expect_op("(")
            node = _Node("in", children=[left, self.operand()])
            while self.is_op(","):
                self.take()
                node.children.append(self.operand())
            self.expect_op(")")
            self.done.append(node)
            return node
        self.take()
        return _Node("compare", children=[left, self.operand()])

    # --- update expressions ---------------------------------------------------------------

    def update(self) -> list[tuple[str, _Node]]:
        """The clauses' actions: (clause, the path each changes)."""
        actions: list[tuple[str, _Node]] = []
        seen: set[str] = set()
        if not self.is_keyword("SET", "REMOVE", "ADD", "DELETE"):
            raise self.syntax_error()
        while self.is_keyword("SET", "REMOVE", "ADD", "DELETE"):
            clause = self.take().text.upper()
            if clause in seen and self.repeated is None:
                self.repeated = clause  # refused after the paths' own checks, as DynamoDB does
            seen.add(clause)
            while True:
                path = self.path()
                if clause == "SET":
                    self.expect_op("=")
                    self.set_value()
                elif clause in ("ADD", "DELETE"):
                    if self.token.kind != "value":
                        raise self.syntax_error()
                    self.placeholders.append(self.take().text)
                actions.append((clause, path))
                if not self.is_op(","):
                    break
                self.take()
        self.end()
        return actions

    def set_value(self) -> bool:
        """An operand, or two joined by ``+`` or ``-``; True for a lone operand."""
        if self.is_op("("):  # (a + b), or a parenthesised operand before + b
            self.take()
            single = self.set_value()
            self.expect_op(")")
        else:
            self.operand()
            single = True
        if self.is_op("+", "-"):
            if not single:
                raise self.syntax_error()
            self.take()
            self.operand()
            return False
        return single


def first_error(
    kind: str, text: str, names: Collection[str], values: Collection[str]
) -> str | None:
    """The first error DynamoDB reports in the ``kind`` expression ``text``, or None.

    ``names`` and ``values`` are the ``#name`` and ``:value`` placeholders the request defines.
    Checks parsing, then placeholders, then functions' operands; not types (those need values).
    """
    try:
        _check(kind, text, names, values)
    except _Error as error:
        return f"Invalid {kind}: {error.message}"
    return None


def names_error(names: Mapping[str, Any]) -> str | None:
    """DynamoDB's complaint about a request's ``ExpressionAttributeNames`` themselves, which it
    makes before it reads an expression: an empty attribute name (the first, in the order
    given), or None.

        >>> names_error({"#a": "ok", "#b": ""})
        'ExpressionAttributeNames contains invalid value: Empty attribute name for key #b'
    """
    for key, name in names.items():
        if name == "":
            return (
                f"ExpressionAttributeNames contains invalid value: Empty attribute name for key "
                f"{key}"
            )
    return None


def expression_error(request: Mapping[str, Any]) -> str | None:
    """The first error DynamoDB reports in any expression of ``request`` (those of a
    transaction's actions too), or None."""
    specs = [request]
    for entry in request.get("TransactItems") or ():
        if isinstance(entry, dict):
            specs.extend(body for body in entry.values() if isinstance(body, dict))
    for spec in specs:
        names, values = spec.get("ExpressionAttributeNames"), spec.get("ExpressionAttributeValues")
        for kind in EXPRESSION_ORDER:
            text = spec.get(kind)
            if isinstance(text, str):
                message = first_error(
                    kind,
                    text,
                    names if isinstance(names, dict) else {},
                    values if isinstance(values, dict) else {},
                )
                if message is not None:
                    return message
    return None


def request_error(request: Mapping[str, Any], *, parse: bool = True) -> str | None:
    """DynamoDB's first complaint about the expressions of one request (or one action of a
    transaction), or None: an empty expression or placeholder map, an empty attribute name,
    then each expression in `EXPRESSION_ORDER` (`first_error`), then placeholders defined and
    not used, or given with no expression.

    With ``parse`` False, expressions are parsed only where placeholders do not add up or an
    expression may be past a limit (its length, a list position, a path's depth): a valid
    request then costs a few regular-expression scans, not a parse (the emulator's hot path).
    """
    expressions = {
        kind: text for kind in EXPRESSION_ORDER if isinstance(text := request.get(kind), str)
    }
    for kind, text in expressions.items():
        if not text:
            return f"Invalid {kind}: The expression can not be empty;"
    names, values = (
        request.get("ExpressionAttributeNames"),
        request.get("ExpressionAttributeValues"),
    )
    for member, given in (
        ("ExpressionAttributeNames", names),
        ("ExpressionAttributeValues", values),
    ):
        if expressions and given == {}:
            return f"{member} must not be empty"
    if expressions and isinstance(names, dict):
        message = names_error(names)
        if message is not None:
            return message
    wrong = _placeholders_error(request, expressions)
    if wrong is None and not parse and not any(map(_may_be_past_a_limit, expressions.values())):
        return None
    defined = (
        set(names) if isinstance(names, dict) else set(),
        set(values) if isinstance(values, dict) else set(),
    )
    for kind, text in expressions.items():
        try:
            message = first_error(kind, text, *defined)
        except RecursionError:  # parentheses nested thousands deep: no clear answer
            message = None
        if message is not None:
            return message
    return wrong


def update_paths(text: str) -> list[tuple[str, tuple[str | int, ...]]]:
    """An UpdateExpression's clauses and the document path each changes (``#name``
    placeholders as written). Call it on an expression `first_error` has passed.

        >>> update_paths("SET a.b = :v, #c = :w REMOVE d[1]")
        [('SET', ('a', 'b')), ('SET', ('#c',)), ('REMOVE', ('d', 1))]
    """
    return [
        (clause, tuple(int(e[1:-1]) if e.startswith("[") else e for e in path.path))
        for clause, path in _Parser("UpdateExpression", text).update()
    ]


_ABSENT_FUNCTIONS = {"attribute_not_exists", "if_not_exists"}
"""Functions whose first operand holds when the attribute is absent."""


def attribute_uses(kind: str, text: str) -> list[tuple[str, str]]:
    """Each path of the ``kind`` expression ``text``: its top-level attribute (a ``#name``
    placeholder as written) and how the expression uses it: ``writes`` (what SET or ADD
    changes), ``absent`` (holds when the attribute is absent: ``attribute_not_exists``, the
    first operand of ``if_not_exists``, what REMOVE or DELETE takes away) or ``reads``. Call
    it on an expression `first_error` has passed.

        >>> attribute_uses("ConditionExpression", "attribute_not_exists(a) OR b < :n")
        [('a', 'absent'), ('b', 'reads')]
        >>> attribute_uses("UpdateExpression", "SET c = if_not_exists(c, :z) + :one REMOVE d")
        [('c', 'writes'), ('c', 'absent'), ('d', 'absent')]
    """
    parser = _Parser(kind, text)
    uses: dict[int, str] = {}
    if kind == "UpdateExpression":
        for clause, node in parser.update():
            uses[id(node)] = "writes" if clause in ("SET", "ADD") else "absent"
    elif kind == "ProjectionExpression":
        parser.path()
        while parser.is_op(","):
            parser.take()
            parser.path()
        parser.end()
    else:
        parser.condition()
        parser.end()
    for function in parser.functions:
        if function.text in _ABSENT_FUNCTIONS and function.children:
            uses.setdefault(id(_innermost(function.children[0])), "absent")
    return [(node.path[0], uses.get(id(node), "reads")) for node in parser.paths]


def _may_be_past_a_limit(text: str) -> bool:
    """Whether an expression may be too long, name a list position too large or a path too
    deep: what `first_error` must then read."""
    return (
        len(text) > MAX_EXPRESSION_LENGTH
        or text.count(".") + text.count("[") >= MAX_PATH_DEPTH
        or _LONG_INDEX.search(text) is not None
    )


def _placeholders_error(request: Mapping[str, Any], expressions: Mapping[str, str]) -> str | None:
    """Every ``#name`` and ``:value`` of the expressions defined, every one defined used, and
    none given without an expression; read from the text alone."""
    used: dict[str, set[str]] = {"#": set(), ":": set()}
    for text in expressions.values():
        for sigil, token in _PLACEHOLDER.findall(text):
            used[sigil].add(sigil + token)
    for sigil, member, what in (
        ("#", "ExpressionAttributeNames", "name used in the document path"),
        (":", "ExpressionAttributeValues", "value used in expression"),
    ):
        given = request.get(member)
        defined = set(given) if isinstance(given, dict) else set()
        for kind, text in expressions.items():
            for token_sigil, token in _PLACEHOLDER.findall(text):
                if token_sigil == sigil and sigil + token not in defined:
                    return (
                        f"Invalid {kind}: An expression attribute {what} is not defined; "
                        f"attribute {'name' if sigil == '#' else 'value'}: {sigil}{token}"
                    )
        if given is not None and not expressions:
            return f"{member} can only be specified when using expressions"
        unused = sorted(defined - used[sigil])
        if unused:
            return (
                f"Value provided in {member} unused in expressions: keys: {{{', '.join(unused)}}}"
            )
    return None


def projection_paths(text: str) -> list[tuple[str | int, ...]]:
    """A ProjectionExpression's document paths: names (``#name`` placeholders as written) and
    list positions. Call it on an expression `first_error` has passed.

        >>> projection_paths("a.b[2], #c")
        [('a', 'b', 2), ('#c',)]
    """
    parser = _Parser("ProjectionExpression", text)
    paths = [parser.path()]
    while parser.is_op(","):
        parser.take()
        paths.append(parser.path())
    parser.end()
    return [tuple(int(e[1:-1]) if e.startswith("[") else e for e in path.path) for path in paths]


def _check(kind: str, text: str, names: Collection[str], values: Collection[str]) -> None:
    """DynamoDB's checks of one expression, in its order (each step measured against DynamoDB
    Local: the size, the syntax, where functions stand and their names, parentheses, each path
    element in turn (a reserved word, a list position out of range), a clause given twice,
    overlapping paths, undefined placeholders, then operand by operand (a path nested too deep,
    a function's operands, an IN list's length))."""
    if len(text) > MAX_EXPRESSION_LENGTH:
        size = f" expression size: {len(text)}" if kind in _SIZE_TOLD else ""
        raise _Error("Expression size has exceeded the maximum allowed size;" + size)
    parser = _Parser(kind, text)
    overlapping: list[_Node] = []
    if kind == "UpdateExpression":
        overlapping = [path for _, path in parser.update()]
    elif kind == "ProjectionExpression":
        overlapping = [parser.path()]
        while parser.is_op(","):
            parser.take()
            overlapping.append(parser.path())
        parser.end()
    else:
        root = parser.condition()
        parser.end()
        _where_functions_stand(root)
    _functions(kind, parser.functions)
    _parentheses(parser)
    for path in parser.paths:
        for element in path.path:
            if element[0] == "[":
                if int(element[1:-1]) > MAX_LIST_INDEX:
                    raise _Error(f"List index is not within the allowable range; index: {element}")
                continue
            # Function names (size, contains) are names too where no call follows.
            if element[0] == "#" or element in _CONDITION_FUNCTIONS:
                continue
            if element.upper() in reserved_words():
                raise _Error(f"Attribute name is a reserved keyword; reserved keyword: {element}")
    if parser.repeated is not None:
        raise _Error(
            f'The "{parser.repeated}" section can only be used once in an update expression;'
        )
    _overlaps(overlapping)
    for placeholder in parser.placeholders:
        if placeholder[0] == "#" and placeholder not in names:
            raise _Error(
                "An expression attribute name used in the document path is not defined; "
                f"attribute name: {placeholder}"
            )
        if placeholder[0] == ":" and placeholder not in values:
            raise _Error(
                "An expression attribute value used in expression is not defined; "
                f"attribute value: {placeholder}"
            )
    for node in parser.done:
        _operands(node)


def _operands(node: _Node) -> None:
    """A complete path, function or IN list, as DynamoDB checks it once its operands have
    passed."""
    if node.kind == "path":
        if len(node.path) > MAX_PATH_DEPTH:
            raise _Error(
                f"The document path has too many nesting levels; nesting levels: {len(node.path)}"
            )
    elif node.kind == "in":
        if len(node.children) - 1 > _MAX_IN_OPERANDS:
            raise _Error(
                "The IN operator is provided with too many operands; number of operands: "
                f"{len(node.children) - 1}"
            )
    elif node.kind == "function":
        arity = {**_CONDITION_FUNCTIONS, **_UPDATE_FUNCTIONS}[node.text]
        if len(node.children) != arity:
            raise _Error(
                "Incorrect number of operands for operator or function; operator or function: "
                f"{node.text}, number of operands: {len(node.children)}"
            )
        if node.text in _PATH_FUNCTIONS and node.children[0].kind != "path":
            raise _Error(
                f"Operator or function requires a document path; operator or function: {node.text}"
            )


def _is_operand(node: _Node) -> bool:
    """An operand, possibly in parentheses (a function counts: ``size(a)`` is one)."""
    return _innermost(node).kind in ("path", "value", "function")


def _innermost(node: _Node) -> _Node:
    while node.kind == "group":
        node = node.children[0]
    return node


def _functions(kind: str, functions: list[_Node]) -> None:
    for function in functions:
        name = function.text
        if name not in _CONDITION_FUNCTIONS and name not in _UPDATE_FUNCTIONS:
            raise _Error(f"Invalid function name; function: {name}")
        if kind == "UpdateExpression" and name not in _UPDATE_FUNCTIONS:
            raise _Error(f"The function is not allowed in an update expression; function: {name}")
        if kind != "UpdateExpression" and name in _UPDATE_FUNCTIONS:
            raise _Error(f"The function is not allowed in a condition expression; function: {name}")


def _where_functions_stand(node: _Node) -> None:
    """size() only as an operand; the other condition functions only as conditions."""
    if node.kind == "function":
        if node.text == "size":
            raise _Error(
                "The function is not allowed to be used this way in an expression; "
                f"function: {node.text}"
            )
        return
    if node.kind in ("logic", "group"):
        for child in node.children:
            _where_functions_stand(child)
        return
    for operand in node.children:
        operand = _innermost(operand)
        if operand.kind == "function" and operand.text in _PATH_FUNCTIONS | _BOOLEAN_FUNCTIONS:
            raise _Error(
                "The function is not allowed to be used this way in an expression; "
                f"function: {operand.text}"
            )


def _parentheses(parser: _Parser) -> None:
    """``((x))``: two opening parentheses whose closing ones meet."""
    tokens = parser.tokens
    stack: list[int] = []
    pairs: dict[int, int] = {}
    for i, token in enumerate(tokens):
        if token.kind == "op" and token.text == "(":
            stack.append(i)
        elif token.kind == "op" and token.text == ")" and stack:
            pairs[stack.pop()] = i
    for opening, closing in pairs.items():
        if pairs.get(opening + 1) == closing - 1 and tokens[opening - 1].kind != "name":
            raise _Error("The expression has redundant parentheses;")


def _overlaps(paths: list[_Node]) -> None:
    for i, first in enumerate(paths):
        for second in paths[i + 1 :]:
            shorter = min(len(first.path), len(second.path))
            if first.path[:shorter] == second.path[:shorter]:
                one, two = (", ".join(p.path) for p in (first, second))
                raise _Error(
                    "Two document paths overlap with each other; must remove or rewrite one of "
                    f"these paths; path one: [{one}], path two: [{two}]"
                )
