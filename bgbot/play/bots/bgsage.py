"""Open Sage (the PyPI package ``bgsage``, MPL-2.0) as an in-process opponent and reference.

``bgsage`` is an optional reference engine (``pip install bgsage``, or
``pip install -e '.[ref]'``); it is imported only when a :class:`BgsageBot` is
built, and a missing package raises :class:`~bgbot.errors.EngineError`
saying how to install it.

**Plies.**  bgsage numbers plies the XG way, as bgbot does: its
``eval_level="1ply"`` is the raw network on every candidate after the move
(gnubg's 0-ply; bgsage's own gnubg bridge maps ``'1ply'`` to gnubg ``plies
0``), ``"2ply"`` averages the opponent's 21 rolls with its best reply by the
network (gnubg's 1-ply, XG's 2-ply), with bgsage's move filter (the best 5
candidates within 0.08 of the best at 1-ply go deeper).  So ``bgsage:ply=1``
is the XG 1-ply equivalent and ``bgsage:ply=2`` the XG 2-ply equivalent,
directly comparable with ``bgbot:ply=1`` and ``bgbot:ply=2``.

**Boards.**  bgsage's board has bgbot's layout (26 ints from the mover's
view, 1..24 its points, mover positive, 25 its bar) except slot 0: bgsage
stores the opponent's bar as a *positive* count, bgbot as a negative one.
bgsage's legal moves (``possible_moves``, ``checker_play``) are boards from
the **mover's** view after the move; bgbot's results are from the
opponent's view, hence :func:`result_from_bgsage`.

**Checker play** comes from ``BgBotAnalyzer.checker_play`` (its public
API), cubeless by default like bgbot's own bot and gnubg's reference data;
``cubeful=True`` passes the cube and score so bgsage ranks moves by cubeful
equity.

**Cube.**  bgsage's ``BgBotAnalyzer.cube_action`` reloads its 24 weight
files on every call (about 50 ms), so the cube decision uses the same C++
call as bgsage's ``batch_cube_action`` (``bgbot_cpp.batch_evaluate_positions``)
on strategies built once: Janowski's cubeful equities on the cubeless
pre-roll probabilities at ``cube_ply``, money or match (bgsage's match
equity table), with bgsage's bear-off database.  At 1-ply this is exactly
what ``cube_action`` answers; at 2-ply ``cube_action`` runs a recursive
cubeful search instead, while this (like bgbot's own cube) applies Janowski
to 2-ply probabilities.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import Any

from bgbot.errors import ConfigError, EngineError
from bgbot.play.bots.base import BaseBot
from bgbot.rules.dice import Dice
from bgbot.rules.matchstate import MatchState
from bgbot.rules.position import Position

INSTALL_HINT = "pip install bgsage (or pip install -e '.[ref]' in a bgbot checkout)"
MAX_BGSAGE_PLY = 3
# owner names of bgsage, by MatchState.cube_owner_relative()
_OWNERS = {"center": "centered", "me": "player", "opp": "opponent"}


def require_bgsage() -> ModuleType:
    """The ``bgsage`` module, or :class:`~bgbot.errors.EngineError` with the install hint when it is missing."""
    try:
        import bgsage
    except ImportError as exc:
        raise EngineError(f"the bgsage reference engine is not installed ({exc}): {INSTALL_HINT}") from None
    return bgsage


def check_bgsage_ply(ply: object, label: str = "ply") -> int:
    """``ply`` as an int 1..3 (XG numbering, as bgsage's ``eval_level``); :class:`ConfigError` otherwise."""
    if isinstance(ply, bool) or not isinstance(ply, int) or not 1 <= ply <= MAX_BGSAGE_PLY:
        raise ConfigError(f"bgsage {label} must be 1..{MAX_BGSAGE_PLY} (XG numbering: 1 = the network), got {ply!r}")
    return ply


def to_bgsage(pos: Position) -> list[int]:
    """bgsage's board for ``pos`` (both from the side on roll's view): the opponent's bar becomes positive."""
    board = list(pos.board)
    board[0] = -board[0]
    return board


def from_bgsage(board: Sequence[int]) -> Position:
    """The bgbot position of a bgsage board, in the same (that board's mover's) view."""
    if len(board) != 26:
        raise EngineError(f"bgsage returned a board of {len(board)} slots, expected 26: {list(board)!r}")
    b = [int(x) for x in board]
    b[0] = -b[0]
    return Position(b)


def result_from_bgsage(board: Sequence[int]) -> Position:
    """A bgsage post-move board (mover's view) as a bgbot move result: **the opponent's view**, opponent on roll."""
    return from_bgsage(board).swap()


def cube_kwargs(state: MatchState) -> dict[str, Any]:
    """bgsage's cube and score arguments for ``state.on_roll``'s side (the side whose view the board is in)."""
    me = state.on_roll
    match = state.match_length > 0
    return {
        "cube_value": state.cube_value,
        "cube_owner": _OWNERS[state.cube_owner_relative()],
        "away1": state.match_length - state.score[me] if match else 0,
        "away2": state.match_length - state.score[1 - me] if match else 0,
        "is_crawford": state.crawford,
        "jacoby": state.jacoby and not match,
        "beaver": state.beaver and not match,
    }


@contextlib.contextmanager
def _multiply_threads(threads: int) -> Iterator[None]:
    """Let bgsage build its N-ply search with ``threads`` threads.

    bgsage never goes below 2 threads for an N-ply search unless
    ``parallel_threads=0`` and ``$BGBOT_MULTIPLY_THREADS`` names the count; on
    the shared 2-core machines one thread per process is what we want.
    """
    old = os.environ.get("BGBOT_MULTIPLY_THREADS")
    os.environ["BGBOT_MULTIPLY_THREADS"] = str(threads)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("BGBOT_MULTIPLY_THREADS", None)
        else:
            os.environ["BGBOT_MULTIPLY_THREADS"] = old


class BgsageBot(BaseBot):
    """Open Sage at ``ply`` for checker play and ``cube_ply`` (default ``ply``) for the cube; XG numbering.

    ``cubeful``: rank checker plays by bgsage's cubeful equity at the game's
    cube and score (default False: cubeless, as bgbot's bot plays).
    ``threads``: threads of bgsage's N-ply search (default 1).
    """

    def __init__(
        self,
        ply: int = 1,
        cube_ply: int | None = None,
        *,
        cubeful: bool = False,
        threads: int = 1,
        name: str | None = None,
    ) -> None:
        self.ply = check_bgsage_ply(ply)
        self.cube_ply = check_bgsage_ply(ply if cube_ply is None else cube_ply, "cube_ply")
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ConfigError(f"bgsage threads must be an integer >= 1, got {threads!r}")
        self.cubeful = bool(cubeful)
        self.threads = threads
        self.name = name or f"bgsage:ply={self.ply}"
        sage = require_bgsage()
        try:
            import bgbot_cpp  # the C++ core shipped in the bgsage wheel
            from bgsage.weights import bearoff_db_path

            with _multiply_threads(threads):
                self.analyzer = sage.BgBotAnalyzer(
                    eval_level=f"{self.ply}ply", cubeful=self.cubeful, parallel_threads=0
                )
            self._cpp = bgbot_cpp
            self._cube_strategy = self._build_cube_strategy(bgbot_cpp, sage.default_weights(), bearoff_db_path())
        except (ImportError, AttributeError, RuntimeError, TypeError, ValueError) as exc:
            raise EngineError(f"cannot start bgsage ({type(exc).__name__}: {exc}); {INSTALL_HINT}") from None
        self.version = _version()

    def _build_cube_strategy(self, cpp: Any, weights: Any, db_path: str | None) -> Any:
        # as bgsage.batch_evaluate builds them, but once: building means reading 24 weight files
        paths, hidden = weights.weight_paths_list, weights.hidden_sizes_list
        db = None
        if db_path:
            db = cpp.BearoffDB()
            if not db.load(db_path):
                db = None
        # the C++ side keeps bare pointers to the database and the wrapped network: they must outlive it
        self._keep_alive: list[Any] = [db]
        if self.cube_ply == 1:
            strategy = cpp.create_strategy(weights.strategy_type, paths, hidden)
            self._keep_alive.append(strategy)
            return cpp.BearoffStrategy(strategy, db) if db is not None else strategy
        # parallel_evaluate=False: one thread, as batch_evaluate runs each position
        strategy = cpp.create_multipy(
            weights.strategy_type, paths, hidden, n_plies=self.cube_ply, parallel_evaluate=False, parallel_threads=0
        )
        if db is not None:
            cpp.multipy_set_bearoff_db(strategy, db)
        return strategy

    # ---- checker play ---------------------------------------------------
    def _boards(self, pos: Position, dice: Dice, state: MatchState | None) -> list[list[int]]:
        """bgsage's ranked post-move boards (mover's view, bgsage layout), best first; [] for no legal play."""
        kwargs = cube_kwargs(state or MatchState()) if self.cubeful else {}
        try:
            res = self.analyzer.checker_play(to_bgsage(pos), int(dice[0]), int(dice[1]), **kwargs)
        except (RuntimeError, TypeError, ValueError, KeyError) as exc:
            raise EngineError(f"bgsage failed on {pos.gnubg_id()!r} with {tuple(dice)!r}: {exc}") from None
        return [m.board for m in res.moves]

    def ranked(self, pos: Position, dice: Dice, state: MatchState | None = None) -> list[Position]:
        """Every legal result of ``dice`` in ``pos`` (side on roll's view), bgsage's best first; opponent's view.

        A roll that cannot be played gives the one result ``pos.swap()``.
        ``state`` matters only for a cubeful bot (default: money, cube centred).
        """
        boards = self._boards(pos, dice, state)
        return [result_from_bgsage(b) for b in boards] if boards else [pos.swap()]

    def move(self, pos: Position, dice: Dice, state: MatchState) -> Position:
        """bgsage's best play at ``ply`` (the result from the opponent's view); ``pos`` is the bot's view."""
        boards = self._boards(pos, dice, state)
        return result_from_bgsage(boards[0]) if boards else pos.swap()

    # ---- cube ---------------------------------------------------------
    def decision(self, pos: Position, state: MatchState) -> Any:
        """bgsage's cube decision (a ``bgsage.CubeActionResult``) for ``state.on_roll``, whose view ``pos`` is.

        Equities are from that side's view, per unit of the current cube
        (bgsage's normalisation); ``should_double`` / ``should_take`` are the
        actions.
        """
        from bgsage import CubeActionResult, Probabilities

        kw = cube_kwargs(state)
        owner = self._cpp.CubeOwner.CENTERED if kw["cube_owner"] == "centered" else (
            self._cpp.CubeOwner.PLAYER if kw["cube_owner"] == "player" else self._cpp.CubeOwner.OPPONENT
        )
        item: tuple[Any, ...] = (to_bgsage(pos), kw["cube_value"], owner)
        if kw["away1"] or kw["away2"]:
            item = (*item, kw["away1"], kw["away2"], kw["is_crawford"])
        try:
            r = self._cpp.batch_evaluate_positions(
                [item], self._cube_strategy, 1, jacoby=kw["jacoby"], beaver=kw["beaver"]
            )[0]
        except (RuntimeError, TypeError, ValueError, KeyError, IndexError) as exc:
            raise EngineError(f"bgsage's cube failed on {pos.gnubg_id()!r} ({state!r}): {exc}") from None
        finally:
            if hasattr(self._cube_strategy, "clear_cache"):
                self._cube_strategy.clear_cache()  # bgsage clears it after every cube analysis: stale values
        double, take = bool(r["should_double"]), bool(r["should_take"])
        return CubeActionResult(
            probs=Probabilities.from_list(list(r["probs"])),
            cubeless_equity=r["cubeless_equity"],
            equity_nd=r["equity_nd"],
            equity_dt=r["equity_dt"],
            equity_dp=r["equity_dp"],
            should_double=double,
            should_take=take,
            optimal_equity=r["equity_nd"] if not double else r["equity_dt"] if take else r["equity_dp"],
            optimal_action=r["optimal_action"],
            eval_level=f"{self.cube_ply}-ply",
            is_beaver=bool(r.get("is_beaver", False)),
        )

    def double(self, pos: Position, state: MatchState) -> bool:
        """Whether bgsage, on roll in ``pos`` (its view), doubles."""
        return bool(self.decision(pos, state).should_double)

    def take(self, pos: Position, state: MatchState) -> bool:
        """Whether bgsage takes the double of the side on roll (``pos`` is the doubler's view)."""
        return bool(self.decision(pos, state).should_take)

    def describe(self) -> str:
        """One line naming the engine, its version and plies."""
        return (
            f"bgsage {self.version} (Open Sage, XG plies) checker {self.ply}-ply "
            f"{'cubeful' if self.cubeful else 'cubeless'}, cube {self.cube_ply}-ply, {self.threads} thread(s)"
        )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("bgsage")
    except PackageNotFoundError:
        return "?"
