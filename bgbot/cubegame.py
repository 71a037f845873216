"""Refereed games and matches between two :class:`~bgbot.bots.Bot`\\ s, with the doubling cube.

Built on the pieces of :mod:`bgbot.game` (opening roll, dice, scoring): every
die comes from the one ``numpy.random.Generator`` handed to
:func:`play_cube_game`, exactly one roll per turn whatever the players decide,
so the same generator gives the same dice to the same seats (duplicate-dice
pits rely on that).  Bots never see the generator.

The referee (bgbot's own rules engine) checks every answer.  A bot that
answers an illegal move, a position that is not one, or raises
:class:`~bgbot.errors.BgbotError` (an external engine that died, timed out or
sent garbage) **forfeits** the game: the other side wins ``cube value x 3``
points (``x backgammon_counts``), the most the game could have cost at that
cube, so a fault can never pay.  The fault (who, what was asked, the
position, the dice and the message with the answer) is kept in the result.
Bugs of in-process code (any other exception) are not swallowed.

Rules (``docs/rules.md``): a player may double before rolling
when the cube is centred or its own and below 64, except in the Crawford
game; a pass ends the game at the current stake, a take turns the cube to
the taker.  Money options: the Jacoby rule (gammons count single until a
double has been taken; automatic doubles do not turn the cube) and
automatic doubles (each tie of the opening roll doubles the centred cube, up
to ``Rules.auto_doubles`` times).  Matches use neither; the game after a
player first reaches ``N - 1`` is the Crawford game (no cube).

A move that has only one legal result is played by the referee without
asking (no bot can choose otherwise); such turns are not counted as
decisions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from bgbot.bots.base import Bot
from bgbot.errors import BgbotError, ConfigError, EngineError, InvalidPositionError
from bgbot.game import Dice, check_backgammon_counts, game_points, opening_roll, roll_dice
from bgbot.matchstate import MatchState
from bgbot.movegen import successors_batch
from bgbot.position import Position

MAX_CUBE = 64
DEFAULT_MAX_TURNS = 10_000

ActionKind = Literal["move", "double", "take", "drop"]
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
    max_turns: int = DEFAULT_MAX_TURNS

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


@dataclass(frozen=True)
class Action:
    """One entry of a game record.

    ``player`` (0/1) acted in ``position``, seen from the side on roll (the
    mover, or the doubler for ``double``/``take``/``drop``).  For a move,
    ``dice`` and ``result`` (the opponent's view; ``position.swap()`` when
    nothing could be played).  ``cube`` is the cube value after the action
    (for ``double`` the value offered).
    """

    player: int
    kind: ActionKind
    position: Position
    dice: Dice | None = None
    result: Position | None = None
    cube: int = 1


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
class CubeGameResult:
    """The outcome of :func:`play_cube_game`; players are absolute (0/1).

    ``winner`` is None when the game was stopped after ``max_turns`` (then
    ``points`` is 0).  ``how`` is ``'played'`` (borne off), ``'dropped'`` (a
    double was passed), ``'forfeit'`` (see :class:`Fault`) or
    ``'unfinished'``.  ``kind`` is 1/2/3 (single, gammon, backgammon) for a
    game played out, else 0.  ``points`` is what the winner wins, cube and
    options applied.  ``cube`` and ``cube_owner`` (-1 = centred) are the final
    cube.  ``doubles``/``takes``/``drops`` count each player's cube actions
    (a take or drop is the responder's).
    """

    winner: int | None
    points: int
    kind: int
    how: Literal["played", "dropped", "forfeit", "unfinished"]
    cube: int
    cube_owner: int
    turns: int
    first_player: int
    opening_dice: Dice
    opening_ties: int
    crawford: bool
    actions: tuple[Action, ...]
    fault: Fault | None
    times: tuple[DecisionTimes, DecisionTimes]
    doubles: tuple[int, int]
    takes: tuple[int, int]
    drops: tuple[int, int]

    def points_for(self, player: int) -> int:
        """Signed points for ``player`` (0/1): positive when it won."""
        if self.winner is None:
            return 0
        return self.points if self.winner == player else -self.points


Observer = Callable[[Action, MatchState], None]


class Forfeit(Exception):
    """Raised by :class:`Referee` when a bot's answer or failure forfeits the game."""

    def __init__(self, fault: Fault) -> None:
        super().__init__(fault.message)
        self.fault = fault


def _position_id(pos: Position) -> str:
    try:
        return pos.gnubg_id()
    except ImportError:  # pragma: no cover - notation is part of bgbot
        return repr(list(pos.board))


class Referee:
    """Asks the bots, times them and turns their faults into forfeits."""

    def __init__(self, bots: Sequence[Bot]) -> None:
        self.bots = bots
        self.times = (DecisionTimes(), DecisionTimes())

    def ask(self, player: int, what: DecisionKind, pos: Position, dice: Dice | None, state: MatchState) -> object:
        """The bot's answer to ``what``; ``pos`` is the view of ``state.on_roll`` (the mover or doubler)."""
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
            fault = Fault(player, bot.name, what, _position_id(pos), dice, str(exc), isinstance(exc, EngineError))
            raise Forfeit(fault) from None
        finally:
            self.times[player].counts[what] += 1
            self.times[player].seconds[what] += time.perf_counter() - t0
        return answer

    def fault(self, player: int, what: DecisionKind, pos: Position, dice: Dice | None, message: str) -> Forfeit:
        return Forfeit(Fault(player, self.bots[player].name, what, _position_id(pos), dice, message))


def play_cube_game(
    bots: Sequence[Bot],
    rng: np.random.Generator,
    rules: Rules = Rules(),
    *,
    match_length: int = 0,
    score: tuple[int, int] = (0, 0),
    crawford: bool = False,
    record: bool = True,
    observer: Observer | None = None,
    start: Position | None = None,
) -> CubeGameResult:
    """Play one game between ``bots[0]`` (player 0) and ``bots[1]`` (player 1).

    ``match_length`` 0 is a money game; otherwise ``score`` is the match score
    before this game and ``crawford`` says whether this is the Crawford game.
    ``observer(action, state)`` is called after every action (for a terminal
    display), ``state`` being the situation after it.  ``start`` (default the
    starting position) is seen from the winner of the opening roll.  Faults
    of a bot forfeit the game (see the module docstring); nothing is raised
    for them.
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
    actions: list[Action] = []

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

    def note(action: Action, on_roll: int, doubled: bool = False) -> None:
        # the state after the action is built only for an observer: MatchState checks cost time
        if record:
            actions.append(action)
        if observer is not None:
            observer(action, state(on_roll, doubled=doubled))

    def finish(winner: int | None, points: int, kind: int, how: str, turns: int, fault: Fault | None = None):
        return CubeGameResult(
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
        bot.new_game(state(first))
    pos = Position.start() if start is None else start
    side = first
    dice: Dice = opening
    turn = 0
    try:
        for turn in range(1, rules.max_turns + 1):
            if turn > 1:
                if (
                    rules.cube and not crawford and owner in (-1, side) and cube < MAX_CUBE
                ) and ref.ask(side, "double", pos, None, state(side)):
                    counts["doubles"][side] += 1
                    note(Action(side, "double", pos, cube=2 * cube), side, doubled=True)
                    if not ref.ask(1 - side, "take", pos, None, state(side, doubled=True)):
                        counts["drops"][1 - side] += 1
                        note(Action(1 - side, "drop", pos, cube=cube), side)
                        return finish(side, cube, 0, "dropped", turn - 1)
                    counts["takes"][1 - side] += 1
                    cube, owner = 2 * cube, 1 - side
                    note(Action(1 - side, "take", pos, cube=cube), side)
                dice = roll_dice(rng)
            legal, _ = successors_batch(pos.array()[None, :], dice, include_pass=False)
            if legal.shape[0] == 0:
                result = pos.swap()
            elif legal.shape[0] == 1:
                result = Position(legal[0].tolist(), validate=False)
            else:
                answer = ref.ask(side, "move", pos, dice, state(side, dice=dice))
                if not isinstance(answer, Position):
                    raise ref.fault(side, "move", pos, dice, f"answered {answer!r}, which is not a position")
                if not (legal == np.asarray(answer.board, dtype=np.int8)).all(axis=1).any():
                    raise ref.fault(
                        side, "move", pos, dice,
                        f"the result {_position_id(answer)} (opponent's view) is not one of the "
                        f"{legal.shape[0]} legal results",
                    )
                result = answer
            note(Action(side, "move", pos, dice, result, cube), 1 - side)
            if result.off()[1] == 15:  # the mover, now the opponent in ``result``, is off
                kind = -result.result()
                points = game_points(
                    kind, cube, backgammon_counts=rules.backgammon_counts, jacoby=jacoby, cube_turned=owner != -1
                )
                return finish(side, points, kind, "played", turn)
            pos, side = result, 1 - side
    except Forfeit as exc:
        loser = exc.fault.player
        return finish(1 - loser, cube * rules.backgammon_counts, 0, "forfeit", turn, exc.fault)
    return finish(None, 0, 0, "unfinished", rules.max_turns)


@dataclass(frozen=True)
class MatchResult:
    """A match to ``length`` points: its games in order and the final ``score`` (players absolute).

    ``winner`` is None when a game could not be finished (``max_turns``).
    """

    length: int
    games: tuple[CubeGameResult, ...]
    score: tuple[int, int]
    winner: int | None


def play_match(
    bots: Sequence[Bot],
    length: int,
    game_rng: Callable[[int], np.random.Generator],
    rules: Rules = Rules(),
    *,
    record: bool = True,
    observer: Observer | None = None,
    on_game: Callable[[CubeGameResult, tuple[int, int]], None] | None = None,
) -> MatchResult:
    """Play a match to ``length`` points; game ``g`` (0-based) takes its dice from ``game_rng(g)``.

    The Crawford rule applies when ``rules.crawford``; Jacoby and automatic
    doubles never do in a match.  ``on_game(result, score_after)`` is called
    after each game.
    """
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise ConfigError(f"a match is at least 1 point long, got {length!r}")
    match_rules = Rules(
        cube=rules.cube, jacoby=False, auto_doubles=0, backgammon_counts=rules.backgammon_counts,
        crawford=rules.crawford, max_turns=rules.max_turns,
    )
    score = [0, 0]
    crawford_played = False
    games: list[CubeGameResult] = []
    g = 0
    while max(score) < length:
        is_crawford = rules.crawford and not crawford_played and (length - 1) in score
        crawford_played = crawford_played or is_crawford
        res = play_cube_game(
            bots, game_rng(g), match_rules, match_length=length, score=(score[0], score[1]),
            crawford=is_crawford, record=record, observer=observer,
        )
        games.append(res)
        if res.winner is None:
            if on_game is not None:
                on_game(res, (score[0], score[1]))
            return MatchResult(length, tuple(games), (score[0], score[1]), None)
        score[res.winner] += res.points
        if on_game is not None:
            on_game(res, (score[0], score[1]))
        g += 1
    return MatchResult(length, tuple(games), (score[0], score[1]), 0 if score[0] >= length else 1)
