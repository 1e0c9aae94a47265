"""The ticketing example end to end: a named hot key's share on paper and under load, and the
scale ``--scale auto`` picks for the file's largest request."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from loadgen.design import load_design
from loadgen.emulator.engines import smallest_faithful_scale
from loadgen.simulate import check
from loadgen.simulate.demand import largest_request

ROOT = Path(__file__).resolve().parents[2]
TICKETING = ROOT / "examples" / "designs" / "ticketing.yaml"


def test_the_largest_request_is_read_from_the_files_entities_and_actions() -> None:
    found = largest_request(load_design(str(TICKETING)))
    # The 2 KB order (3 write units), twice over in its transaction, on its own key.
    assert found is not None
    assert (found.pattern, found.units, found.where) == ("purchase", 6.0, "Tickets")


def test_reading_a_design_leaves_ssl_unimported_for_locust_to_patch() -> None:
    # A run reads the design (its expressions checked, its largest request priced) before it
    # imports Locust, which must patch ssl first: importing moto or botocore here broke runs.
    code = (
        "import sys\n"
        "from loadgen.design import load_designs\n"
        "from loadgen.simulate.demand import largest_request\n"
        f"for design in load_designs({str(TICKETING)!r}):\n"
        "    largest_request(design)\n"
        "load_designs('examples/designs/dynamodb_data_model.json')\n"
        "print(sorted(m for m in ('ssl', 'moto', 'botocore') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.slow
def test_a_named_hot_key_takes_on_paper_and_under_load_the_same_share(tmp_path: Path) -> None:
    design = load_design(str(TICKETING), "warm")
    report = check(design)
    page_view = next(p for p in report.patterns if p.id == "page-view")
    (hottest,) = [k for k in report.keys if (k.scope, k.key) == ("Tickets", "EVENT#taylor")]
    on_paper = hottest.read / (page_view.rate * page_view.read_units)
    assert on_paper == pytest.approx(0.4)
    out = tmp_path / "ticketing.json"
    done = subprocess.run(
        [sys.executable, "-m", "loadgen", "run", str(TICKETING), "--design", "warm",
         "--duration", "8s", "--engine", "moto", "--starting-limit", "2000", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert out.exists(), done.stderr[-3000:]
    results = json.loads(out.read_text())
    (row,) = [r for r in results["operations"] if r["name"] == "page-view"]
    measured = row["hot_key"]
    assert measured["key"] == "EVENT#taylor"
    assert measured["share"] == pytest.approx(on_paper, rel=0.10), measured
    # --scale auto, bounded below by the file's largest request (6 units: 0.06 at least).
    assert "the largest request is purchase's, 6 write units on one key of Tickets" in (done.stderr)
    scale = float(re.search(r"Partition model at scale ([0-9.]+)", done.stderr).group(1))  # type: ignore[union-attr]
    assert scale >= smallest_faithful_scale(6)
