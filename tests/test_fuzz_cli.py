"""Fuzz the command line: every command's options, good and bad, run in process through ``bgbot.cli.main.main``.

Whatever the arguments, the command exits 0 or 2 (never a traceback, never exit 1),
and an error is one line on stderr, bounded in length even when the input is
thousands of characters long.  Valid combinations stay cheap: tiny game counts,
1-ply, tiny training configs, outputs under ``tmp_path``; commands that would
block (a server listening, a terminal game) get options that end them at once
(``--stdio`` with empty input, invalid ports) or an empty stdin.

Seeded (``derandomize``) and bounded (``max_examples``) so that the whole file runs
in well under a minute on a loaded 2-core machine.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import sys
from pathlib import Path

import pytest
from conftest import fuzz, make_tiny_checkpoint
from hypothesis import given
from hypothesis import strategies as st

from bgbot.cli.main import main
from bgbot.formats.ids import format_xgid
from bgbot.play.bots.fibsline import engine_board
from bgbot.rules.matchstate import MatchState
from bgbot.rules.position import Position

REPO = Path(__file__).resolve().parents[1]
MAX_ERROR_LINE = 600  # characters: an error quotes its input as a bounded excerpt
LONG = "A" * 5000




# ---- the values options draw from: some good, most bad ------------------------------

START = Position.start()
POSITIONS = [
    "4HPwATDgc/ABMA",
    "4HPwATDgc/ABMA:cAkAAAAAAAAA",
    format_xgid(START, MatchState(dice=(3, 1))),
    format_xgid(START, MatchState(dice=(3, 1))).removeprefix("XGID="),
    engine_board(START, MatchState(dice=(3, 1)), dice=(3, 1)),
    "",
    "x",
    "AAAAAAAAAAAAAA",
    "4HPwATDgc/ABM",
    "²",
    LONG,
    "XGID=" + "-" * 26 + ":0:0:1:00:0:0:0:0:10",
    "XGID=zzz",
    "board:" + "1:" * 60,
    "4HPwATDgc/ABMA:" + "B" * 200,
]
DICE = ["31", "3-1", "66", "00", "7", "²¹", "", "3 1", "x" * 300, "12", "0"]
INTS = ["0", "1", "2", "-1", "²", "٢", "99999999999999999999", "x", "", " 2", "1e3", LONG]
PLY = ["1", "0", "4", "²", "-1", "x", "1.5", LONG]
CUBE = ["1", "2", "64", "128", "3", "0", "-2", "x"]
OWNER = ["me", "opp", "center", "nobody", "", LONG]
SCORE = ["0-0", "2-4", "4-2", "9-9", "x", "-1-2", "2", LONG]
SPECS = [
    "random",
    "pubeval",
    "random:double=0.5,take=0.5",
    "random:seed=3",
    "bgbot:ply=9",
    "random:double=nan",
    "random:seed=-1",
    "gnubg:ply=7",
    "cmd:timeout=0:x",
    "nosuch",
    "",
    "tcp:localhost:0",
    "random:" + LONG,
]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("fuzz-cli")
    (d / "junk.npz").write_bytes(b"not a zip at all")
    (d / "junk.pt").write_bytes(b"PK\x03\x04 truncated")
    (d / "regular").write_text("a file, so nothing can be written under it\n")
    (d / "bad.toml").write_text("hidden = [\n")
    (d / "bad.mat").write_text(" 1 point match\n\n Game 1\n nonsense : here\n  1) 99: 13/7\n")
    tiny = make_tiny_checkpoint(d / "tiny.pt", seed=3)
    return {
        "dir": str(d),
        "regular": str(d / "regular"),
        "under_file": str(d / "regular" / "x.json"),
        "junk_npz": str(d / "junk.npz"),
        "junk_pt": str(d / "junk.pt"),
        "tiny_pt": str(tiny),
        "missing": str(d / "missing.npz"),
        "bad_toml": str(d / "bad.toml"),
        "bad_mat": str(d / "bad.mat"),
        "smoke": str(REPO / "configs" / "smoke.toml"),
    }


def checkpoints(f: dict[str, str]) -> list[str]:
    return [f["tiny_pt"], f["junk_npz"], f["junk_pt"], f["missing"], f["dir"], ""]


_fresh = itertools.count()


def outputs(f: dict[str, str], suffix: str) -> list[str]:
    """Output paths: a fresh one under the test's folder, one under a regular file, an existing folder."""
    return [f"{f['dir']}/out{next(_fresh)}{suffix}", f["under_file"], f["dir"], f["regular"] + "/deep/er" + suffix]


def options(draw: st.DrawFn, table: list[tuple[str, list[str] | None]], most: int = 4) -> list[str]:
    """Some of the ``(option, values)`` pairs of ``table`` (None: a flag), each with a drawn value."""
    chosen = draw(st.lists(st.sampled_from(table), max_size=most, unique_by=lambda t: t[0]))
    argv: list[str] = []
    for name, values in chosen:
        argv.append(name)
        if values is not None:
            argv.append(draw(st.sampled_from(values)))
    return argv


# ---- running a command ------------------------------------------------------------


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """``main(argv)`` with empty stdin; (exit status, stdout, stderr).  argparse's exits count as statuses."""
    out, err = io.StringIO(), io.StringIO()
    stdin = sys.stdin
    sys.stdin = io.StringIO("")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse: --help (0) and usage errors (2)
                code = exc.code if isinstance(exc.code, int) else 2
    finally:
        sys.stdin = stdin
    return code, out.getvalue(), err.getvalue()


def check(argv: list[str]) -> None:
    """The contract: exit 0 or 2; a 2 comes with exactly one error line, the last one on stderr, bounded."""
    code, _out, err = run_cli(argv)
    assert code in (0, 2), (code, argv, err[-2000:])
    if code == 2:
        lines = [line for line in err.replace("\r", "\n").splitlines() if line.strip()]
        errors = [line for line in lines if "error:" in line]
        assert len(errors) == 1 and lines[-1] == errors[0], (argv, err[-2000:])
        assert errors[0].startswith("bgbot"), errors[0]
        assert len(errors[0]) <= MAX_ERROR_LINE, (argv, errors[0][:200], len(errors[0]))


# ---- one test per family of commands ---------------------------------------------------


@st.composite
def position_commands(draw: st.DrawFn, f: dict[str, str]) -> list[str]:
    cmd = draw(st.sampled_from(["show", "moves", "move", "eval", "cube"]))
    argv = [cmd, draw(st.sampled_from(POSITIONS))]
    if cmd == "moves" or (cmd == "move" and draw(st.booleans())):
        argv.append(draw(st.sampled_from(DICE)))
    if cmd in ("move", "eval", "cube"):
        # 2-ply is cheap for one position before the roll; a 2-ply move search is not, so moves stay at 1
        plies = [*PLY, "2"] if cmd != "move" else PLY
        table: list[tuple[str, list[str] | None]] = [
            ("--ply", plies),
            ("--checkpoint", checkpoints(f)),
            ("--json", None),
        ]
        if cmd != "eval":
            table += [
                ("--cube", CUBE),
                ("--owner", OWNER),
                ("--match", INTS),
                ("--score", SCORE),
                ("--crawford", None),
                ("--jacoby", None),
            ]
        if cmd == "move":
            table.append(("--cubeless", None))
        argv += options(draw, table)
    return argv


@fuzz(60)
@given(data=st.data())
def test_position_commands(files: dict[str, str], data: st.DataObject) -> None:
    check(data.draw(position_commands(files)))


@st.composite
def game_commands(draw: st.DrawFn, f: dict[str, str]) -> list[str]:
    cmd = draw(st.sampled_from(["pit", "chouette", "yardstick"]))
    games = ["1", "2", "0", "-1", "x", "²", "3"]
    if cmd == "pit":
        argv = [
            "pit",
            draw(st.sampled_from(SPECS)),
            draw(st.sampled_from(SPECS)),
            "--quiet",
            "--games",
            draw(st.sampled_from(games)),
        ]
        argv += options(
            draw,
            [
                ("--match", ["0", "1", "2", "-1", "x", "²"]),
                ("--no-cube", None),
                ("--jacoby", None),
                ("--auto-doubles", ["0", "1", "-1", "x", "99999999999999999999"]),
                ("--seed", INTS),
                ("--workers", ["1", "0", "-2", "x"]),
                ("--out", outputs(f, ".json")),
                ("--save-games", outputs(f, "")),
                ("--record-format", ["mat", "sgf", "xml", ""]),
            ],
        )
    elif cmd == "chouette":
        argv = [
            "chouette",
            *draw(st.lists(st.sampled_from(SPECS), min_size=0, max_size=4)),
            "--games",
            draw(st.sampled_from(games)),
        ]
        argv += options(draw, [("--seed", INTS), ("--jacoby", None), ("--json", None)])
    else:
        argv = ["yardstick", "--games", draw(st.sampled_from(["2", "4", "3", "0", "-2", "x"]))]
        argv += options(
            draw,
            [
                ("--checkpoint", checkpoints(f)),
                ("--opponent", ["random", "pubeval", "gnubg", ""]),
                ("--seed", INTS),
                ("--out", outputs(f, ".json")),
            ],
        )
    return argv


@fuzz(40)
@given(data=st.data())
def test_game_commands(files: dict[str, str], data: st.DataObject) -> None:
    check(data.draw(game_commands(files)))


@st.composite
def train_commands(draw: st.DrawFn, f: dict[str, str]) -> list[str]:
    # a valid run is a few games of a 2-game-wide, 4-unit network without evaluations
    tiny = [
        "--set",
        "parallel_games=2",
        "--set",
        "hidden=4",
        "--set",
        "eval_every=0",
        "--set",
        "min_batch=8",
        "--set",
        "checkpoint_every=1",
    ]
    sets = [
        "hidden=100000000",
        "max_turns=10000000000",
        "parallel_games=1000000000000",
        "seed=-5",
        "lr=inf",
        "lam=nan",
        "hidden=0",
        "nosuch=1",
        "games",
        "=3",
        "encoding_version=9",
        "activation=x",
        "hidden=4097",
        "explore=2",
        "seed=²",
        "games=" + LONG,
    ]
    argv = ["train", "--quiet", "--out", draw(st.sampled_from(outputs(f, "")))]
    argv += options(
        draw,
        [
            ("--config", [f["smoke"], f["smoke"], f["dir"], f["missing"], f["bad_toml"], f["regular"]]),
            ("--games", ["2", "2", "0", "-1", "x", "²"]),
            ("--resume", [f["tiny_pt"], f["junk_pt"], f["missing"], f["dir"]]),
            ("--force", None),
        ],
    )
    argv += tiny  # whatever the config file says: a valid run stays tiny
    for item in draw(st.lists(st.sampled_from(sets), max_size=2)):
        argv += ["--set", item]
    if "--games" not in argv:
        argv += ["--games", "2"]  # never the config's full count
    return argv


@fuzz(15)
@given(data=st.data())
def test_train(files: dict[str, str], data: st.DataObject) -> None:
    check(data.draw(train_commands(files)))


@st.composite
def other_commands(draw: st.DrawFn, f: dict[str, str]) -> list[str]:
    cmd = draw(
        st.sampled_from(
            ["build-bearoff", "serve-external", "play", "ubgi", "rollout", "analyse", "serve", "nosuch", "--version"]
        )
    )
    if cmd == "build-bearoff":  # only paths that fail: a real build takes minutes
        return [cmd, draw(st.sampled_from([f["under_file"], f["dir"], f["regular"] + "/a/b.npz"]))]
    if cmd == "serve-external":
        # --stdio with empty stdin answers nothing and returns; TCP only with a port or host that cannot listen
        tcp = [("--port", ["70000", "-1", "x", "²", LONG]), ("--host", ["", " "])]
        argv = [cmd, *(["--stdio"] if draw(st.booleans()) else options(draw, tcp, most=2) or ["--port", "x"])]
        return argv + options(
            draw,
            [
                ("--bot", SPECS),
                ("--ply", PLY),
                ("--checkpoint", checkpoints(f)),
                ("--jacoby", None),
                ("--once", None),
            ],
        )
    if cmd == "play":  # empty stdin: the session ends at once
        return [
            cmd,
            "--no-save",
            *options(
                draw,
                [
                    ("--ply", PLY),
                    ("--match", INTS),
                    ("--checkpoint", checkpoints(f)),
                    ("--seed", INTS),
                    ("--no-cube", None),
                    ("--jacoby", None),
                ],
            ),
        ]
    if cmd == "ubgi":  # empty stdin: no command, no answer
        return [cmd, *options(draw, [("--ply", PLY), ("--cube-ply", PLY), ("--checkpoint", checkpoints(f))])]
    if cmd == "rollout":
        argv = [
            cmd,
            draw(st.sampled_from(POSITIONS)),
            "--trials",
            draw(st.sampled_from(["2", "0", "-1", "x"])),
            "--truncate",
            "2",
            "--top",
            "1",
            "--workers",
            "1",
        ]
        if draw(st.booleans()):
            argv.append(draw(st.sampled_from(DICE)))
        return argv + options(
            draw,
            [
                ("--ply", PLY),
                ("--seed", INTS),
                ("--stratify", ["0", "36", "5"]),
                ("--cubeless", None),
                ("--no-luck", None),
                ("--checkpoint", checkpoints(f)),
                ("--resume", outputs(f, "")),
                ("--executor", ["local", "ray://nowhere:1", "nosuch"]),
                ("--se-stop", ["0.1", "-1", "nan", "x"]),
            ],
        )
    if cmd == "analyse":
        return [
            cmd,
            draw(st.sampled_from([f["bad_mat"], f["missing"], f["dir"], f["junk_npz"]])),
            "--quiet",
            *options(
                draw,
                [
                    ("--ply", ["1", *PLY]),
                    ("--html", outputs(f, ".html")),
                    ("--json", None),
                    ("--format", ["mat", "sgf", "x"]),
                    ("--mistakes", INTS),
                ],
            ),
        ]
    if cmd == "serve":  # always an option it refuses before listening
        return [
            cmd,
            "--port",
            draw(st.sampled_from(["x", "²", LONG])),
            *options(draw, [("--ply", PLY), ("--workers", INTS), ("--host", ["", "localhost"])]),
        ]
    return [cmd]


@fuzz(40)
@given(data=st.data())
def test_other_commands(files: dict[str, str], data: st.DataObject) -> None:
    check(data.draw(other_commands(files)))


@pytest.mark.parametrize(
    "argv",
    [
        ["pit", "bgbot:ply=9", "random", "--games", "2"],
        ["pit", "random", "random:double=nan", "--games", "2"],
        ["chouette", "random", "random", "random:seed=-1"],
        ["yardstick", "--seed", "-1", "--games", "2"],
        ["pit", "random", "random", "--seed", "-1"],
        ["show", LONG],
        ["move", "4HPwATDgc/ABMA", "x" * 10_000],
    ],
)
def test_errors_quote_a_bounded_excerpt_of_the_input(argv: list[str]) -> None:
    code, out, err = run_cli(argv)
    assert code == 2 and "A points per game" not in out  # at once: no report, no game
    line = err.strip().splitlines()[-1]
    assert line.startswith("bgbot") and "error:" in line and len(line) <= MAX_ERROR_LINE
    bad = next(a for a in argv if any(s in a for s in ("=9", "nan", "-1", "AAAA", "xxxx")))
    assert bad[:20] in line  # the offending text is quoted
