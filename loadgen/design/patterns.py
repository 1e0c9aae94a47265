"""Access patterns compiled into DynamoDB requests, and what each request touches.

`compile_pattern` turns one validated `AccessPattern` into a `CompiledPattern`: its
operation, table and index, and a way to build each execution's requests from one `Draws`
(a Query per shard for ``each: shard``; one BatchGetItem of every shard's key; a transaction
of several actions sharing the same drawn values). `call_of` reads back, from a built
request, the partition keys it touches, for the client's request event (heat, hot keys).

Attribute values in an item or a ``set`` follow the table's attribute types for keys; other
strings are ``S``, numbers ``N``, booleans ``BOOL``; ``{size: 300}`` is a string of 300
bytes and ``{number: [1, 99]}`` a random integer, drawn through implicit generators
(``_size300``, ``_int1_99``) so they are drawn like any other value.
"""

from __future__ import annotations

import functools
import random
import re
import string
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from loadgen.design.generators import Draws, KeySpace, ValueGenerator
from loadgen.design.spec import AccessPattern, Action, Entity, SortCondition
from loadgen.design.templates import RequestTemplate
from loadgen.model.capacity import key_value, query_key
from loadgen.model.expressions import EXPRESSION_ORDER
from loadgen.model.limits import too_many
from loadgen.model.schema import IndexSchema, TableSchema

__all__ = [
    "Call",
    "CompiledPattern",
    "DesignError",
    "RandomInt",
    "SizedString",
    "call_of",
    "compile_pattern",
    "implicit_generator",
    "typed_value",
]


_SINGLE_TABLE = frozenset({"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan"})
_TYPE_TAGS = frozenset({"S", "N", "B", "BOOL", "NULL", "SS", "NS", "BS", "L", "M"})
_CONDITIONED = frozenset({"PutItem", "UpdateItem", "DeleteItem"})
"""The operations that take a ConditionExpression."""
_PLACEHOLDERS = re.compile(r"[#:][A-Za-z0-9_]+")


class DesignError(ValueError):
    """A design that cannot be compiled: ``path`` names the field, the text says why."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


_ALPHABET = string.ascii_letters + string.digits
_PAD = "".join(random.Random(0).choices(_ALPHABET, k=65_536))


class SizedString(ValueGenerator):
    """A string of ``size`` bytes: a slice of a fixed random text, at a random offset."""

    def __init__(self, size: int, *, seed: int) -> None:
        self.size = size
        self.random = random.Random(seed)

    def draw(self) -> str:
        size = self.size
        if size > len(_PAD):
            return (_PAD * (size // len(_PAD) + 1))[:size]
        start = self.random.randrange(len(_PAD) - size + 1)
        return _PAD[start : start + size]


class RandomInt(ValueGenerator):
    """A random integer from ``low`` to ``high``, both included."""

    def __init__(self, low: int, high: int, *, seed: int) -> None:
        self.low, self.high = low, high
        self.random = random.Random(seed)

    def draw(self) -> str:
        return str(self.random.randint(self.low, self.high))


def implicit_generator(name: str, seed: int) -> ValueGenerator:
    """The generator an implicit name (``_size300``, ``_int1_99``, ``_items3``: an entity's
    ``populate: 3``) stands for."""
    if name.startswith("_size"):
        return SizedString(int(name[5:]), seed=seed)
    if name.startswith("_items"):
        return KeySpace(int(name[6:]), "uniform", seed=seed, scramble=False)
    low, high = name[4:].split("_")
    return RandomInt(int(low.replace("m", "-")), int(high.replace("m", "-")), seed=seed)


def typed_value(value: Any, path: str, attribute_type: str | None = None) -> dict[str, Any]:
    """An attribute value as DynamoDB JSON with templates (see the module docstring)."""
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, int | float):
        return {"N": _number_text(value)}
    if isinstance(value, str):
        return {attribute_type or "S": value}
    if isinstance(value, Mapping):
        if set(value) == {"size"}:
            size = value["size"]
            if isinstance(size, bool) or not isinstance(size, int) or not 0 < size <= 400_000:
                raise DesignError(path, f"size must be bytes from 1 to 400,000 (got {size!r})")
            return {"S": f"{{_size{size}}}"}
        if set(value) == {"number"}:
            number = value["number"]
            if isinstance(number, str):
                return {"N": number}
            if (
                isinstance(number, list)
                and len(number) == 2
                and all(isinstance(n, int) and not isinstance(n, bool) for n in number)
                and number[0] <= number[1]
            ):
                low, high = (str(n).replace("-", "m") for n in number)
                return {"N": f"{{_int{low}_{high}}}"}
            raise DesignError(path, f"number must be a template or [low, high] (got {number!r})")
        if set(value) == {"type", "value"} and value["type"] in ("S", "N", "B", "BOOL"):
            return {value["type"]: value["value"]}
        if len(value) == 1 and next(iter(value)) in _TYPE_TAGS:
            return dict(value)  # DynamoDB's own JSON, templates in its strings
    raise DesignError(
        path,
        f"cannot read value {value!r} (expected a template string, a number, a boolean, "
        "{size: BYTES}, {number: TEMPLATE or [LOW, HIGH]}, {type: S|N|B|BOOL, value: ...} or "
        "DynamoDB JSON such as {N: '1'} or {SS: [a, b]})",
    )


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


@dataclass(frozen=True)
class Call:
    """One request of an execution, with the keys the request event names."""

    operation: str
    params: dict[str, Any]
    table: str
    index: str | None
    pk: str | None
    sk: str | None
    partition_keys: list[str] | None


@dataclass
class CompiledPattern:
    """An access pattern ready to run: ``calls(draws)`` builds one execution's requests."""

    id: str
    description: str
    operation: str
    table: str
    index: str | None
    rate: float
    """Executions per second at launch (AWS scale)."""
    latency: Any
    requests: list[RequestTemplate]
    """The request templates, one per action of a transaction or one for any other."""
    schemas: Mapping[str, TableSchema]
    each: str | None = None
    each_values: list[str] = field(default_factory=list)
    count: int = 1
    """Batch operations: keys or items per call."""
    key_templates: list[Mapping[str, Any]] = field(default_factory=list)
    """Batch operations: the key (BatchGetItem) or item (BatchWriteItem) template."""
    _key_template: RequestTemplate | None = field(default=None, repr=False)

    @functools.cached_property
    def names(self) -> frozenset[str]:
        """Every generator name the pattern draws."""
        found: set[str] = set()
        for request in self.requests:
            found |= request.names
        for template in self.key_templates:
            found |= RequestTemplate(template).names
        if self.each:
            found.add(self.each)
        return frozenset(found)

    @property
    def requests_per_execution(self) -> int:
        """How many requests `calls` sends for one execution: one per value of ``each`` (a
        Query over every shard), else one (a batch puts every value's key in one request)."""
        if self.each is None or self.key_templates:
            return 1
        return len(self.each_values)

    def calls(self, draws: Draws) -> Iterator[Call]:
        """The requests of one execution, in the order they are sent
        (`requests_per_execution` of them)."""
        if self.key_templates:  # a batch built from its key or item template
            yield self._batch(draws)
            return
        if self.each is None:
            yield call_of(self.operation, self.requests[0].render(draws), self.schemas)
            return
        for name in self.names - {self.each}:
            draws[name]  # one status (or user) for every shard of this execution
        for value in self.each_values:
            one = Draws(draws.generators, **draws)
            one[self.each] = value
            yield call_of(self.operation, self.requests[0].render(one), self.schemas)

    def _batch(self, draws: Draws) -> Call:
        template = self._key_template
        if template is None:
            template = self._key_template = RequestTemplate({"k": self.key_templates[0]})
        schema = self.schemas[self.table]
        rendered: list[dict[str, Any]]
        if self.each is not None:
            for name in self.names - {self.each}:
                draws[name]
            one = dict(draws)
            rendered = []
            for value in self.each_values:
                one[self.each] = value
                rendered.append(template.render(one)["k"])
            if self.each not in template.names:  # every value names the same key
                rendered = rendered[:1]
        else:
            entries: dict[tuple[Any, ...], dict[str, Any]] = {}
            for one in [draws] + [Draws(draws.generators) for _ in range(self.count - 1)]:
                item = template.render(one)["k"]
                identity = tuple(key_value(item[a]) for a in schema.key_attributes if a in item)
                entries.setdefault(identity, item)  # a batch may not name one key twice
            rendered = list(entries.values())
        if self.operation == "BatchGetItem":
            body: dict[str, Any] = {"Keys": rendered}
            if self.requests and self.requests[0].request.get("ConsistentRead"):
                body["ConsistentRead"] = True
            params: dict[str, Any] = {"RequestItems": {self.table: body}}
        else:
            params = {
                "RequestItems": {self.table: [{"PutRequest": {"Item": item}} for item in rendered]}
            }
        return call_of(self.operation, params, self.schemas)


def _text(value: Mapping[str, Any] | None) -> str | None:
    if not value:
        return None
    key = key_value(value)
    return key if isinstance(key, str) else key.hex()


def call_of(operation: str, params: dict[str, Any], schemas: Mapping[str, TableSchema]) -> Call:
    """A built request with the table, index and partition keys it touches."""
    if operation in ("BatchGetItem", "BatchWriteItem"):
        table = next(iter(params["RequestItems"]))
        schema = schemas[table]
        keys: list[str] = []
        for name, body in params["RequestItems"].items():
            table_schema = schemas[name]
            rows = body["Keys"] if operation == "BatchGetItem" else body
            for row in rows:
                item = row if operation == "BatchGetItem" else next(iter(row.values()))
                item = item.get("Item") or item.get("Key") or item
                keys.append(_text(item.get(table_schema.partition_key)) or "")
        return Call(operation, params, schema.name, None, None, None, keys)
    if operation in ("TransactGetItems", "TransactWriteItems"):
        keys = []
        table = ""
        for action in params["TransactItems"]:
            ((_, body),) = action.items()
            action_schema = schemas[body["TableName"]]
            table = table or action_schema.name
            item = body.get("Key") or body.get("Item") or {}
            keys.append(_text(item.get(action_schema.partition_key)) or "")
        return Call(operation, params, table, None, None, None, keys)
    schema = schemas[params["TableName"]]
    index_name = params.get("IndexName")
    owner: TableSchema | IndexSchema = schema.index(index_name) if index_name else schema
    if operation == "Query":
        value = query_key(params, owner.partition_key)
        pk = None if value is None else value if isinstance(value, str) else value.hex()
        return Call(operation, params, schema.name, index_name, pk, None, None)
    if operation == "Scan":
        return Call(operation, params, schema.name, index_name, None, None, None)
    item = params.get("Key") or params.get("Item") or {}
    sort = _text(item.get(schema.sort_key)) if schema.sort_key else None
    return Call(
        operation, params, schema.name, None, _text(item.get(schema.partition_key)), sort, None
    )


class _Expression:
    """ExpressionAttributeNames and Values: the file's own (``names:``, ``values:``), then
    those the compiler adds, numbered as they are added (``#n0``, ``:v0``) around the file's."""

    def __init__(
        self, names: Mapping[str, str] | None = None, values: Mapping[str, Any] | None = None
    ) -> None:
        self.names: dict[str, str] = dict(names or {})
        self.values: dict[str, Any] = dict(values or {})
        self.taken: set[str] = set()
        """Placeholders an action of a transaction took (`share`)."""

    def name(self, attribute: str) -> str:
        for placeholder, name in self.names.items():
            if name == attribute:
                return placeholder
        placeholder = _free("#n", self.names)
        self.names[placeholder] = attribute
        return placeholder

    def value(self, typed: dict[str, Any]) -> str:
        placeholder = _free(":v", self.values)
        self.values[placeholder] = typed
        return placeholder

    def share(self, pattern: _Expression, body: Mapping[str, Any]) -> None:
        """Take the pattern's names and values that ``body``'s expressions name (an action of
        a transaction), where the action gives none of its own by that placeholder."""
        text = " ".join(str(body.get(kind) or "") for kind in EXPRESSION_ORDER)
        for placeholder in _PLACEHOLDERS.findall(text):
            source = pattern.names if placeholder[0] == "#" else pattern.values
            target = self.names if placeholder[0] == "#" else self.values
            if placeholder in source and placeholder not in target:
                target[placeholder] = source[placeholder]
                pattern.taken.add(placeholder)

    def into(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.names:
            request["ExpressionAttributeNames"] = self.names
        if self.values:
            request["ExpressionAttributeValues"] = self.values
        return request


def _free(prefix: str, taken: Mapping[str, Any]) -> str:
    """The first of ``prefix0``, ``prefix1``, ... not taken (the file may name ``:v0`` too)."""
    n = len(taken)
    while f"{prefix}{n}" in taken:
        n += 1
    return f"{prefix}{n}"


class _Compiler:
    def __init__(
        self,
        path: str,
        tables: Mapping[str, TableSchema],
        entities: Mapping[str, Entity],
    ) -> None:
        self.path = path
        self.tables = tables
        self.entities = entities

    def fail(self, field_path: str, message: str) -> DesignError:
        return DesignError(f"{self.path}{field_path}", message)

    def table(self, name: str | None, entity: str | None, where: str = "") -> TableSchema:
        if name is None and entity is not None:
            name = self.entity(entity, where).table
        if name is None:
            if len(self.tables) == 1:
                return next(iter(self.tables.values()))
            raise self.fail(
                f"{where}.table",
                f"name a table: the design has {len(self.tables)} ({', '.join(self.tables)})",
            )
        schema = self.tables.get(name)
        if schema is None:
            raise self.fail(
                f"{where}.table", f"unknown table {name!r} (known: {', '.join(self.tables)})"
            )
        return schema

    def entity(self, name: str, where: str = "") -> Entity:
        entity = self.entities.get(name)
        if entity is None:
            known = ", ".join(self.entities) or "none defined"
            raise self.fail(f"{where}.entity", f"unknown entity {name!r} (known: {known})")
        return entity

    def types(self, schema: TableSchema) -> dict[str, str]:
        return dict(schema.attribute_types)

    def key(
        self,
        schema: TableSchema,
        key: Mapping[str, str] | None,
        entity: str | None,
        where: str,
    ) -> dict[str, Any]:
        """A full primary key of ``schema`` from ``key`` or the entity's item."""
        source: Mapping[str, Any]
        field_path = f"{where}.key"
        if key is not None:
            source = key
        elif entity is not None:
            source = self.entity(entity, where).item
            field_path = f"{where}.entity"
        else:
            raise self.fail(field_path, f"give the key ({', '.join(schema.key_attributes)})")
        for attribute in schema.key_attributes:
            if attribute not in source:
                raise self.fail(
                    field_path,
                    f"missing key attribute {attribute!r} of table {schema.name!r} "
                    f"(its key: {', '.join(schema.key_attributes)})",
                )
        extra = [a for a in (key or {}) if a not in schema.key_attributes]
        if extra:
            raise self.fail(
                f"{where}.key.{extra[0]}",
                f"{extra[0]!r} is not a key attribute of table {schema.name!r} "
                f"(its key: {', '.join(schema.key_attributes)})",
            )
        types = self.types(schema)
        return {
            a: typed_value(source[a], f"{self.path}{field_path}.{a}", types.get(a))
            for a in schema.key_attributes
        }

    def item(self, schema: TableSchema, entity_name: str, where: str) -> dict[str, Any]:
        entity = self.entity(entity_name, where)
        if entity.table is not None and entity.table != schema.name:
            raise self.fail(
                f"{where}.table",
                f"entity {entity_name!r} lives in table {entity.table!r}, not {schema.name!r}",
            )
        self.key(schema, None, entity_name, where)  # every key attribute is there
        types = self.types(schema)
        return {
            attribute: typed_value(
                value, f"{self.path}.entities.{entity_name}.{attribute}", types.get(attribute)
            )
            for attribute, value in entity.item.items()
        }

    def update(
        self,
        schema: TableSchema,
        given: Action | AccessPattern,
        expression: _Expression,
        where: str,
    ) -> str:
        """The UpdateExpression: the file's own (``update``), or SET and ADD clauses of
        ``set`` and ``add``."""
        sets, adds = given.set, given.add
        if given.update is not None:
            if sets or adds:
                raise self.fail(
                    f"{where}.update", "give the update expression or set and add, not both"
                )
            return given.update
        types = self.types(schema)
        clauses: list[str] = []
        if sets:
            parts = []
            for attribute, value in sets.items():
                if attribute in schema.key_attributes:
                    raise self.fail(
                        f"{where}.set.{attribute}",
                        f"an update cannot change the key attribute {attribute!r}",
                    )
                typed = typed_value(
                    value, f"{self.path}{where}.set.{attribute}", types.get(attribute)
                )
                parts.append(f"{expression.name(attribute)} = {expression.value(typed)}")
            clauses.append("SET " + ", ".join(parts))
        if adds:
            parts = [
                f"{expression.name(a)} {expression.value({'N': _number_text(n)})}"
                for a, n in adds.items()
            ]
            clauses.append("ADD " + ", ".join(parts))
        if not clauses:
            raise self.fail(where, "an update needs set, add or its update expression")
        return " ".join(clauses)

    def expression(self, given: Action | AccessPattern, where: str) -> _Expression:
        """The file's own names and values, typed, for the compiler to add its own to."""
        values = {
            placeholder: typed_value(value, f"{self.path}{where}.values.{placeholder}")
            for placeholder, value in (given.values or {}).items()
        }
        for member, sigil, mapping in (("values", ":", values), ("names", "#", given.names)):
            for placeholder in mapping or {}:
                if not placeholder.startswith(sigil) or len(placeholder) < 2:
                    raise self.fail(
                        f"{where}.{member}.{placeholder}",
                        f"a placeholder in {member} starts with {sigil!r}, as the expressions "
                        f"name it (e.g. {sigil}{placeholder.lstrip(':#') or 'x'})",
                    )
        return _Expression(given.names, values)

    def sort(
        self,
        owner: TableSchema | IndexSchema,
        condition: SortCondition,
        expression: _Expression,
        where: str,
    ) -> str:
        if owner.sort_key is None:
            raise self.fail(f"{where}.sort_key", f"{owner.name!r} has no sort key")
        given = {k: v for k, v in condition.model_dump().items() if v is not None}
        if len(given) != 1:
            raise self.fail(
                f"{where}.sort_key",
                "give exactly one of eq, begins_with, between, lt, le, gt, ge "
                f"(got {sorted(given)})",
            )
        ((kind, value),) = given.items()
        name = expression.name(owner.sort_key)
        types = self.types(self.tables[owner.name]) if isinstance(owner, TableSchema) else {}
        kind_type = types.get(owner.sort_key) or self._attribute_type(owner.sort_key)

        def placeholder(text: str) -> str:
            return expression.value({kind_type: text})

        if kind == "begins_with":
            return f"begins_with({name}, {placeholder(value)})"
        if kind == "between":
            return f"{name} BETWEEN {placeholder(value[0])} AND {placeholder(value[1])}"
        symbol = {"eq": "=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[kind]
        return f"{name} {symbol} {placeholder(value)}"

    def _attribute_type(self, attribute: str) -> str:
        for schema in self.tables.values():
            found = dict(schema.attribute_types).get(attribute)
            if found:
                return found
        return "S"

    def projection(
        self, request: dict[str, Any], attributes: list[str] | None, expression: _Expression
    ) -> None:
        if attributes:
            request["ProjectionExpression"] = ", ".join(expression.name(a) for a in attributes)

    def action(
        self, action: Action, where: str, shared: _Expression | None = None
    ) -> dict[str, Any]:
        """One action of a transaction; ``shared``: the pattern's own names and values, of
        which the action takes those its expressions name."""
        schema = self.table(action.table, action.entity, where)
        body: dict[str, Any] = {"TableName": schema.name}
        expression = self.expression(action, where)
        if action.update is not None and action.operation != "Update":
            raise self.fail(f"{where}.update", f"a {action.operation} action takes no update")
        if action.operation == "Put":
            if action.entity is None:
                raise self.fail(f"{where}.entity", "a Put action needs the entity it writes")
            body["Item"] = self.item(schema, action.entity, where)
        else:
            body["Key"] = self.key(schema, action.key, action.entity, where)
        if action.operation == "Update":
            body["UpdateExpression"] = self.update(schema, action, expression, where)
        if action.condition:
            body["ConditionExpression"] = action.condition
        elif action.operation == "ConditionCheck":
            raise self.fail(f"{where}.condition", "a ConditionCheck needs its condition")
        if shared is not None:
            expression.share(shared, body)
        return {action.operation: expression.into(body)}


def compile_pattern(
    pattern: AccessPattern,
    position: int,
    *,
    tables: Mapping[str, TableSchema],
    entities: Mapping[str, Entity],
    generators: Mapping[str, ValueGenerator],
    rate: float,
    latency: Any,
) -> CompiledPattern:
    """The executable form of ``pattern`` (the ``position``-th of the design's list); errors
    name it by its id (``access_patterns.purchase.condition``)."""
    where = f"access_patterns.{pattern.id}"
    compiler = _Compiler("", tables, entities)
    op = pattern.operation
    schema = compiler.table(pattern.table, pattern.entity, where)
    index: IndexSchema | None = None
    if pattern.index is not None:
        known = [i.name for i in schema.indexes]
        if pattern.index not in known:
            raise compiler.fail(
                f"{where}.index",
                f"table {schema.name!r} has no index {pattern.index!r} "
                f"(its indexes: {', '.join(known) or 'none'})",
            )
        if op not in ("Query", "Scan"):
            raise compiler.fail(f"{where}.index", f"{op} reads the table, not an index")
        index = schema.index(pattern.index)
    compiled = CompiledPattern(
        id=pattern.id,
        description=pattern.description,
        operation=op,
        table=schema.name,
        index=pattern.index,
        rate=rate,
        latency=latency,
        requests=[],
        schemas=tables,
        each=pattern.each,
        count=pattern.count or 1,
    )
    _fields_of(pattern, compiler, where)
    expression = compiler.expression(pattern, where)
    request: dict[str, Any] = {"TableName": schema.name}
    if pattern.request is not None:
        request = dict(pattern.request)
        if op in _SINGLE_TABLE:  # a batch or transaction names its tables inside
            request.setdefault("TableName", schema.name)
    elif op == "GetItem":
        request["Key"] = compiler.key(schema, pattern.key, pattern.entity, where)
        compiler.projection(request, pattern.projection, expression)
    elif op == "PutItem":
        if pattern.entity is None:
            raise compiler.fail(f"{where}.entity", "a PutItem needs the entity it writes")
        request["Item"] = compiler.item(schema, pattern.entity, where)
    elif op in ("UpdateItem", "DeleteItem"):
        request["Key"] = compiler.key(schema, pattern.key, pattern.entity, where)
        if op == "UpdateItem":
            request["UpdateExpression"] = compiler.update(schema, pattern, expression, where)
    elif op == "Query":
        owner: TableSchema | IndexSchema = index or schema
        key = pattern.key or {}
        if owner.partition_key not in key:
            raise compiler.fail(
                f"{where}.key",
                f"missing key attribute {owner.partition_key!r}: a Query names the partition "
                f"key of {owner.name!r}",
            )
        extra = [a for a in key if a != owner.partition_key]
        if extra:
            raise compiler.fail(
                f"{where}.key.{extra[0]}",
                f"a Query's key names only the partition key {owner.partition_key!r}; "
                "put sort-key conditions under sort_key",
            )
        key_type = compiler._attribute_type(owner.partition_key)
        condition = (
            f"{expression.name(owner.partition_key)} = "
            f"{expression.value({key_type: key[owner.partition_key]})}"
        )
        if pattern.sort_key is not None:
            condition += " AND " + compiler.sort(owner, pattern.sort_key, expression, where)
        request["KeyConditionExpression"] = condition
        if index is not None:
            request["IndexName"] = index.name
        if not pattern.forward:
            request["ScanIndexForward"] = False
        compiler.projection(request, pattern.projection, expression)
    elif op == "Scan":
        if index is not None:
            request["IndexName"] = index.name
        compiler.projection(request, pattern.projection, expression)
    elif op == "BatchGetItem":
        compiled.key_templates = [compiler.key(schema, pattern.key, pattern.entity, where)]
        if pattern.each is None and pattern.count is None:
            raise compiler.fail(where, "a BatchGetItem reads count keys, or every value of each")
    elif op == "BatchWriteItem":
        if pattern.entity is None:
            raise compiler.fail(f"{where}.entity", "a BatchWriteItem needs the entity it writes")
        compiled.key_templates = [compiler.item(schema, pattern.entity, where)]
        if pattern.each is None and pattern.count is None:
            raise compiler.fail(where, "a BatchWriteItem writes count items, or one per each")
    else:  # transactions
        if not pattern.actions:
            raise compiler.fail(f"{where}.actions", f"a {op} needs its actions")
        gets = op == "TransactGetItems"
        actions = []
        for i, action in enumerate(pattern.actions):
            if (action.operation == "Get") != gets:
                raise compiler.fail(
                    f"{where}.actions[{i}].operation",
                    f"{op} takes {'Get' if gets else 'Put, Update, Delete or ConditionCheck'}"
                    f" actions (got {action.operation})",
                )
            actions.append(compiler.action(action, f"{where}.actions[{i}]", expression))
        unused = sorted((set(expression.names) | set(expression.values)) - expression.taken)
        if unused:
            member = "names" if unused[0][0] == "#" else "values"
            raise compiler.fail(
                f"{where}.{member}.{unused[0]}",
                f"{unused[0]} is named by no action's expression (each action takes the "
                "pattern's names and values its own expressions name)",
            )
        request = {"TransactItems": actions}
    if pattern.request is None and op in _SINGLE_TABLE:
        if pattern.limit is not None and op in ("Query", "Scan"):
            request["Limit"] = pattern.limit
        if pattern.consistent and op in ("GetItem", "Query", "Scan"):
            request["ConsistentRead"] = True
        if pattern.condition:
            request["ConditionExpression"] = pattern.condition
        if pattern.filter:
            request["FilterExpression"] = pattern.filter
        expression.into(request)
    if op == "BatchGetItem" and pattern.consistent:
        request["ConsistentRead"] = True
    compiled.requests = [RequestTemplate(request)]
    unknown = sorted(n for n in compiled.names if n not in generators and not n.startswith("_"))
    if unknown:  # the first unknown name, where it is written
        names = ", ".join(sorted(n for n in generators if not n.startswith("_")))
        raise compiler.fail(
            _placeholder_path(pattern, entities, unknown[0], where),
            f"unknown generator {unknown[0]!r} (known: {names or 'none defined'})",
        )
    if pattern.each is not None:
        values = generators[pattern.each].values()
        if values is None or len(values) > 1000:
            raise compiler.fail(
                f"{where}.each",
                f"generator {pattern.each!r} has no short list of values to run over "
                "(each takes a shard, a choice or a count of at most 1,000)",
            )
        compiled.each_values = values
    # What one request carries: a batch's keys or items (each value's, or count), a
    # transaction's actions; DynamoDB refuses a request past its limit whatever its values.
    if op in ("BatchGetItem", "BatchWriteItem"):
        carried, field_name = (
            (len(compiled.each_values), "each") if pattern.each else (compiled.count, "count")
        )
    else:
        carried, field_name = len(pattern.actions or ()), "actions"
    problem = too_many(op, carried) if pattern.request is None else None
    if problem is not None:
        raise compiler.fail(f"{where}.{field_name}", problem)
    return compiled


_FIELDS_FOR = {
    "condition": (_CONDITIONED, "a ConditionExpression"),
    "filter": (frozenset({"Query", "Scan"}), "a FilterExpression"),
    "update": (frozenset({"UpdateItem"}), "an UpdateExpression"),
    "set": (frozenset({"UpdateItem"}), "set"),
    "add": (frozenset({"UpdateItem"}), "add"),
    "values": (frozenset(_SINGLE_TABLE | {"TransactWriteItems"}), "expression values"),
    "names": (
        frozenset(_SINGLE_TABLE | {"TransactWriteItems", "TransactGetItems"}),
        "expression names",
    ),
}
"""Fields that only some operations take, and what DynamoDB calls them."""


def _fields_of(pattern: AccessPattern, compiler: _Compiler, where: str) -> None:
    """Refuse a field the pattern's operation has no use for (a condition on a Query would be
    ignored by DynamoDB, and its values then refused as unused)."""
    for name, (operations, what) in _FIELDS_FOR.items():
        if getattr(pattern, name) is not None and pattern.operation not in operations:
            raise compiler.fail(f"{where}.{name}", f"a {pattern.operation} takes no {what}")
    if pattern.request is not None:
        given = [n for n in ("values", "names") if getattr(pattern, n) is not None]
        if given:
            raise compiler.fail(
                f"{where}.{given[0]}",
                "a pattern given as a request carries its ExpressionAttribute"
                f"{'Values' if given[0] == 'values' else 'Names'} inside the request",
            )


def _placeholder_path(
    pattern: AccessPattern, entities: Mapping[str, Entity], name: str, where: str
) -> str:
    """Where ``{name}`` is written: the pattern's field, or the entity's attribute."""
    needle = "{" + name + "}"

    def find(value: Any, path: str) -> str | None:
        if isinstance(value, str):
            return path if needle in value.replace(" ", "") else None
        if isinstance(value, Mapping):
            for key, item in value.items():
                found = find(item, f"{path}.{key}")
                if found:
                    return found
        if isinstance(value, list | tuple):
            for i, item in enumerate(value):
                found = find(item, f"{path}[{i}]")
                if found:
                    return found
        return None

    found = find(pattern.model_dump(exclude_none=True), where)
    if found:
        return found
    for entity_name, entity in entities.items():
        found = find(entity.item, f"entities.{entity_name}.item")
        if found:
            return found
    return f"{where}.each" if pattern.each == name else where
