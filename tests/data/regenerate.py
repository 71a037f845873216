"""Regenerate, extend or verify the GNU Backgammon reference data in tests/data/.

This script runs inside GNU Backgammon's embedded Python interpreter, because it needs gnubg's move
generator, neural net and bear-off database.  gnubg treats every extra command-line word as a match
file to open, so the options are passed in the environment variable ``REGEN_ARGS``.  Run it from the
repository root:

    REGEN_ARGS="verify movegen --n 30" gnubg -t -q -r -p tests/data/regenerate.py
    REGEN_ARGS="generate checker --n 50 --seed 7 --out /tmp/checker.jsonl" gnubg -t -q -r -p tests/data/regenerate.py

Sub-commands (``REGEN_ARGS="--help"`` lists the options of each):

* ``generate KIND``  sample new positions (gnubg 0-ply self-play, or uniformly random legal moves) and
  write fresh records of KIND (movegen, checker, cube, pubeval) as JSON lines.
* ``recompute KIND --from FILE``  recompute the records for the positions (and dice, cube) listed in
  FILE, for example a hand-written list of edge cases or an existing data file.
* ``verify KIND``  recompute a random sample of an existing data file and report how many records
  are reproduced exactly (floats compared at the precision stored in the file).
* ``met --xml FILE --out FILE``  convert one of gnubg's match equity table XML files to our JSON;
  ``verify met`` converts both tables again and compares.  This part needs no gnubg and also runs as
  ``python3 tests/data/regenerate.py met ...`` (options on the command line).

The pubeval records need no neural net: the score is a dot product with Tesauro's published weights
(pubeval/weights.json), computed here in plain Python.  Only the list of legal moves comes from gnubg,
and any correct move generator would give the same records.

A report (JSON) is printed on standard output; gnubg's own chatter is sent to /dev/null.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

try:
    import gnubg  # built into gnubg's embedded interpreter only
except ImportError:  # pragma: no cover - plain python
    gnubg = None

# gnubg's board: (opponent, player on roll); each is 25 counts, index i = that side's point i+1, 24 = bar.
Board = tuple[list[int], list[int]]
# A move as gnubg's parsemove/findbestmove give it: (from, to) pairs, 25 = bar, 0 = off.
Move = list[tuple[int, int]]
Record = dict[str, Any]

START_ID = "4HPwATDgc/ABMA"
ENV_VAR = "REGEN_ARGS"
KINDS = ("movegen", "checker", "cube", "pubeval")
DEFAULT_FILES = {
    "movegen": "movegen/oracle.jsonl",
    "checker": "benchmark/checker.jsonl",
    "cube": "benchmark/cube.jsonl",
    "pubeval": "pubeval/oracle.jsonl",
}
GNUBG_MET_DIR = Path("/usr/share/gnubg/met")  # Debian package gnubg-data
MET_FILES = {"met/kazaross-xg2.json": "Kazaross-XG2.xml", "met/rockwell-kazaross.json": "Rockwell-Kazaross.xml"}
MET_SOURCE = (
    "GNU Backgammon match equity table file {name} (Debian package gnubg-data 1.07.001-1, /usr/share/gnubg/met/),"
    " converted verbatim"
)
MET_INDEXING = (
    "Scores are 'away' scores (points still needed to win). pre_crawford[i][j] = match winning chance of the"
    " player who is (i+1)-away when the opponent is (j+1)-away, before/without Crawford (indices 0-based, so"
    " pre_crawford[0][0] is 1-away vs 1-away = 0.5). post_crawford[k] = match winning chance of the TRAILING"
    " player who is (k+1)-away when the leader is 1-away, in post-Crawford games (post_crawford[0] = 1-away vs"
    " 1-away = 0.5); the leader's chance is 1 - post_crawford[k]. Use pre_crawford also for the Crawford game"
    " itself (the leader 1-away, trailer n-away: pre_crawford[0][n-1]). Values are probabilities in [0,1] (not"
    " equities)."
)
MAX_CHECKER_MOVES = 40  # checker records list at most this many moves (best at 0-ply)
CUBE_PWIN_RANGE = (0.55, 0.97)  # 0-ply cubeless P(win) filter for cube records
PUBEVAL_ALL_OFF = 99999999.0

# gnubg's cube decision codes (enum cubedecision) mapped to the action taken.
DECISION_BY_CODE = {
    0: "double_take",  # Double, take
    1: "double_pass",  # Double, pass
    2: "no_double",  # No double, take
    3: "too_good_take",  # Too good to double, take
    4: "too_good_pass",  # Too good to double, pass
    7: "double_take",  # Redouble, take
    8: "double_pass",  # Redouble, pass
    9: "no_double",  # No redouble, take
    10: "too_good_take",  # Too good to redouble, take
    11: "too_good_pass",  # Too good to redouble, pass
}

# Where reports go: the real standard output, saved before gnubg's output is silenced.
REPORT: TextIO = sys.stdout


# --------------------------------------------------------------------------------------------------
# Board helpers (pure Python)
# --------------------------------------------------------------------------------------------------


def copy_board(board: Sequence[Sequence[int]]) -> Board:
    return list(board[0]), list(board[1])


def swap(board: Board) -> Board:
    """The same position seen from the other side (the opponent is now on roll)."""
    return list(board[1]), list(board[0])


def apply_move(board: Board, move: Move) -> Board:
    """Play `move` for the side on roll; returns the board still from the mover's side (not swapped).

    gnubg writes every hit in its move notation and elides only intermediate points where nothing is
    hit, so a pair (from, to) never passes over a blot it hits.
    """
    opp, me = copy_board(board)
    for src, dst in move:
        if me[src - 1] <= 0:
            raise ValueError(f"no checker on point {src} for move {move}")
        me[src - 1] -= 1
        if dst > 0:
            me[dst - 1] += 1
            if opp[24 - dst] == 1:  # the mover's point dst is the opponent's point 25 - dst
                opp[24 - dst] = 0
                opp[24] += 1
    return opp, me


def result_id(board: Board, move: Move) -> str:
    """Position ID after the move with the sides swapped (what gnubg shows for the next turn)."""
    return gnubg.positionid(swap(apply_move(board, move)))


def pairs_from_flat(flat: Sequence[int]) -> Move:
    return [(flat[i], flat[i + 1]) for i in range(0, len(flat) - 1, 2)]


def is_race(board: Board) -> bool:
    """True when no contact is left: every checker of one side has passed every checker of the other."""
    opp, me = board
    me_back = max((i + 1 for i in range(25) if me[i]), default=0)
    opp_back = max((i + 1 for i in range(25) if opp[i]), default=0)
    return me_back + opp_back <= 25


def game_over(board: Board) -> bool:
    return sum(board[0]) == 0 or sum(board[1]) == 0


# --------------------------------------------------------------------------------------------------
# pubeval (pure Python, Tesauro's weights)
# --------------------------------------------------------------------------------------------------


def pubeval_inputs(after: Board) -> list[float]:
    """Tesauro's 122 inputs for the position after a move, seen from the side that has just moved."""
    opp, me = after
    x = [0.0] * 122
    for point in range(24, 0, -1):
        k = 24 - point
        n = me[point - 1] - opp[24 - point]
        if n == -1:
            x[5 * k] = 1.0
        elif n == 1:
            x[5 * k + 1] = 1.0
        elif n >= 2:
            x[5 * k + 2] = 1.0
            if n == 3:
                x[5 * k + 3] = 1.0
            elif n >= 4:
                x[5 * k + 4] = (n - 3) / 2.0
    x[120] = opp[24] / 2.0
    x[121] = (15 - sum(me)) / 15.0
    return x


def pubeval_score(weights: Sequence[float], after: Board) -> float:
    if sum(after[1]) == 0:
        return PUBEVAL_ALL_OFF
    return sum(w * v for w, v in zip(weights, pubeval_inputs(after), strict=True))


# --------------------------------------------------------------------------------------------------
# Match equity tables (pure Python, from gnubg's XML files)
# --------------------------------------------------------------------------------------------------


def met_from_xml(xml_path: Path) -> Record:
    """Our JSON form of a gnubg MET file with explicit pre- and post-Crawford tables."""
    root = ET.parse(xml_path).getroot()

    def rows(table: str) -> list[list[float]]:
        node = root.find(table)
        if node is None or node.get("type") != "explicit":
            raise ValueError(f"{xml_path}: no explicit {table}")
        return [[float(me.text or "") for me in row.findall("me")] for row in node.findall("row")]

    pre = rows("pre-crawford-table")
    post = rows("post-crawford-table")
    if len(post) != 1:  # player="both": one row shared by both players
        raise ValueError(f"{xml_path}: expected one post-Crawford row")
    n = len(pre)
    asym = max(abs(pre[i][j] + pre[j][i] - 1.0) for i in range(n) for j in range(n))
    return {
        "name": root.findtext("info/name"),
        "description": root.findtext("info/description"),
        "source": MET_SOURCE.format(name=xml_path.name),
        "length": int(root.findtext("info/length") or n),
        "indexing": MET_INDEXING,
        "max_abs_asymmetry_pre_crawford": round(asym, 6),
        "pre_crawford": pre,
        "post_crawford": post[0],
    }


def write_met(path: Path, met: Record) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(met, indent=1))


def verify_met(data_dir: Path, xml_dir: Path) -> dict[str, Any]:
    same = {
        rel: met_from_xml(xml_dir / xml) == json.loads((data_dir / rel).read_text()) for rel, xml in MET_FILES.items()
    }
    return {"kind": "met", "sampled": len(same), "exact": sum(same.values()), "files": same}


# --------------------------------------------------------------------------------------------------
# gnubg session
# --------------------------------------------------------------------------------------------------


@dataclass
class Contexts:
    """Evaluation contexts: deterministic, no noise, pruning on (gnubg.evalcontext argument order:
    cubeful, plies, deterministic, prune, noise)."""

    cubeless0: Any
    cubeless2: Any
    cubeful2: Any


def silence_gnubg() -> TextIO:
    """Send gnubg's board printouts to /dev/null; returns the real stdout, for the report (also kept in REPORT)."""
    global REPORT
    sys.stdout.flush()
    REPORT = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    return REPORT


def setup_gnubg(threads: int) -> Contexts:
    for cmd in (
        f"set threads {threads}",
        "set player 0 human",  # nobody moves on its own
        "set player 1 human",
        "set jacoby off",  # money game, Jacoby off (also makes gammons count in cubeless money equity)
        "set beavers 0",
        "set automatic roll off",
        # hint is used only as gnubg's legal move list, evaluated at 0-ply cubeless
        "set evaluation chequerplay evaluation plies 0",
        "set evaluation chequerplay evaluation cubeful off",
        "set evaluation chequerplay evaluation prune on",
        "set evaluation chequerplay evaluation deterministic on",
        "set evaluation chequerplay evaluation noise 0",
        "new session",
    ):
        gnubg.command(cmd)
    return Contexts(
        cubeless0=gnubg.evalcontext(0, 0, 1, 1, 0.0),
        cubeless2=gnubg.evalcontext(0, 2, 1, 1, 0.0),
        cubeful2=gnubg.evalcontext(1, 2, 1, 1, 0.0),
    )


def money_cube(value: int = 1, owner: str = "center") -> dict[str, Any]:
    """Money cubeinfo for the player on roll (side 1 of the board = move 0 in gnubg.cubeinfo terms)."""
    ci = gnubg.cubeinfo(value, -1 if owner == "center" else 0, 0, 0)
    if ci["jacoby"] or ci["beavers"]:
        raise RuntimeError(f"expected Jacoby and beavers off, got {ci}")
    return ci


def legal_moves(position: str, dice: Sequence[int]) -> list[tuple[str, float]]:
    """All legal plays as (resulting ID, 0-ply cubeless equity), best first, via gnubg's hint.

    gnubg's generator keeps one move per distinct resulting position; at 0-ply its hint keeps them all.
    """
    gnubg.command(f"set board {position}")
    gnubg.command(f"set dice {dice[0]} {dice[1]}")
    board = copy_board(gnubg.positionfromid(position))
    hint = gnubg.hint(100000)
    out = [(result_id(board, list(gnubg.parsemove(h["move"]))), float(h["equity"])) for h in hint["hint"]]
    if len({r for r, _ in out}) != len(out):
        raise RuntimeError(f"duplicate results for {position} {dice}")
    return out


def best_move_0ply(ctx: Contexts, board: Board, dice: Sequence[int]) -> Move:
    flat = gnubg.findbestmove(board, money_cube(), ctx.cubeless0, tuple(dice))
    return pairs_from_flat(flat)


# --------------------------------------------------------------------------------------------------
# Record builders
# --------------------------------------------------------------------------------------------------


def movegen_record(position: str, dice: Sequence[int]) -> Record:
    results = sorted(r for r, _ in legal_moves(position, dice))
    return {"position": position, "dice": list(dice), "results": results}


def checker_record(ctx: Contexts, position: str, dice: Sequence[int]) -> Record:
    moves = legal_moves(position, dice)
    ranked = sorted(moves, key=lambda m: (-m[1], m[0]))[:MAX_CHECKER_MOVES]
    ci = money_cube()
    scored = []
    for rid, _ in ranked:
        # 2-ply cubeless evaluation of the resulting position, opponent on roll; negate for the mover.
        equity = -gnubg.evaluate(gnubg.positionfromid(rid), ci, ctx.cubeless2)[5]
        scored.append((equity, rid))
    scored.sort(key=lambda s: (-s[0], s[1]))
    board = copy_board(gnubg.positionfromid(position))
    choice = result_id(board, best_move_0ply(ctx, board, dice))
    return {
        "position": position,
        "dice": list(dice),
        "n_legal": len(moves),
        "class": "race" if is_race(board) else "contact",
        "moves": [{"result": rid, "equity": round(eq, 6)} for eq, rid in scored],
        "gnubg0_choice": choice,
    }


def cube_record(ctx: Contexts, position: str, value: int, owner: str) -> Record | None:
    """None when gnubg calls the decision optional (doubling and not doubling are worth the same, codes 16-20)
    or one the benchmark does not score (beavers, dead cubes): the file keeps decisions with one right answer."""
    board = gnubg.positionfromid(position)
    ci = money_cube(value, owner)
    probs = gnubg.evaluate(board, ci, ctx.cubeless2)
    optimal, no_double, take, drop, code, text = gnubg.cfevaluate(board, ci, ctx.cubeful2)
    if code not in DECISION_BY_CODE:
        return None
    return {
        "position": position,
        "cube": {"value": value, "owner": owner},
        "probs": [round(p, 6) for p in probs[:5]],
        "cubeless_equity": round(probs[5], 6),
        "equity_no_double": round(no_double, 6),
        "equity_double_take": round(take, 6),
        "equity_double_pass": round(drop, 6),
        "equity_optimal": round(optimal, 6),
        "gnubg_decision": text,
        "gnubg_decision_code": code,
        "decision": DECISION_BY_CODE[code],
    }


def pubeval_record(weights: dict[str, list[float]], position: str, dice: Sequence[int]) -> Record | None:
    """None when the roll has fewer than 2 legal plays or the best pubeval score is tied."""
    board = copy_board(gnubg.positionfromid(position))
    race = is_race(board)
    w = weights["race"] if race else weights["contact"]
    scores = []
    for rid, _ in legal_moves(position, dice):
        after = swap(copy_board(gnubg.positionfromid(rid)))  # back to the mover's side
        scores.append((pubeval_score(w, after), rid))
    if len(scores) < 2:
        return None
    scores.sort(key=lambda s: (-s[0], s[1]))
    if scores[0][0] == scores[1][0]:
        return None
    return {
        "position": position,
        "dice": list(dice),
        "race": race,
        "pubeval_best": scores[0][1],
        "pubeval_score": round(scores[0][0], 5),
    }


# --------------------------------------------------------------------------------------------------
# Position sampling
# --------------------------------------------------------------------------------------------------


def roll(rng: random.Random, opening: bool = False) -> tuple[int, int]:
    while True:
        d = (rng.randint(1, 6), rng.randint(1, 6))
        if not (opening and d[0] == d[1]):  # an opening roll is never a double
            return d


def play_game(ctx: Contexts, rng: random.Random, policy: str) -> Iterator[tuple[str, tuple[int, int]]]:
    """Yield (position ID, dice) for every turn of one game; policy 'selfplay' = gnubg 0-ply
    cubeless, 'random' = a uniformly random distinct legal play."""
    board = copy_board(gnubg.positionfromid(START_ID))
    opening = True
    while not game_over(board):
        dice = roll(rng, opening)
        opening = False
        position = gnubg.positionid(board)
        yield position, dice
        if policy == "selfplay":
            board = swap(apply_move(board, best_move_0ply(ctx, board, dice)))
        else:
            results = [r for r, _ in legal_moves(position, dice)]
            board = swap(board) if not results else copy_board(gnubg.positionfromid(rng.choice(results)))


def sample_turns(ctx: Contexts, rng: random.Random, policy: str, take: float) -> Iterator[tuple[str, tuple[int, int]]]:
    """Endless stream of turns from fresh games, each turn kept with probability `take`."""
    seen: set[tuple[str, tuple[int, int]]] = set()
    while True:
        for turn in play_game(ctx, rng, policy):
            if turn not in seen and rng.random() < take:
                seen.add(turn)
                yield turn


def pick_policy(rng: random.Random, source: str) -> str:
    if source == "mixed":
        return "selfplay" if rng.random() < 0.6 else "random"
    return source


# --------------------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------------------


def load_jsonl(path: Path) -> list[Record]:
    with path.open() as f:
        return [json.loads(line) for line in f if line.strip()]


def dump(rec: Record) -> str:
    return json.dumps(rec, separators=(",", ":"))


def recompute(ctx: Contexts, kind: str, src: Record, weights: dict[str, list[float]]) -> Record | None:
    if kind == "movegen":
        return movegen_record(src["position"], src["dice"])
    if kind == "checker":
        return checker_record(ctx, src["position"], src["dice"])
    if kind == "cube":
        cube = src.get("cube", {"value": 1, "owner": "center"})
        return cube_record(ctx, src["position"], cube["value"], cube["owner"])
    return pubeval_record(weights, src["position"], src["dice"])


def record_key(rec: Record) -> tuple[Any, ...]:
    """What makes a record distinct: the position and the dice, or for cube records the cube state."""
    if "cube" in rec:
        return rec["position"], rec["cube"]["value"], rec["cube"]["owner"]
    return rec["position"], tuple(rec["dice"])


def generate(ctx: Contexts, args: argparse.Namespace, weights: dict[str, list[float]]) -> list[Record]:
    """New records from sampled games; with --append, records already in --out are not repeated."""
    out_path = Path(args.out)
    known = {record_key(r) for r in load_jsonl(out_path)} if args.append and out_path.exists() else set()
    rng = random.Random(args.seed)
    streams = {p: sample_turns(ctx, rng, p, args.take) for p in ("selfplay", "random")}
    n_race = round(args.n * args.race_fraction) if args.kind == "checker" else 0
    counts = {"race": 0, "contact": 0}
    out: list[Record] = []
    while len(out) < args.n:
        position, dice = next(streams[pick_policy(rng, args.source)])
        board = copy_board(gnubg.positionfromid(position))
        rec: Record | None
        if args.kind == "cube":
            pwin = gnubg.evaluate(board, money_cube(), ctx.cubeless0)[0]
            if not CUBE_PWIN_RANGE[0] <= pwin <= CUBE_PWIN_RANGE[1]:
                continue
            owned = rng.random() < args.owned_fraction
            rec = cube_record(ctx, position, 2 if owned else 1, "on_roll" if owned else "center")
            if rec is None:
                continue
        elif args.kind == "checker":
            cls = "race" if is_race(board) else "contact"
            quota = n_race if cls == "race" else args.n - n_race
            if counts[cls] >= quota:
                continue
            rec = checker_record(ctx, position, dice)
            if rec["n_legal"] < 2:
                continue
            counts[cls] += 1
        else:
            rec = recompute(ctx, args.kind, {"position": position, "dice": dice}, weights)
        if rec is not None and record_key(rec) not in known:
            known.add(record_key(rec))
            out.append(rec)
    return out


def compare(kind: str, old: Record, new: Record | None) -> dict[str, Any]:
    """Exact comparison plus a few looser facts that help to explain a mismatch."""
    info: dict[str, Any] = {"exact": new == old}
    if new is None or kind == "movegen":
        return info

    def maxdiff(a: Sequence[float], b: Sequence[float]) -> float:
        return max((abs(x - y) for x, y in zip(a, b, strict=True)), default=0.0)

    if kind == "checker":
        old_eq = {m["result"]: m["equity"] for m in old["moves"]}
        new_eq = {m["result"]: m["equity"] for m in new["moves"]}
        common = sorted(set(old_eq) & set(new_eq))
        info["same_moves"] = set(old_eq) == set(new_eq)
        info["same_best"] = old["moves"][0]["result"] == new["moves"][0]["result"]
        info["same_0ply_choice"] = old["gnubg0_choice"] == new["gnubg0_choice"]
        info["max_abs_diff"] = maxdiff([old_eq[r] for r in common], [new_eq[r] for r in common])
    elif kind == "cube":
        keys = ["cubeless_equity", "equity_no_double", "equity_double_take", "equity_optimal"]
        info["same_decision"] = old["gnubg_decision_code"] == new["gnubg_decision_code"]
        info["max_abs_diff"] = max(
            maxdiff(old["probs"], new["probs"]), maxdiff([old[k] for k in keys], [new[k] for k in keys])
        )
    elif kind == "pubeval":
        info["same_best"] = old["pubeval_best"] == new["pubeval_best"]
        info["max_abs_diff"] = abs(old["pubeval_score"] - new["pubeval_score"])
    return info


def verify(ctx: Contexts, args: argparse.Namespace, weights: dict[str, list[float]]) -> dict[str, Any]:
    path = Path(args.file) if args.file else Path(args.data_dir) / DEFAULT_FILES[args.kind]
    records = load_jsonl(path)
    rng = random.Random(args.seed)
    sample = records if args.n <= 0 or args.n >= len(records) else rng.sample(records, args.n)
    details = []
    recomputed = []
    for old in sample:
        new = recompute(ctx, args.kind, old, weights)
        recomputed.append(new)
        info = compare(args.kind, old, new)
        info["position"] = old["position"]
        details.append(info)
    report: dict[str, Any] = {
        "kind": args.kind,
        "file": str(path),
        "sampled": len(sample),
        "exact": sum(d["exact"] for d in details),
    }
    for key in ("same_moves", "same_best", "same_0ply_choice", "same_decision"):
        if details and key in details[0]:
            report[key] = sum(d[key] for d in details)
    diffs = [d["max_abs_diff"] for d in details if "max_abs_diff" in d]
    if diffs:
        report["max_abs_diff"] = round(max(diffs), 6)
        report["median_max_abs_diff"] = round(sorted(diffs)[len(diffs) // 2], 6)
    if args.details:
        report["details"] = details
    if args.out:
        write_records(Path(args.out), [r for r in recomputed if r is not None], append=False)
    return report


def write_records(path: Path, records: list[Record], append: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a" if append else "w") as f:
        for rec in records:
            f.write(dump(rec) + "\n")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=f'{ENV_VAR}="..." gnubg -t -q -r -p tests/data/regenerate.py',
        description="Regenerate, extend or verify tests/data with GNU Backgammon.",
    )
    parser.add_argument("--data-dir", default="tests/data", help="data folder (default: tests/data)")
    parser.add_argument("--threads", type=int, default=1, help="gnubg evaluation threads (default 1)")
    sub = parser.add_subparsers(dest="command", required=True)

    gen = sub.add_parser("generate", help="sample new positions and write new records")
    gen.add_argument("kind", choices=KINDS)
    gen.add_argument("--n", type=int, required=True, help="number of records")
    gen.add_argument("--seed", type=int, default=1, help="seed for dice and sampling")
    gen.add_argument(
        "--source",
        choices=("selfplay", "random", "mixed"),
        default="selfplay",
        help="games of gnubg 0-ply self-play, random legal plays, or 60/40 both",
    )
    gen.add_argument("--take", type=float, default=0.1, help="chance that a turn of a game is used")
    gen.add_argument("--race-fraction", type=float, default=0.3, help="checker: share of race positions")
    gen.add_argument("--owned-fraction", type=float, default=0.3, help="cube: share with the cube at 2 on roll")
    gen.add_argument("--out", required=True, help="output .jsonl")
    gen.add_argument("--append", action="store_true", help="append to --out instead of overwriting")

    rec = sub.add_parser("recompute", help="compute records for the positions listed in a .jsonl file")
    rec.add_argument("kind", choices=KINDS)
    rec.add_argument(
        "--from",
        dest="src",
        required=True,
        help='.jsonl with "position" and "dice" (cube: "position" and optional "cube")',
    )
    rec.add_argument("--out", required=True, help="output .jsonl")
    rec.add_argument("--append", action="store_true", help="append to --out instead of overwriting")

    ver = sub.add_parser("verify", help="recompute a sample of a data file and count exact matches")
    ver.add_argument("kind", choices=(*KINDS, "met"))
    ver.add_argument("--file", help="data file (default: the standard file of KIND under --data-dir)")
    ver.add_argument("--n", type=int, default=30, help="sample size; 0 = every record")
    ver.add_argument("--seed", type=int, default=1, help="seed of the sample")
    ver.add_argument("--details", action="store_true", help="list every sampled record in the report")
    ver.add_argument("--out", help="also write the recomputed records here")
    ver.add_argument("--xml-dir", default=str(GNUBG_MET_DIR), help="met: folder of gnubg's MET XML files")

    met = sub.add_parser("met", help="convert a gnubg match equity table (XML) to JSON (no gnubg needed)")
    met.add_argument("--xml", required=True, help="for example /usr/share/gnubg/met/Kazaross-XG2.xml")
    met.add_argument("--out", required=True, help="output .json")
    return parser.parse_args(argv)


def main() -> int:
    # Under gnubg sys.argv is [''], so options come from the environment; plain python may use argv.
    argv = shlex.split(os.environ[ENV_VAR]) if ENV_VAR in os.environ else sys.argv[1:]
    try:
        args = parse_args(argv)
    except SystemExit as exc:  # --help or a usage error; argparse has printed the message
        return int(exc.code or 0)
    if args.command == "met" or (args.command == "verify" and args.kind == "met"):
        if args.command == "met":
            write_met(Path(args.out), met_from_xml(Path(args.xml)))
            report: dict[str, Any] = {"kind": "met", "written": 1, "out": args.out}
        else:
            report = verify_met(Path(args.data_dir), Path(args.xml_dir))
        print(json.dumps(report, indent=1), file=REPORT)
        return 0
    if gnubg is None:
        print("error: this command needs gnubg: gnubg -t -q -r -p tests/data/regenerate.py", file=sys.stderr)
        return 2
    silence_gnubg()
    ctx = setup_gnubg(args.threads)
    with (Path(args.data_dir) / "pubeval" / "weights.json").open() as f:
        weights = json.load(f)
    start = time.time()
    if args.command == "verify":
        report = verify(ctx, args, weights)
    else:
        if args.command == "generate":
            records = generate(ctx, args, weights)
        else:
            records = [r for r in (recompute(ctx, args.kind, s, weights) for s in load_jsonl(Path(args.src))) if r]
        write_records(Path(args.out), records, append=args.append)
        report = {"kind": args.kind, "written": len(records), "out": args.out}
    report["seconds"] = round(time.time() - start, 1)
    print(json.dumps(report, indent=1), file=REPORT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
