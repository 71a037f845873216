"""Dice: reading them, the 21 distinct rolls and their weights, the opening roll, seeded streams.

Every random draw of a game goes through a :class:`numpy.random.Generator` the
caller seeds, so the same seed gives the same games.  Duplicate dice (the pit
and the duels play each dice sequence twice, seats swapped) are streams built
from the same seed, see :func:`duplicate_rng`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from bgbot.errors import InvalidDiceError

if TYPE_CHECKING:
    from numpy.typing import NDArray

Dice = tuple[int, int]

#: The 21 distinct rolls, each once: ``(d1, d2)`` with ``d1 >= d2``.
ROLLS: tuple[Dice, ...] = tuple((d1, d2) for d1 in range(1, 7) for d2 in range(1, d1 + 1))
#: Probability of each of :data:`ROLLS`: 1/36 for a double, 2/36 otherwise.
ROLL_WEIGHTS: NDArray[np.float64] = np.array([1.0 if d1 == d2 else 2.0 for d1, d2 in ROLLS]) / 36.0


def parse_dice(dice: object) -> Dice:
    """Validate dice given as ``(d1, d2)``, ``[d1, d2]`` or text like ``"31"``, ``"3-1"``, ``"3 1"``."""
    if type(dice) is tuple and len(dice) == 2:
        a, b = dice
        if type(a) is int and type(b) is int and 1 <= a <= 6 and 1 <= b <= 6:
            return dice  # type: ignore[return-value]  # the common case (search, move generation): as it is
    if isinstance(dice, str):
        digits = [c for c in dice if not c.isspace() and c not in "-,/"]
        if len(digits) != 2 or not all(c in "123456" for c in digits):
            raise InvalidDiceError(f"dice must be two digits 1-6 like '31' or '3-1', got {dice!r}")
        return int(digits[0]), int(digits[1])
    try:
        values = [int(x) for x in dice]  # type: ignore[attr-defined]
        ok = len(values) == 2 and all(1 <= v <= 6 for v in values) and all(
            float(x) == int(x) for x in dice  # type: ignore[attr-defined]
        )
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise InvalidDiceError(f"dice must be two values 1-6, got {dice!r}")
    return values[0], values[1]


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


def reroll_opening_doubles(
    rng: np.random.Generator, dice: NDArray[np.integer], opening: NDArray[np.bool_]
) -> NDArray[np.integer]:
    """Batched opening rolls: redraw, in place, every ``(N, 2)`` row of ``dice`` that is a double
    where ``opening`` is true (a game's first roll is never a double), until none is left."""
    while True:
        tie = opening & (dice[:, 0] == dice[:, 1])
        if not tie.any():
            return dice
        dice[tie] = rng.integers(1, 7, size=(int(tie.sum()), 2))


def duplicate_rng(seed: int, *stream: int) -> np.random.Generator:
    """The dice generator of one duplicate stream: ``(seed, *stream)``, e.g. ``(seed, pair)``.

    Both games of a duplicate pair draw from generators made with the same
    arguments, so they see the same dice whatever process plays them.
    """
    return np.random.default_rng([seed, *stream])
