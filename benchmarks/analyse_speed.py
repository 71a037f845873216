"""Match analysis: speed per 7-point match, and agreement with gnubg's own analysis of the reference matches.

    .venv/bin/python benchmarks/analyse_speed.py speed [--plies 1 3] [--repeat 3]
    .venv/bin/python benchmarks/analyse_speed.py agreement [--ply 2] [--out FILE.json]

``speed`` times ``Engine.analyse`` on tests/data/analyse/speed-7pt.mat (a 7-point match gnubg played
against itself, see tests/data/analyse/make_matches.py) and gnubg's own ``analyse match`` of the same file
at one ply less (XG numbering: bgbot's N-ply is gnubg's (N-1)-ply), interleaved run by run, and prints the
medians of the repeats (seconds per match), the number of decisions graded and the ratio bgbot / gnubg.

``agreement`` analyses every reference match m*.mat at ``--ply`` (XG numbering) and compares with
gnubg's 2-ply analysis stored in tests/data/analyse/gnubg-analysis.json:

* the Pearson correlation, over all (match, player) pairs, of the overall and the checker error rates
  (mEMG per decision, gnubg's normalisation);
* in how many matches where gnubg's two overall rates differ by more than 2 mEMG bgbot names the same
  worse player;
* the share of gnubg's blunders ("very bad", checker plays and cube actions) that bgbot marks as error or
  blunder, and the share of gnubg's errors ("bad" or worse) bgbot marks doubtful or worse.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DATA = ROOT / "tests" / "data" / "analyse"


def speed(plies: list[int], repeat: int, workers: int = 1) -> dict[str, Any]:
    """bgbot's ``Engine.analyse`` and gnubg's ``analyse match`` of the same record, interleaved run by run."""
    import os

    from bgbot.engine.api import Engine
    from bgbot.formats.records import read_match

    engine = Engine.load()
    match = read_match(DATA / "speed-7pt.mat")
    engine.analyse(match.__class__(**{**match.__dict__, "games": match.games[:1]}), 1)  # warm-up (numba, caches)
    gnubg = _gnubg_runner()
    load = os.getloadavg()
    print(f"{os.cpu_count()} CPUs shared with other work, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"{len(match.games)} games; medians of {repeat} runs, bgbot ({workers} process(es)) and gnubg (1 thread) "
          "interleaved", flush=True)
    out: dict[str, Any] = {"file": "tests/data/analyse/speed-7pt.mat", "games": len(match.games), "plies": {}}
    for ply in plies:
        ours: list[float] = []
        theirs: list[float] = []
        n = 0
        for _ in range(repeat):
            t0 = time.perf_counter()
            a = engine.analyse(match, ply, workers=workers)
            ours.append(time.perf_counter() - t0)
            n = len(a.decisions)
            if gnubg is not None:
                theirs.append(gnubg(ply))
        row: dict[str, Any] = {"seconds_median": statistics.median(ours), "seconds": ours, "decisions": n}
        line = f"{ply}-ply: bgbot {statistics.median(ours):.2f} s per 7-point match ({n} decisions)"
        if theirs:
            ref = statistics.median(theirs)
            row.update(gnubg_seconds=theirs, gnubg_median=ref, ratio=statistics.median(ours) / ref)
            line += f"; gnubg analyse match at its {ply - 1}-ply {ref:.2f} s; ratio {row['ratio']:.2f}"
        out["plies"][ply] = row
        print(line + "  (runs: " + " ".join(f"{x:.2f}" for x in ours) + " / " + " ".join(f"{x:.2f}" for x in theirs)
              + ")", flush=True)
    return out


def _gnubg_runner() -> Any:
    """A function ``ply -> seconds`` of gnubg's own ``analyse match`` of the same file at the same depth
    (gnubg's ply = ours - 1), one thread, evaluation cache off, its start-up and import (timed in the same
    call) taken off; None without /usr/games/gnubg."""
    import shutil
    import subprocess

    exe = shutil.which("gnubg") or ("/usr/games/gnubg" if Path("/usr/games/gnubg").exists() else None)
    if exe is None:
        print("no gnubg: no reference", flush=True)
        return None

    def run(extra: list[str]) -> float:
        cmds = ["set threads 1", "set cache 0", f"import mat {DATA / 'speed-7pt.mat'}", *extra]
        t0 = time.perf_counter()
        subprocess.run(
            [exe, "-t", "-q", "-r"],
            input="\n".join(cmds) + "\n",
            text=True,
            capture_output=True,
            check=True,
            timeout=1800,
        )
        return time.perf_counter() - t0

    def analyse(ply: int) -> float:
        base = run([])
        return run(
            [
                f"set analysis chequerplay evaluation plies {ply - 1}",
                f"set analysis cubedecision evaluation plies {ply - 1}",
                "analyse match",
            ]
        ) - base

    return analyse


def _key(d: dict[str, Any] | Any) -> tuple[Any, ...]:
    if isinstance(d, dict):
        dice = tuple(sorted(d["dice"])) if d.get("dice") else None
        return d["game"], d["player"], d["position"], dice
    dice = tuple(sorted(d.dice)) if d.dice else None
    return d.game, d.player, d.position.gnubg_id(), dice


def agreement(ply: int) -> dict[str, Any]:
    from bgbot.engine.api import Engine
    from bgbot.formats.records import read_match

    ref = json.loads((DATA / "gnubg-analysis.json").read_text())["matches"]
    engine = Engine.load()
    rows = []
    blunders = flagged = errors = flagged_err = 0
    missed: list[dict[str, Any]] = []
    for name in sorted(ref):
        r = ref[name]
        t0 = time.perf_counter()
        a = engine.analyse(read_match(DATA / f"{name}.mat"), ply)
        secs = time.perf_counter() - t0
        ours_moves = {_key(d): d for d in a.decisions if d.kind == "move"}
        ours_cube = {}
        for d in a.decisions:
            if d.kind != "move":
                ours_cube.setdefault((d.game, d.player, d.position.gnubg_id()), []).append(d)
        for m in r["marked"]:
            if m["kind"] == "move":
                d = ours_moves.get(_key(m))
                found = [d] if d is not None else []
            else:
                found = ours_cube.get((m["game"], m["player"], m["position"]), [])
            ok_blunder = any(x.skill in ("error", "blunder") for x in found)
            ok_error = any(x.skill for x in found)
            if m["skill"] == "very bad":
                blunders += 1
                flagged += ok_blunder
                if not ok_blunder:
                    missed.append({"match": name, **m, "bgbot": [(x.kind, round(x.error, 3), x.skill) for x in found]})
            if m["skill"] in ("bad", "very bad"):
                errors += 1
                flagged_err += ok_error
        g = r["statistics"]
        for p in (0, 1):
            rows.append(
                {
                    "match": name,
                    "player": p,
                    "gnubg_overall": abs(g["overall"]["Error rate mEMG (MWC)"][p]),
                    "gnubg_checker": abs(g["chequerplay"]["Error rate mEMG (MWC)"][p]),
                    "bgbot_overall": a.players[p].overall_rate,
                    "bgbot_checker": a.players[p].checker_rate,
                    "bgbot_pr": a.players[p].pr,
                }
            )
        print(
            f"{name}: {secs:.1f} s; gnubg {rows[-2]['gnubg_overall']:.1f} / {rows[-1]['gnubg_overall']:.1f}, "
            f"bgbot {rows[-2]['bgbot_overall']:.1f} / {rows[-1]['bgbot_overall']:.1f} mEMG",
            flush=True,
        )
    go = np.array([x["gnubg_overall"] for x in rows])
    bo = np.array([x["bgbot_overall"] for x in rows])
    gc = np.array([x["gnubg_checker"] for x in rows])
    bc = np.array([x["bgbot_checker"] for x in rows])
    decided = same = 0
    for k in range(0, len(rows), 2):
        g0, g1 = rows[k]["gnubg_overall"], rows[k + 1]["gnubg_overall"]
        if abs(g0 - g1) > 2.0:
            decided += 1
            same += (g0 > g1) == (rows[k]["bgbot_overall"] > rows[k + 1]["bgbot_overall"])
    out = {
        "ply": ply,
        "matches": len(ref),
        "corr_overall": float(np.corrcoef(go, bo)[0, 1]),
        "corr_checker": float(np.corrcoef(gc, bc)[0, 1]),
        "worse_player_decided": decided,
        "worse_player_same": same,
        "gnubg_blunders": blunders,
        "blunders_flagged": flagged,
        "gnubg_errors": errors,
        "errors_flagged": flagged_err,
        "rows": rows,
        "missed_blunders": missed,
    }
    print(
        f"{len(ref)} matches at {ply}-ply: correlation of overall rates {out['corr_overall']:.3f}, "
        f"checker rates {out['corr_checker']:.3f}; same worse player in {same} of {decided} matches where gnubg's "
        f"rates differ by > 2 mEMG; gnubg blunders flagged error/blunder: {flagged}/{blunders} "
        f"({100 * flagged / max(blunders, 1):.0f}%); gnubg errors flagged at all: {flagged_err}/{errors} "
        f"({100 * flagged_err / max(errors, 1):.0f}%)"
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("speed")
    s.add_argument("--plies", type=int, nargs="+", default=[1, 3])
    s.add_argument("--repeat", type=int, default=3)
    s.add_argument("--workers", type=int, default=1, help="bgbot's processes for the games (bgbot analyse's "
                   "default: 1 below 3-ply, one per core at 3-ply)")
    s.add_argument("--out")
    s = sub.add_parser("agreement")
    s.add_argument("--ply", type=int, default=2)
    s.add_argument("--out")
    args = ap.parse_args()
    result = speed(args.plies, args.repeat, args.workers) if args.cmd == "speed" else agreement(args.ply)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
