"""Make the GNU Backgammon match-play reference data in tests/data/match/.

This script runs inside GNU Backgammon's embedded Python interpreter.  gnubg treats every extra
command-line word as a match file to open, so the options are passed in the environment variable
``MATCH_REFDATA_ARGS``.  Run it from the repository root:

    MATCH_REFDATA_ARGS="checker --n 60 --seed 1" /usr/games/gnubg -t -q -r -p tests/data/match_refdata.py
    MATCH_REFDATA_ARGS="cube --n 220 --seed 2" /usr/games/gnubg -t -q -r -p tests/data/match_refdata.py

Sub-commands (``MATCH_REFDATA_ARGS="--help"`` lists the options of each):

* ``checker``  checker plays where the match score or the cube position changes gnubg's choice.  For
  positions and dice of benchmark/checker.jsonl (contact positions only), gnubg's cubeful 2-ply hint
  is asked at a money game with the cube centred and at a number of match or cube states.  A record
  is kept when the best play at the state differs from the best play at money with the cube centred.
* ``cube``  2-ply cubeful match cube decisions (``gnubg.cfevaluate``) at random match lengths, scores
  and cube states, for positions of benchmark/cube.jsonl and benchmark/checker.jsonl.

All states are written from the side on roll: ``score`` is [side on roll, opponent], the cube owner is
``center``, ``me`` (the side on roll) or ``opp``.  Inside gnubg the side on roll is always player 0:
``set turn 0``, ``set score ME OPP``, ``set cube owner 0`` for ``me`` and 1 for ``opp``; a cube info
for ``gnubg.cfevaluate`` has ``move`` 0 and the score tuple (me, opp).  Every state set up with
commands is checked against ``gnubg.cubeinfo()`` and ``gnubg.posinfo()`` before it is used.

A report (JSON) is printed on standard output; gnubg's own chatter is sent to /dev/null.  The board
helpers below are small copies from regenerate.py (next to this file), so that this script runs on
its own.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

try:
    import gnubg  # built into gnubg's embedded interpreter only
except ImportError:  # pragma: no cover - plain python
    gnubg = None

# gnubg's -p runs a script without __file__: it is then run from the repository root, as documented
sys.path.insert(0, str(Path(globals().get("__file__", "tests/data/match_refdata.py")).resolve().parent))
# the board helpers of the reference-data script beside this one (gnubg's board, moves, IDs)
from regenerate import DECISION_BY_CODE as MONEY_DECISION_BY_CODE
from regenerate import Record, copy_board, result_id, silence_gnubg

ENV_VAR = "MATCH_REFDATA_ARGS"
MAX_CHECKER_MOVES = 40  # checker records list at most this many plays (gnubg's best 40 at 0-ply)
# gnubg's 2-ply move filter ("set evaluation movefilter 2 0 ACCEPT EXTRA THRESHOLD"): which plays of the
# 0-ply ranking are evaluated at 2-ply.  FULL sends the best 40 (so every listed play has a 2-ply
# equity); SCREEN is gnubg's default (up to 8 within 0.16), used only to find candidate states fast.
FULL_FILTER = f"set evaluation movefilter 2 0 {MAX_CHECKER_MOVES} 0 0"
SCREEN_FILTER = "set evaluation movefilter 2 0 0 8 0.16"
CUBE_PWIN_RANGE = (0.55, 0.9)  # 0-ply cubeless P(win) filter for cube positions
OWNERS = {"center": -1, "me": 0, "opp": 1}  # gnubg cube owner (player index; the side on roll is player 0)

# gnubg's cube decision codes (enum cubedecision) mapped to the action taken.  13 and 14 are gnubg's
# "Never (re)double, take (dead cube)": doubling is legal but cannot gain.  15 ("Unknown cube
# decision") is what gnubg answers when the side on roll may not double (the opponent owns the cube);
# in the Crawford game gnubg answers 13.  Both cases are written as "no_double_legal" (see cube_record).
DECISION_BY_CODE = {
    **MONEY_DECISION_BY_CODE,  # codes 0-11, as in the money benchmark
    13: "no_double",  # Never double, take (dead cube)
    14: "no_double",  # Never redouble, take (dead cube)
    15: "no_double_legal",  # Unknown cube decision (cube not available)
    16: "optional_double_take",  # Optional double, take
    17: "optional_double_take",  # Optional redouble, take
    20: "optional_double_pass",  # Optional double, pass
    21: "optional_double_pass",  # Optional redouble, pass
}

# Where reports go: the real standard output, saved before gnubg's output is silenced.
REPORT: TextIO = sys.stdout


# --------------------------------------------------------------------------------------------------
# Match states
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class State:
    """A match (or money) state from the side on roll."""

    match: int  # match length, 0 = money
    me: int  # points of the side on roll
    opp: int  # points of the opponent
    cube: int = 1
    owner: str = "center"  # "center", "me" or "opp"
    crawford: bool = False

    def to_json(self) -> Record:
        return {
            "match": self.match,
            "score": [self.me, self.opp],
            "cube": {"value": self.cube, "owner": self.owner},
            "crawford": self.crawford,
        }

    def cubeinfo(self) -> dict[str, Any]:
        """gnubg cube info with the side on roll as player 0 (gnubg.cubeinfo argument order: cube value,
        owner, player on move, match length, score tuple, Crawford, backgammon variant)."""
        return gnubg.cubeinfo(self.cube, OWNERS[self.owner], 0, self.match, (self.me, self.opp), int(self.crawford), 0)


MONEY = State(0, 0, 0)

# The states of the checker records: label -> state (7-point match unless said otherwise).
CHECKER_STATES = {
    "dmp": State(7, 6, 6),  # double match point
    "crawford-2a1a": State(7, 5, 6, crawford=True),  # on roll 2-away, opponent 1-away, Crawford game
    "crawford-1a2a": State(7, 6, 5, crawford=True),  # on roll 1-away, opponent 2-away, Crawford game
    "4a2a": State(7, 3, 5),  # on roll 4-away, opponent 2-away
    "2a4a": State(7, 5, 3),  # on roll 2-away, opponent 4-away
    "money-cube-me": State(0, 0, 0, cube=2, owner="me"),  # money, cube at 2 owned by the side on roll
    "money-cube-opp": State(0, 0, 0, cube=2, owner="opp"),  # money, cube at 2 owned by the opponent
    "3pt-0-0": State(3, 0, 0),  # 3-point match, 0-0
}


def legal_state(s: State) -> bool:
    """Match states that can arise: no owned cube in the Crawford game, no centred cube above 1, a
    Crawford game only with exactly one side 1-away, and a cube owned at v only if the double to v
    was live (the doubler needed more than v/2 points; for v = 4 the owner's own double to 2 too)."""
    if s.match == 0:
        return True
    away_me, away_opp = s.match - s.me, s.match - s.opp
    if min(away_me, away_opp) < 1:
        return False
    if s.crawford and not (min(away_me, away_opp) == 1 and max(away_me, away_opp) > 1):
        return False
    if s.owner == "center":
        return s.cube == 1
    if s.crawford or s.cube not in (2, 4):
        return False
    away_owner, away_doubler = (away_me, away_opp) if s.owner == "me" else (away_opp, away_me)
    return away_doubler > s.cube // 2 and (s.cube == 2 or away_owner > 1)


# --------------------------------------------------------------------------------------------------
# gnubg session
# --------------------------------------------------------------------------------------------------


def setup_gnubg(threads: int) -> None:
    for cmd in (
        f"set threads {threads}",
        "set player 0 human",  # nobody moves on its own
        "set player 1 human",
        "set jacoby off",  # money: Jacoby rule off, no beavers
        "set beavers 0",
        "set automatic roll off",
        # No evaluation cache: gnubg 1.07's cache mixes up cubeful evaluations of the same position at
        # different match states (a double-match-point hint right after a money hint of the same
        # position gave money-like numbers).  Without it the results do not depend on the order of the
        # evaluations, and the speed here is about the same.
        "set cache 0",
        # the hint: cubeful 2-ply, deterministic, no noise, pruning on
        "set evaluation chequerplay evaluation plies 2",
        "set evaluation chequerplay evaluation cubeful on",
        "set evaluation chequerplay evaluation prune on",
        "set evaluation chequerplay evaluation deterministic on",
        "set evaluation chequerplay evaluation noise 0",
        "new session",
    ):
        gnubg.command(cmd)


def enter_state(state: State, position: str, dice: Sequence[int]) -> dict[str, Any]:
    """Set up gnubg's current game at `state` with the side on roll as player 0; returns its cube info
    after checking that gnubg holds exactly the intended state."""
    if state.match == 0:
        gnubg.command("new session")
    else:
        gnubg.command(f"new match {state.match}")
        gnubg.command(f"set score {state.me} {state.opp}")  # player 0 (on roll), then player 1
        if state.match - 1 in (state.me, state.opp):
            gnubg.command(f"set crawford {'on' if state.crawford else 'off'}")
    gnubg.command("set turn 0")
    gnubg.command(f"set board {position}")  # read from the side of the player on roll
    if state.owner != "center":
        gnubg.command(f"set cube value {state.cube}")
        gnubg.command(f"set cube owner {OWNERS[state.owner]}")
    gnubg.command(f"set dice {dice[0]} {dice[1]}")
    ci = gnubg.cubeinfo()
    got = (ci["cube"], ci["cubeowner"], ci["move"], ci["matchto"], tuple(ci["score"]), ci["crawford"], ci["jacoby"])
    want = (state.cube, OWNERS[state.owner], 0, state.match, (state.me, state.opp), int(state.crawford), 0)
    if state.match == 0:
        got, want = got[:4] + got[5:], want[:4] + want[5:]  # money: gnubg keeps no score
    pi = gnubg.posinfo()
    if got != want or gnubg.positionid() != position or pi["turn"] != 0 or tuple(pi["dice"]) != tuple(dice):
        raise RuntimeError(f"gnubg state {ci} {pi} {gnubg.positionid()} is not {state} {position} {dice}")
    return ci


@dataclass
class Play:
    result: str
    equity: float  # gnubg's cubeful equity (EMG in a match), from the mover's side
    mwc: float | None  # match winning chance (None for money)
    pwin: float  # 2-ply cubeless P(win) after the play, from the mover's side


def hint(state: State, position: str, dice: Sequence[int]) -> list[Play]:
    """gnubg's cubeful 2-ply hint at `state`: every play (at most the best 40), best first."""
    gnubg.command(FULL_FILTER)
    ci = enter_state(state, position, dice)
    board = copy_board(gnubg.positionfromid(position))
    plays = []
    entries = gnubg.hint(MAX_CHECKER_MOVES)["hint"]
    for h in entries:
        ctx = h["context"]
        if h["type"] != "eval" or ctx["plies"] != 2 or not ctx["cubeful"]:
            raise RuntimeError(f"unexpected hint entry {h}")
        eq = float(h["equity"])
        mwc = float(gnubg.eq2mwc(eq, ci)) if state.match else None
        plays.append(Play(result_id(board, list(gnubg.parsemove(h["move"]))), eq, mwc, float(h["details"]["probs"][0])))
    if len({p.result for p in plays}) != len(plays):
        raise RuntimeError(f"duplicate results for {position} {dice}")
    plays.sort(key=lambda p: (-p.equity, p.result))
    return plays


def screen_best(state: State, position: str, dice: Sequence[int]) -> str:
    """The resulting position of gnubg's best play at `state` with its default 2-ply move filter."""
    gnubg.command(SCREEN_FILTER)
    enter_state(state, position, dice)
    board = copy_board(gnubg.positionfromid(position))
    return result_id(board, list(gnubg.parsemove(gnubg.hint(MAX_CHECKER_MOVES)["hint"][0]["move"])))


# --------------------------------------------------------------------------------------------------
# Checker records
# --------------------------------------------------------------------------------------------------


def checker_record(
    label: str, state: State, position: str, dice: Sequence[int], money: list[Play], min_gap: float
) -> Record | None:
    """A record when gnubg's best play at `state` differs from its best at money (cube centred) by at
    least `min_gap` in both evaluations; None otherwise."""
    plays = hint(state, position, dice)
    best, money_best = plays[0].result, money[0].result
    if best == money_best:
        return None
    at_state = {p.result: p.equity for p in plays}
    at_money = {p.result: p.equity for p in money}
    # a play missing from a top-40 list is far from the best there
    gap_state = plays[0].equity - at_state.get(money_best, -10.0)
    gap_money = money[0].equity - at_money.get(best, -10.0)
    if min(gap_state, gap_money) < min_gap:
        return None
    return {
        "position": position,
        "dice": list(dice),
        "state": state.to_json(),
        "label": label,
        "moves": [
            {"result": p.result, "equity": round(p.equity, 6), "mwc": None if p.mwc is None else round(p.mwc, 6)}
            for p in plays
        ],
        "money_best": money_best,
    }


def make_checker(args: argparse.Namespace) -> tuple[list[Record], dict[str, Any]]:
    src = [json.loads(line) for line in Path(args.source).read_text().splitlines() if line.strip()]
    cands = [(r["position"], tuple(r["dice"])) for r in src if r["class"] == "contact" and r["n_legal"] >= 2]
    rng = random.Random(args.seed)
    rng.shuffle(cands)
    labels = list(CHECKER_STATES)
    cap = args.cap or -(-8 * args.n // (5 * len(labels)))  # default: 1.6 times an even share per label
    counts: Counter[str] = Counter()
    out: list[Record] = []
    tried = 0
    start = time.time()
    for position, dice in cands:
        if len(out) >= args.n or time.time() - start > args.max_seconds:
            break
        tried += 1
        # Screen with gnubg's default move filter; only where the best play at a state differs from the
        # best at money, compute both full hints and decide on them.
        money_top = screen_best(MONEY, position, dice)
        money: list[Play] = []
        rng.shuffle(labels)
        for label in labels:
            if counts[label] >= cap or len(out) >= args.n:
                continue
            if screen_best(CHECKER_STATES[label], position, dice) == money_top:
                continue
            money = money or hint(MONEY, position, dice)
            rec = checker_record(label, CHECKER_STATES[label], position, dice, money, args.min_gap)
            if rec is not None:
                counts[label] += 1
                out.append(rec)
    out.sort(key=lambda r: (labels_order(r["label"]), r["position"], r["dice"]))
    report = {"positions_tried": tried, "per_label": dict(sorted(counts.items())), "dmp_check": dmp_check(out)}
    return out, report


def labels_order(label: str) -> int:
    return list(CHECKER_STATES).index(label)


def dmp_check(records: list[Record]) -> dict[str, int]:
    """At double match point the cube is dead and gammons do not count, so the EMG of a play is
    2 * P(win) - 1 and the best play maximises P(win).  Recomputes P(win) of every listed play at
    2-ply cubeless and counts the records that agree."""
    ec = gnubg.evalcontext(0, 2, 1, 1, 0.0)
    ci = gnubg.cubeinfo(1, -1, 1, 7, (6, 6), 0, 0)  # the opponent (player 1) on roll after the play
    agree = emg_ok = 0
    dmp = [r for r in records if r["label"] == "dmp"]
    for r in dmp:
        pwin = {m["result"]: 1.0 - gnubg.evaluate(gnubg.positionfromid(m["result"]), ci, ec)[0] for m in r["moves"]}
        agree += max(pwin, key=lambda k: pwin[k]) == r["moves"][0]["result"]
        emg_ok += all(abs(m["equity"] - (2.0 * pwin[m["result"]] - 1.0)) < 1e-5 for m in r["moves"])
    return {"records": len(dmp), "best_maximises_pwin": agree, "equity_is_2pwin_minus_1": emg_ok}


# --------------------------------------------------------------------------------------------------
# Cube records
# --------------------------------------------------------------------------------------------------


def cube_record(position: str, state: State) -> Record:
    board = gnubg.positionfromid(position)
    ci = state.cubeinfo()
    probs = gnubg.evaluate(board, ci, gnubg.evalcontext(0, 2, 1, 1, 0.0))
    optimal, no_double, take, drop, code, text = gnubg.cfevaluate(board, ci, gnubg.evalcontext(1, 2, 1, 1, 0.0))
    if code not in DECISION_BY_CODE:
        raise RuntimeError(f"unknown gnubg cube decision {code} {text!r} at {position} {state}")
    may_double = not state.crawford and state.owner != "opp"
    decision = DECISION_BY_CODE[code] if may_double else "no_double_legal"
    if (may_double and code == 15) or (state.owner == "opp" and code != 15):
        raise RuntimeError(f"gnubg cube decision {code} {text!r} at {position} {state}")
    return {
        "position": position,
        "state": state.to_json(),
        "probs": [round(p, 6) for p in probs[:5]],
        "equity_no_double": round(no_double, 6),
        # gnubg also returns numbers for a double that may not be made; they are left out (null)
        "equity_double_take": round(take, 6) if may_double else None,
        "equity_double_pass": round(drop, 6) if may_double else None,
        "equity_optimal": round(optimal, 6),
        "gnubg_decision": text,
        "gnubg_decision_code": code,
        "decision": decision,
    }


def random_state(rng: random.Random) -> State:
    """A random legal match state: length 3, 5, 7 or 9, any score, a Crawford game in 40 % of the cases
    where exactly one side is 1-away, the cube centred (60 %) or owned by either side at 2 or 4."""
    while True:
        n = rng.choice((3, 5, 7, 9))
        me, opp = rng.randrange(n), rng.randrange(n)
        crawford = n - 1 in (me, opp) and me != opp and rng.random() < 0.4
        r = rng.random()
        if r < 0.6:
            cube, owner = 1, "center"
        else:
            cube, owner = rng.choice((2, 2, 2, 4)), "me" if r < 0.85 else "opp"
        s = State(n, me, opp, cube, owner, crawford)
        if legal_state(s):
            return s


def make_cube(args: argparse.Namespace) -> tuple[list[Record], dict[str, Any]]:
    data = Path(args.data_dir)
    pool: list[str] = []
    for rel in ("benchmark/cube.jsonl", "benchmark/checker.jsonl"):
        for line in (data / rel).read_text().splitlines():
            if line.strip() and (pos := json.loads(line)["position"]) not in pool:
                pool.append(pos)
    ec0 = gnubg.evalcontext(0, 0, 1, 1, 0.0)

    def pwin(position: str) -> float:
        return float(gnubg.evaluate(gnubg.positionfromid(position), MONEY.cubeinfo(), ec0)[0])

    pool = [p for p in pool if CUBE_PWIN_RANGE[0] <= pwin(p) <= CUBE_PWIN_RANGE[1]]
    rng = random.Random(args.seed)
    seen: set[tuple[str, State]] = set()
    out: list[Record] = []
    while len(out) < args.n:
        key = (rng.choice(pool), random_state(rng))
        if key not in seen:
            seen.add(key)
            out.append(cube_record(*key))
    report = {
        "pool": len(pool),
        "decisions": dict(Counter(r["decision"] for r in out).most_common()),
        "match_lengths": dict(sorted(Counter(r["state"]["match"] for r in out).items())),
        "crawford": sum(r["state"]["crawford"] for r in out),
        "post_crawford": sum(
            not r["state"]["crawford"] and r["state"]["match"] - 1 in r["state"]["score"] for r in out
        ),
        "cube": dict(Counter(f"{r['state']['cube']['value']}/{r['state']['cube']['owner']}" for r in out)),
    }
    return out, report


# --------------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------------


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=f'{ENV_VAR}="..." gnubg -t -q -r -p tests/data/match_refdata.py',
        description="Make tests/data/match/*.jsonl with GNU Backgammon.",
    )
    parser.add_argument("--data-dir", default="tests/data", help="data folder (default: tests/data)")
    parser.add_argument("--threads", type=int, default=1, help="gnubg evaluation threads (default 1)")
    sub = parser.add_subparsers(dest="command", required=True)

    chk = sub.add_parser("checker", help="checker plays where the score or the cube decides the play")
    chk.add_argument("--n", type=int, default=60, help="number of records")
    chk.add_argument("--seed", type=int, default=1, help="seed for the order of positions and states")
    chk.add_argument("--min-gap", type=float, default=0.003, help="least equity gap between the two best plays")
    chk.add_argument("--cap", type=int, default=0, help="most records per label (default: 1.6 times an even share)")
    chk.add_argument("--max-seconds", type=float, default=450.0, help="stop trying new positions after this")
    chk.add_argument("--source", default="tests/data/benchmark/checker.jsonl", help="positions and dice")
    chk.add_argument("--out", default="tests/data/match/checker.jsonl", help="output .jsonl")

    cub = sub.add_parser("cube", help="match cube decisions")
    cub.add_argument("--n", type=int, default=220, help="number of records")
    cub.add_argument("--seed", type=int, default=2, help="seed for positions and states")
    cub.add_argument("--out", default="tests/data/match/cube.jsonl", help="output .jsonl")
    return parser.parse_args(argv)


def main() -> int:
    # Under gnubg sys.argv is [''], so options come from the environment; plain python may use argv.
    argv = shlex.split(os.environ[ENV_VAR]) if ENV_VAR in os.environ else sys.argv[1:]
    try:
        args = parse_args(argv)
    except SystemExit as exc:  # --help or a usage error; argparse has printed the message
        return int(exc.code or 0)
    if gnubg is None:
        print("error: run this inside gnubg: gnubg -t -q -r -p tests/data/match_refdata.py", file=sys.stderr)
        return 2
    global REPORT
    REPORT = silence_gnubg()
    setup_gnubg(args.threads)
    start = time.time()
    records, report = make_checker(args) if args.command == "checker" else make_cube(args)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w") as f:
        for rec in records:
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")
    report = {"kind": args.command, "written": len(records), "out": str(out), **report}
    report["seconds"] = round(time.time() - start, 1)
    print(json.dumps(report, indent=1), file=REPORT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
