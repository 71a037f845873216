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

The basic facts about a position are defined here once: :func:`flip` (the
other side's view, for one board or a batch), :func:`classify` (over /
bear-off / race / crashed / contact, as gnubg classifies), :class:`Outcome`
(who won, how, for how many points) and the gnubg Position ID.

**gnubg Position ID** (14 base64 characters, an 80-bit key read least
significant bit first).  The key lists first the player *not* on roll, then
the player on roll, each from its own ace point to its bar: one ``1`` per
checker and a ``0`` after every point.  (gnubg's manual words it the other
way round; its code and the reference data put the opponent first.)
"""

from __future__ import annotations

import base64
import enum
import numbers
import operator
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict, TypeVar, Unpack

import numpy as np

from bgbot.errors import ConfigError, InvalidIdError, InvalidPositionError, quote_input

if TYPE_CHECKING:
    from numpy.typing import NDArray

NUM_SLOTS = 26
CHECKERS = 15
BAR = 25
OPP_BAR = 0

HOME = 6  # points 1..6 are the home board of the side they belong to
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64_SET = frozenset(_B64)

_START = (0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0)


class Position:
    """An immutable, hashable backgammon position from the view of the side on roll.

    >>> Position.start().pips()
    (167, 167)
    >>> Position.start().gnubg_id()
    '4HPwATDgc/ABMA'
    """

    # No cached hash: most positions (the generator's results, a search's candidates) are never
    # hashed, and hashing the 26-tuple at creation was a fifth of what building one cost.
    __slots__ = ("_board",)

    def __init__(self, board: Iterable[int], *, validate: bool = True) -> None:
        if validate:
            b = _whole_counts(board)
            _validate(b)
        else:
            b = tuple(int(x) for x in board)  # trusted input: the generator's rows
        self._board: tuple[int, ...] = b

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
        if not isinstance(mine, dict) or not isinstance(theirs, dict | None):
            raise InvalidPositionError(f"checker counts are dicts point -> count, got {mine!r} and {theirs!r}")
        board = [0] * NUM_SLOTS
        for point, n in mine.items():
            _check_point(point, mine)
            board[point] += _count(n, mine)
        for point, n in (theirs or {}).items():
            _check_point(point, theirs)
            board[25 - point] -= _count(n, theirs)
        return cls(board)

    @classmethod
    def from_id(cls, text: str) -> Position:
        """Parse a gnubg Position ID; the position is from the side on roll's view.

        For any position text (``ID:MatchID``, an XGID, a FIBS ``board:`` line)
        use :func:`bgbot.parse_position`.
        """
        return parse_gnubg_position_id(text)

    @staticmethod
    def _trusted(board: tuple[int, ...]) -> Position:
        """Wrap a tuple of 26 ints known to be valid (generator output): no copying, no checks."""
        pos = _new(Position)
        pos._board = board
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
        return Position(flip(self._board), validate=False)

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
        return bool(has_contact(np.asarray(self._board)))

    def classify(self) -> PositionClass:
        """This position's class (see :func:`classify`)."""
        return classify(self)

    def is_game_over(self) -> bool:
        """True when either side has borne off all 15 checkers."""
        b = self._board
        return max(b) <= 0 or min(b) >= 0  # no checker of the side on roll, or none of the opponent's, left

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

    def gnubg_id(self) -> str:
        """The 14-character gnubg Position ID (side on roll first)."""
        return gnubg_position_id(self)

    # ---- dunder -------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return isinstance(other, Position) and self._board == other._board

    def __hash__(self) -> int:
        return hash(self._board)

    def __repr__(self) -> str:
        return f"Position.from_id({self.gnubg_id()!r})"


_new = object.__new__
_ROW = struct.Struct(f"{NUM_SLOTS}b")


def positions_of_rows(rows: NDArray[np.int8]) -> list[Position]:
    """The rows of an ``(N, 26)`` int8 array of valid boards (the generator's output) as positions.

    Each position is in the view its row is in.  No checks: for boards the
    move generator made.  Cheaper than ``Position.from_array`` per row: the
    rows are read as tuples straight from the array's bytes.
    """
    if rows.dtype != np.int8 or rows.ndim != 2 or rows.shape[1] != NUM_SLOTS:
        raise InvalidPositionError(f"positions_of_rows reads (N, 26) int8 boards, got {rows.dtype} {rows.shape}")
    return positions_of_boards(_ROW.iter_unpack(rows.tobytes()))


def positions_of_boards(boards: Iterable[tuple[int, ...]]) -> list[Position]:
    """Tuples of 26 ints that are valid boards (the move generator's results) as positions, in order.

    Each position is in the view its board is in; the tuples become the positions' boards as they
    are, unchecked.  The same positions as ``Position(board)`` (equal, same hash, same pickle),
    made without a function call each: a position costs about as much to make as its tuple.
    """
    out: list[Position] = []
    append = out.append
    new = _new
    cls = Position
    for board in boards:
        pos = new(cls)
        pos._board = board
        append(pos)
    return out


# ---------------------------------------------------------------------------
# the other side's view, classes, outcomes
# ---------------------------------------------------------------------------

_B = TypeVar("_B", tuple[int, ...], np.ndarray)


def flip(board: _B) -> _B:
    """The same board from the other side's view: ``new[i] = -old[25 - i]``.

    Takes one board (a tuple of 26 ints, giving a tuple) or an array whose last
    axis is the 26 slots (``(26,)`` or ``(N, 26)``, giving a new array).
    """
    if isinstance(board, np.ndarray):
        return -board[..., ::-1]
    return tuple(-x for x in reversed(board))  # type: ignore[return-value]


def has_contact(boards: NDArray[np.integer] | Sequence[int]) -> NDArray[np.bool_]:
    """Per board (side on roll's view, ``(26,)`` or ``(N, 26)``): must some checker still pass an opposing one?"""
    b = np.asarray(boards)
    idx = np.arange(NUM_SLOTS)
    my_back = np.where(b > 0, idx, 0).max(axis=-1)
    opp_back = np.where(b < 0, idx, 25).min(axis=-1)
    return my_back > opp_back


def all_home(boards: NDArray[np.integer] | Sequence[int]) -> NDArray[np.bool_]:
    """Per board (side on roll's view): are both sides' checkers all in their own home boards?

    That is the range of the one-sided bear-off database (no one on the bar,
    no contact).
    """
    b = np.asarray(boards)
    return ~(b[..., HOME + 1 :] > 0).any(axis=-1) & ~(b[..., : 25 - HOME] < 0).any(axis=-1)


class PositionClass(enum.IntEnum):
    """gnubg's position classes, in its order (the evaluator dispatches on them)."""

    OVER = 0  #: a side has borne off all 15 checkers
    BEAROFF = 1  #: both sides have every checker in their home boards (exact database)
    RACE = 2  #: no contact, not both home
    CRASHED = 3  #: contact, and one side has at most 6 checkers left in play (see classify)
    CONTACT = 4  #: every other position


def classify(pos: Position) -> PositionClass:
    """The class of ``pos`` (either side's view gives the same class).

    A side is *crashed*, as gnubg counts it, when at most 6 of its checkers
    are on the board, or at most 6 besides those stacked beyond two on its
    1- and 2-points (checkers buried there no longer play).
    """
    return PositionClass(int(classify_boards(np.asarray(pos.board, dtype=np.int8)[None, :])[0]))


def classify_boards(boards: NDArray[np.integer]) -> NDArray[np.int8]:
    """:func:`classify` of every row of ``(N, 26)`` boards at once: ``(N,)`` :class:`PositionClass` codes.

    One compiled pass over each board (:func:`bgbot.rules.classes.classify_rows`,
    imported on first use, so that importing positions leaves :mod:`bgbot.jit`'s mode open).
    """
    from bgbot.rules.classes import classify_rows

    return classify_rows(boards)


def pip_counts(boards: NDArray[np.integer]) -> NDArray[np.int64]:
    """``(N, 2)`` pip counts of ``(N, 26)`` boards: (side on roll, opponent), a checker on the bar counting 25."""
    b = np.asarray(boards, dtype=np.int64)
    idx = np.arange(NUM_SLOTS)
    return np.stack([(np.clip(b, 0, None) * idx).sum(axis=1), (np.clip(-b, 0, None) * (25 - idx)).sum(axis=1)],
                    axis=1)


class GameKind(enum.IntEnum):
    """How a game was won: the points it is worth at cube 1 under the standard rules."""

    SINGLE = 1
    GAMMON = 2
    BACKGAMMON = 3


def check_backgammon_counts(value: object) -> int:
    """The ``backgammon_counts`` option, validated: 3 (standard) or 2."""
    if value not in (2, 3) or isinstance(value, bool):
        raise ConfigError(f"backgammon_counts must be 3 or 2, got {value!r}")
    return int(value)  # type: ignore[call-overload]


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


class PointRules(TypedDict, total=False):
    """The rules that set a finished game's points, as :func:`game_points` takes them: ``backgammon_counts``,
    ``jacoby`` and ``cube_turned`` (:meth:`Outcome.of` passes them on)."""

    backgammon_counts: int
    jacoby: bool
    cube_turned: bool


@dataclass(frozen=True)
class Outcome:
    """How a finished game ended: ``winner`` (0 or 1, the caller's numbering of players),
    ``kind`` (single / gammon / backgammon, before any rule) and ``points`` (after cube and rules).
    """

    winner: int
    kind: GameKind
    points: int

    @classmethod
    def of(cls, final: Position, on_roll: int, cube: int = 1, **rules: Unpack[PointRules]) -> Outcome:
        """The outcome of the finished game ``final``, whose side on roll is player ``on_roll``, at ``cube``
        under ``rules`` (:func:`game_points`' keywords and defaults)."""
        r = final.result()
        winner = on_roll if r > 0 else 1 - on_roll
        kind = GameKind(abs(r))
        return cls(winner, kind, game_points(kind, cube, **rules))


# ---------------------------------------------------------------------------
# gnubg Position ID
# ---------------------------------------------------------------------------


def base64_id_text(text: object, length: int, what: str) -> str:
    """``text`` stripped, if it is ``length`` base64 characters (gnubg's Position and Match IDs).

    Raises :class:`~bgbot.errors.InvalidIdError` naming ``what`` and quoting the input otherwise.
    """
    if not isinstance(text, str):
        raise InvalidIdError(f"a {what} must be text, got {quote_input(text)}")
    t = text.strip()
    q = quote_input(text)
    if len(t) != length:
        raise InvalidIdError(f"a {what} has {length} characters, got {len(t)}: {q}")
    if not set(t) <= _B64_SET:
        bad = sorted(set(t) - _B64_SET)
        raise InvalidIdError(f"characters {''.join(bad)!r} are not base64 in {what} {q}")
    return t


def gnubg_position_id(pos: Position) -> str:
    """The 14-character gnubg Position ID of ``pos`` (side on roll's view).

    >>> gnubg_position_id(Position.start())
    '4HPwATDgc/ABMA'
    """
    b = pos.board
    # least significant bit first; the opponent first, in its own numbering: its point q is
    # our slot 25 - q and its bar our slot 0, so its points 1..24 and bar are slots 24 down to 0
    bits = "".join("1" * -b[i] + "0" if b[i] < 0 else "0" for i in range(24, -1, -1))
    bits += "".join("1" * b[i] + "0" if b[i] > 0 else "0" for i in range(1, 26))
    key = int(bits[::-1], 2)
    return base64.b64encode(key.to_bytes(10, "little")).decode("ascii")[:14]


_ID_BITS = np.arange(80)
# the slots in the Position ID's order: the opponent's points 1..24 and bar (our slots 24..0), then ours 1..25
_ID_OPP = np.arange(24, -1, -1)
_ID_MINE = np.arange(1, 26)


def gnubg_position_ids(boards: NDArray[np.integer]) -> list[str]:
    """The gnubg Position IDs of ``(N, 26)`` boards (each from its side on roll's view), as :func:`gnubg_position_id`.

    One pass of numpy over the batch: the key's bits (a ``1`` a checker, a ``0``
    after every point) are laid out from each point's cumulative end, packed
    least significant bit first and base64-encoded together.  No checks: for
    valid boards (at most 15 checkers a side).
    """
    b = np.asarray(boards)
    if b.ndim != 2 or b.shape[1] != NUM_SLOTS:
        raise InvalidPositionError(f"gnubg_position_ids reads (N, 26) boards, got shape {b.shape}")
    n = b.shape[0]
    if n == 0:
        return []
    b = b.astype(np.int64)
    counts = np.concatenate((np.maximum(-b[:, _ID_OPP], 0), np.maximum(b[:, _ID_MINE], 0)), axis=1)  # (N, 50)
    ends = np.cumsum(counts + 1, axis=1)  # one past each point's 0 bit
    bits = ends[:, -1:] > _ID_BITS  # every bit up to the last point's 0 is a checker's 1 ...
    bits[np.arange(n)[:, None], ends - 1] = False  # ... but each point's closing 0
    packed = np.zeros((n, 12), dtype=np.uint8)  # 10 bytes of key and 2 of padding: 16 base64 characters a row
    packed[:, :10] = np.packbits(bits, axis=1, bitorder="little")
    text = base64.b64encode(packed.tobytes()).decode("ascii")
    return [text[i : i + 14] for i in range(0, 16 * n, 16)]


def parse_gnubg_position_id(text: str) -> Position:
    """Parse a gnubg Position ID; the position is from the side on roll's view.

    Raises :class:`~bgbot.errors.InvalidIdError` for a wrong length, characters
    outside base64, non-zero padding bits, a key that needs more than 80 bits
    or has stray bits after the last point, no checkers at all, more than 15
    checkers a side, a point held by both sides, or both sides on the bar
    against closed boards.
    """
    t = base64_id_text(text, 14, "gnubg Position ID")
    q = quote_input(text)
    if _B64.index(t[-1]) & 0xF:
        raise InvalidIdError(f"the 4 padding bits of gnubg Position ID {q} are not zero")
    key = int.from_bytes(base64.b64decode(t + "=="), "little")
    # the key least significant bit first: runs of 1s (checkers) ended by a 0 (next point)
    runs = format(key, "080b")[::-1].split("0")
    if len(runs) < 51:
        raise InvalidIdError(f"gnubg Position ID {q} needs more than 80 bits")
    if any(runs[50:]):
        raise InvalidIdError(f"gnubg Position ID {q} has stray bits after the last point")
    counts = [len(r) for r in runs[:50]]
    opp, me = counts[:25], counts[25:]
    if not any(counts):
        raise InvalidIdError(f"gnubg Position ID {q} has no checkers on the board (a position needs some)")
    if sum(opp) > CHECKERS or sum(me) > CHECKERS:
        raise InvalidIdError(
            f"gnubg Position ID {q} has {sum(me)} and {sum(opp)} checkers; at most 15 a side"
        )
    for p in range(1, 25):
        if me[p - 1] and opp[24 - p]:
            raise InvalidIdError(f"point {p} is held by both sides in gnubg Position ID {q}")
    # gnubg's CheckPosition: both sides on the bar against two closed boards cannot arise
    if me[24] and opp[24] and all(me[i] >= 2 and opp[i] >= 2 for i in range(6)):
        raise InvalidIdError(f"both sides are on the bar against closed boards in gnubg Position ID {q}")
    board = [0] * 26
    board[0] = -opp[24]
    for qpt in range(1, 25):
        board[25 - qpt] -= opp[qpt - 1]
        board[qpt] += me[qpt - 1]
    board[25] = me[24]
    return Position(board, validate=False)



def _whole_counts(board: object) -> tuple[int, ...]:
    """The 26 counts as ints: whole numbers only (``0.5`` or ``'a'`` is an error, not a rounded board)."""
    try:
        return tuple(operator.index(x) for x in board)  # type: ignore[attr-defined]
    except TypeError:
        raise InvalidPositionError(f"a position is 26 whole numbers (signed checker counts), got {board!r}") from None


def _count(n: object, where: object) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise InvalidPositionError(f"checker count {n!r} is not a whole number >= 0 in {where!r}")
    return int(n)


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
    if mine == 0 and theirs == 0:
        raise InvalidPositionError(f"a position has checkers on the board (both sides cannot be off): {b!r}")
    if mine > CHECKERS or theirs > CHECKERS:
        raise InvalidPositionError(
            f"more than 15 checkers a side ({mine} and {theirs}) in {b!r}"
        )
