"""The open (arrival-rate) load model: operations launched on a clock, not by users.

``--rate R`` is the launch traffic in operations per second **at AWS scale**: against a
scaled target (the partition emulator at scale S, ``--rate-scale S``) the run offers R x S,
against AWS R, so one config file serves both. Arrivals come at constant gaps or as a
Poisson process (``--arrivals``); each is one operation of the workload, chosen by the mix,
or by per-operation rates (``--rates increment=2000,read=200``). ``--ramp 30s`` climbs from
0 to the rate, ``--stages 30s:1000,1m:3000`` moves linearly to each stage's rate in turn.

One `ArrivalDriver` runs per driving Locust user: ``loadgen run`` starts one, a distributed
run one per worker (``-u`` the number of workers), and each offers its share of the rate
(1 / the users of the run) with its share of ``--max-in-flight``. An arrival runs at once
on a free slot (a workload user instance of its own, in its own greenlet) or, when every
slot is busy, is counted as dropped, never delayed. A call's latency counts from the
arrival's intended start (`loadgen.client.base.intended_start`), which also tells when its
first attempt was answered. Offered, answered, achieved and dropped go to the run's
`loadgen.heat.load.LoadLedger`.
"""

from __future__ import annotations

import itertools
import logging
import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from loadgen.client.base import intended_start
from loadgen.errors import ConfigError
from loadgen.heat.load import LoadLedger

__all__ = [
    "ARRIVALS",
    "DEFAULT_MAX_IN_FLIGHT",
    "ArrivalDriver",
    "ArrivalPlan",
    "Stage",
    "parse_rates",
    "parse_stages",
    "plan_from_parsed",
]

log = logging.getLogger(__name__)

ARRIVALS = ("constant", "poisson")
DEFAULT_MAX_IN_FLIGHT = 1000
"""In-flight operations of a run, all drivers together: generous, yet bounded."""
_LATE_S = 1.0
"""Arrivals this late are dropped in bulk: the generator could not keep its clock."""
_BATCH = 500
"""Arrivals handled before the driver yields to the operations it started."""
_IDLE_S = 0.05
"""How often a driver at rate 0 (the start of a ramp) looks again."""


@dataclass(frozen=True)
class Stage:
    """Move linearly to ``rate`` (operations/s at AWS scale) over ``duration_s``."""

    duration_s: float
    rate: float


@dataclass(frozen=True)
class ArrivalPlan:
    """What a rate run offers: rates at AWS scale, their shape over time and the cap.

    plan = ArrivalPlan({"increment": 900.0, "read": 100.0}, scale=0.1, ramp_s=10)
    plan.rate_at(5.0)   # 50.0: half way up the ramp, at scale 0.1
    """

    rates: Mapping[str, float]
    """Operations per second at AWS scale, per operation."""
    arrivals: str = "constant"
    stages: tuple[Stage, ...] = ()
    """Empty: the full rate from the start."""
    scale: float = 1.0
    """The target's capacity scale: the run offers the rates times this."""
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT
    """Operations in flight at once, over the whole run."""
    share: float = 1.0
    """This driver's share of the run's rate and in-flight cap."""
    _breaks: tuple[tuple[float, float], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.arrivals not in ARRIVALS:
            raise ConfigError(
                f"unknown --arrivals {self.arrivals!r} (expected one of: {', '.join(ARRIVALS)})"
            )
        if not self.rates or any(r < 0 for r in self.rates.values()) or not self.total > 0:
            raise ConfigError(f"rates must be >= 0 and not all 0 (got {dict(self.rates)})")
        if not self.scale > 0:
            raise ConfigError(f"--rate-scale must be > 0 (got {self.scale})")
        if self.max_in_flight < 1:
            raise ConfigError(f"--max-in-flight must be >= 1 (got {self.max_in_flight})")
        # (seconds since start, total rate at AWS scale) where the shape bends.
        points = [(0.0, self.total if not self.stages else 0.0)]
        for stage in self.stages:
            points.append((points[-1][0] + stage.duration_s, stage.rate))
        object.__setattr__(self, "_breaks", tuple(points))

    @property
    def total(self) -> float:
        """The full rate at AWS scale, every operation together."""
        return float(sum(self.rates.values()))

    @property
    def ramp_s(self) -> float:
        """Seconds until the stages end (0 without stages)."""
        return self._breaks[-1][0]

    @property
    def driver_in_flight(self) -> int:
        """This driver's in-flight slots."""
        return max(1, math.ceil(self.max_in_flight * self.share))

    def rate_at(self, t: float) -> float:
        """This driver's offered rate (operations/s at the target) ``t`` s after its start."""
        return self._aws_rate_at(t) * self.scale * self.share

    def _aws_rate_at(self, t: float) -> float:
        breaks = self._breaks
        if t >= breaks[-1][0]:
            return breaks[-1][1]
        for (t0, r0), (t1, r1) in itertools.pairwise(breaks):
            if t0 <= t < t1:
                return r0 + (r1 - r0) * (t - t0) / (t1 - t0) if t1 > t0 else r1
        return breaks[0][1]

    def expected(self, t0: float, t1: float) -> float:
        """This driver's expected arrivals between ``t0`` and ``t1`` (exact: the shape is
        piecewise linear, so a trapezoid per piece)."""
        cuts = sorted({t0, t1, *(t for t, _ in self._breaks if t0 < t < t1)})
        return sum(
            (b - a) * (self.rate_at(a) + self.rate_at(b)) / 2 for a, b in itertools.pairwise(cuts)
        )

    def describe(self) -> dict[str, Any]:
        """The plan as the results file shows it: the whole run's, at AWS scale."""
        return {
            "rate": self.total,
            "rates": dict(self.rates),
            "arrivals": self.arrivals,
            "scale": self.scale,
            "stages": [[s.duration_s, s.rate] for s in self.stages],
            "ramp_s": self.ramp_s,
            "max_in_flight": self.max_in_flight,
        }


def parse_rates(text: str, mix: Mapping[str, int]) -> dict[str, float]:
    """``increment=2000,read=200`` into per-operation rates; operations not named get 0."""
    rates = dict.fromkeys(mix, 0.0)
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, value = part.partition("=")
        if name not in mix:
            raise ConfigError(
                f"unknown operation {name!r} in --rates (expected: {', '.join(sorted(mix))})"
            )
        try:
            rates[name] = float(value)
        except ValueError:
            raise ConfigError(
                f"--rates value for {name!r} must be operations/s >= 0 (got {part!r})"
            ) from None
    return rates


def _seconds(text: str, what: str) -> float:
    from locust.util.timespan import parse_timespan

    try:
        return float(parse_timespan(text.strip()))
    except ValueError:
        raise ConfigError(f"{what} must be a time span like 30s or 2m (got {text!r})") from None


def parse_stages(text: str) -> tuple[Stage, ...]:
    """``30s:1000,1m:3000`` into stages (duration, then rate at AWS scale)."""
    stages = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        duration, sep, rate = part.partition(":")
        try:
            value = float(rate) if sep else -1.0
        except ValueError:
            value = -1.0
        if value < 0:
            raise ConfigError(f"--stages entry {part!r}: expected DURATION:RATE like 30s:1000")
        stages.append(Stage(_seconds(duration, f"--stages entry {part!r}"), value))
    return tuple(stages)


def plan_from_parsed(parsed: Any, mix: Mapping[str, int]) -> ArrivalPlan | None:
    """The plan of Locust's parsed options, or None for a closed-model run (no rate)."""
    rate = float(getattr(parsed, "rate", 0) or 0)
    rates_text = getattr(parsed, "rates", "") or ""
    stages = parse_stages(getattr(parsed, "stages", "") or "")
    ramp = getattr(parsed, "ramp", "") or ""
    if not (rate or rates_text or stages):
        if ramp:
            raise ConfigError(f"--ramp {ramp} needs a rate (--rate or --rates)")
        return None
    if rate < 0:
        raise ConfigError(f"--rate must be > 0 operations/s (got {rate:g})")
    if rates_text:
        rates = parse_rates(rates_text, mix)
    else:
        full = rate or (stages[-1].rate if stages else 0.0)
        weights = sum(mix.values())
        rates = {op: full * weight / weights for op, weight in mix.items()}
    if ramp:
        if stages:
            raise ConfigError("--ramp and --stages exclude each other (a ramp is one stage)")
        stages = (Stage(_seconds(ramp, "--ramp"), sum(rates.values())),)
    # One driver per user of the run; on a worker, the master's count (`--rate-drivers`).
    drivers = int(getattr(parsed, "rate_drivers", 0) or getattr(parsed, "num_users", 1) or 1)
    cap = getattr(parsed, "max_in_flight", None)
    return ArrivalPlan(
        rates={op: r for op, r in rates.items() if r > 0} or rates,
        arrivals=getattr(parsed, "arrivals", None) or "constant",
        stages=stages,
        scale=float(getattr(parsed, "rate_scale", None) or 1.0),
        max_in_flight=DEFAULT_MAX_IN_FLIGHT if cap is None else int(cap),
        share=1.0 / max(drivers, 1),
    )


def _log_error(worker: Any, error: BaseException) -> None:
    log.error("operation failed: %r", error, exc_info=error)


class ArrivalDriver:
    """Launches one driver's share of a plan's arrivals on workload user instances.

    driver = ArrivalDriver(plan, ledger, make_worker=lambda: CounterUser(environment))
    driver.run()   # until the greenlet is killed (Locust stops the driving user)
    """

    def __init__(
        self,
        plan: ArrivalPlan,
        ledger: LoadLedger,
        make_worker: Callable[[], Any],
        *,
        rng: random.Random | None = None,
        cpu_percent: Callable[[], float] = lambda: 0.0,
        on_error: Callable[[Any, BaseException], None] | None = None,
        perform: Callable[[Any, str], None] | None = None,
    ) -> None:
        self.plan = plan
        self.ledger = ledger
        self.make_worker = make_worker
        self.random = rng or random.Random()
        self.cpu_percent = cpu_percent
        self.on_error = on_error
        self.perform = perform or (lambda worker, operation: getattr(worker, operation)())
        """How an operation runs on a worker (default: its method of that name)."""
        self.idle: list[Any] = []
        self.created = 0
        self.in_flight = 0
        self._operations = list(plan.rates)
        self._weights = [plan.rates[op] for op in self._operations]
        self._carry = dict.fromkeys(self._operations, 0.0)

    def run(self) -> None:
        import gevent
        from gevent.pool import Group

        plan, ledger = self.plan, self.ledger
        ledger.plan = plan.describe()
        group = Group()
        t0 = time.perf_counter()
        wall0 = time.time()
        next_t = t0 + self._gap(0.0)
        sampled = -1
        try:
            while True:
                now = time.perf_counter()
                second = int(wall0 + (now - t0))
                if second != sampled:
                    sampled = second
                    ledger.sample(
                        second,
                        cpu_percent=self.cpu_percent(),
                        lag_s=max(0.0, now - next_t),
                        in_flight=self.in_flight,
                    )
                if next_t < now - _LATE_S:
                    # The clock fell behind: drop what could not be launched in time.
                    self._drop_bulk(plan.expected(next_t - t0, now - t0), second, late=True)
                    next_t = now
                handled = 0
                while next_t <= now and handled < _BATCH:
                    handled += 1
                    if plan.rate_at(next_t - t0) <= 0:
                        next_t += _IDLE_S  # the ramp has not begun: no arrival yet
                        continue
                    if not self.idle and self.created >= plan.driver_in_flight:
                        # Every slot is busy: the arrival due and those due since are
                        # dropped, never queued (a queue would hide a stall), in bulk.
                        self._drop_bulk(1.0 + plan.expected(next_t - t0, now - t0), second)
                        next_t = now + self._gap(now - t0)
                        break
                    operation = self._choose()
                    ledger.offer(operation, second)
                    group.spawn(self._launch, self._slot(), operation, next_t, wall0 - t0)
                    next_t += self._gap(next_t - t0)
                gevent.sleep(max(0.0, next_t - time.perf_counter()) if handled < _BATCH else 0)
        finally:
            group.kill(block=False)

    def _gap(self, t: float) -> float:
        rate = self.plan.rate_at(t)
        if rate <= 0:
            return _IDLE_S  # the ramp has not begun: look again shortly
        if self.plan.arrivals == "poisson":
            return self.random.expovariate(rate)
        return 1.0 / rate

    def _choose(self) -> str:
        if len(self._operations) == 1:
            return self._operations[0]
        return self.random.choices(self._operations, self._weights)[0]

    def _slot(self) -> Any:
        """A free workload user instance (the caller made sure there is one)."""
        self.in_flight += 1
        if self.idle:
            return self.idle.pop()
        self.created += 1
        return self.make_worker()

    def _drop_bulk(self, expected: float, second: int, *, late: bool = False) -> None:
        total = self.plan.total
        for operation, rate in zip(self._operations, self._weights, strict=True):
            due = self._carry[operation] + expected * rate / total
            count = int(due)
            self._carry[operation] = due - count
            if count:
                self.ledger.drop(operation, second, count, late=late)

    def _launch(self, worker: Any, operation: str, intended: float, wall_offset: float) -> None:
        from gevent import GreenletExit
        from locust.exception import RescheduleTask, StopUser

        start = time.perf_counter()
        answered = False

        def answer() -> None:
            nonlocal answered
            answered = True
            now = time.perf_counter()
            self.ledger.answer(operation, int(now + wall_offset), (now - start) * 1000.0)

        try:
            with intended_start(intended, on_answer=answer):
                self.perform(worker, operation)
        except GreenletExit:
            self.in_flight -= 1  # stopped by the end of the run: not achieved
            raise
        except (RescheduleTask, StopUser):
            pass  # a failed call, already reported as a request event
        except Exception as e:
            (self.on_error or _log_error)(worker, e)
        if not answered:  # no client told of a first answer (a transport error, no call)
            answer()
        end = time.perf_counter()
        self.in_flight -= 1
        self.idle.append(worker)
        self.ledger.achieve(operation, int(end + wall_offset), (end - start) * 1000.0)
