"""One figure for every door: a design run's diagnosis names what the launch asks, and sizes
its remedies, by check's figures, on every shipped variant.

A design run keeps ``loadgen check``'s answer for its launch rates in its results
(``design.check``, as ``check --out`` writes it). Here each shipped variant's launch goes
through the model once, as ``check`` sends it: the results file of that simulation
(`build_results`: a run's shape, with the throttles the model gave) carries check's answer from
the same simulation (`report_of`, what `check` returns), and the diagnosis of it is held to
check's figures within `TOLERANCE`: the units/s it says the launch asks of each table, index and
hot key it names, and the warm throughput, provisioned units and shards its remedy sets.
Real runs of shipped files are held to it in tests/design/test_one_answer.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from loadgen.design import load_design, load_designs
from loadgen.model.sizing import capacity_figure, provisioned_figure, shards_for
from loadgen.simulate import Settings, build_results, simulate
from loadgen.simulate.launch import launch_profile, report_of
from loadgen.verdict.diagnosis import Finding, diagnose

ROOT = Path(__file__).resolve().parents[2]
TOLERANCE = 0.05
VARIANTS = [
    (path.stem, design.name)
    for path in sorted((ROOT / "examples" / "designs").glob("*.yaml"))
    for design in load_designs(str(path))
]
_ASKS = re.compile(r"The launch asks ([\d,]+) (read|write) units/s of it \(([^)]*)\)")
_KEYS = ("hot-key", "hot-gsi-key")
_CAPACITY = ("table-capacity", "provisioned-capacity", "on-demand-maximum", "account-quota")

pytestmark = pytest.mark.slow


def within(figure: float, checked: float) -> bool:
    return abs(figure - checked) <= TOLERANCE * checked


def figures_of(finding: Finding) -> tuple[float, str]:
    """What the finding prints the launch asks, and of which side."""
    found = _ASKS.search(finding.evidence)
    assert found is not None, finding.evidence
    assert found.group(3) == "check's figures for the design file's launch rates"
    return float(found.group(1).replace(",", "")), found.group(2)


def held_to_check(results: dict[str, Any]) -> list[Finding]:
    """Every finding of ``results``' diagnosis that sizes a remedy, each checked against the
    check answer the results carry; the findings checked."""
    answer = results["design"]["check"]
    held = []
    for finding in diagnose(results):
        if finding.kind not in (*_KEYS, *_CAPACITY, "gsi-buffer") or finding.asked is None:
            continue
        printed, side = figures_of(finding)
        if finding.kind in _KEYS:
            (key,) = finding.keys
            (load,) = [k for k in answer["keys"] if k["scope"] == finding.scope and k["key"] == key]
            checked = load[f"{side}_units_per_s"]
            planned = [
                limit["shards"]
                for limit in answer["limits"]
                if (limit["scope"], limit["kind"], limit["key"]) == (finding.scope, side, key)
                and limit["shards"]
            ]
            if finding.remedy.startswith("Nothing is needed for the launch's demand"):
                # A key a run throttled in bunched seconds, on patterns check passes: no shards.
                passed = {p["id"] for p in answer["patterns"] if p["verdict"] != "FAIL"}
                assert finding.figure is None and not planned, finding.remedy
                assert set(finding.patterns) <= passed, finding.patterns
            else:
                assert finding.figure == (planned[0] if planned else shards_for(checked, side))
        else:
            checked = answer["partitions"][finding.scope][f"{side}_units_per_s"]
            sized = provisioned_figure if "provision" in finding.kind else capacity_figure
            if finding.figure is not None:
                assert finding.figure == sized(checked), finding.remedy
                assert f"{finding.figure:,}" in finding.remedy
        assert within(finding.asked, checked), (finding.title, finding.asked, checked)
        assert within(printed, checked), (finding.title, printed, checked)
        held.append(finding)
    return held


@pytest.mark.parametrize(("workload", "variant"), VARIANTS)
def test_the_diagnosis_of_a_launch_names_checks_figures(workload: str, variant: str) -> None:
    design = load_design(str(ROOT / "examples" / "designs" / f"{workload}.yaml"), variant)
    result = simulate(design, launch_profile(design), Settings(seed=1))
    report = report_of(result)
    results = build_results(result)
    results["design"]["check"] = report.to_dict()  # as a design run keeps it
    held = held_to_check(results)
    # A variant check fails on a table's, an index's or a key's limit has its figures named.
    sized = [lim for lim in report.limits if lim.verdict == "FAIL" and lim.cause != "account"]
    if sized:
        assert held, [f.title for f in diagnose(results)]
    for finding in held:
        if finding.kind in _KEYS:
            # A key check fails a partition's ceiling on is sharded as check's remedy does.
            _, side = figures_of(finding)
            over = [
                lim
                for lim in report.limits
                if lim.verdict == "FAIL"
                and (lim.scope, lim.kind, lim.key) == (finding.scope, side, finding.keys[0])
            ]
            for limit in over:
                # check's plan, which --remedy writes: at least the RISK rule's count.
                assert finding.figure == limit.shards
                assert limit.shards >= shards_for(limit.key_units, limit.kind)
                assert f"N = {limit.shards} " in finding.remedy
