"""A run learns the partition model's scale from a running ``loadgen emulator``, and from no
other endpoint."""

from __future__ import annotations

import socket
import time

import pytest

from loadgen import runner
from loadgen.emulator.embedded import EmbeddedEmulator
from loadgen.targets import model_scale
from tests.http_server import QuietHandler, serve


def metrics_server(text: str, status: int = 200) -> type[QuietHandler]:
    class Metrics(QuietHandler):
        def do_GET(self) -> None:
            self.reply(status, text.encode(), {"Content-Type": "text/plain"})

    return Metrics


@pytest.mark.slow
def test_the_emulators_scale_is_read_from_its_metrics() -> None:
    # The emulator serves its scale whatever its engine: moto, which starts in a second.
    with EmbeddedEmulator(scale=0.25, engine="moto") as emulator:
        assert model_scale(emulator.endpoint_url) == 0.25


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("# HELP up\nup 1\n", 200),  # another exporter
        ("partition_heat_emulator_scale nan\n", 200),
        ("partition_heat_emulator_scale -1\n", 200),
        ("partition_heat_emulator_scale x\n", 200),
        ("not found", 404),  # moto, DynamoDB Local
    ],
)
def test_other_answers_give_no_scale(text: str, status: int) -> None:
    with serve(metrics_server(text, status)) as url:
        assert model_scale(url) is None


def test_a_scale_beside_other_metrics() -> None:
    text = "# TYPE partition_heat_emulator_scale gauge\npartition_heat_emulator_scale 0.02\nx 1\n"
    with serve(metrics_server(text)) as url:
        assert model_scale(url + "/any/path") == 0.02


def test_no_endpoint_or_one_that_does_not_answer_gives_no_scale() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert model_scale(f"http://127.0.0.1:{port}") is None
    assert model_scale(None) is None
    assert model_scale("not a url") is None


ANSWERS = 'partition_heat_emulator_requests_total{operation="PutItem",outcome="throttled"} 3.0\n'


def slow_metrics_server(text: str, delay_s: float) -> type[QuietHandler]:
    class SlowMetrics(QuietHandler):
        def do_GET(self) -> None:
            time.sleep(delay_s)  # the emulator answering the run's requests before this one
            self.reply(200, text.encode(), {"Content-Type": "text/plain"})

    return SlowMetrics


def test_a_runs_end_waits_for_an_emulator_still_answering_its_requests(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(runner, "ANSWERS_TIMEOUT_S", 0.2)
    with serve(slow_metrics_server(ANSWERS, delay_s=0.6)) as url:
        answers, _ = runner._target_answers(runner.Target(url, "emulator", scale=0.1))
    assert answers == {"forwarded": 0, "throttled": 3, "rejected": 0}
    assert "did not answer /metrics within 0.2 s" in capsys.readouterr().err


def test_a_runs_end_does_not_wait_for_an_emulator_that_is_gone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    target = runner.Target(f"http://127.0.0.1:{port}", "emulator", scale=0.1)
    assert runner._target_answers(target) == (None, [])
    assert "did not answer /metrics" not in capsys.readouterr().err


BUFFERS = (
    'partition_heat_emulator_gsi_buffered_write_units{table="t",index="g",'
    'reason="IndexWriteKeyRangeThroughputExceeded"} 88.0\n'
    'partition_heat_emulator_gsi_buffer_write_units{table="t",index="g"} 18000.0\n'
    'partition_heat_emulator_gsi_buffer_full_in_seconds{table="t",index="g"} 880.0\n'
)


def test_a_runs_load_end_reads_the_emulators_gsi_buffers() -> None:
    with serve(metrics_server(BUFFERS)) as url:
        (row,) = runner._target_buffers(runner.Target(url, "emulator", scale=0.1))
    assert row == {
        "table": "t",
        "index": "g",
        "reason": "IndexWriteKeyRangeThroughputExceeded",
        "buffered_write_units": 88.0,
        "buffer_write_units": 18000.0,
        "full_in_s": 880.0,
    }


def test_a_runs_load_end_does_not_wait_for_an_emulator_behind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An emulator answering the run's requests first: its buffers are read with its counts.
    monkeypatch.setattr(runner, "BUFFERS_TIMEOUT_S", 0.2)
    with serve(slow_metrics_server(BUFFERS, delay_s=0.6)) as url:
        target = runner.Target(url, "emulator", scale=0.1)
        assert runner._target_buffers(target) == []
        assert runner._target_buffers(runner.Target(url, "DynamoDB")) == []  # no model
