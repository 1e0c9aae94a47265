"""``loadgen check --remedy``: every binding limit at once, written as a variant that passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadgen.cli import main
from loadgen.design import load_design
from loadgen.design.loader import load_designs
from loadgen.model.hashing import bucket_of
from loadgen.model.partitions import PARTITION_WRITE_UNITS
from loadgen.model.sizing import HEADROOM, capacity_figure, shards_for
from loadgen.simulate import check
from loadgen.simulate.remedy import remedy

ROOT = Path(__file__).resolve().parents[2]
DESIGNS = ROOT / "examples" / "designs"


def test_every_limit_the_lobby_binds_is_named_at_once_with_the_patterns_it_fails() -> None:
    report = check(load_design(str(DESIGNS / "game-lobby.yaml")))
    failing = {
        (limit.scope, limit.kind, limit.cause) for limit in report.limits if limit.verdict == "FAIL"
    }
    assert {
        ("battle-royale", "write", "capacity"),
        ("battle-royale", "write", "partition"),
        ("battle-royale/OpenGamesIndex", "write", "buffer"),
    } <= failing
    assert all(
        limit.patterns == ("join-game",) for limit in report.limits if limit.verdict == "FAIL"
    )
    # No row reads PASS while the launch asks it past what it serves.
    for limit in report.limits:
        if limit.verdict == "PASS" and limit.cause != "partition":
            assert limit.asked <= limit.serves


def test_the_counters_remedy_shards_its_key_and_reads_every_shard() -> None:
    found = remedy(load_design(str(DESIGNS / "counter.yaml"), "single"))
    assert found.name == "single-remedied"
    assert found.reports[0].failed and not found.final.failed
    (generator,) = found.change["generators"]
    shards = found.change["generators"][generator]["shard"]
    assert shards >= shards_for(1500, "write")
    patterns = found.change["access_patterns"]
    assert patterns["increment"]["key"] == {"pk": f"GLOBAL_COUNTER#{{{generator}}}"}
    assert patterns["read"]["operation"] == "BatchGetItem"
    assert patterns["read"]["each"] == generator


def test_a_warm_throughput_remedy_is_the_diagnosis_figure() -> None:
    found = remedy(load_design(str(DESIGNS / "capacity.yaml"), "new-table"))
    (table,) = found.change["tables"]
    assert table["WarmThroughput"] == {"WriteUnitsPerSecond": capacity_figure(4800)}
    assert not found.final.failed


def test_check_remedy_writes_a_variant_that_check_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "lobby.yaml"
    assert main(["check", str(DESIGNS / "game-lobby.yaml"), "--remedy", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "Remedy of default, written as remedied:" in printed
    assert "join-game: its condition (people < :limit) now tests one shard's item" in printed
    text = out.read_text()
    assert text.startswith((DESIGNS / "game-lobby.yaml").read_text().rstrip("\n"))
    assert "# Left to the team: join-game: its condition" in text
    assert [d.name for d in load_designs(str(out))] == ["default", "remedied"]
    assert main(["check", str(out), "--design", "remedied"]) == 0


def test_a_file_with_variants_gets_one_more_per_failing_variant(tmp_path: Path) -> None:
    out = tmp_path / "capacity.yaml"
    assert main(["check", str(DESIGNS / "capacity.yaml"), "--remedy", str(out)]) == 1
    names = [d.name for d in load_designs(str(out))]
    assert names == ["new-table", "warmed", "new-table-remedied"]
    assert main(["check", str(out), "--design", "new-table-remedied"]) == 0


def test_a_passing_aws_data_model_is_written_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # AWS's data model has no variants: with nothing to remedy, the file is written unchanged
    # (it was given a "designs" block, which AWS's format refuses on reading it back).
    source = DESIGNS / "dynamodb_data_model.json"
    out = tmp_path / "model.json"
    assert main(["check", str(source), "--remedy", str(out)]) == 0
    assert out.read_bytes() == source.read_bytes()
    assert (
        capsys.readouterr().err.strip().endswith(f"Nothing to remedy: {out} is the file as it is")
    )


def test_the_remedy_goes_into_a_new_folder_and_a_path_it_cannot_write_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "remedies" / "lobby.yaml"
    assert main(["check", str(DESIGNS / "game-lobby.yaml"), "--remedy", str(out)]) == 1
    assert [d.name for d in load_designs(str(out))] == ["default", "remedied"]
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    capsys.readouterr()
    code = main(["check", str(DESIGNS / "game-lobby.yaml"), "--remedy", f"{blocked}/lobby.yaml"])
    assert code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()[-1:]
    assert line.startswith(f"loadgen: error: --remedy {blocked}/lobby.yaml: cannot write")


def test_a_read_hot_query_is_sharded_with_its_page_split_over_the_shards() -> None:
    # chat's online-now reads 100 entries of STATUS#online 2,500 times a second: sharded, each
    # shard gives its share of the page, so the reads over every shard ask what one did.
    found = remedy(load_design(str(DESIGNS / "chat.yaml"), "status-index"))
    (generator,) = found.change["generators"]
    shards = found.change["generators"][generator]["shard"]
    online = found.change["access_patterns"]["online-now"]
    assert online["each"] == generator
    assert online["limit"] == -(-100 // shards) < 100
    assert found.reports[0].failed and not found.final.failed
    # An index's reads are eventually consistent: the remedy says the ceiling check says.
    limits = [lim for lim in found.reports[0].limits if lim.key == "STATUS#online"]
    assert {(lim.kind, lim.serves) for lim in limits if lim.cause == "partition"} >= {
        ("read", 4_500)
    }
    assert any("STATUS#online at 12,500 read units/s of a partition's 4,500" in line
               for line in found.lines())  # fmt: skip


def test_the_lobbys_shards_leave_each_partition_its_headroom_where_the_model_places_them() -> None:
    found = remedy(load_design(str(DESIGNS / "game-lobby.yaml")))
    final = found.final
    assert not final.failed
    (name,) = [n for n, key in found.sharded.items() if key.key == "GAME#featured"]
    shards = found.change["generators"][name]["shard"]
    count = final.partitions["battle-royale"]
    # Each shard alike (check lists a lane's hottest keys only): placed by the model's hash.
    shard = max(
        load.write
        for load in final.keys
        if load.scope == "battle-royale" and load.key.startswith("GAME#featured#")
    )
    on: dict[int, float] = {}
    for n in range(shards):
        place = bucket_of(f"GAME#featured#{n}", count.at_start)
        on[place] = on.get(place, 0.0) + shard
    featured = sum(on.values())
    assert featured == pytest.approx(2_400, rel=0.05)
    others = (count.write_units - featured) / count.at_start
    # Five shards (the RISK rule's) put two on one partition beside the other keys' share:
    # 960 + 450 of 1,000 write units/s; the remedy's fit with its headroom, where the model
    # places them.
    assert shards > shards_for(2_400, "write")
    assert max(on.values()) + others <= PARTITION_WRITE_UNITS / HEADROOM
    # And as the model served them, the other keys where they fall: 859 at 13 shards.
    assert count.busiest_write_units is not None
    assert count.busiest_write_units <= PARTITION_WRITE_UNITS / HEADROOM


def test_a_capacity_the_shards_read_over_is_given_its_headroom_too() -> None:
    """A food-delivery design: london takes half of a city Query on a GSI. Sharding the city
    three ways reads each shard, so the index's reads triple, to 97.5% of the 12,000 a new
    on-demand index serves: the check still passes, but its busiest seconds would not. The
    remedy warms it as it warms a failing capacity."""
    path = Path(__file__).with_name("designs") / "delivery.yaml"
    found = remedy(load_design(str(path)))
    assert not found.final.failed
    first = {(lim.scope, lim.kind, lim.cause): lim for lim in found.reports[0].limits}
    final = {(lim.scope, lim.kind, lim.cause): lim for lim in found.final.limits}
    index = ("Delivery/ByCity", "read", "capacity")
    assert first[index].verdict == "PASS" and final[index].asked > first[index].asked
    assert final[index].serves == capacity_figure(final[index].asked)
    assert final[index].asked * HEADROOM <= final[index].serves
    said = [line for line in found.lines() if "ReadUnitsPerSecond" in line]
    assert said and "with the remedies above" in said[0], found.lines()
