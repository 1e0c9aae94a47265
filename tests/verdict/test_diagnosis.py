"""The diagnosis: what the heat shows is named, with the key and the remedy."""

from __future__ import annotations

from loadgen.model.hashing import bucket_of
from loadgen.verdict import analysis
from loadgen.verdict.diagnosis import GUIDES, diagnose
from tests.results_factory import event, make_results, steady


def kinds(results):
    return [(f.kind, f.scope, f.keys) for f in diagnose(results)]


def test_one_hot_key_written_gets_write_sharding() -> None:
    results = make_results(steady("t", ["GLOBAL"], per_second=60, throttled=1))
    (finding,) = diagnose(results)
    assert (finding.kind, finding.scope, finding.keys) == ("hot-key", "t", ("GLOBAL",))
    assert "GLOBAL takes 100%" in finding.evidence
    assert "600 write" in finding.evidence  # 60/s at scale 0.1
    assert "GLOBAL#<0..N-1>" in finding.remedy and "N = 2" in finding.remedy
    assert "throttled, so the demand was higher" in finding.remedy
    assert finding.guide == GUIDES["write-sharding"]


def test_one_hot_key_read_gets_caching() -> None:
    results = make_results(steady("t", ["CONFIG"], per_second=100, operation="GetItem"))
    (finding,) = diagnose(results)
    assert finding.kind == "hot-key" and finding.keys == ("CONFIG",)
    assert finding.guide == GUIDES["caching"]
    assert "Cache the reads of CONFIG" in finding.remedy


def test_hot_gsi_key_gets_gsi_sharding() -> None:
    events = [
        event(s, "PutItem", "orders", [f"USER#{s}-{i}"], index_keys={"status": ["STATUS#NEW"]})
        for s in range(10)
        for i in range(20)
    ]
    findings = diagnose(make_results(events))
    assert [(f.kind, f.scope, f.keys) for f in findings] == [
        ("hot-gsi-key", "orders/status", ("STATUS#NEW",))
    ]
    (finding,) = findings
    assert finding.title == "A hot GSI key: STATUS#NEW on index status of orders"
    assert "back-pressure" in finding.evidence
    assert "STATUS#NEW#<0..N-1>" in finding.remedy
    assert finding.guide == GUIDES["gsi-sharding"]


def test_time_ordered_key_is_a_moving_hot_spot() -> None:
    hours = [f"READINGS#2026-01-01-{h:02d}" for h in range(4)]
    events = []
    for second in range(12):
        events += steady("s", [hours[second // 3]], seconds=1, per_second=30)
        events[-30:] = [{**e, "second": second} for e in events[-30:]]
    (finding,) = diagnose(make_results(events))
    assert finding.kind == "moving-hot-spot"
    assert finding.keys == tuple(hours)
    assert " → ".join(hours) in finding.evidence
    assert finding.guide == GUIDES["time-series"]
    assert "time bucket" in finding.remedy


def test_keys_taking_turns_are_not_a_moving_hot_spot() -> None:
    events = []
    for second in range(12):
        key = "A" if second % 2 else "B"
        events += [{**e, "second": second} for e in steady("s", [key], seconds=1, per_second=30)]
    assert [kind for kind, _, _ in kinds(make_results(events))] == ["hot-key"]


def test_several_keys_on_one_partition_are_a_hot_range() -> None:
    # Six keys of partition 0 (of 16) at 15 calls/s each, and a light spread elsewhere.
    def partition(key: str) -> int:
        return (2 * bucket_of(key, 256) + 1) * 16 // 512

    near = [k for k in (f"item{i}" for i in range(2000)) if partition(k) == 0][:6]
    far = [k for k in (f"other{i}" for i in range(2000)) if partition(k) != 0][:30]
    events = []
    for second in range(10):
        for key in near * 15 + far:
            events.append(event(second, "PutItem", "t", [key]))
    results = make_results(events)
    assert analysis.partition_skew(results, analysis.Scope("t"), 16) > 3
    (finding,) = diagnose(results)
    assert finding.kind == "hot-range"
    assert set(finding.keys) == set(near)
    assert finding.guide == GUIDES["uniform-load"]


def test_even_spread_has_no_hot_spot() -> None:
    results = make_results(steady("t", [f"k{i}" for i in range(500)], per_second=50))
    (finding,) = diagnose(results)
    assert finding.kind == "even"
    assert finding.title == "No hot spot"


def test_most_throttled_finding_comes_first() -> None:
    quiet = steady("a", ["A"], per_second=30)
    throttled = steady("b", ["B"], per_second=30, throttled=1)
    events = sorted(quiet + throttled, key=lambda e: e["second"])
    assert [f.scope for f in diagnose(make_results(events))] == ["b", "a"]


def status_index(*, reads_throttled: bool) -> list[dict]:
    """A status index: 5 status writes a second, and 40 "who is online" Queries a second of
    9.5 read units each; the reads or the writes throttled."""
    events = []
    for s in range(10):
        for i in range(5):
            events.append(
                event(s, "UpdateItem", "chat", [f"USER#{s}-{i}"],
                      throttled=0 if reads_throttled else 1,
                      index_keys={"GSI1": ["STATUS#online"]})
            )  # fmt: skip
        for _ in range(40):
            events.append(
                event(s, "Query", "chat", ["STATUS#online"], index="GSI1", units=9.5,
                      throttled=1 if reads_throttled else 0)
            )  # fmt: skip
    return events


def test_a_read_hot_gsi_key_gets_read_remedies_sized_on_read_units() -> None:
    findings = diagnose(make_results(status_index(reads_throttled=True)))
    finding = next(f for f in findings if f.scope == "chat/GSI1")
    assert finding.title == "A read-hot GSI key: STATUS#online on index GSI1 of chat"
    assert "3,800 read units/s" in finding.evidence and "on reads" in finding.evidence
    for remedy in ("a Limit", "sparse", "DAX", "eventually consistent"):
        assert remedy in finding.remedy
    # 3,800 read units/s over half a partition's 3,000: 3 shards. Sized on writes (50 write
    # units/s at AWS scale) it would have said 2.
    assert "N = 3 keeps each shard under half a partition's 3,000 read units/s" in finding.remedy
    assert "write units/s" not in finding.remedy
    assert finding.guide == GUIDES["sparse-index"]


def test_a_write_throttled_gsi_key_keeps_write_sharding_sized_on_write_units() -> None:
    findings = diagnose(make_results(status_index(reads_throttled=False)))
    finding = next(f for f in findings if f.scope == "chat/GSI1")
    assert finding.title == "A hot GSI key: STATUS#online on index GSI1 of chat"
    assert "on writes" in finding.evidence
    assert "N = 2 keeps each shard under half a partition's 1,000 write units/s" in finding.remedy
    assert "Limit" not in finding.remedy
    assert finding.guide == GUIDES["gsi-sharding"]
