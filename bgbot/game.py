"""Playing a game: opening roll, dice, a referee that checks every move, and scoring.

Cubeless money play for now.  The pieces are kept small and separate because
the cube, matches (Crawford), Jacoby, automatic doubles and chouettes will be
built from them rather than into them:

* :func:`opening_roll` - who starts, with which dice, after how many ties
  (automatic doubles count the ties).
* :func:`roll_dice` - every later roll; all dice of a game come from the one
  ``numpy.random.Generator`` handed to :func:`play_game`, and players never
  draw from it, so a seed fixes the dice whatever the players do (duplicate-dice
  pits rely on that).
* :class:`Player` - a checker player: sees the position from its own view
  (side on roll) and the dice, answers with the resulting position from the
  opponent's view.  Cube decisions will be a separate protocol.
* :func:`referee_move` - asks a player and rejects anything that is not one of
  :func:`bgbot.movegen.successors`.
* :func:`game_points` - what a finished game is worth (backgammon option,
  cube value, Jacoby).
* :func:`play_game` - the loop that ties them together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from bgbot.errors import ConfigError, IllegalMoveError, InvalidPositionError
from bgbot.movegen import successors
from bgbot.position import Position

Dice = tuple[int, int]

DEFAULT_MAX_TURNS = 10_000


# ---------------------------------------------------------------------------
# dice
# ---------------------------------------------------------------------------


def roll_dice(rng: np.random.Generator) -> Dice:
    """Two independent fair dice from ``rng``."""
    d1, d2 = rng.integers(1, 7, size=2)
    return int(d1), int(d2)


def opening_roll(rng: np.random.Generator) -> tuple[int, Dice, int]:
    """The opening roll: ``(first_player, (d1, d2), ties)``.

    Player 0 and player 1 each roll one die (player 0's is drawn first); equal
    dice are rolled again and counted in ``ties``.  The higher die moves first
    and plays both dice: ``d1`` is its own (higher) die, ``d2`` the other's, so
    the opening roll is never a double.
    """
    ties = 0
    while True:
        a, b = roll_dice(rng)
        if a != b:
            return (0, (a, b), ties) if a > b else (1, (b, a), ties)
        ties += 1


# ---------------------------------------------------------------------------
# players
# ---------------------------------------------------------------------------


@runtime_checkable
class Player(Protocol):
    """A cubeless checker player.

    ``move`` gets ``pos`` from the player's own view (it is on roll) and its
    ``dice``, and returns the position after its move **from the opponent's
    view** (the opponent on roll), i.e. one of ``successors(pos, dice)``.  The
    referee only asks when at least one legal move exists.
    """

    def move(self, pos: Position, dice: Dice) -> Position: ...


class RandomPlayer:
    """Plays a uniformly random legal move (each distinct resulting position equally likely).

    It draws from its own generator, never from the game's dice generator.
    """

    def __init__(self, rng: np.random.Generator | int | None = None) -> None:
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)

    def move(self, pos: Position, dice: Dice) -> Position:
        """A random element of ``successors(pos, dice)`` (opponent's view)."""
        options = successors(pos, dice)
        return options[int(self.rng.integers(len(options)))]


# ---------------------------------------------------------------------------
# referee
# ---------------------------------------------------------------------------


def referee_move(player: Player, pos: Position, dice: Dice, *, who: str = "player") -> Position:
    """Ask ``player`` to play ``dice`` in ``pos`` (its view) and return the checked result.

    The result is from the opponent's view.  When the roll cannot be played the
    player is not asked and the result is ``pos.swap()`` (the turn passes).
    Raises :class:`IllegalMoveError`, naming the position, the dice and the
    answer, when the answer is not a legal result.
    """
    legal = successors(pos, dice)
    if not legal:
        return pos.swap()
    answer = player.move(pos, dice)
    if not isinstance(answer, Position):
        raise IllegalMoveError(
            f"{who} answered {answer!r} (not a Position) to dice {dice!r} in position {pos.gnubg_id()!r}"
        )
    if answer not in legal:
        hint = (
            " (it is legal seen from the mover's side: answer from the opponent's view)"
            if answer.swap() in legal
            else ""
        )
        raise IllegalMoveError(
            f"{who} played an illegal move with dice {dice!r} in position {pos.gnubg_id()!r}: "
            f"the result {answer.gnubg_id()!r} is not one of the {len(legal)} legal results{hint}"
        )
    return answer


# ---------------------------------------------------------------------------
# scoring
# ---------------------------------------------------------------------------


def game_points(
    kind: int,
    cube: int = 1,
    *,
    backgammon_counts: int = 3,
    jacoby: bool = False,
    cube_turned: bool = False,
) -> int:
    """Points a finished game is worth to its winner.

    ``kind`` is 1 (single), 2 (gammon) or 3 (backgammon), as ``-Position.result()``
    of the final position.  ``backgammon_counts`` is 3, or 2 where backgammons
    count as gammons; under the Jacoby rule gammons and backgammons count as
    single games while the cube has not been turned.
    """
    if kind not in (1, 2, 3):
        raise InvalidPositionError(f"a game result is 1, 2 or 3 points at cube 1, got {kind!r}")
    check_backgammon_counts(backgammon_counts)
    if jacoby and not cube_turned:
        kind = 1
    elif kind == 3:
        kind = backgammon_counts
    return kind * cube


def check_backgammon_counts(value: object) -> int:
    """The ``backgammon_counts`` option, validated: 3 (standard) or 2."""
    if value not in (2, 3) or isinstance(value, bool):
        raise ConfigError(f"backgammon_counts must be 3 or 2, got {value!r}")
    return int(value)  # type: ignore[call-overload]


# ---------------------------------------------------------------------------
# the game
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """One turn of a game: ``player`` (0/1) rolled ``dice`` in ``position`` (its own view)
    and left ``result`` (the opponent's view; ``position.swap()`` when it could not move)."""

    player: int
    position: Position
    dice: Dice
    result: Position


@dataclass(frozen=True)
class GameResult:
    """The outcome of :func:`play_game`.

    ``winner`` is 0 or 1, or None if the game was stopped after ``max_turns``
    (then ``points`` and ``kind`` are 0).  ``kind`` is 1/2/3 (single, gammon,
    backgammon) before options; ``points`` is what the winner wins at cube 1
    with the game's options applied.  ``final`` is the last position, from the
    view of the side that would roll next (the loser in a finished game).
    ``turns`` counts turns played, passes included.  ``record`` holds every
    turn when asked for, else is empty.
    """

    winner: int | None
    points: int
    kind: int
    turns: int
    first_player: int
    opening_dice: Dice
    opening_ties: int
    final: Position
    record: tuple[Turn, ...] = ()

    @property
    def finished(self) -> bool:
        """False when the game was cut off by ``max_turns``."""
        return self.winner is not None


def play_game(
    player0: Player,
    player1: Player,
    rng: np.random.Generator,
    *,
    backgammon_counts: int = 3,
    max_turns: int = DEFAULT_MAX_TURNS,
    record: bool = False,
    start: Position | None = None,
) -> GameResult:
    """Play one cubeless game from the opening roll to the end.

    Every die comes from ``rng``: the same seed (and the same players) give the
    same game.  Each move is checked by :func:`referee_move`; an illegal answer
    raises :class:`IllegalMoveError`.  ``start`` (default the starting position)
    is seen from the side that wins the opening roll.  A game still running
    after ``max_turns`` turns stops with ``winner=None``.
    """
    check_backgammon_counts(backgammon_counts)
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        raise ConfigError(f"max_turns must be a positive integer, got {max_turns!r}")
    if start is not None and (not isinstance(start, Position) or start.is_game_over()):
        raise InvalidPositionError(f"start must be a Position of a game not yet over, got {start!r}")
    players: Sequence[Player] = (player0, player1)
    first, opening, ties = opening_roll(rng)
    dice = opening
    pos = Position.start() if start is None else start
    side = first
    turns: list[Turn] = []
    for n in range(1, max_turns + 1):
        result = referee_move(players[side], pos, dice, who=f"player {side}")
        if record:
            turns.append(Turn(side, pos, dice, result))
        if result.off()[1] == 15:  # the mover (now the opponent in ``result``) bore off its last checker
            kind = -result.result()
            return GameResult(
                winner=side,
                points=game_points(kind, backgammon_counts=backgammon_counts),
                kind=kind,
                turns=n,
                first_player=first,
                opening_dice=opening,
                opening_ties=ties,
                final=result,
                record=tuple(turns),
            )
        pos, side, dice = result, 1 - side, roll_dice(rng)
    return GameResult(
        winner=None,
        points=0,
        kind=0,
        turns=max_turns,
        first_player=first,
        opening_dice=opening,
        opening_ties=ties,
        final=pos,
        record=tuple(turns),
    )
