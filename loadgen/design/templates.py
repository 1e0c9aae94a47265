"""Templates: text with ``{name}`` placeholders, and DynamoDB requests built from them.

A design's access pattern compiles once into a `RequestTemplate`: the DynamoDB JSON request
with placeholders in its strings. Each execution renders it with one `Draws`; the parts
without a placeholder are shared between renders, not copied (nothing downstream changes a
request's nested values), so a render costs one small dict per templated level.

    >>> template = Template.parse("USER#{user}#{shard}")
    >>> template.names
    ('user', 'shard')
    >>> template.render({"user": "7", "shard": "2"})
    'USER#7#2'
    >>> Template.parse("s{sensor:07d}").render({"sensor": "42"})
    's0000042'
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["RequestTemplate", "Template", "TemplateError", "template_names"]

_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SPEC = re.compile(r"^[<>^=]?[+\- ]?0?[0-9]*[dxXs]?$")


class TemplateError(ValueError):
    """A template that cannot be read: names the text and what was expected."""


@dataclass(frozen=True)
class Template:
    """Literal text and ``{name}`` placeholders, alternating."""

    text: str
    parts: tuple[str, ...]
    """Literal, name, literal, name, ..., literal: odd positions are names."""
    specs: tuple[str, ...] = ()
    """Per name, its format spec (``07d``: zero-padded to 7 digits), or ``""``."""

    @classmethod
    def parse(cls, text: str) -> Template:
        """Read ``text``; `TemplateError` for an unclosed brace or a name that is not one.
        A text read once is not read again: a design's key templates are asked for anew by
        every request it compiles."""
        if cls is Template:
            return _parsed(text)
        return cls._read(text)

    @classmethod
    def _read(cls, text: str) -> Template:
        parts: list[str] = []
        specs: list[str] = []
        position = 0
        for match in _PLACEHOLDER.finditer(text):
            name, _, spec = match.group(1).strip().partition(":")
            if not _NAME.match(name) or not _SPEC.match(spec):
                raise TemplateError(
                    f"bad template placeholder {match.group(0)!r} in {text!r} (expected "
                    "{name} with a generator's name: letters, digits, _; or {name:07d})"
                )
            parts += [text[position : match.start()], name]
            specs.append(spec)
            position = match.end()
        rest = text[position:]
        if "{" in rest or "}" in rest or any("{" in p or "}" in p for p in parts[::2]):
            raise TemplateError(f"bad template {text!r}: a '{{' or '}}' without its pair")
        parts.append(rest)
        return cls(text, tuple(parts), tuple(specs) if any(specs) else ())

    @property
    def names(self) -> tuple[str, ...]:
        return self.parts[1::2]

    @property
    def static(self) -> bool:
        return len(self.parts) == 1

    def render(self, draws: Mapping[str, str]) -> str:
        parts = self.parts
        if self.specs:
            return "".join(
                _formatted(draws[p], self.specs[i // 2]) if i % 2 else p
                for i, p in enumerate(parts)
            )
        if len(parts) == 3:  # the usual "PREFIX#{name}"
            return parts[0] + draws[parts[1]] + parts[2]
        return "".join(draws[p] if i % 2 else p for i, p in enumerate(parts))


@functools.lru_cache(maxsize=4096)
def _parsed(text: str) -> Template:
    return Template._read(text)


def _formatted(value: str, spec: str) -> str:
    if not spec:
        return value
    if spec[-1:] in "dxX" or spec[-1:].isdigit():
        try:
            return format(int(value), spec)
        except ValueError:
            pass
    return format(value, spec.rstrip("dxX") or "")


def template_names(value: Any) -> set[str]:
    """Every placeholder name in the strings of a JSON-like value."""
    names: set[str] = set()
    if isinstance(value, str):
        names.update(Template.parse(value).names)
    elif isinstance(value, Mapping):
        for item in value.values():
            names |= template_names(item)
    elif isinstance(value, list | tuple):
        for item in value:
            names |= template_names(item)
    return names


Builder = Callable[[Mapping[str, str]], Any]


def _compile(value: Any) -> tuple[bool, Any]:
    """(dynamic, builder or the static value itself)."""
    if isinstance(value, str):
        template = Template.parse(value)
        if template.static:
            return False, value
        return True, template.render
    if isinstance(value, Mapping):
        parts = [(key, *_compile(item)) for key, item in value.items()]
        if not any(dynamic for _, dynamic, _ in parts):
            return False, value
        static = {key: item for key, dynamic, item in parts if not dynamic}
        dynamic_parts = [(key, item) for key, dynamic, item in parts if dynamic]

        def build_mapping(draws: Mapping[str, str]) -> dict[str, Any]:
            built = dict(static)
            for key, builder in dynamic_parts:
                built[key] = builder(draws)
            return built

        return True, build_mapping
    if isinstance(value, list | tuple):
        items = [_compile(item) for item in value]
        if not any(dynamic for dynamic, _ in items):
            return False, list(value)

        def build_list(draws: Mapping[str, str]) -> list[Any]:
            return [item(draws) if dynamic else item for dynamic, item in items]

        return True, build_list
    return False, value


class RequestTemplate:
    """A DynamoDB JSON request with templates in its strings, compiled once.

    >>> request = RequestTemplate({"TableName": "t", "Key": {"pk": {"S": "USER#{user}"}}})
    >>> request.render({"user": "3"})
    {'TableName': 't', 'Key': {'pk': {'S': 'USER#3'}}}
    """

    def __init__(self, request: Mapping[str, Any]) -> None:
        self.request = dict(request)
        self.names = frozenset(template_names(self.request))
        dynamic, builder = _compile(self.request)
        self._build: Builder = builder if dynamic else (lambda draws: dict(self.request))

    def render(self, draws: Mapping[str, str]) -> dict[str, Any]:
        built: dict[str, Any] = self._build(draws)
        return built
