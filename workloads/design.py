"""Any design file as a Locust workload: its tables, its access patterns at their launch rates.

    locust -f workloads/design.py --headless -H http://127.0.0.1:8000 -u 1 -t 1m \\
        --design-file examples/designs/ecommerce.yaml --design good

With no ``--rate`` or ``--rates`` the run offers every pattern at its rate in the file (the
open model; ``--launch-scale 2`` doubles them), each execution of a pattern one operation of
the run, named by the pattern's id. ``--closed`` runs the patterns as a mix weighted by their
rates instead, users as fast as they go. ``loadgen run DESIGN_FILE`` runs this user and writes
the file's starting data first; under plain ``locust -f``, write it with ``loadgen prefill
DESIGN_FILE --endpoint URL``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from locust import events

from loadgen.design import CompiledPattern, Design, Draws, RunClock, load_designs, stored_bytes
from loadgen.workload import (
    ConfigError,
    DynamoUser,
    WorkloadOptions,
    add_argument,
    register,
)

_loaded: dict[str, list[Design]] = {}


def _designs(path: str) -> list[Design]:
    if path not in _loaded:
        _loaded[path] = load_designs(path)
    return _loaded[path]


class DesignUser(DynamoUser):
    designs: ClassVar[tuple[str, ...]] = ("default",)
    default_table = ""
    default_mix: ClassVar[dict[str, int]] = {}
    design: ClassVar[Design | None] = None
    """The design this process runs (set when the options are read)."""
    _runtime: ClassVar[tuple[int, dict[str, Any], dict[str, CompiledPattern]] | None] = None
    _clock: ClassVar[RunClock | None] = None
    """The run's clock, that the design's time generators read (the results file says
    where it started: a simulation of the run starts its clock there)."""

    @classmethod
    def add_arguments(cls, parser: Any) -> None:
        add_argument(parser, "--design-file", default=None, help="Design file (YAML or JSON)")
        add_argument(
            parser,
            "--launch-scale",
            type=float,
            default=1.0,
            help="Design file: multiply every pattern's rate by this (default 1)",
        )
        add_argument(
            parser,
            "--closed",
            action="store_true",
            help="Design file: run the patterns as a mix weighted by their rates, users as "
            "fast as they go, instead of at their rates",
        )
        add_argument(
            parser,
            "--starting-items",
            type=int,
            default=-1,
            help="Design file: items written before the load (loadgen run says; -1: look)",
        )

    @classmethod
    def check_options(cls, parsed: Any) -> None:
        path = getattr(parsed, "design_file", None)
        if not path:
            raise ConfigError("workloads/design.py needs --design-file FILE (YAML or JSON)")
        designs = _designs(path)
        names = tuple(d.name for d in designs)
        name = parsed.design or names[0]
        chosen = next((d for d in designs if d.name == name), None)
        if chosen is None:
            raise ConfigError(f"unknown design {name!r} (expected one of: {', '.join(names)})")
        if parsed.table:
            raise ConfigError(
                f"--table {parsed.table} does not apply to a design file: it names its tables"
            )
        scale = float(parsed.launch_scale)
        if not scale > 0:
            raise ConfigError(f"--launch-scale must be more than 0 (got {scale:g})")
        cls.design = chosen
        cls.designs = names
        cls.default_table = chosen.table_requests[0]["TableName"]
        # Integer weights for the closed model's mix, in thousandths of an operation/s.
        cls.default_mix = {pid: max(1, round(rate * 1000)) for pid, rate in chosen.rates.items()}
        cls._runtime = cls._clock = None
        if not (parsed.rate or parsed.rates or parsed.stages or parsed.closed):
            parsed.rates = ",".join(f"{pid}={r * scale!r}" for pid, r in chosen.rates.items())

    @classmethod
    def create_table_request(cls, options: WorkloadOptions) -> dict[str, Any]:
        return cls.create_table_requests(options)[0]

    @classmethod
    def create_table_requests(cls, options: WorkloadOptions) -> list[dict[str, Any]]:
        assert cls.design is not None
        return [dict(request) for request in cls.design.table_requests]

    def on_start(self) -> None:
        runtime = DesignUser._runtime
        if runtime is None or runtime[0] != self.options.seed:
            assert DesignUser.design is not None
            design = DesignUser.design
            DesignUser._clock = RunClock(design.spec.clock_speed)
            generators = design.generators(
                seed=self.options.seed,
                default_distribution=self.options.distribution,
                clock=DesignUser._clock,
            )
            runtime = DesignUser._runtime = (
                self.options.seed,
                generators,
                design.compile(generators),
            )
        self._generators = runtime[1]
        self._patterns = runtime[2]

    def perform(self, operation: str) -> None:
        if not hasattr(self, "_patterns"):
            self.on_start()
        pattern = self._patterns[operation]
        for call in pattern.calls(Draws(self._generators)):
            self.db.call(
                call.operation,
                operation,
                table=call.table,
                pk=call.pk,
                sk=call.sk,
                index=call.index,
                partition_keys=call.partition_keys,
                **call.params,
            )

    @classmethod
    def describe(cls, options: WorkloadOptions, parsed: Any) -> dict[str, Any]:
        assert cls.design is not None
        design = cls.design
        items = int(getattr(parsed, "starting_items", -1))
        runtime = cls._runtime
        compiled = runtime[2] if runtime is not None else design.compile(design.generators())
        calls = {id: pattern.requests_per_execution for id, pattern in compiled.items()}
        section = design_section(design, items, float(parsed.launch_scale), calls)
        clock = cls._clock
        if clock is not None:
            section["clock"] = {"speed": clock.speed, "start": clock.start, "origin": clock.origin}
        return {"design": section, "storage": storage_section(design)}


_STORAGE: dict[tuple[str, str], dict[str, Any]] = {}


def storage_section(design: Design) -> dict[str, Any]:
    """The tables' bytes at launch, from the design file's item counts and sizes (what its
    storage costs a month is read from: `loadgen.verdict.cost`); worked out once a design."""
    key = (design.path, design.name)
    if key not in _STORAGE:
        _STORAGE[key] = {
            "bytes": stored_bytes(design),
            "source": "the design file's starting item counts and item sizes (populate, items)",
        }
    return _STORAGE[key]


def design_section(
    design: Design, starting_items: int, launch_scale: float, calls: Mapping[str, int]
) -> dict[str, Any]:
    """What a results file says of the design a run ran; ``calls``: each pattern's requests
    per execution (`CompiledPattern.requests_per_execution`)."""
    patterns = []
    for pattern in design.patterns:
        need = design.latency[pattern.id]
        patterns.append(
            {
                "id": pattern.id,
                "description": pattern.description,
                "operation": pattern.operation,
                "table": pattern.table or design.table_requests[0]["TableName"],
                "index": pattern.index,
                "rate": design.rates[pattern.id] * launch_scale,
                "calls": calls.get(pattern.id, 1),
                "latency": None if need is None else {"percentile": need.percentile, "ms": need.ms},
                # A write under a condition: a failed one is the item's answer, not a throttle.
                "conditional": bool(
                    pattern.condition or any(a.condition for a in pattern.actions or ())
                ),
            }
        )
    empty = starting_items == 0
    # -1: not known (against AWS the run writes nothing); -2: looked, the tables held items.
    return {
        "file": design.path,
        "name": design.name,
        "title": design.title,
        "patterns": patterns,
        "notes": list(design.notes),
        "starting_data": {
            "items": starting_items if starting_items >= 0 else None,
            "empty": empty,
            "note": "the tables were empty when the load began: reads found nothing, so "
            "their units and heat are those of an empty table"
            if empty
            else "",
        },
    }


register(DesignUser)


@events.init.add_listener
def _look_for_starting_data(environment: Any, **kwargs: Any) -> None:
    """Under plain ``locust -f``, say whether the tables held any item when the run began."""
    parsed = environment.parsed_options
    if DesignUser not in (environment.user_classes or []) or parsed is None:
        return
    if getattr(parsed, "starting_items", -1) >= 0 or not environment.__dict__.get(
        "_loadgen_prepared"
    ):
        return
    client = environment.__dict__.get("_loadgen_client")
    if client is None or DesignUser.design is None:
        return
    held = 0
    for request in DesignUser.design.table_requests:
        answer = client.botocore.scan(TableName=request["TableName"], Limit=1, Select="COUNT")
        held += int(answer.get("Count", 0))
    parsed.starting_items = -2 if held else 0  # 0: the run says its tables were empty
