"""``benchmarks/judged_positions.py``: one class of graded games' positions as a checker benchmark file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bgbot.rules.movegen import successors
from bgbot.rules.position import Position

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "judged_positions.py"
RACE = "2rsHAgCt3ZMAAA"  # a race of the held-out file (side on roll's view)
CONTACT = "4HPwATDgc/ABMA"  # the opening position after a 5-4


def _decision(position: str, dice: list[int], cls: str, forced: bool = False) -> str:
    return json.dumps({"record": "pair00000-1.mat", "kind": "move", "position": position, "dice": dice,
                       "class": cls, "forced": forced, "error": 0.0, "name": "bgbot-1ply"}) + "\n"


def test_race_plays_become_benchmark_rows_valued_by_gnubg(tmp_path: Path) -> None:
    gnubg_nn = pytest.importorskip("gnubg_nn")  # the .[ref] extra, which the README's test command installs
    decisions = tmp_path / "d.jsonl"
    decisions.write_text(_decision(RACE, [3, 4], "race") + _decision(RACE, [4, 3], "race")  # one roll, twice
                         + _decision(RACE, [6, 6], "race", forced=True) + _decision(CONTACT, [2, 1], "contact"))
    out = tmp_path / "race.jsonl"
    res = subprocess.run([sys.executable, str(SCRIPT), str(decisions), str(out)], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["position"] == RACE and rows[0]["class"] == "race"
    row = rows[0]
    legal = {q.gnubg_id() for q in successors(Position.from_id(RACE), (3, 4))}
    assert {m["result"] for m in row["moves"]} == legal and row["n_legal"] == len(legal) > 1
    equities = [m["equity"] for m in row["moves"]]
    assert equities == sorted(equities, reverse=True)  # best first
    for m in row["moves"][:3]:  # the mover's cubeless equity: minus the opponent's at gnubg 1-ply
        p = gnubg_nn.probabilities(gnubg_nn.board_from_position_id(m["result"]), 1)
        assert m["equity"] == pytest.approx(-(2 * p[0] - 1 + p[1] - p[3] + p[2] - p[4]), abs=1e-6)
    assert row["gnubg0_choice"] in legal
    # the file is a checker benchmark: checker_error grades a network on it
    graded = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "checker_error.py"), "--data", str(out),
                             "--plies", "1", "--no-ref"], capture_output=True, text=True, timeout=300)
    assert graded.returncode == 0, graded.stderr[-2000:]
    assert "1 positions (0 contact, 0 of them crashed; 1 race)" in graded.stdout


def test_a_file_that_is_not_decisions_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("gnubg_nn")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind": "move"}\n')
    res = subprocess.run([sys.executable, str(SCRIPT), str(bad), str(tmp_path / "out.jsonl")],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert "bad.jsonl' line 1 is not a loss_by_class decision" in res.stderr
    res = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "nope.jsonl"), str(tmp_path / "out.jsonl")],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode != 0 and "cannot read the decision file" in res.stderr and "nope.jsonl" in res.stderr
