"""Cube decisions from cubeless probabilities: money play (Janowski) and match play (gnubg's method).

Every function takes the five cubeless probabilities of the **side on roll,
before it rolls**, in gnubg's order ``[win, win_gammon, win_backgammon,
lose_gammon, lose_backgammon]`` (gammons include backgammons), and answers
from that side's point of view ("me"; the other side is "opp").

Money play
----------
Rick Janowski's model: the cubeful equity is a mix of the cubeless ("dead
cube") equity and the equity with a perfectly efficient ("live") cube,
``E = (1 - x) * E_dead + x * E_live``.  ``E_live`` is piecewise linear in
P(win) between the points where a player cashes or takes, with the average
value of a win ``W = 1 + (wg + wbg) / win`` and of a loss
``L = 1 + (lg + lbg) / (1 - win)`` (these formulas are gnubg's ``Cl2CfMoney``
and ``MoneyLive``).  The cube efficiency ``x`` is how much of the live-cube
gain is realised: gnubg uses 0.68 for contact and crashed positions and, for
races, ``0.55 + 0.00125 * pips`` of the side on roll clamped to [0.6, 0.7]
(see :func:`cube_efficiency`).  The default everywhere is
:data:`CONTACT_X` = 0.68; callers that know the position is a race should
pass ``x=cube_efficiency(contact=False, pips_on_roll=...)`` (0.6 in short
races, up to 0.7 in long ones), as gnubg does.  On gnubg's own 2-ply
probabilities of ``benchmark/cube.jsonl`` x = 0.68 gives 94% agreement with
gnubg's decisions and the lowest double/take error (see
``benchmarks/cube_error.py``).

Equities are normalised to the current cube value like gnubg's: double/pass
is always exactly 1.0 and double/take is twice the equity of the position
with the opponent owning a cube of twice the value.  Multiply by the cube
value for points.  With the Jacoby rule and a centred cube gammons count as
single games (both in the dead part and in the live part), as in gnubg.
Beavers are not modelled.

Match play
----------
gnubg's ``Cl2CfMatch``: the same dead/live mix, but in match winning chances
(MWC) from a :class:`~bgbot.engine.met.MatchEquityTable`.  The dead MWC weighs every
result (single, gammon, backgammon, either way) by the MWC after it, so the
gammon values at the score come straight from the MET.  The live MWC
interpolates linearly between losing the game, the opponent cashing, my
cashing and winning the game, at the live cash points of both sides, which
are found recursively from the highest cube level that is still alive
(gnubg's ``GetPoints``: at a level where the doubled cube would be dead the
cash point is the dead-cube take point of the MET; below that each player's
cash point follows from the opponent's cash point one cube level higher, i.e.
from the take point of the opponent's recube).  As in gnubg the cubeful MWC
is the cubeless one when the cube already covers what both sides need, at
2-away/2-away (whoever doubles kills the cube for both) and in the Crawford
game.  Post-Crawford games need no special case: the MET (post-Crawford
table, free drops included) makes the trailer's double right at once.

The three match decision values are converted to the same normalised equity
as money play with gnubg's ``mwc2eq``: a linear map of MWC sending "I lose
cube-value points" to -1 and "I win cube-value points" to +1, so
double/pass is again exactly 1.0.  The MWCs themselves are kept in
:class:`CubeDecision` too.

Availability of the cube follows gnubg's ``GetDPEq``: no cube in the Crawford
game, none for a player who already owns a cube that wins him the match
("dead cube"), none for the leader after the Crawford game, and none when the
opponent owns the cube.  In those cases the action is ``'no_double'`` and
``can_double`` is False; ``note`` says why.  When the double is illegal
(opponent's cube, Crawford game, cube at its 64 face) ``equity_double_take``,
``equity_double_pass`` and ``take_point`` are ``None``; when it is legal but
pointless (dead cube, post-Crawford leader) they are still computed.

This module imports neither torch nor the move generator; it needs
:mod:`bgbot.engine.met` and numpy (the batched values checker play ranks
by: :func:`money_optimal_equities`, :func:`cube_efficiencies`,
:func:`match_dead_mwcs`).
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypedDict, TypeVar, Unpack

import numpy as np
from numpy.typing import NDArray

from bgbot import jit
from bgbot.engine.met import MatchEquityTable
from bgbot.errors import InvalidCubeError, MetError
from bgbot.rules.matchstate import MAX_CUBE, OWNERS, Owner

__all__ = [
    "ACTIONS",
    "BEAROFF_X",
    "CONTACT_X",
    "CRASHED_X",
    "MAX_CUBE",
    "OWNERS",
    "OWNER_COLUMNS",
    "RACE_X_MAX",
    "RACE_X_MIN",
    "Action",
    "CubeDecision",
    "InvalidCubeError",
    "MatchArgs",
    "MatchScoreArgs",
    "MoneyArgs",
    "Owner",
    "cube_efficiencies",
    "cube_efficiency",
    "cubeful_equity",
    "match_cube_decision",
    "match_cubeful_mwc",
    "match_dead_mwcs",
    "match_decision_from_mwcs",
    "match_keywords",
    "money_cube_decision",
    "money_cube_values",
    "money_decision_from_equities",
    "money_optimal_equities",
    "race_cube_efficiency",
    "take_point_money",
]

Action = Literal["no_double", "double_take", "double_pass", "too_good_take", "too_good_pass"]

ACTIONS: tuple[str, ...] = ("no_double", "double_take", "double_pass", "too_good_take", "too_good_pass")

# gnubg's cube efficiencies (eval.c, EvalEfficiency).
CONTACT_X = 0.68
CRASHED_X = 0.68
BEAROFF_X = 0.6
RACE_X_MIN = 0.6
RACE_X_MAX = 0.7
_RACE_X_PER_PIP = 0.00125
_RACE_X_BASE = 0.55

"""The highest face of the cube: a cube at 64 cannot be turned again (rules.md)."""

# Probabilities from a network are floats: allow rounding noise this large before calling them inconsistent.
_PROB_TOL = 1e-6
# Below this P(win) (or above 1 - it) W or L is undefined; gnubg treats the cube as dead there.
_P_EPS = 1e-7


@dataclass(frozen=True)
class CubeDecision:
    """The cube decision of the side on roll, before it rolls.

    Equities are from the side on roll, normalised to the current cube value
    (double/pass = 1.0); multiply by ``cube_value`` for points.  ``action`` is
    one of :data:`ACTIONS`, named like the ``decision`` column of the
    benchmark file (gnubg's "No double, take" -> ``'no_double'``, etc.; the
    redouble variants map to the same names).

    ``take_point`` is the opponent's take point: the least cubeless P(win) *of
    the opponent* at which taking is at least as good as passing, for the
    same gammon and backgammon ratios and the same model (``None`` when the
    double is illegal).  ``can_double`` is False when the cube is not
    available to the side on roll or doubling cannot gain (see ``note``).  In
    match play the ``mwc_*`` fields hold the match winning chances of the
    side on roll behind the equities; they are ``None`` in money play.
    """

    action: Action
    equity_no_double: float
    equity_double_take: float | None
    equity_double_pass: float | None
    equity_optimal: float
    take_point: float | None
    can_double: bool
    note: str = ""
    mwc_no_double: float | None = None
    mwc_double_take: float | None = None
    mwc_double_pass: float | None = None
    mwc_optimal: float | None = None

    @property
    def doubles(self) -> bool:
        """True when the side on roll should double (double/take or double/pass)."""
        return self.action in ("double_take", "double_pass")

    @property
    def takes(self) -> bool:
        """True when the opponent should take a double (even one that is not due); False if none is legal.

        The taker takes when double/take is worth less to the doubler than double/pass (1.0).
        """
        return self.equity_double_take is not None and self.equity_double_take < 1.0


# ---------------------------------------------------------------------------
# cube efficiency
# ---------------------------------------------------------------------------


def race_cube_efficiency(pips_on_roll: int) -> float:
    """gnubg's race cube efficiency from the pip count of the side on roll.

    ``0.55 + 0.00125 * pips`` clamped to [0.6, 0.7]: long races keep more
    cube leverage than short ones, where the last rolls decide and the cube
    is used less efficiently.
    """
    pips = _as_int(pips_on_roll, "pips_on_roll")
    if not 0 <= pips <= 375:
        raise InvalidCubeError(f"a pip count must be an integer from 0 to 375, got {pips_on_roll!r}")
    return min(RACE_X_MAX, max(RACE_X_MIN, _RACE_X_BASE + _RACE_X_PER_PIP * pips))


def cube_efficiency(*, contact: bool, pips_on_roll: int | None = None) -> float:
    """The cube efficiency ``x`` gnubg would use for a position of this kind.

    ``contact=True``: :data:`CONTACT_X` (0.68).  A race needs the pip count
    of the side on roll and gets :func:`race_cube_efficiency`.  (gnubg's
    separate 0.6 for bear-off database positions is not distinguished here.)
    """
    if contact:
        return CONTACT_X
    if pips_on_roll is None:
        raise InvalidCubeError("a race needs pips_on_roll to choose its cube efficiency, got None")
    return race_cube_efficiency(pips_on_roll)


# ---------------------------------------------------------------------------
# input checks
# ---------------------------------------------------------------------------

_Probs = tuple[float, float, float, float, float]
#: five columns of per-row probabilities (:func:`_probs_cols`): the batched match functions' ``_Probs``
_Cols = tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]
#: a figure of one position (float) or of many (per row): the match helpers serve both
_F = TypeVar("_F", float, NDArray[np.float64])


def _as_int(value: object, what: str) -> int:
    # operator.index accepts numpy integers but not floats; bool is an int we do not want.
    if isinstance(value, bool):
        raise InvalidCubeError(f"{what} must be an integer, got {value!r}")
    try:
        return operator.index(value)  # type: ignore[call-overload]
    except TypeError:
        raise InvalidCubeError(f"{what} must be an integer, got {value!r}") from None


def _check_probs(probs: Sequence[float]) -> _Probs:
    try:
        items = list(probs)
    except TypeError:
        raise InvalidCubeError(f"probabilities must be 5 numbers, got {probs!r}") from None
    if not all(isinstance(v, numbers.Real) for v in items):
        raise InvalidCubeError(f"probabilities must be 5 numbers, got {probs!r}")
    values = [float(v) for v in items]
    if len(values) != 5:
        raise InvalidCubeError(f"probabilities must be 5 numbers [win, wg, wbg, lg, lbg], got {probs!r}")
    if not all(math.isfinite(v) and -_PROB_TOL <= v <= 1.0 + _PROB_TOL for v in values):
        raise InvalidCubeError(f"probabilities must lie in [0, 1], got {values!r}")
    win, wg, wbg, lg, lbg = (min(1.0, max(0.0, v)) for v in values)
    if wg > win + _PROB_TOL or wbg > wg + _PROB_TOL or lg > 1.0 - win + _PROB_TOL or lbg > lg + _PROB_TOL:
        raise InvalidCubeError(
            f"inconsistent probabilities (need wbg <= wg <= win and lbg <= lg <= 1 - win), got {values!r}"
        )
    wg = min(wg, win)
    wbg = min(wbg, wg)
    lg = min(lg, 1.0 - win)
    lbg = min(lbg, lg)
    return win, wg, wbg, lg, lbg


def _check_x(x: float) -> float:
    if not isinstance(x, numbers.Real):
        raise InvalidCubeError(f"cube efficiency x must be a number in [0, 1], got {x!r}")
    xv = float(x)
    if not (math.isfinite(xv) and 0.0 <= xv <= 1.0):
        raise InvalidCubeError(f"cube efficiency x must be a number in [0, 1], got {x!r}")
    return xv


def _check_cube(cube_value: int, owner: str, *, match: bool) -> int:
    if owner not in OWNERS:
        raise InvalidCubeError(f"cube owner must be one of {', '.join(OWNERS)}, got {owner!r}")
    try:
        cube = _as_int(cube_value, "cube value")
    except InvalidCubeError:
        cube = 0
    if not (1 <= cube <= MAX_CUBE and cube & (cube - 1) == 0):
        raise InvalidCubeError(f"cube value must be a power of two from 1 to {MAX_CUBE}, got {cube_value!r}")
    if owner != "center" and cube == 1:
        raise InvalidCubeError(
            f"an owned cube has been turned, so its value is at least 2: owner {owner!r}, value 1"
        )
    # Money play allows a centred cube above 1 (automatic doubles); matches do not use them (rules.md).
    if match and owner == "center" and cube != 1:
        raise InvalidCubeError(f"a centred cube in a match is always 1, got {cube_value!r}")
    return cube


# ---------------------------------------------------------------------------
# money play
# ---------------------------------------------------------------------------


def take_point_money(x: float = CONTACT_X, *, taker_win: float = 1.0, taker_loss: float = 1.0) -> float:
    """Janowski's money take point: the taker's least P(win) for a take, ``(L - 1/2) / (W + L + x/2)``.

    ``taker_win``/``taker_loss`` (``W``, ``L``) are the *taker's* average
    cubeless win and loss in units of the cube (1 without gammons; the
    doubler's ``L`` and ``W`` swapped).  x = 0 gives the dead-cube 25%, x = 1
    the fully live 20%, both without gammons.  It is exact for the model of
    :func:`money_cube_decision` (whose ``take_point`` it is): below the
    taker's own cash point double/take minus double/pass is linear in P(win),
    and for x <= 1 the take point always lies below that cash point.
    """
    xv = _check_x(x)
    for value, what in ((taker_win, "taker_win"), (taker_loss, "taker_loss")):
        if not (isinstance(value, int | float) and math.isfinite(value) and 1.0 <= value <= 3.0):
            raise InvalidCubeError(f"{what} must be an average game value in [1, 3], got {value!r}")
    return (taker_loss - 0.5) / (taker_win + taker_loss + 0.5 * xv)


def _money_dead(p: _Probs, gammon_price: float) -> float:
    win, wg, wbg, lg, lbg = p
    return 2.0 * win - 1.0 + gammon_price * (wg - lg + wbg - lbg)


def _money_live(w: float, l_: float, p: float, owner: str, jacoby: bool) -> float:
    # Piecewise-linear live-cube equity (gnubg's MoneyLive) as a function of P(win) = p.
    if owner == "center":
        tp = (l_ - 0.5) / (w + l_ + 0.5)
        cp = (l_ + 1.0) / (w + l_ + 0.5)
        if p < tp:
            return -1.0 if jacoby else -l_ + (l_ - 1.0) * p / tp
        if p < cp:
            return -1.0 + 2.0 * (p - tp) / (cp - tp)
        return 1.0 if jacoby else 1.0 + (w - 1.0) * (p - cp) / (1.0 - cp)
    if owner == "me":
        cp = (l_ + 1.0) / (w + l_ + 0.5)
        if p < cp:
            return -l_ + (1.0 + l_) * p / cp
        return 1.0 + (w - 1.0) * (p - cp) / (1.0 - cp)
    tp = (l_ - 0.5) / (w + l_ + 0.5)
    if p < tp:
        return -l_ + (l_ - 1.0) * p / tp
    return -1.0 + (w + 1.0) * (p - tp) / (1.0 - tp)


def _money_cubeful(p: _Probs, owner: str, x: float, jacoby: bool) -> float:
    # Jacoby only while the cube is centred: once turned, gammons count again.
    jac = jacoby and owner == "center"
    dead = _money_dead(p, 0.0 if jac else 1.0)
    win, wg, wbg, lg, lbg = p
    if win <= _P_EPS or win >= 1.0 - _P_EPS:
        return dead
    w = 1.0 + (wg + wbg) / win
    l_ = 1.0 + (lg + lbg) / (1.0 - win)
    return (1.0 - x) * dead + x * _money_live(w, l_, win, owner, jac)


class MoneyArgs(TypedDict, total=False):
    """The cube of a money cube question, as keywords of :func:`money_cube_decision` and
    :func:`cubeful_equity`, from the side on roll: ``cube_value`` (default 1), ``owner`` (default
    ``"center"``), the cube efficiency ``x`` (default :data:`CONTACT_X`) and ``jacoby`` (default False:
    gammons count with the cube centred too)."""

    cube_value: int
    owner: Owner
    x: float
    jacoby: bool


_MONEY_KEYS = MoneyArgs.__optional_keys__


def _money_inputs(
    probs: Sequence[float], money: Mapping[str, Any], what: str
) -> tuple[_Probs, int, Owner, float, bool]:
    """The checked ``(probs, cube value, owner, x, jacoby)`` of a money function (``InvalidCubeError`` quoting a
    bad value; ``TypeError`` naming ``what`` for a keyword that is not :class:`MoneyArgs`', as Python's own)."""
    if not _MONEY_KEYS.issuperset(money):
        unknown = ", ".join(sorted(money.keys() - _MONEY_KEYS))
        raise TypeError(f"{what}() got unexpected keyword argument(s): {unknown}")
    p = _check_probs(probs)
    owner = money.get("owner", "center")
    cube = _check_cube(money.get("cube_value", 1), owner, match=False)
    return p, cube, owner, _check_x(money.get("x", CONTACT_X)), bool(money.get("jacoby", False))


def cubeful_equity(probs: Sequence[float], **money: Unpack[MoneyArgs]) -> float:
    """Money cubeful equity of the side on roll when it does not double now (Janowski).

    ``probs`` are the cubeless probabilities of the side on roll before its
    roll; the cube is ``money``'s (:class:`MoneyArgs`), ``owner`` seen from
    that side.  The result is normalised to the current cube (multiply by
    ``cube_value`` for points).  Search can rank moves with it: evaluate each
    resulting position from the opponent's view (opponent on roll, owner
    swapped) and negate.
    """
    p, _, owner, xv, jac = _money_inputs(probs, money, "cubeful_equity")
    return _money_cubeful(p, owner, xv, jac)


def _classify(nd: float, dt: float, dp: float, can_gammon: bool) -> Action:
    # gnubg's FindBestCubeDecision without beavers; optional doubles count as doubles.
    if dt >= nd and dp >= nd:
        return "double_take" if dp > dt else "double_pass"
    if nd > dt:
        if dt > dp:
            return "too_good_pass" if can_gammon else "double_pass"
        if nd > dp:
            return "too_good_take" if can_gammon else "no_double"
        return "no_double"
    return "too_good_pass" if can_gammon else "double_pass"


def _scaled(p: _Probs, win: float) -> _Probs:
    # The same gammon/backgammon ratios at another P(win).
    w0, wg, wbg, lg, lbg = p
    fw = win / w0 if w0 > 0 else 0.0
    fl = (1.0 - win) / (1.0 - w0) if w0 < 1 else 0.0
    return win, wg * fw, wbg * fw, lg * fl, lbg * fl


def _take_point(p: _Probs, double_take_minus_pass: Callable[[_Probs], float]) -> float:
    """The opponent's take point: 1 - the P(win) where DT = DP, found by bisection.

    DT - DP rises with the doubler's P(win) for fixed gammon ratios, so the
    crossing is unique; the model is piecewise linear, bisection keeps this
    independent of which piece the crossing lies on.
    """
    lo, hi = 0.0, 1.0
    if double_take_minus_pass(_scaled(p, lo)) >= 0.0:
        return 1.0
    if double_take_minus_pass(_scaled(p, hi)) <= 0.0:
        return 0.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if double_take_minus_pass(_scaled(p, mid)) < 0.0:
            lo = mid
        else:
            hi = mid
    return 1.0 - 0.5 * (lo + hi)


def _with_gammon_ratios(p: _Probs) -> _Probs:
    # With P(win) at 0 or 1 the ratios are undefined; use none so the take point stays defined.
    win = p[0]
    if _P_EPS < win < 1.0 - _P_EPS:
        return p
    return (0.5, 0.0, 0.0, 0.0, 0.0)


def _money_take_point(p: _Probs, x: float) -> float:
    # Closed form: DT = DP is linear in P(win) below the taker's cash point, which it always is for x <= 1.
    win, wg, wbg, lg, lbg = p
    if not _P_EPS < win < 1.0 - _P_EPS:
        return 0.5 / (2.0 + 0.5 * x)  # gammon ratios undefined: as if there were no gammons
    doubler_w = 1.0 + (wg + wbg) / win
    doubler_l = 1.0 + (lg + lbg) / (1.0 - win)
    return (doubler_w - 0.5) / (doubler_l + doubler_w + 0.5 * x)


def money_cube_decision(probs: Sequence[float], **money: Unpack[MoneyArgs]) -> CubeDecision:
    """Money-play cube decision of the side on roll, before it rolls (Janowski's model).

    ``probs``: cubeless probabilities of the side on roll; the cube is
    ``money``'s (:class:`MoneyArgs`), ``owner`` seen from the side on roll.
    When the opponent owns the cube (or it is at its 64 face) doubling is
    impossible: the action is ``'no_double'``, ``can_double`` False and the
    double/take and double/pass equities and the take point ``None``.  Equities are normalised to the current cube.
    """
    p, cube, owner, xv, jac = _money_inputs(probs, money, "money_cube_decision")
    nd = _money_cubeful(p, owner, xv, jac)
    dt = 2.0 * _money_cubeful(p, "opp", xv, False)
    return _money_decision(p, nd, dt, cube, owner, xv)


def money_decision_from_equities(
    probs: Sequence[float],
    equity_no_double: float,
    equity_double_take: float,
    *,
    cube_value: int = 1,
    owner: Owner = "center",
    x: float = CONTACT_X,
) -> CubeDecision:
    """The money cube decision of the side on roll from its no-double and double/take equities.

    The equities (normalised to the current cube, side on roll's view) come
    from elsewhere, e.g. a cubeful lookahead
    (:func:`bgbot.engine.cube_lookahead.lookahead_money_cubeful`); ``probs`` (the side
    on roll's cubeless probabilities) and ``x`` give the take point and
    whether a gammon is possible (too good or double/pass).  Double/pass is 1.0.
    """
    p = _check_probs(probs)
    cube = _check_cube(cube_value, owner, match=False)
    for value, what in ((equity_no_double, "no-double equity"), (equity_double_take, "double/take equity")):
        if not (isinstance(value, numbers.Real) and math.isfinite(value)):
            raise InvalidCubeError(f"the {what} must be a finite number, got {value!r}")
    return _money_decision(p, float(equity_no_double), float(equity_double_take), cube, owner, _check_x(x))


def _money_decision(p: _Probs, nd: float, dt: float, cube: int, owner: str, xv: float) -> CubeDecision:
    if owner == "opp" or cube >= MAX_CUBE:
        note = (
            "the opponent owns the cube" if owner == "opp" else f"the cube is at its highest face {MAX_CUBE}"
        )
        return CubeDecision("no_double", nd, None, None, nd, None, False, note)
    dp = 1.0
    action = _classify(nd, dt, dp, p[1] > 0.0)
    tp = _money_take_point(p, xv)
    return CubeDecision(action, nd, dt, dp, max(nd, min(dt, dp)), tp, True)


def _money_live_batch(w: NDArray[np.float64], l_: NDArray[np.float64], p: NDArray[np.float64], owner: str,
                      jacoby: bool) -> NDArray[np.float64]:
    # _money_live on arrays (the same pieces, chosen with np.where; no piece divides by zero for w, l >= 1)
    tp = (l_ - 0.5) / (w + l_ + 0.5)
    cp = (l_ + 1.0) / (w + l_ + 0.5)
    if owner == "center":
        low = np.full_like(p, -1.0) if jacoby else -l_ + (l_ - 1.0) * p / tp
        high = np.ones_like(p) if jacoby else 1.0 + (w - 1.0) * (p - cp) / (1.0 - cp)
        return np.where(p < tp, low, np.where(p < cp, -1.0 + 2.0 * (p - tp) / (cp - tp), high))
    if owner == "me":
        return np.where(p < cp, -l_ + (1.0 + l_) * p / cp, 1.0 + (w - 1.0) * (p - cp) / (1.0 - cp))
    return np.where(p < tp, -l_ + (l_ - 1.0) * p / tp, -1.0 + (w + 1.0) * (p - tp) / (1.0 - tp))


def _money_cubeful_batch(p: NDArray[np.float64], owner: str, x: NDArray[np.float64],
                         jacoby: bool) -> NDArray[np.float64]:
    # _money_cubeful on (N, 5) probabilities
    jac = jacoby and owner == "center"
    win, wg, wbg, lg, lbg = p.T
    dead = 2.0 * win - 1.0 + (0.0 if jac else 1.0) * (wg - lg + wbg - lbg)
    inside = (win > _P_EPS) & (win < 1.0 - _P_EPS)
    ws = np.where(inside, win, 0.5)
    w = 1.0 + (wg + wbg) / ws
    l_ = 1.0 + (lg + lbg) / (1.0 - ws)
    return np.where(inside, (1.0 - x) * dead + x * _money_live_batch(w, l_, ws, owner, jac), dead)


def money_optimal_equities(
    probs: NDArray[np.floating],
    x: NDArray[np.floating] | float,
    *,
    cube_value: int = 1,
    owner: Owner = "center",
    jacoby: bool = False,
) -> NDArray[np.float64]:
    """Per row, :func:`money_cube_decision`'s ``equity_optimal`` for ``(N, 5)`` probabilities, in one pass.

    Each row is the cubeless probabilities of *its* side on roll before its
    roll, ``owner`` seen from that side, ``x`` the cube efficiency of each
    row (or one for all).  This is what checker play ranks by: the value of
    the best cube action of the side on roll after a move.  Normalised to
    the cube.  Rows must be valid probabilities (the search makes them).
    """
    p = np.asarray(probs, dtype=np.float64).reshape(-1, 5)
    cube = _check_cube(cube_value, owner, match=False)
    xv = np.broadcast_to(np.asarray(x, dtype=np.float64), p.shape[:1])
    nd = _money_cubeful_batch(p, owner, xv, bool(jacoby))
    if owner == "opp" or cube >= MAX_CUBE:
        return nd
    dt = 2.0 * _money_cubeful_batch(p, "opp", xv, False)
    return np.maximum(nd, np.minimum(dt, 1.0))


#: The cube owners of :func:`money_cube_values`' columns, seen from the side on roll.
OWNER_COLUMNS: tuple[Owner, ...] = ("center", "me", "opp")


def money_cube_values(
    probs: NDArray[np.floating], x: NDArray[np.floating] | float, *, jacoby: bool = False
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Janowski's money equities of ``(N, 5)`` positions for every cube owner, in one pass.

    Each row is the cubeless probabilities of *its* side on roll before its
    roll.  Returns ``no_double`` ``(N, 3)``: the cubeful equity when it does
    not double, with the cube centred, its own or the opponent's
    (:data:`OWNER_COLUMNS`), and ``double_take`` ``(N,)``: the equity after it
    doubles and is taken (the opponent owning a cube twice as big, in units
    of the cube before).  Both are the side on roll's, normalised to the
    current cube; Jacoby (gammons count single) applies to the centred
    column only.  The 64 cap of the cube is not modelled.
    """
    p = np.asarray(probs, dtype=np.float64).reshape(-1, 5)
    xv = np.broadcast_to(np.asarray(x, dtype=np.float64), p.shape[:1])
    nd = np.stack([_money_cubeful_batch(p, o, xv, bool(jacoby)) for o in OWNER_COLUMNS], axis=1)
    return nd, 2.0 * nd[:, 2]  # after a take the opponent owns the cube (no Jacoby once it is turned)


def cube_efficiencies(boards: NDArray[np.integer]) -> NDArray[np.float64]:
    """gnubg's cube efficiency of each ``(N, 26)`` board (side on roll's view), as :func:`cube_efficiency` picks it.

    0.68 with contact (crashed included), :data:`BEAROFF_X` when both sides are
    home, :func:`race_cube_efficiency` of the side on roll's pips otherwise
    (also for a finished game).  A few whole-array passes, no class codes: the
    search calls it on every reply it looks at.
    """
    b = np.asarray(boards).reshape(-1, 26)
    if jit.COMPILED:
        # one compiled pass a row (the 3-ply cubeful search values hundreds of thousands of replies); imported
        # here, so that importing the cube model leaves numba and the kernels' mode alone (bgbot.jit)
        from bgbot.eval.features import cube_x_rows

        out = np.empty(b.shape[0], dtype=np.float64)
        cube_x_rows(np.ascontiguousarray(b, dtype=np.int8), CONTACT_X, BEAROFF_X, _RACE_X_BASE, _RACE_X_PER_PIP,
                    RACE_X_MIN, RACE_X_MAX, out)
        return out
    return _cube_efficiencies_numpy(b)


def _cube_efficiencies_numpy(b: NDArray[np.integer]) -> NDArray[np.float64]:
    """:func:`cube_efficiencies` in whole-array numpy passes (interpreted kernels; the compiled one's reference)."""
    mine, theirs = b > 0, b < 0
    my_back = np.where(mine, _SLOTS, 0).max(axis=1)
    opp_back = np.where(theirs, _SLOTS, 25).min(axis=1)
    over = ~mine.any(axis=1) | ~theirs.any(axis=1)
    contact = (my_back > opp_back) & ~over
    home = ~mine[:, 7:].any(axis=1) & ~theirs[:, :19].any(axis=1) & ~over
    pips = (np.where(mine, b, 0) @ _SLOTS).astype(np.float64)
    race = np.clip(_RACE_X_BASE + _RACE_X_PER_PIP * pips, RACE_X_MIN, RACE_X_MAX)
    return np.where(contact, CONTACT_X, np.where(home, BEAROFF_X, race))


_SLOTS = np.arange(26)


# ---------------------------------------------------------------------------
# match play
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Score:
    met: MatchEquityTable
    a: int  # my away score
    b: int  # the opponent's away score
    crawford: bool  # the current game is the Crawford game
    # me_after by points: one decision asks the same few table entries hundreds of times
    _after: dict[int, float] = field(default_factory=dict, compare=False, repr=False)
    _levels: dict[int, tuple[_Level, ...]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def post_crawford(self) -> bool:
        return not self.crawford and (self.a == 1 or self.b == 1)

    def me_after(self, points: int) -> float:
        """My MWC after I win (points > 0) or lose (points < 0) that many points in this game."""
        got = self._after.get(points)
        if got is None:
            got = self._after[points] = self.met.mwc_after(
                self.a, self.b, points, crawford=self.crawford, post_crawford=self.post_crawford
            )
        return got

    def player_after(self, k: int, points: int) -> float:
        """MWC of player k (0 = me, 1 = opponent) after k wins (> 0) or loses (< 0) that many points."""
        return self.me_after(points) if k == 0 else 1.0 - self.me_after(-points)

    def levels(self, cube: int) -> tuple[_Level, ...]:
        """The cube levels gnubg's ``GetPoints`` walks at this score, from the highest one still alive for
        both players down to ``cube``: ``(cube value, level above cube, the value each player's double
        leads to, whether the doubled cube is dead for a player)``.  The value a double leads to is twice
        the cube, or four times where the doubled cube is dead for the doubler only (the opponent's
        automatic redouble)."""
        got = self._levels.get(cube)
        if got is None:
            i, j = self.a - 1, self.b - 1
            top, level_max = cube, 0
            while i >= 2 * top and j >= 2 * top:
                top *= 2
                level_max += 1
            walk = []
            c, level = top, level_max
            while c >= cube:
                prime = (2 * c if i < 2 * c <= j else c, 2 * c if j < 2 * c <= i else c)
                walk.append((c, level, prime, i < 2 * c or j < 2 * c))
                c //= 2
                level -= 1
            got = self._levels[cube] = tuple(walk)
        return got


#: one step of :meth:`_Score.levels`
_Level = tuple[int, int, tuple[int, int], bool]


def _ratios(p: _Probs | _Cols) -> tuple[tuple[_F, _F], tuple[_F, _F]]:
    """((my gammon-only ratio, my backgammon ratio), (the same for the opponent)) among each side's wins.

    Of one position (five floats) or per row (five columns, :func:`_probs_cols`); 0 where a side cannot win.
    """
    win, wg, wbg, lg, lbg = p
    if isinstance(win, np.ndarray):
        lose = 1.0 - win
        with np.errstate(divide="ignore", invalid="ignore"):
            return ((np.where(win > 0, (wg - wbg) / win, 0.0), np.where(win > 0, wbg / win, 0.0)),
                    (np.where(win < 1, (lg - lbg) / lose, 0.0), np.where(win < 1, lbg / lose, 0.0)))
    mine = ((wg - wbg) / win, wbg / win) if win > 0 else (0.0, 0.0)
    theirs = ((lg - lbg) / (1.0 - win), lbg / (1.0 - win)) if win < 1 else (0.0, 0.0)
    return mine, theirs  # type: ignore[return-value]


def _expected(s: _Score, k: int, cube: int, ratios: tuple[_F, _F], *, win: bool) -> _F:
    """Player k's MWC when it wins (``win``) or loses at ``cube`` with these gammon and backgammon ratios
    (floats, or per row)."""
    g, bg = ratios
    sign = 1 if win else -1
    return (
        (1.0 - g - bg) * s.player_after(k, sign * cube)
        + g * s.player_after(k, sign * 2 * cube)
        + bg * s.player_after(k, sign * 3 * cube)
    )


def _live_cash_points(p: _Probs, s: _Score, cube: int) -> tuple[float, float]:
    """Live-cube cash points (the doubler's P(win)) of me and of the opponent (gnubg's GetPoints)."""
    ratios = _ratios(p)
    live: dict[tuple[int, int], float] = {}
    for c, level, prime, dead_above in s.levels(cube):
        for k in (0, 1):
            rk, ro = ratios[k], ratios[1 - k]
            if dead_above:
                dtl = _expected(s, k, 2 * prime[k], ro, win=False)
                dtw = _expected(s, k, 2 * prime[k], rk, win=True)
                dp = s.player_after(k, c)
                cp = (dtl - dp) / (dtl - dtw) if dtl != dtw else 1.0
            else:
                rdp = s.player_after(k, -2 * c)
                dp = s.player_after(k, c)
                dtw = _expected(s, k, 2 * c, rk, win=True)
                cp = 1.0 - live[(1 - k, level + 1)] * (dp - dtw) / (rdp - dtw) if rdp != dtw else 1.0
            live[(k, level)] = cp
    return live[(0, 0)], live[(1, 0)]


def _match_dead(p: _Probs | _Cols, s: _Score, cube: int) -> _F:
    """The dead-cube MWC: each result of the game weighed by my MWC after it (one position, or per row)."""
    win, wg, wbg, lg, lbg = p
    return (
        (win - wg) * s.me_after(cube)
        + (wg - wbg) * s.me_after(2 * cube)
        + wbg * s.me_after(3 * cube)
        + (1.0 - win - lg) * s.me_after(-cube)
        + (lg - lbg) * s.me_after(-2 * cube)
        + lbg * s.me_after(-3 * cube)
    )


def _match_cubeful(p: _Probs | _Cols, s: _Score, cube: int, owner: str, x: _F) -> _F:
    """gnubg's cubeful MWC (``Cl2CfMatch``) when I do not double: the dead-cube MWC mixed with the live one.

    Of one position (five floats, one ``x``), or per row (five columns and an ``x`` per row: the same
    operations in the same order, so each row's figure is the one-position figure).
    """
    dead = _match_dead(p, s, cube)
    if (s.a <= cube and s.b <= cube) or (s.a == 2 and s.b == 2) or s.crawford:
        return dead
    rows = isinstance(p[0], np.ndarray)
    cp_me, cp_opp = (_live_cash_points_rows if rows else _live_cash_points)(p, s, cube)  # type: ignore[operator]
    mine, theirs = _ratios(p)
    cash, opp_cash = s.me_after(cube), s.me_after(-cube)
    win_all = _expected(s, 0, cube, mine, win=True)
    lose_all = _expected(s, 0, cube, theirs, win=False)
    live = (_live_mwc_rows if rows else _live_mwc)(  # type: ignore[operator]
        p[0], owner, cash, opp_cash, win_all, lose_all, 1.0 - cp_opp, cp_me
    )
    return (1.0 - x) * dead + x * live


def _live_mwc(
    win: float, owner: str, cash: float, opp_cash: float, win_all: float, lose_all: float, opp_tg: float, tg: float
) -> float:
    """The live-cube MWC at P(win) ``win``: piecewise linear from losing all (``lose_all``, P(win) 0) through
    the opponent's cash (``opp_cash``, at ``opp_tg``: below it the opponent is too good to double) and mine
    (``cash``, at my cash point ``tg``: above it I am too good) to winning all (``win_all``, P(win) 1); the
    cube's ``owner`` leaves out the other side's cash."""
    if owner == "center":
        if win <= opp_tg:
            live = lose_all + (opp_cash - lose_all) * win / opp_tg if opp_tg > 0 else lose_all
        elif win < tg:
            live = opp_cash + (cash - opp_cash) * (win - opp_tg) / (tg - opp_tg)
        else:
            live = cash + (win_all - cash) * (win - tg) / (1.0 - tg) if tg < 1 else win_all
    elif owner == "me":
        if win <= tg:
            live = lose_all + (cash - lose_all) * win / tg if tg > 0 else lose_all
        else:
            live = cash + (win_all - cash) * (win - tg) / (1.0 - tg) if tg < 1 else win_all
    elif win <= opp_tg:
        live = lose_all + (opp_cash - lose_all) * win / opp_tg if opp_tg > 0 else lose_all
    else:
        live = opp_cash + (win_all - opp_cash) * (win - opp_tg) / (1.0 - opp_tg)
    return live


def _check_score(
    met: MatchEquityTable,
    match_length: int,
    away_me: int,
    away_opp: int,
    crawford: bool,
    cube: int,
    owner: str,
) -> _Score:
    if not isinstance(met, MatchEquityTable):
        raise InvalidCubeError(f"met must be a MatchEquityTable (see bgbot.engine.met.load_met), got {met!r}")
    match_length = _as_int(match_length, "match_length")
    away_me = _as_int(away_me, "away_me")
    away_opp = _as_int(away_opp, "away_opp")
    if not 1 <= match_length <= met.length:
        raise InvalidCubeError(
            f"match_length {match_length!r} is outside 1..{met.length} covered by the table {met.name!r}"
        )
    for value, what in ((away_me, "away_me"), (away_opp, "away_opp")):
        if not 1 <= value <= match_length:
            raise InvalidCubeError(
                f"{what}={value!r} is impossible in a {match_length}-point match (must be 1..{match_length})"
            )
    if crawford:
        if (away_me == 1) == (away_opp == 1):
            raise InvalidCubeError(
                f"the Crawford game needs exactly one side 1-away, got {away_me!r}-away, {away_opp!r}-away"
            )
        if cube != 1 or owner != "center":
            raise InvalidCubeError(
                f"the cube is out of play in the Crawford game, got value {cube!r} owned by {owner!r}"
            )
    key = (id(met), away_me, away_opp, bool(crawford))
    score = _SCORES.get(key)
    if score is None or score.met is not met:
        if len(_SCORES) >= 4096:
            _SCORES.clear()
        score = _SCORES[key] = _Score(met, away_me, away_opp, bool(crawford))
    return score


#: one :class:`_Score` per (table, score, Crawford): its ``me_after`` memo then serves every decision at that
#: score (an analysis asks the same few table entries for every candidate of every move)
_SCORES: dict[tuple[int, int, int, bool], _Score] = {}


class _MatchRequired(TypedDict):
    met: MatchEquityTable
    match_length: int
    away_me: int
    away_opp: int


class MatchScoreArgs(_MatchRequired, total=False):
    """The score of a match cube question, as keywords of the match functions, from the side on roll.

    ``met`` (:class:`~bgbot.engine.met.MatchEquityTable`), ``match_length``, ``away_me`` and ``away_opp`` (the
    points the side on roll and its opponent still need) are required; ``cube_value`` (default 1) and
    ``crawford`` (default False: a game with a side 1-away is the Crawford game if True and a post-Crawford
    game otherwise) are not.
    """

    cube_value: int
    crawford: bool


class MatchArgs(MatchScoreArgs, total=False):
    """:class:`MatchScoreArgs` and the cube's ``owner`` (default ``"center"``), seen from the side on roll."""

    owner: Owner


_SCORE_KEYS = MatchScoreArgs.__required_keys__ | MatchScoreArgs.__optional_keys__
_MATCH_KEYS = MatchArgs.__required_keys__ | MatchArgs.__optional_keys__


def match_keywords(
    match: Mapping[str, Any], what: str, keys: frozenset[str] = _MATCH_KEYS
) -> tuple[MatchEquityTable, int, int, int, int, Owner, bool]:
    """``match`` (:class:`MatchArgs`) as ``(met, match_length, away_me, away_opp, cube_value, owner, crawford)``,
    the defaults filled in and nothing else checked.

    A keyword that is not one of ``keys``, or a missing required one, is a ``TypeError`` naming the
    function ``what``, as Python's own for a bad call.
    """
    if not keys.issuperset(match):
        raise TypeError(f"{what}() got unexpected keyword argument(s): {', '.join(sorted(match.keys() - keys))}")
    try:
        return (match["met"], match["match_length"], match["away_me"], match["away_opp"], match.get("cube_value", 1),
                match.get("owner", "center"), match.get("crawford", False))
    except KeyError:
        missing = ", ".join(sorted(MatchArgs.__required_keys__ - match.keys()))
        raise TypeError(f"{what}() missing required keyword argument(s): {missing}") from None


def _match_state(match: Mapping[str, Any], what: str) -> tuple[_Score, int, Owner]:
    """The checked score, cube value and owner of a match function's keywords (``InvalidCubeError`` quoting
    a bad value)."""
    met, length, away_me, away_opp, cube_value, owner, crawford = match_keywords(match, what)
    cube = _check_cube(cube_value, owner, match=True)
    return _check_score(met, length, away_me, away_opp, bool(crawford), cube, owner), cube, owner


def match_cubeful_mwc(probs: Sequence[float], *, x: float = CONTACT_X, **match: Unpack[MatchArgs]) -> float:
    """Cubeful match winning chance of the side on roll when it does not double now.

    ``probs`` are the cubeless probabilities of the side on roll before its
    roll; the score and cube are ``match``'s (:class:`MatchArgs`), from the
    side on roll; ``x`` is the cube efficiency.
    """
    p = _check_probs(probs)
    s, cube, owner = _match_state(match, "match_cubeful_mwc")
    xv = _check_x(x)
    try:
        return _match_cubeful(p, s, cube, owner, xv)
    except MetError as exc:
        raise InvalidCubeError(str(exc)) from None


def match_dead_mwcs(probs: NDArray[np.floating], **score: Unpack[MatchScoreArgs]) -> NDArray[np.float64]:
    """Per row, the dead-cube match winning chance of ``(N, 5)`` probabilities, in one pass.

    Each row is the cubeless probabilities of the side on roll (the side
    that is ``away_me`` away), before its roll; the value weighs each result
    of the game (single, gammon, backgammon, either way, at ``cube_value``)
    by the MWC after it, so it is linear in the probabilities: the gammon
    and backgammon values of this score.  What the checker-play search
    chooses plays by inside its lookahead in a match (the full cubeful MWC
    of :func:`match_cubeful_mwc` ranks the candidates themselves).
    """
    p = np.asarray(probs, dtype=np.float64).reshape(-1, 5)
    met, length, away_me, away_opp, cube_value, _, crawford = match_keywords(score, "match_dead_mwcs", _SCORE_KEYS)
    owned = "me" if cube_value != 1 else "center"  # who owns it does not matter with a dead cube
    cube = _check_cube(cube_value, owned, match=True)
    s = _check_score(met, length, away_me, away_opp, bool(crawford), cube, owned)
    try:
        w = [s.me_after(k * cube) for k in (1, 2, 3, -1, -2, -3)]
    except MetError as exc:
        raise InvalidCubeError(str(exc)) from None
    win, wg, wbg, lg, lbg = p.T
    return (
        (win - wg) * w[0] + (wg - wbg) * w[1] + wbg * w[2]
        + (1.0 - win - lg) * w[3] + (lg - lbg) * w[4] + lbg * w[5]
    )


def match_cube_decision(
    probs: Sequence[float], *, x: float = CONTACT_X, with_take_point: bool = True, **match: Unpack[MatchArgs]
) -> CubeDecision:
    """Match-play cube decision of the side on roll, before it rolls (gnubg's ``Cl2CfMatch`` model).

    ``probs``: cubeless probabilities of the side on roll; ``x``: the cube
    efficiency; the score and cube are ``match``'s (:class:`MatchArgs`:
    ``met``, ``match_length``, ``away_me`` / ``away_opp`` the points still
    needed by the side on roll and the opponent, ``cube_value``, ``owner``
    seen from the side on roll, ``crawford``).  No double is possible in the Crawford game or against
    the opponent's cube; a dead cube or the post-Crawford leader's cube gives
    ``'no_double'`` as well.  The MWCs of no double, double/take and
    double/pass are converted to equity by the linear map that sends "lose
    the cube value" to -1 and "win the cube value" to +1 (gnubg's
    ``mwc2eq``), so double/pass is exactly 1.0.  ``with_take_point=False``
    leaves ``take_point`` None and skips its search (about 40 evaluations of
    the model): checker play ranks by the optimal equity alone.
    """
    p = _check_probs(probs)
    s, cube, owner = _match_state(match, "match_cube_decision")
    xv = _check_x(x)
    try:
        return _match_decision(p, s, cube, owner, xv, with_take_point=with_take_point)
    except MetError as exc:
        raise InvalidCubeError(str(exc)) from None


def match_decision_from_mwcs(
    probs: Sequence[float],
    mwc_no_double: float,
    mwc_double_take: float | None,
    *,
    x: float = CONTACT_X,
    with_take_point: bool = True,
    shift: tuple[float, float] = (0.0, 0.0),
    **match: Unpack[MatchArgs],
) -> CubeDecision:
    """The match cube decision of the side on roll from its no-double and double/take MWCs.

    The MWCs (side on roll's) come from elsewhere, e.g. a cubeful lookahead
    (:func:`bgbot.engine.cube_lookahead.match_cube_lookahead`); whether the
    cube may be turned, double/pass and the take point are
    :func:`match_cube_decision`'s on ``probs`` (the side on roll's cubeless
    probabilities), and the equities the same normalisation of the MWCs.
    ``mwc_double_take`` is ignored where no double is legal.  ``shift`` is
    added to the no-double and double/take figures first, in normalised
    equity (the lookahead's correction, :data:`bgbot.engine.cube_lookahead.ONE_ROLL_SHIFT`);
    the MWCs move by the same amounts, clipped to [0, 1].
    """
    static = match_cube_decision(probs, x=x, with_take_point=with_take_point, **match)
    values = [mwc_no_double] if static.equity_double_take is None else [mwc_no_double, mwc_double_take]
    for value in values:
        if not (isinstance(value, numbers.Real) and math.isfinite(value) and 0.0 <= value <= 1.0):
            raise InvalidCubeError(f"a match winning chance must be a number in [0, 1], got {value!r}")
    s, cube, _ = _match_state(match, "match_decision_from_mwcs")
    mwc_win, mwc_lose = s.me_after(cube), s.me_after(-cube)

    def to_eq(mwc: float) -> float:
        return (2.0 * mwc - (mwc_win + mwc_lose)) / (mwc_win - mwc_lose)

    def shifted(mwc: float, by: float) -> float:
        return min(1.0, max(0.0, mwc + by * (mwc_win - mwc_lose) / 2.0))

    nd = shifted(float(mwc_no_double), shift[0])
    if static.equity_double_take is None:  # no double is legal
        return replace(static, equity_no_double=to_eq(nd), equity_optimal=to_eq(nd), mwc_no_double=nd,
                       mwc_optimal=nd)
    dt = shifted(float(mwc_double_take), shift[1])  # type: ignore[arg-type]
    if not static.can_double:  # legal but pointless
        return replace(static, equity_no_double=to_eq(nd), equity_double_take=to_eq(dt), equity_optimal=to_eq(nd),
                       mwc_no_double=nd, mwc_double_take=dt, mwc_optimal=nd)
    dp = float(static.mwc_double_pass)  # type: ignore[arg-type]
    e_nd, e_dt = to_eq(nd), to_eq(dt)
    action = _classify(e_nd, e_dt, 1.0, _check_probs(probs)[1] > 0.0)
    return CubeDecision(action, e_nd, e_dt, 1.0, max(e_nd, min(e_dt, 1.0)), static.take_point, True, "",
                        nd, dt, dp, max(nd, min(dt, dp)))


def _match_decision(
    p: _Probs, s: _Score, cube: int, owner: str, x: float, *, with_take_point: bool = True
) -> CubeDecision:
    mwc_win, mwc_lose = s.me_after(cube), s.me_after(-cube)

    def to_eq(mwc: float) -> float:
        return (2.0 * mwc - (mwc_win + mwc_lose)) / (mwc_win - mwc_lose)

    nd = _match_cubeful(p, s, cube, owner, x)
    illegal = ""
    if s.crawford:
        illegal = "Crawford game: the cube is out of play"
    elif owner == "opp":
        illegal = "the opponent owns the cube"
    elif cube >= MAX_CUBE:
        illegal = f"the cube is at its highest face {MAX_CUBE}"
    if illegal:
        return CubeDecision(
            "no_double", to_eq(nd), None, None, to_eq(nd), None, False, illegal, nd, None, None, nd
        )

    dt = _match_cubeful(p, s, 2 * cube, "opp", x)
    dp = mwc_win

    def dt_minus_dp(q: _Probs) -> float:
        return _match_cubeful(q, s, 2 * cube, "opp", x) - dp

    tp = _take_point(_with_gammon_ratios(p), dt_minus_dp) if with_take_point else None
    pointless = ""
    if s.a == 1 and s.b == 1:
        pointless = "double match point: only winning the game counts"
    elif s.post_crawford and s.a == 1:
        pointless = "post-Crawford leader: any win already wins the match"
    elif s.a <= cube:
        pointless = "dead cube: the current cube already wins the match"
    if pointless:
        return CubeDecision(
            "no_double", to_eq(nd), to_eq(dt), 1.0, to_eq(nd), tp, False, pointless, nd, dt, dp, nd
        )
    e_nd, e_dt = to_eq(nd), to_eq(dt)
    action = _classify(e_nd, e_dt, 1.0, p[1] > 0.0)
    e_opt = max(e_nd, min(e_dt, 1.0))
    opt = max(nd, min(dt, dp))
    return CubeDecision(action, e_nd, e_dt, 1.0, e_opt, tp, True, "", nd, dt, dp, opt)


# ---------------------------------------------------------------------------
# match play, many positions at once (ranking a roll's plays)
# ---------------------------------------------------------------------------

def _probs_cols(probs: NDArray[np.floating]) -> _Cols:
    """:func:`_check_probs` of every row of ``(N, 5)`` probabilities, as five columns (the same clipping)."""
    p = np.asarray(probs, dtype=np.float64).reshape(-1, 5)
    if not (np.isfinite(p).all() and (p >= -_PROB_TOL).all() and (p <= 1.0 + _PROB_TOL).all()):
        raise InvalidCubeError(f"probabilities must lie in [0, 1], got rows like {p[0].tolist()!r}")
    win, wg, wbg, lg, lbg = (np.minimum(1.0, np.maximum(0.0, p[:, k])) for k in range(5))
    bad = (wg > win + _PROB_TOL) | (wbg > wg + _PROB_TOL) | (lg > 1.0 - win + _PROB_TOL) | (lbg > lg + _PROB_TOL)
    if bad.any():
        raise InvalidCubeError(
            f"inconsistent probabilities (need wbg <= wg <= win and lbg <= lg <= 1 - win), got {p[bad][0].tolist()!r}"
        )
    wg = np.minimum(wg, win)
    wbg = np.minimum(wbg, wg)
    lg = np.minimum(lg, 1.0 - win)
    lbg = np.minimum(lbg, lg)
    return win, wg, wbg, lg, lbg


def _live_cash_points_rows(p: _Cols, s: _Score, cube: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """:func:`_live_cash_points` per row (the same operations in the same order, so the same figures)."""
    ratios = _ratios(p)
    live: dict[tuple[int, int], NDArray[np.float64]] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for c, level, prime, dead_above in s.levels(cube):
            for k in (0, 1):
                if dead_above:
                    dtl = _expected(s, k, 2 * prime[k], ratios[1 - k], win=False)
                    dtw = _expected(s, k, 2 * prime[k], ratios[k], win=True)
                    dp = s.player_after(k, c)
                    live[(k, level)] = np.where(dtl != dtw, (dtl - dp) / (dtl - dtw), 1.0)
                else:
                    rdp = s.player_after(k, -2 * c)
                    dtw = _expected(s, k, 2 * c, ratios[k], win=True)
                    dp = s.player_after(k, c)
                    live[(k, level)] = np.where(
                        rdp != dtw, 1.0 - live[(1 - k, level + 1)] * (dp - dtw) / (rdp - dtw), 1.0
                    )
    return live[(0, 0)], live[(1, 0)]


def _live_mwc_rows(
    win: NDArray[np.float64], owner: str, cash: float, opp_cash: float, win_all: NDArray[np.float64],
    lose_all: NDArray[np.float64], opp_tg: NDArray[np.float64], tg: NDArray[np.float64],
) -> NDArray[np.float64]:
    """:func:`_live_mwc` per row (every piece computed for every row, each row's own kept)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        below_opp = np.where(opp_tg > 0, lose_all + (opp_cash - lose_all) * win / opp_tg, lose_all)
        above_me = np.where(tg < 1, cash + (win_all - cash) * (win - tg) / (1.0 - tg), win_all)
        if owner == "center":
            between = opp_cash + (cash - opp_cash) * (win - opp_tg) / (tg - opp_tg)
            live = np.where(win <= opp_tg, below_opp, np.where(win < tg, between, above_me))
        elif owner == "me":
            below_me = np.where(tg > 0, lose_all + (cash - lose_all) * win / tg, lose_all)
            live = np.where(win <= tg, below_me, above_me)
        else:
            above_opp = opp_cash + (win_all - opp_cash) * (win - opp_tg) / (1.0 - opp_tg)
            live = np.where(win <= opp_tg, below_opp, above_opp)
    return live


def match_optimal_values(
    probs: NDArray[np.floating], xs: NDArray[np.floating], **match: Unpack[MatchArgs]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The optimal cube action's (equity, MWC) of the side on roll for each row: :func:`match_cube_decision`'s
    ``equity_optimal`` and ``mwc_optimal`` for many positions at one score, in one pass (the same figures).

    ``probs`` ``(N, 5)`` are each position's cubeless probabilities of the side on roll (before its roll),
    ``xs`` ``(N,)`` their cube efficiencies; the score and cube ``match``'s (:class:`MatchArgs`), from the
    side on roll.  What ranking a roll's plays in a match needs (minus the opponent's optimum after each).
    """
    p = _probs_cols(probs)
    x = np.asarray(xs, dtype=np.float64).reshape(-1)
    if x.shape[0] != p[0].shape[0] or not (np.isfinite(x).all() and (x >= 0).all() and (x <= 1).all()):
        raise InvalidCubeError(f"cube efficiencies must be one number in [0, 1] per row, got {x.tolist()!r}")
    s, cube, owner = _match_state(match, "match_optimal_values")
    try:
        mwc_win, mwc_lose = s.me_after(cube), s.me_after(-cube)

        def to_eq(mwc: NDArray[np.float64]) -> NDArray[np.float64]:
            return (2.0 * mwc - (mwc_win + mwc_lose)) / (mwc_win - mwc_lose)

        nd = _match_cubeful(p, s, cube, owner, x)
        if s.crawford or owner == "opp" or cube >= MAX_CUBE:
            return to_eq(nd), nd
        dt = _match_cubeful(p, s, 2 * cube, "opp", x)
        if (s.a == 1 and s.b == 1) or (s.post_crawford and s.a == 1) or s.a <= cube:
            return to_eq(nd), nd
        e_opt = np.maximum(to_eq(nd), np.minimum(to_eq(dt), 1.0))
        return e_opt, np.maximum(nd, np.minimum(dt, mwc_win))
    except MetError as exc:
        raise InvalidCubeError(str(exc)) from None
