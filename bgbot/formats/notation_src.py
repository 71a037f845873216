"""Text formats: gnubg Position/Match ID, XGID, FIBS board, ASCII board, move notation.

Every parser here raises a :class:`~bgbot.errors.BgbotError` subclass whose
message quotes the input (long input is truncated, see :func:`quote_input`);
no other exception escapes for bad text.  Every position returned is a
:class:`~bgbot.position.Position` **from the view of the side on roll** unless
the function says otherwise (:func:`parse_fibs_board` returns the view of the
player the board is addressed to).

Formats, as implemented (and checked against the reference data and docs):

* **gnubg Position ID** (14 base64 characters, an 80-bit key read least
  significant bit first).  The key lists first the player *not* on roll, then
  the player on roll, each from its own ace point to its bar: one ``1`` per
  checker and a ``0`` after every point.  (gnubg's manual words it the other
  way round; its code and the reference data put the opponent first.)
* **gnubg Match ID** (12 base64 characters: the manual's 66 bits plus a 67th,
  "Jacoby rule not in use", that current gnubg writes).  The dice are written
  higher die first, as gnubg 1.07 does.
* **XGID** ``XGID=board:cube:cubepos:turn:dice:score1:score2:rules:length:maxcube``;
  the board is from the bottom player's view (upper case), who is player 0.
* **FIBS board** (``board:...`` with 52 colon-separated fields), read the way
  gnubg's ``external`` player reads it ("turn" names the side on roll, also
  while its double is pending); O is player 0, X is player 1.
* **Moves**: ``24/18 13/11``, ``bar/22*``, ``6/off``, ``8/5(2)``, ``13/7*/5``.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from bgbot.errors import (
    AmbiguousMoveError,
    IllegalMoveError,
    InvalidIdError,
    InvalidMoveError,
    InvalidPositionError,
)
from bgbot.matchstate import GAME_OVER, GAME_PLAYING, MatchState
from bgbot.position import CHECKERS, Position

if TYPE_CHECKING:
    from bgbot.movegen import Move

__all__ = [
    "FibsBoard",
    "decode_match_id",
    "encode_match_id",
    "format_fibs_board",
    "format_move",
    "format_xgid",
    "gnubg_position_id",
    "parse_fibs_board",
    "parse_gnubg_position_id",
    "parse_move",
    "parse_position",
    "parse_position_and_state",
    "parse_xgid",
    "quote_input",
    "render_board",
]

QUOTE_LIMIT = 80  # characters of user input repeated in an error message
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64_SET = frozenset(_B64)
_INT_RE = re.compile(r"[+-]?[0-9]{1,7}")


def quote_input(text: object) -> str:
    """``repr(text)``, truncated to :data:`QUOTE_LIMIT` characters for long strings."""
    if isinstance(text, str) and len(text) > QUOTE_LIMIT:
        return f"{text[:QUOTE_LIMIT]!r}... ({len(text)} characters)"
    return repr(text)


def _require_str(text: object, what: str) -> str:
    if not isinstance(text, str):
        raise InvalidIdError(f"{what} must be text, got {quote_input(text)}")
    return text


def _small_int(field: str, what: str, text: str) -> int:
    """An integer field of an ID; bounded length so that ``int`` never sees huge input."""
    f = field.strip()
    if not _INT_RE.fullmatch(f):
        raise InvalidIdError(f"{what} {quote_input(field)} is not an integer in {quote_input(text)}")
    return int(f)


# ---------------------------------------------------------------------------
# gnubg Position ID
# ---------------------------------------------------------------------------


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


def parse_gnubg_position_id(text: str) -> Position:
    """Parse a gnubg Position ID; the position is from the side on roll's view.

    Raises :class:`~bgbot.errors.InvalidIdError` for a wrong length, characters
    outside base64, non-zero padding bits, a key that needs more than 80 bits
    or has stray bits after the last point, more than 15 checkers a side, a
    point held by both sides, or both sides on the bar against closed boards.
    """
    _require_str(text, "a gnubg Position ID")
    t = text.strip()
    q = quote_input(text)
    if len(t) != 14:
        raise InvalidIdError(f"a gnubg Position ID has 14 characters, got {len(t)}: {q}")
    if not set(t) <= _B64_SET:
        bad = sorted(set(t) - _B64_SET)
        raise InvalidIdError(f"characters {''.join(bad)!r} are not base64 in gnubg Position ID {q}")
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


# ---------------------------------------------------------------------------
# gnubg Match ID
# ---------------------------------------------------------------------------

# (field, width) in key order, least significant bit first
_MATCH_FIELDS = (
    ("cube", 4),
    ("owner", 2),
    ("on_roll", 1),
    ("crawford", 1),
    ("game_state", 3),
    ("turn", 1),
    ("doubled", 1),
    ("resign", 2),
    ("die0", 3),
    ("die1", 3),
    ("length", 15),
    ("score0", 15),
    ("score1", 15),
    ("no_jacoby", 1),
)
_MATCH_BITS = sum(w for _, w in _MATCH_FIELDS)  # 67


def encode_match_id(state: MatchState) -> str:
    """gnubg's 12-character Match ID for ``state`` (players are gnubg's 0 and 1).

    Not carried: ``max_cube`` and ``beaver``.  The dice are written higher
    first, like gnubg 1.07.

    >>> encode_match_id(MatchState(match_length=9, score=(2, 4), cube_value=2, cube_owner=0,
    ...                            on_roll=1, dice=(5, 2), jacoby=True))
    'QYkqASAAIAAA'
    """
    dice = sorted(state.dice, reverse=True) if state.dice else (0, 0)
    values = {
        "cube": state.cube_value.bit_length() - 1,
        "owner": 3 if state.cube_owner == -1 else state.cube_owner,
        "on_roll": state.on_roll,
        "crawford": int(state.crawford),
        "game_state": state.game_state,
        "turn": state.turn,
        "doubled": int(state.doubled),
        "resign": state.resign,
        "die0": dice[0],
        "die1": dice[1],
        "length": state.match_length,
        "score0": state.score[0],
        "score1": state.score[1],
        "no_jacoby": int(not state.jacoby),
    }
    key = 0
    shift = 0
    for name, width in _MATCH_FIELDS:
        key |= int(values[name]) << shift  # type: ignore[arg-type]
        shift += width
    return base64.b64encode(key.to_bytes(9, "little")).decode("ascii")


def decode_match_id(text: str) -> MatchState:
    """Parse gnubg's 12-character Match ID into a :class:`~bgbot.matchstate.MatchState`.

    Raises :class:`~bgbot.errors.InvalidIdError` for a wrong length, non-base64
    characters, bits set beyond bit 67, a cube owner code of 2, dice above 6
    or only one die set, an unknown game state, or a state that breaks the
    rules checked by :class:`~bgbot.matchstate.MatchState`.
    """
    _require_str(text, "a gnubg Match ID")
    t = text.strip()
    q = quote_input(text)
    if len(t) != 12:
        raise InvalidIdError(f"a gnubg Match ID has 12 characters, got {len(t)}: {q}")
    if not set(t) <= _B64_SET:
        bad = sorted(set(t) - _B64_SET)
        raise InvalidIdError(f"characters {''.join(bad)!r} are not base64 in gnubg Match ID {q}")
    try:
        raw = base64.b64decode(t, validate=True)
    except (binascii.Error, ValueError) as exc:  # pragma: no cover - the checks above catch it
        raise InvalidIdError(f"gnubg Match ID {q} is not base64: {exc}") from None
    key = int.from_bytes(raw, "little")
    if key >> _MATCH_BITS:
        raise InvalidIdError(f"gnubg Match ID {q} has bits set beyond bit {_MATCH_BITS}")
    v: dict[str, int] = {}
    shift = 0
    for name, width in _MATCH_FIELDS:
        v[name] = key >> shift & ((1 << width) - 1)
        shift += width
    if v["owner"] == 2:
        raise InvalidIdError(f"cube owner code 2 is undefined in gnubg Match ID {q}")
    if v["die0"] > 6 or v["die1"] > 6 or (v["die0"] == 0) != (v["die1"] == 0):
        raise InvalidIdError(f"dice {v['die0']}{v['die1']} are not a roll in gnubg Match ID {q}")
    if v["game_state"] > 4:
        raise InvalidIdError(f"game state {v['game_state']} is undefined in gnubg Match ID {q}")
    try:
        return MatchState(
            match_length=v["length"],
            score=(v["score0"], v["score1"]),
            cube_value=1 << v["cube"],
            cube_owner=-1 if v["owner"] == 3 else v["owner"],
            on_roll=v["on_roll"],
            turn=v["turn"],
            doubled=bool(v["doubled"]),
            dice=(v["die0"], v["die1"]) if v["die0"] else None,
            crawford=bool(v["crawford"]),
            jacoby=not v["no_jacoby"],
            game_state=v["game_state"],
            resign=v["resign"],
        )
    except InvalidIdError as exc:
        raise InvalidIdError(f"gnubg Match ID {q}: {exc}") from None


# ---------------------------------------------------------------------------
# XGID
# ---------------------------------------------------------------------------

_XG_RE = re.compile(r"[-A-Oa-o]{26}")


def _xg_char(n: int, upper: bool) -> str:
    if n == 0:
        return "-"
    return chr((ord("A") if upper else ord("a")) + n - 1)


def _with_fields(state: MatchState | None, fields: dict[str, object]) -> MatchState:
    st = state if state is not None else MatchState()
    if not fields:
        return st
    if "on_roll" in fields or "doubled" in fields:
        # let MatchState re-derive whose decision it is unless the caller says
        fields.setdefault("turn", None)
    return replace(st, **fields)  # type: ignore[arg-type]


def format_xgid(pos: Position, state: MatchState | None = None, **fields: object) -> str:
    """The XGID of ``pos`` (seen from ``state.on_roll``) with ``state`` (default: money, centred cube).

    Keyword ``fields`` override attributes of ``state`` (``dice=(3, 1)``,
    ``cube_value=2``...).  Player 0 is the bottom player.  Not carried: game
    state, resignation, and the Jacoby flag in a match.

    >>> format_xgid(Position.start())
    'XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10'
    """
    st = _with_fields(state, dict(fields))
    bottom = pos if st.on_roll == 0 else pos.swap()
    b = bottom.board
    chars = [_xg_char(max(-b[0], 0), upper=False)]
    for i in range(1, 25):
        chars.append(_xg_char(b[i], upper=True) if b[i] >= 0 else _xg_char(-b[i], upper=False))
    chars.append(_xg_char(max(b[25], 0), upper=True))
    cube_pos = {-1: 0, 0: 1, 1: -1}[st.cube_owner]
    turn = 1 if st.on_roll == 0 else -1
    if st.doubled:
        dice = "D"
    elif st.dice is None:
        dice = "00"
    else:
        dice = f"{st.dice[0]}{st.dice[1]}"
    rules = int(st.crawford) if st.match_length else int(st.jacoby) + 2 * int(st.beaver)
    return (
        f"XGID={''.join(chars)}:{st.cube_value.bit_length() - 1}:{cube_pos}:{turn}:{dice}:"
        f"{st.score[0]}:{st.score[1]}:{rules}:{st.match_length}:{st.max_cube.bit_length() - 1}"
    )


def parse_xgid(text: str) -> tuple[Position, MatchState]:
    """Parse an XGID (with or without ``XGID=``).

    Returns the position **from the view of the side on roll** (the doubler
    when the dice field is ``D``) and the state, player 0 being the bottom
    player.  The max-cube field may be missing (older XGIDs), which gives the
    default 1024.  Beaver (``B``) and raccoon (``R``) dice codes are rejected.
    """
    _require_str(text, "an XGID")
    t = text.strip()
    q = quote_input(text)
    body = t[5:] if t[:5].upper() == "XGID=" else t
    fields = body.split(":")
    if len(fields) not in (9, 10):
        raise InvalidIdError(f"an XGID has 9 or 10 colon-separated fields, got {len(fields)}: {q}")
    board_s = fields[0].strip()
    if not _XG_RE.fullmatch(board_s):
        raise InvalidIdError(
            f"the board of an XGID is 26 characters of '-', 'A'-'O' and 'a'-'o', got {board_s!r} in {q}"
        )
    if board_s[0].isupper() or board_s[25].islower():
        raise InvalidIdError(
            f"XGID board {board_s!r} puts a checker on the wrong bar (first character is the top "
            f"player's bar, last the bottom player's) in {q}"
        )
    b = [0] * 26
    for i, c in enumerate(board_s):
        if c != "-":
            n = ord(c.lower()) - ord("a") + 1
            b[i] = n if c.isupper() else -n
    cube_exp = _small_int(fields[1], "cube", text)
    cube_pos = _small_int(fields[2], "cube position", text)
    turn = _small_int(fields[3], "turn", text)
    dice_f = fields[4].strip()
    s1 = _small_int(fields[5], "score", text)
    s2 = _small_int(fields[6], "score", text)
    rules = _small_int(fields[7], "Crawford/Jacoby field", text)
    length = _small_int(fields[8], "match length", text)
    max_exp = _small_int(fields[9], "max cube", text) if len(fields) == 10 else 10
    if not 0 <= cube_exp <= 15 or not 0 <= max_exp <= 15:
        raise InvalidIdError(f"cube exponents must be 0..15, got {cube_exp} and {max_exp} in {q}")
    if cube_pos not in (-1, 0, 1):
        raise InvalidIdError(f"cube position must be -1, 0 or 1, got {cube_pos} in {q}")
    if turn not in (-1, 1):
        raise InvalidIdError(f"turn must be 1 (bottom) or -1 (top), got {turn} in {q}")
    doubled = False
    dice: tuple[int, int] | None = None
    if dice_f == "D":
        doubled = True
    elif re.fullmatch(r"[1-6]{2}", dice_f):
        dice = (int(dice_f[0]), int(dice_f[1]))
    elif dice_f != "00":
        raise InvalidIdError(
            f"dice must be '00', two digits 1-6 or 'D' (beavers and raccoons are not supported), "
            f"got {dice_f!r} in {q}"
        )
    if length < 0:
        raise InvalidIdError(f"match length must be >= 0, got {length} in {q}")
    if length and rules not in (0, 1):
        raise InvalidIdError(f"in a match the Crawford field must be 0 or 1, got {rules} in {q}")
    if not length and rules not in (0, 1, 2, 3):
        raise InvalidIdError(f"in a money game the Jacoby/beaver field must be 0..3, got {rules} in {q}")
    try:
        bottom = Position(b)
        on_roll = 0 if turn == 1 else 1
        state = MatchState(
            match_length=length,
            score=(s1, s2),
            cube_value=1 << cube_exp,
            cube_owner={0: -1, 1: 0, -1: 1}[cube_pos],
            on_roll=on_roll,
            doubled=doubled,
            dice=dice,
            crawford=bool(length and rules == 1),
            jacoby=bool(not length and rules & 1),
            beaver=bool(not length and rules & 2),
            max_cube=1 << max_exp,
        )
    except (InvalidIdError, InvalidPositionError) as exc:
        raise InvalidIdError(f"XGID {q}: {exc}") from None
    return (bottom if on_roll == 0 else bottom.swap()), state


# ---------------------------------------------------------------------------
# FIBS board
# ---------------------------------------------------------------------------

_FIBS_FIELDS = 52  # after "board:"


@dataclass(frozen=True)
class FibsBoard:
    """The fields of a FIBS ``board:`` line, as written (raw numbers, the addressee's side first).

    ``board`` holds the 26 raw numbers (O positive, X negative).  ``turn`` is
    the colour of the side on roll (+1 O, -1 X, 0 game over), which stays the
    doubler's while a double is pending; ``colour`` and ``direction`` are the
    addressee's.  ``home``, ``bar``, the ``on_home`` and
    ``on_bar`` counts, ``can_move``, ``forced_move`` and ``redoubles`` are kept
    as read; the position is taken from ``board`` alone, as gnubg does.
    """

    player: str
    opponent: str
    match_length: int
    player_score: int
    opponent_score: int
    board: tuple[int, ...]
    turn: int
    player_dice: tuple[int, int]
    opponent_dice: tuple[int, int]
    cube: int
    player_may_double: bool
    opponent_may_double: bool
    was_doubled: int
    colour: int
    direction: int
    home: int
    bar: int
    player_on_home: int
    opponent_on_home: int
    player_on_bar: int
    opponent_on_bar: int
    can_move: int
    forced_move: int
    did_crawford: int
    redoubles: int

    @property
    def you(self) -> int:
        """The addressee as an absolute player: 0 for O (colour +1), 1 for X."""
        return 0 if self.colour > 0 else 1

    def _on_roll_and_doubled(self) -> tuple[int, bool]:
        on_roll = self.you if self.turn == 0 else 0 if self.turn > 0 else 1
        dice = self.player_dice if on_roll == self.you else self.opponent_dice
        no_flags = not (self.player_may_double or self.opponent_may_double)
        return on_roll, self.turn != 0 and (bool(self.was_doubled) or (no_flags and not any(dice)))

    @property
    def is_your_turn(self) -> bool:
        """True when the addressee must act (roll/double, move, or answer a double)."""
        on_roll, doubled = self._on_roll_and_doubled()
        return self.turn != 0 and (on_roll != self.you if doubled else on_roll == self.you)

    def to_match_state(self) -> MatchState:
        """The :class:`~bgbot.matchstate.MatchState` of this board (O = player 0, X = player 1).

        Read the way gnubg's external player reads it: the side on roll is the
        one "turn" names (player ``you`` when the game is over); a double is
        pending when "was doubled" is set, or when both may-double flags are 0
        before the roll (how FIBS shows the doubler its own double).  Match
        length 9999 (unlimited, FIBS) or 0 (gnubg) is a money game.  The cube owner comes from the
        may-double flags (equal flags mean centred).  The Crawford game is a
        game where a player is 1-away and neither the "forced move" nor the
        "did Crawford" field is set.
        """
        you, opp = self.you, 1 - self.you
        length = 0 if self.match_length in (0, 9999) else self.match_length
        score = [0, 0]
        score[you], score[opp] = self.player_score, self.opponent_score
        on_roll, doubled = self._on_roll_and_doubled()
        dice_raw = self.player_dice if on_roll == you else self.opponent_dice
        dice = dice_raw if dice_raw[0] and dice_raw[1] and not doubled else None
        owner = -1  # equal flags: centred (FIBS sets both in the Crawford game too)
        if self.player_may_double != self.opponent_may_double:
            owner = you if self.player_may_double else opp
        crawford = bool(
            length and (length - 1) in score and not (self.forced_move or self.did_crawford)
        )
        return MatchState(
            match_length=length,
            score=(score[0], score[1]),
            cube_value=self.cube,
            cube_owner=owner,
            on_roll=on_roll,
            doubled=doubled,
            dice=dice,
            crawford=crawford,
            game_state=GAME_OVER if self.turn == 0 else GAME_PLAYING,
        )


def _fibs_name(name: str) -> str:
    cleaned = re.sub(r"[:\s]", "_", name)
    return cleaned or "_"


def format_fibs_board(
    pos: Position,
    state: MatchState | None = None,
    *,
    player: str = "You",
    opponent: str = "bgbot",
    you: int | None = None,
    can_move: int | None = None,
    redoubles: int = 0,
) -> str:
    """A FIBS ``board:`` line for ``pos`` (seen from ``state.on_roll``) addressed to player ``you``.

    ``you`` (absolute, 0 or 1) defaults to the player who must act
    (``state.turn``): with a pending double that is the player who must take
    or drop, and the line has "was doubled" set.  The "turn" field always
    names the side on roll (the doubler while its double is pending): gnubg's
    external player evaluates a take from the side "turn" names, and answers
    nonsense otherwise (checked against gnubg 1.07).  Player 0 is O (colour
    +1, moving from board index 24 to 1), player 1 is X.  A money game is
    written as match length 9999.  In the Crawford game both may-double flags
    are 1 (as FIBS writes them); after it, "did Crawford" is 1.  Addressed to
    the doubler while its double is pending, both may-double flags are 0.
    ``can_move`` defaults to the number of checker steps the addressee can
    play with the dice (0 before the roll).
    """
    st = state if state is not None else MatchState()
    if st.match_length == 9999:
        raise InvalidIdError("a 9999-point match cannot be written as a FIBS board: 9999 means unlimited")
    addressee = st.turn if you is None else you
    if addressee not in (0, 1):
        raise InvalidIdError(f"the addressee must be player 0 or 1, got {you!r}")
    other = 1 - addressee
    o_view = pos if st.on_roll == 0 else pos.swap()
    raw = o_view.board  # O's view is exactly FIBS's numbering (O moves 24 -> 1)
    mine_view = pos if addressee == st.on_roll else pos.swap()
    colour, direction = (1, -1) if addressee == 0 else (-1, 1)
    home = 0 if direction < 0 else 25
    turn = 0 if st.game_state != GAME_PLAYING else 1 if st.on_roll == 0 else -1
    my_dice = st.dice if st.dice and addressee == st.on_roll else (0, 0)
    opp_dice = st.dice if st.dice and other == st.on_roll else (0, 0)
    if st.crawford:
        may = (1, 1)
    elif st.doubled and addressee == st.on_roll:
        may = (0, 0)  # FIBS: the doubler sees both flags cleared while the double is pending
    else:
        may = (int(st.cube_owner in (-1, addressee)), int(st.cube_owner in (-1, other)))
    was_doubled = int(st.doubled and addressee != st.on_roll)
    my_off, opp_off = mine_view.off()
    if can_move is None:
        can_move = 0
        if st.dice and addressee == st.on_roll and not st.doubled:
            from bgbot.movegen import legal_moves

            can_move = max(len(m.steps) for m in legal_moves(mine_view, st.dice))
    length = st.match_length or 9999
    did_crawford = int(bool(st.match_length) and (st.match_length - 1) in st.score and not st.crawford)
    numbers: list[int] = [
        length,
        st.score[addressee],
        st.score[other],
        *raw,
        turn,
        *my_dice,
        *opp_dice,
        st.cube_value,
        *may,
        was_doubled,
        colour,
        direction,
        home,
        25 - home,
        my_off,
        opp_off,
        mine_view[25],
        -mine_view[0],
        can_move,
        0,
        did_crawford,
        redoubles,
    ]
    return f"board:{_fibs_name(player)}:{_fibs_name(opponent)}:" + ":".join(str(n) for n in numbers)


def parse_fibs_board(text: str) -> tuple[Position, FibsBoard]:
    """Parse a FIBS ``board:`` line.

    The position is **from the view of the player the board is addressed to**
    (the first name, "You" on FIBS), whoever is to act; use
    :func:`parse_position_and_state` for the side-on-roll view.  Points are
    read with the addressee's ``colour`` and ``direction``; bar counts are
    taken as absolute values, as gnubg does.
    """
    _require_str(text, "a FIBS board")
    t = text.strip()
    q = quote_input(text)
    if not t.startswith("board:"):
        raise InvalidIdError(f"a FIBS board starts with 'board:', got {q}")
    fields = t[6:].split(":")
    if len(fields) != _FIBS_FIELDS:
        raise InvalidIdError(
            f"a FIBS board has {_FIBS_FIELDS} fields after 'board:', got {len(fields)}: {q}"
        )
    player, opponent = fields[0].strip(), fields[1].strip()
    if not player or not opponent:
        raise InvalidIdError(f"empty player name in FIBS board {q}")
    n = [_small_int(f, "FIBS field", text) for f in fields[2:]]
    (length, my_score, opp_score), raw = n[0:3], tuple(n[3:29])
    (turn, d1, d2, o1, o2, cube, may, opp_may, was_doubled, colour, direction, home, bar,
     my_home, opp_home, my_bar, opp_bar, can_move, forced, did_crawford, redoubles) = n[29:50]

    def check(ok: bool, what: str) -> None:
        if not ok:
            raise InvalidIdError(f"{what} in FIBS board {q}")

    # FIBS writes 9999 for unlimited (money) play, gnubg's external player writes 0
    check(length in (0, 9999) or 1 <= length <= 2**15 - 1, f"match length {length} is not 0..32767 or 9999")
    check(my_score >= 0 and opp_score >= 0, f"negative score {my_score}-{opp_score}")
    check(all(abs(v) <= CHECKERS for v in raw), "a board value is beyond 15 checkers")
    check(turn in (-1, 0, 1), f"turn {turn} is not -1, 0 or 1")
    check(all(0 <= d <= 6 for d in (d1, d2, o1, o2)), f"dice {d1}{d2}/{o1}{o2} are not 0..6")
    check(1 <= cube <= 2**15 and cube & (cube - 1) == 0, f"cube {cube} is not a power of two")
    check(may in (0, 1) and opp_may in (0, 1), f"may-double flags {may}, {opp_may} are not 0/1")
    check(was_doubled in (-1, 0, 1), f"was-doubled {was_doubled} is not -1, 0 or 1")
    check(colour in (-1, 1) and direction in (-1, 1), f"colour {colour} / direction {direction} not +-1")
    check(home in (0, 25) and bar in (0, 25), f"home {home} / bar {bar} are not 0 or 25")
    counts = (my_home, opp_home, my_bar, opp_bar)
    check(all(0 <= c <= CHECKERS for c in counts), f"checker counts {counts} are not 0..15")
    check(0 <= can_move <= 4, f"can-move {can_move} is not 0..4")
    check(min(forced, did_crawford, redoubles) >= 0, "negative crawford/redouble field")

    b = [0] * 26
    for p in range(1, 25):
        b[p] = (raw[p] if direction < 0 else raw[25 - p]) * colour
    mine_bar, theirs_bar = (raw[25], raw[0]) if direction < 0 else (raw[0], raw[25])
    b[25] = abs(mine_bar)
    b[0] = -abs(theirs_bar)
    try:
        pos = Position(b)
    except InvalidPositionError as exc:
        raise InvalidIdError(f"FIBS board {q}: {exc}") from None
    fb = FibsBoard(
        player=player,
        opponent=opponent,
        match_length=length,
        player_score=my_score,
        opponent_score=opp_score,
        board=raw,
        turn=turn,
        player_dice=(d1, d2),
        opponent_dice=(o1, o2),
        cube=cube,
        player_may_double=bool(may),
        opponent_may_double=bool(opp_may),
        was_doubled=was_doubled,
        colour=colour,
        direction=direction,
        home=home,
        bar=bar,
        player_on_home=my_home,
        opponent_on_home=opp_home,
        player_on_bar=my_bar,
        opponent_on_bar=opp_bar,
        can_move=can_move,
        forced_move=forced,
        did_crawford=did_crawford,
        redoubles=redoubles,
    )
    return pos, fb


# ---------------------------------------------------------------------------
# any format
# ---------------------------------------------------------------------------


def parse_position_and_state(text: str) -> tuple[Position, MatchState | None]:
    """Parse a gnubg Position ID, ``PositionID:MatchID``, an XGID or a FIBS ``board:`` line.

    The position is **from the view of the side on roll** (``state.on_roll``;
    with a pending double that is the doubler).  The state is ``None`` for a
    bare Position ID.
    """
    _require_str(text, "a position")
    t = text.strip()
    try:
        if t.startswith("board:"):
            pos, fb = parse_fibs_board(text)
            state = fb.to_match_state()
            return (pos if state.on_roll == fb.you else pos.swap()), state
        if t[:5].upper() == "XGID=":
            return parse_xgid(text)
        parts = t.split(":")
        if len(parts) == 2 and len(parts[0].strip()) == 14:
            state = decode_match_id(parts[1])
            return parse_gnubg_position_id(parts[0]), state
        if len(parts) in (9, 10) and len(parts[0].strip()) == 26:
            return parse_xgid(text)
        if len(parts) == 1 and len(t) == 14:
            return parse_gnubg_position_id(text), None
    except InvalidIdError as exc:
        if quote_input(text) in str(exc):
            raise
        raise InvalidIdError(f"{exc} (in {quote_input(text)})") from None
    raise InvalidIdError(
        "expected a gnubg Position ID, PositionID:MatchID, an XGID or a FIBS 'board:' line, "
        f"got {quote_input(text)}"
    )


def parse_position(text: str) -> Position:
    """Like :func:`parse_position_and_state` without the state: the side on roll's view."""
    return parse_position_and_state(text)[0]


# ---------------------------------------------------------------------------
# ASCII board
# ---------------------------------------------------------------------------


def _cell(mine: int, theirs: int, row: int) -> str:
    """One 3-character cell of a point column; ``row`` 0 is the edge of the board."""
    n, ch = (mine, "X") if mine else (theirs, "O")
    if row < 4:
        return f" {ch} " if n > row else "   "
    if n < 5:
        return "   "
    return f" {ch} " if n == 5 else f"{n:>2} "


def render_board(pos: Position, state: MatchState | None = None) -> str:
    """An ASCII board like gnubg's text board, from the side on roll's view.

    X is the side on roll (moving from its 24-point, top left, to its 1-point,
    bottom right), O the opponent; a fifth row shows counts above 5 as
    numbers.  Under the board: both pip counts, the gnubg Position ID, the
    Match ID when ``state`` is given, and the XGID.
    """
    b = pos.board
    mine = [max(b[p], 0) for p in range(26)]
    theirs = [max(-b[p], 0) for p in range(26)]
    off_x, off_o = pos.off()
    lines = [" +13-14-15-16-17-18------19-20-21-22-23-24-+"]

    def row(points_left: Sequence[int], points_right: Sequence[int], bar: str, off: str, r: int) -> str:
        left = "".join(_cell(mine[p], theirs[p], r) for p in points_left)
        right = "".join(_cell(mine[p], theirs[p], r) for p in points_right)
        return f" |{left}|{bar}|{right}| {off}"

    def off_cells(n: int, ch: str, r: int) -> str:
        return "".join(ch if n > 5 * c + r else " " for c in range(3))

    top_l, top_r = range(13, 19), range(19, 25)
    bot_l, bot_r = range(12, 6, -1), range(6, 0, -1)
    for r in range(5):
        bar = _cell(0, theirs[0], r)  # O's checkers on its bar sit in the top half
        lines.append(row(top_l, top_r, bar, off_cells(off_o, "O", r), r))
    lines.append("v|                  |BAR|                  |")
    for r in range(4, -1, -1):
        bar = _cell(mine[25], 0, r)
        lines.append(row(bot_l, bot_r, bar, off_cells(off_x, "X", r), r))
    lines.append(" +12-11-10--9--8--7-------6--5--4--3--2--1-+")
    pips_x, pips_o = pos.pips()
    lines.append(f" Pips: X {pips_x}, O {pips_o} (X on roll)  Off: X {off_x}, O {off_o}")
    if state is not None:
        me, opp = state.on_roll, 1 - state.on_roll
        owner = {"center": "centred", "me": "owned by X", "opp": "owned by O"}[state.cube_owner_relative()]
        info = f" Cube: {state.cube_value} ({owner})"
        if state.match_length:
            info += f"  Score: X {state.score[me]}, O {state.score[opp]} ({state.match_length}-point match)"
            if state.crawford:
                info += "  Crawford game"
        else:
            info += "  Money game" + ("  Jacoby" if state.jacoby else "")
        lines.append(info)
        if state.doubled:
            lines.append(" X doubles, O to take or pass")
        elif state.dice:
            lines.append(f" Rolled {state.dice[0]}{state.dice[1]}")
    lines.append(f" Position ID: {gnubg_position_id(pos)}")
    if state is not None:
        lines.append(f" Match ID   : {encode_match_id(state)}")
    lines.append(f" {format_xgid(pos, state)}")
    return "\n".join(line.rstrip() for line in lines) + "\n"


# ---------------------------------------------------------------------------
# move notation
# ---------------------------------------------------------------------------

Step = tuple[int, int, bool]


def _point_text(p: int) -> str:
    return "bar" if p == 25 else "off" if p == 0 else str(p)


def format_move(steps: Iterable[Step]) -> str:
    """Standard notation for a sequence of ``(from, to, hit)`` steps (mover's numbering).

    A checker moving on is written as one path (``13/5``); points where it hit
    on the way stay in the path (``13/7*/5``).  Identical paths are grouped
    (``8/5(2)``), highest starting point first.  The empty move is ``""``.

    >>> format_move([(8, 5, False), (6, 5, False)])
    '8/5 6/5'
    >>> format_move([(25, 22, True), (13, 7, False)])
    'bar/22* 13/7'
    """
    chains: list[list[int]] = []
    hits: list[set[int]] = []
    for src, dst, hit in steps:
        for k in range(len(chains) - 1, -1, -1):
            if chains[k][-1] == src:
                chains[k].append(dst)
                break
        else:
            k = len(chains)
            chains.append([src, dst])
            hits.append(set())
        if hit:
            hits[k].add(dst)
    counts: dict[tuple[int, ...], int] = {}
    marked: dict[tuple[int, ...], set[int]] = {}
    for chain, hit_set in zip(chains, hits, strict=True):
        path = (chain[0], *(p for p in chain[1:-1] if p in hit_set), chain[-1])
        counts[path] = counts.get(path, 0) + 1
        marked.setdefault(path, set()).update(hit_set)
    parts = []
    for path in sorted(counts, key=lambda p: (-p[0], -p[-1])):
        text = "/".join(_point_text(p) + ("*" if i and p in marked[path] else "") for i, p in enumerate(path))
        parts.append(text + (f"({counts[path]})" if counts[path] > 1 else ""))
    return " ".join(parts)


_POINT = r"(?:bar|b|off|o|\d{1,3})"
_PATH_RE = re.compile(rf"({_POINT})((?:[/-]{_POINT}\*?)+)(?:\((\d{{1,3}})\))?")
_SEG_RE = re.compile(rf"[/-]({_POINT})(\*?)")


def _point_value(tok: str) -> int:
    if tok in ("bar", "b"):
        return 25
    if tok in ("off", "o"):
        return 0
    return int(tok)


class _Where:
    """The position and dice for an error message, formatted only when an error is raised."""

    def __init__(self, pos: Position, d1: int, d2: int) -> None:
        self.pos, self.d1, self.d2 = pos, d1, d2

    def __str__(self) -> str:
        return f" (position {gnubg_position_id(self.pos)!r}, dice {self.d1}{self.d2})"


def _parse_move_text(text: str, where: object) -> tuple[list[tuple[int, ...]], set[int]]:
    """Checker paths (with repeats expanded) and the points marked ``*`` in move text."""
    s = text.strip().lower()
    s = re.sub(r"\s*([/\-(])\s*", r"\1", s)
    s = re.sub(r"\s+([)*])", r"\1", s)
    paths: list[tuple[int, ...]] = []
    marks: set[int] = set()
    for token in (tok for tok in re.split(r"[\s,]+", s) if tok):
        m = _PATH_RE.fullmatch(token)
        if not m:
            raise InvalidMoveError(f"cannot read {token!r} as a checker move in {quote_input(text)}{where}")
        points = [_point_value(m.group(1))]
        for seg in _SEG_RE.finditer(m.group(2)):
            points.append(_point_value(seg.group(1)))
            if seg.group(2):
                marks.add(points[-1])
        if points[0] == 0 or any(p == 25 for p in points[1:]):
            raise InvalidMoveError(
                f"a checker moves from the bar and to off, not the other way, in {quote_input(text)}{where}"
            )
        if any(p > 25 for p in points):
            raise InvalidMoveError(f"points are 1..24, 'bar' or 'off' in {quote_input(text)}{where}")
        count = int(m.group(3)) if m.group(3) else 1
        if count < 1:
            raise InvalidMoveError(f"a repeat count must be at least 1 in {quote_input(text)}{where}")
        if count > 4:
            raise IllegalMoveError(
                f"at most 4 checkers move in one turn, not {count}: {quote_input(text)}{where}"
            )
        paths.extend([tuple(points)] * count)
    return paths, marks


def _sim_step(b: list[int], src: int, d: int) -> tuple[list[int], int, bool] | None:
    """Move one checker ``src`` by die ``d`` under the rules, or None; the mover's view."""
    if b[src] <= 0 or (src != 25 and b[25] > 0):
        return None
    dst = src - d
    nb = list(b)
    if dst >= 1:
        if nb[dst] < -1:
            return None
        hit = nb[dst] == -1
        nb[src] -= 1
        if hit:
            nb[dst] = 1
            nb[0] -= 1
        else:
            nb[dst] += 1
        return nb, dst, hit
    if any(nb[i] > 0 for i in range(7, 26)):
        return None
    if dst < 0 and any(nb[i] > 0 for i in range(src + 1, 7)):
        return None
    nb[src] -= 1
    return nb, 0, False


def _simulate(
    board: Sequence[int], paths: Sequence[tuple[int, ...]], dice: tuple[int, ...]
) -> dict[tuple[int, ...], set[frozenset[int]]]:
    """Every final board (mover's view) reachable by playing ``paths`` with ``dice``, with its hits.

    Steps of different paths may interleave: with two checkers on the bar,
    ``bar/23(2)`` enters both before either moves on.
    """
    results: dict[tuple[int, ...], set[frozenset[int]]] = {}
    n = len(paths)
    nxt = [1] * n  # index in each path of the next point to reach
    cur = [p[0] for p in paths]  # where each path's checker stands now
    rest = list(dice)
    seen: set[tuple[object, ...]] = set()

    def walk(b: list[int], hits: frozenset[int]) -> None:
        # the board follows from where each checker stands and which blots were hit
        key = (tuple(nxt), tuple(cur), tuple(sorted(rest)), hits)
        if key in seen:
            return
        seen.add(key)
        done = True
        for k in range(n):
            path, j, c = paths[k], nxt[k], cur[k]
            if j == len(path):
                continue
            done = False
            # a path identical to an earlier one at the same progress gives the same boards
            if any(paths[e] == path and nxt[e] == j and cur[e] == c for e in range(k)):
                continue
            target = path[j]
            tried: set[int] = set()
            for i, d in enumerate(rest):
                if d in tried or (target and c - d < target):
                    continue
                tried.add(d)
                step = _sim_step(b, c, d)
                if step is None:
                    continue
                nb, dst, hit = step
                nxt[k], cur[k] = (j + 1 if dst == target else j), dst
                del rest[i]
                walk(nb, hits | {dst} if hit else hits)
                rest.insert(i, d)
                nxt[k], cur[k] = j, c
        if done:
            results.setdefault(tuple(b), set()).add(hits)

    walk(list(board), frozenset())
    return results


def parse_move(pos: Position, dice: object, text: str, *, legal: Sequence[Move] | None = None) -> Move:
    """The legal :class:`~bgbot.movegen.Move` that ``text`` means for ``dice`` in ``pos``.

    ``pos`` is from the side on roll's view (the steps use its numbering);
    ``Move.result`` is from the opponent's view.

    Accepts ``24/18 13/11``, ``bar/22*``, ``b/22``, ``25/22``, ``6/off``,
    ``6/0``, ``8/5(2)``, ``13/7*/5``, ``13/7/5``, ``13-7``, extra spaces, with
    or without ``*``; the empty text is the empty move (only when nothing can
    be played).  Paths may come in any order; each is played die by die
    through open points, hitting blots on the way, and the resulting position
    must be one of the legal results.  When the text fits several results,
    the ``*`` marks decide (a path written without ``*`` does not hit).

    ``legal`` may pass ``legal_moves(pos, dice)`` when the caller already has
    it, to save generating it again.

    Raises :class:`~bgbot.errors.InvalidMoveError` for unreadable text,
    :class:`~bgbot.errors.IllegalMoveError` when no legal move matches and
    :class:`~bgbot.errors.AmbiguousMoveError` when legal moves with different
    results match; messages quote the text, the Position ID and the dice.
    """
    from bgbot.movegen import legal_moves, parse_dice

    d1, d2 = parse_dice(dice)
    where = _Where(pos, d1, d2)
    if not isinstance(text, str):
        raise InvalidMoveError(f"a move must be text, got {quote_input(text)}{where}")
    paths, marks = _parse_move_text(text, where)
    if legal is None:
        legal = legal_moves(pos, (d1, d2))
    if not paths:
        if len(legal) == 1 and not legal[0].steps:
            return legal[0]
        raise IllegalMoveError(f"the empty move {quote_input(text)} is not legal: a play exists{where}")
    for path in paths:
        if any(a <= c for a, c in itertools.pairwise(path)):
            raise IllegalMoveError(
                f"checkers move towards the 1-point, not {path!r}: {quote_input(text)}{where}"
            )
    n_dice = 4 if d1 == d2 else 2
    if sum(len(p) - 1 for p in paths) > n_dice:
        raise IllegalMoveError(f"{quote_input(text)} needs more than the {n_dice} dice rolled{where}")
    by_result = {m.result: m for m in legal}
    sims = _simulate(pos.board, paths, (d1,) * 4 if d1 == d2 else (d1, d2))
    matched: dict[Position, set[frozenset[int]]] = {}
    for final, hit_sets in sims.items():
        # Move.result is from the opponent's view: swap the mover's final board
        result = Position([-x for x in reversed(final)], validate=False)
        if result in by_result:
            matched.setdefault(result, set()).update(hit_sets)
    if len(matched) > 1:
        marked = {r: h for r, h in matched.items() if frozenset(marks) in h}
        if len(marked) == 1:
            matched = marked
    if not matched:
        raise IllegalMoveError(f"{quote_input(text)} is not a legal play{where}")
    if len(matched) > 1:
        options = ", ".join(sorted(repr(format_move(by_result[r].steps)) for r in matched))
        raise AmbiguousMoveError(f"{quote_input(text)} could mean {options}{where}")
    return by_result[next(iter(matched))]

