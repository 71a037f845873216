"""The :class:`Bot` protocol: what the referee asks a player, and what it gets back.

A bot answers three questions, always given the position **from the view of
the side on roll** (as everywhere in bgbot) together with a
:class:`~bgbot.rules.matchstate.MatchState` whose players are absolute (0 and 1):

* ``move(pos, dice, state)``: the bot is on roll (``state.on_roll``) with
  ``dice``; it returns the position after its move **from the opponent's
  view** (one of :func:`bgbot.rules.movegen.successors`).
* ``double(pos, state)``: the bot is on roll, before rolling, and may double
  (the referee only asks when the cube is available to it); True to double.
* ``take(pos, state)``: the opponent (``state.on_roll``, the side whose view
  ``pos`` is in) has doubled and ``state.doubled`` is True; the bot is
  ``state.turn``.  True to take, False to pass.

A bot that cannot answer (an external engine that died, timed out or sent
nonsense) raises :class:`~bgbot.errors.EngineError` or
:class:`~bgbot.errors.ProtocolError`; a move text that names no legal play
raises an :class:`~bgbot.errors.InvalidMoveError`.  The referee turns any of
them into a forfeit of the game and goes on.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from bgbot.rules.dice import Dice
from bgbot.rules.matchstate import MatchState
from bgbot.rules.position import Position


@runtime_checkable
class Bot(Protocol):
    """A backgammon player the referee can ask for moves and cube actions (see the module docstring)."""

    name: str

    def new_game(self, state: MatchState) -> None:
        """Called before each game with the score and rules of that game."""

    def move(self, pos: Position, dice: Dice, state: MatchState) -> Position:
        """The result of the bot's move (opponent's view); ``pos`` is the bot's own view (on roll)."""

    def double(self, pos: Position, state: MatchState) -> bool:
        """Whether the bot, on roll in ``pos`` (its view) before rolling, doubles."""

    def take(self, pos: Position, state: MatchState) -> bool:
        """Whether the bot takes the double of the side on roll (``pos`` is the doubler's view)."""

    def reset(self) -> None:
        """Get ready for the next game after a fault (an external engine restarts if it died)."""

    def close(self) -> None:
        """Release what the bot holds (processes, sockets).  Safe to call twice."""


class BaseBot:
    """Defaults for the optional parts of :class:`Bot`: no set-up, never doubles, always takes."""

    name = "bot"

    def new_game(self, state: MatchState) -> None:
        """Nothing to prepare by default."""

    def double(self, pos: Position, state: MatchState) -> bool:
        """Never doubles by default."""
        return False

    def take(self, pos: Position, state: MatchState) -> bool:
        """Always takes by default."""
        return True

    def reset(self) -> None:
        """Nothing to restart by default."""

    def close(self) -> None:
        """Nothing to release by default."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"
