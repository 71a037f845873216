"""Every error bgbot raises for bad input.

All of them derive from :class:`BgbotError`, itself a :class:`ValueError`, so a
caller can catch one type.  Messages quote the offending input with ``{text!r}``
and say what was wrong with it; the CLI prints the message on one line and
exits with status 2.
"""

from __future__ import annotations


class BgbotError(ValueError):
    """Base class of every error caused by bad input to bgbot."""


class InvalidPositionError(BgbotError):
    """A position that breaks the rules (checker counts, shared points, bar signs)."""


class InvalidIdError(BgbotError):
    """Text that is not a valid gnubg Position ID, Match ID, XGID or FIBS board."""


class InvalidDiceError(BgbotError):
    """Dice text or values outside 1-6, or the wrong number of dice."""


class InvalidMoveError(BgbotError):
    """Move text that cannot be read as backgammon move notation at all."""


class IllegalMoveError(InvalidMoveError):
    """Well-formed move text that is not a legal play of this roll in this position."""


class AmbiguousMoveError(InvalidMoveError):
    """Move text that matches more than one legal play with different results."""


class ConfigError(BgbotError):
    """An unknown key, a wrong type or a bad value in a config file or ``--set`` override."""


class CheckpointError(BgbotError):
    """A checkpoint file that is missing, truncated, corrupt or of another encoding version."""


class ProtocolError(BgbotError):
    """A line from another engine (FIBS board, move reply, command) that cannot be understood."""


class EngineError(BgbotError):
    """An external engine that is missing, died, timed out or answered nonsense."""
