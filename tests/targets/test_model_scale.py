"""A run learns the partition model's scale from a running ``loadgen emulator``, and from no
other endpoint."""

from __future__ import annotations

import socket

import pytest

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
