"""``bgbot analyse DIR`` and the games of one match in parallel processes: each report the same as in one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bgbot.cli.main import main

DATA = Path(__file__).resolve().parent / "data" / "analyse"


def test_a_folder_gives_each_records_own_analysis(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "matches"
    folder.mkdir()
    for name in ("m03.mat", "m09.sgf"):
        shutil.copy(DATA / name, folder / name)
    (folder / "notes.txt").write_text("not a record")
    reports = tmp_path / "reports"
    assert main(["analyse", str(folder), "--ply", "1", "--json", "--no-luck", "--workers", "2",
                 "--html", str(reports)]) == 0
    together = json.loads(capsys.readouterr().out)
    assert sorted(together) == [str(folder / "m03.mat"), str(folder / "m09.sgf")]  # the .txt is not a record
    assert sorted(p.name for p in reports.iterdir()) == ["m03.html", "m09.html"]
    for name in ("m03.mat", "m09.sgf"):
        assert main(["analyse", str(folder / name), "--ply", "1", "--json", "--no-luck"]) == 0
        alone = json.loads(capsys.readouterr().out)
        got = together[str(folder / name)]
        got.pop("html")
        for d in (got, alone):
            d.pop("seconds", None)
        assert got["decisions"] == alone["decisions"]
        assert got["players"] == alone["players"]


def test_a_folder_without_records_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "readme.txt").write_text("x")
    assert main(["analyse", str(tmp_path), "--ply", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"bgbot: error: no .mat or .sgf match records in the folder {str(tmp_path)!r}"


def test_the_games_of_one_match_in_two_processes_give_the_same_analysis() -> None:
    from bgbot.engine.api import Engine
    from bgbot.formats.records import read_match

    engine = Engine.load()
    match = read_match(DATA / "m05.mat")
    assert len(match.games) >= 2
    done: list[int] = []
    serial = engine.analyse(match, 1, luck=True)
    parallel = engine.analyse(match, 1, luck=True, workers=2, progress=done.append)
    assert parallel.decisions == serial.decisions
    assert parallel.timeline == serial.timeline
    assert parallel.players == serial.players
    assert done[-1] == sum(len(g.actions) for g in match.games)  # the bar reaches the end
