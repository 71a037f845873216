"""Fast cubeless duels between in-process players, many games in lock-step.

A *chooser* picks one move per game for a whole batch at once::

    chooser(before (G, 26), succ (M, 26), parent (M,)) -> (G,) indices into succ

``before`` are the positions before the move (mover on roll), ``succ`` every
legal result from the opponent's view and ``parent`` the row of ``before`` each
came from (the output of :func:`bgbot.rules.movegen.successors_batch`).  Choosers are
defined with the search (:mod:`bgbot.engine.search`).

Duels use **duplicate dice**: game pair ``k`` is played twice with the same
dice sequence and the seats swapped, so each player gets the rolls the other
had; the statistics are taken over pairs.  (Cube play and external engines
are in :mod:`bgbot.play.pit`; both play what :mod:`bgbot.play.table` plays,
this module many games at a time.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from tqdm import tqdm

from bgbot.engine.search import Chooser, greedy_chooser, random_chooser
from bgbot.eval.evaluate import terminal_probs
from bgbot.rules.dice import reroll_opening_doubles
from bgbot.rules.movegen import successors_batch
from bgbot.rules.position import Position

DUEL_MAX_TURNS = 2000  # a duel game still running after this many turns counts as a draw (dice are drawn ahead)


@dataclass(frozen=True)
class DuelResult:
    """Statistics of a duplicate-dice duel, all from player A's view."""

    games: int
    ppg: float  # points per game for A
    se: float  # standard error of ppg, from the duplicate pairs
    win_rate: float
    gammon_rate: float  # share of games A won with a gammon or backgammon
    backgammon_rate: float
    lose_gammon_rate: float
    mean_turns: float

    def as_dict(self) -> dict[str, float]:
        """The fields as a dict (for JSON logs)."""
        return dict(self.__dict__)

    def __str__(self) -> str:
        return (
            f"{self.games} games: {self.ppg:+.3f} ppg (se {self.se:.3f}), win {100 * self.win_rate:.1f}%, "
            f"gammons won {100 * self.gammon_rate:.1f}% lost {100 * self.lose_gammon_rate:.1f}%"
        )


def _opening_and_dice(rng: np.random.Generator, pairs: int) -> NDArray[np.int8]:
    dice = rng.integers(1, 7, size=(pairs, DUEL_MAX_TURNS, 2)).astype(np.int8)
    reroll_opening_doubles(rng, dice[:, 0], np.ones(pairs, dtype=bool))  # in place: a view of the first rolls
    return dice


def duel(
    a: Chooser,
    b: Chooser,
    pairs: int,
    *,
    seed: int = 0,
    backgammon_counts: int = 3,
    progress: bool = False,
) -> DuelResult:
    """Play ``2 * pairs`` cubeless games of A against B with duplicate dice; results from A's view."""
    if pairs < 1:
        raise ValueError(f"pairs must be >= 1, got {pairs!r}")
    rng = np.random.default_rng(seed)
    dice = _opening_and_dice(rng, pairs)
    n = 2 * pairs
    boards = np.tile(np.asarray(Position.start().board, dtype=np.int8), (n, 1))
    pair = np.arange(n) // 2
    a_first = np.arange(n) % 2 == 0
    points_a = np.zeros(n)
    turns = np.zeros(n, dtype=np.int64)
    live = np.ones(n, dtype=bool)
    bar = tqdm(total=n, desc="duel", unit="game", disable=not progress, leave=False)
    for t in range(DUEL_MAX_TURNS):
        idx = np.flatnonzero(live)
        if idx.size == 0:
            break
        a_moves = a_first[idx] == (t % 2 == 0)
        succ, parent = successors_batch(boards[idx], dice[pair[idx], t].astype(np.int64))
        choice = np.empty(idx.size, dtype=np.int64)
        for mover_is_a, chooser in ((True, a), (False, b)):
            sel = np.flatnonzero(a_moves == mover_is_a)
            if sel.size == 0:
                continue
            rows = np.flatnonzero(np.isin(parent, sel))
            remap = np.full(idx.size, -1, dtype=np.int64)
            remap[sel] = np.arange(sel.size)
            pick = chooser(boards[idx[sel]], succ[rows], remap[parent[rows]])
            choice[sel] = rows[pick]
        new = succ[choice]
        boards[idx] = new
        turns[idx] += 1
        done, probs = terminal_probs(new)
        if done.any():
            fin = idx[done]
            p = probs[done]  # from the loser's view (the side now on roll)
            pts = 1 + p[:, 3] + p[:, 4] * (1.0 if backgammon_counts == 3 else 0.0)
            mover_was_a = a_moves[done]
            points_a[fin] = np.where(mover_was_a, pts, -pts)
            live[fin] = False
            bar.update(int(done.sum()))
    bar.close()
    if live.any():
        raise RuntimeError(f"{int(live.sum())} games did not end within {DUEL_MAX_TURNS} turns")
    pair_pts = points_a.reshape(pairs, 2).mean(axis=1)
    se = float(pair_pts.std(ddof=1) / np.sqrt(pairs)) if pairs > 1 else float("nan")
    return DuelResult(
        games=n,
        ppg=float(points_a.mean()),
        se=se,
        win_rate=float((points_a > 0).mean()),
        gammon_rate=float((points_a >= 2).mean()),
        backgammon_rate=float((points_a >= 3).mean()),
        lose_gammon_rate=float((points_a <= -2).mean()),
        mean_turns=float(turns.mean()),
    )


__all__ = ["DUEL_MAX_TURNS", "Chooser", "DuelResult", "duel", "greedy_chooser", "random_chooser"]
