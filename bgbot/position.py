"""The backgammon position, always seen from the side on roll.

A :class:`Position` holds 26 signed checker counts:

* index 1..24: the points of the side on roll, numbered from its own view (it
  moves from 24 towards 1; 1..6 is its home board).  Its checkers count
  positive, the opponent's negative.
* index 25: the bar of the side on roll (a count >= 0).  Entering with die
  ``d`` lands on point ``25 - d``, so the bar behaves like a 25-point.
* index 0: the opponent's bar, stored **negative** (like every opponent
  checker), so that ``swap`` is just ``new[i] = -old[25 - i]``.

Checkers borne off are not stored: they are ``15 - (checkers on the board)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from bgbot.errors import InvalidPositionError

if TYPE_CHECKING:
    from numpy.typing import NDArray

NUM_SLOTS = 26
CHECKERS = 15
BAR = 25
OPP_BAR = 0

_START = (0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0)


class Position:
    """An immutable, hashable backgammon position from the view of the side on roll.

    >>> Position.start().pips()
    (167, 167)
    >>> Position.start().gnubg_id()
    '4HPwATDgc/ABMA'
    """

    __slots__ = ("_board", "_hash")

    def __init__(self, board: Iterable[int], *, validate: bool = True) -> None:
        b = tuple(int(x) for x in board)
        if validate:
            _validate(b)
        self._board: tuple[int, ...] = b
        self._hash = hash(b)

    # ---- construction -------------------------------------------------
    @classmethod
    def start(cls) -> Position:
        """The starting position (either side on roll: it is symmetric)."""
        return cls(_START, validate=False)

    @classmethod
    def from_array(cls, arr: Sequence[int] | NDArray[np.integer], *, validate: bool = True) -> Position:
        """A position from a length-26 array in this module's layout (side on roll's view)."""
        return cls(np.asarray(arr).tolist(), validate=validate)

    @classmethod
    def from_points(
        cls, mine: dict[int, int], theirs: dict[int, int] | None = None
    ) -> Position:
        """Build a position from checker counts, each side in its *own* numbering.

        ``mine`` maps the side on roll's points (1..24, 25 = bar) to counts;
        ``theirs`` maps the opponent's points in the opponent's numbering
        (25 = the opponent's bar).  Handy in tests::

            Position.from_points({6: 2, 25: 1}, {1: 2})
        """
        board = [0] * NUM_SLOTS
        for point, n in mine.items():
            _check_point(point, mine)
            board[point] += n
        for point, n in (theirs or {}).items():
            _check_point(point, theirs)
            board[25 - point] -= n
        return cls(board)

    @classmethod
    def from_id(cls, text: str) -> Position:
        """Parse a gnubg Position ID, an XGID or a FIBS ``board:`` line (position part only)."""
        from bgbot.notation import parse_position  # notation imports this module

        return parse_position(text)

    @classmethod
    def _trusted(cls, board: tuple[int, ...]) -> Position:
        """Wrap a tuple of 26 ints known to be valid (generator output): no copying, no checks."""
        pos = object.__new__(cls)
        pos._board = board
        pos._hash = hash(board)
        return pos

    # ---- views --------------------------------------------------------
    @property
    def board(self) -> tuple[int, ...]:
        """The 26 signed counts (see the module docstring for the layout)."""
        return self._board

    def array(self) -> NDArray[np.int8]:
        """A fresh ``int8`` array of the 26 counts (side on roll's view)."""
        return np.array(self._board, dtype=np.int8)

    def __getitem__(self, i: int) -> int:
        return self._board[i]

    def swap(self) -> Position:
        """The same position seen from the opponent (the opponent on roll)."""
        b = self._board
        return Position(tuple(-b[25 - i] for i in range(NUM_SLOTS)), validate=False)

    def mine(self) -> list[int]:
        """Counts of the side on roll by its own point number, index 0 = borne off, 25 = bar."""
        out = [max(x, 0) for x in self._board]
        out[0] = CHECKERS - sum(out[1:])
        return out

    def theirs(self) -> list[int]:
        """Counts of the opponent by the opponent's point number, index 0 = borne off, 25 = bar."""
        return self.swap().mine()

    def pips(self) -> tuple[int, int]:
        """Pip counts ``(side on roll, opponent)``; a checker on the bar counts 25."""
        b = self._board
        me = sum(i * b[i] for i in range(1, 26) if b[i] > 0)
        opp = sum((25 - i) * -b[i] for i in range(0, 25) if b[i] < 0)
        return me, opp

    def off(self) -> tuple[int, int]:
        """Checkers borne off ``(side on roll, opponent)``."""
        b = self._board
        me = sum(x for x in b if x > 0)
        opp = -sum(x for x in b if x < 0)
        return CHECKERS - me, CHECKERS - opp

    def has_contact(self) -> bool:
        """True while some checker of one side still has to pass a checker of the other."""
        b = self._board
        my_back = max((i for i in range(1, 26) if b[i] > 0), default=0)
        opp_back = min((i for i in range(0, 25) if b[i] < 0), default=25)
        return my_back > opp_back

    def is_game_over(self) -> bool:
        """True when either side has borne off all 15 checkers."""
        me, opp = self.off()
        return me == CHECKERS or opp == CHECKERS

    def result(self) -> int:
        """Points won by the side on roll at cube 1 in a finished game: +-1, +-2 or +-3.

        Normally the game ends on the winner's move, so the side now on roll
        has lost and the result is negative.  Raises :class:`InvalidPositionError`
        if the game is not over.
        """
        me_off, opp_off = self.off()
        if opp_off == CHECKERS:
            return -_loss_size(self)
        if me_off == CHECKERS:
            return _loss_size(self.swap())
        raise InvalidPositionError(f"game not over in {self.gnubg_id()!r}")

    # ---- formats (implemented in bgbot.notation) ----------------------
    def gnubg_id(self) -> str:
        """The 14-character gnubg Position ID (side on roll first)."""
        from bgbot.notation import gnubg_position_id

        return gnubg_position_id(self)

    def xgid(self, **fields: object) -> str:
        """An XGID for this position; keyword fields as :func:`bgbot.notation.format_xgid`."""
        from bgbot.notation import format_xgid

        return format_xgid(self, **fields)  # type: ignore[arg-type]

    def fibs_board(self, **fields: object) -> str:
        """A FIBS ``board:`` line; keyword fields as :func:`bgbot.notation.format_fibs_board`."""
        from bgbot.notation import format_fibs_board

        return format_fibs_board(self, **fields)  # type: ignore[arg-type]

    # ---- dunder -------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return isinstance(other, Position) and self._board == other._board

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Position.from_id({self.gnubg_id()!r})"


def _check_point(point: int, where: object) -> None:
    if not isinstance(point, int) or not 1 <= point <= 25:
        raise InvalidPositionError(f"point {point!r} out of range 1..25 in {where!r}")


def _loss_size(loser_view: Position) -> int:
    """1, 2 or 3: the size of the loss of the side on roll in ``loser_view`` (a finished game)."""
    b = loser_view.board
    loser_off = loser_view.off()[0]
    if loser_off > 0:
        return 1
    # loser's checkers on its bar (25) or in the winner's home board (loser's 19..24)
    if any(b[i] > 0 for i in range(19, 26)):
        return 3
    return 2


def _validate(b: tuple[int, ...]) -> None:
    if len(b) != NUM_SLOTS:
        raise InvalidPositionError(f"a position has 26 slots, got {len(b)}: {b!r}")
    if b[BAR] < 0:
        raise InvalidPositionError(f"the bar of the side on roll (slot 25) is negative: {b!r}")
    if b[OPP_BAR] > 0:
        raise InvalidPositionError(f"the opponent's bar (slot 0) must be stored negative: {b!r}")
    mine = sum(x for x in b if x > 0)
    theirs = -sum(x for x in b if x < 0)
    if mine > CHECKERS or theirs > CHECKERS:
        raise InvalidPositionError(
            f"more than 15 checkers a side ({mine} and {theirs}) in {b!r}"
        )
