"""Replay workload: a captured trace's requests, in order (see `loadgen.traffic.replay`).

The trace comes from ``loadgen emulator --capture FILE`` or ``loadgen.capture.install``.
Every operation takes the trace's next request; its tables are created as the trace
describes them (on-demand unless --billing-mode says otherwise).

    loadgen replay t.jsonl.gz --speed 2 --duration 20s --out r.json
    locust -f workloads/replay.py --headless -H http://127.0.0.1:8000 --trace t.jsonl.gz \\
        --speed 2 -u 1 -t 20s
    locust -f workloads/replay.py ... --trace t.jsonl.gz --rate 5000 --key-scale 10
"""

from __future__ import annotations

from typing import Any

from locust import events

from loadgen.traffic.replay import Replayer, create_tables, load_trace, speed_stages
from loadgen.workload import ConfigError, DynamoUser, WorkloadOptions, add_argument, register

_replayers: dict[tuple[str, int, int], Replayer] = {}


def replayer(parsed: Any) -> Replayer:
    """The process's one replayer of ``--trace`` (users share its cursor)."""
    if not parsed.trace:
        raise ConfigError("the replay workload needs --trace FILE (a trace of loadgen capture)")
    key = (parsed.trace, parsed.key_scale, parsed.seed)
    if key not in _replayers:
        _replayers[key] = Replayer(
            load_trace(parsed.trace), key_scale=parsed.key_scale, seed=parsed.seed
        )
    return _replayers[key]


class ReplayUser(DynamoUser):
    designs = ("recorded",)
    default_table = "replay"
    default_mix = {"replay": 1}

    @classmethod
    def add_arguments(cls, parser: Any) -> None:
        add_argument(parser, "--trace", default="", help="Trace file to replay (replay)")
        add_argument(
            parser,
            "--key-scale",
            type=int,
            default=1,
            help="K copies of every key, each taking 1/K of its traffic (replay; default 1)",
        )
        add_argument(
            parser,
            "--speed",
            type=float,
            default=0.0,
            help="Replay at the trace's own pace, this many times faster (replay; open model)",
        )

    @classmethod
    def check_options(cls, parsed: Any) -> None:
        if parsed.key_scale < 1:
            raise ConfigError(f"--key-scale must be an integer >= 1 (got {parsed.key_scale})")
        trace = replayer(parsed).trace
        if parsed.speed:
            if parsed.rate or parsed.rates or parsed.stages:
                raise ConfigError(f"--speed {parsed.speed:g} and a rate exclude each other")
            parsed.stages = speed_stages(trace, parsed.speed)

    @classmethod
    def create_table_request(cls, options: WorkloadOptions) -> dict[str, Any]:
        return next(iter(_replayers.values())).table_requests()[0]

    def replay(self) -> None:
        steps = replayer(self.environment.parsed_options)
        step = steps.next()
        with steps.turn(step):
            call = steps.call(step)
            self.db.call(
                call.operation,
                call.name,
                table=call.table,
                pk=call.pk,
                sk=call.sk,
                index=call.index,
                partition_keys=call.partition_keys,
                **call.params,
            )


register(ReplayUser)


@events.init.add_listener
def _other_tables(environment: Any, **kwargs: Any) -> None:
    """The trace's tables beyond the first (which `register` creates as any workload's)."""
    if ReplayUser in (environment.user_classes or []) and environment.__dict__.get(
        "_loadgen_prepared"
    ):
        create_tables(environment, ReplayUser, replayer(environment.parsed_options))
