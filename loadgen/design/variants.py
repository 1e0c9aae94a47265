"""A design file's variants: each changes only what it gives, the rest is the file's.

    variant = variant_data(data, "warm", {"tables": [{"TableName": "Tickets",
                                                     "WarmThroughput": {...}}]})

The rules (stated in the reference, `loadgen.design.spec.DesignVariant`): a table it names
changes field by field, mappings key by key, its attribute definitions and indexes entry by
entry by their names, other fields replaced, a new table added; a generator is replaced
whole; an entity merges key by key, its item attribute by attribute; a pattern's fields it
gives are replaced whole; null removes what it names.
"""

from __future__ import annotations

import copy
from typing import Any

from loadgen.errors import ConfigError

__all__ = ["compose_changes", "variant_data"]

_NAMED_LISTS = {
    "AttributeDefinitions": "AttributeName",
    "GlobalSecondaryIndexes": "IndexName",
    "LocalSecondaryIndexes": "IndexName",
    "Tags": "Key",
    "Replicas": "RegionName",
}
"""A table's lists whose entries a variant changes one by one, by the field naming each."""


def _merge(base: Any, change: Any) -> Any:
    """``change`` over ``base``: mappings key by key (null removes a key), lists of named
    entries (`_NAMED_LISTS`) entry by entry, anything else replaced."""
    if isinstance(base, dict) and isinstance(change, dict):
        merged = dict(base)
        for key, value in change.items():
            if value is None:
                merged.pop(key, None)
            elif (
                key in _NAMED_LISTS and isinstance(value, list) and isinstance(base.get(key), list)
            ):
                merged[key] = _merge_named(base[key], value, _NAMED_LISTS[key])
            else:
                merged[key] = _merge(base.get(key), value) if key in base else copy.deepcopy(value)
        return merged
    return copy.deepcopy(change)


def _merge_named(base: list[Any], change: list[Any], name: str) -> list[Any]:
    """Entries of ``change`` merged into the entry of ``base`` with the same ``name`` field,
    or added; the others kept."""
    merged = copy.deepcopy(base)
    where = {entry.get(name): i for i, entry in enumerate(merged) if isinstance(entry, dict)}
    for entry in change:
        key = entry.get(name) if isinstance(entry, dict) else None
        if key in where:
            merged[where[key]] = _merge(merged[where[key]], entry)
        else:
            merged.append(copy.deepcopy(entry))
    return merged


def _variant_tables(base: list[Any], change: list[dict[str, Any]], variant: str) -> list[Any]:
    """The file's tables with a variant's changes: a table it names (by TableName; the only
    table when it names none) changes only in what it gives, a table it adds is added."""
    tables = copy.deepcopy(base)
    names = [t.get("TableName") if isinstance(t, dict) else None for t in tables]
    for j, table in enumerate(change):
        name = table.get("TableName")
        if name is None:
            if len(tables) != 1:
                raise ConfigError(
                    f"designs.{variant}.tables[{j}].TableName: name the table this changes "
                    f"(the file has {len(tables)}: {', '.join(map(str, names))})"
                )
            name = names[0]
        if name in names:
            i = names.index(name)
            tables[i] = _merge(tables[i], {**table, "TableName": name})
        else:
            tables.append(copy.deepcopy(table))
            names.append(name)
    return tables


def variant_data(data: dict[str, Any], name: str, change: dict[str, Any]) -> dict[str, Any]:
    """The file as a variant reads it (the rules: `DesignVariant`)."""
    variant = copy.deepcopy(data)
    variant.pop("designs", None)
    if change.get("tables") is not None:
        variant["tables"] = _variant_tables(variant.get("tables") or [], change["tables"], name)
    for generator, spec in (change.get("generators") or {}).items():
        variant.setdefault("generators", {})[generator] = spec
    for entity, spec in (change.get("entities") or {}).items():
        entities = variant.setdefault("entities", {})
        entities[entity] = _merge(entities.get(entity, {}), spec)
    patterns = {p.get("id"): i for i, p in enumerate(variant["access_patterns"])}
    for pattern_id, spec in (change.get("access_patterns") or {}).items():
        if pattern_id not in patterns:
            raise ConfigError(
                f"designs.{name}.access_patterns.{pattern_id}: unknown access pattern "
                f"{pattern_id!r} (known: {', '.join(map(str, patterns))})"
            )
        i = patterns[pattern_id]
        # A pattern's fields are replaced whole (a new key, a new add); null removes one.
        pattern = {**variant["access_patterns"][i], **spec}
        variant["access_patterns"][i] = {k: v for k, v in pattern.items() if v is not None}
    return variant


def compose_changes(first: dict[str, Any], then: dict[str, Any]) -> dict[str, Any]:
    """One variant's changes that make ``first`` and then ``then``, by the same rules: tables
    by name field by field, generators replaced, entities merged, a pattern's fields replaced."""
    out = copy.deepcopy(first)
    if then.get("tables"):
        out["tables"] = _merge_named(out.get("tables") or [], then["tables"], "TableName")
    for generator, spec in (then.get("generators") or {}).items():
        out.setdefault("generators", {})[generator] = copy.deepcopy(spec)
    for entity, spec in (then.get("entities") or {}).items():
        entities = out.setdefault("entities", {})
        entities[entity] = _merge(entities.get(entity, {}), spec)
    for pattern, spec in (then.get("access_patterns") or {}).items():
        patterns = out.setdefault("access_patterns", {})
        patterns[pattern] = {**patterns.get(pattern, {}), **copy.deepcopy(spec)}
    return out
