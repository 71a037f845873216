"""Make the GNU Backgammon reference matches of tests/data/analyse/ and gnubg's own analysis of them.

Runs inside gnubg's embedded Python (gnubg takes extra command-line words for files to open, so the
options come in the environment variable ``MAKE_MATCHES_ARGS``).  From the repository root:

    MAKE_MATCHES_ARGS="--n 12 --seed 1" /usr/games/gnubg -t -q -r -p tests/data/analyse/make_matches.py

For each match k (lengths alternate 3 and 5 points; one extra 7-point match, ``speed-7pt``, is made
for the speed benchmark and not analysed) gnubg plays itself at 0-ply with evaluation noise (a
different noise level for each player, so that one player errs more), then:

1. ``export match mat mK.mat`` - the match as gnubg's Jellyfish export;
2. ``import mat mK.mat`` and ``save match mK.sgf`` - gnubg's SGF of the same match (the re-import
   drops the evaluations the players kept while playing, which make an SGF ten times larger);
   for the first match the SGF is saved *after* the analysis instead, so that one file carries
   gnubg's analysis properties (A, DA, LU, ...) as real analysed exports do;
3. ``analyse match`` at gnubg's 2-ply (cubeful, deterministic, no noise) and the analysis read back
   from ``gnubg.match()`` and from ``show statistics match``.

``gnubg-analysis.json`` holds, per match: the players, gnubg's statistics per player (error totals
and rates in mEMG, unforced moves, close cube decisions, counts of marked moves, luck) and every
checker play or cube action gnubg marked doubtful, bad or very bad, with the play it preferred.
A JSON summary goes to standard output; gnubg's own chatter goes to /dev/null.

The output is reproducible with the same gnubg build: the dice come from ``set seed``, and the noise is
gnubg's deterministic kind (drawn from the position, ``evaluation deterministic on``), so running the
script again gives the same matches and the same analysis (only the date fields differ).  ``--plies 0``
analyses at gnubg's 0-ply instead, a quick check of the whole pipeline (the test suite runs it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any

# gnubg's embedded Python runs this file with no package around it: regenerate.py (one folder up) has the helper
sys.path.insert(0, str(Path(globals().get("__file__", "tests/data/analyse/make_matches.py")).resolve().parents[1]))
from regenerate import silence_gnubg

try:
    import gnubg  # built into gnubg's embedded interpreter only
except ImportError:  # pragma: no cover - plain python
    gnubg = None

ENV_VAR = "MAKE_MATCHES_ARGS"
HERE = Path("tests/data/analyse")
NAMES = ("alice", "bob")
# (noise of player 0, noise of player 1) in equity: cycled over the matches
NOISES = ((0.02, 0.06), (0.06, 0.02), (0.0, 0.04), (0.04, 0.0), (0.03, 0.03), (0.01, 0.08))
ANALYSIS_PLIES = 2  # gnubg's numbering: bgbot's (XG's) 3-ply
SKILLS = ("doubtful", "bad", "very bad")


def _players(noise: tuple[float, float]) -> None:
    for p in (0, 1):
        for what in ("chequerplay", "cubedecision"):
            for cmd in (
                f"set player {p} gnubg",
                f"set player {p} {what} evaluation plies 0",
                f"set player {p} {what} evaluation cubeful on",
                f"set player {p} {what} evaluation deterministic on",  # noise from the position: reproducible
                # noisy checker play makes the errors; the cube is played noiselessly, as noisy 0-ply
                # doubles end most matches in one or two games
                f"set player {p} {what} evaluation noise {noise[p] if what == 'chequerplay' else 0.0}",
            ):
                gnubg.command(cmd)


def _rename(mat: Path) -> None:
    """Put NAMES into the exported file: gnubg 1.07's Python ``set player N name`` does not reach the
    match it then plays (it exports its default names, ``gnubg`` and the login name)."""
    text = mat.read_text()
    text = re.sub(
        r"^( \S+) : (\d+)(\s+)\S+ : (\d+)$",
        lambda m: f" {NAMES[0]} : {m.group(2)}".ljust(31) + f" {NAMES[1]} : {m.group(4)}",
        text,
        flags=re.M,
    )
    mat.write_text(text)


def _analysis_settings(plies: int) -> None:
    for what in ("chequerplay", "cubedecision"):
        for cmd in (
            f"set analysis {what} evaluation plies {plies}",
            f"set analysis {what} evaluation cubeful on",
            f"set analysis {what} evaluation prune on",
            f"set analysis {what} evaluation deterministic on",
            f"set analysis {what} evaluation noise 0",
        ):
            gnubg.command(cmd)
    gnubg.command("set analysis luck evaluation plies 0")


def _statistics_text(out: Path) -> str:
    """``show statistics match`` output (gnubg prints it on fd 1: captured through a temporary file in ``out``)."""
    tmp = out / ".stats.tmp"
    sys.stdout.flush()
    saved = os.dup(1)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    os.close(fd)
    try:
        gnubg.command("show statistics match")
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
    text = tmp.read_text(errors="replace")
    tmp.unlink()
    return text


_NUM = r"([-+]?[0-9.]+)"


def parse_statistics(text: str) -> dict[str, Any]:
    """gnubg's statistics table: per section, the two players' numbers of the rows we use."""
    section = ""
    out: dict[str, dict[str, list[float]]] = {}
    for line in text.splitlines():
        head = line.strip()
        if head in ("Chequerplay statistics", "Luck statistics", "Cube statistics", "Overall statistics"):
            section = head.split()[0].lower()
            out[section] = {}
            continue
        if not section:
            continue
        m = re.match(r"^(\S.*?)\s{2,}(.*)$", line)
        if not m:
            continue
        label, rest = m.group(1).strip(), m.group(2)
        nums = re.findall(_NUM + r"(?:\s*\(\s*" + _NUM + r"%?\s*\))?", rest)
        if len(nums) >= 2:
            out[section][label] = [float(nums[0][0]), float(nums[1][0])]
    return out


def _move_text(move: Any) -> str:
    return " ".join(f"{a}/{b}" for a, b in move)


def marked_decisions(match: dict[str, Any]) -> list[dict[str, Any]]:
    """Every checker play and cube action gnubg marked, with its error (EMG) and gnubg's choice."""
    out = []
    players = {"X": 0, "O": 1}
    for gi, g in enumerate(match["games"], 1):
        turn = {0: 0, 1: 0}
        for rec in g["game"]:
            action = rec.get("action")
            player = players.get(rec.get("player"), -1)
            a = rec.get("analysis") or {}
            if action == "move":
                turn[player] += 1
                moves = a.get("moves") or ()
                skill = a.get("skill")
                if skill in SKILLS and moves:
                    best, played = moves[0], moves[a["imove"]]
                    out.append(
                        {
                            "game": gi,
                            "player": player,
                            "kind": "move",
                            "turn": turn[player],
                            "position": rec["board"],
                            "dice": list(rec["dice"]),
                            "played": _move_text(rec["move"]),
                            "best": _move_text(best["move"]),
                            "error": round(best["score"] - played["score"], 6),
                            "skill": skill,
                        }
                    )
            cube_skill = a.get("cube-skill") if action == "move" else a.get("skill")
            if cube_skill in SKILLS:
                out.append(
                    {
                        "game": gi,
                        "player": player,
                        "kind": "cube" if action == "move" else action,
                        "turn": turn[player] + (0 if action != "move" else 1) if action != "move" else turn[player],
                        "position": rec.get("board"),
                        "skill": cube_skill,
                    }
                )
    return out


def make(n: int, seed: int, out: Path, plies: int = ANALYSIS_PLIES) -> dict[str, Any]:
    gnubg.command("set threads 1")
    # gnubg 1.07.001 reuses cached cubeful evaluations across match scores (tests/data/README.md, Caveats)
    gnubg.command("set cache 0")
    gnubg.command("set rng mersenne")
    gnubg.command("set automatic game on")
    _analysis_settings(plies)
    report: dict[str, Any] = {"gnubg": "GNU Backgammon 1.07.001", "analysis_plies_gnubg": plies, "matches": {}}
    jobs = [(f"m{k:02d}", 3 if k % 2 else 5, NOISES[(k - 1) % len(NOISES)]) for k in range(1, n + 1)]
    jobs.append(("speed-7pt", 7, (0.02, 0.02)))
    for k, (name, length, noise) in enumerate(jobs):
        t0 = time.time()
        # the speed match keeps its own seed, so that it does not depend on --n
        gnubg.command(f"set seed {seed * 1000 + (999 if name.startswith('speed') else k)}")
        _players(noise)
        gnubg.command(f"new match {length}")
        mat, sgf = out / f"{name}.mat", out / f"{name}.sgf"
        gnubg.command(f"export match mat {mat}")
        _rename(mat)
        gnubg.command(f"import mat {mat}")
        if name.startswith("speed"):
            continue
        analysed_sgf = k < 1
        if not analysed_sgf:
            gnubg.command(f"save match {sgf}")
        gnubg.command("analyse match")
        if analysed_sgf:
            gnubg.command(f"save match {sgf}")
        m = gnubg.match()
        stats = parse_statistics(_statistics_text(out))
        report["matches"][name] = {
            "length": length,
            "noise": list(noise),
            "players": list(NAMES),
            "games": len(m["games"]),
            "statistics": stats,
            "marked": marked_decisions(m),
            "seconds": round(time.time() - t0, 1),
        }
    (out / "gnubg-analysis.json").write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    return {name: {"seconds": r["seconds"], "games": r["games"]} for name, r in report["matches"].items()}


def main() -> None:
    ap = argparse.ArgumentParser(prog="make_matches.py")
    ap.add_argument("--n", type=int, default=16, help="analysed matches (default 16)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(HERE))
    ap.add_argument("--plies", type=int, default=ANALYSIS_PLIES, help="gnubg's analysis ply (default 2; 0 is quick)")
    args = ap.parse_args(shlex.split(os.environ.get(ENV_VAR, "")))
    real = silence_gnubg()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    real.write(json.dumps(make(args.n, args.seed, out, args.plies)) + "\n")


if gnubg is not None:
    main()
