"""The open model's load accounting: arrivals offered, answered, achieved and dropped, and
whether the load was delivered.

A rate run (``loadgen run --rate R``, see `loadgen.workload.arrivals`) offers arrivals on a
clock. `LoadLedger` counts, per operation and per wall-clock second, the arrivals offered,
those answered (their first attempt's answer came, throttled or not), those that completed
(achieved, whatever their outcome, the SDK's retries included) and those dropped because no
in-flight slot was free (``capped``) or the generator fell behind its clock; beside them, per
second, the mean times to the first answer and to the end, the load generator's CPU
(Locust's own sample) and how far the arrival clock ran late; over the run, the CPU each
process of the run took (`loadgen.heat.cpu`) and how many load-generator processes drove
the arrivals. Workers send their ledger with Locust's worker reports (through
`loadgen.heat.recorder.RunRecorder`) and the master merges it.

The load was **delivered** when the answered count was at least 95% of the offered count
over every 5-second window after the ramp (the run's last, partial second aside). Answered,
not completed: an operation the SDK is still retrying after a throttle reached the target
and was answered on time; its retries are the design's load, counted as requests, and the
time they hold an operation is its latency (`loadgen.verdict.delivery` says when they held
the in-flight cap). Where no client reports first answers (a locustfile's own), the
completions stand in for them.

    ledger = LoadLedger()
    ledger.plan = {"rate": 1000.0, "scale": 0.1, ...}
    ledger.offer("increment", second)
    ledger.answer("increment", second, answer_ms=1.3)
    ledger.achieve("increment", second, service_ms=4.2)
    ledger.summary()["delivered"]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CPU_WARNING_PERCENT",
    "DELIVERY_RATIO",
    "DELIVERY_WINDOW_S",
    "LoadLedger",
    "Second",
    "format_load",
]

DELIVERY_RATIO = 0.95
"""Achieved over offered that a window must reach for the load to count as delivered."""
DELIVERY_WINDOW_S = 5
"""Seconds per delivery window."""
CPU_WARNING_PERCENT = 90.0
"""Where Locust warns that its process' CPU constrains the throughput."""
LATENCY_GROWTH = 2.0
"""Mean service time this many times its early level: the target is slowing down."""


@dataclass(slots=True)
class Second:
    """The load of one wall-clock second."""

    offered: int = 0
    achieved: int = 0
    dropped: int = 0
    service_ms: float = 0.0
    """Sum of the service times of the operations achieved in this second."""
    cpu_percent: float = 0.0
    """The highest CPU sample of a load-generator process."""
    lag_s: float = 0.0
    """How late the arrival clock ran, at most."""
    in_flight: int = 0
    """Most operations in flight at once (per process; summed over workers)."""
    capped: int = 0
    """Of ``dropped``, those that found every in-flight slot busy (the others came late)."""
    answered: int = 0
    """Arrivals whose first attempt was answered in this second."""
    answer_ms: float = 0.0
    """Sum of their times from launch to that answer."""

    def merge(self, other: Second) -> None:
        self.answered += other.answered
        self.answer_ms += other.answer_ms
        self.offered += other.offered
        self.achieved += other.achieved
        self.dropped += other.dropped
        self.capped += other.capped
        self.service_ms += other.service_ms
        self.cpu_percent = max(self.cpu_percent, other.cpu_percent)
        self.lag_s = max(self.lag_s, other.lag_s)
        self.in_flight += other.in_flight


class LoadLedger:
    """Offered, achieved and dropped arrivals per operation and per second."""

    def __init__(self) -> None:
        self.plan: dict[str, Any] | None = None
        """The plan as the results show it (rates at AWS scale, scale, arrivals, ramp, cap);
        None in a closed-model run."""
        self.seconds: dict[int, Second] = {}
        self.operations: dict[str, list[int]] = {}
        """Per operation: offered, achieved, dropped, answered."""
        self.service_ms: dict[str, float] = {}
        """Per operation: the sum of the service times (launch to end) of those achieved."""
        self.processes = 1
        """Load-generator processes that drove the arrivals (``loadgen run --processes``)."""
        self.cpu: dict[str, Any] | None = None
        """The CPU each process of the run took over it (`loadgen.heat.cpu.CpuMeter.read`),
        where the run measured it."""

    def _second(self, second: int) -> Second:
        column = self.seconds.get(second)
        if column is None:
            column = self.seconds[second] = Second()
        return column

    def _operation(self, operation: str) -> list[int]:
        counts = self.operations.get(operation)
        if counts is None:
            counts = self.operations[operation] = [0, 0, 0, 0]
        return counts

    def offer(self, operation: str, second: int, count: int = 1) -> None:
        self._second(second).offered += count
        self._operation(operation)[0] += count

    def answer(self, operation: str, second: int, answer_ms: float) -> None:
        """Count an arrival whose first attempt was answered ``answer_ms`` after its launch."""
        column = self._second(second)
        column.answered += 1
        column.answer_ms += answer_ms
        self._operation(operation)[3] += 1

    def achieve(self, operation: str, second: int, service_ms: float) -> None:
        column = self._second(second)
        column.achieved += 1
        column.service_ms += service_ms
        self._operation(operation)[1] += 1
        self.service_ms[operation] = self.service_ms.get(operation, 0.0) + service_ms

    def drop(self, operation: str, second: int, count: int = 1, *, late: bool = False) -> None:
        """Count ``count`` arrivals offered and dropped: at the in-flight cap, or ``late``
        (the generator fell behind its clock)."""
        column = self._second(second)
        column.offered += count
        column.dropped += count
        if not late:
            column.capped += count
        counts = self._operation(operation)
        counts[0] += count
        counts[2] += count

    def sample(self, second: int, *, cpu_percent: float, lag_s: float, in_flight: int) -> None:
        """Note the generator's state in ``second`` (the highest of the samples stays)."""
        column = self._second(second)
        column.cpu_percent = max(column.cpu_percent, cpu_percent)
        column.lag_s = max(column.lag_s, lag_s)
        column.in_flight = max(column.in_flight, in_flight)

    def clear(self) -> None:
        self.seconds = {}
        self.operations = {}
        self.service_ms = {}

    def to_dict(self) -> dict[str, Any]:
        return {
            "plan": self.plan,
            "seconds": [
                [s, c.offered, c.achieved, c.dropped, c.service_ms, c.cpu_percent, c.lag_s,
                 c.in_flight, c.capped, c.answered, c.answer_ms]
                for s, c in self.seconds.items()
            ],
            "operations": {op: list(counts) for op, counts in self.operations.items()},
            "service_ms": dict(self.service_ms),
        }  # fmt: skip

    def merge_dict(self, data: dict[str, Any]) -> None:
        """Add a worker's ledger made by `to_dict`."""
        if data.get("plan") and self.plan is None:
            self.plan = dict(data["plan"])
        for s, *counts in data["seconds"]:
            self._second(int(s)).merge(Second(*counts))
        for op, counts in data["operations"].items():
            mine = self._operation(op)
            for i, n in enumerate(counts):
                mine[i] += n
        for op, total in data.get("service_ms", {}).items():
            self.service_ms[op] = self.service_ms.get(op, 0.0) + float(total)

    def timeline(self) -> tuple[int, list[Second]]:
        """The first second and one column per second up to the last, gaps filled."""
        if not self.seconds:
            return 0, []
        first, last = min(self.seconds), max(self.seconds)
        return first, [self.seconds.get(s) or Second() for s in range(first, last + 1)]

    def summary(self) -> dict[str, Any] | None:
        """The results file's ``load`` section; None in a closed-model run."""
        if self.plan is None:
            return None
        first, columns = self.timeline()
        offered = sum(c.offered for c in columns)
        achieved = sum(c.achieved for c in columns)
        dropped = sum(c.dropped for c in columns)
        # Rates over the whole seconds: the first and the last are cut short by the run.
        full = columns[1:-1] if len(columns) >= 3 else columns
        span = max(len(full), 1)
        delivery = _delivery(
            columns, float(self.plan.get("ramp_s") or 0.0), self.plan, self.cpu, self.processes
        )
        return {
            "model": "open",
            **self.plan,
            "processes": self.processes,
            "offered": offered,
            "achieved": achieved,
            "dropped": dropped,
            "dropped_at_cap": sum(c.capped for c in columns),
            "offered_per_s": sum(c.offered for c in full) / span,
            "answered_per_s": sum(c.answered for c in full) / span,
            "achieved_per_s": sum(c.achieved for c in full) / span,
            "operations": [
                {
                    "operation": op,
                    "offered": o,
                    "answered": answered,
                    "achieved": a,
                    "dropped": d,
                    # Per operation, the run's share of each: its seconds are not kept apart.
                    "offered_per_s": o / offered * sum(c.offered for c in full) / span
                    if offered
                    else 0.0,
                    "achieved_per_s": a / achieved * sum(c.achieved for c in full) / span
                    if achieved
                    else 0.0,
                    # Beside the latency from the intended start: from launch to end.
                    "service_mean_ms": round(self.service_ms.get(op, 0.0) / a, 3) if a else None,
                }
                for op, (o, a, d, answered) in sorted(self.operations.items())
            ],
            "timeline": {
                "start": first,
                "offered": [c.offered for c in columns],
                "answered": [c.answered for c in columns],
                "achieved": [c.achieved for c in columns],
                "dropped": [c.dropped for c in columns],
                "service_ms": [
                    round(c.service_ms / c.achieved, 3) if c.achieved else None for c in columns
                ],
                "answer_ms": [
                    round(c.answer_ms / c.answered, 3) if c.answered else None for c in columns
                ],
                "cpu_percent": [c.cpu_percent for c in columns],
                "lag_s": [round(c.lag_s, 3) for c in columns],
                "in_flight": [c.in_flight for c in columns],
                "capped": [c.capped for c in columns],
            },
            **({"cpu": self.cpu} if self.cpu is not None else {}),
            **delivery,
        }


def _delivery(
    columns: list[Second],
    ramp_s: float,
    plan: dict[str, Any],
    cpu: dict[str, Any] | None = None,
    processes: int = 1,
) -> dict[str, Any]:
    """Whether every window after the ramp had 95% of its offered arrivals answered, and why
    not."""
    # The last second is cut short by the end of the run (operations in flight are stopped).
    usable = columns[:-1] if len(columns) > 1 else columns
    skip = min(math.ceil(ramp_s), max(len(usable) - 1, 0))
    checked = usable[skip:]
    width = min(DELIVERY_WINDOW_S, len(checked))
    worst: dict[str, Any] | None = None
    failing: set[int] = set()
    for i in range(len(checked) - width + 1):
        window = checked[i : i + width]
        offered = sum(c.offered for c in window)
        answered = sum(c.answered for c in window)
        ratio = min(answered / offered, 1.0) if offered else 1.0
        if worst is None or ratio < worst["ratio"]:
            worst = {"start_s": skip + i, "seconds": width, "offered": offered,
                     "answered": answered, "ratio": round(ratio, 4)}  # fmt: skip
        if ratio < DELIVERY_RATIO:
            failing.update(range(i, i + width))
    delivered = not failing and worst is not None
    short = [checked[i] for i in sorted(failing)]
    grew = None if delivered else _latency_growth(columns, short)
    return {
        "delivered": delivered,
        "worst_window": worst,
        "bottleneck": None if delivered else _bottleneck(short, grew, plan, cpu, processes),
        "answer_ms_grew": None if grew is None else [round(ms, 3) for ms in grew],
    }


def _latency_growth(columns: list[Second], failing: list[Second]) -> tuple[float, float] | None:
    """(early, worst) mean time to a first answer, in ms, where it grew `LATENCY_GROWTH` times
    from the run's first window to its windows that fell short: the target fell behind, and
    requests waited on it (the SDK's waits between retries are not the target's)."""
    early = [c.answer_ms / c.answered for c in columns[:DELIVERY_WINDOW_S] if c.answered]
    late = [c.answer_ms / c.answered for c in failing if c.answered]
    if early and late and max(late) > LATENCY_GROWTH * min(early) and max(late) > 1.0:
        return min(early), max(late)
    return None


def _bottleneck(
    failing: list[Second],
    grew: tuple[float, float] | None,
    plan: dict[str, Any],
    measured: dict[str, Any] | None = None,
    processes: int = 1,
) -> str:
    """What the run saw while the load fell short: a process out of CPU, the generator's
    clock, the cap or the target (``grew``: its time to a first answer, `_latency_growth`)."""
    if not failing:
        return "no complete second to measure"
    from loadgen.heat.cpu import ran_out

    causes = []
    if measured is not None:
        # Measured over the run for every process: the emulator and the engine too.
        causes += ran_out(measured)
    else:
        cpu = max(c.cpu_percent for c in failing)
        if cpu >= CPU_WARNING_PERCENT:
            causes.append(f"load generator CPU at {cpu:.0f}% (Locust warns at 90%)")
    lag = max(c.lag_s for c in failing)
    dropped_late = sum(c.dropped - c.capped for c in failing)
    if lag >= 0.5 or dropped_late:
        causes.append(
            f"the arrival clock ran up to {lag:.1f} s late"
            + (f": {dropped_late} arrivals dropped late" if dropped_late else "")
        )
    capped = sum(c.capped for c in failing)
    if capped:
        cap = plan.get("max_in_flight")
        per = f", {-(-int(cap) // processes)} a process" if processes > 1 and cap else ""
        causes.append(
            f"in-flight cap reached (--max-in-flight {cap}{per}): {capped} arrivals dropped"
        )
    if grew is not None:
        causes.append(
            f"target latency growing (mean time to a first answer {grew[0]:.0f} ms to "
            f"{grew[1]:.0f} ms)"
        )
    return "; ".join(causes) or "answers fell short of arrivals with no cause seen"


def _answered(per_s: float | None) -> str:
    # Results files before first answers were counted have none.
    return "" if per_s is None else f"answered {per_s:.1f}/s, "


def format_load(load: dict[str, Any]) -> list[str]:
    """The summary's lines on the offered load and whether it was delivered."""
    scale = load.get("scale")
    at = f" at scale {scale:g}" if scale not in (None, 1, 1.0) else ""
    processes = int(load.get("processes") or 1)
    drove = f", {processes} load-generator process{'es' if processes > 1 else ''}"
    lines = [
        f"Load (open model, {load.get('arrivals')} arrivals{drove}): launch traffic "
        f"{load.get('rate', 0):,.0f}/s, offered {load['offered_per_s']:.1f}/s{at}, "
        + _answered(load.get("answered_per_s"))
        + f"achieved {load['achieved_per_s']:.1f}/s, dropped {load['dropped']}",
    ]
    for row in load["operations"]:
        service = row.get("service_mean_ms")
        lines.append(
            f"  {row['operation']:<20} offered {row['offered_per_s']:>9.1f}/s  achieved "
            f"{row['achieved_per_s']:>9.1f}/s  dropped {row['dropped']:>8}"
            + (f"  service time {service:.1f} ms mean" if service is not None else "")
        )
    if load.get("cpu"):
        from loadgen.heat.cpu import format_cpu

        lines.append(format_cpu(load["cpu"]))
    worst = load.get("worst_window")
    if load.get("delivered"):
        lines.append(
            f"Load delivered: every {DELIVERY_WINDOW_S} s window had at least "
            f"{DELIVERY_RATIO:.0%} of its offered arrivals answered (worst {worst['ratio']:.1%})"
            if worst
            else "Load delivered."
        )
    else:
        ratio = f"{worst['ratio']:.1%} in its worst {worst['seconds']} s window, " if worst else ""
        lines.append(
            f"Load NOT delivered: answered {ratio}below {DELIVERY_RATIO:.0%} of offered; "
            f"bottleneck: {load.get('bottleneck')}"
        )
    return lines
