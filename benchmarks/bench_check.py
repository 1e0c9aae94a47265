"""How long ``loadgen check`` takes: on every shipped design file, and on a design of 12 access
patterns with a 100-action transaction.

    .venv/bin/python benchmarks/bench_check.py [--repeats 3] [--files orders.yaml,chat.yaml]
        [--before DIR]

Each file is checked as a user checks it (``loadgen check FILE``, every variant, in a process
of its own, bytecode already compiled by a first untimed pass), ``--repeats`` times in turn
with the others, so the machine's other work falls on all of them alike. Printed per file: its
variants, patterns, and the median and the slowest of its wall times. The
12-pattern design (``twelve-patterns``) is written by this script to a temporary folder: a
battle-royale game's lobby, its 100-action transaction enrolling a squad of 25 in a match
(4 writes a player). ``--before DIR`` (a checkout of another commit, e.g. ``git worktree add
DIR COMMIT``) times that tree's ``loadgen check`` on each file too, in alternation with this
one's, and prints the ratio: the machine's load falls on both alike. ``cpu s`` is the median
of the CPU seconds (user and system) the check's process and its variants' processes took:
on a shared machine, what the work costs whatever else runs beside it.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DESIGNS = ROOT / "examples" / "designs"

_SQUAD = 25


def twelve_patterns(squad: int = _SQUAD) -> str:
    """A design of 12 access patterns, one of them a transaction of 4 actions a player of a
    ``squad`` (100 for the squad of 25)."""
    enrol = []
    for seat in range(squad):
        enrol += [
            f'      - {{operation: Update, key: {{PK: "MATCH#{{match}}", SK: "SEAT#{{p{seat}}}"}}, '
            'update: "SET taken = :yes", values: {":yes": 1}}',
            f'      - {{operation: Update, key: {{PK: "PLAYER#{{p{seat}}}", SK: PROFILE}}, '
            'update: "SET matches = matches + :one", values: {":one": 1}}',
            f'      - {{operation: Update, key: {{PK: "PLAYER#{{p{seat}}}", SK: STATS}}, '
            'update: "SET queued = :no", values: {":no": 0}}',
            f'      - {{operation: ConditionCheck, key: {{PK: "PLAYER#{{p{seat}}}", SK: BAN}}, '
            'condition: "attribute_not_exists(PK)"}',
        ]
    players = "\n".join(
        f"  p{seat}: {{count: 200000, distribution: uniform}}" for seat in range(squad)
    )
    return f"""\
name: twelve patterns
tables:
  - TableName: arena
    BillingMode: PAY_PER_REQUEST
    AttributeDefinitions:
      - {{AttributeName: PK, AttributeType: S}}
      - {{AttributeName: SK, AttributeType: S}}
      - {{AttributeName: mapName, AttributeType: S}}
    KeySchema:
      - {{AttributeName: PK, KeyType: HASH}}
      - {{AttributeName: SK, KeyType: RANGE}}
    GlobalSecondaryIndexes:
      - IndexName: ByMap
        KeySchema:
          - {{AttributeName: mapName, KeyType: HASH}}
          - {{AttributeName: PK, KeyType: RANGE}}
        Projection: {{ProjectionType: KEYS_ONLY}}
generators:
  match: {{count: 5000, distribution: "zipf:0.9", named: {{finals: 0.5}}}}
  player: {{count: 200000, distribution: uniform}}
  map: {{choice: {{Green Grasslands: 4, Dirty Desert: 2, Juicy Jungle: 1}}}}
  seat: {{count: 100, distribution: uniform}}
{players}
entities:
  match:
    item: {{PK: "MATCH#{{match}}", SK: META, mapName: "{{map}}", people: 0}}
    populate: {{match: all}}
  seat:
    item: {{PK: "MATCH#{{match}}", SK: "SEAT#{{seat}}", player: "{{player}}"}}
  profile:
    item: {{PK: "PLAYER#{{player}}", SK: PROFILE, matches: 0, name: {{size: 40}}}}
    populate: {{player: all}}
access_patterns:
  - {{id: enrol-squad, operation: TransactWriteItems, rate: 20/s, actions: [
{chr(10).join(a.strip()[2:] + "," for a in enrol).rstrip(",")}
    ]}}
  - {{id: match-page, operation: GetItem, key: {{PK: "MATCH#{{match}}", SK: META}}, rate: 900/s}}
  - {{id: profile, operation: GetItem, key: {{PK: "PLAYER#{{player}}", SK: PROFILE}},
     rate: 1500/s}}
  - {{id: join, operation: UpdateItem, key: {{PK: "MATCH#{{match}}", SK: META}},
     update: "SET people = people + :one", values: {{":one": 1}}, rate: 1200/s}}
  - {{id: seat, operation: PutItem, entity: seat, rate: 400/s}}
  - {{id: seats, operation: Query, key: {{PK: "MATCH#{{match}}"}}, limit: 100, rate: 200/s}}
  - {{id: open-matches, operation: Query, index: ByMap, key: {{mapName: "{{map}}"}},
     limit: 20, rate: 100/s}}
  - {{id: rename, operation: UpdateItem, key: {{PK: "PLAYER#{{player}}", SK: PROFILE}},
     update: "SET #n = :name", names: {{"#n": name}}, values: {{":name": "x"}}, rate: 20/s}}
  - {{id: leave, operation: DeleteItem, key: {{PK: "MATCH#{{match}}", SK: "SEAT#{{seat}}"}},
     rate: 100/s}}
  - {{id: profiles, operation: BatchGetItem, rate: 50/s, count: 25,
     key: {{PK: "PLAYER#{{player}}", SK: PROFILE}}}}
  - {{id: new-profile, operation: PutItem, entity: profile, rate: 30/s}}
  - {{id: all-matches, operation: Scan, limit: 50, rate: 2/s}}
"""


def _cpu() -> float:
    """CPU seconds of this process's waited-for children (and theirs) so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _check(path: Path, tree: Path = ROOT) -> tuple[float, str, float]:
    """(wall seconds, what it printed, CPU seconds) of one ``loadgen check``."""
    cpu = _cpu()
    started = time.perf_counter()
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(
        [sys.executable, "-m", "loadgen", "check", str(path)],
        capture_output=True, text=True, timeout=600, check=False, cwd=tree,
        env={**environment, "PYTHONPATH": str(tree)},
    )  # fmt: skip
    if done.returncode not in (0, 1):
        raise SystemExit(f"loadgen check {path} exited {done.returncode}: {done.stderr.strip()}")
    return time.perf_counter() - started, done.stdout, _cpu() - cpu


def _shape(output: str) -> tuple[int, int]:
    """(variants, patterns) of a check's output."""
    heads = [line for line in output.splitlines() if line.startswith("Design ")]
    patterns = sum(int(line.split(": ")[1].split(" access")[0]) for line in heads)
    return len(heads), patterns


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--files", default="", help="comma-separated names in examples/designs")
    parser.add_argument("--before", type=Path, help="another checkout, timed in alternation")
    args = parser.parse_args(argv)
    trees = [ROOT] if args.before is None else [args.before.resolve(), ROOT]
    with tempfile.TemporaryDirectory() as folder:
        own = Path(folder) / "twelve-patterns.yaml"
        own.write_text(twelve_patterns(), encoding="utf-8")
        shipped = [*sorted(DESIGNS.glob("*.yaml")), DESIGNS / "dynamodb_data_model.json"]
        if args.files:
            wanted = set(args.files.split(","))
            shipped = [p for p in shipped if p.name in wanted]
        files = [*shipped, own]
        shapes = {path: _shape(_check(path)[1]) for path in files}  # compiles the bytecode
        for tree in trees[:-1]:
            for path in files:
                _check(path, tree)
        times: dict[tuple[Path, Path], list[float]] = {}
        cpus: dict[tuple[Path, Path], list[float]] = {}
        for _ in range(args.repeats):
            for path in files:
                for tree in trees:
                    wall, _, cpu = _check(path, tree)
                    times.setdefault((tree, path), []).append(wall)
                    cpus.setdefault((tree, path), []).append(cpu)
        head = (
            f"{'design file':28} {'variants':>8} {'patterns':>8} {'median s':>9} {'max s':>7}"
            f" {'cpu s':>6}"
        )
        print(
            head
            + (
                f" {'before s':>9} {'ratio':>6} {'cpu before':>10} {'cpu ratio':>9}"
                if args.before
                else ""
            )
        )
        for path in files:
            variants, patterns = shapes[path]
            now, cpu = times[(ROOT, path)], statistics.median(cpus[(ROOT, path)])
            line = (
                f"{path.stem:28} {variants:>8} {patterns:>8} "
                f"{statistics.median(now):>9.2f} {max(now):>7.2f} {cpu:>6.2f}"
            )
            if args.before:
                before = statistics.median(times[(trees[0], path)])
                cpu_before = statistics.median(cpus[(trees[0], path)])
                line += f" {before:>9.2f} {statistics.median(now) / before:>6.2f}"
                line += f" {cpu_before:>10.2f} {cpu / cpu_before:>9.2f}"
            print(line)
        print(f"cores: {len(os.sched_getaffinity(0))}; load average: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
