"""The compiled network pass: each row's first layer updated from the previous row's, against the full pass.

:class:`~bgbot.eval.evaluate.NetEvaluator` answers a batch by taking the first row of each block in full and
every later row from its network's previous row, adding only the weight rows of the inputs that differ.  These
tests hold that pass to the row-by-row one (``row_by_row=True``, every first layer in full), which answers each
row alone bit for bit, check that a label task asked to run row by row does so whatever evaluator it is given,
that shards of either kind verify, and that a batch split across threads gets the answers of one thread.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from bgbot.engine.api import Engine
from bgbot.engine.search import BearoffEvaluator
from bgbot.errors import ConfigError
from bgbot.eval.evaluate import THREAD_MIN_ROWS, NetEvaluator, default_threads, row_by_row
from bgbot.eval.models import load_model
from bgbot.rules.classes import classify_rows
from bgbot.rules.movegen import successors_batch
from bgbot.rules.position import Position, PositionClass


@pytest.fixture(scope="module")
def shipped() -> NetEvaluator:
    return NetEvaluator(load_model().net)


def _game_boards(n: int, seed: int) -> np.ndarray:
    """Positions of random games (every class of position), each from its side on roll."""
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    board = Position.start().array()
    while len(out) < n:
        dice = rng.integers(1, 7, size=2)
        succ, _ = successors_batch(board[None, :], dice[None, :].astype(np.int64))
        board = succ[rng.integers(len(succ))]
        if (board > 0).sum() == 0 or (board < 0).sum() == 0:
            board = Position.start().array()
            continue
        out.append(board.copy())
    return np.stack(out).astype(np.int8)


def test_the_default_pass_is_the_row_by_row_pass_within_float32_rounding(shipped: NetEvaluator) -> None:
    boards = _game_boards(3000, seed=5)
    cls = classify_rows(boards)
    assert {PositionClass.CONTACT, PositionClass.RACE, PositionClass.CRASHED} <= set(cls.tolist())
    # the plays of many positions, as a search sends them: siblings next to each other
    rolls = np.random.default_rng(6).integers(1, 7, size=(400, 2)).astype(np.int64)
    succ, _ = successors_batch(boards[:400], rolls)
    for batch in (boards, succ, succ[::-1].copy()):
        fast = shipped(batch)
        alone = row_by_row(shipped)(batch)
        # a row's first layer carries the rounding of up to 63 updates before it: a few millionths at worst (its
        # size moves with the weights: up to 6.8e-6 on generation 11), far less on average; a wrong update is
        # off by tenths
        np.testing.assert_allclose(fast, alone, rtol=0, atol=1e-5)
        assert np.abs(fast - alone).mean() < 1e-7


def test_row_by_row_answers_are_each_rows_alone(shipped: NetEvaluator) -> None:
    boards = _game_boards(300, seed=7)
    exact = row_by_row(shipped)
    whole = exact(boards)
    one_by_one = np.concatenate([exact(boards[i : i + 1]) for i in range(len(boards))])
    np.testing.assert_array_equal(whole, one_by_one)
    shuffled = np.random.default_rng(1).permutation(len(boards))
    np.testing.assert_array_equal(exact(boards[shuffled]), whole[shuffled])
    # the default pass answers a row alone exactly as the row-by-row one (it has no previous row)
    np.testing.assert_array_equal(np.concatenate([shipped(boards[i : i + 1]) for i in range(20)]), whole[:20])


def test_row_by_row_copies_the_evaluator_and_reaches_through_a_wrapper(shipped: NetEvaluator) -> None:
    exact = row_by_row(shipped)
    assert exact is not shipped and exact.row_by_row and not shipped.row_by_row  # type: ignore[attr-defined]
    assert row_by_row(exact) is exact
    wrapped = BearoffEvaluator(shipped)
    twin = row_by_row(wrapped)
    assert isinstance(twin, BearoffEvaluator) and twin.base.row_by_row and not wrapped.base.row_by_row  # type: ignore[attr-defined]

    def plain(b: np.ndarray) -> np.ndarray:
        return np.zeros((len(b), 5), dtype=np.float32)

    assert row_by_row(plain) is plain  # nothing to switch


def test_a_row_by_row_label_task_is_so_whatever_evaluator_it_is_given(shipped: NetEvaluator) -> None:
    from bgbot.labels.generate import LabelSettings, _pack, label_task

    settings = dataclasses.asdict(LabelSettings(trials=36, truncate=2, crashed_truncate=2, batch=4, row_by_row=True))
    boards = _game_boards(40, seed=9)[10:14]
    payload = {"boards": _pack(boards), "settings": settings}
    fast = label_task(BearoffEvaluator(shipped), payload, 21)
    exact = label_task(BearoffEvaluator(row_by_row(shipped)), payload, 21)
    assert fast["probs"] == exact["probs"] and fast["se"] == exact["se"]


def test_a_batch_split_across_threads_gets_the_answers_of_one_thread(shipped: NetEvaluator) -> None:
    boards = _game_boards(2000, seed=12)
    rolls = np.random.default_rng(13).integers(1, 7, size=(300, 2)).astype(np.int64)
    succ, _ = successors_batch(boards[:300], rolls)
    for batch in (boards, succ, boards[:THREAD_MIN_ROWS * 2 + 5]):
        one = shipped(batch)
        for n in (2, 3, 4):
            many = NetEvaluator(shipped.net, threads=n)
            np.testing.assert_array_equal(many(batch), one)  # the cuts fall between row blocks
            np.testing.assert_array_equal(row_by_row(many)(batch), row_by_row(shipped)(batch))


def test_thread_counts_are_checked(monkeypatch: pytest.MonkeyPatch, shipped: NetEvaluator) -> None:
    for bad in (0, -1, 1.5, "2", True, 10**6):
        with pytest.raises(ConfigError, match="threads must be a whole number"):
            NetEvaluator(shipped.net, threads=bad)  # type: ignore[arg-type]
    monkeypatch.setenv("BGBOT_THREADS", "3")
    assert default_threads() == 3
    assert Engine.load().base.threads == 3  # type: ignore[attr-defined]
    assert Engine.load(threads=1).base.threads == 1  # type: ignore[attr-defined]
    for bad in ("many", "0", "-2", "1e3", "999"):
        monkeypatch.setenv("BGBOT_THREADS", bad)
        with pytest.raises(ConfigError, match=rf"BGBOT_THREADS must be a whole number.*'{bad}'"):
            default_threads()
    monkeypatch.delenv("BGBOT_THREADS")
    assert 1 <= default_threads() <= 4


def test_shards_record_how_the_network_ran_and_verify_remakes_either_kind(tmp_path: Path) -> None:
    """A shard of the default pass is verified task by task, one made row by row row by row; a shard listed
    before the setting existed reads as row by row (the way it was made)."""
    from bgbot.labels.bank import read_manifest
    from bgbot.labels.generate import LabelSettings, generate, settings_from_meta, verify

    for flag in (False, True):
        bank = tmp_path / f"bank-{flag}"
        st = LabelSettings(trials=36, truncate=7, crashed_truncate=7, batch=4, pool=8, row_by_row=flag)
        generate(bank, 5.0, settings=st, seed=4, max_shards=1, progress=False)
        entry = read_manifest(bank)["shards"][0]
        assert entry["settings"]["row_by_row"] is flag
        for first in (1, 3):
            assert verify(bank, bank / entry["file"], first) == (first, 0.0)
    old = dict(entry["settings"])
    del old["row_by_row"]
    assert settings_from_meta(old).row_by_row
    with pytest.raises(ConfigError, match="row_by_row must be True or False"):
        LabelSettings(row_by_row="yes")  # type: ignore[arg-type]


def test_a_search_generates_its_moves_across_threads_in_the_same_order() -> None:
    from bgbot.engine.search import SUCC_MIN_ROWS, _successors
    from bgbot.rules.dice import ROLLS

    boards = _game_boards(400, seed=14)
    rep = np.repeat(boards, len(ROLLS), axis=0)
    dice = np.tile(np.array(ROLLS, dtype=np.int64), (len(boards), 1))
    assert rep.shape[0] >= 4 * SUCC_MIN_ROWS
    want = successors_batch(rep, dice)
    for n in (1, 2, 3):
        got = _successors(BearoffEvaluator(NetEvaluator(load_model().net, threads=n)), rep, dice)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
