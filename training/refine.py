"""Self-labelled refinement: train the network towards its own 2-ply evaluations.

What gnubg did after its first TD network, on this machine's budget:

1. **Positions** (``generate``): the current network plays itself at 1-ply,
   ``parallel`` games in lock-step, with a small share of random moves
   (``explore``) so that the sample also holds the odd positions a search
   meets; every position before a roll (side on roll's view) is kept with
   probability ``keep``, which thins out the strong correlation of
   consecutive positions.  With ``candidates=K`` the K best plays (by
   1-ply) of each kept roll are taken instead: the positions a 2-ply choice
   compares.  Finished games and exact bear-offs (both sides home, in the
   database: play answers them exactly) are left out.  With ``records``
   the positions come from saved games instead (``bgbot pit --save-games``,
   for example against gnubg: the positions another engine's play leads
   to, where self-play rarely goes; :func:`record_positions`); with
   ``candidates`` too, each gets a random roll and its K best plays
   (:func:`record_candidates`).
2. **Labels** (same step): each position's five probabilities looked one
   roll ahead, :func:`bgbot.engine.search.lookahead_probs` at depth 1 (the
   average over the 21 rolls of the mover's best play, each valued by the
   network with exact bear-offs from the database; XG's 2-ply value of the
   position before the roll).  About 420 network evaluations a position.
   With ``label = "rollout"`` each position is instead rolled out
   (:func:`bgbot.engine.rollout.rollout_probs`: cubeless, truncated, the
   first roll stratified; ``configs/refine/rollout-contact.toml``, measured
   against gnubg by ``benchmarks/label_quality.py``); with ``common_dice``
   the plays of one roll are rolled out on the same dice, so their
   differences, what a choice reads, are far less noisy than their values
   (tried in ``docs/training.md``).
   Positions and labels go to ``DIR/data/chunk-NNNNN.npz`` one chunk at a
   time, written atomically; chunk ``k`` is seeded by ``(seed, k)`` so a
   killed run resumes at the first missing chunk and makes the same data.
   Each chunk is a task of :mod:`bgbot.engine.executor` (local processes
   or Ray, the network shipped by hash).
3. **Fit** (``fit``): minibatch Adam on the binary cross-entropy between the
   network's sigmoid outputs and the labels, starting from the network that
   made the labels (or, with ``fresh``, from a new, wider one), a held-out share of chunks scored every epoch; the best
   epoch (held-out loss) is saved as a checkpoint ``python -m training.ship``
   can publish.  With ``rank`` the fit also learns the plays of one roll
   against each other (:func:`sibling_loss` on the groups ``candidates``
   stores): a 1-ply player reads only the differences between siblings'
   values, so the deeper search's differences are what it should learn
   (``configs/refine/2ply-rank.toml``).

4. **Average** (``average``): the weighted mean of the weights of networks of one family (the same
   start, trained on in different ways): generation 6 is generation 5's refit averaged with the
   self-play network it was refitted from, trained on for more games (``docs/model.md``). Such a mean
   keeps much of what each branch learnt
   ("model soups"): the refit's sharp 1-ply choices and self-play's consistent lookahead and gammons.

5. **Ensemble** (``ensemble``): networks of independent starts (``fit`` with ``fresh``) as one wide
   network whose logits are their mean; it costs their summed evaluation time. ``split`` cuts such a
   network into its members again (for refitting each apart; docs/training.md, generation 14).

A round is generate + fit; the next round labels with the refined network.
The loss is the same one self-play TD uses, only the target changes from a
lambda-return of one game to an expectation over every roll, which has far
less variance.

    python -m training.refine generate --model checkpoints/bgbot-default.pt --out runs/refine1 --chunks 100 \
        --candidates 4 --keep 0.1 --workers 2
    python -m training.refine fit --init checkpoints/bgbot-default.pt --data runs/refine1 --out runs/fit1
    python -m training.ship runs/fit1 --refined   # if it beats its parent and lowers the checker error

Each round is also a preset (``--config configs/refine/2ply.toml``, ``configs/refine/3ply-mined.toml``:
a ``[generate]`` and a ``[fit]`` table; options given on the command line override it), and
``python -m training.gate`` is the gate between rounds.
"""

from __future__ import annotations

import argparse
import base64
import copy
import dataclasses
import hashlib
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from numpy.typing import NDArray
from tqdm import tqdm

from bgbot.engine.rollout import RolloutSettings, rollout_probs
from bgbot.engine.search import BearoffEvaluator, lookahead_probs
from bgbot.errors import CheckpointError, ConfigError
from bgbot.eval.bearoff import BearoffDB
from bgbot.eval.encoding import encode
from bgbot.eval.evaluate import equity, segment_argmax, terminal_probs
from bgbot.eval.inference import CLASS_NETS, ModelSpec
from bgbot.eval.models import load_model
from bgbot.eval.nets import ValueNet, load_checkpoint, save_checkpoint, set_torch_threads, widen_inputs
from bgbot.fileio import atomic_open, write_text_atomic
from bgbot.labels.generate import advance_games
from bgbot.rules.dice import reroll_opening_doubles
from bgbot.rules.movegen import successors_batch
from bgbot.rules.position import Position, PositionClass, classify_boards
from training.config import KEEP, SCHEDULES

START = np.asarray(Position.start().board, dtype=np.int8)


@dataclass(frozen=True)
class GenerateConfig:
    """How positions are sampled and labelled (stored in every chunk)."""

    seed: int = 1
    chunk_size: int = 8192  # labelled positions a chunk
    parallel: int = 512  # self-play games in lock-step
    explore: float = 0.05  # share of random moves in the sampling games
    keep: float = 0.25  # probability that a position before a roll is kept
    depth: int = 1  # lookahead of the label: 1 = XG 2-ply
    candidates: int = 0  # > 0: keep the top-k plays of each kept roll instead of the position before it
    mine: bool = False  # with candidates: only rolls whose best play at 2-ply is not the 1-ply best
    # "race", "crashed", "contact", "holding" (holding_mask) or a comma list of them: keep only those; "" all
    classes: str = ""
    label: str = "lookahead"  # "lookahead": the network's (depth + 1)-ply value; "rollout": a truncated rollout
    # lookahead labels: the share of the way from the network's own (1-ply) value to the lookahead's; below 1 a
    # damped one-step target (a full step from a network biased for the side on roll overshoots to the other side)
    step: float = 1.0
    # lookahead labels: the depth the step starts from (0: the network's own value); with depth 2 and base 1,
    # step 0.5 is the mean of the 2-ply and 3-ply values (their odd-even errors partly cancel)
    base: int = 0
    trials: int = 36  # rollout labels: trials a position (a multiple of 36: the first roll is stratified)
    truncate: int = 7  # rollout labels: plies played before the leaf is valued by the network (its 1-ply value)
    luck: bool = False  # rollout labels: luck adjustment (about 10x the cost a trial, about 11x fewer trials needed)
    # rollout labels with candidates: the plays of one roll share their dice (their differences far less noisy),
    # other rolls have their own; without, every row has dice of its own
    common_dice: bool = False
    # a folder of game records (.mat / .sgf, e.g. `bgbot pit --save-games DIR`): label the positions before their
    # checker plays (record_positions) instead of self-play's; parallel, explore and keep then do nothing, and
    # candidates labels the top-k plays of a random roll in each (record_candidates)
    records: str = ""


@dataclass(frozen=True)
class FitConfig:
    """How a refinement is fitted (``fit``'s keyword arguments)."""

    epochs: int = 4
    lr: float = 3e-5
    batch: int = 128
    holdout: float = 0.05
    seed: int = 1
    net: str = "main"  # the network fitted: "main", or a class network ("race", "crashed"), see fit
    fresh: int = 0  # > 0: fit a new network of this many hidden units (random weights) instead of init's
    fresh_seed: int = 5  # torch's seed for the new network's weights
    widen: int = 0  # > 0: widen init's main network to this many hidden units, same function, then fit
    encoding: int = 0  # > 0: move every network of init to this (longer) encoding version first, same function
    class_nets_from: str = ""  # a model whose class networks the written model carries instead of init's
    rank: float = 0.0  # > 0: weight of the sibling (ranking) loss on grouped rows, see fit
    from_main: bool = False  # a class network's fit starts from a copy of the main network, see fit
    keep: str = "best"  # the network written: "best" (least held-out loss; none if no epoch improves) or "last"
    schedule: str = "constant"  # the learning rate's course (training.config.SCHEDULES), see fit


def load_preset(path: str | Path) -> tuple[GenerateConfig, FitConfig]:
    """A refinement round's preset: a TOML file with a ``[generate]`` and a ``[fit]`` table (either optional).

    Keys are :class:`GenerateConfig`'s and :class:`FitConfig`'s; an unknown key, a wrong type
    or a file that is not TOML is a :class:`ConfigError` quoting it.
    """
    from bgbot.config import build_config

    tables = preset_tables(path, ("generate", "fit"))
    gen = build_config(GenerateConfig, tables["generate"], source=f"preset {str(path)!r} [generate]")
    fit_cfg = build_config(FitConfig, tables["fit"], source=f"preset {str(path)!r} [fit]")
    return gen, fit_cfg


def preset_tables(path: str | Path, known: tuple[str, ...]) -> dict[str, dict[str, object]]:
    """The tables ``known`` of the TOML preset ``path`` (a missing one is empty; a ``description`` may sit beside).

    Another table, a ``known`` name that is not a table or a file that is not TOML is a :class:`ConfigError`.
    """
    from bgbot.config import read_toml

    p = Path(path)
    data = read_toml(p, "preset")
    extra = set(data) - {*known, "description"}
    if extra:
        raise ConfigError(f"preset {str(p)!r} has unknown tables {sorted(extra)}; known: {', '.join(known)}")
    tables = {}
    for name in known:
        t = data.get(name, {})
        if not isinstance(t, dict):
            raise ConfigError(f"preset {str(p)!r}: {name!r} must be a table, got {t!r}")
        tables[name] = t
    return tables


def _chunk_path(out: Path, k: int) -> Path:
    return out / "data" / f"chunk-{k:05d}.npz"


def sample_positions(evaluator: BearoffEvaluator, cfg: GenerateConfig, rng: np.random.Generator) -> NDArray[np.int8]:
    """``(chunk_size, 26)`` positions before a roll, each from its side on roll's view, from 1-ply self-play."""
    return sample_groups(evaluator, cfg, rng)[0]


def sample_groups(evaluator: BearoffEvaluator, cfg: GenerateConfig, rng: np.random.Generator,
                  ) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
    """:func:`sample_positions` and each row's group: rows with one group number are plays of one roll.

    With ``candidates`` the kept plays of one roll (each from the opponent's view, before its roll)
    share a group number, so a fit can compare siblings (``rank`` in :func:`fit`); without, every row
    is its own group.  Groups number from 0 in the order sampled.
    """
    g = cfg.parallel
    boards = np.tile(START, (g, 1))
    turn = np.zeros(g, dtype=np.int64)
    got: list[NDArray[np.int8]] = []
    groups: list[NDArray[np.int64]] = []
    n = 0
    step = 0
    db = evaluator.db
    wanted = class_codes(cfg.classes)
    holding = HOLDING in [c.strip() for c in cfg.classes.split(",")]
    while n < cfg.chunk_size:
        keep = rng.random(g) < cfg.keep
        if keep.any() and not cfg.candidates:
            k = _add(got, boards[keep], db, wanted, holding)
            groups.append(n + np.arange(k, dtype=np.int64))
            n += k
        dice = reroll_opening_doubles(rng, rng.integers(1, 7, size=(g, 2)), turn == 0)
        succ, parent = successors_batch(boards, dice)
        value = -equity(evaluator(succ))
        if keep.any() and cfg.candidates:
            top = _top_plays(value, parent, keep, cfg.candidates)
            if cfg.mine:
                top = _disputed(evaluator, succ, parent, top)
            need = _needed(succ[top], db, wanted, holding)
            got.append(succ[top][need])
            groups.append(step * g + parent[top][need])
            n += int(need.sum())
        step += 1
        boards, turn = advance_games(succ, parent, value, turn, cfg.explore, rng, START)
    rows = np.concatenate(got)[: cfg.chunk_size]
    _, group = np.unique(np.concatenate(groups)[: cfg.chunk_size], return_inverse=True)
    return rows, group.astype(np.int64)


#: ``classes`` names that are not a :class:`~bgbot.rules.position.PositionClass` but a kind of contact position
HOLDING = "holding"
HOLDING_BACK = 2  # checkers the holding side keeps back (see holding_mask)


def class_codes(classes: str) -> NDArray[np.int8] | None:
    """The :class:`~bgbot.rules.position.PositionClass` codes a ``classes`` option names (``None``: every class).

    ``holding`` (:func:`holding_mask`) is a kind of contact position; it is checked here and by ``_add``
    and stands for no code of its own.
    """
    names = [c.strip() for c in classes.split(",") if c.strip()]
    if not names:
        return None
    known = {"race": PositionClass.RACE, "crashed": PositionClass.CRASHED, "contact": PositionClass.CONTACT}
    bad = [c for c in names if c not in known and c != HOLDING]
    if bad:
        raise ConfigError(f"classes {classes!r}: unknown {bad}; known: {', '.join([*known, HOLDING])}")
    return np.array([int(known[c]) for c in names if c in known], dtype=np.int8)


def holding_mask(boards: NDArray[np.int8]) -> NDArray[np.bool_]:
    """Contact rows where one side has escaped every checker and the other still holds ``HOLDING_BACK`` or more back.

    Rows ``(N, 26)`` from the side on roll's view.  "Back" checkers of a side are its checkers in the
    other side's home board or on its bar; a side has escaped when it has none.  These are the
    bear-ins and bear-offs against an anchor or a back game, where the network's values were
    furthest from rollouts (``benchmarks/loss_by_class.py``; ``docs/training.md``).
    """
    b = boards.astype(np.int16)
    my_back = np.clip(b[:, 19:26], 0, None).sum(axis=1)  # my checkers on their home board (my 19-24) and my bar
    their_back = np.clip(-b[:, 0:7], 0, None).sum(axis=1)  # theirs on my home board (my 1-6) and their bar
    one_sided = ((my_back == 0) & (their_back >= HOLDING_BACK)) | ((their_back == 0) & (my_back >= HOLDING_BACK))
    return one_sided & (classify_boards(boards) == PositionClass.CONTACT)


def _add(got: list[NDArray[np.int8]], boards: NDArray[np.int8], db: BearoffDB,
         wanted: NDArray[np.int8] | None = None, holding: bool = False) -> int:
    """Append the rows of ``boards`` that need a network (no finished game, no exact bear-off) of ``wanted`` classes.

    ``holding``: rows of :func:`holding_mask` are wanted too (with ``wanted`` empty, only they).
    """
    rows = boards[_needed(boards, db, wanted, holding)]
    got.append(rows)
    return len(rows)


def _needed(boards: NDArray[np.int8], db: BearoffDB, wanted: NDArray[np.int8] | None = None,
            holding: bool = False) -> NDArray[np.bool_]:
    """The rows :func:`_add` keeps."""
    done, _ = terminal_probs(boards)
    need = ~done & ~db.is_bearoff(boards)
    if wanted is not None:
        kind = np.isin(classify_boards(boards), wanted)
        need &= (kind | holding_mask(boards)) if holding else kind
    return need


def record_positions(cfg: GenerateConfig, db: BearoffDB) -> NDArray[np.int8]:
    """The positions of ``cfg.records``' games before each checker play, from the mover's view, for labelling.

    Every ``.mat`` / ``.sgf`` file of the folder is read (:func:`bgbot.formats.records.read_match`; a bad
    record is a :class:`~bgbot.errors.RecordError` quoting its line); positions that occur more than once
    are kept once, finished games and exact bear-offs are left out, ``classes`` filters as in self-play,
    and the rows are shuffled by ``seed`` (consecutive positions of a game are strongly correlated, and a
    chunk should hold many games).  Chunk ``k`` labels rows ``k * chunk_size`` onwards.
    """
    from bgbot.formats.records import read_match

    folder = Path(cfg.records)
    if not folder.is_dir():
        raise ConfigError(f"records {cfg.records!r}: not a folder of game records")
    files = sorted(p for p in folder.iterdir() if p.suffix in (".mat", ".sgf"))
    if not files:
        raise ConfigError(f"records {cfg.records!r}: no .mat or .sgf records in it")
    rows = [a.position.board for f in files for g in read_match(f).games for a in g.moves]
    if not rows:
        raise ConfigError(f"records {cfg.records!r}: no checker plays in {len(files)} records")
    boards = np.unique(np.asarray(rows, dtype=np.int8), axis=0)
    got: list[NDArray[np.int8]] = []
    _add(got, boards, db, class_codes(cfg.classes), HOLDING in [c.strip() for c in cfg.classes.split(",")])
    kept = got[0]
    return kept[np.random.default_rng([cfg.seed, 0x5EC0]).permutation(len(kept))]


def record_candidates(evaluator: BearoffEvaluator, boards: NDArray[np.int8], k: int, rng: np.random.Generator,
                      ) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
    """The ``k`` best plays (by the network's 1-ply equity) of a random roll in each of ``boards``.

    ``boards`` are positions before a roll, from the side on roll's view (:func:`record_positions`); each
    gets a roll of its own from ``rng``, and its plays are returned from the opponent's view, before its
    roll, with their group: the index of the board they came from.  Boards with one play or none give no
    rows (nothing to compare).
    """
    if len(boards) == 0:
        return boards, np.zeros(0, dtype=np.int64)
    dice = rng.integers(1, 7, size=(len(boards), 2))
    succ, parent = successors_batch(boards, dice)
    value = -equity(evaluator(succ))
    top = _top_plays(value, parent, np.ones(len(boards), dtype=bool), k)
    return succ[top], parent[top].astype(np.int64)


def _top_plays(value: NDArray[np.float64], parent: NDArray[np.int64], keep: NDArray[np.bool_], k: int,
               ) -> NDArray[np.int64]:
    """Rows of the ``k`` best plays (by ``value``) of each kept game that has a choice of at least two."""
    rows = np.flatnonzero(keep[parent])
    order = rows[np.lexsort((-value[rows], parent[rows]))]
    p = parent[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = p[1:] != p[:-1]
    start = np.maximum.accumulate(np.where(first, np.arange(len(order)), 0))
    rank = np.arange(len(order)) - start
    choices = np.bincount(parent, minlength=len(keep))[p]
    return order[(rank < k) & (choices > 1)]


def _disputed(evaluator: BearoffEvaluator, succ: NDArray[np.int8], parent: NDArray[np.int64],
              top: NDArray[np.int64]) -> NDArray[np.int64]:
    """The rows of ``top`` (each roll's best plays by 1-ply, best first) whose roll changes its choice at 2-ply.

    Each candidate (from the opponent's view, before its roll) is looked one roll ahead; a roll is
    kept when the candidate with the best 2-ply equity for the mover is not its 1-ply best: the
    positions where the shallow and the deep choice disagree, as gnubg mined its training sets.
    """
    if top.size == 0:
        return top
    deep = -equity(lookahead_probs(evaluator, succ[top], 1))  # the mover's 2-ply equity of each candidate
    p = parent[top]
    first = np.ones(len(top), dtype=bool)
    first[1:] = p[1:] != p[:-1]
    group = np.cumsum(first) - 1
    best = segment_argmax(deep, group, int(group[-1]) + 1)  # row of top (per roll) with the best 2-ply value
    disputed = ~first[best]  # the 1-ply best is each group's first row
    return top[disputed[group]]


def generate(
    model: str | Path,
    out: str | Path,
    chunks: int,
    cfg: GenerateConfig,
    *,
    progress: bool = True,
    executor: str = "local",
    workers: int = 1,
) -> int:
    """Write chunks ``0 .. chunks-1`` that are missing under ``out/data``; returns how many were written.

    Each chunk is one task of :mod:`bgbot.engine.executor` (:func:`label_chunk_task`, seeded by
    ``(seed, chunk)``, the network shipped by hash): ``workers`` local processes, or a Ray cluster
    with ``executor="ray"`` / ``"ray://HOST:PORT"``, give the same chunks.  The chunk files are the
    run's journal: a killed run resumes at the missing ones.
    """
    from bgbot.engine.executor import ModelBlob, Task, run_tasks

    class_codes(cfg.classes)  # a bad class name fails here, not in every task
    if cfg.label not in ("lookahead", "rollout"):  # and so does a bad label kind or rollout setting
        raise ConfigError(f"label {cfg.label!r}: choose lookahead or rollout")
    if cfg.label == "rollout":
        rollout_settings(cfg, 0)
    if cfg.common_dice and not (cfg.label == "rollout" and cfg.candidates):
        raise ConfigError(f"common_dice: for rollout labels of candidates (label {cfg.label!r}, "
                          f"candidates {cfg.candidates!r})")
    if not (isinstance(cfg.step, int | float) and 0.0 < cfg.step <= 1.0):
        raise ConfigError(f"step {cfg.step!r}: the labels' share of the lookahead must be above 0 and at most 1")
    base_ok = isinstance(cfg.base, int) and not isinstance(cfg.base, bool) and cfg.base >= 0
    if not base_ok or (cfg.base and cfg.base >= cfg.depth):
        raise ConfigError(f"base {cfg.base!r}: the depth the step starts from must be 0 .. depth - 1 ({cfg.depth - 1})")
    if cfg.base and cfg.step == 1.0:
        raise ConfigError(f"base {cfg.base!r} needs a step below 1 (a full step is the depth-{cfg.depth} value alone)")
    pool = None
    if cfg.records:
        from bgbot.eval.bearoff import get_bearoff_db

        pool = record_positions(cfg, get_bearoff_db())
        have = -(-len(pool) // cfg.chunk_size)
        if chunks > have:
            raise ConfigError(f"records {cfg.records!r}: {len(pool)} positions fill {have} chunks of "
                              f"{cfg.chunk_size}, not {chunks}")
    out = Path(out)
    (out / "data").mkdir(parents=True, exist_ok=True)
    for tmp in (out / "data").glob("*.tmp*"):
        tmp.unlink(missing_ok=True)
    meta_path = out / "generate.json"
    meta: dict[str, object] = {"model": str(model), "config": cfg.__dict__}
    if pool is not None:
        meta["records_sha256"] = hashlib.sha256(pool.tobytes()).hexdigest()  # the same games, the same chunks
    if meta_path.exists():
        old = json.loads(meta_path.read_text())
        old["config"] = {**GenerateConfig().__dict__, **old.get("config", {})}  # keys added since: defaults
        if old != meta:
            raise ConfigError(f"{str(out)!r} holds data made with {old}, not {meta}: choose another --out")
    else:
        write_text_atomic(meta_path, json.dumps(meta, indent=1) + "\n")
    todo = [k for k in range(chunks) if not _chunk_path(out, k).exists()]
    if not todo:
        return 0
    blob = ModelBlob.from_net(load_model(model).net, bearoff=True)

    def payload(k: int) -> dict[str, object]:
        if pool is None:
            return {"config": cfg.__dict__, "chunk": k}
        return {"config": cfg.__dict__, "chunk": k, "boards": _pack(pool[k * cfg.chunk_size:(k + 1) * cfg.chunk_size])}

    tasks = [Task("training.refine:label_chunk_task", blob.hash, payload(k), cfg.seed) for k in todo]
    bar = tqdm(total=chunks, initial=chunks - len(todo), unit="chunk", desc="label", disable=not progress)
    for i, result in run_tasks(tasks, blob, executor=executor, workers=workers):
        path = _chunk_path(out, todo[i])
        with atomic_open(path) as f:
            np.savez(f, boards=_unpack(result["boards"]), labels=_unpack(result["labels"]),
                     groups=_unpack(result["groups"]), seconds=np.float64(result["seconds"]))
        bar.update(1)
    bar.close()
    return len(todo)


def label_chunk_task(evaluator: BearoffEvaluator, payload: dict[str, object], seed: int) -> dict[str, object]:
    """An executor task: chunk ``payload['chunk']`` of ``GenerateConfig(**payload['config'])``, sampled and labelled.

    ``evaluator`` is the labelling network with exact bear-offs (the task's model hash).  Positions
    are from each row's side on roll, labels its five probabilities looked ``depth`` rolls ahead, or
    rolled out (``label = "rollout"``, :func:`rollout_settings`).
    """
    cfg = GenerateConfig(**payload["config"])  # type: ignore[arg-type]
    if cfg.seed != seed:
        raise ConfigError(f"task seed {seed!r} is not the config's seed {cfg.seed!r}")
    rng = np.random.default_rng([cfg.seed, int(payload["chunk"])])  # type: ignore[call-overload]
    t0 = time.perf_counter()
    if "boards" in payload:
        boards = _unpack(payload["boards"])
        groups = np.arange(len(boards), dtype=np.int64)
        if cfg.candidates:
            boards, groups = record_candidates(evaluator, boards, cfg.candidates, rng)
    else:
        boards, groups = sample_groups(evaluator, cfg, rng)
    if cfg.label == "rollout":
        settings = rollout_settings(cfg, int(payload["chunk"]))  # type: ignore[call-overload]
        if cfg.common_dice:  # the plays of one roll on common dice, independent of other rolls' plays
            labels = rollout_probs(evaluator, boards, settings, dice_groups=groups)
        else:  # noise independent per position
            labels = rollout_probs(evaluator, boards, settings, dice_per_row=True)
    else:
        deep = lookahead_probs(evaluator, boards, cfg.depth)
        if cfg.step != 1.0:
            deep = cfg.step * deep + (1.0 - cfg.step) * lookahead_probs(evaluator, boards, cfg.base)
        labels = deep.astype(np.float32)
    return {"boards": _pack(boards), "labels": _pack(labels), "groups": _pack(groups),
            "seconds": time.perf_counter() - t0}


def rollout_settings(cfg: GenerateConfig, chunk: int) -> RolloutSettings:
    """The rollout that labels chunk ``chunk`` (``cfg.label == "rollout"``): cubeless, checker play 1-ply,
    the first roll stratified, seeded by ``(cfg.seed, chunk)``; a bad setting is a ConfigError."""
    if cfg.trials % 36:
        raise ConfigError(f"rollout labels: trials {cfg.trials!r} must be a multiple of 36 (stratified first roll)")
    return RolloutSettings(
        trials=cfg.trials, ply=1, truncate=cfg.truncate, cubeful=False, luck=cfg.luck, stratify=36,
        seed=cfg.seed * 100_003 + chunk, trials_per_task=cfg.trials, stop_at_bearoff=True,
    )


def _pack(a: NDArray[np.generic]) -> dict[str, object]:
    """An array as JSON-ready text (a task's result crosses processes and machines as JSON)."""
    return {"dtype": a.dtype.str, "shape": list(a.shape), "data": base64.b64encode(a.tobytes()).decode()}


def _unpack(d: dict[str, object]) -> NDArray[np.generic]:
    dtype = np.dtype(str(d["dtype"]))
    if dtype.kind not in "iuf":
        raise ConfigError(f"a labelled chunk holds {dtype}, not numbers")
    return np.frombuffer(base64.b64decode(str(d["data"])), dtype=dtype).reshape(d["shape"])  # type: ignore[arg-type]


def load_chunks(data: str | Path) -> tuple[NDArray[np.int8], NDArray[np.float32], NDArray[np.int64]]:
    """Every chunk under ``data/data``: boards, labels and the chunk number of each row."""
    files = sorted((Path(data) / "data").glob("chunk-*.npz"))
    if not files:
        raise ConfigError(f"no chunk-*.npz under {str(Path(data) / 'data')!r}: run generate first")
    xs, ys, ks = [], [], []
    for f in files:
        with np.load(f, allow_pickle=False) as z:
            xs.append(z["boards"].astype(np.int8))
            ys.append(z["labels"].astype(np.float32))
        ks.append(np.full(len(xs[-1]), int(f.stem.split("-")[1]), dtype=np.int64))
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(ks)


def load_groups(data: str | Path) -> NDArray[np.int64]:
    """Each row's group, in :func:`load_chunks`' order: rows of one group are the plays of one roll.

    Group numbers are unique across the folder's chunks; rows of chunks written before groups were
    stored (or of ``records``) are each a group of their own.
    """
    files = sorted((Path(data) / "data").glob("chunk-*.npz"))
    out: list[NDArray[np.int64]] = []
    top = 0
    for f in files:
        with np.load(f, allow_pickle=False) as z:
            n = len(z["labels"])
            g = z["groups"].astype(np.int64) if "groups" in z.files else np.arange(n, dtype=np.int64)
        if g.shape != (n,) or (n and g.min() < 0):
            raise ConfigError(f"{str(f)!r}: its groups do not match its {n} rows")
        out.append(g + top)
        top += int(g.max()) + 1 if n else 0
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def _rows_of(boards: NDArray[np.int8], net_name: str, class_nets: dict[str, ValueNet]) -> NDArray[np.bool_]:
    """Which rows ``net_name`` answers in a model with ``class_nets`` (as NetEvaluator routes them: CLASS_NETS)."""
    cls = classify_boards(boards)
    if net_name != "main":
        return np.isin(cls, CLASS_NETS[net_name])
    return ~np.isin(cls, [code for name in class_nets for code in CLASS_NETS[name]])


def _torch_equity(p: torch.Tensor) -> torch.Tensor:
    """Cubeless equity of ``(B, 5)`` probabilities (:func:`bgbot.eval.evaluate.equity`), side on roll's view."""
    return 2.0 * p[:, 0] - 1.0 + p[:, 1] - p[:, 3] + p[:, 2] - p[:, 4]


def sibling_loss(logits: torch.Tensor, y: torch.Tensor, group: torch.Tensor) -> torch.Tensor:
    """The ranking loss: squared error of each row's equity measured from its group's mean, summed over rows.

    Rows of one ``group`` are plays of one roll (each from the opponent's view, so the mover's
    equity is minus it; the sign does not matter to a deviation).  A play is chosen by its equity
    against its siblings', so this is the part of the network's values a checker play reads; a row
    alone in its group contributes 0.  ``group`` holds numbers ``0 .. G-1`` (``torch.unique``'s inverse).
    """
    n_groups = int(group.max().item()) + 1 if len(group) else 0
    size = torch.zeros(n_groups, dtype=logits.dtype).index_add_(0, group, torch.ones_like(logits[:, 0]))
    d = _torch_equity(torch.sigmoid(logits)) - _torch_equity(y)  # centring the difference centres both
    mean = torch.zeros(n_groups, dtype=logits.dtype).index_add_(0, group, d) / size
    return ((d - mean[group]) ** 2).sum()


def _fit_loss(net: ValueNet, x: torch.Tensor, y: torch.Tensor, w: torch.Tensor, group: torch.Tensor | None,
              rank: float) -> torch.Tensor:
    """The weighted cross-entropy plus ``rank`` times :func:`sibling_loss` a row (both means over the batch)."""
    logits = net(x)
    loss = _weighted_bce(logits, y, w)
    if rank and group is not None:
        _, inverse = torch.unique(group, return_inverse=True)
        loss = loss + rank * sibling_loss(logits, y, inverse) / len(x)
    return loss


def _holdout_loss(net: ValueNet, x: torch.Tensor, y: torch.Tensor, w: torch.Tensor, group: torch.Tensor,
                  rank: float) -> dict[str, float]:
    """Held-out cross-entropy and, with ``rank``, the sibling loss a row and the fit's combined loss.

    ``group`` numbers the rows' groups ``0 .. G-1`` (as :func:`sibling_loss` wants them).
    """
    with torch.inference_mode():
        logits = net(x)
        bce = _weighted_bce(logits, y, w).item()
        if not rank:
            return {"holdout_bce": bce}
        sib = sibling_loss(logits, y, group).item() / max(len(x), 1)
    return {"holdout_bce": bce, "holdout_sibling": sib, "holdout_loss": bce + rank * sib}


def _weighted_bce(logits: torch.Tensor, y: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Mean binary cross-entropy over the five outputs, rows weighted by ``w``."""
    per_row = torch.nn.functional.binary_cross_entropy_with_logits(logits, y, reduction="none").mean(dim=1)
    return (per_row * w).sum() / w.sum()


class NoImprovement(CheckpointError):
    """A fit none of whose epochs lowered the held-out loss below the starting network's: nothing was written."""


def fit(
    init: str | Path,
    data: str | Path | list[str | Path],
    out: str | Path,
    *,
    epochs: int = 4,
    lr: float = 3e-5,
    batch: int = 128,
    holdout: float = 0.05,
    seed: int = 1,
    threads: int = 1,
    progress: bool = True,
    weights: list[float] | None = None,
    net_name: str = "main",
    fresh: int = 0,
    fresh_seed: int = 5,
    class_nets_from: str | Path = "",
    widen: int = 0,
    rank: float = 0.0,
    encoding: int = 0,
    schedule: str = "constant",
    from_main: bool = False,
    keep: str = "best",
) -> dict[str, object]:
    """Fit one of ``init``'s networks to the labels under ``data``; writes ``out/refined.pt`` (best held-out epoch).

    ``net_name`` is the network fitted: ``"main"`` on the rows no class network of ``init`` answers,
    or a class network (:data:`~bgbot.eval.inference.CLASS_NETS`) on the rows of its class, started
    from ``init``'s network of that class or, when it has none yet or ``from_main`` is set, from a copy of
    its main network (gnubg's class nets; a wider start than the class network's own).  The checkpoint
    written holds every network of ``init``, the fitted one replaced.  ``weights`` (one per data folder,
    default 1) weigh each folder's rows in the loss, e.g. a few deep (3-ply) labels among many 2-ply ones;
    the held-out loss is weighted the same way.

    ``fresh > 0`` fits a new network instead (``fresh`` hidden units, init's encoding and activation,
    torch's initialisation seeded by ``fresh_seed``): a supervised start for a wider network, which
    self-play then makes consistent (see ``configs/refine/fresh256.toml``).  ``class_nets_from`` names a
    model whose class networks replace init's (a TD run's checkpoint carries none).  ``widen > 0``
    starts from init's main network grown to ``widen`` hidden units by :func:`widen_net` (the same
    function at the start, seeded by ``fresh_seed``), so the fit has room to learn new positions without
    unlearning old ones.  ``encoding > 0`` first moves every network of init (and of ``class_nets_from``) to
    that encoding version by :func:`~bgbot.eval.nets.widen_inputs` (zero weights on the new inputs, the same
    function), so the fit can use inputs init never had.

    ``rank > 0`` adds ``rank`` times :func:`sibling_loss` to the cross-entropy: on rows stored in
    groups (the plays of one roll, ``candidates`` in :class:`GenerateConfig`), the error of each
    play's equity measured from its siblings' mean, the part of the values a 1-ply choice reads.
    Batches then take a group's rows together (groups shuffled; a group cut by a batch boundary counts
    as two), the sibling loss is not scaled by ``weights``, and the best epoch is the one with the
    least held-out combined loss.

    ``schedule`` is the learning rate's course: ``"constant"`` (``lr`` throughout), or ``"cosine"``
    (from ``lr`` down to zero over the epochs, batch by batch, so the last epochs settle instead of
    wandering at a high rate: a fit to rollout labels at a high ``lr`` otherwise ends with a bias).

    ``keep`` is the network written: ``"best"``, the epoch of least held-out loss, and none when no epoch
    improves on the start (:class:`NoImprovement`); or ``"last"``, the last epoch's whatever its held-out loss,
    for a network so near its labels' noise that their held-out loss no longer tells a better network from a
    worse one (the gate's play judges it instead).  The summary's ``kept_epoch`` says which was written, and
    ``kept_holdout_loss`` (``kept_holdout_bce`` without ``rank``) its held-out loss.
    """
    if schedule not in SCHEDULES:
        raise ConfigError(f"schedule {schedule!r}: choose {' or '.join(SCHEDULES)}")
    if keep not in KEEP:
        raise ConfigError(f"keep {keep!r}: choose {' or '.join(KEEP)} (the epoch whose network is written)")
    if not (isinstance(rank, int | float) and np.isfinite(rank) and rank >= 0):
        raise ConfigError(f"rank {rank!r}: the sibling loss's weight is a number >= 0")
    if net_name != "main" and net_name not in CLASS_NETS:
        raise ConfigError(f"--net {net_name!r}: choose main or one of {', '.join(CLASS_NETS)}")
    if from_main and net_name == "main":
        raise ConfigError("from_main starts a class network from the main network: not for --net main")
    if fresh < 0 or (fresh and net_name != "main"):
        raise ConfigError(f"fresh {fresh!r}: a positive number of hidden units, for the main network only")
    if threads:
        set_torch_threads(threads)
    torch.manual_seed(seed)
    start = load_checkpoint(init)
    class_nets = dict(load_checkpoint(class_nets_from).class_nets if class_nets_from else start.class_nets)
    if widen and (fresh or net_name != "main"):
        raise ConfigError(f"widen {widen!r}: for the main network only, and not with fresh {fresh!r}")
    main_net = start.net
    if encoding:
        if encoding < main_net.spec.encoding_version:
            raise ConfigError(
                f"encoding {encoding!r}: lower than init's encoding version {main_net.spec.encoding_version}"
            )
        main_net = widen_inputs(main_net, encoding)
        class_nets = {k: widen_inputs(v, encoding) for k, v in class_nets.items()}
    if widen:
        main_net = widen_net(main_net, widen, seed=fresh_seed)
    if fresh:
        torch.manual_seed(fresh_seed)
        main_net = ValueNet(dataclasses.replace(main_net.spec, hidden=(fresh,)))
    if net_name == "main":
        net = main_net
    else:
        net = copy.deepcopy(main_net) if from_main else class_nets.get(net_name) or copy.deepcopy(main_net)
        class_nets[net_name] = net
    net.train()
    version = net.spec.encoding_version
    dirs = data if isinstance(data, list) else [data]
    if weights is None:
        weights = [1.0] * len(dirs)
    if len(weights) != len(dirs) or not all(np.isfinite(w) and w > 0 for w in weights):
        raise ConfigError(f"weights {weights!r} must be one positive number per data folder ({len(dirs)})")
    parts = [load_chunks(d) for d in dirs]
    group_parts = [load_groups(d) for d in dirs]
    tops = np.cumsum([0] + [int(g.max()) + 1 if len(g) else 0 for g in group_parts])
    groups = np.concatenate([g + t for g, t in zip(group_parts, tops, strict=False)])
    row_w = np.concatenate([np.full(len(p[0]), w, dtype=np.float32) for p, w in zip(parts, weights, strict=True)])
    boards = np.concatenate([p[0] for p in parts])
    labels = np.concatenate([p[1] for p in parts])
    chunk = np.concatenate([p[2] + 100_000 * i for i, p in enumerate(parts)])
    mine = _rows_of(boards, net_name, class_nets)
    if not mine.any():
        raise ConfigError(f"no rows of {[str(d) for d in dirs]} belong to the {net_name!r} network")
    boards, labels, chunk, row_w, groups = boards[mine], labels[mine], chunk[mine], row_w[mine], groups[mine]
    rng = np.random.default_rng(seed)
    ids = np.unique(chunk)
    n_hold = max(1, round(holdout * len(ids))) if len(ids) > 1 else 0
    hold_ids = rng.choice(ids, size=n_hold, replace=False) if n_hold else np.zeros(0, dtype=np.int64)
    hold = np.isin(chunk, hold_ids)
    if n_hold == 0:  # one chunk: hold out 5% of its rows
        hold = rng.random(len(boards)) < holdout
    xtr, ytr, wtr, gtr = boards[~hold], labels[~hold], row_w[~hold], groups[~hold]
    xho = torch.from_numpy(encode(boards[hold], version))
    yho = torch.from_numpy(labels[hold])
    who = torch.from_numpy(row_w[hold])
    gho = torch.from_numpy(np.unique(groups[hold], return_inverse=True)[1].astype(np.int64))
    gid = np.unique(gtr, return_inverse=True)[1] if rank else gtr  # with rank: the groups numbered 0 .. G-1
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    steps = epochs * -(-len(xtr) // batch)
    sched = (torch.optim.lr_scheduler.LambdaLR(opt, lambda k: 0.5 * (1.0 + math.cos(math.pi * min(k, steps) / steps)))
             if schedule == "cosine" else None)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    score = "holdout_loss" if rank else "holdout_bce"
    history: list[dict[str, float]] = [{"epoch": 0, **_holdout_loss(net, xho, yho, who, gho, rank)}]
    best, kept = history[0][score], 0  # kept: the epoch written (0: none)
    best_path = out / "refined.pt"
    best_path.unlink(missing_ok=True)  # a file of an earlier fit here must not pass for this one's
    base_games = int(start.data.get("games_trained", 0))
    for ep in range(1, epochs + 1):
        if rank:  # whole groups in a batch, groups shuffled
            order = np.argsort(rng.permutation(int(gid.max()) + 1)[gid], kind="stable")
        else:
            order = rng.permutation(len(xtr))
        net.train()
        total = 0.0
        bar = tqdm(range(0, len(order), batch), desc=f"fit epoch {ep}", unit="batch", disable=not progress,
                   leave=False)
        for lo in bar:
            sel = order[lo : lo + batch]
            x = torch.from_numpy(encode(xtr[sel], version))
            y = torch.from_numpy(ytr[sel])
            loss = _fit_loss(net, x, y, torch.from_numpy(wtr[sel]), torch.from_numpy(gtr[sel]), rank)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if sched is not None:
                sched.step()
            total += loss.item() * len(sel)
        net.eval()
        rec = {"epoch": ep, "train_loss" if rank else "train_bce": total / max(len(xtr), 1),
               **_holdout_loss(net, xho, yho, who, gho, rank)}
        history.append(rec)
        print(json.dumps(rec), flush=True)
        improved, best = rec[score] < best, min(best, rec[score])
        if (keep == "best" and improved) or (keep == "last" and ep == epochs):
            kept = ep
            save_checkpoint(
                best_path, main_net, class_nets=class_nets, config={**start.data.get("config", {}), "refined": {
                    "init": str(init), "data": [str(d) for d in dirs], "weights": weights, "epochs": ep, "lr": lr,
                    "batch": batch, "net": net_name, "fresh": fresh, "fresh_seed": fresh_seed, "widen": widen,
                    "encoding": encoding, "class_nets_from": str(class_nets_from),
                    **({"schedule": schedule} if schedule != "constant" else {}),
                    "positions": len(xtr), "seed": seed, **({"rank": rank} if rank else {}),
                    **({"from_main": True} if from_main else {}), **({"keep": keep} if keep != "best" else {})}},
                games_trained=base_games, last_eval="",
            )
    summary = {"init": str(init), "net": net_name, "positions_train": len(xtr), "positions_holdout": int(hold.sum()),
               "history": history, f"best_{score}": best, "kept_epoch": kept,
               f"kept_{score}": history[kept][score] if kept else None}  # with keep="last", not always the best
    write_text_atomic(out / "fit.json", json.dumps(summary, indent=1) + "\n")
    if not best_path.exists():
        raise NoImprovement(f"no epoch improved the held-out loss of {str(init)!r}'s {net_name} network "
                            f"({history[0][score]:.6g} before the fit): nothing written")
    return summary


def widen_net(net: ValueNet, hidden: int, *, seed: int = 5) -> ValueNet:
    """``net`` (one hidden layer) grown to ``hidden`` units and computing the same function (net2net).

    The old units keep their weights; each new unit gets input weights drawn from a normal
    distribution with the old units' spread (torch seeded by ``seed``), a zero bias and a zero
    weight into every output, so the widened network's outputs equal ``net``'s exactly until a fit
    moves the new output weights.  A :class:`ConfigError` if ``net`` has more than one hidden layer or
    already ``hidden`` units or more.
    """
    old = net.spec.hidden
    if len(old) != 1 or hidden <= old[0]:
        raise ConfigError(f"widen {hidden!r}: needs a one-hidden-layer network narrower than that (this one: "
                          f"{list(old)})")
    first, last = (m for m in net.body if isinstance(m, torch.nn.Linear))
    wide = ValueNet(dataclasses.replace(net.spec, hidden=(hidden,)))
    w_first, w_last = (m for m in wide.body if isinstance(m, torch.nn.Linear))
    gen = torch.Generator().manual_seed(seed)
    h = old[0]
    with torch.no_grad():
        spread = float(first.weight.std())
        w_first.weight.copy_(torch.randn(w_first.weight.shape, generator=gen) * spread)
        w_first.weight[:h] = first.weight
        w_first.bias.zero_()
        w_first.bias[:h] = first.bias
        w_last.weight.zero_()
        w_last.weight[:, :h] = last.weight
        w_last.bias.copy_(last.bias)
    return wide


def average(models: list[str | Path], weights: list[float] | None, out: str | Path,
            class_nets_from: str | Path = "") -> dict[str, object]:
    """Write the weighted mean of ``models``' networks to ``out/refined.pt`` (and ``out/average.json``).

    Every model must have the same main network shape (encoding version, hidden sizes, activation)
    and the same class networks, each of one shape; ``weights`` (default equal) are positive and
    normalised to sum to 1. Each network, main and class, is the mean of its counterparts. With
    ``class_nets_from`` only the main networks are averaged, and the class networks are that
    checkpoint's (a self-play checkpoint has none of its own); one model and ``class_nets_from``
    give that model's main network with those class networks.
    """
    if len(models) < (1 if class_nets_from else 2):
        raise ConfigError(f"average needs two or more models (or one and --class-nets-from), got "
                          f"{[str(m) for m in models]!r}")
    w = [1.0] * len(models) if weights is None else list(weights)
    if len(w) != len(models):
        raise ConfigError(f"{len(w)} weights for {len(models)} models: give one weight per model")
    if not all(isinstance(x, float | int) and np.isfinite(x) and x > 0 for x in w):
        raise ConfigError(f"average weights must be positive numbers, got {w!r}")
    w = [float(x) / sum(w) for x in w]
    cks = [load_checkpoint(m) for m in models]
    first = cks[0]
    for m, ck in zip(models, cks, strict=True):
        if ck.net.spec != first.net.spec:
            raise CheckpointError(f"{str(m)!r} has a {ck.net.spec} main network, {str(models[0])!r} a "
                                  f"{first.net.spec}: only networks of one shape can be averaged")
        if class_nets_from:
            continue
        if sorted(ck.class_nets) != sorted(first.class_nets) or any(
                ck.class_nets[k].spec != first.class_nets[k].spec for k in first.class_nets):
            raise CheckpointError(f"{str(m)!r} and {str(models[0])!r} have different class networks "
                                  f"({sorted(ck.class_nets)} against {sorted(first.class_nets)})")

    def mean(nets: list[ValueNet]) -> ValueNet:
        states = [n.state_dict() for n in nets]
        net = copy.deepcopy(nets[0])
        net.load_state_dict({k: sum(x * st[k] for x, st in zip(w, states, strict=True)) for k in states[0]})
        return net

    main_net = mean([ck.net for ck in cks])
    if class_nets_from:
        class_nets = dict(load_checkpoint(class_nets_from).class_nets)
    else:
        class_nets = {k: mean([ck.class_nets[k] for ck in cks]) for k in first.class_nets}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    info = {"average": {"models": [str(m) for m in models], "weights": w, "class_nets_from": str(class_nets_from)}}
    save_checkpoint(out / "refined.pt", main_net, class_nets=class_nets,
                    config={**first.data.get("config", {}), **info},
                    games_trained=max(int(ck.data.get("games_trained", 0)) for ck in cks), last_eval="")
    summary = {**info, "spec": str(first.net.spec), "class_nets": sorted(class_nets)}
    write_text_atomic(out / "average.json", json.dumps(summary, indent=1) + "\n")
    return summary


def ensemble(models: list[str | Path], out: str | Path) -> dict[str, object]:
    """Write ``models``' main networks as one wide network to ``out/refined.pt`` (and ``out/ensemble.json``).

    The wide network's hidden layer is the members' hidden layers side by side and its output logits are
    the mean of the members' logits, exactly: an output ensemble (``benchmarks/ensemble_duel.py``
    averages probabilities instead) that every tool loads as one model, at the members' summed cost.
    Members are one-hidden-layer networks of one activation; those of an older encoding are moved to the
    newest one first (:func:`~bgbot.eval.nets.widen_inputs`). The class networks are the first model's,
    moved to that encoding too. Networks of independent starts (``fit`` with ``fresh``) err less
    alike than refits of one network, so their mean gains more.
    """
    if len(models) < 2:
        raise ConfigError(f"ensemble needs two or more models, got {[str(m) for m in models]!r}")
    cks = [load_checkpoint(m) for m in models]
    first = cks[0].net.spec
    for m, ck in zip(models, cks, strict=True):
        spec = ck.net.spec
        if len(spec.hidden) != 1 or spec.activation != first.activation:
            raise CheckpointError(f"{str(m)!r} has a {spec} main network: an ensemble takes one-hidden-layer "
                                  f"networks of one activation ({first.activation}, as {str(models[0])!r})")
    version = max(ck.net.spec.encoding_version for ck in cks)
    nets = [widen_inputs(ck.net, version) for ck in cks]
    wide = ValueNet(ModelSpec(version, (sum(n.spec.hidden[0] for n in nets),), first.activation))
    with torch.no_grad():
        wide.body[0].weight.copy_(torch.cat([n.body[0].weight for n in nets], 0))
        wide.body[0].bias.copy_(torch.cat([n.body[0].bias for n in nets], 0))
        wide.body[-1].weight.copy_(torch.cat([n.body[-1].weight for n in nets], 1) / len(nets))
        wide.body[-1].bias.copy_(torch.stack([n.body[-1].bias for n in nets]).mean(0))
    class_nets = {k: widen_inputs(v, version) for k, v in cks[0].class_nets.items()}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    info = {"ensemble": {"models": [str(m) for m in models]}}
    save_checkpoint(out / "refined.pt", wide, class_nets=class_nets, config={**cks[0].data.get("config", {}), **info},
                    games_trained=max(int(ck.data.get("games_trained", 0)) for ck in cks), last_eval="")
    summary = {**info, "spec": str(wide.spec), "class_nets": sorted(class_nets)}
    write_text_atomic(out / "ensemble.json", json.dumps(summary, indent=1) + "\n")
    return summary


def split(model: str | Path, parts: int, out: str | Path) -> list[Path]:
    """Cut ``model``'s main network, an ensemble of ``parts`` equal members (:func:`ensemble`), into its members.

    Writes ``out/member-1.pt`` ... ``out/member-{parts}.pt``, each with ``model``'s class networks, and returns
    their paths. Member ``i`` is the wide network's ``i``-th block of hidden units with its output weights times
    ``parts``; the members' own output biases were averaged by the join, so each gets the mean bias: joined again
    they are ``model``'s network exactly, and each one alone is its member up to a constant shift of its logits
    (which a refit of the member corrects). A refit of each member apart keeps them as unlike as their
    independent starts made them, where a refit of the joined network moves them together.
    """
    ck = load_checkpoint(model)
    spec = ck.net.spec
    if isinstance(parts, bool) or not isinstance(parts, int) or parts < 2:
        raise ConfigError(f"split into {parts!r} parts: a whole number >= 2")
    if len(spec.hidden) != 1 or spec.hidden[0] % parts:
        raise CheckpointError(f"{str(model)!r} has a {spec} main network: it does not split into {parts} "
                              "equal one-hidden-layer members")
    width = spec.hidden[0] // parts
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(parts):
        member = ValueNet(dataclasses.replace(spec, hidden=(width,)))
        rows = slice(i * width, (i + 1) * width)
        with torch.no_grad():
            member.body[0].weight.copy_(ck.net.body[0].weight[rows])
            member.body[0].bias.copy_(ck.net.body[0].bias[rows])
            member.body[-1].weight.copy_(ck.net.body[-1].weight[:, rows] * parts)
            member.body[-1].bias.copy_(ck.net.body[-1].bias)
        paths.append(save_checkpoint(out / f"member-{i + 1}.pt", member, class_nets=ck.class_nets,
                                     config={**ck.data.get("config", {}), "split": {"model": str(model),
                                                                                     "member": i + 1}},
                                     games_trained=int(ck.data.get("games_trained", 0)), last_eval=""))
    return paths


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="sample self-play positions and label them at 2-ply")
    g.add_argument("--model", required=True, help="model to play and label with (.npz or .pt)")
    g.add_argument("--out", required=True)
    g.add_argument("--chunks", type=int, required=True)
    g.add_argument("--workers", type=int, default=1, help="local worker processes (default 1)")
    g.add_argument("--executor", default="local", help="local, ray, ray://HOST:PORT or HOST:PORT")
    g.add_argument("--config", help="a preset (configs/refine/*.toml); the options below override it")
    for key, val in GenerateConfig().__dict__.items():
        if isinstance(val, bool):
            g.add_argument(f"--{key.replace('_', '-')}", action="store_true", default=None)
        else:
            g.add_argument(f"--{key.replace('_', '-')}", type=type(val), default=None, help=f"default {val!r}")
    f = sub.add_parser("fit", help="fit a checkpoint to the labels")
    f.add_argument("--init", required=True)
    f.add_argument("--data", required=True, nargs="+")
    f.add_argument("--out", required=True)
    f.add_argument("--config", help="a preset (configs/refine/*.toml); the options below override it")
    for key, val in FitConfig().__dict__.items():
        if isinstance(val, bool):
            f.add_argument(f"--{key.replace('_', '-')}", action="store_true", default=None)
        else:
            f.add_argument(f"--{key.replace('_', '-')}", type=type(val), default=None, help=f"default {val!r}")
    f.add_argument("--weights", type=float, nargs="+", help="one loss weight per --data folder (default 1 each)")
    a = sub.add_parser("average", help="the weighted mean of networks of one family")
    a.add_argument("--models", required=True, nargs="+", help="torch checkpoints (.pt) of one network shape")
    a.add_argument("--weights", type=float, nargs="+", help="one positive weight per model (default equal)")
    a.add_argument("--out", required=True, help="folder for refined.pt and average.json")
    a.add_argument("--class-nets-from", default="", help="take the class networks from this checkpoint instead")
    e = sub.add_parser("ensemble", help="several networks as one wide network averaging their logits")
    e.add_argument("--models", required=True, nargs="+", help="torch checkpoints (.pt), one hidden layer each")
    e.add_argument("--out", required=True, help="folder for refined.pt and ensemble.json")
    sp = sub.add_parser("split", help="an ensemble's main network cut into its equal members")
    sp.add_argument("--model", required=True, help="torch checkpoint (.pt) whose main network is an ensemble")
    sp.add_argument("--parts", required=True, type=int, help="how many equal members it joins")
    sp.add_argument("--out", required=True, help="folder for member-1.pt ...")
    args = ap.parse_args(argv)
    if args.cmd == "split":
        print(json.dumps([str(p) for p in split(args.model, args.parts, args.out)], indent=1))
        return
    if args.cmd == "ensemble":
        print(json.dumps(ensemble(args.models, args.out), indent=1))
        return
    if args.cmd == "average":
        print(json.dumps(average(args.models, args.weights, args.out, args.class_nets_from), indent=1))
        return
    gen_cfg, fit_cfg = load_preset(args.config) if args.config else (GenerateConfig(), FitConfig())
    if args.cmd == "generate":
        given = {k: getattr(args, k) for k in GenerateConfig().__dict__ if getattr(args, k) is not None}
        cfg = dataclasses.replace(gen_cfg, **given)
        generate(args.model, args.out, args.chunks, cfg, executor=args.executor, workers=args.workers)
    else:
        given = {k: getattr(args, k) for k in FitConfig().__dict__ if getattr(args, k) is not None}
        fc = dataclasses.replace(fit_cfg, **given)
        summary = fit(args.init, args.data, args.out, epochs=fc.epochs, lr=fc.lr, batch=fc.batch,
                      holdout=fc.holdout, seed=fc.seed, weights=args.weights, net_name=fc.net, fresh=fc.fresh,
                      fresh_seed=fc.fresh_seed, class_nets_from=fc.class_nets_from, widen=fc.widen,
                      rank=fc.rank, encoding=fc.encoding, from_main=fc.from_main, keep=fc.keep,
                      schedule=fc.schedule)
        print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    from training.cli import run

    run(main, "training.refine")
