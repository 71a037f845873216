"""Every error bgbot raises for bad input, and the two signals the turn loop uses.

The input errors derive from :class:`BgbotError`, itself a :class:`ValueError`, so a
caller can catch one type.  Messages quote the offending input with ``{text!r}``
and say what was wrong with it; the CLI prints the message on one line and
exits with status 2.
"""

from __future__ import annotations

import operator

QUOTE_LIMIT = 80  # characters of user input repeated in an error message


_ASCII_INT = frozenset("0123456789")


def ascii_int(text: str) -> int:
    """``int(text)`` for plain ASCII decimal text (a sign and surrounding spaces allowed), else ``ValueError``.

    Python's ``int`` also reads the digits of other scripts (``'٢'`` is 2) and
    ``str.isdigit`` accepts ``'²'``: user input means 0-9 and nothing else.
    """
    t = text.strip()
    body = t[1:] if t[:1] in "+-" else t
    if not body or not set(body) <= _ASCII_INT or len(body) > 18:
        raise ValueError(f"not a whole number: {text!r}")
    return int(t)


def quote_input(text: object) -> str:
    """``repr(text)``, truncated to :data:`QUOTE_LIMIT` characters for long strings."""
    if isinstance(text, str) and len(text) > QUOTE_LIMIT:
        return f"{text[:QUOTE_LIMIT]!r}... ({len(text)} characters)"
    return repr(text)


def as_integer(value: object, what: str, error: type[BgbotError], kind: str = "an integer") -> int:
    """``value`` as an ``int``: a Python or numpy integer, not a bool, float or text.

    Anything else raises ``error`` saying that ``what`` must be ``kind`` and quoting the value.
    """
    if not isinstance(value, bool):  # a bool is an int, and never a count
        try:
            return operator.index(value)  # type: ignore[call-overload, no-any-return]
        except TypeError:
            pass
    raise error(f"{what} must be {kind}, got {quote_input(value)}")


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


class InvalidScoreError(BgbotError):
    """A match length, score or Crawford flag that does not describe a possible match situation."""


class InvalidCubeError(BgbotError):
    """Bad input to a cube decision: probabilities, cube value or owner, score, or cube efficiency."""


class MetError(BgbotError):
    """A match equity table file that cannot be used, or a score outside the table."""


# ---- signals of the turn loop (not input errors) ---------------------------


class Forfeit(Exception):
    """Raised by the turn loop's referee when a side's answer or failure forfeits the game.

    ``fault`` is the :class:`bgbot.play.table.Fault` that says who and why;
    ``loser`` is the side (0/1) of the game that forfeits, set by the referee
    that asked it.
    """

    def __init__(self, fault: object, loser: int | None = None) -> None:
        super().__init__(getattr(fault, "message", str(fault)))
        self.fault = fault
        self.loser = loser


class QuitSession(Exception):
    """The person asked to leave (``quit`` or end of input); not a fault, so no forfeit is recorded."""


# ---- heavy work: executors and their journals (issue 13) --------------------


class ExecutorError(BgbotError):
    """A bad executor (``--executor``), worker count, or a cluster that cannot be reached or lacks Ray."""


class JournalError(BgbotError):
    """A results folder (``--resume DIR``) that holds another run or cannot be used."""


class RecordError(BgbotError):
    """A game record (``.mat`` or ``.sgf``) that cannot be read or replayed; the message names the file and
    line and quotes the line."""


class RecordMoveError(RecordError):
    """A game record whose move is not a legal play (or whose cube action breaks the rules) when replayed."""


class RequestLimitError(BgbotError):
    """A request beyond the limits of ``bgbot serve``: too large, too deep a ply, too slow, or too many at once."""


# ---- outputs (issue 11) -------------------------------------------------------


class OutputError(BgbotError):
    """An output file or folder that cannot be written: under a file, not a folder, read-only, or a full disk."""


# ---- interrupts ---------------------------------------------------------------


def is_interrupt(exc: BaseException | None) -> bool:
    """Whether ``exc`` is an interrupt (Ctrl-C, or SIGTERM turned into one), also when compiled code wrapped it.

    A ``KeyboardInterrupt`` raised while numba's dispatcher was running Python code comes out of it as a
    ``SystemError`` ("returned a result with an exception set") whose cause is the interrupt: callers
    that save their work on an interrupt catch both and ask this.
    """
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, KeyboardInterrupt):
            return True
        if not isinstance(exc, SystemError):
            return False
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


class LabelBankError(BgbotError):
    """A label bank that cannot be used: a missing, damaged or foreign shard, a bad manifest (names the file)."""
