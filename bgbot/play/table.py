"""The one turn loop: a refereed game between two sides, with or without the doubling cube.

Every way bgbot plays a game runs :func:`play_game`: the pit, matches
(:mod:`bgbot.play.match`), the chouette (its team is one side), terminal play
and the tests.  A *side* is anything with the :class:`~bgbot.play.bots.Bot`
methods: an in-process bot, a remote engine, a person at a terminal, or a
chouette team.  The batched cubeless duels (:mod:`bgbot.play.duel`) and
self-play are its lock-step twins over many games and share its pieces (dice,
outcomes).

The turn: the opening roll (:func:`bgbot.rules.dice.opening_roll`), then
for each later turn the cube window (double / take or pass), the roll, a
forced play made without asking, the legality check against the rules
engine, and the game end (:class:`bgbot.rules.position.Outcome`).  Every
die comes from the one ``numpy.random.Generator`` handed to
:func:`play_game`, exactly one roll per turn whatever the players decide,
so the same generator gives the same dice to the same seats (duplicate-dice
pits rely on that).  Bots never see the generator.

The referee (bgbot's own rules engine) checks every answer.  A bot that
answers an illegal move, a position that is not one, or raises
:class:`~bgbot.errors.BgbotError` (an external engine that died, timed out or
sent garbage) **forfeits** the game as if it resigned a backgammon: the other
side wins ``cube value x 3`` points (``x backgammon_counts``), the most the
game could have cost at that cube, so a fault can never pay; in a match no
more than the winner needs for the match (:func:`forfeit_points`).  The fault (who, what was asked, the
position, the dice and the message with the answer) is kept in the result.
Bugs of in-process code (any other exception) are not swallowed.

Rules (``docs/rules.md``): a player may double before rolling
when the cube is centred or its own and below 64, except in the Crawford
game and, in a match, when the cube is dead for it (the current cube already
gives it the match: every game of a 1-point match, the leader after the
Crawford game), as gnubg's players never double there
(:func:`~bgbot.rules.matchstate.cube_available`); a pass ends the game at the current stake, a take turns the cube to
the taker.  Money options: the Jacoby rule (gammons count single until a
double has been taken; automatic doubles do not turn the cube) and
automatic doubles (each tie of the opening roll doubles the centred cube, up
to ``Rules.auto_doubles`` times).  Matches use neither; the game after a
player first reaches ``N - 1`` is the Crawford game (no cube; a 1-point
match has none, see :func:`~bgbot.rules.matchstate.crawford_game`).

A move that has only one legal result is played by the referee without
asking (no bot can choose otherwise); such turns are not counted as
decisions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Literal

import numpy as np

from bgbot.errors import BgbotError, ConfigError, EngineError, Forfeit, IllegalMoveError, InvalidPositionError
from bgbot.formats.records import RecordEntry
from bgbot.play.bots.base import Bot
from bgbot.rules.dice import Dice, opening_roll, roll_dice
from bgbot.rules.matchstate import MatchState, cube_available
from bgbot.rules.movegen import successors_batch
from bgbot.rules.position import Outcome, Position, check_backgammon_counts

GAME_MAX_TURNS = 10_000  # a game still running after this many turns is stopped unfinished

DecisionKind = Literal["move", "double", "take"]


@dataclass(frozen=True)
class Rules:
    """How games are played.

    ``cube``: the doubling cube is in play.  ``jacoby`` and ``auto_doubles``
    (the most automatic doubles per game, 0 = off) apply to money games
    only.  ``backgammon_counts`` is 3, or 2 where backgammons count as
    gammons.  ``crawford``: matches use the Crawford rule.  A game still
    running after ``max_turns`` turns is stopped unfinished.
    """

    cube: bool = True
    jacoby: bool = False
    auto_doubles: int = 0
    backgammon_counts: int = 3
    crawford: bool = True
    max_turns: int = GAME_MAX_TURNS

    def __post_init__(self) -> None:
        for name in ("cube", "jacoby", "crawford"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if isinstance(self.auto_doubles, bool) or not isinstance(self.auto_doubles, int) or not (
            0 <= self.auto_doubles <= 6
        ):
            raise ConfigError(f"auto_doubles must be an integer 0..6, got {self.auto_doubles!r}")
        check_backgammon_counts(self.backgammon_counts)
        if isinstance(self.max_turns, bool) or not isinstance(self.max_turns, int) or self.max_turns < 1:
            raise ConfigError(f"max_turns must be a positive integer, got {self.max_turns!r}")


DEFAULT_RULES = Rules()  # money play with the cube, no Jacoby, no automatic doubles


@dataclass(frozen=True)
class Fault:
    """A forfeit: ``player`` (0/1), the bot's ``bot`` name, what it was asked, where, and what went wrong.

    ``engine_failed`` is True when the bot raised :class:`~bgbot.errors.EngineError`
    (it died or timed out) rather than answering something wrong.
    """

    player: int
    bot: str
    asked: DecisionKind
    position: str  # gnubg Position ID, from the side on roll
    dice: Dice | None
    message: str
    engine_failed: bool = False  # the bot itself failed (died, timed out): it needs a reset

    def describe(self) -> str:
        """One line for reports."""
        dice = f", dice {self.dice[0]}{self.dice[1]}" if self.dice else ""
        return f"{self.bot} forfeits (asked to {self.asked} in {self.position}{dice}): {self.message}"


@dataclass
class DecisionTimes:
    """How many decisions one player was asked for and how long they took (seconds), by kind."""

    counts: dict[str, int] = field(default_factory=lambda: {"move": 0, "double": 0, "take": 0})
    seconds: dict[str, float] = field(default_factory=lambda: {"move": 0.0, "double": 0.0, "take": 0.0})

    def add(self, other: DecisionTimes) -> None:
        """Accumulate ``other`` into this one."""
        for k in self.counts:
            self.counts[k] += other.counts[k]
            self.seconds[k] += other.seconds[k]

    @property
    def total(self) -> int:
        """Decisions of every kind."""
        return sum(self.counts.values())

    @property
    def mean_ms(self) -> float:
        """Mean milliseconds per decision (0 when none was asked)."""
        n = self.total
        return 1000.0 * sum(self.seconds.values()) / n if n else 0.0


@dataclass(frozen=True)
class GameFacts:
    """What every game on the loop reports, whatever its sides: how it was won (``kind`` 1/2/3 for a
    game played out, else 0), the final cube (``cube_owner`` -1 = centred), the turns played and the
    opening roll (who won it, the dice, how many ties)."""

    kind: int
    cube: int
    cube_owner: int
    turns: int
    first_player: int
    opening_dice: Dice
    opening_ties: int

    def facts(self) -> dict[str, object]:
        """The :class:`GameFacts` fields of this result, for building a result of another kind from it."""
        return {f.name: getattr(self, f.name) for f in fields(GameFacts)}


@dataclass(frozen=True)
class GameResult(GameFacts):
    """The outcome of :func:`play_game`; players are absolute (0/1).

    ``winner`` is None when the game was stopped after ``max_turns`` (then
    ``points`` is 0).  ``how`` is ``'played'`` (borne off), ``'dropped'`` (a
    double was passed), ``'resigned'`` (see :class:`Resignation`),
    ``'forfeit'`` (see :class:`Fault`) or ``'unfinished'``.  ``kind`` is 1/2/3 (single, gammon, backgammon) for a
    game played out, else 0.  ``points`` is what the winner wins, cube and
    options applied.  ``cube`` and ``cube_owner`` (-1 = centred) are the final
    cube.  ``doubles``/``takes``/``drops`` count each player's cube actions
    (a take or drop is the responder's).
    """

    winner: int | None
    points: int
    how: Literal["played", "dropped", "resigned", "forfeit", "unfinished"]
    crawford: bool
    actions: tuple[RecordEntry, ...]
    fault: Fault | None
    times: tuple[DecisionTimes, DecisionTimes]
    doubles: tuple[int, int]
    takes: tuple[int, int]
    drops: tuple[int, int]

    @property
    def moves(self) -> tuple[RecordEntry, ...]:
        """The recorded moves, in order (empty when the game was played with ``record=False``)."""
        return tuple(a for a in self.actions if a.kind == "move")

    @property
    def final(self) -> Position | None:
        """The position after the last recorded move, from the view of the side that did not make it."""
        moves = self.moves
        return moves[-1].result if moves else None

    def points_for(self, player: int) -> int:
        """Signed points for ``player`` (0/1): positive when it won."""
        if self.winner is None:
            return 0
        return self.points if self.winner == player else -self.points


Observer = Callable[[RecordEntry, MatchState], None]

RESIGN_NAMES = ("a single game", "a gammon", "a backgammon")


class Resignation(Exception):
    """Raised by a side at one of its decisions to end the game by a resignation its opponent accepted.

    ``level`` is what is resigned: 1 a single game, 2 a gammon, 3 a
    backgammon; the opponent wins ``level x cube`` points, as in gnubg.  The
    side asks its opponent before raising (terminal play does); the referee
    fills in ``player``, the side that resigned.
    """

    def __init__(self, level: int) -> None:
        if level not in (1, 2, 3):
            raise ConfigError(f"a resignation is of 1 (single), 2 (gammon) or 3 (backgammon), got {level!r}")
        super().__init__(f"resigns {RESIGN_NAMES[level - 1]}")
        self.level = level
        self.player: int | None = None


@dataclass(frozen=True)
class Resume:
    """Where an unfinished game goes on: the actions it already has and the situation after them.

    ``position`` is seen from ``on_roll`` (absolute 0/1), who is before the
    cube window of turn ``turns + 1`` (``turns`` = the moves played).  ``cube`` and
    ``cube_owner`` (-1 centred) are the cube now.  The game's generator gives
    the same dice as the uninterrupted game would have: :func:`play_game`
    draws the opening roll and one roll per turn played before going on.
    """

    position: Position
    on_roll: int
    turns: int
    cube: int = 1
    cube_owner: int = -1
    actions: tuple[RecordEntry, ...] = ()


def forfeit_points(cube: int, backgammon_counts: int, match_length: int = 0, winner_score: int = 0) -> int:
    """What a forfeit gives the winner: a resignation of ``k`` times the ``cube`` (k = 1, 2 or 3).

    In a money game ``k`` is ``backgammon_counts``, the most the game could
    have cost.  In a match it is the smallest ``k`` that gives the winner
    (with ``winner_score`` before the game) the match, if one does, else
    ``backgammon_counts``: the same for the match as the most the game could
    have cost, and never more points than the match needs.  gnubg records such
    a game as a resignation (``Wins N points`` in ``.mat``, ``RE[W+NR]`` in SGF).
    """
    if match_length:
        need = match_length - winner_score
        for k in range(1, backgammon_counts + 1):
            if k * cube >= need:
                return k * cube
    return cube * backgammon_counts


def check_move(pos: Position, dice: Dice, answer: object, legal: np.ndarray, who: str) -> Position:
    """``answer`` if it is one of the ``legal`` results of ``dice`` in ``pos``, else :class:`IllegalMoveError`.

    ``pos`` is the mover's view; ``legal`` is ``successors_batch`` of it (the
    opponent's view, as the answer must be).  The message names the side, the
    position, the dice and the answer, with a hint when the answer is a legal
    result seen from the wrong side.
    """
    where = f"with dice {dice!r} in position {pos.gnubg_id()!r}"
    if not isinstance(answer, Position):
        raise IllegalMoveError(f"{who} answered {answer!r} (not a Position) {where}")
    if not (legal == np.asarray(answer.board, dtype=np.int8)).all(axis=1).any():
        wrong_side = (legal == np.asarray(answer.swap().board, dtype=np.int8)).all(axis=1).any()
        hint = " (it is legal seen from the mover's side: answer from the opponent's view)" if wrong_side else ""
        raise IllegalMoveError(
            f"{who} played an illegal move {where}: the result {answer.gnubg_id()!r} is not one of the "
            f"{legal.shape[0]} legal results{hint}"
        )
    return answer


class Referee:
    """Asks the sides (or a chouette team's members), times them and turns their faults into forfeits.

    ``bots[i]`` is asked as player ``i``; :attr:`times` has one entry per bot.
    """

    def __init__(self, bots: Sequence[Bot]) -> None:
        self.bots = bots
        self.times = tuple(DecisionTimes() for _ in bots)

    def ask(self, player: int, what: DecisionKind, pos: Position, dice: Dice | None, state: MatchState) -> object:
        """The bot's answer to ``what``; ``pos`` is the view of ``state.on_roll`` (the mover or doubler).

        Raises :class:`~bgbot.errors.Forfeit` with ``loser = player`` when the bot
        raised a :class:`~bgbot.errors.BgbotError` (or a forfeit of its own, as a
        chouette team does when its last member fails).
        """
        bot = self.bots[player]
        t0 = time.perf_counter()
        try:
            if what == "move":
                assert dice is not None  # a move question always has dice
                answer: object = bot.move(pos, dice, state)
            elif what == "double":
                answer = bot.double(pos, state)
            else:
                answer = bot.take(pos, state)
        except BgbotError as exc:
            fault = Fault(player, bot.name, what, pos.gnubg_id(), dice, str(exc), isinstance(exc, EngineError))
            raise Forfeit(fault, loser=player) from None
        except Forfeit as exc:
            exc.loser = player
            raise
        except Resignation as exc:
            exc.player = player
            raise
        finally:
            self.times[player].counts[what] += 1
            self.times[player].seconds[what] += time.perf_counter() - t0
        return answer

    def checked_move(
        self, player: int, pos: Position, dice: Dice, state: MatchState, legal: np.ndarray
    ) -> Position:
        """Ask ``player`` for its move and check it against ``legal``; a wrong answer forfeits."""
        answer = self.ask(player, "move", pos, dice, state)
        try:
            return check_move(pos, dice, answer, legal, f"{self.bots[player].name} (player {player})")
        except IllegalMoveError as exc:
            fault = Fault(player, self.bots[player].name, "move", pos.gnubg_id(), dice, str(exc))
            raise Forfeit(fault, loser=player) from None


def play_game(
    bots: Sequence[Bot],
    rng: np.random.Generator,
    rules: Rules = DEFAULT_RULES,
    *,
    match_length: int = 0,
    score: tuple[int, int] = (0, 0),
    crawford: bool = False,
    record: bool = True,
    observer: Observer | None = None,
    start: Position | None = None,
    resume: Resume | None = None,
) -> GameResult:
    """Play one game between ``bots[0]`` (player 0) and ``bots[1]`` (player 1): the one turn loop.

    ``match_length`` 0 is a money game; otherwise ``score`` is the match score
    before this game and ``crawford`` says whether this is the Crawford game.
    ``observer(action, state)`` is called after every action (for a terminal
    display), ``state`` being the situation after it.  ``start`` (default the
    starting position) is seen from the winner of the opening roll.
    ``resume`` goes on with an unfinished game (:class:`Resume`).  Faults
    of a bot forfeit the game (see the module docstring); nothing is raised
    for them.  A side may raise :class:`Resignation` at its decision: the
    game ends there, ``how='resigned'``.
    """
    if len(bots) != 2:
        raise ConfigError(f"a game needs two bots, got {len(bots)}")
    if start is not None and (not isinstance(start, Position) or start.is_game_over()):
        raise InvalidPositionError(f"start must be a Position of a game not yet over, got {start!r}")
    money = match_length == 0
    ref = Referee(bots)
    first, opening, ties = opening_roll(rng)
    cube = 1
    if money and rules.cube and rules.auto_doubles and ties:
        cube = 2 ** min(ties, rules.auto_doubles)
    owner = -1
    jacoby = rules.jacoby and money
    counts = {"doubles": [0, 0], "takes": [0, 0], "drops": [0, 0]}
    actions: list[RecordEntry] = []
    played_turns = 0
    if resume is not None:
        for _ in range(resume.turns - 1):
            roll_dice(rng)  # the dice of the turns already played: the rest of the game gets the same dice
        cube, owner = resume.cube, resume.cube_owner
        actions.extend(resume.actions if record else ())
        played_turns = resume.turns

    def state(on_roll: int, *, dice: Dice | None = None, doubled: bool = False) -> MatchState:
        return MatchState(
            match_length=match_length,
            score=score,
            cube_value=cube,
            cube_owner=owner,
            on_roll=on_roll,
            doubled=doubled,
            dice=dice,
            crawford=crawford,
            jacoby=jacoby,
        )

    def note(action: RecordEntry, on_roll: int, doubled: bool = False) -> None:
        # the state after the action is built only for an observer: MatchState checks cost time
        if record:
            actions.append(action)
        if observer is not None:
            observer(action, state(on_roll, doubled=doubled))

    def finish(winner: int | None, points: int, kind: int, how: str, turns: int, fault: Fault | None = None):
        return GameResult(
            winner=winner,
            points=points,
            kind=kind,
            how=how,  # type: ignore[arg-type]
            cube=cube,
            cube_owner=owner,
            turns=turns,
            first_player=first,
            opening_dice=opening,
            opening_ties=ties,
            crawford=crawford,
            actions=tuple(actions),
            fault=fault,
            times=ref.times,
            doubles=(counts["doubles"][0], counts["doubles"][1]),
            takes=(counts["takes"][0], counts["takes"][1]),
            drops=(counts["drops"][0], counts["drops"][1]),
        )

    for bot in bots:
        bot.new_game(state(first if resume is None else resume.on_roll))
    pos = Position.start() if start is None else start
    side = first
    if resume is not None:
        pos, side = resume.position, resume.on_roll
    dice: Dice = opening
    turn = 0
    try:
        for turn in range(played_turns + 1, rules.max_turns + 1):
            if turn > 1:
                if (
                    rules.cube and cube_available(match_length, score, cube, owner, side, crawford)
                ) and ref.ask(side, "double", pos, None, state(side)):
                    counts["doubles"][side] += 1
                    note(RecordEntry(side, "double", pos, cube=2 * cube), side, doubled=True)
                    if not ref.ask(1 - side, "take", pos, None, state(side, doubled=True)):
                        counts["drops"][1 - side] += 1
                        note(RecordEntry(1 - side, "drop", pos, cube=cube), side)
                        return finish(side, cube, 0, "dropped", turn - 1)
                    counts["takes"][1 - side] += 1
                    cube, owner = 2 * cube, 1 - side
                    note(RecordEntry(1 - side, "take", pos, cube=cube), side)
                dice = roll_dice(rng)
            legal, _ = successors_batch(pos.array()[None, :], dice, include_pass=False)
            if legal.shape[0] == 0:
                result = pos.swap()
            elif legal.shape[0] == 1:
                result = Position(legal[0].tolist(), validate=False)
            else:
                result = ref.checked_move(side, pos, dice, state(side, dice=dice), legal)
            note(RecordEntry(side, "move", pos, dice, result, cube), 1 - side)
            if result.off()[1] == 15:  # the mover, now the opponent in ``result``, is off
                out = Outcome.of(
                    result, 1 - side, cube, backgammon_counts=rules.backgammon_counts, jacoby=jacoby,
                    cube_turned=owner != -1,
                )
                return finish(out.winner, out.points, int(out.kind), "played", turn)
            pos, side = result, 1 - side
    except Resignation as exc:
        assert exc.player is not None  # the referee names the side it asked
        return finish(1 - exc.player, exc.level * cube, 0, "resigned", turn)
    except Forfeit as exc:
        assert exc.loser is not None  # the referee names the side it asked
        winner = 1 - exc.loser
        return finish(
            winner, forfeit_points(cube, rules.backgammon_counts, match_length, score[winner]), 0, "forfeit",
            turn, exc.fault,
        )
    return finish(None, 0, 0, "unfinished", rules.max_turns)
