"""Match records: gnubg's .mat and .sgf exports read and replay, bgbot's records read back identically,
gnubg imports what bgbot writes, and every broken file is one clear error with nothing written half."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import bgbot
from bgbot.errors import BgbotError, RecordError, RecordMoveError
from bgbot.formats.records import (
    GameRecord,
    MatchRecord,
    RecordEntry,
    format_match,
    match_from_games,
    parse_match,
    read_match,
    write_match,
)
from bgbot.play.bots.local import RandomBot
from bgbot.play.match import play_match
from bgbot.play.table import Rules, play_game
from bgbot.rules.moves import legal_moves

DATA = Path(__file__).resolve().parent / "data" / "analyse"
MATS = sorted(DATA.glob("*.mat"))
SGFS = sorted(DATA.glob("*.sgf"))


def test_reference_data_is_there() -> None:
    assert len(MATS) >= 11 and len(SGFS) >= 10, "tests/data/analyse: run make_matches.py (see its docstring)"


@pytest.mark.parametrize("path", MATS + SGFS, ids=lambda p: p.name)
def test_every_gnubg_record_reads_and_replays_legally(path: Path) -> None:
    m = read_match(path)
    assert m.names == ("alice", "bob")
    assert m.length in (3, 5, 7) and m.games
    score = [0, 0]
    for g in m.games:
        assert g.score == (score[0], score[1])
        pos_side = None
        for entry, state in g.states():
            if entry.kind == "move":
                assert entry.dice is not None and entry.result is not None
                # the recorded result is one of the legal plays of the position reached
                assert entry.result in {mv.result for mv in legal_moves(entry.position, entry.dice)}
                assert state.on_roll == entry.player and state.dice == entry.dice
                pos_side = entry.player
        assert pos_side is not None
        if g.winner is not None:
            score[g.winner] += g.points
    assert m.score == (score[0], score[1])
    # gnubg's matches are played to the end
    assert max(m.score) >= m.length and m.winner in (0, 1)


@pytest.mark.parametrize("path", SGFS, ids=lambda p: p.name)
def test_mat_and_sgf_exports_of_one_match_are_the_same_games(path: Path) -> None:
    mat = read_match(path.with_suffix(".mat"))
    sgf = read_match(path)
    assert sgf.games == mat.games and sgf.length == mat.length and sgf.names == mat.names


def test_crawford_game_and_resignations_are_recognised() -> None:
    matches = [read_match(p) for p in SGFS]
    crawford = [g for m in matches for g in m.games if g.crawford]
    assert crawford, "some reference match has a Crawford game"
    for g in crawford:
        assert not any(a.kind == "double" for a in g.actions)
    hows = {g.how for m in matches for g in m.games}
    assert {"played", "resigned"} <= hows


@pytest.mark.parametrize("fmt", ["mat", "sgf"])
@pytest.mark.parametrize("path", MATS, ids=lambda p: p.name)
def test_what_bgbot_writes_reads_back_identically(path: Path, fmt: str, tmp_path: Path) -> None:
    m = read_match(path)
    out = write_match(tmp_path / f"again.{fmt}", m)
    back = read_match(out)
    assert back == m
    assert format_match(back, fmt) == out.read_text()


def _played(match_length: int, seed: int, **rules: object) -> list:
    bots = (RandomBot(seed, double=0.2, take=0.6), RandomBot(seed + 1, double=0.2, take=0.6))
    if match_length:
        return list(play_match(bots, match_length, lambda g: np.random.default_rng([seed, g]), Rules(**rules)).games)
    return [play_game(bots, np.random.default_rng([seed, k]), Rules(**rules)) for k in range(4)]


@pytest.mark.parametrize("fmt", ["mat", "sgf"])
@pytest.mark.parametrize(("length", "seed", "rules"), [(0, 1, {}), (0, 2, {"jacoby": True}), (5, 3, {}), (7, 4, {})])
def test_games_played_on_the_loop_round_trip(fmt: str, length: int, seed: int, rules: dict, tmp_path: Path) -> None:
    games = _played(length, seed, **rules)
    rec = match_from_games(games, ("random A", "random A"), length, jacoby=bool(rules.get("jacoby")))
    assert rec.names == ("random_A_1", "random_A_2")
    back = read_match(write_match(tmp_path / f"s.{fmt}", rec))
    assert back == rec
    for g, res in zip(back.games, games, strict=True):
        assert g.winner == res.winner and g.points == (res.points if res.winner is not None else 0)
        assert len(g.actions) == len(res.actions)
        for a, b in zip(g.actions, res.actions, strict=True):
            assert (a.player, a.kind, a.position, a.result, a.cube) == (b.player, b.kind, b.position, b.result, b.cube)
            assert a.dice == (None if b.dice is None else (max(b.dice), min(b.dice)))


def test_a_forfeit_is_recorded_as_a_resignation(tmp_path: Path) -> None:
    games = _played(0, 5)
    g0 = games[0]
    cut = dataclasses.replace(g0, actions=g0.actions[:6], how="forfeit", winner=1, points=g0.cube)
    rec = match_from_games([cut], ("a", "b"))
    assert rec.games[0].how == "resigned"
    for fmt in ("mat", "sgf"):
        back = read_match(write_match(tmp_path / f"f.{fmt}", rec))
        assert back.games[0].how == "resigned" and back.games[0].winner == 1


def test_read_match_is_exported_from_bgbot() -> None:
    m = bgbot.read_match(MATS[0])
    assert isinstance(m, MatchRecord) and isinstance(m.games[0], GameRecord)
    assert isinstance(m.games[0].actions[0], RecordEntry)


# ---------------------------------------------------------------------------
# broken files: one clear error each, naming the line and quoting it
# ---------------------------------------------------------------------------


def _text(name: str) -> str:
    return (DATA / name).read_text()


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_truncated_mat_is_an_error_naming_the_line() -> None:
    text = _text("m02.mat")
    lines = text.splitlines()
    # cut inside a move: "13/" dangling
    k = next(i for i, line in enumerate(lines) if ") " in line and "/" in line and i > 15)
    cut = "\n".join([*lines[:k], lines[k][: lines[k].index("/") + 1]])
    with pytest.raises(RecordError, match=rf"line {k + 1}: "):
        parse_match(cut, "mat", "cut.mat")


def test_truncated_sgf_is_an_error() -> None:
    text = _text("m03.sgf")
    for cut in (text[: len(text) // 2], text[: text.rindex(")")]):
        with pytest.raises(RecordError, match=r"line \d+: .*(truncated|closed)"):
            parse_match(cut, "sgf", "cut.sgf")


def test_empty_and_binary_files_are_errors(tmp_path: Path) -> None:
    for name, data in (("e.mat", b""), ("e.sgf", b""), ("b.mat", b"\x00\x01\x02garbage"), ("x.sgf", b"hello")):
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(RecordError) as err:
            read_match(p)
        assert "Traceback" not in str(err.value) and str(err.value)
    with pytest.raises(RecordError, match="cannot tell the record format"):
        read_match(tmp_path / "game.xg")
    with pytest.raises(RecordError, match="cannot read the record"):
        read_match(tmp_path / "missing.mat")


def test_corrupt_mat_line_is_quoted() -> None:
    text = _text("m04.mat")
    n = _line_of(text, " 3) ")
    bad = text.replace(" 3) ", " 3) @@@ ", 1)
    with pytest.raises(RecordError, match=rf"line {n}: ' *3\) @@@.*cannot read"):
        parse_match(bad, "mat", "bad.mat")


def test_unknown_sgf_property_is_an_error_naming_it() -> None:
    text = _text("m05.sgf")
    bad = text.replace(";B[", ";XZ[hello]B[", 1)
    n = _line_of(bad, "XZ[hello]")
    with pytest.raises(RecordError, match=rf"line {n}: .*unknown property XZ\[hello\]"):
        parse_match(bad, "sgf", "bad.sgf")


def test_sgf_of_another_game_or_with_variations_is_refused() -> None:
    text = _text("m05.sgf")
    with pytest.raises(RecordError, match=r"not a backgammon record \(GM\[6\]\)"):
        parse_match(text.replace("GM[6]", "GM[1]", 1), "sgf")
    with pytest.raises(RecordError, match="variation"):
        parse_match(text.replace(";B[", "(;B[", 1), "sgf")
    with pytest.raises(RecordError, match="set up by hand"):
        parse_match(text.replace("RU[", "AB[ab]RU[", 1), "sgf")


def _illegal(text: str, fmt: str) -> tuple[str, int]:
    """The record with player 1's first move replaced by a move that no roll allows."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if fmt == "mat" and ") " in line and ":" in line[30:]:
            right = line[30:]
            dice = right[right.index(":") - 2 : right.index(":")]
            lines[i] = line[:30] + right.replace(right[right.index(":") + 1 :], " 24/1 24/1", 1)
            return "\n".join(lines) + "\n", i + 1
        if fmt == "sgf" and ";B[" in line and line[line.index(";B[") + 3].isdigit():
            k = line.index(";B[") + 3
            dice = line[k : k + 2]
            lines[i] = line[:k] + dice + "axax" + line[line.index("]", k) :]
            return "\n".join(lines) + "\n", i + 1
    raise AssertionError("no move of player 1 found")


@pytest.mark.parametrize("fmt", ["mat", "sgf"])
def test_illegal_move_is_an_error_naming_game_and_move(fmt: str) -> None:
    text, n = _illegal(_text(f"m06.{fmt}"), fmt)
    with pytest.raises(RecordMoveError, match=rf"line {n}: .*game 1: move 1 of bob \(player 1\) is not legal"):
        parse_match(text, fmt, f"bad.{fmt}")


def test_mat_score_and_result_are_checked() -> None:
    text = _text("m07.mat")
    bad = text.replace("alice : 0                      bob : 0", "alice : 1                      bob : 0", 1)
    with pytest.raises(RecordError, match=r"game 1 starts at 1-0, but the games before it make 0-0"):
        parse_match(bad, "mat")
    k = text.index("Wins ")
    num = text[k + 5 : text.index(" ", k + 5)]
    bad = text[: k + 5] + str(int(num) + 13) + text[k + 5 + len(num) :]
    with pytest.raises(RecordError, match=r"line \d+: .*Wins"):
        parse_match(bad, "mat")


def test_double_in_the_crawford_game_is_an_error() -> None:
    for p in SGFS:
        m = read_match(p)
        g = next((g for g in m.games if g.crawford), None)
        if g is None:
            continue
        text = p.with_suffix(".mat").read_text()
        lines = text.splitlines()
        head = next(i for i, line in enumerate(lines) if line.strip() == f"Game {g.number}")
        # make the second numbered line of the Crawford game start with a double by player 0
        k = head + 3
        lines[k] = lines[k][:5] + " Doubles => 2".ljust(28) + lines[k][33:]
        with pytest.raises(RecordMoveError, match=r"(Crawford game|turn|double)"):
            parse_match("\n".join(lines) + "\n", "mat")
        return
    pytest.fail("no reference match has a Crawford game")


def test_nothing_is_written_half(tmp_path: Path) -> None:
    m = read_match(MATS[0])
    target = tmp_path / "out.sgf"
    target.write_text("old contents\n")
    g = m.games[0]
    bogus = dataclasses.replace(g.actions[1], result=g.actions[1].position)  # not a legal result: cannot be written
    broken = dataclasses.replace(m, games=(dataclasses.replace(g, actions=(g.actions[0], bogus)),))
    for path in (target, tmp_path / "new.mat"):
        with pytest.raises(BgbotError):
            write_match(path, broken)
    assert target.read_text() == "old contents\n"
    assert sorted(os.listdir(tmp_path)) == ["out.sgf"]


# ---------------------------------------------------------------------------
# gnubg imports what bgbot writes
# ---------------------------------------------------------------------------

_GNUBG_SUMMARY = r"""
import gnubg, json, os, sys
out = {}
for path in os.environ["FILES"].split(os.pathsep):
    gnubg.command(("import mat " if path.endswith(".mat") else "load match ") + path)
    m = gnubg.match()
    games = []
    for g in m["games"]:
        info = g["info"]
        moves = sum(1 for a in g["game"] if a.get("action") == "move")
        games.append([info.get("winner"), info.get("points-won"), moves, info["score-X"], info["score-O"]])
    out[path] = {"length": m["match-info"]["match-length"], "games": games}
os.write(int(os.environ["OUT_FD"]), (json.dumps(out) + "\n").encode())
"""


@pytest.mark.gnubg
def test_gnubg_imports_every_record_bgbot_writes(tmp_path: Path) -> None:
    from bgbot.play.bots.gnubg import find_gnubg

    gnubg = find_gnubg()
    files: list[Path] = []
    expected: dict[str, MatchRecord] = {}
    sources = [read_match(p) for p in MATS]
    sources.append(match_from_games(_played(5, 11), ("r1", "r2"), 5))
    for k, m in enumerate(sources):
        for fmt in ("mat", "sgf"):
            p = write_match(tmp_path / f"w{k:02d}.{fmt}", m)
            files.append(p)
            expected[str(p)] = m
    script = tmp_path / "summary.py"
    script.write_text(_GNUBG_SUMMARY)
    r, w = os.pipe()
    env = {**os.environ, "FILES": os.pathsep.join(map(str, files)), "OUT_FD": str(w)}
    proc = subprocess.run(
        [gnubg, "-t", "-q", "-r", "-p", str(script)],
        env=env,
        pass_fds=(w,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=300,
        check=False,
    )
    os.close(w)
    with os.fdopen(r) as f:
        got = json.loads(f.read() or "{}")
    assert proc.returncode == 0 and set(got) == set(expected)
    for path, m in expected.items():
        g = got[path]
        assert g["length"] == m.length, path
        assert len(g["games"]) == len(m.games), path
        for (winner, points, moves, sx, so), ours in zip(g["games"], m.games, strict=True):
            assert moves == len(ours.moves), path
            assert (sx, so) == ours.score, path
            if ours.winner is not None:
                assert winner == "XO"[ours.winner] and points == ours.points, (path, ours.number)


def test_pit_saves_sgf_records_that_read_back(tmp_path: Path) -> None:
    from bgbot.errors import ConfigError
    from bgbot.play.pit import PitConfig, run_pit

    out = tmp_path / "games"
    report = run_pit(
        "random:double=0.3,take=0.6",
        "pubeval",
        PitConfig(games=2, match_length=3, seed=2, save_games=str(out), record_format="sgf"),
    )
    files = sorted(out.glob("*.sgf"))
    assert [f.name for f in files] == ["pair00000-1.sgf", "pair00000-2.sgf"]
    assert report.matches is not None and report.matches["played"] == 2
    for f in files:
        m = read_match(f)
        assert m.length == 3 and max(m.score) >= 3 and m.winner is not None
        assert read_match(write_match(tmp_path / f"{f.stem}.mat", m)) == m
    with pytest.raises(ConfigError, match="record_format"):
        PitConfig(record_format="xml")


def _other_layout(text: str) -> str:
    """A gnubg export laid out as other programs write .mat: wider columns, ``bar``/``off`` for 25/0, a
    ``Wins N points and the match`` line, CRLF line ends."""
    out = []
    for line in text.splitlines():
        if re.match(r"^\s*\d+\) ", line):
            num, rest = line[:5], line[5:]
            left, right = rest[:28].rstrip(), rest[28:].strip()
            conv = [re.sub(r"\b25/", "bar/", re.sub(r"/0\b", "/off", part)) for part in (left, right)]
            line = f"{num}{conv[0].ljust(34)}{conv[1]}".rstrip()
        elif line.strip().startswith("Wins") and line.startswith(" " * 20):
            line = " " * 40 + line.strip()
        out.append(line)
    last = max(i for i, line in enumerate(out) if "Wins" in line)
    out[last] = out[last].rstrip() + " and the match"
    return "\r\n".join(out) + "\r\n"


@pytest.mark.parametrize("path", MATS[:6], ids=lambda p: p.name)
def test_mat_variants_of_other_programs_read_the_same(path: Path) -> None:
    text = path.read_text()
    variant = _other_layout(text)
    assert variant != text and ("bar/" in variant or "/off" in variant)
    assert parse_match(variant, "mat").games == read_match(path).games


@pytest.mark.gnubg
def test_make_matches_regenerates_the_reference_matches(tmp_path: Path) -> None:
    """The generator runs in gnubg (its analysis at 0-ply, quick), reproduces the committed first match
    exactly, and its analysis file has the statistics and marks the agreement figures are read from."""
    from bgbot.play.bots.gnubg import find_gnubg

    env = {**os.environ, "MAKE_MATCHES_ARGS": f"--n 1 --plies 0 --out {tmp_path}"}
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [find_gnubg(), "-t", "-q", "-r", "-p", "tests/data/analyse/make_matches.py"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gnubg-analysis.json", "m01.mat", "m01.sgf", "speed-7pt.mat"]

    def body(p: Path) -> list[str]:
        return [line for line in p.read_text().splitlines() if "EventDate" not in line]

    assert body(tmp_path / "m01.mat") == body(DATA / "m01.mat")
    assert body(tmp_path / "speed-7pt.mat") == body(DATA / "speed-7pt.mat")
    assert read_match(tmp_path / "m01.sgf").games == read_match(DATA / "m01.mat").games
    report = json.loads((tmp_path / "gnubg-analysis.json").read_text())
    assert report["analysis_plies_gnubg"] == 0
    m01 = report["matches"]["m01"]
    assert set(m01["statistics"]) == {"chequerplay", "luck", "cube", "overall"}
    assert len(m01["statistics"]["overall"]["Error rate mEMG (MWC)"]) == 2
    match = read_match(DATA / "m01.mat")
    positions = {(g.number, a.player, a.position.gnubg_id()) for g in match.games for a in g.actions}
    for m in m01["marked"]:
        assert m["skill"] in ("doubtful", "bad", "very bad")
        if m["kind"] in ("move", "cube", "double"):  # gnubg keeps a take or drop from another side's view
            assert (m["game"], m["player"], m["position"]) in positions
