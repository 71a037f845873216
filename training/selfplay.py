"""Self-play TD(lambda) training, many games in lock-step.

Read top to bottom:

1. ``parallel_games`` games advance together.  Each step rolls dice for every
   game, generates every legal result of every game in one
   :func:`~bgbot.rules.movegen.successors_batch` call, evaluates all of them in one
   forward pass and lets each game's mover play its best result (1-ply greedy;
   with probability ``explore`` a random legal move instead).
2. A finished game's positions get **forward-view lambda-returns**, computed
   backwards from the real outcome (single, gammon and backgammon each feed
   their own outputs)::

       G_{T-1} = outcome seen by the last mover
       G_t     = flip((1 - lam) * V(s_{t+1}) + lam * G_{t+1})

   where ``V`` is the current network on the game's positions (each from its
   own side on roll) and ``flip`` turns the five probabilities to the other
   side.  This is the offline lambda-return algorithm, which equals offline
   TD(lambda) with eligibility traces; it is used instead of per-game traces
   because traces would need a per-game copy of every weight and a per-sample
   gradient at every ply, while lambda-returns turn learning into plain
   batched regression that torch does fast.
3. (position, lambda-return) pairs gather in a buffer; once it holds
   ``min_batch`` positions it is shuffled and consumed in minibatches of 256
   Adam steps on the binary cross-entropy between the network's sigmoid
   outputs and the returns (its gradient is the TD error times the gradient
   of the logit, as in Tesauro's update).  The step size decays linearly
   from ``lr`` to ``lr_final`` over ``games``.
4. Every ``eval_every`` games the network plays a duplicate-dice duel against
   pubeval; every ``checkpoint_every`` games (and at the end, and on Ctrl-C
   or SIGTERM, which stop the run between two steps, never inside one)
   everything, live games included, is saved atomically, so ``--resume``
   continues with exactly the games an uninterrupted run would have played.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path
from typing import Any

import numba as nb
import numpy as np
import torch
from numpy.typing import NDArray
from tqdm import tqdm

from bgbot.config import config_to_dict
from bgbot.engine.search import greedy_chooser, move_values
from bgbot.errors import CheckpointError, ConfigError, is_interrupt
from bgbot.eval import pubeval
from bgbot.eval.encoding import encode
from bgbot.eval.evaluate import NetEvaluator, segment_argmax, terminal_probs
from bgbot.eval.nets import ModelSpec, ValueNet, load_checkpoint, save_checkpoint, set_torch_threads, widen_inputs
from bgbot.fileio import write_text_atomic
from bgbot.play.duel import duel
from bgbot.rules.dice import reroll_opening_doubles
from bgbot.rules.movegen import successors_batch
from bgbot.rules.position import Position
from training.config import TrainConfig

MINIBATCH = 256
START = np.asarray(Position.start().board, dtype=np.int8)


@nb.njit(cache=True)
def lambda_returns(
    values: NDArray[np.float32], starts: NDArray[np.int64], lengths: NDArray[np.int64],
    outcomes: NDArray[np.float32], lam: float,
) -> NDArray[np.float32]:
    """Forward-view lambda-returns for concatenated games (see the module docstring).

    ``values[i]`` is the network's view of position i from its own side on
    roll; ``outcomes[g]`` the final result from the view of game g's last mover.
    """
    out = np.empty_like(values)
    for g in range(starts.shape[0]):
        s = starts[g]
        n = lengths[g]
        for k in range(5):
            out[s + n - 1, k] = outcomes[g, k]
        for t in range(s + n - 2, s - 1, -1):
            mix = np.empty(5, dtype=np.float32)
            for k in range(5):
                mix[k] = (1.0 - lam) * values[t + 1, k] + lam * out[t + 1, k]
            out[t, 0] = 1.0 - mix[0]
            out[t, 1] = mix[3]
            out[t, 2] = mix[4]
            out[t, 3] = mix[1]
            out[t, 4] = mix[2]
    return out


def _initial_net(cfg: TrainConfig) -> ValueNet:
    """The weights of ``cfg.init_from``, widened to ``cfg.encoding_version`` (``CheckpointError`` if unfit)."""
    start = load_checkpoint(cfg.init_from).net
    if tuple(start.spec.hidden) != tuple(cfg.hidden) or start.spec.activation != cfg.activation:
        raise CheckpointError(
            f"init_from {cfg.init_from!r} has hidden {list(start.spec.hidden)} / {start.spec.activation}, "
            f"the config asks for {list(cfg.hidden)} / {cfg.activation}"
        )
    return widen_inputs(start, cfg.encoding_version).train()


class Trainer:
    """One self-play run: network, optimizer, RNG and the live games."""

    def __init__(self, cfg: TrainConfig, out_dir: str | Path, *, fresh: bool = True) -> None:
        self.cfg = cfg
        self.out_dir = Path(out_dir)
        if cfg.threads:
            set_torch_threads(cfg.threads)
        torch.manual_seed(cfg.seed)
        self.net = ValueNet(ModelSpec(cfg.encoding_version, tuple(cfg.hidden), cfg.activation))
        if cfg.init_from and fresh:  # a resumed run takes its weights from its checkpoint instead
            self.net = _initial_net(cfg)
        self.evaluator = NetEvaluator(self.net)  # the evaluator search and play use, on the live weights
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg.lr)
        self.rng = np.random.default_rng(cfg.seed)
        g = cfg.parallel_games
        self.boards = np.tile(START, (g, 1))
        self.ply = np.zeros(g, dtype=np.int64)
        self.traj = np.zeros((g, cfg.max_turns, 26), dtype=np.int8)
        self.buf_x: list[NDArray[np.int8]] = []
        self.buf_y: list[NDArray[np.float32]] = []
        self.games_done = 0
        self.positions_trained = 0
        self.updates = 0
        self.abandoned = 0
        self.elapsed = 0.0
        self.last_eval: dict[str, Any] | None = None

    # ---- persistence --------------------------------------------------
    @classmethod
    def resume(cls, path: str | Path, out_dir: str | Path, overrides: dict[str, Any] | None = None) -> Trainer:
        """Rebuild a trainer from a checkpoint written by :meth:`save` (``CheckpointError`` if unusable)."""
        model = load_checkpoint(path)
        data = model.data
        if "trainer" not in data or "config" not in data:
            raise CheckpointError(f"checkpoint {str(path)!r} has no trainer state to resume from")
        from bgbot.config import build_config

        if not isinstance(data["config"], dict) or not isinstance(data["trainer"], dict):
            raise CheckpointError(f"checkpoint {str(path)!r} has a damaged config or trainer state")
        cfg = build_config(TrainConfig, {**data["config"], **(overrides or {})}, source=f"checkpoint {str(path)!r}")
        t = cls(cfg, out_dir, fresh=False)
        try:
            t._restore(model.net, data["trainer"], path)
        except CheckpointError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, RuntimeError) as exc:
            msg = " ".join(str(exc).split())[:200]
            raise CheckpointError(
                f"checkpoint {str(path)!r} has a damaged trainer state ({type(exc).__name__}: {msg})"
            ) from None
        return t

    def _restore(self, net: ValueNet, st: dict[str, Any], path: str | Path) -> None:
        """Take the weights, optimizer, RNG and live games of a checkpoint's trainer state ``st``."""
        t, cfg = self, self.cfg
        t.net.load_state_dict(net.state_dict())
        t.net.train()
        t.opt.load_state_dict(st["optimizer"])
        t.rng.bit_generator.state = json.loads(st["rng"])
        if st["boards"].shape[0] != cfg.parallel_games:
            raise CheckpointError(
                f"checkpoint {str(path)!r} holds {st['boards'].shape[0]} live games, config asks for "
                f"{cfg.parallel_games}: parallel_games cannot change on resume"
            )
        t.boards = st["boards"].numpy().astype(np.int8)
        t.ply = st["ply"].numpy().astype(np.int64)
        traj = st["traj"].numpy().astype(np.int8)
        t.traj[:, : traj.shape[1]] = traj
        t.buf_x = [st["buf_x"].numpy().astype(np.int8)] if len(st["buf_x"]) else []
        t.buf_y = [st["buf_y"].numpy().astype(np.float32)] if len(st["buf_y"]) else []
        for key in ("games_done", "positions_trained", "updates", "abandoned"):
            setattr(t, key, int(st[key]))
        t.elapsed = float(st["elapsed"])
        t.last_eval = json.loads(st["last_eval"]) if st.get("last_eval") else None
        g = cfg.parallel_games
        shapes_ok = (
            t.boards.shape == (g, 26) and t.ply.shape == (g,) and traj.ndim == 3 and traj.shape[0] == g
            and traj.shape[1] <= cfg.max_turns and traj.shape[2] == 26 and bool((t.ply >= 0).all())
            and bool((t.ply < cfg.max_turns).all()) and all(x.ndim == 2 and x.shape[1] == 26 for x in t.buf_x)
            and all(y.ndim == 2 and y.shape[1] == 5 for y in t.buf_y)
            and sum(len(x) for x in t.buf_x) == sum(len(y) for y in t.buf_y)
        )
        sides = [np.clip(s, 0, None).sum(axis=-1) for s in (t.boards, -t.boards)]
        if not shapes_ok or any(int(n.max(initial=0)) > 15 for n in sides) or t.games_done < 0:
            raise CheckpointError(f"checkpoint {str(path)!r} has a damaged trainer state (live games out of shape)")

    def save(self, path: str | Path) -> Path:
        """Write everything needed to continue exactly, atomically."""
        longest = int(self.ply.max()) if self.ply.size else 0
        bx = np.concatenate(self.buf_x) if self.buf_x else np.zeros((0, 26), np.int8)
        by = np.concatenate(self.buf_y) if self.buf_y else np.zeros((0, 5), np.float32)
        trainer = {
            "optimizer": self.opt.state_dict(),
            "rng": json.dumps(self.rng.bit_generator.state),
            "boards": torch.from_numpy(self.boards.copy()),
            "ply": torch.from_numpy(self.ply.copy()),
            "traj": torch.from_numpy(self.traj[:, :longest].copy()),
            "buf_x": torch.from_numpy(bx),
            "buf_y": torch.from_numpy(by),
            "games_done": self.games_done,
            "positions_trained": self.positions_trained,
            "updates": self.updates,
            "abandoned": self.abandoned,
            "elapsed": self.elapsed,
            "last_eval": json.dumps(self.last_eval) if self.last_eval else "",
        }
        return save_checkpoint(
            path, self.net, config=config_to_dict(self.cfg), games_trained=self.games_done, trainer=trainer,
            last_eval=json.dumps(self.last_eval) if self.last_eval else "",
        )

    # ---- the loop -----------------------------------------------------
    def _roll(self) -> NDArray[np.int64]:
        dice = self.rng.integers(1, 7, size=(self.cfg.parallel_games, 2))
        return reroll_opening_doubles(self.rng, dice, self.ply == 0)  # a game's first roll is the opening roll

    def step(self) -> int:
        """Advance every game by one move; returns the number of games that finished."""
        cfg = self.cfg
        dice = self._roll()
        succ, parent = successors_batch(self.boards, dice)  # (M, 26) opponent's view, (M,)
        value = move_values(self.evaluator, succ)  # (M,) for the mover, as every bgbot player values a move
        done_rows, exact = terminal_probs(succ)
        if cfg.explore > 0:
            wild = self.rng.random(cfg.parallel_games) < cfg.explore
            value = np.where(wild[parent], self.rng.random(len(value)), value)
        choice = segment_argmax(value, parent, cfg.parallel_games)
        g = np.arange(cfg.parallel_games)
        self.traj[g, self.ply] = self.boards
        self.ply += 1
        new = succ[choice]
        finished = done_rows[choice]
        too_long = ~finished & (self.ply >= cfg.max_turns)
        if finished.any():
            fin = np.flatnonzero(finished)
            loser = exact[choice[fin]]  # from the loser's view
            outcome = np.zeros((fin.size, 5), dtype=np.float32)
            outcome[:, 0] = 1.0
            outcome[:, 1] = loser[:, 3]
            outcome[:, 2] = loser[:, 4]
            self._learn_from(fin, outcome)
        if too_long.any():
            self.abandoned += int(too_long.sum())
        ended = finished | too_long
        self.boards = np.where(ended[:, None], START, new).astype(np.int8)
        self.ply[ended] = 0
        n_fin = int(finished.sum())
        self.games_done += n_fin
        if sum(len(b) for b in self.buf_x) >= cfg.min_batch:
            self._update()
        return n_fin

    def _learn_from(self, games: NDArray[np.int64], outcome: NDArray[np.float32]) -> None:
        lengths = self.ply[games].astype(np.int64)
        states = np.concatenate([self.traj[gi, :n] for gi, n in zip(games, lengths, strict=True)])
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        with torch.inference_mode():
            values = self.net.forward_probs(torch.from_numpy(encode(states, self.cfg.encoding_version))).numpy()
        targets = lambda_returns(values, starts, lengths, outcome, np.float32(self.cfg.lam))
        self.buf_x.append(states)
        self.buf_y.append(targets)

    def _update(self) -> None:
        cfg = self.cfg
        xs = np.concatenate(self.buf_x)
        ys = np.concatenate(self.buf_y)
        self.buf_x, self.buf_y = [], []
        order = self.rng.permutation(len(xs))
        frac = min(1.0, self.games_done / max(cfg.games, 1))
        lr = cfg.lr + (cfg.lr_final - cfg.lr) * frac
        for group in self.opt.param_groups:
            group["lr"] = lr
        loss_fn = torch.nn.BCEWithLogitsLoss(reduction="sum")
        self.net.train()
        for lo in range(0, len(order), MINIBATCH):
            sel = order[lo : lo + MINIBATCH]
            x = torch.from_numpy(encode(xs[sel], cfg.encoding_version))  # (B, NUM_INPUTS)
            y = torch.from_numpy(ys[sel])  # (B, 5)
            loss = loss_fn(self.net(x), y) / len(sel)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            self.updates += 1
        self.positions_trained += len(xs)

    def evaluate(self) -> dict[str, Any]:
        """Duplicate-dice duel of the current network (1-ply) against pubeval."""
        self.net.eval()
        res = duel(greedy_chooser(self.evaluator), pubeval.choose, self.cfg.eval_pairs,
                   seed=self.cfg.seed + 7919)
        self.net.train()
        return {"games_trained": self.games_done, "vs": "pubeval", **res.as_dict()}

    def train(self, until: int | None = None, *, progress: bool = True) -> None:
        """Play until ``until`` games (default: the config's ``games``), logging and checkpointing."""
        cfg = self.cfg
        until = cfg.games if until is None else until
        self.out_dir.mkdir(parents=True, exist_ok=True)
        ckpt = self.out_dir / "checkpoint.pt"
        metrics = self.out_dir / "metrics.jsonl"
        bar = tqdm(total=until, initial=min(self.games_done, until), unit="game", desc="self-play",
                   disable=not progress, smoothing=0.05)
        t0 = time.perf_counter()
        base_elapsed = self.elapsed
        games_at_start = self.games_done
        whole = True  # between two steps: a checkpoint of the trainer now resumes bit for bit
        stop = _StopBetweenSteps()
        try:
            with stop:
                while self.games_done < until and stop.requested is None:
                    before = self.games_done
                    whole = False
                    n = self.step()
                    whole = True
                    self.elapsed = base_elapsed + time.perf_counter() - t0
                    bar.update(min(n, until - before))
                    last_evaluated = (self.last_eval or {}).get("games_trained")
                    if _crossed(before, self.games_done, cfg.eval_every) or (
                        self.games_done >= until and cfg.eval_every and last_evaluated != self.games_done
                    ):
                        self.last_eval = self.evaluate()
                        self._log(metrics, games_at_start, t0)
                        from training.plots import plot_learning_curve

                        plot_learning_curve(metrics, self.out_dir / "learning_curve.png")
                        bar.set_postfix_str(f"ppg {self.last_eval['ppg']:+.3f}±{self.last_eval['se']:.3f}")
                    if _crossed(before, self.games_done, cfg.checkpoint_every):
                        self.save(ckpt)
        except (KeyboardInterrupt, SystemError) as exc:
            if is_interrupt(exc):
                bar.write("interrupted: saving a checkpoint to resume from" if whole else
                          f"interrupted within a step: the last whole checkpoint {str(ckpt)!r} stays")
            raise
        finally:
            bar.close()
            if whole:  # a step cut short (a second signal, an error) would resume into other games: not saved
                self.save(ckpt)
        if stop.requested is not None:
            bar.write(f"{stop.requested}: stopped after {self.games_done} games; {str(ckpt)!r} resumes from there")
            raise KeyboardInterrupt

    def _log(self, metrics: Path, games_at_start: int, t0: float) -> None:
        run_time = time.perf_counter() - t0
        rec = {
            **(self.last_eval or {}),
            "positions_trained": self.positions_trained,
            "updates": self.updates,
            "elapsed_s": round(self.elapsed, 1),
            "games_per_hour": round(3600 * (self.games_done - games_at_start) / max(run_time, 1e-9)),
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        with metrics.open("a") as f:
            f.write(json.dumps(rec) + "\n")


class _StopBetweenSteps:
    """Ctrl-C and SIGTERM during training stop it between two steps, never inside one.

    Handled as an exception wherever it lands, a signal could cut a step short: the dice rolled (the RNG
    moved on) but the games not moved, or the buffer emptied into a half-done pass of Adam steps.  A
    checkpoint of that state resumes into other games than the uninterrupted run plays.  While this is
    entered (in the main thread; elsewhere signals stay as they are) the first SIGINT or SIGTERM only sets
    :attr:`requested` (the signal's name), which the loop reads after each step; a second one raises
    ``KeyboardInterrupt`` at once, and the trainer then keeps its last whole checkpoint, as after kill -9.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.requested: str | None = None
        self._before: dict[int, Any] = {}

    def __enter__(self) -> _StopBetweenSteps:
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                self._before[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: object) -> None:
        if self.requested is not None:
            raise KeyboardInterrupt
        self.requested = signal.Signals(signum).name

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._before.items():
            signal.signal(sig, handler)
        self._before.clear()


def _crossed(before: int, after: int, every: int) -> bool:
    """Whether a multiple of ``every`` lies in ``(before, after]`` (never for ``every == 0``)."""
    return every > 0 and before // every != after // every


RUN_FILES = ("checkpoint.pt", "metrics.jsonl", "learning_curve.png")


def prepare_run_dir(out_dir: str | Path, *, fresh: bool, force: bool = False, games_done: int = 0) -> Path:
    """Make ``out_dir`` ready for a run; nothing a run wrote is lost by accident.

    A fresh run refuses a folder that already holds a run (``ConfigError``
    saying how to resume it) unless ``force``, which removes that run's files.
    A resumed run keeps only the metrics rows up to the checkpoint it resumes
    from (``games_done``): the games after it are played again, identically, and
    logged again.  Temporary files left by a save that was killed are removed.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for tmp in out.glob("*.pt.*.tmp"):
        tmp.unlink(missing_ok=True)
    existing = [f for f in RUN_FILES if (out / f).exists()]
    if fresh and existing:
        if not force:
            raise ConfigError(
                f"{str(out)!r} already holds a run ({', '.join(existing)}): resume it with "
                f"--resume {out / 'checkpoint.pt'}, choose another --out, or start over with --force"
            )
        for f in existing:
            (out / f).unlink()
    metrics = out / "metrics.jsonl"
    if not fresh and metrics.exists():
        rows = [line for line in metrics.read_text().splitlines() if line.strip()]
        keep = [line for line in rows if json.loads(line).get("games_trained", 0) <= games_done]
        if len(keep) != len(rows):
            write_text_atomic(metrics, "".join(line + "\n" for line in keep))
    return out


def run(cfg: TrainConfig, out_dir: str | Path, *, resume: str | Path | None = None, until: int | None = None,
        progress: bool = True, overrides: dict[str, Any] | None = None, force: bool = False) -> Trainer:
    """Start or resume a run and train it to ``until`` games (the entry point of ``bgbot train``)."""
    if resume is not None:
        trainer = Trainer.resume(resume, out_dir, overrides)
        prepare_run_dir(out_dir, fresh=False, games_done=trainer.games_done)
    else:
        prepare_run_dir(out_dir, fresh=True, force=force)
        trainer = Trainer(cfg, out_dir)
    print("effective config:", json.dumps(config_to_dict(trainer.cfg)), flush=True)
    trainer.train(until, progress=progress)
    return trainer


__all__ = ["Trainer", "lambda_returns", "prepare_run_dir", "run"]
