"""The fast single-position paths give the same answers as the plain ones they replace.

* the compiled forward pass (:func:`bgbot.eval.inference.forward_rows`) against numpy matrix products, for
  every encoding, activation and a two-hidden-layer net;
* the compiled evaluator (:class:`bgbot.eval.evaluate.NetEvaluator` on a numpy net) against encode +
  numpy forward + terminal scores + :func:`make_consistent`, finished games included;
* the engine's 1-ply and 2-ply choices on the 400 benchmark positions against the same engine on the numpy
  path, and against the choices recorded before the speed work (``tests/data/speed/choices.jsonl``);
* one-position :func:`successors` against :func:`successors_batch` (same results, same order).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, read_jsonl, tied_best

from bgbot.engine.api import Engine
from bgbot.errors import BgbotError
from bgbot.eval.encoding import ENCODING_VERSIONS, encode
from bgbot.eval.evaluate import (
    DEDUP_MIN_ROWS,
    NetEvaluator,
    evaluate_distinct,
    make_consistent,
    terminal_probs,
    unique_rows,
)
from bgbot.eval.inference import CLASS_NETS, ModelSpec, NumpyNet
from bgbot.eval.models import DEFAULT_MODEL, load_model
from bgbot.rules.classes import classify_rows
from bgbot.rules.movegen import successors, successors_batch
from bgbot.rules.position import Position


def _random_net(spec: ModelSpec, seed: int) -> NumpyNet:
    rng = np.random.default_rng(seed)
    width = ENCODING_VERSIONS[spec.encoding_version]
    layers = []
    for out in (*spec.hidden, 5):
        w = rng.normal(0.0, 1.0 / np.sqrt(width), size=(out, width)).astype(np.float32)
        layers.append((w, rng.normal(0.0, 0.3, size=out).astype(np.float32)))
        width = out
    return NumpyNet(spec, tuple(layers))


def _game_positions(n: int, seed: int) -> np.ndarray:
    """``n`` positions of random games, each from its side on roll, finished games included."""
    rng = np.random.default_rng(seed)
    boards = np.tile(Position.start().array(), (64, 1))
    out = []
    while sum(len(b) for b in out) < n:
        succ, parent = successors_batch(boards, rng.integers(1, 7, size=(len(boards), 2)))
        pick = np.array([rng.choice(np.flatnonzero(parent == g)) for g in range(len(boards))])
        boards = succ[pick]
        out.append(boards.copy())  # a finished game is kept once, then restarted
        over = (np.clip(boards, 0, None).sum(axis=1) == 0) | (np.clip(-boards, 0, None).sum(axis=1) == 0)
        boards[over] = Position.start().array()
    return np.concatenate(out)[:n]


class _NumpyPath:
    """A network answering through :meth:`NumpyNet.probs_numpy`: the evaluator's plain (uncompiled) path."""

    def __init__(self, net: NumpyNet) -> None:
        self.spec = net.spec
        self.probs = net.probs_numpy
        self.by_class = {name: _NumpyPath(sub) for name, sub in net.by_class.items()}


def _plain_probs(net: NumpyNet, boards: np.ndarray) -> np.ndarray:
    """Each row through its class's network (CLASS_NETS; the main one for the rest), in numpy."""
    cls = classify_rows(boards)
    out = np.empty((len(boards), 5), dtype=np.float32)
    main = np.ones(len(boards), dtype=bool)
    for name, one in net.by_class.items():
        rows = np.isin(cls, CLASS_NETS[name])
        main &= ~rows
        out[rows] = one.probs_numpy(encode(boards[rows], one.spec.encoding_version))
    out[main] = net.probs_numpy(encode(boards[main], net.spec.encoding_version))
    return out


@pytest.fixture(scope="module")
def boards() -> np.ndarray:
    b = _game_positions(3000, seed=5)
    assert terminal_probs(b)[0].sum() > 0  # some finished games among them
    return b


@pytest.mark.parametrize(
    "spec",
    [
        ModelSpec(1, (40,)),
        ModelSpec(2, (80,)),
        ModelSpec(3, (128,)),
        ModelSpec(3, (32, 16), "relu"),
        ModelSpec(2, (24, 12, 8), "tanh"),
    ],
)
def test_compiled_forward_pass_equals_numpy(spec: ModelSpec, boards: np.ndarray) -> None:
    net = _random_net(spec, seed=len(spec.hidden) + spec.encoding_version)
    x = encode(boards, spec.encoding_version)
    got = net.probs(x)
    assert got.dtype == np.float32 and got.shape == (len(boards), 5)
    np.testing.assert_allclose(got, net.probs_numpy(x), rtol=0, atol=2e-6)
    assert net.probs(x[:0]).shape == (0, 5)
    with pytest.raises(ValueError, match="shape"):
        net.probs(x[:, :-1])


def test_compiled_evaluator_equals_the_plain_path(boards: np.ndarray) -> None:
    net = load_model().net
    fast = NetEvaluator(net)(boards)
    done, exact = terminal_probs(boards)
    want = make_consistent(_plain_probs(net, boards))
    want[done] = exact[done]
    # the first layer carried from row to row adds float32 rounding: a few millionths over a block
    np.testing.assert_allclose(fast, want, rtol=0, atol=5e-6)
    np.testing.assert_array_equal(fast[done], exact[done])  # finished games exactly
    np.testing.assert_allclose(NetEvaluator(_NumpyPath(net))(boards), want, rtol=0, atol=0)
    # consistent: wbg <= wg <= w and lbg <= lg <= 1 - w, all in [0, 1]
    assert (fast >= 0).all() and (fast <= 1).all()
    assert (fast[:, 2] <= fast[:, 1]).all() and (fast[:, 1] <= fast[:, 0]).all()
    assert (fast[:, 4] <= fast[:, 3]).all() and (fast[:, 3] <= 1 - fast[:, 0] + 1e-7).all()
    assert NetEvaluator(net)(boards[:0]).shape == (0, 5)


def _benchmark_items() -> list[tuple[Position, tuple[int, int]]]:
    return [(Position.from_id(r["position"]), tuple(r["dice"])) for r in read_jsonl("benchmark/checker.jsonl")]


def test_the_engine_chooses_as_on_the_numpy_path() -> None:
    """All 400 benchmark positions at 1-ply (cubeless and cubeful), every 8th at 2-ply: same best play."""
    model = load_model()
    fast = Engine.load()
    plain = Engine(NetEvaluator(_NumpyPath(model.net)))
    for i, (pos, dice) in enumerate(_benchmark_items()):
        for ply, cubeless in [(1, True), (1, False)] + ([(2, True)] if i % 8 == 0 else []):
            a = fast.best_move(pos, dice, ply, cubeless=cubeless)
            b = plain.best_move(pos, dice, ply, cubeless=cubeless)
            assert a.best.result == b.best.result, (pos.gnubg_id(), dice, ply, cubeless)
            plain_eq = {c.result: c.equity for c in b.candidates}
            assert len(plain_eq) == len(a)
            np.testing.assert_allclose(
                [c.equity for c in a.candidates], [plain_eq[c.result] for c in a.candidates], rtol=0, atol=1e-5
            )


RECORD = DATA / "speed" / "choices.jsonl"


def test_the_shipped_models_recorded_choices_are_kept() -> None:
    """The choices recorded for the shipped model (before the speed work, again at each new model) are made again."""
    head, *rows = [json.loads(line) for line in RECORD.read_text().splitlines() if line.strip()]
    if hashlib.sha256(Path(DEFAULT_MODEL).read_bytes()).hexdigest() != head["model_sha256"]:
        pytest.fail("the record is of another model: a new shipped model needs its choices recorded "
                    "(python benchmarks/same_choices.py --record " + str(RECORD) + ")")
    engine = Engine.load(DEFAULT_MODEL)
    assert len(rows) == 400
    for i, r in enumerate(rows):  # the recorded play is the best, or tied with it (a rounding apart)
        pos, dice = Position.from_id(r["position"]), tuple(r["dice"])
        assert r["1"] in tied_best(engine.best_move(pos, dice, 1, cubeless=True)), r
        assert r["1c"] in tied_best(engine.best_move(pos, dice, 1)), r
        if i % 4 == 0:
            assert r["2"] in tied_best(engine.best_move(pos, dice, 2, cubeless=True)), r


def test_one_position_successors_equal_the_batched_rows() -> None:
    seen = {}
    for r in read_jsonl("movegen/oracle.jsonl"):
        seen.setdefault((r["position"], tuple(r["dice"])), Position.from_id(r["position"]))
    assert len(seen) > 1000
    for (_, dice), pos in seen.items():
        got = successors(pos, dice)
        succ, _ = successors_batch(pos.array()[None, :], dice, include_pass=False)
        want = [Position(row.tolist()) for row in succ]  # validated: the fast path makes valid positions
        assert got == want
        assert [hash(p) for p in got] == [hash(p) for p in want]
        assert all(type(x) is int for p in got[:1] for x in p.board)
    assert (
        successors(Position.start(), [3, 1])
        == successors(Position.start(), (3, 1))
        == successors(Position.start(), "31")
    )


@pytest.mark.parametrize("dice", [(0, 1), (7, 2), (3,), "3", (2.5, 1), None])
def test_one_position_successors_reject_bad_dice(dice: object) -> None:
    with pytest.raises(BgbotError):
        successors(Position.start(), dice)


def test_one_position_successors_reject_a_non_position() -> None:
    with pytest.raises(BgbotError, match="Position"):
        successors("4HPwATDgc/ABMA", (3, 1))  # type: ignore[arg-type]


def test_analysis_candidates_are_whole_frozen_dataclasses() -> None:
    """:func:`analyze` builds its candidates without the dataclass ``__init__``: they must be the same objects."""
    from dataclasses import FrozenInstanceError, fields, replace

    from bgbot.engine.search import Candidate

    analysis = Engine.load().best_move(Position.start(), (3, 1), 1, cubeless=True)
    names = {f.name for f in fields(Candidate)}
    for c in analysis.candidates:
        assert set(vars(c)) == names  # every field, nothing else (before the cached move text is read)
        rebuilt = Candidate(**{name: getattr(c, name) for name in names})
        assert rebuilt == c and repr(rebuilt) == repr(c) and c.mwc is None
        assert isinstance(c.result, Position) and all(type(x) is int for x in c.result.board)
        assert c.result == Position(c.result.board) and hash(c.result) == hash(Position(c.result.board))
        assert len(c.probs) == 5 and all(type(p) is float for p in c.probs)
        assert replace(c, equity=1.0).equity == 1.0
        with pytest.raises(FrozenInstanceError):
            c.equity = 2.0  # type: ignore[misc]
    assert analysis.best.move == "8/5 6/5" and analysis.best.diff == 0.0
    assert [c.diff for c in analysis.candidates] == sorted((c.diff for c in analysis.candidates), reverse=True)


def _ranked_the_plain_way(engine: Engine, pos: Position, dice: tuple[int, int], ply: int) -> list[tuple]:
    """What :func:`analyze` computed before its 1-ply path ran in Python floats: rank_successors, equity, lexsort."""
    from bgbot.engine.search import rank_successors
    from bgbot.eval.evaluate import equity

    succ, _ = successors_batch(pos.array()[None, :], dice)
    probs, plies = rank_successors(engine.evaluator, succ, np.zeros(len(succ), dtype=np.int64), ply, engine.filters)
    eq = equity(probs)
    order = np.lexsort((np.arange(eq.size), -eq, -plies))
    best = eq[order[0]]
    return [
        (Position(succ[i].tolist()), tuple(probs[i].tolist()), float(eq[i]), int(plies[i]), float(eq[i] - best))
        for i in order
    ]


def test_the_one_ply_analysis_is_the_plain_ranking_to_the_bit() -> None:
    """Every candidate of every benchmark position at 1-ply (every 16th at 2-ply): same order, same floats."""
    engine = Engine.load()
    for i, (pos, dice) in enumerate(_benchmark_items()):
        for ply in (1, 2) if i % 16 == 0 else (1,):
            cands = engine.best_move(pos, dice, ply, cubeless=True).candidates
            got = [(c.result, c.probs, c.equity, c.ply, c.diff) for c in cands]
            assert got == _ranked_the_plain_way(engine, pos, dice, ply), (pos.gnubg_id(), dice, ply)
            assert all(c.cubeless_equity == c.equity and type(c.equity) is float for c in cands)


def test_a_tie_keeps_the_generators_order() -> None:
    """Equal equities (a constant evaluator) rank in the move generator's order, as the lexsort did."""
    from bgbot.engine.search import analyze

    def flat(boards: np.ndarray) -> np.ndarray:
        return np.full((len(boards), 5), 0.25, dtype=np.float32)

    pos = Position.from_id("m+0MAAzO3QYDAA")
    succ, _ = successors_batch(pos.array()[None, :], (2, 1))
    a = analyze(flat, pos, (2, 1), 1)
    assert [c.result.board for c in a.candidates] == [tuple(r) for r in succ.tolist()]
    assert {c.diff for c in a.candidates} == {0.0}


def test_home_rows_is_all_home(boards: np.ndarray) -> None:
    from bgbot.eval.bearoff import home_rows
    from bgbot.rules.position import all_home

    rng = np.random.default_rng(12)
    home = np.zeros((200, 26), dtype=np.int8)
    home[:, 1:7] = rng.integers(0, 3, size=(200, 6))
    home[:, 19:25] = -rng.integers(0, 3, size=(200, 6))
    mixed = np.concatenate([boards, home, boards[:0]])
    mask, count = home_rows(mixed)
    np.testing.assert_array_equal(mask, all_home(mixed))
    assert count == int(all_home(mixed).sum()) >= 200
    assert home_rows(boards[:0])[1] == 0


def test_positions_of_rows_and_the_uncached_hash(boards: np.ndarray) -> None:
    from bgbot.rules.position import positions_of_rows

    got = positions_of_rows(boards[:500])
    assert got == [Position(row.tolist()) for row in boards[:500]]
    assert all(hash(p) == hash(p.board) == hash(Position(p.board)) for p in got)
    assert all(type(x) is int for x in got[0].board)
    assert positions_of_rows(boards[:0]) == []
    with pytest.raises(BgbotError, match="int8"):
        positions_of_rows(boards[:3].astype(np.int64))
    # the game is over exactly when one side has all 15 off
    for p in got:
        assert p.is_game_over() == (15 in p.off())


def test_one_position_successors_of_a_position_built_any_way() -> None:
    pos = Position.from_id("m+0MAAzO3QYDAA")
    for same in (Position(pos.board), Position.from_array(pos.array()), Position._trusted(pos.board)):
        assert successors(same, (2, 1)) == successors(pos, (2, 1))
        assert {same: 1}[pos] == 1


@pytest.mark.parametrize("keep, margin", [(1, 0.0), (3, 0.05), (8, 0.16), (30, 10.0)])
def test_the_one_parent_filter_selects_as_the_batched_one(keep: int, margin: float) -> None:
    """A move filter on one position's rows (Python floats) keeps what it keeps inside a batch (lexsort)."""
    from bgbot.engine.search import MoveFilter, _filter_rows

    rng = np.random.default_rng(keep)
    f = MoveFilter(keep, margin)
    for n in (1, 2, 5, 20, 60):
        eq = np.round(rng.normal(0.0, 0.1, size=n), 2)  # rounded: ties at the cut and at the top
        alive = rng.random(n) < 0.8
        alive[rng.integers(n)] = True
        alone = _filter_rows(eq, np.zeros(n, dtype=np.int64), alive, f)
        # the same rows as the first of two parents, where the batched path runs
        both = _filter_rows(
            np.concatenate([eq, eq]), np.repeat(np.array([0, 1], dtype=np.int64), n), np.concatenate([alive, alive]), f
        )
        np.testing.assert_array_equal(alone, both[both < n])
        assert alone.dtype == np.int64 and len(alone) <= keep


def test_the_evaluator_answers_home_boards_from_the_database_as_before(boards: np.ndarray) -> None:
    """:class:`BearoffEvaluator` without its second range check: the rows and figures of the checked path."""
    from bgbot.engine.search import BearoffEvaluator
    from bgbot.eval.bearoff import get_bearoff_db
    from bgbot.rules.position import all_home

    db = get_bearoff_db()
    assert db.holds_every_home_board()
    rng = np.random.default_rng(3)
    home = np.zeros((300, 26), dtype=np.int8)
    home[:, 1:7] = rng.multinomial(15, [1 / 7] * 7, size=300)[:, :6]  # up to 15 a side, some with all 15
    home[:, 19:25] = -rng.multinomial(15, [1 / 7] * 7, size=300)[:, :6]
    home[::7, 1:7] = rng.multinomial(15, [1 / 6] * 6, size=len(home[::7]))  # no checker off yet: gammons
    mixed = np.concatenate([boards[:500], home])
    base = NetEvaluator(load_model().net)
    got = BearoffEvaluator(base, db)(mixed)
    done, exact = terminal_probs(mixed)
    bear = all_home(mixed) & ~done & db.is_bearoff(mixed)
    assert bear.sum() > 250
    np.testing.assert_array_equal(got[bear], db.evaluate(mixed[bear]))
    np.testing.assert_array_equal(db.evaluate_home(mixed[bear]), db.evaluate(mixed[bear]))
    np.testing.assert_array_equal(got[done], exact[done])
    rest = ~bear & ~done
    np.testing.assert_array_equal(got[rest], base(mixed[rest]))


def test_the_analysis_hands_its_results_in_the_candidates_order() -> None:
    """``best_move`` values the cubeful plays from these rows: they must line up with the candidates."""
    from bgbot.engine.search import _analyze

    engine = Engine.load()
    for pos, dice in _benchmark_items()[::40]:
        for ply in (1, 2):
            a, boards, _ = _analyze(engine.evaluator, pos, dice, ply, engine.filters, None)
            assert boards.dtype == np.int8 and boards.shape == (len(a), 26)
            assert [tuple(row) for row in boards.tolist()] == [c.result.board for c in a.candidates]


def test_unique_rows_finds_every_distinct_board_in_order() -> None:
    rows = read_jsonl("benchmark/checker.jsonl")[:60]
    boards = np.stack([Position.from_id(r["position"]).array() for r in rows])
    dice = np.array([r["dice"] for r in rows])
    succ, _ = successors_batch(np.repeat(boards, 3, axis=0), np.repeat(dice, 3, axis=0))  # each row thrice
    rng = np.random.default_rng(5)
    succ = succ[rng.permutation(succ.shape[0])]
    first, inverse = unique_rows(succ)
    np.testing.assert_array_equal(succ[first][inverse], succ)
    seen: dict[bytes, int] = {}
    for i, row in enumerate(succ):
        seen.setdefault(row.tobytes(), i)
    assert first.tolist() == sorted(seen.values())  # each distinct row once, at its first occurrence
    assert first.shape[0] * 3 == succ.shape[0]
    assert unique_rows(succ[:0])[0].shape == (0,)


def test_evaluate_distinct_answers_every_row_and_evaluates_each_board_once() -> None:
    engine = Engine.load()
    sizes: list[int] = []

    def counting(b: np.ndarray) -> np.ndarray:
        sizes.append(b.shape[0])
        return engine.evaluator(b)

    rows = read_jsonl("benchmark/checker.jsonl")[:40]
    boards = np.stack([Position.from_id(r["position"]).array() for r in rows])
    succ, _ = successors_batch(np.repeat(boards, 8, axis=0), np.tile(np.array([[3, 1]]), (320, 1)))
    assert succ.shape[0] >= DEDUP_MIN_ROWS
    got = evaluate_distinct(counting, succ)
    distinct = engine.evaluator(succ[unique_rows(succ)[0]])
    np.testing.assert_array_equal(got, distinct[unique_rows(succ)[1]])  # each row the answer of its distinct row
    # against the whole batch: the default pass's last float32 place depends on a row's neighbours
    np.testing.assert_allclose(got, engine.evaluator(succ), rtol=0, atol=5e-6)
    assert sizes == [succ.shape[0] // 8]  # one call, on the distinct rows only
    sizes.clear()
    small = succ[: DEDUP_MIN_ROWS - 1]
    np.testing.assert_array_equal(evaluate_distinct(counting, small), engine.evaluator(small))
    assert sizes == [small.shape[0]]  # a small batch goes through as it is
