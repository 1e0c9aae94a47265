"""One design, one answer: what ``check``, ``simulate`` and ``run`` say of every shipped design.

    .venv/bin/python benchmarks/bench_one_answer.py [--no-run] [--duration 20] \
        [--designs counter:single,capacity.yaml:warmed,...] [--keep DIR] [--read DIR]

For every variant of every design file in ``examples/designs`` (the YAML files and AWS's
``dynamodb_data_model.json``), as a user runs them:

- ``loadgen check FILE --out`` (every variant of the file at once): the patterns it expects to
  fail at launch, each with the model's cause of most of its throttles;
- ``loadgen simulate FILE --design V --out`` at the file's launch rates (its default for a
  design file): the patterns its results file's per-pattern verdicts fail, each with the cause
  of most of its throttled attempts (its row's ``throttles``);
- ``loadgen run FILE --design V --duration 20s`` on the embedded target at ``--scale auto``
  (unless ``--no-run``): the patterns its verdicts fail (``results["verdicts"]``), each with
  the cause its row's ``throttles`` give where the run recorded them, else ``not reported``;
  a pattern failed for another reason than throttles (load not delivered, errors) shows that
  reason's first words.

Printed per variant: each command's failing patterns (``-`` where all pass) and whether they
agree: the same failing patterns, and the same causes where both name one. Then how many
variants agree; how many agree on the patterns failed by throttles alone (leaving out those a
run failed for another reason, such as a machine that did not deliver the load); and the
seconds each command took (a run: its duration plus the embedded engine's start and the
starting data). A run takes about a minute; every shipped variant, twenty minutes.
``--keep DIR`` keeps the results files; ``--read DIR`` reads them again instead of running.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DESIGNS = ROOT / "examples" / "designs"
NOT_REPORTED = "not reported"
CAUSES = frozenset({"partition", "capacity", "provisioned", "account", "maximum", NOT_REPORTED})
"""What names a throttle's cause; any other reason is not a throttle (load not delivered...)."""

Answer = dict[str, str]
"""Failing pattern to why: the cause of most of its throttles, or another reason."""


def loadgen(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "loadgen", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def design_files() -> list[Path]:
    return [*sorted(DESIGNS.glob("*.yaml")), DESIGNS / "dynamodb_data_model.json"]


def variants(path: Path) -> list[str]:
    from loadgen.design.loader import load_designs

    return [design.name for design in load_designs(str(path))]


def dominant(throttles: list[dict[str, Any]] | None) -> str:
    """The cause of most throttled attempts, from a results row's ``throttles``."""
    if not throttles:
        return NOT_REPORTED
    return str(max(throttles, key=lambda t: t.get("attempts") or 0).get("cause") or NOT_REPORTED)


def verdict_answer(results: dict[str, Any]) -> Answer:
    """Failing patterns of a results file, as its per-pattern verdicts judge them."""
    from loadgen.verdict.patterns import pattern_verdicts

    rows = {row["name"]: row for row in results.get("operations") or ()}
    verdicts = results.get("verdicts") or [v.to_dict() for v in pattern_verdicts(results)]
    answer = {}
    for verdict in verdicts:
        if verdict["status"] != "FAIL":
            continue
        row = rows.get(verdict["id"]) or {}
        if row.get("throttled_attempts") and verdict.get("throttled_share", 0) > 0.01:
            answer[verdict["id"]] = dominant(row.get("throttles"))
        elif verdict.get("behind"):
            answer[verdict["id"]] = "buffer"  # its table's GSI falls behind, not yet full
        else:
            reasons = verdict.get("reasons") or [verdict.get("reason", "")]
            answer[verdict["id"]] = str(reasons[0]).split(":")[0][:40]
    return answer


def check_answers(path: Path, out: Path, again: bool) -> tuple[dict[str, Answer], float]:
    started = time.perf_counter()
    done = None if again else loadgen("check", str(path), "--out", str(out), timeout=1800)
    elapsed = time.perf_counter() - started
    if done is not None and done.returncode not in (0, 1):
        raise RuntimeError(f"check {path.name}: {done.stderr.strip()[-300:]}")
    report = json.loads(out.read_text())
    return {
        section["design"]["name"]: {
            p["id"]: p["cause"] or NOT_REPORTED
            for p in section["patterns"]
            if p["verdict"] == "FAIL"
        }
        for section in report["designs"]
    }, elapsed


def simulate_answer(path: Path, variant: str, out: Path, again: bool) -> tuple[Answer, float]:
    started = time.perf_counter()
    done = (
        None
        if again
        else loadgen("simulate", str(path), "--design", variant, "--out", str(out), timeout=1800)
    )
    elapsed = time.perf_counter() - started
    if done is not None and done.returncode not in (0, 1):
        raise RuntimeError(f"simulate {path.name}:{variant}: {done.stderr.strip()[-300:]}")
    return verdict_answer(json.loads(out.read_text())), elapsed


def run_answer(
    path: Path, variant: str, out: Path, duration: int, again: bool
) -> tuple[Answer | str, float]:
    started = time.perf_counter()
    if not again:
        done = loadgen(
            "run", str(path), "--design", variant, "--duration", f"{duration}s", "--scale",
            "auto", "--out", str(out), timeout=duration + 900,
        )  # fmt: skip
        if not out.is_file():
            return f"no results (exit {done.returncode}: {done.stderr.strip()[-120:]})", 0.0
    elapsed = time.perf_counter() - started
    if not out.is_file():
        return "no results kept", elapsed
    return verdict_answer(json.loads(out.read_text())), elapsed


def agree(*answers: Answer | str) -> bool:
    """The same failing patterns; the same causes where both name one."""
    known = [a for a in answers if isinstance(a, dict)]
    if len(known) < len(answers):
        return False
    first = known[0]
    for other in known[1:]:
        if set(other) != set(first):
            return False
        for pattern, cause in other.items():
            if NOT_REPORTED not in (cause, first[pattern]) and cause != first[pattern]:
                return False
    return True


def throttled(answer: Answer | str) -> Answer | str:
    """The patterns an answer fails for throttles, leaving out other reasons."""
    if isinstance(answer, str):
        return answer
    return {p: why for p, why in answer.items() if why in CAUSES}


def cell(answer: Answer | str) -> str:
    if isinstance(answer, str):
        return answer
    return ", ".join(f"{p} ({cause})" for p, cause in answer.items()) or "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-run", action="store_true", help="check and simulate only")
    parser.add_argument("--duration", type=int, default=20, help="each run's seconds")
    parser.add_argument(
        "--designs", help="FILE:VARIANT,... (a file's stem or name); default: every variant"
    )
    parser.add_argument("--keep", help="keep the results files in this directory")
    parser.add_argument("--read", help="read the results files --keep left there, run nothing")
    args = parser.parse_args()
    again = args.read is not None
    wanted = None
    if args.designs:
        wanted = {tuple(item.split(":", 1)) for item in args.designs.split(",")}
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(args.read or args.keep or scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        rows = []
        seconds = {"check": 0.0, "simulate": 0.0, "run": 0.0}
        for path in design_files():
            names = [
                v
                for v in variants(path)
                if wanted is None or (path.stem, v) in wanted or (path.name, v) in wanted
            ]
            if not names:
                continue
            checked, took = check_answers(path, tmp / f"{path.stem}.check.json", again)
            seconds["check"] += took
            for variant in names:
                label = f"{path.name}:{variant}"
                simulated, took = simulate_answer(path, variant, tmp / f"{label}.sim.json", again)
                seconds["simulate"] += took
                ran: Answer | str = "not run"
                if not args.no_run:
                    ran, took = run_answer(
                        path, variant, tmp / f"{label}.run.json", args.duration, again
                    )
                    seconds["run"] += took
                answers = [checked[variant], simulated] + ([] if args.no_run else [ran])
                same = agree(*(throttled(a) for a in answers))
                rows.append((label, checked[variant], simulated, ran, agree(*answers), same))
                print(
                    f"{label:<34} check: {cell(checked[variant])} | simulate: {cell(simulated)}"
                    f" | run: {cell(ran)} | {'agree' if rows[-1][4] else 'DIFFER'}",
                    flush=True,
                )
        together = sum(row[4] for row in rows)
        who = "check and simulate" if args.no_run else "check, simulate and run"
        print(f"\n{together} of {len(rows)} variants: {who} name the same failing patterns")
        print(
            f"{sum(row[5] for row in rows)} of {len(rows)} on the patterns failed by throttles "
            "(leaving out those failed for another reason, such as load not delivered)"
        )
        print(
            "Seconds: check {check:.1f} (every variant, one process a file), simulate "
            "{simulate:.1f}, run {run:.1f}".format(**seconds)
        )


if __name__ == "__main__":
    main()
