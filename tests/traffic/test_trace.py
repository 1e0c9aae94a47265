"""The trace file: written off the caller's thread, read back whole, or up to where it was cut."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from loadgen.errors import ConfigError
from loadgen.traffic.replay import Replayer, load_trace, speed_stages
from loadgen.traffic.trace import TraceRecord, TraceWriter, read_trace

SCHEMA = {"name": "app", "pk": ["pk", "S"], "sk": ["sk", "S"], "indexes": {}}


def _write(
    path: Path, keys: list[str], *, hash_keys: str | None = None, close: bool = True
) -> TraceWriter:
    writer = TraceWriter(path, source="boto3", scale=0.1, hash_keys=hash_keys, flush_s=0.05)
    writer.schema(SCHEMA)
    for i, key in enumerate(keys):
        writer.write(TraceRecord(i * 0.01, "PutItem", "app", key, f"s{i}", size=100 + i))
    if close:
        writer.close()
    return writer


def test_a_trace_reads_back_as_written(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl.gz"
    _write(path, ["a", "b", "a"])
    trace = read_trace(path)
    assert trace.header["source"] == "boto3" and trace.scale == 0.1
    assert trace.schemas == {"app": SCHEMA}
    assert [(r.pk, r.sk, r.size) for r in trace.records] == [
        ("a", "s0", 100), ("b", "s1", 101), ("a", "s2", 102)
    ]  # fmt: skip
    assert trace.end == {"records": 3, "dropped": 0}


def test_hashed_keys_keep_popularity_and_order_but_not_the_text(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl.gz"
    _write(path, ["user#1", "user#2", "user#1", "user#1"], hash_keys="salt")
    with gzip.open(path, "rt") as file:
        text = file.read()
    assert "user#" not in text
    pks = [r.pk for r in read_trace(path).records]
    assert pks[0] == pks[2] == pks[3] != pks[1] and len(pks[0] or "") == 16


def test_a_file_cut_short_reads_up_to_the_cut(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl.gz"
    _write(path, [f"k{i}" for i in range(2000)])
    whole = path.read_bytes()
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) * 2 // 3])
    trace = read_trace(cut)
    assert trace.end is None
    assert 0 < len(trace.records) < 2000
    assert [r.pk for r in trace.records] == [f"k{i}" for i in range(len(trace.records))]


def test_a_file_being_written_is_readable(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl.gz"
    writer = _write(path, ["a", "b"], close=False)
    try:
        import time

        deadline = time.monotonic() + 5
        while len(read_trace(path).records) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [r.pk for r in read_trace(path).records] == ["a", "b"]
    finally:
        writer.close()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "not a trace file"),
        (b'{"hello": 1}\n', "not a trace file"),
        (b"\x1f\x8bgarbage", "not a trace"),
    ],
)
def test_what_is_not_a_trace_is_named(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "x.jsonl.gz"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=expected):
        read_trace(path)


def test_speed_turns_the_trace_rate_into_stages(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl.gz"
    with TraceWriter(path, source="emulator", scale=0.1) as writer:
        writer.schema(SCHEMA)
        for i in range(30):  # 20 requests in the first second, 10 in the second
            t = i * 0.05 if i < 20 else 1.0 + (i - 20) * 0.1
            writer.write(TraceRecord(t, "GetItem", "app", "k", "s"))
    trace = load_trace(path)
    # At AWS scale (the trace was captured at 0.1), a stage per second of the replay.
    assert speed_stages(trace, 1) == "0s:200,1s:100"
    assert speed_stages(trace, 2) == "0s:300"  # both seconds in the first of the replay
    with pytest.raises(ConfigError, match="--speed"):
        speed_stages(trace, 0)


def test_key_scale_spreads_each_key_over_copies_with_its_size(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl.gz"
    _write(path, ["hot"] * 400)
    replayer = Replayer(load_trace(path), key_scale=4, seed=3)
    calls = [replayer.call(replayer.next()) for _ in range(400)]
    copies = {call.pk for call in calls}
    assert copies == {"hot", "hot~1", "hot~2", "hot~3"}
    assert min(sum(c.pk == k for c in calls) for k in copies) > 60  # about 100 each
    from loadgen.model.itemsize import item_size

    assert [item_size(c.params["Item"]) for c in calls[:3]] == [100, 101, 102]


def test_a_writer_that_falls_behind_drops_and_counts_never_blocks(tmp_path: Path) -> None:
    import threading

    path = tmp_path / "t.jsonl.gz"
    writer = TraceWriter(path, source="boto3", max_queue=2)
    release = threading.Event()
    write_line = writer._write_line

    def stuck(line: dict) -> None:  # a disk that stalls
        release.wait(10)
        write_line(line)

    writer._write_line = stuck  # type: ignore[method-assign]
    for i in range(10):
        writer.write(TraceRecord(i, "GetItem", "app", f"k{i}"))
    assert writer.dropped >= 7
    release.set()
    writer.close()
    trace = read_trace(path)
    assert len(trace.records) + writer.dropped == 10
    assert trace.end == {"records": len(trace.records), "dropped": writer.dropped}


def test_an_item_waits_for_the_request_before_it_and_a_query_for_nothing(tmp_path: Path) -> None:
    import gevent

    path = tmp_path / "t.jsonl.gz"
    with TraceWriter(path, source="boto3") as writer:
        writer.schema(SCHEMA)
        writer.write(TraceRecord(0.0, "PutItem", "app", "k", "s", size=50))
        writer.write(TraceRecord(0.1, "GetItem", "app", "k", "s"))
        writer.write(TraceRecord(0.2, "Query", "app", "k"))
    replayer = Replayer(load_trace(path))
    done: list[str] = []

    def run(delay: float) -> None:
        step = replayer.next()
        with replayer.turn(step):
            gevent.sleep(delay)
            done.append(step.record.op)

    # The PutItem takes longest; the GetItem of its item waits for it, the Query does not.
    gevent.joinall([gevent.spawn(run, 0.2), gevent.spawn(run, 0.0), gevent.spawn(run, 0.05)])
    assert done == ["Query", "PutItem", "GetItem"]
