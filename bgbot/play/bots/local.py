"""In-process bots: bgbot's network (any checkpoint, any ply), Tesauro's pubeval, and random play."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bgbot.config import check_seed
from bgbot.engine.api import Engine
from bgbot.engine.search import DEFAULT_FILTERS, MoveFilter, check_ply
from bgbot.errors import ConfigError
from bgbot.eval.pubeval import choose
from bgbot.play.bots.base import BaseBot
from bgbot.rules.dice import Dice
from bgbot.rules.matchstate import MatchState
from bgbot.rules.movegen import successors_batch
from bgbot.rules.position import Position

if TYPE_CHECKING:
    from bgbot.engine.api import Engine
    from bgbot.engine.cube import CubeDecision
    from bgbot.engine.search import Chooser


def _choose(chooser: Chooser, pos: Position, dice: Dice) -> Position:
    """One position's move by a batched :mod:`bgbot.play.duel` chooser; the result is the opponent's view."""
    before = pos.array()[None, :]
    succ, parent = successors_batch(before, dice)
    idx = int(chooser(before, succ, parent)[0]) if succ.shape[0] > 1 else 0
    return Position(succ[idx].tolist(), validate=False)


class RandomBot(BaseBot):
    """A uniformly random legal move; doubles with probability ``double`` and takes with ``take``.

    Every random draw comes from the bot's own generator (seeded), never from
    the game's dice.
    """

    def __init__(self, seed: int = 0, *, double: float = 0.0, take: float = 1.0, name: str = "random") -> None:
        for label, p in (("double", double), ("take", take)):
            if isinstance(p, bool) or not isinstance(p, int | float) or not 0.0 <= p <= 1.0:
                raise ConfigError(f"random bot: {label} must be a probability 0..1, got {p!r}")
        self.rng = np.random.default_rng(check_seed(seed, "random bot: seed"))
        self.p_double = float(double)
        self.p_take = float(take)
        self.name = name

    def move(self, pos: Position, dice: Dice, state: MatchState) -> Position:
        """A random legal result (opponent's view)."""
        before = pos.array()[None, :]
        succ, _ = successors_batch(before, dice)
        return Position(succ[int(self.rng.integers(succ.shape[0]))].tolist(), validate=False)

    def double(self, pos: Position, state: MatchState) -> bool:
        """Doubles with probability ``double``."""
        return bool(self.rng.random() < self.p_double)

    def take(self, pos: Position, state: MatchState) -> bool:
        """Takes with probability ``take``."""
        return bool(self.rng.random() < self.p_take)


class PubevalBot(BaseBot):
    """Tesauro's pubeval for checker play.  Pubeval has no probabilities: it never doubles and always takes."""

    def __init__(self, name: str = "pubeval") -> None:
        self._choose = choose
        self.name = name

    def move(self, pos: Position, dice: Dice, state: MatchState) -> Position:
        """Pubeval's choice (opponent's view)."""
        return _choose(self._choose, pos, dice)


class BgbotBot(BaseBot):
    """bgbot's engine: checker play at ``ply`` (XG numbering, 1 = the network alone), cube at ``cube_ply``.

    Cube actions come from :meth:`bgbot.engine.api.Engine.cube_action` (Janowski
    for money, gnubg's method with the match equity table for matches), from
    the side on roll's probabilities before its roll.  Checker plays are ranked
    by :meth:`~bgbot.engine.api.Engine.best_move` with the game's cube and score
    (cubeful money equity, or match winning chances); ``cubeful=False`` ranks
    them cubeless, for games played without the cube.
    """

    def __init__(
        self, engine: Engine, *, ply: int = 1, cube_ply: int | None = None, name: str = "bgbot", cubeful: bool = True
    ) -> None:
        self.engine = engine
        self.ply = check_ply(ply)
        self.cube_ply = check_ply(cube_ply if cube_ply is not None else ply)
        self._chooser = engine.chooser(self.ply)
        self.cubeful = bool(cubeful)
        self.name = name

    @classmethod
    def load(
        cls,
        checkpoint: str | Path | None = None,
        *,
        ply: int = 1,
        cube_ply: int | None = None,
        bearoff: bool = True,
        name: str = "bgbot",
        cubeful: bool = True,
        filters: Sequence[MoveFilter] = DEFAULT_FILTERS,
    ) -> BgbotBot:
        """A bot on the network of ``checkpoint`` (default: the shipped model or ``$BGBOT_CHECKPOINT``).

        ``filters`` are the move filters of its 2- and 3-ply searches (:func:`~bgbot.engine.search.parse_filters`).
        """
        engine = Engine.load(checkpoint, bearoff=bearoff, filters=filters)
        return cls(engine, ply=ply, cube_ply=cube_ply, name=name, cubeful=cubeful)

    def move(self, pos: Position, dice: Dice, state: MatchState) -> Position:
        """The best move at ``ply`` for the game's cube and score (opponent's view)."""
        if not self.cubeful:
            return _choose(self._chooser, pos, dice)
        return self.engine.best_move(pos, dice, self.ply, state).best.result

    def decision(self, pos: Position, state: MatchState) -> CubeDecision:
        """The cube decision of the side on roll in ``pos`` (its view), normalised to the cube value."""
        return self.engine.cube_action(pos, state, ply=self.cube_ply)

    def double(self, pos: Position, state: MatchState) -> bool:
        """Doubles when the engine says double/take or double/pass."""
        return self.decision(pos, state).doubles

    def take(self, pos: Position, state: MatchState) -> bool:
        """Takes unless the engine, from the doubler's side, finds the double a pass."""
        return self.decision(pos, state.at_decision()).takes
