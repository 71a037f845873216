"""The kernels give the same answers run as plain Python (``BGBOT_JIT=0``) as compiled by numba.

The interpreted side runs in a subprocess (the mode is fixed per process when the
kernel modules are imported); this test process compiles.  Compared on the 400
benchmark positions and the positions one roll later: the move generator's
results and their order, the encodings with the hand-made features (bit for
bit), finished-game scores, the network's probabilities (float32 rounding) and
the engine's 1-ply choices against the record of ``tests/test_speed_paths.py``.
The command line answers a 1-ply question without importing numba.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, tied_best

from bgbot.eval.encoding import ENCODING_VERSIONS, encode
from bgbot.eval.evaluate import NetEvaluator, terminal_probs
from bgbot.eval.models import DEFAULT_MODEL, load_model
from bgbot.rules.movegen import successors, successors_batch
from bgbot.rules.position import Position

RECORD = DATA / "speed" / "choices.jsonl"
ROOT = Path(__file__).resolve().parents[1]

# Run with BGBOT_JIT=0 and every warning an error (an int8 overflow in an interpreted kernel warns).
_INTERPRETED = r"""
import json, sys, warnings
warnings.simplefilter("error")
import numpy as np
from bgbot import jit
assert not jit.COMPILED
from bgbot.engine.api import Engine
from bgbot.eval.encoding import ENCODING_VERSIONS, encode
from bgbot.eval.evaluate import NetEvaluator, terminal_probs
from bgbot.eval.models import DEFAULT_MODEL, load_model
from bgbot.rules.movegen import successors, successors_batch
from bgbot.rules.position import Position
assert "numba" not in sys.modules
rows = [json.loads(line) for line in open(sys.argv[1])][1:]
boards = np.array([Position.from_id(r["position"]).board for r in rows], dtype=np.int8)
dice = np.array([r["dice"] for r in rows], dtype=np.int64)
succ, parent = successors_batch(boards, dice)
one = [[p.board for p in successors(Position.from_id(r["position"]), tuple(r["dice"]))] for r in rows[:100]]
both = np.concatenate([boards, succ])
done, exact = terminal_probs(both)
engine = Engine.load()
choices = [engine.best_move(Position.from_id(r["position"]), tuple(r["dice"]), 1, cubeless=True).best.result.gnubg_id()
           for r in rows]
probs = NetEvaluator(load_model(DEFAULT_MODEL).net)(both)
np.savez(sys.argv[2], succ=succ, parent=parent, x=encode(both, max(ENCODING_VERSIONS)), done=done, exact=exact,
         probs=probs, choices=np.array(choices), one=np.array([b for r in one for b in r], dtype=np.int8),
         one_n=np.array([len(r) for r in one]))
assert "numba" not in sys.modules
"""


@pytest.fixture(scope="module")
def interpreted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, np.ndarray]:
    out = tmp_path_factory.mktemp("jit") / "interpreted.npz"
    env = {**os.environ, "BGBOT_JIT": "0"}
    proc = subprocess.run(
        [sys.executable, "-c", _INTERPRETED, str(RECORD), str(out)],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    with np.load(out, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def _rows() -> list[dict]:
    return [json.loads(line) for line in RECORD.read_text().splitlines() if line.strip()][1:]


def test_move_generation_is_the_same_interpreted(interpreted: dict[str, np.ndarray]) -> None:
    rows = _rows()
    boards = np.array([Position.from_id(r["position"]).board for r in rows], dtype=np.int8)
    succ, parent = successors_batch(boards, np.array([r["dice"] for r in rows], dtype=np.int64))
    assert len(succ) > 4000
    np.testing.assert_array_equal(interpreted["succ"], succ)  # the same results in the same order
    np.testing.assert_array_equal(interpreted["parent"], parent)
    one = [p.board for r in rows[:100] for p in successors(Position.from_id(r["position"]), tuple(r["dice"]))]
    np.testing.assert_array_equal(interpreted["one"], np.array(one, dtype=np.int8))


def test_encodings_and_scores_are_the_same_interpreted(interpreted: dict[str, np.ndarray]) -> None:
    both = np.concatenate([
        np.array([Position.from_id(r["position"]).board for r in _rows()], dtype=np.int8), interpreted["succ"]
    ])
    x = encode(both, max(ENCODING_VERSIONS))
    assert x.shape[1] > 250  # the hand-made features are in it
    np.testing.assert_array_equal(interpreted["x"], x)  # bit for bit
    done, exact = terminal_probs(both)
    np.testing.assert_array_equal(interpreted["done"], done)
    np.testing.assert_array_equal(interpreted["exact"], exact)
    net = load_model(DEFAULT_MODEL).net
    np.testing.assert_allclose(interpreted["probs"], NetEvaluator(net, row_by_row=True)(both), rtol=0, atol=2e-6)
    # the default pass updates each row's first layer from the previous row's: a little more rounding
    np.testing.assert_allclose(interpreted["probs"], NetEvaluator(net)(both), rtol=0, atol=5e-6)


def test_one_ply_choices_are_the_recorded_ones_interpreted(interpreted: dict[str, np.ndarray]) -> None:
    head = json.loads(RECORD.read_text().splitlines()[0])
    if hashlib.sha256(Path(DEFAULT_MODEL).read_bytes()).hexdigest() != head["model_sha256"]:
        pytest.fail("the record is of another model: a new shipped model needs its choices recorded "
                    "(python benchmarks/same_choices.py --record " + str(RECORD) + ")")
    rows = _rows()
    differ = [(r, str(c)) for r, c in zip(rows, interpreted["choices"], strict=True) if str(c) != r["1"]]
    if differ:  # only a tie (equities a rounding apart) may be broken the other way, and only rarely
        from bgbot.engine.api import Engine

        engine = Engine.load(DEFAULT_MODEL)
        for r, chosen in differ:
            tied = tied_best(engine.best_move(Position.from_id(r["position"]), tuple(r["dice"]), 1, cubeless=True))
            assert {chosen, r["1"]} <= tied, (r, chosen)
    assert len(differ) <= 2


def _cli(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != "BGBOT_JIT"}
    return subprocess.run(
        [sys.executable, "-c", code], env={**clean, **env}, cwd=ROOT, capture_output=True, text=True, timeout=300
    )


_MAIN = "import sys; from bgbot.cli.main import main; rc = main({argv!r}); print('numba' in sys.modules); sys.exit(rc)"


def test_the_cli_answers_a_1ply_question_without_numba() -> None:
    for argv in (["move", "4HPwATDgc/ABMA", "31"], ["cube", "4HPwATDgc/ABMA"], ["eval", "4HPwATDgc/ABMA"]):
        proc = _cli(_MAIN.format(argv=argv))
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines()[-1] == "False", argv
    moved = _cli(_MAIN.format(argv=["move", "4HPwATDgc/ABMA", "31"]))
    assert "8/5 6/5" in moved.stdout.splitlines()[4]  # the best 31 of the opening
    # 2-ply before the compiled kernels are cached (an empty numba cache: a fresh install): plain Python too,
    # the same choice as compiled (a second or two instead of 20-30 s of compiling; tests/test_jit_cache.py)
    with tempfile.TemporaryDirectory() as empty:
        proc = _cli(_MAIN.format(argv=["move", "4HPwATDgc/ABMA", "31", "--ply", "2"]), NUMBA_CACHE_DIR=empty)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "False"
    assert "8/5 6/5" in proc.stdout.splitlines()[4]
    # BGBOT_JIT=1 compiles even a 1-ply question, and gives the same table
    forced = _cli(_MAIN.format(argv=["move", "4HPwATDgc/ABMA", "31"]), BGBOT_JIT="1")
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.splitlines()[-1] == "True"
    assert forced.stdout.splitlines()[:-1] == moved.stdout.splitlines()[:-1]


def test_a_bad_bgbot_jit_value_is_one_line_quoting_it() -> None:
    proc = _cli(_MAIN.format(argv=["move", "4HPwATDgc/ABMA", "31"]), BGBOT_JIT="maybe")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "bgbot: error: BGBOT_JIT must be 0/off (plain Python) or 1/on (numba), got 'maybe'"


def test_the_mode_is_fixed_once_a_kernel_module_is_loaded() -> None:
    from bgbot import jit

    assert jit.COMPILED  # this process imported the kernels compiled (above)
    assert jit.interpret() is False and jit.COMPILED  # too late to switch: nothing changes
