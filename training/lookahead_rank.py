"""The sibling loss at 2-ply: fit the network so that its 2-ply values of a roll's plays order them as deeper labels do.

:func:`training.refine.sibling_loss` fits the network's own (1-ply) value of each play; a 2-ply player
never reads that value directly: it reads, for each play, the mean over the opponent's 21 rolls of
the network's value of the position after the opponent's best reply.  This module fits exactly that
quantity.  For each labelled play (a group of a label folder made with ``candidates``, e.g.
``configs/refine/3ply-rank.toml``'s 3-ply sibling labels) the opponent's best reply to each of the
21 rolls is found once with the starting network at 1-ply (as 2-ply play finds it, bear-offs from the
database) and then held fixed; the play's 2-ply equity is the roll-weighted mean of the network's
equity of those 21 positions (from the mover's view, who is on roll there), differentiable in the
network's weights (made consistent, as play reads them).  Replies that end the game, bear-offs and
positions another class network answers keep their fixed values.  The loss is
:func:`lookahead_sibling_loss`: the squared deviation, within its roll, of each play's 2-ply equity
minus its label's equity, plus the cross-entropy of the plays' own (1-ply) values against their
labels, which keeps the network's values calibrated.

    python -m training.lookahead_rank --config configs/refine/3ply-lookahead.toml \
        --init checkpoints/bgbot-default.pt --data runs/rank3 --out runs/fit-la

The preset's ``[lookahead]`` table holds :class:`LookaheadConfig`'s keys; an option given on the
command line (``--epochs``, ``--lr``, ``--weight``, ``--holdout-chunks``, ...) overrides it.

The replies are computed once per run and cached in ``OUT/replies.npz`` (rebuilt when the data, the
start or the held-out chunks change); the best held-out epoch is written as ``OUT/refined.pt``
(``python -m training.ship OUT --refined`` publishes it) and the history as ``OUT/fit.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import numpy as np
import torch
from numpy.typing import NDArray
from tqdm import tqdm

from bgbot.engine.search import BearoffEvaluator, best_plays
from bgbot.errors import BgbotError, CheckpointError, ConfigError
from bgbot.eval.encoding import encode
from bgbot.eval.evaluate import NetEvaluator, equity, terminal_probs
from bgbot.eval.models import load_model
from bgbot.eval.nets import ValueNet, load_checkpoint, save_checkpoint, set_torch_threads
from bgbot.fileio import atomic_open, write_text_atomic
from bgbot.rules.dice import ROLL_WEIGHTS
from training.refine import _rows_of, _torch_equity, _weighted_bce, load_chunks, load_groups, preset_tables

N_ROLLS = len(ROLL_WEIGHTS)


@dataclass(frozen=True)
class LookaheadConfig:
    """A 2-ply sibling fit's settings: the ``[lookahead]`` table of a preset (``configs/refine/3ply-lookahead.toml``).

    ``holdout_chunks`` ``"FIRST-LAST"`` are scored every epoch and not trained on; ``weight`` multiplies
    the 2-ply sibling loss against the rows' cross-entropy (with Adam, any weight from about 100 up
    fits alike: the sibling term's gradient then dominates and the step size is ``lr``'s); ``anchor``
    multiplies :func:`anchor_loss` (0: off).
    """

    holdout_chunks: str = ""
    anchor: float = 0.0
    epochs: int = 6
    lr: float = 3e-4
    groups_per_batch: int = 32
    weight: float = 100.0
    seed: int = 1


def load_lookahead_preset(path: str | Path) -> LookaheadConfig:
    """The ``[lookahead]`` table of the TOML preset ``path`` (a ``description`` string may sit beside it).

    An unknown table or key, a wrong type or a file that is not TOML is a :class:`ConfigError` quoting it.
    """
    from bgbot.config import build_config

    table = preset_tables(path, ("lookahead",))["lookahead"]
    return build_config(LookaheadConfig, table, source=f"preset {str(path)!r} [lookahead]")


@dataclass
class ReplySet:
    """Labelled plays with the opponent's fixed best replies, everything a fit of :func:`lookahead_sibling_loss` reads.

    ``boards`` ``(n, 26)`` are the positions after each play (the opponent's view, on roll), ``labels``
    their deeper probabilities (the same view), ``groups`` number each row's roll ``0 .. G-1``.
    ``row_done`` marks plays that end the game (their value is exact).  Row ``i`` not done owns the 21
    leaves ``leaf_of[i] * 21 + r`` of ``leaves``: the position after the opponent's best reply to roll
    ``r`` (the mover's view, on roll), with the starting evaluator's probabilities ``leaf_probs`` (the
    same view) and ``trainable`` marking the leaves the fitted network answers.
    """

    boards: NDArray[np.int8]
    labels: NDArray[np.float32]
    groups: NDArray[np.int64]
    row_main: NDArray[np.bool_]
    row_done: NDArray[np.bool_]
    leaf_of: NDArray[np.int64]
    leaves: NDArray[np.int8]
    leaf_probs: NDArray[np.float32]
    trainable: NDArray[np.bool_]

    def take(self, rows: NDArray[np.int64]) -> ReplySet:
        """The rows ``rows`` (sorted) with their leaves, groups renumbered ``0 .. G-1``."""
        live = rows[~self.row_done[rows]]
        leaf_idx = (self.leaf_of[live][:, None] * N_ROLLS + np.arange(N_ROLLS)).ravel()
        leaf_of = np.full(len(rows), -1, dtype=np.int64)
        leaf_of[~self.row_done[rows]] = np.arange(len(live))
        return ReplySet(
            self.boards[rows], self.labels[rows], np.unique(self.groups[rows], return_inverse=True)[1],
            self.row_main[rows], self.row_done[rows], leaf_of, self.leaves[leaf_idx], self.leaf_probs[leaf_idx],
            self.trainable[leaf_idx])


def build_replies(init: str | Path, boards: NDArray[np.int8], labels: NDArray[np.float32], groups: NDArray[np.int64],
                  *, batch: int = 2048, progress: bool = True) -> ReplySet:
    """Each play's 21 best replies by ``init``'s 1-ply (as 2-ply play chooses them) and their fixed values."""
    model = load_model(init)
    evaluator = BearoffEvaluator(NetEvaluator(model.net))
    class_nets = load_checkpoint(init).class_nets
    done, _ = terminal_probs(boards)
    live = np.flatnonzero(~done)
    leaves = np.empty((len(live) * N_ROLLS, 26), dtype=np.int8)
    probs = np.empty((len(live) * N_ROLLS, 5), dtype=np.float32)
    for lo in tqdm(range(0, len(live), batch), desc="best replies", unit="batch", disable=not progress):
        rows = live[lo : lo + batch]
        succ, v = best_plays(evaluator, boards[rows])
        leaves[lo * N_ROLLS : (lo + len(rows)) * N_ROLLS] = succ
        probs[lo * N_ROLLS : (lo + len(rows)) * N_ROLLS] = v
    leaf_done, _ = terminal_probs(leaves)
    trainable = _rows_of(leaves, "main", class_nets) & ~leaf_done
    leaf_of = np.full(len(boards), -1, dtype=np.int64)
    leaf_of[live] = np.arange(len(live))
    return ReplySet(boards, labels.astype(np.float32), np.unique(groups, return_inverse=True)[1],
                    _rows_of(boards, "main", class_nets), done, leaf_of, leaves, probs, trainable)


def consistent(p: torch.Tensor) -> torch.Tensor:
    """:func:`~bgbot.eval.evaluate.make_consistent` in torch: ``wbg <= wg <= w``, ``lbg <= lg <= 1 - w``."""
    w = p[:, 0]
    wg = torch.minimum(p[:, 1], w)
    lg = torch.minimum(p[:, 3], 1.0 - w)
    return torch.stack([w, wg, torch.minimum(p[:, 2], wg), lg, torch.minimum(p[:, 4], lg)], dim=1)


def two_ply_equity(net: ValueNet, s: ReplySet, version: int) -> torch.Tensor:
    """Each row's 2-ply cubeless equity **from the opponent's view** (on roll there), differentiable in ``net``."""
    leaf_p = torch.from_numpy(s.leaf_probs.astype(np.float32))
    if s.trainable.any():
        idx = torch.from_numpy(np.flatnonzero(s.trainable))
        p = consistent(torch.sigmoid(net(torch.from_numpy(encode(s.leaves[s.trainable], version)))))
        leaf_p = leaf_p.index_put((idx,), p)
    mover = _torch_equity(leaf_p).reshape(-1, N_ROLLS) @ torch.from_numpy(ROLL_WEIGHTS.astype(np.float32))
    out = torch.from_numpy(equity(terminal_probs(s.boards)[1]).astype(np.float32))
    live = torch.from_numpy(np.flatnonzero(~s.row_done))
    return out.index_put((live,), -mover[torch.from_numpy(s.leaf_of[~s.row_done])])


def lookahead_sibling_loss(net: ValueNet, s: ReplySet, version: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Summed over rows: the within-roll squared deviation of 2-ply minus label equity; the rows' cross-entropy.

    The cross-entropy (the network's 1-ply probabilities of the plays the fitted network answers
    against their labels, mean of five outputs a row) is summed too; divide both by the rows.
    """
    d = two_ply_equity(net, s, version) - _torch_equity(torch.from_numpy(s.labels))
    g = torch.from_numpy(s.groups)
    n_groups = int(s.groups.max()) + 1 if len(s.groups) else 0
    size = torch.zeros(n_groups).index_add_(0, g, torch.ones_like(d))
    mean = torch.zeros(n_groups).index_add_(0, g, d) / size
    sib = ((d - mean[g]) ** 2).sum()
    main = s.row_main & ~s.row_done
    if not main.any():
        return sib, torch.zeros(())
    x = torch.from_numpy(encode(s.boards[main], version))
    y = torch.from_numpy(s.labels[main])
    bce = _weighted_bce(net(x), y, torch.ones(len(y))) * float(main.sum())
    return sib, bce


def _net_equity(net: ValueNet, boards: NDArray[np.int8], version: int) -> torch.Tensor:
    """``net``'s cubeless equity of ``boards`` (each from its side on roll's view), made consistent as play reads it."""
    return _torch_equity(consistent(torch.sigmoid(net(torch.from_numpy(encode(boards, version))))))


def anchor_loss(net: ValueNet, s: ReplySet, version: int, row_ref: NDArray[np.float32]) -> torch.Tensor:
    """How far ``net`` has moved from the starting network, summed over rows: squared equity change.

    Each row the main network answers counts its own (1-ply) equity's change from ``row_ref`` (the
    starting network's equity of ``s.boards``, the opponent's view) plus the mean over its 21 leaves of
    theirs from ``s.leaf_probs`` (the mover's view).  Weighted into the fit, it keeps 1-ply choices and
    the values cube decisions read near the start while the 2-ply sibling loss reorders plays.
    """
    total = torch.zeros(())
    main = s.row_main & ~s.row_done
    if main.any():
        now = _net_equity(net, s.boards[main], version)
        total = total + ((now - torch.from_numpy(row_ref[main])) ** 2).sum()
    if s.trainable.any():
        now = _net_equity(net, s.leaves[s.trainable], version)
        ref = torch.from_numpy(equity(s.leaf_probs[s.trainable]).astype(np.float32))
        total = total + ((now - ref) ** 2).sum() / N_ROLLS
    return total


def _chunk_range(text: str) -> tuple[int, int]:
    try:
        lo, _, hi = text.partition("-")
        a, b = int(lo), int(hi or lo)
    except ValueError:
        raise ConfigError(f"--holdout-chunks {text!r}: give FIRST-LAST chunk numbers, e.g. 141-160") from None
    if a < 0 or b < a:
        raise ConfigError(f"--holdout-chunks {text!r}: FIRST-LAST with 0 <= FIRST <= LAST")
    return a, b


def _load_replies(init: str | Path, data: str | Path, cache: Path,
                  progress: bool) -> tuple[ReplySet, NDArray[np.int64]]:
    boards, labels, chunk = load_chunks(data)
    groups = load_groups(data)
    key = hashlib.sha256(Path(init).read_bytes() + boards.tobytes() + labels.tobytes()).hexdigest()[:16]
    if cache.exists():
        with np.load(cache, allow_pickle=False) as z:
            if str(z["key"]) == key:
                s = ReplySet(**{f: z[f] for f in ReplySet.__dataclass_fields__})
                return s, chunk
    s = build_replies(init, boards, labels, groups, progress=progress)
    with atomic_open(cache, "wb") as f:
        np.savez(f, key=np.array(key), **{k: getattr(s, k) for k in ReplySet.__dataclass_fields__})
    return s, chunk


def fit(init: str | Path, data: str | Path, out: str | Path, *, holdout_chunks: str,
        epochs: int = LookaheadConfig.epochs, lr: float = LookaheadConfig.lr,
        groups_per_batch: int = LookaheadConfig.groups_per_batch, weight: float = LookaheadConfig.weight,
        anchor: float = LookaheadConfig.anchor, seed: int = LookaheadConfig.seed, threads: int = 2,
        cache: str | Path | None = None, progress: bool = True) -> dict[str, object]:
    """Fit ``init``'s main network with :func:`lookahead_sibling_loss` (``weight`` times it plus the cross-entropy,
    plus ``anchor`` times :func:`anchor_loss`).

    Chunks ``holdout_chunks`` (``"FIRST-LAST"``) of ``data`` are held out and scored every epoch; the
    epoch with the least held-out combined loss is written to ``out/refined.pt``.  The replies are
    cached in ``cache`` (default ``out/replies.npz``; fits of one start and one folder can share it).
    """
    if not (np.isfinite(weight) and weight >= 0):
        raise ConfigError(f"--weight {weight!r}: the 2-ply sibling loss's weight is a number >= 0")
    if not (np.isfinite(anchor) and anchor >= 0):
        raise ConfigError(f"--anchor {anchor!r}: the anchor's weight is a number >= 0")
    lo, hi = _chunk_range(holdout_chunks)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if threads:
        set_torch_threads(threads)
    torch.manual_seed(seed)
    start = load_checkpoint(init)
    net, class_nets = start.net, dict(start.class_nets)
    version = net.spec.encoding_version
    s, chunk = _load_replies(init, data, Path(cache) if cache else out / "replies.npz", progress)
    hold = (chunk >= lo) & (chunk <= hi)
    if not hold.any() or hold.all():
        raise ConfigError(f"--holdout-chunks {holdout_chunks!r}: holds {int(hold.sum())} of {len(hold)} rows; "
                          "choose chunks that exist and leave some to train on")
    row_ref = np.zeros(len(s.boards), dtype=np.float32)
    if anchor:
        with torch.inference_mode():
            row_ref = _net_equity(net, s.boards, version).numpy().astype(np.float32)
    test = s.take(np.flatnonzero(hold))
    train = s.take(np.flatnonzero(~hold))
    test_ref, train_ref = row_ref[hold], row_ref[~hold]
    rng = np.random.default_rng(seed)
    opt = torch.optim.Adam(net.parameters(), lr=lr)

    def held_out() -> dict[str, float]:
        net.eval()
        with torch.inference_mode():
            sib, bce = lookahead_sibling_loss(net, test, version)
            anc = anchor_loss(net, test, version, test_ref).item() if anchor else 0.0
        n = len(test.boards)
        return {"holdout_sibling2": sib.item() / n, "holdout_bce": bce.item() / n, "holdout_anchor": anc / n,
                "holdout_loss": (weight * sib.item() + bce.item() + anchor * anc) / n}

    history: list[dict[str, float]] = [{"epoch": 0, **held_out()}]
    best = history[0]["holdout_loss"]
    n_groups = int(train.groups.max()) + 1
    row_order = np.argsort(train.groups, kind="stable")
    first = np.searchsorted(train.groups[row_order], np.arange(n_groups + 1))
    for ep in range(1, epochs + 1):
        net.train()
        perm = rng.permutation(n_groups)
        total = 0.0
        bar = tqdm(range(0, n_groups, groups_per_batch), desc=f"fit epoch {ep}", unit="batch",
                   disable=not progress, leave=False)
        for b in bar:
            gs = perm[b : b + groups_per_batch]
            rows = np.sort(np.concatenate([row_order[first[g] : first[g + 1]] for g in gs]))
            batch = train.take(rows)
            sib, bce = lookahead_sibling_loss(net, batch, version)
            loss = weight * sib + bce
            if anchor:
                loss = loss + anchor * anchor_loss(net, batch, version, train_ref[rows])
            loss = loss / len(rows)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.item() * len(rows)
        rec = {"epoch": ep, "train_loss": total / len(train.boards), **held_out()}
        history.append(rec)
        print(json.dumps(rec), flush=True)
        if rec["holdout_loss"] < best:
            best = rec["holdout_loss"]
            save_checkpoint(
                out / "refined.pt", net, class_nets=class_nets, config={**start.data.get("config", {}), "refined": {
                    "init": str(init), "data": [str(data)], "holdout_chunks": holdout_chunks, "epochs": ep, "lr": lr,
                    "groups_per_batch": groups_per_batch, "loss": "lookahead_sibling", "weight": weight,
                    "anchor": anchor,
                    "positions": len(train.boards), "seed": seed}},
                games_trained=int(start.data.get("games_trained", 0)), last_eval="")
    summary = {"init": str(init), "data": str(data), "positions_train": len(train.boards),
               "positions_holdout": len(test.boards), "history": history, "best_holdout_loss": best}
    write_text_atomic(out / "fit.json", json.dumps(summary, indent=1) + "\n")
    if not (out / "refined.pt").exists():
        raise CheckpointError(f"no epoch improved the held-out loss of {str(init)!r}: nothing written")
    return summary


def main(argv: list[str] | None = None) -> None:
    """``python -m training.lookahead_rank``: see the module's docstring."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", help="a preset with a [lookahead] table (configs/refine/3ply-lookahead.toml)")
    ap.add_argument("--init", required=True, help="the checkpoint to start from (and to choose the replies)")
    ap.add_argument("--data", required=True, help="a label folder stored by roll (generate with candidates)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--holdout-chunks", help="FIRST-LAST chunk numbers scored, not trained on")
    ap.add_argument("--epochs", type=int)
    ap.add_argument("--lr", type=float)
    ap.add_argument("--groups-per-batch", type=int)
    ap.add_argument("--weight", type=float, help="the 2-ply sibling loss's weight against the cross-entropy")
    ap.add_argument("--anchor", type=float, help="weight of the squared equity change from the start (0: off)")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cache", default="", help="where the replies are cached (default OUT/replies.npz)")
    args = ap.parse_args(argv)
    try:
        cfg = load_lookahead_preset(args.config) if args.config else LookaheadConfig()
        given = {f.name: getattr(args, f.name) for f in fields(LookaheadConfig) if getattr(args, f.name) is not None}
        cfg = replace(cfg, **given)
        if not cfg.holdout_chunks:
            raise ConfigError("no held-out chunks: give --holdout-chunks FIRST-LAST or a preset that sets them")
        fit(args.init, args.data, args.out, **asdict(cfg), threads=args.threads, cache=args.cache or None)
    except BgbotError as e:
        raise SystemExit(f"error: {e}") from None


if __name__ == "__main__":
    main()
