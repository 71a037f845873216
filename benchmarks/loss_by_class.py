"""Where a bot's checker errors cost points in play: saved pit games graded by gnubg's networks, by position class.

Play a pit with ``--save-games DIR`` (for example ``bgbot pit bgbot:ply=1 gnubg:ply=0 --no-cube
--games 400 --save-games runs/recs``), then::

    python benchmarks/loss_by_class.py runs/recs [--ply 2] [--limit N]

Every checker play of both players is graded as ``bgbot analyse`` grades it, but by an engine that runs
bgbot's search on gnubg's own 0-ply networks (``gnubg_nn``, a reference install; see
``benchmarks/_common.py``): ``--ply 2`` is about gnubg's 1-ply (XG 2-ply), ``--ply 3`` about gnubg
2-ply.  The table gives, per player and per class of the position before the move (contact, crashed,
race, bear-off: :func:`bgbot.rules.position.classify`, from the mover's side), the unforced moves, the
mean error in millipoints and the **equity lost per game** (total error / games).  In a cubeless
duplicate pit the difference of the two players' losses per game is the judge's view of the ppg gap, so
the rows say which kind of position the gap comes from.  The equities are cubeful money equities with a
centred cube (``bgbot analyse``'s); a cubeless pit's decisions are judged by them too, which moves the
figures by little.  Cube actions are not graded here.  ``--decisions FILE`` also writes every graded move
(record, player name, class, XGID, dice, played, best, error) as JSON lines, to look at the worst.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from _common import gnubg_net_evaluator  # puts the checkout on sys.path
from tqdm import tqdm

from bgbot.engine.analyse import analyse_match
from bgbot.engine.api import Engine
from bgbot.formats.records import read_match
from bgbot.rules.position import classify

CLASSES = ("contact", "crashed", "race", "bearoff")
PHASES = ("turns 1-5", "turns 6-15", "turns 16-30", "turns 31+")


def phase(turn: int) -> str:
    """A coarse game phase from the mover's turn number in the game (1-based)."""
    return "turns 1-5" if turn <= 5 else "turns 6-15" if turn <= 15 else "turns 16-30" if turn <= 30 else "turns 31+"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records", type=Path, help="folder of .mat / .sgf records (bgbot pit --save-games)")
    ap.add_argument("--ply", type=int, default=2, help="judge's ply on gnubg's networks (default 2, about gnubg 1-ply)")
    ap.add_argument("--limit", type=int, help="only the first LIMIT records")
    ap.add_argument("--decisions", type=Path, help="also write every graded move as a JSON line (record, class, ...)")
    args = ap.parse_args(argv)

    files = sorted(p for p in args.records.iterdir() if p.suffix in (".mat", ".sgf"))
    if not files:
        raise SystemExit(f"no .mat or .sgf records in {str(args.records)!r}")
    files = files[: args.limit] if args.limit else files
    engine = Engine(gnubg_net_evaluator())
    # (player name, key) -> errors; key is a class or a phase
    errors: dict[tuple[str, str], list[float]] = defaultdict(list)
    games = 0
    names: list[str] = []
    out = args.decisions.open("w") if args.decisions else None
    for path in tqdm(files, unit="record"):
        match = read_match(path)
        games += len(match.games)
        for n in match.names:
            if n not in names:
                names.append(n)
        analysis = analyse_match(engine, match, args.ply, luck=False)
        for d in analysis.decisions:
            if d.kind != "move" or d.forced:
                continue
            who = match.names[d.player]
            cls = classify(d.position).name.lower()
            errors[(who, cls)].append(d.error)
            errors[(who, phase(d.turn))].append(d.error)
            errors[(who, "all")].append(d.error)
            if out:
                out.write(json.dumps({"record": path.name, **d.to_dict(), "name": who, "class": cls}) + "\n")
    if out:
        out.close()

    print(f"{len(files)} records, {games} games; judge: bgbot's {args.ply}-ply search on gnubg's 0-ply networks")
    keys = ["all", *CLASSES, *PHASES]
    print(f"{'':<12}" + "".join(f"{n[:24]:>36}" for n in names))
    print(
        f"{'':<12}"
        + "".join(f"{'moves':>10}{'mean mp':>10}{'lost/game':>16}" for _ in names)
        + (f"{'gap/game':>12}" if len(names) == 2 else "")
    )
    for k in keys:
        row = f"{k:<12}"
        lost = []
        for n in names:
            e = errors.get((n, k), [])
            mean = 1000 * statistics.fmean(e) if e else float("nan")
            per_game = sum(e) / games
            lost.append(per_game)
            row += f"{len(e):>10}{mean:>10.1f}{per_game:>16.4f}"
        if len(names) == 2:
            row += f"{lost[0] - lost[1]:>+12.4f}"
        print(row)
    print(
        "lost/game: equity given away per game by that player's unforced moves of that kind; "
        "gap/game: the first player's loss minus the second's"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
