"""Reading a design file: shapes first, then what needs the whole file, then each variant.

    design = load_design("examples/designs/ecommerce.yaml")          # the first variant
    designs = load_designs("examples/designs/single-table.yaml")     # every variant

Errors are one line, the file, the path to the field (an access pattern by its id) and what
was expected: ``design.yaml: access_patterns.get-order.key.pk: unknown generator 'usr'
(known: user, status, day)``, raised as `ConfigError` (exit 2) before anything starts. Every
pattern is compiled and its requests read as DynamoDB reads them
(`loadgen.design.expressions`) at load, so ``check``, ``run`` and ``simulate`` refuse alike.
An error in the file's base names no variant; one a variant brings names it
(``designs.sharded: ...``). AWS's ``dynamodb_data_model.json`` is read as it is
(`loadgen.design.awsmodel`).
"""

from __future__ import annotations

import json
import math
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from loadgen.design.expressions import refusal, unknown_attributes, unwritten_indexes
from loadgen.design.generators import RunClock, ValueGenerator, build_generators, kinds_given
from loadgen.design.limits import size_notes, size_refusal
from loadgen.design.patterns import (
    CompiledPattern,
    DesignError,
    compile_pattern,
    implicit_generator,
)
from loadgen.design.spec import AccessPattern, DesignFile
from loadgen.design.templates import TemplateError, template_names
from loadgen.design.values import LatencyNeed, latency_need, rate_per_s
from loadgen.design.variants import variant_data
from loadgen.errors import ConfigError
from loadgen.model.schema import IndexSchema, TableSchema

__all__ = [
    "DEFAULT_RATE",
    "Design",
    "design_of",
    "is_design_file",
    "load_design",
    "load_designs",
    "variant_source",
]

DEFAULT_RATE = 10.0
"""Operations/s of a pattern that names no rate in a file with no default (AWS's data-model
JSON has no traffic): stated by the run and by ``loadgen check``."""

_SUFFIXES = (".yaml", ".yml", ".json")


def is_design_file(name: str) -> bool:
    """Whether ``name`` names a design file (by its suffix) rather than a workload."""
    return name.lower().endswith(_SUFFIXES)


@dataclass
class Design:
    """One variant of a design file, validated and ready to compile for a run."""

    path: str
    name: str
    """The variant's name (``default`` for a file without ``designs``)."""
    variants: tuple[str, ...]
    """Every variant the file names, this one among them."""
    spec: DesignFile
    table_requests: list[dict[str, Any]]
    schemas: dict[str, TableSchema]
    rates: dict[str, float]
    """Pattern id to executions/s at launch (AWS scale)."""
    latency: dict[str, LatencyNeed | None]
    notes: list[str] = field(default_factory=list)
    """What the file left out and the run states (a default rate, skipped patterns)."""

    @property
    def title(self) -> str:
        return self.spec.name or Path(self.path).stem

    @property
    def patterns(self) -> list[AccessPattern]:
        return self.spec.access_patterns

    def generators(
        self,
        *,
        seed: int = 1,
        stream: int = 0,
        default_distribution: str = "zipf:0.99",
        clock: RunClock | None = None,
    ) -> dict[str, ValueGenerator]:
        """The file's generators and the implicit ones its values use, seeded for a stream."""
        built = build_generators(
            self.spec.generators,
            default_distribution=default_distribution,
            seed=seed,
            stream=stream,
            clock=clock or RunClock(self.spec.clock_speed),
        )
        for name in sorted(self._implicit_names()):
            built[name] = implicit_generator(name, seed * 1_000_003 + stream + len(built))
        return built

    def _implicit_names(self) -> set[str]:
        names: set[str] = set()
        for entity in self.spec.entities.values():
            names |= _implicit_in(entity.item)
            names |= {n for n in entity.population if n.startswith("_items")}
        for pattern in self.spec.access_patterns:
            names |= _implicit_in(pattern.set or {})
            for action in pattern.actions or ():
                names |= _implicit_in(action.set or {})
        return names

    def compile(self, generators: Mapping[str, ValueGenerator]) -> dict[str, CompiledPattern]:
        """Every access pattern, compiled against these generators, by id; `ConfigError` for
        a pattern that does not build or whose requests DynamoDB would refuse."""
        compiled = {}
        for i, pattern in enumerate(self.spec.access_patterns):
            try:
                compiled[pattern.id] = compile_pattern(
                    pattern,
                    i,
                    tables=self.schemas,
                    entities=self.spec.entities,
                    generators=generators,
                    rate=self.rates[pattern.id],
                    latency=self.latency[pattern.id],
                )
            except (DesignError, TemplateError) as e:
                raise ConfigError(f"{self._where()}{e}") from None
            found = refusal(compiled[pattern.id], pattern, self.schemas)
            if found is not None:
                field_name, message = found
                raise ConfigError(
                    f"{self._where()}access_patterns.{pattern.id}.{field_name}: {message}"
                )
        return compiled

    def label(self, pattern_id: str) -> str:
        """A pattern as a table row names it: its id, and for AWS's data model (whose ids
        are numbers) its description too."""
        if not self.aws_model:
            return pattern_id
        described = next((p.description for p in self.patterns if p.id == pattern_id), "")
        return f"{pattern_id}. {described}" if described else pattern_id

    def _where(self) -> str:
        return f"{self.path}: " + (f"designs.{self.name}: " if self.spec_changed else "")

    spec_changed: bool = False
    """Whether this variant changes the file's base (errors then name the variant)."""
    aws_model: bool = False
    """Whether the file is AWS's ``dynamodb_data_model.json`` (patterns numbered, described)."""


def _implicit_in(values: Mapping[str, Any]) -> set[str]:
    from loadgen.design.patterns import typed_value

    names: set[str] = set()
    for attribute, value in values.items():
        if isinstance(value, Mapping):
            try:
                typed = typed_value(value, attribute)
            except DesignError:
                continue
            names |= {n for n in template_names(typed) if n.startswith("_")}
    return names


_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's parser where PyYAML has it (its wheels do), else PyYAML's own: the same safe
loading, the same data, about ten times faster (a 100-action design file: 0.08 s to 0.009 s)."""


def read_file(path: str) -> Any:
    """A design file's data: YAML, or JSON with the same fields."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read design file {path!r}: {e.strerror}") from None
    try:
        if file.suffix.lower() == ".json":
            return json.loads(text)
        return yaml.load(text, Loader=_YAML_LOADER)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        what = ", ".join(str(part) for part in (e.context, e.problem) if part)
        raise ConfigError(f"{path}: not valid YAML{at}: {what[:200]}") from None
    except (ValueError, yaml.YAMLError) as e:
        first = str(e).strip().splitlines()
        raise ConfigError(
            f"{path}: not valid {file.suffix[1:].upper()}: {' '.join(first)[:200]}"
        ) from None


def _path(loc: tuple[Any, ...], ids: list[str | None] | None = None) -> str:
    """A validation error's location as the file's path to it, an access pattern by its id
    where it has one (``access_patterns.get-order.limt``)."""
    text = ""
    for i, part in enumerate(loc):
        if isinstance(part, int):
            pattern = loc[:i] == ("access_patterns",) and ids and part < len(ids)
            named = ids[part] if pattern and ids else None
            text += f".{named}" if named else f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _ids(data: Any) -> list[str | None]:
    """Each access pattern's id as the file gives it (None where it gives none)."""
    patterns = data.get("access_patterns") if isinstance(data, dict) else None
    return [
        p["id"] if isinstance(p, dict) and isinstance(p.get("id"), str) and p["id"] else None
        for p in (patterns if isinstance(patterns, list) else ())
    ]


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model a validation error's location points into (for 'known fields')."""
    current: Any = DesignFile
    for part in loc:
        if isinstance(current, type) and issubclass(current, BaseModel):
            info = current.model_fields.get(str(part))
            if info is None:
                return current
            current = info.annotation
        else:
            current = _unwrap(current)
            if isinstance(current, type) and issubclass(current, BaseModel):
                info = current.model_fields.get(str(part))
                current = info.annotation if info else current
    current = _unwrap(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _unwrap(annotation: Any) -> Any:
    for _ in range(4):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
        if models:
            return models[0]
        nested = [a for a in args if typing.get_args(a)]
        if not nested:
            return annotation
        annotation = nested[-1]
    return annotation


def _in_file(loc: tuple[Any, ...], data: Any, *, missing: bool = False) -> tuple[Any, ...]:
    """A validation error's location with only the steps the file has: a union's errors put
    the branch tried in it (``dict[str,union[int,literal['all']]]``, ``int``), which no file
    has. A ``missing`` field's last step stays, though the file lacks it by definition."""
    kept: list[Any] = []
    current = data
    for i, part in enumerate(loc):
        within = (isinstance(current, dict) and part in current) or (
            isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current)
        )
        if within:
            current = current[part]
        elif not (missing and i == len(loc) - 1):
            continue
        kept.append(part)
    return tuple(kept)


def _first_error(error: ValidationError, data: Any) -> str:
    ids = _ids(data)
    details = error.errors()
    detail = details[0]
    kind = detail["type"]
    loc = _in_file(tuple(detail["loc"]), data, missing=kind == "missing")
    if kind == "extra_forbidden":
        model = _model_at(loc[:-1])
        known = ", ".join(model.model_fields) if model else ""
        where = _path(loc[:-1], ids) or "(top level)"
        return f"{where}: unknown field {loc[-1]!r}" + (f" (known: {known})" if known else "")
    if kind == "missing":
        return f"{_path(loc, ids)}: required field missing"
    # Unions report one error per branch: the first names the most likely intent.
    value = detail.get("input")
    shown = "" if isinstance(value, dict | list) else f" (got {value!r})"
    return f"{_path(loc, ids)}: {detail['msg'][0].lower()}{detail['msg'][1:]}{shown}"


def _validated(data: Any, path: str, prefix: str = "") -> DesignFile:
    try:
        return DesignFile.model_validate(data)
    except ValidationError as e:
        raise ConfigError(f"{path}: {prefix}{_first_error(e, data)}") from None


def _check(
    spec: DesignFile, path: str, prefix: str
) -> tuple[list[dict[str, Any]], dict[str, TableSchema]]:
    where = f"{path}: {prefix}"
    requests: list[dict[str, Any]] = []
    schemas: dict[str, TableSchema] = {}
    for i, table in enumerate(spec.tables):
        try:
            schema = TableSchema.from_create_table({"BillingMode": "PAY_PER_REQUEST", **table})
        except (ConfigError, KeyError, TypeError, ValueError) as e:
            raise ConfigError(f"{where}tables[{i}]: {e}") from None
        defined = dict(schema.attribute_types)
        owners: list[TableSchema | IndexSchema] = [schema, *schema.indexes]
        for owner in owners:
            for attribute in owner.key_attributes:
                if attribute not in defined:
                    raise ConfigError(
                        f"{where}tables[{i}].AttributeDefinitions: no definition of key "
                        f"attribute {attribute!r} of {owner.name!r}"
                    )
        if schema.name in schemas:
            raise ConfigError(f"{where}tables[{i}].TableName: table {schema.name!r} twice")
        requests.append({"BillingMode": "PAY_PER_REQUEST", **table})
        schemas[schema.name] = schema
    for name, generator in spec.generators.items():
        kinds = kinds_given(generator)
        if len(kinds) != 1:
            raise ConfigError(
                f"{where}generators.{name}: give exactly one of count, choice, shard, time, "
                f"sequence, id (got {', '.join(kinds) or 'none'})"
            )
        if generator.choice is not None and (
            not generator.choice or any(not w > 0 for w in generator.choice.values())
        ):
            raise ConfigError(f"{where}generators.{name}.choice: weights must be more than 0")
        if generator.named is not None:
            _check_named(generator.named, generator.count, f"{where}generators.{name}.named")
        if generator.distribution is not None:
            from loadgen.design import keys

            try:
                keys.validate_spec(generator.distribution)
            except ConfigError as e:
                raise ConfigError(f"{where}generators.{name}.distribution: {e}") from None
    for name, entity in spec.entities.items():
        if entity.table is not None and entity.table not in schemas:
            raise ConfigError(
                f"{where}entities.{name}.table: unknown table {entity.table!r} "
                f"(known: {', '.join(schemas)})"
            )
        for attribute, value in entity.item.items():
            try:
                template_names(value)
            except TemplateError as e:
                raise ConfigError(f"{where}entities.{name}.item.{attribute}: {e}") from None
        for populated in entity.population:
            if populated not in spec.generators and not populated.startswith("_items"):
                raise ConfigError(
                    f"{where}entities.{name}.populate.{populated}: unknown generator "
                    f"{populated!r} (known: {', '.join(spec.generators) or 'none defined'})"
                )
    ids: dict[str, int] = {}
    for i, pattern in enumerate(spec.access_patterns):
        if pattern.id in ids:
            raise ConfigError(
                f"{where}access_patterns[{i}].id: {pattern.id!r} twice (also "
                f"access_patterns[{ids[pattern.id]}]): an id names one pattern"
            )
        ids[pattern.id] = i
        for field_name in ("key", "set", "request"):
            value = getattr(pattern, field_name)
            if value is None:
                continue
            for attribute, item in value.items() if isinstance(value, dict) else ():
                try:
                    template_names(item)
                except TemplateError as e:
                    raise ConfigError(
                        f"{where}access_patterns.{pattern.id}.{field_name}.{attribute}: {e}"
                    ) from None
        if pattern.each is not None and pattern.each not in spec.generators:
            raise ConfigError(
                f"{where}access_patterns.{pattern.id}.each: unknown generator {pattern.each!r} "
                f"(known: {', '.join(spec.generators) or 'none defined'})"
            )
    return requests, schemas


def _check_named(named: Mapping[str, float], count: int | None, where: str) -> None:
    """Named values: beside a count, each a share above 0, less than 1 in all, none of them
    one of the count's own values."""
    if count is None:
        raise ConfigError(
            f"{where}: named values go with count (they take their shares, the count's "
            "distribution the rest; a choice gives every value a weight)"
        )
    if not named:
        raise ConfigError(f"{where}: give at least one value and its share, e.g. {{taylor: 0.4}}")
    for value, share in named.items():
        if not 0 < share < 1:
            raise ConfigError(
                f"{where}.{value}: a share is more than 0 and less than 1 (got {share!r})"
            )
        if value.isdigit() and int(value) < count and str(int(value)) == value:
            raise ConfigError(
                f"{where}.{value}: {value!r} is one of the count's own values 0..{count - 1}"
            )
    total = math.fsum(named.values())
    if not total < 1:
        raise ConfigError(
            f"{where}: the shares add up to {total:g}, leaving the count's {count:,} values "
            "nothing (keep them under 1 in all, or use a choice)"
        )


def _rates(
    spec: DesignFile, path: str, prefix: str
) -> tuple[dict[str, float], dict[str, LatencyNeed | None], list[str]]:
    where = f"{path}: {prefix}"
    notes: list[str] = []
    default: float | None = None
    if spec.default_rate is not None:
        try:
            default = rate_per_s(spec.default_rate)
        except ValueError as e:
            raise ConfigError(f"{where}default_rate: {e}") from None
    rates: dict[str, float] = {}
    needs: dict[str, LatencyNeed | None] = {}
    missing: list[str] = []
    for pattern in spec.access_patterns:
        if pattern.rate is None:
            missing.append(pattern.id)
            rates[pattern.id] = default if default is not None else DEFAULT_RATE
        else:
            try:
                rates[pattern.id] = rate_per_s(pattern.rate)
            except ValueError as e:
                raise ConfigError(f"{where}access_patterns.{pattern.id}.rate: {e}") from None
        try:
            needs[pattern.id] = latency_need(pattern.latency) if pattern.latency else None
        except ValueError as e:
            raise ConfigError(f"{where}access_patterns.{pattern.id}.latency: {e}") from None
    if missing:
        rate = default if default is not None else DEFAULT_RATE
        source = "the file's default_rate" if default is not None else "no rate in the file"
        notes.append(
            f"{len(missing)} pattern(s) run at {rate:g}/s ({source}): {', '.join(missing)}"
        )
    return rates, needs, notes


def load_designs(path: str) -> list[Design]:
    """Every variant of a design file, each validated and compiled once to find errors."""
    data = read_file(path)
    notes: list[str] = []
    from loadgen.design import awsmodel

    aws = awsmodel.is_aws_model(data)
    if aws:
        data, notes = awsmodel.to_design(data, path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping with tables and access_patterns")
    base = _validated(data, path)
    names = tuple(base.designs) or ("default",)
    if not base.designs:
        return [_design(path, "default", names, base, notes, changed=False, aws=aws)]
    # The base alone: an error in it is the base's, whichever variant meets it first.
    try:
        without = {key: value for key, value in data.items() if key != "designs"}
        _design(path, "base", names, _validated(without, path), notes, changed=False, aws=aws)
        base_error: ConfigError | None = None
    except ConfigError as e:
        base_error = e
    designs = []
    for name in names:
        changed = bool(base.designs[name].model_dump(exclude_none=True, exclude_defaults=True))
        prefix = f"designs.{name}: " if changed else ""
        try:
            try:
                variant = variant_data(data, name, base.designs[name].model_dump(exclude_none=True))
            except ConfigError as e:
                raise ConfigError(f"{path}: {e}") from None
            spec = _validated(variant, path, prefix)
            designs.append(_design(path, name, names, spec, notes, changed=changed, aws=aws))
        except ConfigError as e:
            if base_error is not None and str(e).replace(prefix, "", 1) == str(base_error):
                raise base_error from None
            raise
    return designs


def variant_source(design: Design) -> tuple[dict[str, Any], dict[str, Any]]:
    """The file's data as ``design`` reads it (its variant's changes made, no ``designs``)
    and the variant's own changes, as the file gives them."""
    data = read_file(design.path)
    if design.aws_model:
        from loadgen.design import awsmodel

        data, _ = awsmodel.to_design(data, design.path)
    base = _validated(data, design.path)
    if design.name not in base.designs:
        return {k: v for k, v in data.items() if k != "designs"}, {}
    change = base.designs[design.name].model_dump(exclude_none=True)
    return variant_data(data, design.name, change), change


def design_of(design: Design, name: str, data: dict[str, Any]) -> Design:
    """A variant ``name`` of ``design``'s file whose data (no ``designs``) is ``data``:
    validated and compiled as a variant the file names is."""
    names = (*design.variants, name)
    spec = _validated(data, design.path, f"designs.{name}: ")
    return _design(design.path, name, names, spec, [], changed=True, aws=design.aws_model)


def _design(
    path: str,
    name: str,
    names: tuple[str, ...],
    spec: DesignFile,
    notes: list[str],
    *,
    changed: bool,
    aws: bool,
) -> Design:
    """One variant, checked, its rates read, every pattern compiled (errors now, not mid-run)."""
    prefix = f"designs.{name}: " if changed else ""
    requests, schemas = _check(spec, path, prefix)
    rates, needs, rate_notes = _rates(spec, path, prefix)
    design = Design(
        path,
        name,
        names,
        spec,
        requests,
        schemas,
        rates,
        needs,
        [*notes, *rate_notes],
        spec_changed=changed,
        aws_model=aws,
    )
    generators = design.generators()
    compiled = design.compile(generators)
    unknown, attribute_notes = unknown_attributes(spec, compiled, schemas)
    refused = unknown[0] if unknown else size_refusal(spec, compiled, schemas, generators)
    if refused is not None:
        raise ConfigError(f"{design._where()}{refused[0]}: {refused[1]}")
    design.notes += unwritten_indexes(spec, compiled, schemas) + attribute_notes
    design.notes += size_notes(spec, compiled, schemas, generators)
    return design


def load_design(path: str, name: str | None = None) -> Design:
    """One variant of a design file: ``name``, or the first the file names."""
    designs = load_designs(path)
    if name is None:
        return designs[0]
    for design in designs:
        if design.name == name:
            return design
    raise ConfigError(
        f"{path}: unknown design {name!r} (expected one of: "
        f"{', '.join(d.name for d in designs)}, or all)"
    )
