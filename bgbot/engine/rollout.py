"""Rollouts: play a position out many times and average, batched in lock-step across trials.

A rollout answers two questions (:func:`rollout`):

* **before the roll**: the five probabilities, cubeless and cubeful equity of the side on roll;
  cubeful, with the cube available, it rolls out "no double" and "double, take" side by side and
  gives the cube action they imply ("double, pass" is +1);
* **a roll's plays**: every candidate (the top N of a 1- or 2-ply pre-selection, made by the caller,
  see :meth:`bgbot.engine.api.Engine.rollout`) rolled out with the same dice, ranked by equity with
  standard errors.

Every result is from the view of the **root side**: the side on roll of the position, or the side
that makes the candidate play.  Equities are normalised to the root's cube (money: points per cube;
match: gnubg's EMG normalisation of the match winning chance, as :mod:`bgbot.engine.cube`).

How a trial is played:

* **Dice.**  Trial ``t`` draws its dice from ``numpy.random.default_rng([seed, t])``, the same dice for
  every candidate (common random numbers: the differences between candidates are much surer than their
  equities).  With ``stratify=36`` the first roll of trial ``t`` is the ``t % 36``-th of the 36 ordered
  rolls, with ``1296`` the second is the ``(t // 36) % 36``-th too, so 1296 trials hold every
  first-two-roll sequence once (gnubg's rotation of the first rolls).
* **Checker play** at ``ply`` (XG numbering, :mod:`bgbot.engine.search`), cubeless; **cube decisions**
  (cubeful rollouts) as :meth:`Engine.cube_action <bgbot.engine.api.Engine.cube_action>` makes them at
  ``ply`` (the cube model at 1-ply, the cubeful lookahead above, exact small two-sided bear-offs in money
  play) but without the engine's correction of 2-ply decisions (gnubg's figures: rollouts and their
  labels stay as they were), the taker taking when double/take is below double/pass; a pass ends the trial (its cubeless
  figures are then the evaluation at the pass).
* **Truncation** after ``truncate`` plies (0: play to the end): the leaf is valued by the evaluator
  (``ply - 1`` rolls ahead, the cubeful leaf by the cube model).  With ``stop_at_bearoff`` a trial
  reaching an exact bear-off (both sides home, in the database) stops there with the database's value.
* **Luck adjustment** (variance reduction, ``luck=True``): at each roll the luck of the roll, the
  1-ply value after the best play of the roll minus the average of that over all 21 rolls, is summed
  and subtracted from the trial's result.  Each term has mean zero given the position before the roll,
  so the estimate stays unbiased whatever the network's errors; it only removes variance.  Both the
  adjusted and the raw figures are kept, so the reduction in standard error is measured on the same
  trials (``se`` against ``se_raw``).  In cubeful trials the cubeful column is adjusted by the
  cubeless luck times the cube in play (still mean zero).

The work is cut into tasks of ``trials_per_task`` consecutive trials (:mod:`bgbot.engine.executor`),
each a lock-step batch of every candidate times its trials: one move generation and one network call a
ply for all of them.  The cut does not depend on the number of workers, and trial ``t`` is the same game
in any task, so the same seed gives the same figures on any executor.  Early stop (``se_stop``) is
decided on the first ``k`` tasks in order, so it is deterministic too.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, Unpack

import numpy as np
from numpy.typing import NDArray

from bgbot.config import check_whole_fields
from bgbot.engine.cube import (
    OWNER_COLUMNS,
    CubeDecision,
    Owner,
    _classify,
    cube_efficiencies,
    match_cube_decision,
    match_decision_from_mwcs,
    money_cube_values,
    money_decision_from_equities,
)
from bgbot.engine.cube_lookahead import exact_cube_values, lookahead_money_cubeful, match_cube_lookahead
from bgbot.engine.executor import (
    ExecutorSpec,
    Journal,
    ModelBlob,
    RunStats,
    Task,
    parse_executor,
    prepare_executor,
    run_tasks,
)
from bgbot.engine.met import MatchEquityTable
from bgbot.engine.search import (
    BearoffEvaluator,
    check_ply,
    greedy_chooser,
    lookahead_probs,
    search_chooser,
)
from bgbot.errors import ConfigError, InvalidPositionError, quote_input
from bgbot.eval.evaluate import equity, flip_probs, make_consistent, segment_argmax, terminal_probs
from bgbot.formats.ids import format_xgid
from bgbot.rules.dice import ROLL_WEIGHTS, ROLLS
from bgbot.rules.matchstate import MAX_CUBE, CubeState
from bgbot.rules.movegen import successors_batch
from bgbot.rules.position import Position, all_home

if TYPE_CHECKING:
    from bgbot.engine.search import Analysis
    from bgbot.eval.evaluate import Evaluator

__all__ = [
    "COLUMNS",
    "RolloutEntry",
    "RolloutResult",
    "RolloutSettings",
    "Start",
    "consistent_figures",
    "rollout",
    "rollout_probs",
    "rollout_task",
    "row_seed",
]

ROLLOUT_TASK = "bgbot.engine.rollout:rollout_task"
#: The figures of every trial, root side's view: five probabilities, cubeless and cubeful equity.
COLUMNS = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon", "cubeless_equity", "cubeful_equity")
ROLLOUT_MAX_TURNS = 2000  # a trial still running this long is valued as a leaf (never seen in practice)
_ROLLS_ARR = np.array(ROLLS, dtype=np.int64)
_ORDERED36 = np.array([(a, b) for a in range(1, 7) for b in range(1, 7)], dtype=np.int64)
_ROLL_INDEX = np.full((7, 7), -1, dtype=np.int64)  # (d1, d2) in either order -> index into ROLLS
for _i, (_a, _b) in enumerate(ROLLS):
    _ROLL_INDEX[_a, _b] = _ROLL_INDEX[_b, _a] = _i
EARLY = " (stopped early: se below target)"
_MONEY_NO_DOUBLE_BELOW = 0.45  # money: no model doubles at a P(win) this low, so skip the decision (speed)


@dataclass(frozen=True)
class RolloutSettings:
    """How to roll out (see the module doc).  Invalid values raise :class:`~bgbot.errors.ConfigError`.

    ``trials`` (default 1296), ``ply`` (checker play inside the rollout, 1-3), ``truncate`` (plies; 0 =
    to the end), ``cubeful``, ``luck`` (variance reduction), ``stratify`` (0, 36 or 1296 stratified first
    rolls; None: 1296 when the trials are a multiple of it, else 36 if they are, else 0; the trials must
    fill whole blocks), ``seed``, ``se_stop`` (stop once every ranked equity's standard error is below it,
    checked after each task from ``min_trials`` on), ``stop_at_bearoff``, ``trials_per_task`` (the unit
    of work handed to a worker; part of what a seed means, like ``trials``).
    """

    trials: int = 1296
    ply: int = 1
    truncate: int = 0
    cubeful: bool = True
    luck: bool = True
    stratify: int | None = None
    seed: int = 0
    se_stop: float | None = None
    min_trials: int = 144
    stop_at_bearoff: bool = True
    trials_per_task: int = 72

    def __post_init__(self) -> None:
        least = {"trials": 1, "truncate": 0, "seed": 0, "min_trials": 1, "trials_per_task": 1}
        check_whole_fields(self, "rollout", least)
        object.__setattr__(self, "ply", check_ply(self.ply))
        if self.stratify is None:  # the most the trials fill completely
            object.__setattr__(self, "stratify", next(k for k in (1296, 36, 0) if not k or self.trials % k == 0))
        if self.stratify not in (0, 36, 1296) or isinstance(self.stratify, bool):
            raise ConfigError(f"rollout stratify must be 0, 36 or 1296 first rolls, got {quote_input(self.stratify)}")
        if self.stratify and self.trials % self.stratify:
            raise ConfigError(
                f"{self.trials} trials do not fill whole blocks of {self.stratify} stratified first rolls (the "
                "figures without luck adjustment would be biased): use a multiple of it, or stratify 36 or 0"
            )
        for name in ("cubeful", "luck", "stop_at_bearoff"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"rollout {name} must be True or False, got {quote_input(getattr(self, name))}")
        s = self.se_stop
        if s is not None and (isinstance(s, bool) or not isinstance(s, int | float) or not math.isfinite(s) or s <= 0):
            raise ConfigError(f"rollout se_stop must be a positive number of equity, got {quote_input(s)}")

    def describe(self) -> str:
        """One line: trials, checker ply, truncation, cube, variance reduction, stratification, seed."""
        parts = [
            f"{self.trials} trials",
            f"checker play {self.ply}-ply",
            f"truncated after {self.truncate} plies" if self.truncate else "played to the end",
            "cubeful" if self.cubeful else "cubeless",
            "luck-adjusted" if self.luck else "no variance reduction",
            f"{self.stratify} stratified first rolls" if self.stratify else "unstratified dice",
            f"seed {self.seed}",
        ]
        if self.stop_at_bearoff:
            parts.append("exact at the bear-off database")
        if self.se_stop is not None:
            parts.append(f"stop at se < {self.se_stop}")
        return ", ".join(parts)


@dataclass(frozen=True)
class Start:
    """One position to roll out.  ``board``: the position from its side on roll (before its roll).

    ``root_on_roll``: the root side (whose view results take) is on roll (False for a candidate play's
    result, where the opponent rolls first).  ``cube``/``owner``: cube value and owner (+1 root, -1
    opponent, 0 centre) at the start; ``norm``: the cube the results are normalised to; ``no_first_double``:
    the side on roll does not double at the first turn (the "no double" line of a cube rollout).
    """

    board: tuple[int, ...]
    root_on_roll: bool
    cube: int = 1
    owner: int = 0
    norm: int = 1
    no_first_double: bool = False

    def payload(self) -> dict[str, Any]:
        """JSON-ready form (task payload)."""
        return {
            "board": list(self.board),
            "root_on_roll": self.root_on_roll,
            "cube": self.cube,
            "owner": self.owner,
            "norm": self.norm,
            "no_first_double": self.no_first_double,
        }


# ---------------------------------------------------------------------------
# the game: many trials in lock-step (runs inside a task, on a worker)
# ---------------------------------------------------------------------------


@dataclass
class _Score:
    """The match (root's view) and how results become equities; money when ``met`` is None."""

    met: MatchEquityTable | None
    away: tuple[int, int] = (0, 0)  # root, opponent
    crawford: bool = False
    jacoby: bool = False
    match: int = 0
    _cache: dict[int, float] = field(default_factory=dict)

    @property
    def post_crawford(self) -> bool:
        return not self.crawford and 1 in self.away

    def root_mwc(self, points: int) -> float:
        """The root's MWC after it wins (``points > 0``) or loses that many points."""
        v = self._cache.get(points)
        if v is None:
            assert self.met is not None
            v = self.met.mwc_after(
                self.away[0], self.away[1], points, crawford=self.crawford, post_crawford=self.post_crawford
            )
            self._cache[points] = v
        return v

    def to_eq(self, mwc: float, norm: int) -> float:
        win, lose = self.root_mwc(norm), self.root_mwc(-norm)
        return (2.0 * mwc - (win + lose)) / (win - lose) if win != lose else 0.0

    def value(self, points: int, norm: int) -> float:
        """The root's cubeful equity (normalised to ``norm``) of a game it won (> 0) or lost by ``points``."""
        if self.met is None:
            return points / norm
        return self.to_eq(self.root_mwc(points), norm)


class _Trials:
    """The state of ``S`` starts times ``T`` trials, game ``g = s * T + k``; all at the same turn."""

    def __init__(
        self,
        evaluator: Evaluator,
        starts: Sequence[Start],
        score: _Score,
        st: RolloutSettings,
        trial_ids: Sequence[int],
        seed: int,
        dice_keys: Sequence[int] | None = None,
    ) -> None:
        self.ev = evaluator
        self.st = st
        self.score = score
        s_n, t_n = len(starts), len(trial_ids)
        self.t_n = t_n
        g = s_n * t_n
        self.boards = np.repeat(np.array([s.board for s in starts], dtype=np.int8), t_n, axis=0)
        self.k_of = np.tile(np.arange(t_n), s_n)

        def rep(vals: list[Any], dt: Any) -> NDArray[Any]:
            return np.repeat(np.array(vals, dtype=dt), t_n)

        self.root_on_roll = rep([s.root_on_roll for s in starts], bool)
        self.cube = rep([s.cube for s in starts], np.int64)
        self.owner = rep([s.owner for s in starts], np.int64)
        self.norm = rep([s.norm for s in starts], np.int64)
        self.no_first = rep([s.no_first_double for s in starts], bool)
        self.raw = np.zeros((g, len(COLUMNS)))
        self.luck = np.zeros((g, len(COLUMNS)))
        self.live = np.ones(g, dtype=bool)
        self.turns = 0
        # trial t's dice are the same for every start (common random numbers: plays compared on the same
        # dice), unless ``dice_keys``: start s rolls the dice of key ``dice_keys[s]``, so starts with one key
        # share dice and starts with different keys have independent noise
        self.dice_per_start = dice_keys is not None
        if dice_keys is not None:
            if len(dice_keys) != s_n:
                raise ValueError(f"dice_keys: {len(dice_keys)} keys for {s_n} starts")
            self.rngs = [np.random.default_rng([row_seed(seed, int(key)), int(t)]) for key in dice_keys
                         for t in trial_ids]
            self.trial_ids = np.tile(np.asarray(trial_ids, dtype=np.int64), s_n)
        else:
            self.rngs = [np.random.default_rng([seed, int(t)]) for t in trial_ids]
            self.trial_ids = np.asarray(trial_ids, dtype=np.int64)
        self.dice = np.zeros((len(self.rngs), 0, 2), dtype=np.int64)
        self._more_dice(64)
        self.chooser = greedy_chooser(evaluator) if st.ply == 1 else search_chooser(evaluator, st.ply)
        self.db = evaluator.db if isinstance(evaluator, BearoffEvaluator) and st.stop_at_bearoff else None
        # money cube figures of small two-sided bear-offs are exact where the evaluator has the database
        self.exact_cube = isinstance(evaluator, BearoffEvaluator)

    def _more_dice(self, n: int) -> None:
        block = np.stack([r.integers(1, 7, size=(n, 2)) for r in self.rngs]) if self.rngs else np.zeros((0, n, 2))
        first = self.dice.shape[1] == 0
        self.dice = np.concatenate([self.dice, block.astype(np.int64)], axis=1)
        if first and self.st.stratify:
            self.dice[:, 0] = _ORDERED36[self.trial_ids % 36]
            if self.st.stratify == 1296:
                self.dice[:, 1] = _ORDERED36[(self.trial_ids // 36) % 36]

    # ---- results ----------------------------------------------------------
    def _root_view(self, idx: NDArray[np.int64], probs_sor: NDArray[np.float64]) -> NDArray[np.float64]:
        """Probabilities of the side on roll of games ``idx`` seen from each game's root."""
        p = np.asarray(probs_sor, dtype=np.float64)
        return np.where(self.root_on_roll[idx, None], p, flip_probs(p))

    def _finish(self, idx: NDArray[np.int64], probs_root: NDArray[np.float64], cubeful: Sequence[float]) -> None:
        self.raw[idx, :5] = probs_root
        self.raw[idx, 5] = equity(probs_root)
        self.raw[idx, 6] = cubeful
        self.live[idx] = False

    def _cube_view(self, g: int) -> tuple[Owner, tuple[int, int]]:
        mover = 1 if self.root_on_roll[g] else -1
        o = int(self.owner[g])
        owner: Owner = "center" if o == 0 else ("me" if o == mover else "opp")
        away = self.score.away if mover == 1 else (self.score.away[1], self.score.away[0])
        return owner, away

    def _decisions(
        self, idx: NDArray[np.int64], one_ply: NDArray[np.float64] | None = None
    ) -> tuple[NDArray[np.float64], list[CubeDecision]]:
        """The cube decisions of games ``idx``'s sides on roll at ``ply``, and their probabilities (their view).

        :meth:`Engine.cube_action <bgbot.engine.api.Engine.cube_action>`'s with ``cube_shift=NO_SHIFT``:
        the cube model at 1-ply, the cubeful lookahead (:mod:`bgbot.engine.cube_lookahead`) above, with
        the plays inside it chosen cubeless as the trials' own lookahead does; in money play small two-sided bear-offs
        are exact when the evaluator has the bear-off database.  ``one_ply``: the evaluator's
        probabilities of these boards, already computed (used at 1-ply).
        """
        boards = self.boards[idx]
        depth = self.st.ply - 1
        xs = cube_efficiencies(boards)
        sc = self.score
        out: list[CubeDecision] = []
        if depth == 0:
            probs = np.asarray(self.ev(boards) if one_ply is None else one_ply, dtype=np.float64)
        if sc.met is None:
            if depth == 0:
                nd, dt = money_cube_values(probs, xs, jacoby=sc.jacoby)
            else:  # the leaves exact where they can be; the position itself just below
                probs, nd, dt = lookahead_money_cubeful(self.ev, boards, depth, jacoby=sc.jacoby,
                                                        exact_bearoff=self.exact_cube)
            if self.exact_cube:
                exact_cube_values(boards, nd, dt)
            probs = np.clip(probs, 0.0, 1.0)
            for j, g in enumerate(idx.tolist()):
                owner, _ = self._cube_view(g)
                out.append(money_decision_from_equities(probs[j], float(nd[j, OWNER_COLUMNS.index(owner)]),
                                                        float(dt[j]), cube_value=int(self.cube[g]), owner=owner,
                                                        x=float(xs[j])))
            return probs, out
        rows = []
        for j, g in enumerate(idx.tolist()):
            owner, away = self._cube_view(g)
            common = {"met": sc.met, "match_length": sc.match, "away_me": away[0], "away_opp": away[1],
                      "cube_value": int(self.cube[g]), "owner": owner, "crawford": sc.crawford}
            if depth == 0:
                q = np.clip(probs[j], 0.0, 1.0)
                out.append(match_cube_decision(q, x=float(xs[j]), **common))  # type: ignore[arg-type]
            else:  # the lookahead's own averaged probabilities: one expansion per game
                q, nd_mwc, dt_mwc = match_cube_lookahead(self.ev, boards[j], depth, **common)  # type: ignore[arg-type]
                q = np.clip(q, 0.0, 1.0)
                out.append(match_decision_from_mwcs(q, nd_mwc, dt_mwc, x=float(xs[j]),
                                                    **common))  # type: ignore[arg-type]
            rows.append(q)
        return np.asarray(rows, dtype=np.float64).reshape(-1, 5), out

    def _leaf(self, idx: NDArray[np.int64]) -> None:
        """Value games ``idx`` where they stand (before the roll of their side on roll)."""
        if idx.size == 0:
            return
        if self.st.cubeful:
            probs, decisions = self._decisions(idx)
            root = self._root_view(idx, probs)
            cf = []
            for j, g in enumerate(idx.tolist()):
                d = decisions[j]
                sign = 1.0 if self.root_on_roll[g] else -1.0
                if self.score.met is None:
                    cf.append(sign * d.equity_optimal * self.cube[g] / self.norm[g])
                else:
                    mwc = d.mwc_optimal if sign > 0 else 1.0 - d.mwc_optimal
                    cf.append(self.score.to_eq(mwc, int(self.norm[g])))
        else:
            root = self._root_view(idx, lookahead_probs(self.ev, self.boards[idx], self.st.ply - 1))
            cf = equity(root).tolist()
        self._finish(idx, root, cf)

    def _game_over(self, idx: NDArray[np.int64], loser_probs: NDArray[np.float32]) -> None:
        """Games ``idx`` just ended: ``loser_probs`` from the view of the side now on roll (who lost)."""
        root = self._root_view(idx, loser_probs)
        if self.st.cubeful:
            kinds = (1.0 + loser_probs[:, 3] + loser_probs[:, 4]).astype(np.int64)
            cf = []
            for j, g in enumerate(idx.tolist()):
                kind = 1 if self.score.jacoby and self.owner[g] == 0 and self.score.met is None else int(kinds[j])
                pts = kind * int(self.cube[g]) * (-1 if self.root_on_roll[g] else 1)
                cf.append(self.score.value(pts, int(self.norm[g])))
        else:
            cf = equity(root).tolist()
        self._finish(idx, root, cf)

    # ---- one turn -----------------------------------------------------------
    def _cube_turn(self, idx: NDArray[np.int64]) -> None:
        mover = np.where(self.root_on_roll[idx], 1, -1)
        can = (self.owner[idx] == 0) | (self.owner[idx] == mover)
        can &= self.cube[idx] < MAX_CUBE
        if self.turns == 0:
            can &= ~self.no_first[idx]
        if self.score.crawford:
            can[:] = False
        if self.score.met is not None:  # a dead cube: the mover's current cube already gives it the match
            away = np.where(mover == 1, self.score.away[0], self.score.away[1])
            can &= self.cube[idx] < away
        sel = idx[can]
        if sel.size == 0:
            return
        one_ply = np.asarray(self.ev(self.boards[sel]), dtype=np.float64)
        if self.score.met is None:
            # no model doubles at a P(win) this low: skip those decisions (the 1-ply P(win) decides)
            keep = one_ply[:, 0] >= _MONEY_NO_DOUBLE_BELOW
            sel, one_ply = sel[keep], one_ply[keep]
        if sel.size == 0:
            return
        probs, decisions = self._decisions(sel, one_ply)
        passed: list[int] = []
        pass_rows: list[int] = []
        for j, g in enumerate(sel.tolist()):
            d = decisions[j]
            if not d.doubles:
                continue
            m = 1 if self.root_on_roll[g] else -1
            if d.takes:
                self.cube[g] *= 2
                self.owner[g] = -m
            else:
                passed.append(g)
                pass_rows.append(j)
        if passed:
            gi = np.array(passed, dtype=np.int64)
            root = self._root_view(gi, probs[pass_rows])
            cf = [
                self.score.value(int(self.cube[g]) * (1 if self.root_on_roll[g] else -1), int(self.norm[g]))
                for g in passed
            ]
            self._finish(gi, root, cf)

    def step(self) -> None:
        """Play one turn of every live game."""
        st = self.st
        idx = np.flatnonzero(self.live)
        if (st.truncate and self.turns >= st.truncate) or self.turns >= ROLLOUT_MAX_TURNS:
            self._leaf(idx)
            return
        if self.db is not None and idx.size:
            b = self.boards[idx]
            home = all_home(b)
            if home.any():
                exact = np.zeros(idx.size, dtype=bool)
                exact[home] = self.db.is_bearoff(b[home])
                exact &= ~terminal_probs(b)[0]
                self._leaf(idx[exact])
                idx = idx[~exact]
        if st.cubeful and idx.size:
            self._cube_turn(idx)
            idx = idx[self.live[idx]]
        if idx.size == 0:
            self.turns += 1
            return
        if self.turns >= self.dice.shape[1]:
            self._more_dice(64)
        dice = self.dice[idx if self.dice_per_start else self.k_of[idx], self.turns]  # (L, 2)
        boards = self.boards[idx]
        if st.luck:
            n = idx.size
            nr = len(ROLLS)
            rep = np.repeat(boards, nr, axis=0)
            succ, parent = successors_batch(rep, np.tile(_ROLLS_ARR, (n, 1)))
            v = np.asarray(self.ev(succ), dtype=np.float64)  # opponent's view
            best = segment_argmax(-equity(v), parent, n * nr)
            after = flip_probs(v[best]).reshape(n, nr, 5)  # mover's view, after each roll's best play
            mean = np.einsum("lrk,r->lk", after, ROLL_WEIGHTS)
            r = _ROLL_INDEX[dice[:, 0], dice[:, 1]]
            actual = after[np.arange(n), r]
            d_probs = self._root_view(idx, actual) - self._root_view(idx, mean)
            d_eq = equity(self._root_view(idx, actual)) - equity(self._root_view(idx, mean))
            self.luck[idx, :5] += d_probs
            self.luck[idx, 5] += d_eq
            self.luck[idx, 6] += d_eq * self.cube[idx] / self.norm[idx]
            if st.ply == 1:
                chosen = succ[best[np.arange(n) * nr + r]]
            else:
                s2, p2 = successors_batch(boards, dice)
                chosen = s2[self.chooser(boards, s2, p2)]
        else:
            s2, p2 = successors_batch(boards, dice)
            chosen = s2[self.chooser(boards, s2, p2)]
        self.boards[idx] = chosen
        self.root_on_roll[idx] = ~self.root_on_roll[idx]
        self.turns += 1
        done, probs = terminal_probs(chosen)
        if done.any():
            self._game_over(idx[done], probs[done])

    def run(self) -> None:
        while self.live.any():
            self.step()


def row_seed(seed: int, row: int) -> int:
    """The seed of row ``row``'s dice in a ``dice_per_row`` rollout (:func:`rollout_probs`) seeded ``seed``.

    Row ``row`` is rolled out on the dice a one-position rollout seeded ``row_seed(seed, row)`` would use.
    """
    return int(np.random.SeedSequence([seed, row]).generate_state(1)[0])


def rollout_probs(
    evaluator: Evaluator, boards: NDArray[np.int8], settings: RolloutSettings, *, dice_per_row: bool = False,
    dice_groups: NDArray[np.int64] | None = None, with_se: bool = False,
) -> Any:
    """Cubeless rollouts of many positions in this process, all in one lock-step batch: ``(N, 5)``.

    Each row of ``boards`` is a position before its side on roll rolls; its figures are that side's
    probabilities, the mean over ``settings.trials`` trials (seed ``settings.seed``) of where each trial
    ends: the exact result of a finished game or of the bear-off database, the network's value
    ``settings.ply - 1`` rolls ahead at the truncation; luck-adjusted when ``settings.luck``, clipped to
    consistent probabilities (``wbg <= wg <= w``).  Trial ``t``'s dice are the same for every row (common
    random numbers, as comparing plays wants), or with ``dice_per_row`` each row has dice of its own
    (:func:`row_seed`), so that the rows' noise is independent, as training labels need; with
    ``dice_groups`` (one integer a row) rows of one group share dice (the plays of one roll compared on
    common dice) and rows of different groups do not (group ``g`` rolls row ``g``'s dice of ``dice_per_row``).
    ``settings.cubeful`` must be False.  With ``with_se`` it returns ``(probs, se)``: ``se`` (N,) is the
    standard error of each row's cubeless equity over its trials (the sample deviation of the trials'
    luck-adjusted equities over the root of their number; stratification makes it a slight overestimate).
    What refinement and the label bank label with (``training.refine``);
    :func:`rollout` is the driver with standard errors, cube, executors and journal.
    """
    if settings.cubeful:
        raise ConfigError("rollout_probs rolls out cubeless: give RolloutSettings(cubeful=False)")
    boards = np.asarray(boards, dtype=np.int8)
    if dice_per_row and dice_groups is not None:
        raise ConfigError("rollout_probs: give dice_per_row or dice_groups, not both")
    if dice_groups is not None and len(dice_groups) != len(boards):
        raise ConfigError(f"rollout_probs: {len(dice_groups)} dice groups for {len(boards)} rows")
    if len(boards) == 0:
        empty = np.zeros((0, 5), dtype=np.float32)
        return (empty, np.zeros(0, dtype=np.float32)) if with_se else empty
    starts = [Start(tuple(int(v) for v in b), root_on_roll=True) for b in boards]
    game = _Trials(evaluator, starts, _Score(None), settings, list(range(settings.trials)), settings.seed,
                   dice_keys=range(len(boards)) if dice_per_row else
                   None if dice_groups is None else [int(g) for g in dice_groups])
    game.run()
    figures = game.raw - game.luck if settings.luck else game.raw
    per_trial = figures.reshape(len(boards), settings.trials, len(COLUMNS))
    mean = per_trial[:, :, :5].mean(axis=1)
    probs = make_consistent(mean.astype(np.float32))
    if not with_se:
        return probs
    eq = per_trial[:, :, COLUMNS.index("cubeless_equity")]
    se = eq.std(axis=1, ddof=1) / math.sqrt(settings.trials) if settings.trials > 1 else np.full(len(boards), np.inf)
    return probs, se.astype(np.float32)


def rollout_task(evaluator: Evaluator, payload: dict[str, Any], seed: int) -> dict[str, Any]:
    """The executor task: roll out ``payload['starts']`` for trials ``payload['trials'] = [t0, t1)``.

    Returns ``{"raw": (S, T, 7), "adj": (S, T, 7), "turns": n, "cpu_seconds": s}`` as lists: every
    trial's figures from the root's view (:data:`COLUMNS`), without and with the luck adjustment.
    """
    st = RolloutSettings(**payload["settings"])
    starts = [
        Start(
            tuple(s["board"]),
            bool(s["root_on_roll"]),
            int(s["cube"]),
            int(s["owner"]),
            int(s["norm"]),
            bool(s["no_first_double"]),
        )
        for s in payload["starts"]
    ]
    sc = payload["score"]
    met = None
    if sc.get("met") is not None:
        m = sc["met"]
        met = MatchEquityTable(
            m["name"], int(m["length"]), tuple(tuple(r) for r in m["pre_crawford"]), tuple(m["post_crawford"])
        )
    score = _Score(
        met, (int(sc["away"][0]), int(sc["away"][1])), bool(sc["crawford"]), bool(sc["jacoby"]), int(sc["match"])
    )
    t0, t1 = payload["trials"]
    cpu = time.process_time()
    game = _Trials(evaluator, starts, score, st, list(range(t0, t1)), seed)
    game.run()
    cpu = time.process_time() - cpu
    s_n, t_n = len(starts), t1 - t0
    raw = game.raw.reshape(s_n, t_n, len(COLUMNS))
    adj = raw - game.luck.reshape(s_n, t_n, len(COLUMNS)) if st.luck else raw
    return {"raw": raw.tolist(), "adj": adj.tolist(), "turns": game.turns, "cpu_seconds": cpu}


# ---------------------------------------------------------------------------
# the driver: tasks, journal, statistics
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RolloutEntry:
    """One rolled-out line: ``mean``/``se`` per :data:`COLUMNS` from the root's view, over ``trials``.

    ``se_raw`` are the standard errors of the same trials without the luck adjustment (equal to ``se``
    when it is off).  ``label`` is the play (or ``"no double"`` / ``"double, take"`` / ``"position"``);
    ``result`` the position rolled out (after the play: opponent on roll); ``prior`` the pre-selection
    equity; ``mwc`` the root's cubeful match winning chance in a match.
    """

    label: str
    result: Position
    mean: tuple[float, ...]
    se: tuple[float, ...]
    se_raw: tuple[float, ...]
    trials: int
    prior: float | None = None
    mwc: float | None = None

    @property
    def probs(self) -> tuple[float, ...]:
        """The five probabilities (root's view)."""
        return self.mean[:5]

    @property
    def cubeless_equity(self) -> float:
        return self.mean[5]

    @property
    def cubeful_equity(self) -> float:
        return self.mean[6]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: every figure by name, with its standard error (and without the luck adjustment)."""
        return {
            "label": self.label,
            "result": self.result.gnubg_id(),
            "trials": self.trials,
            "prior_equity": self.prior,
            **{k: v for k, v in zip(COLUMNS, self.mean, strict=True)},
            "se": dict(zip(COLUMNS, self.se, strict=True)),
            "se_without_luck_adjustment": dict(zip(COLUMNS, self.se_raw, strict=True)),
            "mwc": self.mwc,
        }


@dataclass
class RolloutResult:
    """A finished rollout: ``entries`` ranked best first (by cubeful equity in a cubeful rollout).

    ``position`` and ``dice`` as asked (``dice`` None: before the roll, with ``cube_action`` when the
    cube was rolled out); ``trials`` done; ``tasks_run``/``tasks_resumed`` (from a journal); ``seconds``;
    ``games_per_second`` (trials times lines over the time); ``se_reduction`` the mean ratio of the
    luck-adjusted to the raw standard error of the ranking equity (1.0 without adjustment).
    """

    position: Position
    dice: tuple[int, int] | None
    settings: RolloutSettings
    state: CubeState
    entries: list[RolloutEntry]
    trials: int
    executor: str
    workers: int
    seconds: float
    tasks_run: int
    tasks_resumed: int
    stopped_early: bool
    cube_action: str | None = None
    task_bytes: int = 0
    engine: str = ""
    cpu_seconds: float = 0.0

    @property
    def key(self) -> int:
        """Index into :data:`COLUMNS` of the ranking equity."""
        return 6 if self.settings.cubeful else 5

    @property
    def se_reduction(self) -> float:
        ratios = [e.se[self.key] / e.se_raw[self.key] for e in self.entries if e.se_raw[self.key] > 0]
        return float(np.mean(ratios)) if ratios else 1.0

    @property
    def games_per_second(self) -> float:
        games = self.trials * len(self.entries)
        return games / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the position's IDs, settings, the ranked lines with standard errors, timing."""
        return {
            "position": self.position.gnubg_id(),
            "xgid": format_xgid(self.position, dice=self.dice),
            "dice": list(self.dice) if self.dice else None,
            "engine": self.engine,
            "settings": asdict(self.settings),
            "cube": {
                "value": self.state.cube,
                "owner": self.state.owner,
                "match": self.state.match,
                "score": list(self.state.score),
                "crawford": self.state.crawford,
                "jacoby": self.state.jacoby,
            },
            "ranked_by": COLUMNS[self.key],
            "trials": self.trials,
            "stopped_early": self.stopped_early,
            "cube_action": self.cube_action,
            "se_ratio_luck_adjusted_to_raw": self.se_reduction,
            "executor": self.executor,
            "workers": self.workers,
            "seconds": self.seconds,
            "games_per_second": self.games_per_second,
            "tasks_run": self.tasks_run,
            "tasks_resumed": self.tasks_resumed,
            "cpu_seconds": self.cpu_seconds,
            "lines": [{"rank": i, **e.to_dict()} for i, e in enumerate(self.entries, 1)],
        }

    def table(self) -> str:
        """The ranked lines like gnubg's rollout output: figures, then their standard errors in brackets."""
        k = self.key
        width = max([12, *(len(e.label) for e in self.entries)])
        best = self.entries[0].mean[k] if self.entries else 0.0
        lines = []
        for i, e in enumerate(self.entries, 1):
            w, wg, wbg, lg, lbg = e.probs
            sw, swg, swbg, slg, slbg = e.se[:5]
            diff = "" if i == 1 else f" ({e.mean[k] - best:+.3f})"
            mwc = f"  MWC {100 * e.mwc:5.1f}%" if e.mwc is not None else ""
            lines.append(f"{i:>3}. {e.label:<{width}}  Eq.: {e.mean[k]:+.3f} ± {e.se[k]:.3f}{diff}{mwc}")
            lines.append(
                f"      {w:.3f} {wg:.3f} {wbg:.3f} - {1 - w:.3f} {lg:.3f} {lbg:.3f}  "
                f"CL {e.mean[5]:+.3f}  CF {e.mean[6]:+.3f}"
            )
            lines.append(
                f"     [{sw:.3f} {swg:.3f} {swbg:.3f} - {sw:.3f} {slg:.3f} {slbg:.3f}  "
                f"CL {e.se[5]:.3f}  CF {e.se[6]:.3f}]"
            )
        st = self.settings
        lines.append(f"     {self.trials} trials each{EARLY if self.stopped_early else ''}; {st.describe()}")
        if st.luck:
            lines.append(
                f"     luck adjustment: standard error {self.se_reduction:.2f} x the raw one "
                f"(as many trials without it: x{1 / self.se_reduction**2:.1f})"
                if self.se_reduction > 0
                else "     luck adjustment: no variance left"
            )
        if self.cube_action:
            lines.append(f"     proper cube action: {self.cube_action}")
        lines.append(
            f"     {self.executor}, {self.workers} worker{'s' if self.workers != 1 else ''}: "
            f"{self.seconds:.1f} s, {self.games_per_second:.0f} games/s"
            + (f"; {self.tasks_resumed} tasks taken from the results folder" if self.tasks_resumed else "")
        )
        return "\n".join(lines)


def consistent_figures(mean: NDArray[np.float64]) -> tuple[float, ...]:
    """One rolled-out line's mean :data:`COLUMNS` (root's view) with its five probabilities made probabilities.

    The luck adjustment subtracts each roll's luck from every trial, so that a mean is unbiased but can
    fall a little outside what probabilities allow (a backgammon rate of -0.001 where none is possible).
    As gnubg's ``SanityCheck`` does with a network's outputs, each is clamped into place, in this order:
    ``0 <= w <= 1``, ``0 <= wg <= w``, ``0 <= wbg <= wg``, ``0 <= lg <= 1 - w``, ``0 <= lbg <= lg`` (no
    rescaling: a figure inside its bounds is left as it is); the equities stay as measured (their means and
    standard errors are the rollout's result).
    """
    figures = np.array(mean, dtype=np.float64).reshape(1, -1)
    make_consistent(figures[:, :5])
    return tuple(float(v) for v in figures[0])


def _score_payload(state: CubeState, met: MatchEquityTable | None) -> dict[str, Any]:
    if state.is_money:
        return {"met": None, "away": [0, 0], "crawford": False, "jacoby": state.jacoby, "match": 0}
    assert met is not None
    return {
        "met": {
            "name": met.name,
            "length": met.length,
            "pre_crawford": [list(r) for r in met.pre_crawford],
            "post_crawford": list(met.post_crawford),
        },
        "away": list(state.away),
        "crawford": state.crawford,
        "jacoby": False,
        "match": state.match,
    }


def _stats(rows: list[NDArray[np.float64]]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    a = np.concatenate(rows, axis=0)  # (T, 7)
    n = a.shape[0]
    mean = a.mean(axis=0)
    se = a.std(axis=0, ddof=1) / math.sqrt(n) if n > 1 else np.zeros(a.shape[1])
    return mean, se


class RunOptions(TypedDict, total=False):
    """Where a rollout's tasks run, as :func:`rollout` and :func:`engine_rollout` pass them on to :func:`run_rollout`.

    ``executor``: "local" (the default), "ray", a Ray address or an :class:`~bgbot.engine.executor.ExecutorSpec`;
    ``workers``: processes (default 1); ``resume``: a results folder
    (:class:`~bgbot.engine.executor.Journal`); ``progress``: show a progress bar (default no).
    """

    executor: str | ExecutorSpec | None
    workers: int | None
    resume: str | Path | None
    progress: bool


def run_rollout(
    evaluator: Evaluator,
    starts: Sequence[Start],
    state: CubeState,
    settings: RolloutSettings,
    *,
    met: MatchEquityTable | None = None,
    blob: ModelBlob | None = None,
    about: dict[str, Any] | None = None,
    **run: Unpack[RunOptions],
) -> tuple[list[tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]], int, bool, RunStats]:
    """Roll out ``starts`` (root's cube state ``state``): per start ``(mean, se, se_raw)``, trials, early stop.

    The work goes to ``run["executor"]`` (:class:`RunOptions`) as tasks of ``settings.trials_per_task``
    trials; ``blob`` is the network for workers (None: ``evaluator`` in this process, one worker).
    """
    spec = prepare_executor(run.get("executor", "local"))
    workers, resume = run.get("workers", 1), run.get("resume")
    n = settings.trials
    per = settings.trials_per_task
    payload_base = {
        "starts": [s.payload() for s in starts],
        "score": _score_payload(state, met),
        "settings": asdict(settings) | {"se_stop": None, "min_trials": 1},
    }
    model_hash = blob.hash if blob is not None else "in-memory"
    tasks = [
        Task(ROLLOUT_TASK, model_hash, payload_base | {"trials": [t0, min(n, t0 + per)]}, settings.seed)
        for t0 in range(0, n, per)
    ]
    journal = Journal(resume, tasks, about) if resume is not None else None
    if journal is not None and blob is None:
        raise ConfigError("a resumable rollout needs a network saved by hash (a loaded model), not an in-memory one")
    results: dict[int, dict[str, Any]] = {}
    stats = RunStats()
    stopped = False
    prefix = 0
    key = 6 if settings.cubeful else 5
    from tqdm import tqdm

    bar = tqdm(total=n * len(starts), unit="game", desc="rollout", disable=not run.get("progress"), leave=False)
    it = run_tasks(tasks, blob, executor=spec, workers=workers, journal=journal, evaluator=evaluator, stats=stats)
    try:
        for i, res in it:
            results[i] = res
            stats.cpu_seconds += float(res.get("cpu_seconds", 0.0))
            t0, t1 = tasks[i].payload["trials"]
            bar.update((t1 - t0) * len(starts))
            while prefix in results:
                prefix += 1
            if settings.se_stop is not None and prefix < len(tasks):
                done_trials = tasks[prefix - 1].payload["trials"][1] if prefix else 0
                if done_trials >= settings.min_trials:
                    ses = [
                        _stats([np.asarray(results[j]["adj"][s])[:, key] for j in range(prefix)])[1]
                        for s in range(len(starts))
                    ]
                    if all(float(se) < settings.se_stop for se in ses):
                        stopped = True
                        break
    finally:
        with contextlib.suppress(Exception):
            it.close()  # type: ignore[attr-defined]
        bar.close()
    used = range(prefix) if stopped else range(len(tasks))
    out = []
    for s in range(len(starts)):
        adj = [np.asarray(results[j]["adj"][s], dtype=np.float64) for j in used]
        raw = [np.asarray(results[j]["raw"][s], dtype=np.float64) for j in used]
        mean, se = _stats(adj)
        _, se_raw = _stats(raw)
        out.append((mean, se, se_raw))
    trials = tasks[used[-1]].payload["trials"][1] if used else 0
    return out, trials, stopped, stats


def rollout(
    evaluator: Evaluator,
    pos: Position,
    state: CubeState,
    settings: RolloutSettings,
    *,
    candidates: Sequence[tuple[str, Position, float]] | None = None,
    dice: tuple[int, int] | None = None,
    met: MatchEquityTable | None = None,
    blob: ModelBlob | None = None,
    engine: str = "",
    **run: Unpack[RunOptions],
) -> RolloutResult:
    """Roll out ``pos`` (side on roll's view, cube state ``state`` from that side) before its roll, or
    the ``candidates`` ``(move text, result from the opponent's view, pre-selection equity)`` of ``dice``.

    Results are from the side on roll of ``pos`` (the root).  ``run``: where the work runs
    (:class:`RunOptions`, :func:`run_rollout`); :class:`RolloutResult` for what comes back.
    """
    if pos.is_game_over():
        raise InvalidPositionError(f"the game is over in {pos.gnubg_id()!r}: there is nothing to roll out")
    owner = {"center": 0, "me": 1, "opp": -1}[state.owner]
    cube = state.cube
    labels: list[str] = []
    starts: list[Start] = []
    priors: list[float | None] = []
    cube_rollout = False
    if candidates is None:
        may_double = settings.cubeful and owner >= 0 and cube < MAX_CUBE and not state.crawford
        may_double = may_double and (state.is_money or cube < state.away[0])  # a dead cube is never turned
        starts.append(Start(pos.board, True, cube, owner, cube, no_first_double=may_double))
        labels.append("no double" if may_double else "position")
        priors.append(None)
        if may_double:
            cube_rollout = True
            starts.append(Start(pos.board, True, 2 * cube, -1, cube))
            labels.append("double, take")
            priors.append(None)
    else:
        if not candidates:
            raise InvalidPositionError(f"no candidate plays to roll out in {pos.gnubg_id()!r}")
        for text, result, prior in candidates:
            starts.append(Start(result.board, False, cube, owner, cube))
            labels.append(text)
            priors.append(prior)
    t0 = time.perf_counter()
    about = {
        "position": pos.gnubg_id(),
        "dice": list(dice) if dice else None,
        "labels": labels,
        "settings": asdict(settings),
        "engine": engine,
    }
    stats_out, trials, stopped, stats = run_rollout(
        evaluator, starts, state, settings, met=met, blob=blob, about=about, **run
    )
    seconds = time.perf_counter() - t0
    sc = _Score(met if not state.is_money else None, state.away, state.crawford, state.jacoby, state.match)
    entries = []
    for (mean, se, se_raw), label, start, prior in zip(stats_out, labels, starts, priors, strict=True):
        mwc = None
        if sc.met is not None and settings.cubeful:
            w, lo = sc.root_mwc(cube), sc.root_mwc(-cube)
            mwc = min(1.0, max(0.0, float((mean[6] * (w - lo) + (w + lo)) / 2.0)))
        entries.append(
            RolloutEntry(
                label,
                Position(start.board, validate=False),
                consistent_figures(mean),
                tuple(se.tolist()),
                tuple(se_raw.tolist()),
                trials,
                prior,
                mwc,
            )
        )
    key = 6 if settings.cubeful else 5
    action = None
    if cube_rollout:
        # both lines are normalised to the cube before the double, so double/pass is +1.0
        act = _classify(entries[0].mean[6], entries[1].mean[6], 1.0, entries[0].mean[1] > 0.0)
        verb = "redouble" if owner == 1 else "double"
        action = {
            "no_double": f"No {verb}, take",
            "double_take": f"{verb.capitalize()}, take",
            "double_pass": f"{verb.capitalize()}, pass",
            "too_good_take": f"Too good to {verb}, take",
            "too_good_pass": f"Too good to {verb}, pass",
        }[act]
    else:
        entries.sort(key=lambda e: -e.mean[key])
    spec = parse_executor(run.get("executor", "local"))
    return RolloutResult(
        position=pos,
        dice=dice,
        settings=settings,
        state=state,
        entries=entries,
        trials=trials,
        executor=spec.describe(),
        workers=run.get("workers", 1) or 1,
        seconds=seconds,
        tasks_run=stats.executed,
        tasks_resumed=stats.resumed,
        stopped_early=stopped,
        cube_action=action,
        task_bytes=int(np.mean(stats.task_bytes)) if stats.task_bytes else 0,
        cpu_seconds=stats.cpu_seconds,
        engine=engine,
    )


class RolloutEngine(Protocol):
    """What :func:`engine_rollout` uses of an engine; :class:`bgbot.engine.api.Engine` is one.

    A protocol, so that this module (which the engine API calls) does not import the API back.
    """

    base: Evaluator
    evaluator: Evaluator

    @property
    def met(self) -> MatchEquityTable: ...

    def cube_state(self, state: CubeState | None) -> CubeState: ...

    def best_move(
        self, pos: Position, dice: tuple[int, int], ply: int, state: CubeState, *, cubeless: bool
    ) -> Analysis: ...

    def describe(self) -> str: ...


def engine_rollout(
    engine: RolloutEngine,
    pos: Position,
    dice: tuple[int, int] | None,
    state: CubeState | None,
    settings: RolloutSettings,
    *,
    top: int = 5,
    preselect_ply: int = 1,
    **run: Unpack[RunOptions],
) -> RolloutResult:
    """:meth:`bgbot.engine.api.Engine.rollout`: pre-select the top ``top`` plays of ``dice`` at
    ``preselect_ply`` (cubeful ranking in a cubeful rollout) and roll them out, or roll out the position
    before its roll when ``dice`` is None.  The network goes to workers by hash (when it is a numpy one);
    ``run``: where the work runs (:class:`RunOptions`).
    """
    from bgbot.eval.evaluate import NetEvaluator
    from bgbot.eval.inference import NumpyNet

    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ConfigError(f"rollout top must be a whole number >= 1 of candidate plays, got {quote_input(top)}")
    cs = engine.cube_state(state)
    run["executor"] = prepare_executor(run.get("executor", "local"))  # a bad executor fails before any work
    blob = None
    base = engine.base
    if isinstance(base, NetEvaluator) and isinstance(base.net, NumpyNet):
        blob = ModelBlob.from_net(base.net, bearoff=isinstance(engine.evaluator, BearoffEvaluator))
    met = engine.met if not cs.is_money else None
    candidates = None
    if dice is not None:
        a = engine.best_move(pos, dice, check_ply(preselect_ply), cs, cubeless=not settings.cubeful)
        candidates = [(c.move, c.result, c.equity) for c in a.candidates[:top]]
    return rollout(
        engine.evaluator,
        pos,
        cs,
        settings,
        candidates=candidates,
        dice=dice,
        met=met,
        blob=blob,
        engine=engine.describe(),
        **run,
    )
