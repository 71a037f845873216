"""Fuzz the Python API and the contents of model files: a BgbotError or a sound answer, nothing else.

* The API (``parse_dice``, ``Position(...)``, ``Position.from_points``, ``legal_moves``,
  ``parse_move``, ``parse_position``, ``parse_bot_spec`` and the :class:`Engine`
  methods) given junk raises a :class:`~bgbot.errors.BgbotError` (never a bare
  ``TypeError``/``ValueError``/``IndexError``) or answers correctly.
* A model file (the shipped ``.npz`` and a small torch ``.pt``) with mutated
  arrays, shapes, dtypes and description, dropped keys or a flipped byte either
  loads with finite weights and finite probabilities or raises a
  :class:`~bgbot.errors.CheckpointError` naming the file.
* A training checkpoint whose trainer state is damaged is a ``CheckpointError``
  on resume (and exit status 2 from ``bgbot train --resume``).

Seeded (``derandomize``) and bounded, so it runs in seconds.
"""

from __future__ import annotations

import io
import itertools
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import fuzz, make_tiny_checkpoint
from hypothesis import given
from hypothesis import strategies as st

from bgbot.engine.api import Engine
from bgbot.errors import BgbotError, CheckpointError, ConfigError
from bgbot.eval.encoding import encode
from bgbot.eval.models import DEFAULT_MODEL, load_model
from bgbot.formats.parse import parse_position
from bgbot.play.bots import parse_bot_spec
from bgbot.rules.dice import parse_dice
from bgbot.rules.matchstate import CubeState, MatchState
from bgbot.rules.moves import legal_moves, parse_move
from bgbot.rules.position import Position


def bgbot_error_or(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, or None when it raised a BgbotError; any other exception fails the test."""
    try:
        return fn(*args, **kwargs)
    except BgbotError as exc:
        assert str(exc) and "\n" not in str(exc).strip(), repr(exc)
        return None


junk = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**20), 10**20),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=30),
        st.binary(max_size=10),
        st.sampled_from([np.int64(3), np.float32(0.5), np.nan, object(), 1j, "31", "3-1", (3, 1), "8/5 6/5"]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=27),
        st.tuples(inner, inner),
        st.dictionaries(st.one_of(st.integers(-30, 30), st.text(max_size=3), st.none()), inner),
    ),
    max_leaves=30,
)
boards = st.lists(st.one_of(st.integers(-16, 16), junk), min_size=24, max_size=28)
valid_positions = st.sampled_from(
    [Position.start(), Position.from_points({6: 2, 25: 1}, {1: 2}), Position.from_points({1: 1}, {24: 15})]
)


@fuzz(200)
@given(junk)
def test_parse_dice_and_bot_specs(value: object) -> None:
    dice = bgbot_error_or(parse_dice, value)
    if dice is not None:
        assert len(dice) == 2 and all(isinstance(d, int) and 1 <= d <= 6 for d in dice)
    bgbot_error_or(parse_bot_spec, value)
    if isinstance(value, str):
        bgbot_error_or(parse_position, value)


@fuzz(100)
@given(st.one_of(boards, junk))
def test_positions(board: object) -> None:
    pos = bgbot_error_or(Position, board)
    if pos is not None:
        b = pos.board
        assert len(b) == 26 and all(isinstance(x, int) for x in b) and any(b)
        assert Position.from_id(pos.gnubg_id()) == pos


@fuzz(150)
@given(junk, junk)
def test_from_points(mine: object, theirs: object) -> None:
    bgbot_error_or(Position.from_points, mine, theirs)


@fuzz(150)
@given(st.one_of(valid_positions, junk), junk, st.one_of(st.text(max_size=40), junk))
def test_legal_moves_and_parse_move(pos: object, dice: object, text: object) -> None:
    moves = bgbot_error_or(legal_moves, pos, dice)
    if moves is not None:
        assert moves and all(isinstance(m.result, Position) for m in moves)
    move = bgbot_error_or(parse_move, pos, dice, text)
    if move is not None:
        assert move.result in {m.result for m in legal_moves(pos, dice)}  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load()


@fuzz(60)
@given(
    st.one_of(valid_positions, junk, st.sampled_from(["4HPwATDgc/ABMA", "AAAAAAAAAAAAAA", "x"])),
    st.one_of(st.sampled_from([1, "1", 0, 4, -1, 1.0, True, None]), junk),
    st.one_of(st.sampled_from([(3, 1), "31", (0, 1)]), junk),
    st.one_of(st.sampled_from([None, CubeState(), MatchState(), MatchState(match_length=5)]), junk),
)
def test_engine_methods(engine: Engine, pos: object, ply: object, dice: object, state: object) -> None:
    probs = bgbot_error_or(engine.evaluate, pos, ply)
    if probs is not None:
        assert probs.shape == (5,) and np.isfinite(probs).all()
    analysis = bgbot_error_or(engine.best_move, pos, dice, ply, state)
    if analysis is not None:
        assert analysis.best is not None
    decision = bgbot_error_or(engine.cube_action, pos, state, ply=ply)
    if decision is not None:
        assert math.isfinite(decision.equity_optimal)
    bgbot_error_or(engine.cube_efficiency, pos)


# ---------------------------------------------------------------------------
# model files
# ---------------------------------------------------------------------------

_n = itertools.count()


def check_model_file(path: Path) -> None:
    """A damaged file is a CheckpointError naming it; a file that loads has finite weights and answers."""
    try:
        model = load_model(path)
    except CheckpointError as exc:
        assert str(path) in str(exc), str(exc)
        return
    for w, b in model.net.layers:
        assert np.isfinite(w).all() and np.isfinite(b).all()
    x = encode(np.array([Position.start().board], dtype=np.int8), model.net.spec.encoding_version)
    with np.errstate(all="ignore"):  # huge finite weights may overflow on the way; the answer is still 0..1
        probs = model.net.probs(x)
    assert probs.shape == (1, 5) and not (probs < 0).any() and not (probs > 1).any()


@pytest.fixture(scope="module")
def npz_arrays() -> dict[str, np.ndarray]:
    with np.load(DEFAULT_MODEL, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _meta(arrays: dict[str, np.ndarray]) -> dict[str, Any] | None:
    """The description, or None when an earlier mutation already broke it."""
    try:
        meta = json.loads(bytes(arrays["meta"]).decode())
    except (KeyError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def _with_meta(arrays: dict[str, np.ndarray], meta: object) -> None:
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)


def _set_meta(key: str, value: object) -> Callable[[dict[str, np.ndarray]], None]:
    def mutate(arrays: dict[str, np.ndarray]) -> None:
        meta = _meta(arrays)
        if meta is not None:
            meta[key] = value
            _with_meta(arrays, meta)

    return mutate


def _drop_meta(key: str) -> Callable[[dict[str, np.ndarray]], None]:
    def mutate(arrays: dict[str, np.ndarray]) -> None:
        meta = _meta(arrays)
        if meta is not None:
            meta.pop(key, None)
            _with_meta(arrays, meta)

    return mutate


def _on_arrays(fn: Callable[[np.ndarray], np.ndarray], which: str = "w0") -> Callable[[dict[str, np.ndarray]], None]:
    def mutate(arrays: dict[str, np.ndarray]) -> None:
        if which in arrays:
            arrays[which] = fn(arrays[which])

    return mutate


def _poke(value: float, which: str) -> Callable[[np.ndarray], np.ndarray]:
    def fn(a: np.ndarray) -> np.ndarray:
        a = np.array(a, dtype=np.float32)
        a.flat[0] = value
        return a

    return fn


NPZ_MUTATIONS: list[Callable[[dict[str, np.ndarray]], None]] = [
    lambda a: a.pop("w0", None),
    lambda a: a.pop("b1", None),
    lambda a: a.pop("meta", None),
    lambda a: a.update(w9=np.zeros((5, 5), np.float32)),
    lambda a: a.update(meta=np.frombuffer(b"{not json", dtype=np.uint8)),
    lambda a: a.update(meta=np.frombuffer(b"\xff\xfe\x00", dtype=np.uint8)),
    lambda a: a.update(meta=np.arange(10, dtype=np.float64)),
    lambda a: _with_meta(a, [1, 2, 3]),
    _set_meta("hidden", "80"),
    _set_meta("hidden", [10**9]),
    _set_meta("hidden", None),
    _set_meta("hidden", [[1]]),
    _set_meta("hidden", [0]),
    _set_meta("encoding_version", "2"),
    _set_meta("encoding_version", 99),
    _set_meta("encoding_version", [2]),
    _set_meta("activation", 3),
    _set_meta("activation", "softmax"),
    _set_meta("format", "other"),
    _set_meta("games_trained", "many"),
    _drop_meta("hidden"),
    _drop_meta("activation"),
    _on_arrays(lambda w: w.T),
    _on_arrays(lambda w: w.reshape(-1)),
    _on_arrays(lambda w: w[:, :-1]),
    _on_arrays(lambda w: w.astype(np.float16)),
    _on_arrays(lambda w: w.astype(np.int8)),
    _on_arrays(lambda w: w.astype(np.complex64)),
    _on_arrays(lambda w: w.astype(bool)),
    _on_arrays(lambda w: w.astype("U3")),
    _on_arrays(lambda w: np.float32(1.0)),
    _on_arrays(_poke(float("nan"), "w0")),
    _on_arrays(_poke(float("inf"), "b1"), "b1"),
    _on_arrays(_poke(3e38, "w0")),
    _on_arrays(lambda b: b.astype(np.float64) * 1e300, "b1"),
]


@fuzz(60)
@given(st.lists(st.sampled_from(range(len(NPZ_MUTATIONS))), min_size=1, max_size=3))
def test_mutated_npz_models(tmp_path: Path, npz_arrays: dict[str, np.ndarray], picks: list[int]) -> None:
    arrays = dict(npz_arrays)
    for i in picks:
        NPZ_MUTATIONS[i](arrays)
    path = tmp_path / f"m{next(_n)}.npz"
    with path.open("wb") as f:
        np.savez(f, **arrays)
    check_model_file(path)


@fuzz(60)
@given(st.integers(0, 10**9), st.integers(1, 255), st.booleans())
def test_damaged_bytes_of_model_files(tmp_path: Path, where: int, xor: int, truncate: bool) -> None:
    for source in (DEFAULT_MODEL, _tiny_pt(tmp_path)):
        raw = bytearray(source.read_bytes())
        at = where % len(raw)
        if truncate:
            raw = raw[:at]
        else:
            raw[at] ^= xor
        path = tmp_path / f"d{next(_n)}{source.suffix}"
        path.write_bytes(bytes(raw))
        check_model_file(path)


_TINY: dict[str, Path] = {}


def _tiny_pt(tmp_path: Path) -> Path:
    if "pt" not in _TINY:
        _TINY["pt"] = make_tiny_checkpoint(tmp_path / "tiny-source.pt", seed=11)
    return _TINY["pt"]


def _torch_mutations() -> list[Callable[[dict[str, Any]], None]]:
    import torch

    def state(fn: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
        return lambda d: fn(d["state_dict"]) if isinstance(d.get("state_dict"), dict) else None

    def model(key: str, value: object) -> Callable[[dict[str, Any]], None]:
        return lambda d: d["model"].__setitem__(key, value) if isinstance(d.get("model"), dict) else None

    first = "body.0.weight"
    return [
        lambda d: d.pop("format", None),
        lambda d: d.pop("model", None),
        lambda d: d.pop("state_dict", None),
        lambda d: d.update(format="bgbot-checkpoint-0"),
        lambda d: d.update(model="text"),
        lambda d: d.update(state_dict=[1, 2, 3]),
        lambda d: d["model"].pop("hidden", None) if isinstance(d.get("model"), dict) else None,
        lambda d: d["model"].pop("encoding_version", None) if isinstance(d.get("model"), dict) else None,
        model("hidden", "8"),
        model("hidden", [10**9]),
        model("hidden", None),
        model("hidden", [8.5]),
        model("encoding_version", [2]),
        model("encoding_version", "2"),
        model("activation", ["relu"]),
        state(lambda s: s.pop(first, None)),
        state(lambda s: s.update({first: s[first].T.contiguous()}) if first in s else None),
        state(lambda s: s.update({first: s[first].to(torch.float16)}) if first in s else None),
        state(lambda s: s.update({first: s[first].to(torch.int64)}) if first in s else None),
        state(lambda s: s.update({first: torch.full_like(s[first], float("nan"))}) if first in s else None),
        state(lambda s: s.update({first: "weights"})),
        state(lambda s: s.update(extra=torch.zeros(3))),
    ]


@fuzz(40)
@given(st.lists(st.integers(0, 21), min_size=1, max_size=3))
def test_mutated_torch_checkpoints(tmp_path: Path, picks: list[int]) -> None:
    import torch

    mutations = _torch_mutations()
    data = torch.load(_tiny_pt(tmp_path), map_location="cpu", weights_only=True)
    for i in picks:
        mutations[i % len(mutations)](data)
    path = tmp_path / f"t{next(_n)}.pt"
    buf = io.BytesIO()
    torch.save(data, buf)
    path.write_bytes(buf.getvalue())
    check_model_file(path)


# ---------------------------------------------------------------------------
# trainer state on --resume
# ---------------------------------------------------------------------------


def _trainer_mutations() -> list[Callable[[dict[str, Any]], None]]:
    import torch

    def tr(fn: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
        return lambda d: fn(d["trainer"])

    return [
        lambda d: d.update(trainer="broken"),
        lambda d: d.update(config=[1, 2]),
        lambda d: d["config"].update(hidden=[10**9]),
        lambda d: d["config"].update(seed=-1),
        tr(lambda t: t.pop("optimizer")),
        tr(lambda t: t.update(optimizer={"state": 3})),
        tr(lambda t: t.update(rng="{not json")),
        tr(lambda t: t.update(rng=json.dumps({"bit_generator": "nope"}))),
        tr(lambda t: t.update(boards=torch.zeros((3, 26), dtype=torch.int8))),
        tr(lambda t: t.update(boards=torch.zeros((4, 25), dtype=torch.int8))),
        tr(lambda t: t.update(boards=torch.full((4, 26), 100, dtype=torch.int64))),
        tr(lambda t: t.update(boards="boards")),
        tr(lambda t: t.update(ply=torch.full((4,), 10**6, dtype=torch.int64))),
        tr(lambda t: t.update(ply=torch.zeros((2, 2), dtype=torch.int64))),
        tr(lambda t: t.update(traj=torch.zeros((4, 5), dtype=torch.int8))),
        tr(lambda t: t.update(buf_x=torch.zeros((3, 26), dtype=torch.int8))),
        tr(lambda t: t.update(buf_y=torch.zeros((3, 4)))),
        tr(lambda t: t.pop("games_done")),
        tr(lambda t: t.update(games_done="many")),
        tr(lambda t: t.update(elapsed=[1])),
        tr(lambda t: t.update(last_eval="{bad")),
    ]


@pytest.fixture(scope="module")
def trainer_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from training.config import TrainConfig
    from training.selfplay import Trainer

    cfg = TrainConfig(seed=2, games=20, parallel_games=4, hidden=(4,), min_batch=16, checkpoint_every=10, eval_every=0)
    d = tmp_path_factory.mktemp("trainer")
    t = Trainer(cfg, d)
    t.train(8, progress=False)
    return t.save(d / "good.pt")


@pytest.mark.parametrize("index", range(21))
def test_damaged_trainer_state_is_a_checkpoint_error(trainer_checkpoint: Path, tmp_path: Path, index: int) -> None:
    import torch

    from training.selfplay import Trainer

    mutations = _trainer_mutations()
    data = torch.load(trainer_checkpoint, map_location="cpu", weights_only=True)
    mutations[index](data)
    path = tmp_path / "damaged.pt"
    torch.save(data, path)
    with pytest.raises(BgbotError) as info:
        Trainer.resume(path, tmp_path / "run")
    err = info.value
    assert isinstance(err, ConfigError) or (isinstance(err, CheckpointError) and str(path) in str(err)), str(err)
    if index in (0, 8, 12):  # the command line says it in one line, exit status 2
        from bgbot.cli.main import main

        assert main(["train", "--resume", str(path), "--out", str(tmp_path / "cli"), "--quiet"]) == 2
