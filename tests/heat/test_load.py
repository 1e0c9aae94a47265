"""The open model's ledger: offered, answered, achieved and dropped per second, merged
across workers, and the delivery verdict with the bottleneck it names."""

from __future__ import annotations

from loadgen.heat.load import LoadLedger, format_load
from loadgen.heat.recorder import RunRecorder

PLAN = {"rate": 1000.0, "rates": {"increment": 1000.0}, "arrivals": "constant", "scale": 0.1,
        "stages": [], "ramp_s": 0.0, "max_in_flight": 20}  # fmt: skip


def ledger_of(offered: list[int], achieved: list[int], **plan: object) -> LoadLedger:
    ledger = LoadLedger()
    ledger.plan = {**PLAN, **plan}
    for second, (o, a) in enumerate(zip(offered, achieved, strict=True), start=1000):
        ledger.offer("increment", second, o)
        for _ in range(a):  # answered and done in the same second, as an untroubled call is
            ledger.answer("increment", second, answer_ms=5.0)
            ledger.achieve("increment", second, service_ms=5.0)
    return ledger


def test_a_closed_model_run_has_no_load_section() -> None:
    assert LoadLedger().summary() is None


def test_load_achieved_in_every_window_is_delivered() -> None:
    summary = ledger_of([100] * 10, [99] * 10).summary()
    assert summary is not None
    assert summary["delivered"] is True
    assert summary["bottleneck"] is None
    assert summary["offered"] == 1000 and summary["achieved"] == 990
    assert summary["offered_per_s"] == 100.0 and summary["achieved_per_s"] == 99.0
    assert summary["timeline"]["start"] == 1000
    assert summary["timeline"]["offered"] == [100] * 10
    assert summary["worst_window"]["ratio"] == 0.99
    (row,) = summary["operations"]
    assert row["service_mean_ms"] == 5.0
    assert "service time 5.0 ms mean" in format_load(summary)[1]
    assert "Load delivered" in format_load(summary)[-1]


def test_one_short_window_after_the_ramp_is_not_delivered() -> None:
    achieved = [100] * 4 + [50] * 2 + [100] * 4  # 800 of 1,000 in the worst window
    summary = ledger_of([100] * 10, achieved).summary()
    assert summary is not None
    assert summary["delivered"] is False
    assert summary["worst_window"]["ratio"] == 0.8
    assert summary["bottleneck"] == "answers fell short of arrivals with no cause seen"
    assert format_load(summary)[-1].startswith("Load NOT delivered: answered 80.0%")


def test_arrivals_answered_on_time_are_delivered_while_the_sdk_retries_them() -> None:
    # Every arrival's first attempt answered (throttled) in its second; the SDK's retries
    # finish half of them 3 s later: the completions lag, the load was delivered.
    ledger = LoadLedger()
    ledger.plan = dict(PLAN)
    for second in range(1000, 1010):
        ledger.offer("increment", second, 100)
        for n in range(100):
            ledger.answer("increment", second, answer_ms=4.0)
            if n % 2 or second + 3 < 1010:
                ledger.achieve("increment", second + 3 * (n % 2 == 0), service_ms=3000.0)
    summary = ledger.summary()
    assert summary["delivered"] is True and summary["worst_window"]["ratio"] == 1.0
    assert summary["achieved"] < summary["offered"]
    assert summary["operations"][0]["answered"] == 1000
    assert summary["timeline"]["answer_ms"][0] == 4.0


def test_the_ramp_and_the_last_partial_second_are_not_judged() -> None:
    # Short during a 3-second ramp, and in the last second (cut short by the end of the run).
    achieved = [10, 20, 30] + [100] * 6 + [5]
    assert ledger_of([100] * 10, achieved, ramp_s=3.0).summary()["delivered"] is True
    assert ledger_of([100] * 10, achieved, ramp_s=0.0).summary()["delivered"] is False


def test_the_bottleneck_names_cpu_the_in_flight_cap_and_a_slowing_target() -> None:
    ledger = ledger_of([100] * 10, [100] * 5 + [10] * 5)
    for second in range(1005, 1010):
        ledger.drop("increment", second, 90)
        ledger.sample(second, cpu_percent=97.0, lag_s=0.0, in_flight=20)
        ledger.seconds[second].answer_ms = 10 * 400.0  # 400 ms each, from 5 ms
    bottleneck = ledger.summary()["bottleneck"]
    assert "load generator CPU at 97% (Locust warns at 90%)" in bottleneck
    assert "in-flight cap reached (--max-in-flight 20): 360 arrivals dropped" in bottleneck
    assert "target latency growing (mean time to a first answer 5 ms to 400 ms)" in bottleneck
    # The same figures, for a verdict to read: the run fell behind its target.
    assert ledger.summary()["answer_ms_grew"] == [5.0, 400.0]
    assert ledger_of([100] * 10, [100] * 10).summary()["answer_ms_grew"] is None


def test_workers_ledgers_merge_through_the_recorders_report() -> None:
    master, workers = RunRecorder(), [RunRecorder(), RunRecorder()]
    for n, worker in enumerate(workers):
        worker.load.plan = dict(PLAN)
        for second in (10, 11):
            worker.load.offer("increment", second, 50)
            worker.load.drop("read", second, n)
            worker.load.sample(second, cpu_percent=40.0 + n, lag_s=0.1 * n, in_flight=3)
            worker.load.achieve("increment", second, service_ms=2.0 + n)
        report: dict[str, object] = {}
        worker._on_report_to_master("w", report)
        assert not worker.load.seconds  # sent once: a worker's counts restart after a report
        master._on_worker_report("w", report)
    load = master.load
    assert load.plan == PLAN
    assert load.operations == {"increment": [200, 4, 0, 0], "read": [2, 0, 2, 0]}
    assert load.service_ms == {"increment": 2 * 2.0 + 2 * 3.0}
    assert load.seconds[10].offered == 101 and load.seconds[10].dropped == 1
    assert load.seconds[10].cpu_percent == 41.0  # the busiest generator
    assert load.seconds[10].in_flight == 6


def test_arrivals_dropped_late_are_not_the_in_flight_caps() -> None:
    ledger = ledger_of([100] * 10, [100] * 5 + [40] * 5)
    for second in range(1005, 1010):
        ledger.drop("increment", second, 50, late=True)
        ledger.drop("increment", second, 10)
        ledger.sample(second, cpu_percent=20.0, lag_s=1.5, in_flight=20)
    summary = ledger.summary()
    assert summary["dropped"] == 300 and summary["dropped_at_cap"] == 50
    assert summary["timeline"]["capped"] == [0] * 5 + [10] * 5
    # The short windows' drops (the last second, cut short by the run's end, aside).
    assert summary["bottleneck"] == (
        "the arrival clock ran up to 1.5 s late: 200 arrivals dropped late; "
        "in-flight cap reached (--max-in-flight 20): 40 arrivals dropped"
    )


def test_the_bottleneck_names_the_process_that_ran_out_of_cpu_as_measured() -> None:
    ledger = ledger_of([100] * 10, [100] * 5 + [10] * 5)
    ledger.processes = 2
    ledger.cpu = {
        "wall_s": 20.0, "cores": 2, "machine_busy": 0.96,
        "processes": [
            {"role": "load generator", "pid": 1, "cpu_s": 4.0, "cores": 0.2},
            {"role": "load generator", "pid": 2, "cpu_s": 4.4, "cores": 0.22},
            {"role": "emulator", "pid": 3, "cpu_s": 19.6, "cores": 0.98},
            {"role": "engine", "pid": 4, "cpu_s": 8.0, "cores": 0.4},
        ],
    }  # fmt: skip
    for second in range(1005, 1010):
        ledger.sample(second, cpu_percent=97.0, lag_s=0.0, in_flight=20)  # Locust's sample
    summary = ledger.summary()
    # Measured over the run for each process, the measure replaces the generator's sample.
    assert summary["bottleneck"] == (
        "the emulator's process ran out of CPU (98% of a core over the run); the machine's 2 "
        "cores were 96% busy (in cores: the load generator 0.4, the emulator 1.0, the engine "
        "0.4, other processes 0.1)"
    )
    assert summary["processes"] == 2 and summary["cpu"] == ledger.cpu
    lines = format_load(summary)
    assert lines[0].startswith("Load (open model, constant arrivals, 2 load-generator processes)")
    assert lines[-2] == (
        "CPU over the run, in cores: the load generator 0.4, the emulator 1.0, the engine 0.4, "
        "other processes 0.1; the machine's 2 cores 96% busy"
    )
