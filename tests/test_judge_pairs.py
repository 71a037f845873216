"""``benchmarks/judge_pairs.py``: two graded pits paired by record, per class and player."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "judge_pairs.py"


def _decisions(path: Path, rows: list[tuple[str, str, str, float]]) -> Path:
    path.write_text("".join(json.dumps({"record": r, "name": n, "class": c, "error": e, "counted": True}) + "\n"
                            for r, n, c, e in rows)
                    + json.dumps({"record": "g1", "name": "bgbot-2ply", "class": "contact", "error": 9.0,
                                  "counted": False}) + "\n")  # a forced play: not counted
    return path


def test_the_paired_difference_is_per_record_and_per_class(tmp_path: Path) -> None:
    bot, opp = "bgbot-2ply", "gnubg-0ply"
    same = [("g1", opp, "contact", 0.02), ("g2", opp, "race", 0.01)]
    first = _decisions(tmp_path / "a.jsonl", [("g1", bot, "crashed", 0.10), ("g2", bot, "crashed", 0.0), *same])
    second = _decisions(tmp_path / "b.jsonl", [("g1", bot, "crashed", 0.30), ("g2", bot, "crashed", 0.10), *same,
                                               ("g3", bot, "contact", 5.0)])  # g3 is in one pit only
    out = subprocess.run([sys.executable, str(SCRIPT), str(first), "--against", str(second)],
                         capture_output=True, text=True, check=True).stdout
    rows = {tuple(line.split()[:2]): line.split() for line in out.splitlines()[2:]}
    assert out.startswith("2 records in both")
    crashed = rows[("crashed", "bgbot")]
    # per game: first 0.05, second 0.20; differences -0.20 and -0.10: mean -0.15, se 0.05
    assert crashed[2:6] == ["0.0500", "2", "0.2000", "2"] and crashed[6:] == ["-0.1500", "±", "0.0500"]
    assert rows[("all", "bgbot")][6] == "-0.1500" and rows[("contact", "opponent")][6] == "+0.0000"


def test_a_file_that_is_not_decisions_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("hello\n")
    good = _decisions(tmp_path / "b.jsonl", [("g1", "bgbot-2ply", "race", 0.1)])
    res = subprocess.run([sys.executable, str(SCRIPT), str(bad), "--against", str(good)],
                         capture_output=True, text=True)
    assert res.returncode != 0 and "bad.jsonl:1: not a loss_by_class decision line" in res.stderr


@pytest.mark.parametrize("records", [["g9"], []])
def test_pits_without_common_records_are_refused(tmp_path: Path, records: list[str]) -> None:
    a = _decisions(tmp_path / "a.jsonl", [(r, "bgbot-2ply", "race", 0.1) for r in records])
    b = _decisions(tmp_path / "b.jsonl", [("g1", "bgbot-2ply", "race", 0.1), ("g2", "bgbot-2ply", "race", 0.1)])
    res = subprocess.run([sys.executable, str(SCRIPT), str(a), "--against", str(b)], capture_output=True, text=True)
    assert res.returncode != 0 and "records in both" in res.stderr


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    good = _decisions(tmp_path / "b.jsonl", [("g1", "bgbot-2ply", "race", 0.1)])
    res = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "nope.jsonl"), "--against", str(good)],
                         capture_output=True, text=True)
    assert res.returncode != 0 and "cannot read the decision file" in res.stderr and "nope.jsonl" in res.stderr
    assert "Traceback" not in res.stderr
