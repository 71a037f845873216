"""Positions of one class from graded games, every legal play valued by gnubg's networks, as a checker benchmark file.

The positions are the unforced checker plays of saved games (both players'), from the decisions file that
``benchmarks/loss_by_class.py RECORDS --decisions FILE`` writes; each distinct position and roll becomes one
row in the format of ``tests/data/benchmark/checker.jsonl`` (``tests/data/README.md``; its ``class`` is that
file's contact or race, crashed positions being contact): every legal play's
resulting Position ID with its cubeless equity from the mover's view, valued by gnubg's networks at ``--ply``
through ``gnubg_nn`` (a reference install, ``.[ref]``; gnubg's numbering: 1 looks one roll ahead), best first,
and gnubg's 0-ply choice.  ``checker_error.py --data OUT`` and ``benchmark_pairs.py --data OUT`` then grade any
network on the positions its own games against gnubg reach, where the held-out files hold gnubg's self-play::

    bgbot pit bgbot:ply=1 gnubg:ply=0 --no-cube --games 600 --seed 991 --save-games runs/recs
    python benchmarks/loss_by_class.py runs/recs --decisions runs/recs.jsonl
    python benchmarks/judged_positions.py runs/recs.jsonl runs/race-games.jsonl --class race
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from _common import ROOT  # noqa: F401  (puts the checkout on sys.path)
from tqdm import tqdm

from bgbot.eval.evaluate import equity
from bgbot.rules.movegen import successors
from bgbot.rules.position import Position


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("decisions", type=Path, help="JSON lines of loss_by_class.py --decisions")
    ap.add_argument("out", type=Path, help="checker benchmark file to write")
    ap.add_argument("--class", dest="cls", default="race", help="contact, crashed, race or bearoff (default race)")
    ap.add_argument("--ply", type=int, default=1, help="gnubg's ply for the plays' values (default 1)")
    args = ap.parse_args(argv)
    try:
        import gnubg_nn
    except ImportError:
        raise SystemExit("gnubg's networks need gnubg-nn (pip install gnubg-nn, or the .[ref] extra)") from None

    try:
        lines = args.decisions.read_text().splitlines()
    except OSError as e:
        raise SystemExit(f"cannot read the decision file {str(args.decisions)!r}: {e.strerror}") from None
    rows = []
    for n, line in enumerate(lines, 1):
        try:
            r = json.loads(line)
            if r["kind"] == "move" and r["class"] == args.cls and not r["forced"]:
                rows.append((r["position"], tuple(r["dice"])))
        except (ValueError, KeyError, TypeError) as e:
            raise SystemExit(f"{str(args.decisions)!r} line {n} is not a loss_by_class decision: {e}") from None
    file_class = "race" if args.cls in ("race", "bearoff") else "contact"  # the benchmark files' two classes
    seen: set[tuple[str, tuple[int, ...]]] = set()
    written = 0
    with args.out.open("w") as f:
        for pid, dice in tqdm(rows, unit="position"):
            if (pid, tuple(sorted(dice))) in seen:
                continue
            seen.add((pid, tuple(sorted(dice))))
            ids = list(dict.fromkeys(q.gnubg_id() for q in successors(Position.from_id(pid), dice)))
            if len(ids) < 2:
                continue
            moves, zero = [], []
            for i in ids:  # each result is from the opponent's view: the mover's equity is minus its own
                board = gnubg_nn.board_from_position_id(i)
                moves.append({"result": i, "equity": round(-float(equity(gnubg_nn.probabilities(board, args.ply))), 6)})
                zero.append((-float(equity(gnubg_nn.probabilities(board, 0))), i))
            moves.sort(key=lambda m: -m["equity"])
            f.write(json.dumps({"position": pid, "dice": list(dice), "n_legal": len(ids), "class": file_class,
                                "moves": moves, "gnubg0_choice": max(zero)[1]}, separators=(",", ":")) + "\n")
            written += 1
    print(f"{written} positions of class {args.cls} ({len(rows)} plays) written to {str(args.out)!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
