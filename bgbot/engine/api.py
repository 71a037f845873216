"""The engine API: load a trained network once, then ask for evaluations, moves and cube actions.

>>> engine = Engine.load()                                  # doctest: +SKIP
>>> engine.best_move("4HPwATDgc/ABMA", "31").best.move      # doctest: +SKIP
'8/5 6/5'
>>> engine.cube_action("XGID=...", ply=2).action            # doctest: +SKIP
'no_double'

Every position is seen from **the side on roll** (gnubg's Position ID is
written that way already); it may be given as a :class:`~bgbot.rules.position.Position`
or as text (gnubg Position ID, ``PositionID:MatchID``, XGID or FIBS board).
Plies use the XG convention (1-ply = the network alone; see
:mod:`bgbot.engine.search`).  Exact races (both sides home) are answered by the
one-sided bear-off database instead of the network.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bgbot.engine.cube import (
    BEAROFF_X,
    OWNER_COLUMNS,
    CubeDecision,
    cube_efficiencies,
    cube_efficiency,
    match_cube_decision,
    match_dead_mwcs,
    match_decision_from_mwcs,
    match_optimal_values,
    money_cube_decision,
    money_decision_from_equities,
    money_optimal_equities,
)
from bgbot.engine.cube_lookahead import (
    ONE_ROLL_SHIFT,
    CubeShift,
    exact_cube_values,
    lookahead_money_cubeful,
    match_cube_lookahead,
)
from bgbot.engine.met import DEFAULT_MET, load_met
from bgbot.engine.search import (
    CUBEFUL_MATCH,
    CUBEFUL_MONEY,
    DEFAULT_FILTERS,
    Analysis,
    BearoffEvaluator,
    MoveFilter,
    Valuation,
    Valuer,
    _analyze,
    analyze,
    check_ply,
    lookahead_probs,
    rerank,
    search_chooser,
)
from bgbot.errors import InvalidPositionError, InvalidScoreError, quote_input
from bgbot.eval.evaluate import Evaluator, NetEvaluator, default_threads, equity, flip_probs
from bgbot.eval.models import load_model
from bgbot.formats.ids import format_xgid
from bgbot.formats.parse import parse_position
from bgbot.rules.matchstate import MAX_CUBE, CubeState, MatchState
from bgbot.rules.position import Position, PositionClass, classify

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from bgbot.engine.met import MatchEquityTable
    from bgbot.engine.rollout import RolloutResult, RolloutSettings
    from bgbot.engine.search import Chooser
    from bgbot.eval.bearoff import BearoffDB
    from bgbot.eval.nets import ValueNet

__all__ = [
    "Engine",
    "InvalidScoreError",
    "describe_action",
    "position_ids",
    "probs_dict",
]



#: :attr:`CubeDecision.note` of a decision read off the exact two-sided bear-off table.
EXACT_BEAROFF_NOTE = "exact: two-sided bear-off table"
_MONEY = CubeState()  # a money game, cube centred (frozen: one instance serves every call)
#: Inside the money cubeful lookahead a play is valued by the mover's cubeful equity plus this much of its
#: cubeless equity.  Where every play of a roll ends in the same cash (the side to move next doubles and
#: the other passes, whatever was played), the cubeful values tie exactly; the plays are chosen once for
#: every cube state of the tree, and in the double/take branch (the opponent owns the cube, nobody cashes)
#: the first of the tied plays could be a blunder.  The cubeless equity picks the play among the tied ones.
CUBELESS_TIE_BREAK = 1e-6
_OWNER_SEEN_BY_OPPONENT = {"center": "center", "me": "opp", "opp": "me"}


def _optimal_from_values(
    nd: NDArray[np.float64], dt: NDArray[np.float64], owner: str, cube: int
) -> NDArray[np.float64]:
    """The side on roll's optimal money equity per row from its no-double equities ``nd`` ``(N, 3)`` (by
    :data:`OWNER_COLUMNS`) and double/take ``dt`` ``(N,)``: no double when it cannot double (the opponent
    owns the cube, or it is at its highest face), else ``max(no double, min(double/take, double/pass = 1))``."""
    col = OWNER_COLUMNS.index(owner)  # type: ignore[arg-type]
    if owner == "opp" or cube >= MAX_CUBE:
        return nd[:, col]
    return np.maximum(nd[:, col], np.minimum(dt, 1.0))


@functools.lru_cache(maxsize=512)
def _opponents_cube(cs: CubeState) -> CubeState:
    """The cube and score of ``cs`` (the side on roll's view) seen by its opponent, who is on roll after the move.

    Cached: a game meets a handful of cube states, and building one validates every field.
    """
    return CubeState(
        cube=cs.cube,
        owner=_OWNER_SEEN_BY_OPPONENT[cs.owner],  # type: ignore[arg-type]
        match=cs.match,
        score=(cs.score[1], cs.score[0]),
        crawford=cs.crawford,
        jacoby=cs.jacoby,
    )


def _as_position(pos: Position | str) -> Position:
    if isinstance(pos, Position):
        return pos
    if isinstance(pos, str):
        return parse_position(pos)
    raise InvalidPositionError(f"expected a Position or a position ID text, got {quote_input(pos)}")


def describe_action(decision: CubeDecision, owner: str) -> str:
    """gnubg's wording of a decision, e.g. ``'Double, take'`` or ``'No redouble, take'``."""
    if not decision.can_double:
        return "No double" + (f" ({decision.note})" if decision.note else "")
    verb = "Redouble" if owner == "me" else "Double"
    low = verb.lower()
    return {
        "no_double": f"No {low}, take",
        "double_take": f"{verb}, take",
        "double_pass": f"{verb}, pass",
        "too_good_take": f"Too good to {low}, take",
        "too_good_pass": f"Too good to {low}, pass",
    }[decision.action]


# ---------------------------------------------------------------------------
# the engine
# ---------------------------------------------------------------------------


class Engine:
    """A trained evaluator plus search: evaluations, best moves and cube actions.

    Build one with :meth:`load` (a checkpoint file) or :meth:`from_net`; the
    constructor takes any :class:`~bgbot.eval.evaluate.Evaluator`.  With
    ``bearoff=True`` (the default) positions where both sides are home are
    answered exactly by the bear-off database (built on first use if
    missing); a :class:`~bgbot.eval.bearoff.BearoffDB` may be passed instead.
    With it, money cube figures of two-sided bear-offs of at most six
    checkers a side are exact (:mod:`bgbot.engine.bearoff_cube`): cube
    decisions, the cubeful lookahead's leaves and cube-aware checker play.
    ``filters`` are the move filters of deeper plies; ``met`` the match
    equity table for match cube decisions (a :class:`~bgbot.engine.met.MatchEquityTable`
    or the name of a shipped one).  ``cube_shift`` corrects 2-ply cube
    decisions for the one-roll lookahead's bias (default
    :data:`~bgbot.engine.cube_lookahead.ONE_ROLL_SHIFT`; ``NO_SHIFT``: gnubg's 1-ply).
    """

    def __init__(
        self,
        evaluator: Evaluator,
        *,
        bearoff: bool | BearoffDB = True,
        filters: Sequence[MoveFilter] = DEFAULT_FILTERS,
        met: MatchEquityTable | str | None = None,
        checkpoint: Path | None = None,
        games_trained: int | None = None,
        cube_shift: CubeShift = ONE_ROLL_SHIFT,
    ) -> None:
        self.base = evaluator
        self.cube_shift = cube_shift
        # money cube figures of small two-sided bear-offs from the exact table (with the bear-off database)
        self._exact_cube = bearoff is not False
        if bearoff is False:
            self.evaluator: Evaluator = evaluator
        elif bearoff is True:
            self.evaluator = BearoffEvaluator(evaluator)
        else:
            self.evaluator = BearoffEvaluator(evaluator, bearoff)
        self.filters = tuple(filters)
        self._met = met
        self.checkpoint = checkpoint
        self.games_trained = games_trained

    # ---- construction -------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None, *, threads: int | None = None, **kwargs: Any) -> Engine:
        """Load the network of a checkpoint file (default: :func:`bgbot.eval.models.default_checkpoint`).

        ``threads``: the threads a big batch of positions is split across (default
        :func:`~bgbot.eval.evaluate.default_threads`: ``BGBOT_THREADS``, else the
        cores, at most 4); the answers are the same with any number.  Other
        keyword arguments go to the constructor.  A missing or unreadable file
        raises :class:`~bgbot.errors.CheckpointError` saying how to get one.
        """
        model = load_model(path)
        net = NetEvaluator(model.net, threads=default_threads() if threads is None else threads)
        return cls(net, checkpoint=model.path, games_trained=model.games_trained, **kwargs)

    @classmethod
    def from_net(cls, net: ValueNet, **kwargs: Any) -> Engine:
        """An engine on an in-memory :class:`~bgbot.eval.nets.ValueNet` (keyword arguments: the constructor's)."""
        return cls(NetEvaluator(net), **kwargs)

    @property
    def threads(self) -> int:
        """The threads the network splits a big batch of positions across (1 for a network without threads)."""
        return int(getattr(self.base, "threads", 1))

    @property
    def met(self) -> MatchEquityTable:
        """The match equity table for match cube decisions (default: the shipped Kazaross XG2 table)."""
        if self._met is None or isinstance(self._met, str):
            self._met = load_met(self._met or DEFAULT_MET)
        return self._met

    def describe(self) -> str:
        """One line naming the network: its checkpoint file and games trained."""
        if self.checkpoint is None:
            return "bgbot (in-memory evaluator)"
        games = f", {self.games_trained:,} games trained" if self.games_trained is not None else ""
        return f"bgbot network {self.checkpoint}{games}"

    # ---- queries ------------------------------------------------------
    def evaluate(self, pos: Position | str, ply: int = 1) -> NDArray[np.float64]:
        """Cubeless probabilities ``[win, wg, wbg, lg, lbg]`` of the side on roll, before it rolls.

        ``ply=1`` is the network (or the bear-off database); ``ply=n`` averages
        the best move of each of the 21 rolls looked at ``n - 1`` plies deep
        (the probabilities a cube decision at ``n`` ply uses).
        """
        p = _as_position(pos)
        n = check_ply(ply)
        return lookahead_probs(self.evaluator, p.array()[None, :], n - 1)[0]

    def equity(self, pos: Position | str, ply: int = 1) -> float:
        """Cubeless money equity of the side on roll, before it rolls (see :meth:`evaluate`)."""
        return float(equity(self.evaluate(pos, ply)))

    def best_move(
        self,
        pos: Position | str,
        dice: object,
        ply: int = 1,
        state: CubeState | MatchState | None = None,
        *,
        cubeless: bool = False,
    ) -> Analysis:
        """Every legal play of ``dice`` in ``pos`` (side on roll's view) ranked at ``ply``; ``.best`` is the choice.

        Plays are ranked as gnubg and XG rank them: by **cubeful** equity in a
        money game (Janowski's interpolation with the cube efficiencies of the
        cube decisions) and by **match winning chances** in a match (the match
        equity table at this score: gammon values, Crawford, post-Crawford,
        cube value and owner), shown in gnubg's EMG normalisation with the MWC
        beside it.  ``state`` is the cube and score (a :class:`CubeState` from
        the side on roll, a :class:`MatchState`, or None for a money game with
        the cube centred).  Each play's result is valued for the opponent, now
        on roll with the cube after the move: the mover's value is minus the
        opponent's best cube action.  In a money game a play searched at ply
        ``k >= 2`` takes that action from the opponent's own cubeful lookahead
        (the decision :meth:`cube_action` makes there at ply ``k``: cube
        decisions at every node of the tree); a 1-ply play, and every play in
        a match, from the probabilities found at its ply.
        ``cubeless=True`` ranks by cubeless money equity instead.
        ``analysis.kind`` names the equity shown.
        """
        p = _as_position(pos)
        if cubeless:
            return analyze(self.evaluator, p, dice, ply, self.filters)
        cs = self.cube_state(state)
        theirs = _opponents_cube(cs)
        # boards: the candidates' results, (K, 26) from the opponent's view, in the candidates' order
        a, boards, searched = _analyze(self.evaluator, p, dice, ply, self.filters, self._valuation(cs, theirs))
        if searched is not None and cs.is_money:
            # above 1-ply each play's value came from the search: minus the opponent's best cube
            # action after it, from the cubeful lookahead for the plays looked at deeper
            return rerank(a, [(v, None) for v in searched.tolist()], CUBEFUL_MONEY, cs.match_state())
        # every candidate at once (a roll has at least one: not moving is a candidate): the
        # opponent's probabilities and cube efficiency after each play
        probs = np.asarray([c.probs for c in a.candidates], dtype=np.float64)
        values = self._play_values(cs, theirs, probs, boards)
        return rerank(a, values, CUBEFUL_MONEY if cs.is_money else CUBEFUL_MATCH, cs.match_state())

    def _play_values(
        self, cs: CubeState, theirs: CubeState, probs: NDArray[np.float64], results: NDArray[np.int8]
    ) -> list[tuple[float, float | None]]:
        """(equity, MWC) of each play for its mover: minus the opponent's best cube action after it.

        ``probs`` are the results' cubeless probabilities from the mover's view, ``results`` the
        positions after the plays (the opponent's view, on roll, with the cube ``theirs``).
        """
        opp_probs = flip_probs(probs)
        xs = cube_efficiencies(results)
        if cs.is_money:
            opt = self._money_optimal(opp_probs, results, xs, theirs.cube, theirs.owner, theirs.jacoby)
            return [(-float(v), None) for v in opt]
        # every play at once: the opponent's optimal match cube action (match_cube_decision's figures)
        away_me, away_opp = theirs.away
        e_opt, m_opt = match_optimal_values(opp_probs, xs, met=self.met, match_length=theirs.match, away_me=away_me,
                                            away_opp=away_opp, cube_value=theirs.cube, owner=theirs.owner,
                                            crawford=theirs.crawford)
        return [(-e, 1.0 - m) for e, m in zip(e_opt.tolist(), m_opt.tolist(), strict=True)]

    def _money_optimal(self, probs: NDArray[np.float64], boards: NDArray[np.int8], xs: NDArray[np.float64],
                       cube: int, owner: str, jacoby: bool) -> NDArray[np.float64]:
        """The side on roll's best money cube action's equity per board (its view; Janowski or exact)."""
        opt = money_optimal_equities(probs, xs, cube_value=cube, owner=owner, jacoby=jacoby)  # type: ignore[arg-type]
        if self._exact_cube:
            nd = np.full((len(boards), 3), np.nan)
            dt = np.full(len(boards), np.nan)
            if exact_cube_values(boards, nd, dt):
                exact = _optimal_from_values(nd, dt, owner, cube)
                opt = np.where(np.isnan(exact), opt, exact)
        return opt

    def _valuation(self, cs: CubeState, theirs: CubeState) -> Valuation:
        """The search's values for the side on roll (cube ``cs``) and its opponent (``theirs``).

        Candidates are filtered by their cubeful value (:meth:`_play_values`); inside the
        lookahead each side chooses by its cubeful money equity, or in a match by its dead-cube
        MWC at the score (linear in the probabilities, batched).
        """

        def rank(probs: NDArray[np.float64], results: NDArray[np.int8]) -> NDArray[np.float64]:
            return np.asarray([v for v, _ in self._play_values(cs, theirs, probs, results)])

        if cs.is_money:

            def money(owner_after: str) -> Valuer:
                def value(probs: NDArray[np.float64], results: NDArray[np.int8]) -> NDArray[np.float64]:
                    cubeful = -self._money_optimal(flip_probs(probs), results, cube_efficiencies(results), cs.cube,
                                                   owner_after, cs.jacoby)
                    return cubeful + CUBELESS_TIE_BREAK * equity(probs)
                return value

            def deep(
                results: NDArray[np.int8], depth: int, choose: tuple[Valuer, Valuer]
            ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
                # the opponent's cubeful lookahead after each play (its cube decision at every node), as
                # its own cube decision at this ply would make it; the mover's value is minus its optimum
                probs, nd, dt = lookahead_money_cubeful(self.evaluator, results, depth, choose, jacoby=cs.jacoby,
                                                        exact_bearoff=self._exact_cube)
                add_nd, add_dt = self._shift(depth + 1)  # the decision cube_action makes at this ply
                nd += add_nd
                dt += add_dt
                if self._exact_cube:
                    exact_cube_values(results, nd, dt)  # a small two-sided bear-off is decided exactly
                return probs, -_optimal_from_values(nd, dt, theirs.owner, theirs.cube)

            # after my play the opponent is on roll with ``theirs``; after its play I am, with ``cs``
            return Valuation(rank=rank, mine=money(theirs.owner), theirs=money(cs.owner), deep=deep)
        away_me, away_opp = cs.away

        def dead(me: int, opp: int) -> Valuer:
            def value(probs: NDArray[np.float64], results: NDArray[np.int8]) -> NDArray[np.float64]:
                return match_dead_mwcs(probs, met=self.met, match_length=cs.match, away_me=me, away_opp=opp,
                                       cube_value=cs.cube, crawford=cs.crawford)
            return value

        return Valuation(rank=rank, mine=dead(away_me, away_opp), theirs=dead(away_opp, away_me))

    def cube_action(
        self,
        pos: Position | str,
        state: CubeState | MatchState | None = None,
        *,
        ply: int = 1,
        x: float | None = None,
        probs: Sequence[float] | None = None,
        take_point: bool = True,
    ) -> CubeDecision:
        """The cube decision of the side on roll in ``pos`` (its view), before it rolls.

        ``state`` is the cube and score: a :class:`~bgbot.rules.matchstate.CubeState`
        (seen from the side on roll), a :class:`~bgbot.rules.matchstate.MatchState`
        (whose ``on_roll`` is the side on roll of ``pos``), or None for a money
        game with the cube centred.  At 1-ply the decision is the cube model on
        the network's cubeless probabilities.  Above 1-ply it is gnubg's
        cubeful lookahead (:mod:`bgbot.engine.cube_lookahead`): every position
        of the ``ply - 1``-roll tree makes its own best cube action and the
        leaves are the cube model's (Janowski's for money, gnubg's
        ``Cl2CfMatch`` at the score), so market losers and rolls after which
        the opponent passes count as played; the take point is read off the
        averaged probabilities.  At 2-ply the no-double and double/take
        equities get the engine's ``cube_shift`` (the one-roll lookahead's
        correction) before the decision.  A money game's small two-sided bear-off
        (at most six checkers a side, with the bear-off database on) is
        decided exactly at every ply (:mod:`bgbot.engine.bearoff_cube`).
        ``x`` is the cube efficiency (default: gnubg's, 0.68 with contact, 0.6
        in bear-offs, pip-based in other races; given, it serves every leaf).
        ``probs`` skips the evaluation: cubeless probabilities of the side on
        roll to decide from by the cube model (for example from
        :meth:`evaluate`, already computed).  Equities are
        normalised to the cube value (see :class:`~bgbot.engine.cube.CubeDecision`).
        ``take_point=False`` leaves a match decision's ``take_point`` None and
        skips its search (about 40 evaluations of the cube model): the
        equities and MWCs are the same.
        """
        p = _as_position(pos)
        if p.is_game_over():
            raise InvalidPositionError(f"the game is over in {p.gnubg_id()!r}: there is no cube decision")
        cs = self.cube_state(state)
        n = check_ply(ply)
        if probs is None and cs.is_money and self._exact_cube:
            exact = self._exact_bearoff_decision(p, cs, x)
            if exact is not None:
                return exact
        if probs is None and n > 1:
            if cs.is_money:
                return self._money_lookahead_decision(p, cs, n, x)
            return self._match_lookahead_decision(p, cs, n, x, take_point)
        if probs is None:
            probs = self.evaluate(p, n)
        return self._decision(p, cs, probs, x, take_point=take_point)

    def _exact_bearoff_decision(self, p: Position, cs: CubeState, x: float | None) -> CubeDecision | None:
        """The exact money decision of a small two-sided bear-off (:mod:`bgbot.engine.bearoff_cube`), else None."""
        board = p.array()[None, :]
        nd = np.zeros((1, 3))
        dt = np.zeros(1)
        if not exact_cube_values(board, nd, dt):
            return None
        probs = self.evaluate(p, 1).tolist()  # exact too: the one-sided database's race probabilities
        col = OWNER_COLUMNS.index(cs.owner)
        xv = self.cube_efficiency(p) if x is None else x
        d = money_decision_from_equities(probs, float(nd[0, col]), float(dt[0]), cube_value=cs.cube,
                                         owner=cs.owner, x=xv)
        # Janowski's take point would contradict the exact figures: there is none to show
        return dataclasses.replace(d, take_point=None, note=d.note or EXACT_BEAROFF_NOTE)

    def _match_lookahead_decision(
        self, p: Position, cs: CubeState, ply: int, x: float | None, take_point: bool = True
    ) -> CubeDecision:
        """The match cube decision at ``ply`` >= 2 from the cubeful lookahead, in match winning chances."""
        theirs = _opponents_cube(cs)
        val = self._valuation(cs, theirs)
        away_me, away_opp = cs.away
        common = {"met": self.met, "match_length": cs.match, "away_me": away_me, "away_opp": away_opp,
                  "cube_value": cs.cube, "owner": cs.owner, "crawford": cs.crawford}
        probs, nd, dt = match_cube_lookahead(self.evaluator, p.array(), ply - 1, choose=(val.mine, val.theirs),
                                             x=x, **common)
        xv = self.cube_efficiency(p) if x is None else x
        return match_decision_from_mwcs(probs.tolist(), nd, dt, x=xv, with_take_point=take_point,
                                        shift=self._shift(ply), **common)

    def _shift(self, ply: int) -> tuple[float, float]:
        """What a cube decision at ``ply`` adds to its no-double and double/take equities (only 2-ply's moves)."""
        return (self.cube_shift.no_double, self.cube_shift.double_take) if ply == 2 else (0.0, 0.0)

    def _money_lookahead_decision(self, p: Position, cs: CubeState, ply: int, x: float | None) -> CubeDecision:
        """The money cube decision at ``ply`` >= 2 from gnubg's cubeful lookahead (cube decisions at every node)."""
        theirs = _opponents_cube(cs)
        val = self._valuation(cs, theirs)
        probs, nd, dt = lookahead_money_cubeful(self.evaluator, p.array()[None, :], ply - 1, (val.mine, val.theirs),
                                                x=x, jacoby=cs.jacoby, exact_bearoff=self._exact_cube)
        xv = self.cube_efficiency(p) if x is None else x
        col = OWNER_COLUMNS.index(cs.owner)
        add_nd, add_dt = self._shift(ply)
        return money_decision_from_equities(probs[0].tolist(), float(nd[0, col]) + add_nd, float(dt[0]) + add_dt,
                                            cube_value=cs.cube, owner=cs.owner, x=xv)

    def _decision(
        self, p: Position, cs: CubeState, probs: Sequence[float], x: float | None = None, *, take_point: bool = True
    ) -> CubeDecision:
        """The cube decision of the side on roll in ``p`` from ``probs`` (also for a finished game: a dead cube).

        ``take_point=False`` skips a match decision's take-point search (ranking plays needs only the equities).
        """
        xv = self.cube_efficiency(p) if x is None else x
        if cs.is_money:
            return money_cube_decision(probs, cube_value=cs.cube, owner=cs.owner, x=xv, jacoby=cs.jacoby)
        away_me, away_opp = cs.away
        return match_cube_decision(
            probs,
            met=self.met,
            match_length=cs.match,
            away_me=away_me,
            away_opp=away_opp,
            cube_value=cs.cube,
            owner=cs.owner,
            crawford=cs.crawford,
            x=xv,
            with_take_point=take_point,
        )

    def cube_state(self, state: CubeState | MatchState | None) -> CubeState:
        """``state`` as a :class:`CubeState` this engine can decide on (its MET covers the match)."""
        cs = _MONEY if state is None else CubeState.of(state) if isinstance(state, MatchState) else state
        if not isinstance(cs, CubeState):
            raise InvalidScoreError(f"a cube state is a CubeState or a MatchState, got {state!r}")
        if cs.match > self.met.length:
            raise InvalidScoreError(
                f"match length {cs.match!r} is beyond the {self.met.length}-point match equity table"
            )
        return cs

    def cube_efficiency(self, pos: Position | str) -> float:
        """gnubg's cube efficiency for ``pos``: 0.68 with contact, 0.6 in bear-offs, pip-based in races."""
        pos = _as_position(pos)
        cls = classify(pos)
        if cls in (PositionClass.CONTACT, PositionClass.CRASHED):
            return cube_efficiency(contact=True)
        if cls == PositionClass.BEAROFF:
            return BEAROFF_X
        return cube_efficiency(contact=False, pips_on_roll=pos.pips()[0])

    def chooser(self, ply: int = 1) -> Chooser:
        """A :mod:`bgbot.play.duel` chooser playing this engine's best move at ``ply``, batched over games."""
        return search_chooser(self.evaluator, ply, self.filters)

    def rollout(
        self,
        pos: Position | str,
        dice: object = None,
        state: CubeState | MatchState | None = None,
        settings: RolloutSettings | None = None,
        **options: Any,
    ) -> RolloutResult:
        """Roll out ``pos`` (side on roll's view) before its roll, or the top plays of ``dice``; results from
        the side on roll.  ``settings``: :class:`~bgbot.engine.rollout.RolloutSettings`; ``options``: ``top``,
        ``preselect_ply``, ``executor``, ``workers``, ``resume``, ``progress`` (see
        :func:`bgbot.engine.rollout.engine_rollout`).
        """
        from bgbot.engine.rollout import RolloutSettings, engine_rollout
        from bgbot.rules.dice import parse_dice

        p = _as_position(pos)
        d = None if dice is None else parse_dice(dice)
        return engine_rollout(self, p, d, self.cube_state(state), settings or RolloutSettings(), **options)

    def analyse(self, match: Any, ply: int = 2, **kwargs: Any) -> Any:
        """Grade every checker play and cube action of a replayed match record at ``ply``.

        ``match`` is a :class:`~bgbot.formats.records.MatchRecord` (``bgbot.read_match(path)``);
        returns a :class:`~bgbot.engine.analyse.MatchAnalysis`.  Keyword arguments go to
        :func:`bgbot.engine.analyse.analyse_match` (``thresholds``, ``luck``, ``progress``).
        """
        from bgbot.engine.analyse import analyse_match

        return analyse_match(self, match, ply, **kwargs)


def position_ids(pos: Position, state: MatchState | None = None, **fields: object) -> str:
    """``Position ID: ...   XGID=...`` for a position (side on roll's view) and its optional state."""
    return f"Position ID: {pos.gnubg_id()}   {format_xgid(pos, state, **fields)}"


def probs_dict(probs: Sequence[float] | NDArray[np.floating]) -> dict[str, float]:
    """Five probabilities as a dict by name (JSON output)."""
    names = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
    return {k: float(v) for k, v in zip(names, probs, strict=True)}
