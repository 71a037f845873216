"""Class networks (gnubg's class nets): one classify, a network per class, files that carry them all."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from bgbot.engine.executor import ModelBlob, net_hash
from bgbot.errors import CheckpointError, ConfigError
from bgbot.eval.evaluate import NetEvaluator
from bgbot.eval.inference import ModelSpec, NumpyNet, read_npz, save_npz
from bgbot.eval.models import load_model
from bgbot.eval.nets import ValueNet, load_checkpoint, save_checkpoint, to_numpy
from bgbot.rules.classes import classify_rows
from bgbot.rules.movegen import successors_batch
from bgbot.rules.position import Position, PositionClass, classify, flip

ROOT = Path(__file__).resolve().parents[1]


def _games(n: int, seed: int = 5) -> np.ndarray:
    """``n`` positions from random games played to the end: every class, finished games included."""
    rng = np.random.default_rng(seed)
    start = Position.start().array()
    boards = np.tile(start, (16, 1))
    out = []
    while sum(len(b) for b in out) < n:
        succ, parent = successors_batch(boards, rng.integers(1, 7, size=(len(boards), 2)))
        boards = succ[[rng.choice(np.flatnonzero(parent == g)) for g in range(len(boards))]]
        out.append(boards.copy())
        over = (np.clip(boards, 0, None).sum(axis=1) == 0) | (np.clip(-boards, 0, None).sum(axis=1) == 0)
        boards[over] = start
    return np.concatenate(out)[:n]


def _reference_class(b: np.ndarray) -> int:
    """gnubg's rule written out plainly, one board (side on roll's view)."""
    mine = [max(int(v), 0) for v in b]
    theirs = [max(-int(v), 0) for v in b[::-1]]  # the opponent's checkers in its own numbering
    if sum(mine) == 0 or sum(theirs) == 0:
        return PositionClass.OVER
    my_back = max(i for i in range(26) if mine[i])
    their_back_mine = min(i for i in range(26) if b[i] < 0)
    if my_back <= their_back_mine:
        home = my_back <= 6 and their_back_mine >= 19
        return PositionClass.BEAROFF if home else PositionClass.RACE
    for side in (mine, theirs):
        buried = max(side[1] - 2, 0) + max(side[2] - 2, 0)
        if sum(side) <= 6 or sum(side) - buried <= 6:
            return PositionClass.CRASHED
    return PositionClass.CONTACT


def test_classify_rows_is_gnubgs_rule_on_every_class() -> None:
    boards = _games(6000)
    boards = np.concatenate([boards, flip(boards)])
    got = classify_rows(boards)
    want = np.array([_reference_class(b) for b in boards])
    assert (got == want).all()
    assert set(np.unique(got)) == {int(c) for c in PositionClass}, "the sample holds every class"
    # the class is the same from either side's view
    assert (classify_rows(flip(boards)) == got).all()


def _board(mine: dict[int, int], theirs: dict[int, int]) -> Position:
    """A position from the side on roll's view: its checkers by point, the opponent's by the same numbering."""
    board = [0] * 26
    for point, n in mine.items():
        board[point] = n
    for point, n in theirs.items():
        board[point] = -n
    return Position(tuple(board))


def test_the_kernels_codes_are_the_position_classes() -> None:
    from bgbot.rules import classes

    codes = {name: getattr(classes, name) for name in ("OVER", "BEAROFF", "RACE", "CRASHED", "CONTACT")}
    assert codes == {c.name: int(c) for c in PositionClass}


def test_classify_hand_built_positions() -> None:
    assert classify(Position.start()) is PositionClass.CONTACT
    opponent = {20: 8, 24: 7}  # all 15 in its home board (its 5- and 1-points)
    # my rearmost checker (12) is already past the opponent's rearmost (20): no contact, not both home
    assert classify(_board({12: 1, 1: 3, 2: 3}, opponent)) is PositionClass.RACE
    # a checker of mine on 22, behind the opponent's on 20: contact. 7 on the board, but 2 of them are
    # stacked beyond two on my 1- and 2-points, so 5 still play: crashed by the buried-checker rule
    assert classify(_board({22: 1, 1: 3, 2: 3}, opponent)) is PositionClass.CRASHED
    # 8 on the board, none buried: not crashed
    assert classify(_board({22: 1, 1: 2, 2: 2, 5: 2, 6: 1}, opponent)) is PositionClass.CONTACT
    # 6 on the board: crashed by count
    assert classify(_board({22: 1, 5: 3, 6: 2}, opponent)) is PositionClass.CRASHED
    # both sides home: the bear-off database's class
    assert classify(_board({3: 2}, {21: 2})) is PositionClass.BEAROFF
    # a side with nothing left: over
    assert classify(_board({}, {21: 2})) is PositionClass.OVER


def _random_net(seed: int, hidden: int = 16, version: int = 3) -> NumpyNet:
    torch.manual_seed(seed)
    net = ValueNet(ModelSpec(version, (hidden,), "sigmoid"))
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(3.0)  # distinct outputs per network
    return to_numpy(net)


@pytest.fixture(scope="module")
def three_nets() -> NumpyNet:
    main = _random_net(1)
    return NumpyNet(main.spec, main.layers, {"race": _random_net(2, 12), "crashed": _random_net(3, 20)})


def test_each_row_is_answered_by_its_class_network(three_nets: NumpyNet) -> None:
    boards = _games(3000, seed=8)
    cls = classify_rows(boards)
    # row by row: each answer is its row's alone, bit for bit, so the routing is compared exactly
    got = NetEvaluator(three_nets, row_by_row=True)(boards)
    alone = {name: NetEvaluator(net, row_by_row=True)(boards) for name, net in
             [("main", NumpyNet(three_nets.spec, three_nets.layers)), *three_nets.by_class.items()]}
    owner = np.where(np.isin(cls, [PositionClass.RACE, PositionClass.BEAROFF]), "race",
                     np.where(cls == PositionClass.CRASHED, "crashed", "main"))
    for name in ("main", "race", "crashed"):
        rows = owner == name
        assert rows.sum() > 20, name
        np.testing.assert_array_equal(got[rows], alone[name][rows])
    # a batch of one class takes the one-network path: the same answers
    race_rows = boards[owner == "race"]
    np.testing.assert_array_equal(NetEvaluator(three_nets, row_by_row=True)(race_rows), alone["race"][owner == "race"])
    # the default pass (each row's first layer updated from its network's previous row) within float32 rounding
    np.testing.assert_allclose(NetEvaluator(three_nets)(boards), got, rtol=0, atol=5e-6)
    # raw() (no terminal overrides) routes the same way
    crashed = owner == "crashed"
    np.testing.assert_array_equal(NetEvaluator(three_nets).raw(boards)[crashed],
                                  NetEvaluator(three_nets.by_class["crashed"]).raw(boards)[crashed])


def test_class_networks_of_another_encoding_are_answered_batch_by_batch(three_nets: NumpyNet) -> None:
    boards = _games(1500, seed=13)
    mixed = NumpyNet(three_nets.spec, three_nets.layers,
                     {"race": three_nets.by_class["race"], "crashed": _random_net(4, 10, version=2)})
    ev = NetEvaluator(mixed, row_by_row=True)
    assert ev._fused is None  # one compiled call per network instead
    cls = classify_rows(boards)
    got = ev(boards)
    crashed = cls == PositionClass.CRASHED
    contact = cls == PositionClass.CONTACT
    assert crashed.sum() > 10
    np.testing.assert_array_equal(got[crashed],
                                  NetEvaluator(mixed.by_class["crashed"], row_by_row=True)(boards)[crashed])
    np.testing.assert_array_equal(got[contact],
                                  NetEvaluator(NumpyNet(mixed.spec, mixed.layers), row_by_row=True)(boards)[contact])
    np.testing.assert_allclose(NetEvaluator(mixed)(boards), got, rtol=0, atol=5e-6)


def test_a_model_without_a_class_network_answers_that_class_with_its_main_network(three_nets: NumpyNet) -> None:
    boards = _games(1500, seed=9)
    only_race = NumpyNet(three_nets.spec, three_nets.layers, {"race": three_nets.by_class["race"]})
    main = NumpyNet(three_nets.spec, three_nets.layers)
    cls = classify_rows(boards)
    crashed = cls == PositionClass.CRASHED
    np.testing.assert_array_equal(NetEvaluator(only_race, row_by_row=True)(boards)[crashed],
                                  NetEvaluator(main, row_by_row=True)(boards)[crashed])


def test_model_files_carry_every_network(three_nets: NumpyNet, tmp_path: Path) -> None:
    boards = _games(1500, seed=10)
    want = NetEvaluator(three_nets)(boards)
    net, meta = read_npz(save_npz(tmp_path / "m.npz", three_nets, games_trained=7))
    assert sorted(net.by_class) == ["crashed", "race"] and meta["games_trained"] == 7
    assert meta["class_nets"]["crashed"]["hidden"] == [20]
    np.testing.assert_array_equal(NetEvaluator(net)(boards), want)
    # the executor ships them all and tells models apart by all their weights
    blob = ModelBlob.from_net(three_nets)
    np.testing.assert_array_equal(blob.evaluator()(boards[:50]), NetEvaluator(three_nets)(boards[:50]))
    assert net_hash(three_nets) != net_hash(NumpyNet(three_nets.spec, three_nets.layers))


def test_torch_checkpoints_carry_class_networks_and_old_ones_load(tmp_path: Path) -> None:
    torch.manual_seed(4)
    main, race = ValueNet(ModelSpec(3, (8,), "sigmoid")), ValueNet(ModelSpec(3, (6,), "sigmoid"))
    path = save_checkpoint(tmp_path / "c.pt", main, class_nets={"race": race}, games_trained=3)
    ck = load_checkpoint(path)
    assert list(ck.class_nets) == ["race"]
    assert torch.equal(ck.class_nets["race"].body[0].weight, race.body[0].weight)
    model = load_model(path)
    assert sorted(model.net.by_class) == ["race"]
    old = save_checkpoint(tmp_path / "old.pt", main)
    assert load_checkpoint(old).class_nets == {} and load_model(old).net.by_class == {}
    with pytest.raises(CheckpointError, match="unknown class network 'bearoff'"):
        save_checkpoint(tmp_path / "bad.pt", main, class_nets={"bearoff": race})


def test_bad_class_networks_are_clear_errors(three_nets: NumpyNet, tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="unknown class network 'contact'"):
        NumpyNet(three_nets.spec, three_nets.layers, {"contact": three_nets.by_class["race"]})
    with pytest.raises(CheckpointError, match="without class networks"):
        NumpyNet(three_nets.spec, three_nets.layers, {"race": three_nets})
    # a model file whose class network lost a layer
    path = save_npz(tmp_path / "m.npz", three_nets)
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files if k != "race.w1"}
    np.savez(tmp_path / "cut.npz", **arrays)
    with pytest.raises(CheckpointError, match=r"cut\.npz"):
        read_npz(tmp_path / "cut.npz")


def test_fit_trains_one_class_network_on_its_rows_and_keeps_the_rest(tmp_path: Path) -> None:
    from training.refine import fit

    torch.manual_seed(2)
    main = ValueNet(ModelSpec(3, (8,), "sigmoid"))
    init = save_checkpoint(tmp_path / "init.pt", main, games_trained=0)
    boards = _games(4000, seed=11)
    cls = classify_rows(boards)
    boards = boards[(cls != PositionClass.OVER) & (cls != PositionClass.BEAROFF)]
    labels = np.tile(np.array([0.9, 0.3, 0.01, 0.05, 0.0], dtype=np.float32), (len(boards), 1))
    data = tmp_path / "labels" / "data"
    data.mkdir(parents=True)
    for k in range(4):
        np.savez(data / f"chunk-{k:05d}.npz", boards=boards[k::4], labels=labels[k::4], seconds=np.float64(0))
    summary = fit(init, tmp_path / "labels", tmp_path / "fit", epochs=2, lr=3e-3, batch=64, progress=False,
                  net_name="crashed")
    assert summary["positions_train"] + summary["positions_holdout"] == int((classify_rows(boards) == 3).sum())
    out = load_checkpoint(tmp_path / "fit" / "refined.pt")
    assert list(out.class_nets) == ["crashed"]
    assert torch.equal(out.net.body[0].weight, main.body[0].weight), "the main network is untouched"
    assert not torch.equal(out.class_nets["crashed"].body[0].weight, main.body[0].weight)
    with pytest.raises(ConfigError, match="--net 'contact'"):
        fit(init, tmp_path / "labels", tmp_path / "fit2", net_name="contact", progress=False)


def test_generate_keeps_only_the_classes_asked_for() -> None:
    from bgbot.engine.search import BearoffEvaluator
    from training.refine import GenerateConfig, class_codes, sample_positions

    ev = BearoffEvaluator(NetEvaluator(load_model().net))
    cfg = GenerateConfig(chunk_size=64, parallel=64, keep=0.5, candidates=2, classes="crashed")
    boards = sample_positions(ev, cfg, np.random.default_rng(1))
    assert len(boards) == 64 and (classify_rows(boards) == PositionClass.CRASHED).all()
    with pytest.raises(ConfigError, match="'race,bogus'"):
        class_codes("race,bogus")


def test_holding_positions_are_one_sided_contact_with_checkers_kept_back() -> None:
    from training.refine import holding_mask

    home = {6: 5, 5: 3, 4: 3}  # 11 checkers home; 4 more placed per case below
    cases = {
        # the side on roll has escaped; the opponent holds its 1- and 2-points (its 24 and 23)
        "bearing in against an anchor": (Position.from_points({**home, 8: 4}, {24: 2, 13: 8, 8: 5}), True),
        # the same from the holding side, on roll
        "holding side on roll": (Position.from_points({24: 2, 13: 8, 8: 5}, {**home, 8: 4}), True),
        # one checker back (on the bar) is not a hold
        "a single checker back": (Position.from_points({**home, 8: 4}, {25: 1, 13: 9, 8: 5}), False),
        # both sides still have checkers back: an ordinary middle game
        "both sides back": (Position.from_points({**home, 8: 2, 24: 2}, {24: 2, 13: 8, 8: 5}), False),
        # no contact at all
        "a race": (Position.from_points({**home, 8: 4}, {12: 2, 13: 8, 8: 5}), False),
        # the holder has at most 6 checkers in play: crashed, not contact
        "crashed": (Position.from_points({**home, 8: 4}, {24: 2, 3: 4}), False),
    }
    boards = np.stack([pos.array() for pos, _ in cases.values()])
    got = holding_mask(boards)
    for (name, (pos, want)), g in zip(cases.items(), got, strict=True):
        assert bool(g) == want, f"{name}: {pos.gnubg_id()}"


def test_generate_keeps_holding_positions_when_asked() -> None:
    from bgbot.engine.search import BearoffEvaluator
    from training.refine import GenerateConfig, holding_mask, sample_positions

    ev = BearoffEvaluator(NetEvaluator(load_model().net))
    only = sample_positions(ev, GenerateConfig(chunk_size=64, parallel=64, keep=0.5, classes="holding"),
                            np.random.default_rng(3))
    assert len(only) == 64 and holding_mask(only).all()
    mixed = sample_positions(ev, GenerateConfig(chunk_size=256, parallel=64, keep=0.5, classes="race,holding"),
                             np.random.default_rng(3))
    race = classify_rows(mixed) == PositionClass.RACE
    assert (race | holding_mask(mixed)).all() and race.any() and (~race).any()


def test_class_networks_route_the_same_interpreted(three_nets: NumpyNet, tmp_path: Path) -> None:
    boards = _games(800, seed=12)
    model = save_npz(tmp_path / "m.npz", three_nets)
    np.save(tmp_path / "boards.npy", boards)
    code = (
        "import sys, numpy as np\n"
        "from bgbot import jit\nassert not jit.COMPILED\n"
        "from bgbot.eval.evaluate import NetEvaluator\nfrom bgbot.eval.inference import read_npz\n"
        "from bgbot.rules.classes import classify_rows\n"
        "b = np.load(sys.argv[2])\n"
        "np.savez(sys.argv[3], probs=NetEvaluator(read_npz(sys.argv[1])[0])(b), cls=classify_rows(b))\n"
        "assert 'numba' not in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(model), str(tmp_path / "boards.npy"),
                           str(tmp_path / "out.npz")], env={**os.environ, "BGBOT_JIT": "0"}, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    with np.load(tmp_path / "out.npz") as z:
        np.testing.assert_array_equal(z["cls"], classify_rows(boards))
        np.testing.assert_allclose(z["probs"], NetEvaluator(three_nets)(boards), atol=3e-6)
