"""``bgbot label``: find positions worth labelling, roll each out, and add the labels to the bank.

One shard at a time (:mod:`bgbot.labels.bank`), shard ``k`` of seed ``s``:

1. **Positions** (:func:`sample_pool`), from the view of the side on roll before its roll, seeded by
   ``(s, k)``: the model plays games at 1-ply in lock-step, a share of them against pubeval (another
   style of play, so other positions) and with a share of random moves; each position is kept with a
   probability weighted by :func:`interest`, toward where a network is least sure (crashed boards,
   holding and back games, primes; races and plain contact less); and for some kept positions the roll's
   three best plays by 1-ply are looked at 2-ply, and where the two disagree both plays are kept
   ("disputed": what a 1-ply player gets wrong).  Finished games, exact bear-offs and positions the bank
   holds already are left out.
2. **Labels** (:func:`label_task`): every ``batch`` positions are one executor task
   (:mod:`bgbot.engine.executor`: local processes or Ray), a cubeless rollout of each with 1-ply play,
   dice of its own (:func:`bgbot.engine.rollout.rollout_probs`), its first roll stratified and its luck
   subtracted; the label is the mean of the trials and its standard error.  Task ``b``'s rollout seed
   is :func:`batch_seed` ``(s, k, b)``, so a label depends only on its task's positions, the model and
   that seed (and, with ``row_by_row``, on its own position only): :func:`verify` makes it again.
3. **Shards** are cut every ``shard_minutes`` (and at the end of the budget, or on Ctrl-C / SIGTERM):
   the labelled prefix of the shard's positions is written atomically, then listed in the manifest.  A
   kill -9 loses at most the shard in progress.  The next run goes on with the next shard number.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as _dt
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from bgbot.errors import ConfigError, LabelBankError, is_interrupt, quote_input
from bgbot.labels.bank import (
    SOURCES,
    adopt_orphans,
    bank_ids,
    label_truncation,
    read_manifest,
    read_shard,
    shard_meta,
    shard_name,
    write_shard,
)

__all__ = ["LabelSettings", "batch_seed", "generate", "interest", "label_task", "sample_pool", "verify"]

TASK_KIND = "bgbot.labels.generate:label_task"
MAX_TURNS = 400


@dataclass(frozen=True)
class LabelSettings:
    """How positions are found and labelled (stored with every shard).  Bad values are ConfigErrors.

    Rollouts: ``trials`` a position (a multiple of 36: the first roll is stratified), ``truncate`` plies
    before the network values the leaf (0: to the end; exact bear-offs always end a trial), ``luck``
    (variance reduction).  Positions: ``pool`` sampled a shard, ``batch`` a task, ``keep`` the base
    probability of keeping a position (times :func:`interest`), ``explore`` the share of random moves,
    ``pubeval_share`` of games against pubeval, ``mine_share`` of kept positions whose roll is
    searched for a 1-ply / 2-ply disagreement, ``only`` a class to keep alone.  ``crashed_truncate`` and
    ``race_truncate`` are the truncation of those classes' rollouts.
    """

    # 36 trials truncated after 7 plies, without luck adjustment: 21 times cheaper than luck-adjusted ones and
    # 7 times noisier (se 0.085 against 0.012), and what a network fitted to them learns per CPU-second is far
    # more: benchmarks/label_value.py (BENCHMARKS.md, "Label bank")
    trials: int = 36
    truncate: int = 7
    # crashed positions are rolled out to the end: their network is the one furthest from rollouts
    # (docs/calibration.png), and a crashed position stays crashed for many plies, so a truncated rollout would
    # keep its bias; a shard made before this setting existed truncated them as the rest ("from_meta")
    crashed_truncate: int = 0
    # races are rolled out to the end too: a race soon reaches the bear-off database, so such a label costs less
    # than a truncated contact one (0.0044 CPU s) and holds no network value at a leaf; a shard made before this
    # setting existed truncated them as the rest
    race_truncate: int = 0
    # keep only positions of this class ("contact", "crashed", "race"; "" any): a labeller for one network
    only: str = ""
    luck: bool = False
    batch: int = 32
    pool: int = 32768  # about five minutes of labels without luck adjustment (LUCK_POOL with it)
    keep: float = 0.04
    explore: float = 0.02
    pubeval_share: float = 0.25
    mine_share: float = 0.25
    parallel: int = 64
    # every network answer its row's alone (bgbot.eval.evaluate.row_by_row), so that a task's first rows label
    # alike alone; the default pass (each row's first layer from the previous row's) is 1.4 times faster and a
    # row then labels alike in its whole task.  Shards made before the faster pass existed are row by row.
    row_by_row: bool = False

    def __post_init__(self) -> None:
        for name, lo in (("trials", 36), ("truncate", 0), ("crashed_truncate", 0), ("race_truncate", 0),
                         ("batch", 1), ("pool", 1), ("parallel", 2)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise ConfigError(f"label {name} must be a whole number >= {lo}, got {quote_input(v)}")
        if self.trials % 36:
            raise ConfigError(f"label trials {self.trials!r} must be a multiple of 36 (the first roll is stratified)")
        for name in ("keep", "explore", "pubeval_share", "mine_share"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0.0 <= v <= 1.0:
                raise ConfigError(f"label {name} must be a number from 0 to 1, got {quote_input(v)}")
        if self.keep == 0:
            raise ConfigError("label keep must be above 0 (no position would ever be kept)")
        if self.only not in ONLY_CLASSES:
            raise ConfigError(f"label only must be one of {', '.join(map(repr, ONLY_CLASSES))}, got "
                              f"{quote_input(self.only)}")
        for name in ("luck", "row_by_row"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"label {name} must be True or False, got {quote_input(getattr(self, name))}")


#: the classes a labeller may keep alone (``LabelSettings.only``; "" keeps every class)
ONLY_CLASSES = ("", "contact", "crashed", "race")

#: the pool of a shard of luck-adjusted labels (about five minutes of them on one core)
LUCK_POOL = 2048


def settings_from_meta(settings: dict[str, Any]) -> LabelSettings:
    """The :class:`LabelSettings` a shard's manifest entry records (settings added since take their old meaning)."""
    if not isinstance(settings, dict):
        raise LabelBankError(f"a shard's settings are {quote_input(settings)}, not a table")
    known = {f.name for f in dataclasses.fields(LabelSettings)}
    unknown = set(settings) - known
    if unknown:
        raise LabelBankError(f"a shard's settings name {sorted(unknown)}, which this bgbot does not know")
    old = settings.get("truncate", 7)
    return LabelSettings(**{"crashed_truncate": old, "race_truncate": old, "row_by_row": True, **settings})


def batch_seed(seed: int, shard: int, batch: int) -> int:
    """The rollout seed of task ``batch`` of shard ``shard`` of seed ``seed``."""
    return int(np.random.SeedSequence([seed, shard, batch, 0x1AB]).generate_state(1)[0])


def _pack(a: NDArray[Any]) -> dict[str, Any]:
    return {"dtype": a.dtype.str, "shape": list(a.shape), "data": base64.b64encode(np.ascontiguousarray(a).tobytes())
            .decode()}


def _unpack(d: dict[str, Any]) -> NDArray[Any]:
    dtype = np.dtype(str(d["dtype"]))
    if dtype.kind not in "iuf":
        raise ConfigError(f"a label task carries {dtype}, not numbers")
    return np.frombuffer(base64.b64decode(d["data"]), dtype=dtype).reshape(d["shape"]).copy()


# ---------------------------------------------------------------------------
# positions
# ---------------------------------------------------------------------------


def interest(boards: NDArray[np.int8]) -> NDArray[np.float64]:
    """How much more often a position is kept than plain contact: ``(N,)`` weights.

    Rows ``(N, 26)`` from the side on roll's view.  Crashed boards 3, back games (a side holding two
    or more points in the other's home board) 4, holding games (one side escaped, the other keeping two
    or more back) 3, primes (four or more points in a row with an opposing checker behind them) 2, races
    0.5, other contact 1; the largest that applies.
    """
    from bgbot.rules.position import PositionClass, classify_boards

    b = boards.astype(np.int16)
    cls = classify_boards(boards)
    w = np.where(cls == PositionClass.RACE, 0.5, 1.0)
    contact = (cls == PositionClass.CONTACT) | (cls == PositionClass.CRASHED)
    w = np.where(cls == PositionClass.CRASHED, 3.0, w)
    mine = b[:, 1:25] >= 2  # my made points 1..24
    theirs = b[:, 1:25] <= -2
    my_back_points = mine[:, 18:24].sum(axis=1)  # my anchors in their home board (my 19-24)
    their_back_points = theirs[:, 0:6].sum(axis=1)
    back_game = (my_back_points >= 2) | (their_back_points >= 2)
    my_back = np.clip(b[:, 19:26], 0, None).sum(axis=1)
    their_back = np.clip(-b[:, 0:7], 0, None).sum(axis=1)
    holding = ((my_back == 0) & (their_back >= 2)) | ((their_back == 0) & (my_back >= 2))
    prime = np.zeros(len(b), dtype=bool)
    idx = np.arange(1, 25)
    for made, side in ((mine, 1), (theirs, -1)):
        run = np.zeros(len(b), dtype=np.int64)
        best = np.zeros(len(b), dtype=np.int64)
        hi = np.zeros(len(b), dtype=np.int64)  # the highest point of each row's longest run of made points
        for p in range(24):
            run = np.where(made[:, p], run + 1, 0)
            better = run > best
            best = np.where(better, run, best)
            hi = np.where(better, p + 1, hi)
        lo = hi - best + 1
        if side == 1:  # their checkers move up my numbering: trapped below my prime, or on their bar
            behind = ((b[:, 1:25] < 0) & (idx[None, :] < lo[:, None])).any(axis=1) | (b[:, 0] < 0)
        else:  # mine move down: trapped above their prime, or on my bar
            behind = ((b[:, 1:25] > 0) & (idx[None, :] > hi[:, None])).any(axis=1) | (b[:, 25] > 0)
        prime |= (best >= 4) & behind
    w = np.where(contact & prime, np.maximum(w, 2.0), w)
    w = np.where(contact & holding, np.maximum(w, 3.0), w)
    w = np.where(contact & back_game, np.maximum(w, 4.0), w)
    return w


def _disputed_plays(evaluator: Any, succ: NDArray[np.int8], parent: NDArray[np.int64], rows: NDArray[np.int64],
                    ) -> NDArray[np.int64]:
    """For the games ``rows``, the successors (indices into ``succ``) of rolls whose 1- and 2-ply best differ.

    ``succ`` are the plays (each from the opponent's view, before its roll) of every game's roll; for each
    game of ``rows`` with at least two plays, its three best by 1-ply are looked one roll ahead; where
    the best by that 2-ply value is not the 1-ply best, both are returned.
    """
    from bgbot.engine.search import lookahead_probs
    from bgbot.eval.evaluate import equity

    want = np.isin(parent, rows)
    idx = np.flatnonzero(want)
    if idx.size == 0:
        return idx
    v1 = -equity(evaluator(succ[idx]))
    order = idx[np.lexsort((-v1, parent[idx]))]
    p = parent[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = p[1:] != p[:-1]
    start = np.maximum.accumulate(np.where(first, np.arange(len(order)), 0))
    rank = np.arange(len(order)) - start
    n_plays = np.bincount(parent)[p]
    top = order[(rank < 3) & (n_plays > 1)]
    if top.size == 0:
        return top
    v2 = -equity(lookahead_probs(evaluator, succ[top], 1))
    tp = parent[top]
    out: list[int] = []
    for g in np.unique(tp):
        members = np.flatnonzero(tp == g)  # best by 1-ply first
        best2 = members[int(np.argmax(v2[members]))]
        if best2 != members[0]:
            out += [int(top[members[0]]), int(top[best2])]
    return np.array(out, dtype=np.int64)


def advance_games(succ: NDArray[np.int8], parent: NDArray[np.int64], value: NDArray[np.float64],
                  turn: NDArray[np.int64], explore: float, rng: np.random.Generator, start: NDArray[np.int8],
                  ) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
    """One move of lock-step games: ``(boards, turn)`` after each game plays its best play by ``value``.

    ``succ`` are every game's plays (each from the opponent's view), ``parent`` their game, ``value`` their
    worth to the mover; a share ``explore`` of the games plays a random play instead.  A game that ended, or
    ran :data:`MAX_TURNS` turns, starts again from ``start`` (turn 0).
    """
    from bgbot.eval.evaluate import segment_argmax, terminal_probs

    g = len(turn)
    wild = rng.random(g) < explore
    value = np.where(wild[parent], rng.random(len(value)), value)
    boards = succ[segment_argmax(value, parent, g)]
    turn = turn + 1
    ended, _ = terminal_probs(boards)
    ended |= turn >= MAX_TURNS
    boards[ended] = start
    turn[ended] = 0
    return boards, turn


def sample_pool(evaluator: Any, settings: LabelSettings, rng: np.random.Generator, skip: set[str] | None = None,
                ) -> tuple[NDArray[np.int8], NDArray[np.str_], NDArray[np.int8]]:
    """``settings.pool`` distinct positions to label: ``(boards (N, 26), position IDs, source codes)``.

    Each position is from its side on roll's view, before its roll; none is finished, an exact bear-off
    or in ``skip`` (Position IDs), and with ``settings.only`` each is of that class.  The order is shuffled
    by ``rng`` (any prefix is a fair sample).
    """
    from bgbot.eval import pubeval
    from bgbot.eval.evaluate import equity, terminal_probs
    from bgbot.rules.dice import reroll_opening_doubles
    from bgbot.rules.movegen import successors_batch
    from bgbot.rules.position import Position, PositionClass, classify_boards, gnubg_position_id

    db = evaluator.db
    g = settings.parallel
    start = np.asarray(Position.start().board, dtype=np.int8)
    boards = np.tile(start, (g, 1))
    turn = np.zeros(g, dtype=np.int64)
    vs_pub = rng.random(g) < settings.pubeval_share
    pub_side = rng.integers(0, 2, size=g)
    skip = skip if skip is not None else set()
    seen: dict[str, tuple[NDArray[np.int8], int]] = {}

    only = PositionClass[settings.only.upper()] if settings.only else None

    def add(rows: NDArray[np.int8], source: int) -> None:
        done, _ = terminal_probs(rows)
        rows = rows[~done & ~db.is_bearoff(rows)]
        if only is not None:
            rows = rows[classify_boards(rows) == only]
        for r in rows:
            pid = gnubg_position_id(Position(r.tolist(), validate=False))
            if pid not in skip and pid not in seen:
                seen[pid] = (r.copy(), source)

    steps = 0
    while len(seen) < settings.pool:
        steps += 1
        if steps > 200 * settings.pool:
            raise ConfigError(f"found only {len(seen)} new positions to label in {steps} game steps")
        pub_turn = vs_pub & ((turn % 2) == pub_side)
        keep = rng.random(g) < settings.keep * interest(boards)
        if keep.any():
            add(boards[keep & pub_turn], SOURCES.index("pubeval"))
            add(boards[keep & ~pub_turn], SOURCES.index("selfplay"))
        dice = reroll_opening_doubles(rng, rng.integers(1, 7, size=(g, 2)), turn == 0)
        succ, parent = successors_batch(boards, dice)
        value = -equity(evaluator(succ))
        if pub_turn.any():
            pv = pubeval.scores(boards, succ, parent)
            value = np.where(pub_turn[parent], pv, value)
        mine = np.flatnonzero(keep & ~pub_turn & (rng.random(g) < settings.mine_share))
        if mine.size:
            add(succ[_disputed_plays(evaluator, succ, parent, mine)], SOURCES.index("disputed"))
        boards, turn = advance_games(succ, parent, value, turn, settings.explore, rng, start)
    ids = list(seen)
    order = rng.permutation(len(ids))[: settings.pool]
    out_ids = np.array([ids[i] for i in order], dtype="<U14")
    out_boards = np.stack([seen[ids[i]][0] for i in order]).astype(np.int8)
    out_src = np.array([seen[ids[i]][1] for i in order], dtype=np.int8)
    return out_boards, out_ids, out_src


# ---------------------------------------------------------------------------
# labels
# ---------------------------------------------------------------------------


def rollout_settings(settings: LabelSettings, seed: int) -> Any:
    """The cubeless 1-ply rollout that labels one task seeded ``seed``."""
    from bgbot.engine.rollout import RolloutSettings

    return RolloutSettings(trials=settings.trials, ply=1, truncate=settings.truncate, cubeful=False,
                           luck=settings.luck, stratify=36, seed=seed, trials_per_task=settings.trials,
                           stop_at_bearoff=True)


def row_truncation(settings: LabelSettings, cls: NDArray[Any]) -> NDArray[np.int64]:
    """Each row's rollout truncation (plies before the network values the leaf; 0: to the end) by its class."""
    return label_truncation(dataclasses.asdict(settings), cls)


def label_task(evaluator: Any, payload: dict[str, Any], seed: int) -> dict[str, Any]:
    """An executor task: roll out ``payload['boards']`` (each before its side on roll rolls) with ``seed``.

    Returns the packed ``probs`` (N, 5) of each row's side on roll, ``se`` (N,) of its cubeless equity,
    and the CPU seconds it took.
    """
    from bgbot.engine.rollout import rollout_probs
    from bgbot.eval.evaluate import row_by_row
    from bgbot.rules.position import classify_boards

    settings = settings_from_meta(payload["settings"])
    if settings.row_by_row:  # each evaluation its row's alone, bit for bit, whatever else the batch holds
        evaluator = row_by_row(evaluator)
    boards = _unpack(payload["boards"]).astype(np.int8)
    t0 = time.process_time()
    probs = np.zeros((len(boards), 5), dtype=np.float32)
    se = np.zeros(len(boards), dtype=np.float32)
    truncate = row_truncation(settings, classify_boards(boards))
    # one rollout for each truncation (rows of equal truncation together, whatever their class); each part keeps
    # its rows' order, so a row's dice (its place among its part's rows) are those of any prefix
    for t in np.unique(truncate):
        rows = truncate == t
        if rows.any():
            part = dataclasses.replace(settings, truncate=int(t))
            p, e = rollout_probs(evaluator, boards[rows], rollout_settings(part, seed), dice_per_row=True,
                                 with_se=True)
            probs[rows], se[rows] = p, e
    return {"probs": _pack(probs), "se": _pack(se), "cpu_seconds": time.process_time() - t0}


# ---------------------------------------------------------------------------
# the generator
# ---------------------------------------------------------------------------


def _model(model: str | Path | None) -> tuple[Any, Any]:
    """``(numpy net, blob)`` of the labelling model (default the shipped one)."""
    from bgbot.engine.executor import ModelBlob
    from bgbot.eval.models import load_model

    net = load_model(model).net
    return net, ModelBlob.from_net(net, bearoff=True)


def _next_shard(bank: Path, seed: int) -> int:
    taken = [int(e.get("shard", -1)) for e in read_manifest(bank)["shards"] if int(e.get("seed", -1)) == seed]
    return max(taken, default=-1) + 1


def generate(
    bank: str | Path,
    minutes: float,
    *,
    settings: LabelSettings | None = None,
    model: str | Path | None = None,
    seed: int = 1,
    workers: int = 1,
    executor: str = "local",
    shard_minutes: float = 5.0,
    max_shards: int | None = None,
    command: str | None = None,
    progress: bool = True,
    clock: Callable[[], float] = time.monotonic,
) -> list[dict[str, Any]]:
    """Label positions for ``minutes`` of wall-clock time (or ``max_shards`` shards); returns the new entries.

    Shards of ``seed`` go on from the bank's last one (a resumed day makes new shards, never the same
    ones twice).  Ctrl-C or SIGTERM (as KeyboardInterrupt) writes what is labelled and re-raises.
    """
    from tqdm import tqdm

    from bgbot.engine.executor import Task, run_tasks
    from bgbot.engine.search import BearoffEvaluator
    from bgbot.eval.evaluate import NetEvaluator
    from bgbot.rules.position import classify_boards

    st = settings or LabelSettings()
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0 or seed >= 10**8:
        raise ConfigError(f"label seed must be a whole number from 0 to 99999999, got {quote_input(seed)}")
    if not (isinstance(minutes, int | float) and minutes > 0):
        raise ConfigError(f"--minutes must be a positive number, got {quote_input(minutes)}")
    b = Path(bank)
    b.mkdir(parents=True, exist_ok=True)
    adopt_orphans(b)
    net, blob = _model(model)
    evaluator = BearoffEvaluator(NetEvaluator(net))
    skip = bank_ids(b)
    end = clock() + 60.0 * minutes
    written: list[dict[str, Any]] = []
    shard = _next_shard(b, seed)
    bar = tqdm(unit="label", desc="label", disable=not progress, total=None)
    try:
        while clock() < end and (max_shards is None or len(written) < max_shards):
            rng = np.random.default_rng([seed, shard])
            t0, t_sample = time.monotonic(), time.process_time()
            boards, ids, source = sample_pool(evaluator, st, rng, skip)
            sample_cpu = time.process_time() - t_sample
            tasks = [Task(TASK_KIND, blob.hash, {"boards": _pack(boards[i:i + st.batch]),
                                                 "settings": dataclasses.asdict(st)}, batch_seed(seed, shard, k))
                     for k, i in enumerate(range(0, len(boards), st.batch))]
            cut = min(end, clock() + 60.0 * shard_minutes)
            done: dict[int, dict[str, Any]] = {}
            cpu = 0.0
            interrupted: BaseException | None = None
            results = run_tasks(tasks, blob, executor=executor, workers=workers, inline=workers == 1)
            try:
                for k, r in results:
                    done[k] = r
                    cpu += float(r["cpu_seconds"])
                    bar.update(st.batch)
                    if clock() >= cut:
                        break
            except (KeyboardInterrupt, SystemError) as exc:
                if not is_interrupt(exc):
                    raise
                interrupted = exc
            finally:
                results.close()  # type: ignore[attr-defined]
            n_batches = 0
            while n_batches in done:
                n_batches += 1
            n = min(len(boards), n_batches * st.batch)
            if n:
                probs = np.concatenate([_unpack(done[k]["probs"]) for k in range(n_batches)]).astype(np.float32)
                se = np.concatenate([_unpack(done[k]["se"]) for k in range(n_batches)]).astype(np.float32)
                arrays = {"position_id": ids[:n], "board": boards[:n], "probs": probs[:n], "se": se[:n],
                          "trials": np.full(n, st.trials, np.int32), "cls": classify_boards(boards[:n]),
                          "source": source[:n]}
                entry = {
                    "file": shard_name(seed, shard), "kind": "rollout", "settings": dataclasses.asdict(st),
                    "model_sha256": blob.hash, "seed": seed, "shard": shard,
                    "command": command or " ".join(["bgbot", *sys.argv[1:]]),
                    "created": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "wall_seconds": round(time.monotonic() - t0, 1), "cpu_seconds": round(cpu, 1),
                    # finding the pool's positions (this process), apart from labelling them (cpu_seconds)
                    "sample_cpu_seconds": round(sample_cpu * n / len(boards), 3),
                }
                written.append(write_shard(b, arrays, entry))
                skip.update(str(s) for s in ids[:n])
            shard += 1
            if interrupted is not None:
                raise interrupted
    finally:
        bar.close()
    return written


def verify(bank: str | Path, shard_file: str | Path, first: int, *, model: str | Path | None = None,
           ) -> tuple[int, float]:
    """Label the first ``first`` rows of a shard again from its provenance: ``(rows compared, max difference)``.

    The shard is found as given or inside ``bank``; where the manifest lists it, its SHA-256 is checked
    first.  ``model`` must be the network that made it (default the shipped one; its hash is compared with
    the shard's ``model_sha256``).  The labels are equal when the difference is 0.0.
    """
    from bgbot.engine.executor import net_hash
    from bgbot.engine.search import BearoffEvaluator
    from bgbot.eval.evaluate import NetEvaluator
    from bgbot.eval.models import load_model

    path = Path(shard_file)
    if not path.exists() and (Path(bank) / path.name).exists():
        path = Path(bank) / path.name
    listed = {e["file"]: e for e in read_manifest(path.parent)["shards"]}
    arrays = read_shard(path, listed[path.name]["sha256"] if path.name in listed else None)
    meta = shard_meta(arrays, repr(str(path)))
    if isinstance(first, bool) or not isinstance(first, int) or first < 1:
        raise ConfigError(f"--first must be a whole number >= 1, got {quote_input(first)}")
    net = load_model(model).net  # labelled here, in this process: its hash is all of a blob verify needs
    made_here = net_hash(net)
    if made_here != meta.get("model_sha256"):
        made_by = str(meta.get("model_sha256"))[:16]
        raise LabelBankError(f"label shard {str(path)!r} was made by the model {made_by}..., "
                             f"not by {str(model or 'the shipped model')!r} ({made_here[:16]}...): give --model")
    st = settings_from_meta(meta["settings"])
    n = min(first, len(arrays["position_id"]))
    evaluator = BearoffEvaluator(NetEvaluator(net))
    probs: list[NDArray[np.float32]] = []
    ses: list[NDArray[np.float32]] = []
    for k, i in enumerate(range(0, n, st.batch)):
        # a row's dice depend on its seed and place in its task only: where the network runs row by row, the
        # first rows of a task are labelled alone exactly as in the whole task; else the whole task is labelled
        stop = min(n, i + st.batch) if st.row_by_row else min(len(arrays["board"]), i + st.batch)
        payload = {"boards": _pack(arrays["board"][i:stop]), "settings": dataclasses.asdict(st)}
        r = label_task(evaluator, payload, batch_seed(int(meta["seed"]), int(meta["shard"]), k))
        probs.append(_unpack(r["probs"]))
        ses.append(_unpack(r["se"]))
    p = np.concatenate(probs)[:n]
    s = np.concatenate(ses)[:n]
    diff = max(float(np.abs(p - arrays["probs"][:n]).max()), float(np.abs(s - arrays["se"][:n]).max()))
    return n, diff
