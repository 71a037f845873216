"""The cubeful lookahead: cube decisions above 1-ply the way gnubg makes them, money and match.

A cube decision "at n ply" looks ``n - 1`` rolls ahead.  Averaging the
cubeless probabilities of that tree and applying the cube model once at the
top (what 1-ply does, on the position itself) smooths away what matters most
to the cube: the rolls after which the opponent would pass a double (market
losers) or the doubler is too good.  Here, as in gnubg's
``EvaluatePositionCubeful``, every position of the tree makes its own best
cube action: a leaf has the cube model's figures for each cube state it can
be in (Janowski's for money, gnubg's ``Cl2CfMatch`` for matches, with the
leaf's own cube efficiency), and a position above averages over its 21 rolls
its side's value after the best play of the roll: minus (money) or one minus
(match) the opponent's optimal cubeful value, ``max(no double, min(double /
take, double / pass))`` where the opponent may double.  The top reports "no
double" and "double, take" for the side on roll, from which
:func:`~bgbot.engine.cube.money_decision_from_equities` and
:func:`~bgbot.engine.cube.match_decision_from_mwcs` make the decision.

A one-roll lookahead (2-ply) is biased: each roll's best play is picked by
the same values that score it, so the side on roll's double/take figure comes
out high and its no-double figure low against the two-roll lookahead's, and
2-ply doubles too often (gnubg's 1-ply has the same odd-ply effect).
:data:`ONE_ROLL_SHIFT` corrects the two figures of a 2-ply decision by
constants fitted to the engine's own 3-ply decisions on the label bank's
positions (``benchmarks/cube_odd_ply.py``); :class:`~bgbot.engine.api.Engine`
applies it, and ``cube_shift=NO_SHIFT`` gives gnubg's uncorrected 1-ply.

The plays are chosen once per roll for every cube state (each side by its
own value, :func:`bgbot.engine.search.best_plays`), so the lookahead costs the
same network evaluations as the cubeless one.  In money play, small two-sided
bear-offs (:mod:`bgbot.engine.bearoff_cube`) have exact figures instead of
Janowski's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Unpack

import numpy as np
from numpy.typing import NDArray

from bgbot.engine.cube import (
    CONTACT_X,
    CubeDecision,
    MatchArgs,
    cube_efficiencies,
    match_cube_decision,
    match_keywords,
    money_cube_values,
)
from bgbot.engine.met import MatchEquityTable
from bgbot.engine.search import MAX_EXPAND, Valuer, best_plays
from bgbot.eval.bearoff import home_rows
from bgbot.eval.evaluate import Evaluator, flip_probs, terminal_probs
from bgbot.rules.dice import ROLL_WEIGHTS, ROLLS
from bgbot.rules.matchstate import Owner

__all__ = ["NO_SHIFT", "ONE_ROLL_SHIFT", "CubeShift", "exact_cube_values", "lookahead_money_cubeful",
           "match_cube_lookahead"]


@dataclass(frozen=True)
class CubeShift:
    """What a 2-ply cube decision adds to the side on roll's no-double and double/take equities.

    Both in equity normalised to the current cube (double/pass = 1.0), from the side on roll's view; in match
    play the same amounts of that normalised equity, turned into match winning chances.
    """

    no_double: float = 0.0
    double_take: float = 0.0


#: The one-roll lookahead's correction: fitted by ``benchmarks/cube_odd_ply.py`` (6,000 label-bank positions,
#: the shipped model's 2-ply decisions against its own 3-ply ones: 89.6% agree uncorrected, 92.3% corrected).
ONE_ROLL_SHIFT = CubeShift(no_double=0.01, double_take=-0.03)
#: No correction: gnubg's 1-ply decision exactly.
NO_SHIFT = CubeShift()

_SEEN_BY_OPPONENT: dict[str, Owner] = {"center": "center", "me": "opp", "opp": "me"}


def lookahead_money_cubeful(
    evaluator: Evaluator,
    boards: NDArray[np.int8],
    depth: int,
    choose: tuple[Valuer, Valuer] | None = None,
    *,
    x: float | None = None,
    jacoby: bool = False,
    exact_bearoff: bool = True,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Cubeful money equities of ``(N, 26)`` positions (side on roll's view, before its roll), ``depth`` rolls deep.

    gnubg's cubeful lookahead: the cube decision is made at every position
    of the tree, not only at the top.  A leaf (depth 0) has Janowski's
    equities (:func:`~bgbot.engine.cube.money_cube_values`, with the cube
    efficiency of its board or ``x``).  A position one level up averages,
    over its 21 rolls, minus its opponent's **optimal** cubeful equity after
    the best move of the roll, for each cube owner, and for the cube it has
    doubled and that was taken; the opponent's optimum is ``max(no double,
    min(double/take, double/pass = 1))`` where it may double.  So a roll
    after which the opponent would pass a double (a market loser) or is too
    good counts as it would be played, where averaging the probabilities
    first and applying Janowski once smooths it away.

    The moves are chosen as in :func:`~bgbot.engine.search.lookahead_probs` (``choose``), one per
    roll for every cube owner.  Returns ``(probs, no_double, double_take)``:
    the cubeless probabilities (:func:`~bgbot.engine.search.lookahead_probs`' figures), the
    no-double equities ``(N, 3)`` by owner
    (:data:`~bgbot.engine.cube.OWNER_COLUMNS`: centred, the side on roll's,
    the opponent's) and the double/take equity ``(N,)``, all normalised to
    the current cube and from the side on roll.  Jacoby applies while the
    cube is centred.  With ``exact_bearoff`` a leaf (or the position itself)
    that is a small two-sided bear-off has its exact figures instead of
    Janowski's (:mod:`bgbot.engine.bearoff_cube`, gnubg's two-sided database).
    """
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    if depth <= 0:
        probs = np.asarray(evaluator(boards), dtype=np.float64)
        return (probs, *_leaf_cube_values(probs, boards, x, jacoby, exact_bearoff))
    done, exact = terminal_probs(boards)
    probs = exact.astype(np.float64)
    nd, dt = _leaf_cube_values(probs, boards, x, jacoby, False)  # a finished game: its result, whatever the cube
    live = np.flatnonzero(~done)
    if live.size == 0:
        return probs, nd, dt
    nr = len(ROLLS)
    chunk = max(1, MAX_EXPAND // nr)
    if live.size > chunk:
        for k in range(0, live.size, chunk):
            rows = live[k : k + chunk]
            probs[rows], nd[rows], dt[rows] = lookahead_money_cubeful(
                evaluator, boards[rows], depth, choose, x=x, jacoby=jacoby, exact_bearoff=exact_bearoff)
        return probs, nd, dt
    kids, kid_probs = best_plays(evaluator, boards[live], choose)  # (L * 21, ...) the opponent's view
    if depth == 1:
        c_probs = kid_probs
        c_nd, c_dt = _leaf_cube_values(c_probs, kids, x, jacoby, exact_bearoff)
    else:
        c_probs, c_nd, c_dt = lookahead_money_cubeful(
            evaluator, kids, depth - 1, None if choose is None else (choose[1], choose[0]), x=x, jacoby=jacoby,
            exact_bearoff=exact_bearoff)
    # the opponent's optimal equity for each owner (its view); it may double unless the mover owns the cube
    c_opt = c_nd.copy()
    c_opt[:, :2] = np.maximum(c_nd[:, :2], np.minimum(c_dt, 1.0)[:, None])
    # seen from the mover: centred stays centred, its cube is the opponent's "opp" and vice versa
    mine = -c_opt[:, [0, 2, 1]].reshape(live.size, nr, 3)
    probs[live] = np.einsum("lrk,r->lk", flip_probs(c_probs).reshape(live.size, nr, 5), ROLL_WEIGHTS)
    nd[live] = np.einsum("lrk,r->lk", mine, ROLL_WEIGHTS)
    # after the mover doubles and is taken the opponent owns a cube twice the size: its "me" column
    dt[live] = 2.0 * (-c_opt[:, 1].reshape(live.size, nr) @ ROLL_WEIGHTS)
    return probs, nd, dt


def _leaf_cube_values(
    probs: NDArray[np.float64], boards: NDArray[np.int8], x: float | None, jacoby: bool, exact: bool
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Janowski's equities of each board, or the exact ones of a small two-sided bear-off (``exact``)."""
    xs = cube_efficiencies(boards) if x is None else np.full(len(boards), float(x))
    nd, dt = money_cube_values(probs, xs, jacoby=jacoby)
    if exact:
        exact_cube_values(boards, nd, dt)
    return nd, dt


def exact_cube_values(boards: NDArray[np.int8], nd: NDArray[np.float64], dt: NDArray[np.float64]) -> int:
    """Overwrite ``nd`` ``(N, 3)`` / ``dt`` ``(N,)`` (:func:`~bgbot.engine.cube.money_cube_values`' layout) with
    the exact figures where a board is a two-sided bear-off :mod:`bgbot.engine.bearoff_cube` covers.

    Returns how many rows it replaced.  No gammon is possible there, so Jacoby changes nothing.
    """
    home, count = home_rows(boards)
    if not count:
        return 0
    from bgbot.engine.bearoff_cube import get_two_sided

    rows = np.flatnonzero(home)
    ok, vals = get_two_sided().lookup(boards[rows])
    rows = rows[ok]
    nd[rows] = vals[ok, 1:4]
    dt[rows] = 2.0 * vals[ok, 3]
    return int(rows.size)


# ---------------------------------------------------------------------------
# match play
# ---------------------------------------------------------------------------

#: A cube state seen from the side on roll: (cube value, owner).
_State = tuple[int, Owner]


def match_cube_lookahead(
    evaluator: Evaluator, board: NDArray[np.int8], depth: int, *, choose: tuple[Valuer, Valuer] | None = None,
    x: float | None = None, **match: Unpack[MatchArgs],
) -> tuple[NDArray[np.float64], float, float | None]:
    """The match cubeful lookahead of one position ``board`` (side on roll's view, before its roll).

    As :func:`lookahead_money_cubeful` in match winning chances: each position of the
    ``depth``-roll tree makes its best cube action at the score (the Crawford game, dead and
    pointless cubes, the post-Crawford leader and the 64 cap as
    :func:`~bgbot.engine.cube.match_cube_decision` has them) and the leaves are the cube model's
    cubeful MWCs; the score and cube are ``match``'s (:class:`~bgbot.engine.cube.MatchArgs`).
    Returns ``(probs, mwc_no_double, mwc_double_take)``: the averaged cubeless probabilities and the
    side on roll's MWC without doubling and after doubling and being taken (None where no double is
    legal).  Depth 0 is the cube model on the evaluator's probabilities.
    """
    met, match_length, away_me, away_opp, cube_value, owner, crawford = match_keywords(match, "match_cube_lookahead")
    game = _Game(evaluator, met, match_length, bool(crawford), x)
    root = np.ascontiguousarray(board, dtype=np.int8).reshape(1, 26)
    legal = game.flags((cube_value, owner), (away_me, away_opp))[0] is not None
    # "double, take": the side on roll still to roll, the opponent owning twice the cube
    states: list[_State] = [(cube_value, owner)] + ([(2 * cube_value, "opp")] if legal else [])
    probs, values = game.values(root, depth, states, (away_me, away_opp), choose)
    nd = float(values[states[0]][0][0])
    dt = float(values[states[1]][0][0]) if legal else None
    return probs[0], nd, dt


class _Game:
    """What stays fixed through one game's lookahead: the evaluator, the match and the cube efficiency."""

    def __init__(self, evaluator: Evaluator, met: MatchEquityTable, length: int, crawford: bool,
                 x: float | None) -> None:
        self.evaluator, self.met, self.length, self.crawford, self.x = evaluator, met, length, crawford, x

    def decide(self, probs: NDArray[np.float64], x: float, state: _State, away: tuple[int, int]) -> CubeDecision:
        return match_cube_decision(probs.tolist(), met=self.met, match_length=self.length, away_me=away[0],
                                   away_opp=away[1], cube_value=state[0], owner=state[1], crawford=self.crawford,
                                   x=x, with_take_point=False)

    def flags(self, state: _State, away: tuple[int, int]) -> tuple[float | None, bool]:
        """(double/pass MWC or None where no double is legal, whether doubling can gain) in ``state``.

        The cube model's rules alone decide these, not the probabilities.
        """
        d = self.decide(_ANY_PROBS, CONTACT_X, state, away)
        return d.mwc_double_pass, d.can_double

    def values(
        self,
        boards: NDArray[np.int8],
        depth: int,
        states: Sequence[_State],
        away: tuple[int, int],
        choose: tuple[Valuer, Valuer] | None,
    ) -> tuple[NDArray[np.float64], dict[_State, tuple[NDArray[np.float64], NDArray[np.float64]]]]:
        """Averaged probabilities and, per cube state, the side on roll's (no-double, optimal) MWC per board."""
        n = boards.shape[0]
        done, exact = terminal_probs(boards)
        probs = exact.astype(np.float64)
        live = np.flatnonzero(~done)
        leaves = np.arange(n) if depth <= 0 else np.flatnonzero(done)
        if depth <= 0 and live.size:
            probs[live] = np.asarray(self.evaluator(boards[live]), dtype=np.float64)
        xs = cube_efficiencies(boards) if self.x is None else np.full(n, float(self.x))
        out: dict[_State, tuple[NDArray[np.float64], NDArray[np.float64]]] = {}
        for state in dict.fromkeys(states):
            nd, opt = np.empty(n), np.empty(n)
            for k in leaves:  # the cube model (a finished game: its exact result at this cube)
                d = self.decide(probs[k], float(xs[k]), state, away)
                nd[k], opt[k] = d.mwc_no_double, d.mwc_optimal
            out[state] = (nd, opt)
        if depth <= 0 or not live.size:
            return probs, out
        nr = len(ROLLS)
        chunk = max(1, MAX_EXPAND // nr)
        kids = np.concatenate([best_plays(self.evaluator, boards[live[k : k + chunk]], choose)[0]
                               for k in range(0, live.size, chunk)])
        flags = {state: self.flags(state, away) for state in dict.fromkeys(states)}
        wanted: list[_State] = []
        for (c, o), (dp, gains) in flags.items():
            wanted.append((c, _SEEN_BY_OPPONENT[o]))
            if dp is not None and gains:
                wanted.append((2 * c, "me"))  # it doubled and was taken: the opponent owns it
        kid_probs, kid = self.values(kids, depth - 1, wanted, (away[1], away[0]),
                                     None if choose is None else (choose[1], choose[0]))
        probs[live] = np.einsum("lrk,r->lk", flip_probs(kid_probs).reshape(live.size, nr, 5), ROLL_WEIGHTS)

        def after_play(state: _State) -> NDArray[np.float64]:
            # the side on roll's MWC per live board: one minus its opponent's best after the play
            return (1.0 - kid[state][1]).reshape(live.size, nr) @ ROLL_WEIGHTS

        for (c, o), (dp, gains) in flags.items():
            nd, opt = out[(c, o)]
            nd[live] = after_play((c, _SEEN_BY_OPPONENT[o]))
            if dp is not None and gains:
                opt[live] = np.maximum(nd[live], np.minimum(after_play((2 * c, "me")), dp))
            else:
                opt[live] = nd[live]
        return probs, out


_ANY_PROBS = np.array([0.5, 0.1, 0.0, 0.1, 0.0])
