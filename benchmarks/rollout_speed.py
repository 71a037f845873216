"""Rollout speed: games per second at 1-ply on local processes (1 and N workers) and on a local Ray cluster,
and what a driver can hand out: tasks per second and bytes per task.

Every rollout here is the same one (the top ``--top`` plays of 31 from the start, ``--trials`` trials,
checker play 1-ply, cubeful, no luck adjustment unless ``--luck``), so the figures are comparable; each
is timed twice and the second (warm: worker processes started, numba compiled) is the figure, the first
shown beside it.  The results of every run must be equal (checked and printed).  Hand-out rate: ``--tasks``
tasks that do no work (``executor.echo_task``) through each executor; bytes per task: a rollout task
pickled (what goes to a worker) and its result as JSON (what comes back and what a journal stores).

Usage::

    python benchmarks/rollout_speed.py                        # 288 trials x 2 plays, workers 1 and 2, Ray
    python benchmarks/rollout_speed.py --trials 1296 --no-ray
"""

from __future__ import annotations

import argparse
import json
import pickle
import time

from _common import REFDATA  # puts the checkout on sys.path

from bgbot.engine.api import Engine
from bgbot.engine.executor import ModelBlob, Task, run_tasks
from bgbot.engine.rollout import RolloutSettings


def timed_rollout(engine: Engine, st: RolloutSettings, top: int, **kw: object) -> tuple[float, float, object]:
    cold = engine.rollout("4HPwATDgc/ABMA", "31", settings=st, top=top, **kw)
    warm = engine.rollout("4HPwATDgc/ABMA", "31", settings=st, top=top, **kw)
    return cold.games_per_second, warm.games_per_second, warm


def hand_out(blob: ModelBlob, n: int, **kw: object) -> float:
    tasks = [Task("bgbot.engine.executor:echo_task", blob.hash, {"i": i}, i) for i in range(n)]
    list(run_tasks(tasks[: max(2, n // 20)], blob, **kw))  # warm: workers up
    t0 = time.perf_counter()
    got = list(run_tasks(tasks, blob, **kw))
    assert len(got) == n
    return n / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=288)
    ap.add_argument("--top", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--trials-per-task", type=int, default=36)
    ap.add_argument("--luck", action="store_true")
    ap.add_argument("--tasks", type=int, default=400, help="no-op tasks for the hand-out rate")
    ap.add_argument("--no-ray", action="store_true")
    ap.add_argument("--luck-positions", type=int, default=0, help="measure the luck adjustment on N positions")
    ap.add_argument("--luck-trials", type=int, default=144)
    args = ap.parse_args()
    engine = Engine.load()
    st = RolloutSettings(trials=args.trials, luck=args.luck, trials_per_task=args.trials_per_task)
    print(f"rollout: top {args.top} plays of 31 from the start; {st.describe()}; {args.trials_per_task} trials a task")
    rows = []
    results = []
    for w in sorted({1, args.workers}):
        cold, warm, r = timed_rollout(engine, st, args.top, workers=w)
        rows.append((f"local, {w} worker{'s' if w > 1 else ''}", cold, warm))
        results.append(r)
    if not args.no_ray:
        import ray

        ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
        cold, warm, r = timed_rollout(engine, st, args.top, executor="ray", workers=args.workers)
        rows.append((f"ray (local cluster, {args.workers} CPUs)", cold, warm))
        results.append(r)
    base = rows[0][2]
    print(f"{'executor':<32} {'games/s':>8} {'first run':>10} {'vs 1 worker':>12} {'ms CPU/game':>12} {'busy':>5}")
    for (name, cold, warm), r in zip(rows, results, strict=True):
        games = r.trials * len(r.entries)
        busy = r.cpu_seconds / (r.seconds * r.workers)  # share of the workers' wall time spent computing
        print(
            f"{name:<32} {warm:8.1f} {cold:10.1f} {warm / base:11.2f}x {1000 * r.cpu_seconds / games:12.2f} {busy:5.2f}"
        )
    print("(busy < 1: the workers waited for a core - other processes on the machine - or for tasks)")
    same = all(
        [(e.label, e.mean) for e in r.entries] == [(e.label, e.mean) for e in results[0].entries] for r in results
    )
    print(f"same figures on every executor: {same}")
    # what one task weighs
    blob = ModelBlob.from_net(engine.base.net)  # type: ignore[attr-defined]
    r0 = results[0]
    starts = [
        {
            "board": list(e.result.board),
            "root_on_roll": False,
            "cube": 1,
            "owner": 0,
            "norm": 1,
            "no_first_double": False,
        }
        for e in r0.entries
    ]
    task = Task(
        "bgbot.engine.rollout:rollout_task",
        blob.hash,
        {
            "starts": starts,
            "score": {"met": None, "away": [0, 0], "crawford": False, "jacoby": False, "match": 0},
            "settings": {"trials": args.trials},
            "trials": [0, args.trials_per_task],
        },
        0,
    )
    from bgbot.engine.rollout import rollout_task

    payload = dict(task.payload)
    payload["settings"] = json.loads(json.dumps(st.__dict__))
    result = rollout_task(blob.evaluator(), payload, 0)
    print(
        f"bytes per task: {len(pickle.dumps(Task(task.kind, task.model_hash, payload, 0)))} out (pickled task), "
        f"{len(json.dumps(result))} back (JSON result, {args.trials_per_task} trials x {len(starts)} plays); "
        f"model {len(blob.data)} bytes, once per worker process (local) or per node (Ray object store)"
    )
    for name, kw in [("local, 2 workers", {"workers": args.workers})] + (
        [] if args.no_ray else [("ray", {"executor": "ray", "workers": args.workers})]
    ):
        print(f"hand-out rate, {name}: {hand_out(blob, args.tasks, **kw):.0f} no-op tasks/s")
    if not args.no_ray:
        ray.shutdown()
    if args.luck_positions:
        luck_reduction(engine, args.luck_positions, args.luck_trials, args.workers)


def luck_reduction(engine: Engine, n: int, trials: int, workers: int) -> None:
    """Standard error with and without the luck adjustment, on the same trials, for n contact positions."""
    rows = [json.loads(line) for line in (REFDATA / "checker.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r["class"] == "contact"][:n]
    st = RolloutSettings(trials=trials, cubeful=True, luck=True, trials_per_task=max(1, trials // 4))
    print(f"luck adjustment, {n} contact positions before the roll; {st.describe()}")
    ratios = {5: [], 6: []}
    t0 = time.perf_counter()
    for row in rows:
        r = engine.rollout(row["position"], None, settings=st, workers=workers)
        e = r.entries[0]
        for k in ratios:
            ratios[k].append(e.se[k] / e.se_raw[k])
        print(
            f"  {row['position']}: cubeless se {e.se[5]:.4f} vs {e.se_raw[5]:.4f} raw, "
            f"cubeful se {e.se[6]:.4f} vs {e.se_raw[6]:.4f} raw ({e.label})"
        )
    for k, name in ((5, "cubeless"), (6, "cubeful")):
        m = sum(ratios[k]) / len(ratios[k])
        print(f"  {name}: se ratio {m:.2f} on average (as many trials without it: x{1 / m**2:.1f})")
    print(f"  {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
