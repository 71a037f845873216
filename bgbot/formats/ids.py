"""gnubg's Match ID and the XGID: a position's match and cube state as text.

* **gnubg Match ID** (12 base64 characters: the manual's 66 bits plus a 67th,
  "Jacoby rule not in use", that current gnubg writes).  The dice are written
  higher die first, as gnubg 1.07 does.
* **XGID** ``XGID=board:cube:cubepos:turn:dice:score1:score2:rules:length:maxcube``;
  the board is from the bottom player's view (upper case), who is player 0.

Parsers raise :class:`~bgbot.errors.InvalidIdError` quoting the input; positions
returned are from the side on roll's view.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import replace

from bgbot.errors import InvalidIdError, InvalidPositionError, quote_input
from bgbot.rules.matchstate import MatchState
from bgbot.rules.position import Position, base64_id_text

_INT_RE = re.compile(r"[+-]?[0-9]{1,7}")


def require_str(text: object, what: str) -> str:
    """``text`` if it is a string, else :class:`~bgbot.errors.InvalidIdError` naming ``what``."""
    if not isinstance(text, str):
        raise InvalidIdError(f"{what} must be text, got {quote_input(text)}")
    return text


def small_int(field: str, what: str, text: str) -> int:
    """An integer field of an ID; bounded length so that ``int`` never sees huge input."""
    f = field.strip()
    if not _INT_RE.fullmatch(f):
        raise InvalidIdError(f"{what} {quote_input(field)} is not an integer in {quote_input(text)}")
    return int(f)


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
    """Parse gnubg's 12-character Match ID into a :class:`~bgbot.rules.matchstate.MatchState`.

    Raises :class:`~bgbot.errors.InvalidIdError` for a wrong length, non-base64
    characters, bits set beyond bit 67, a cube owner code of 2, dice above 6
    or only one die set, an unknown game state, or a state that breaks the
    rules checked by :class:`~bgbot.rules.matchstate.MatchState`.
    """
    t = base64_id_text(text, 12, "gnubg Match ID")
    q = quote_input(text)
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


# ---- XGID

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
    require_str(text, "an XGID")
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
    cube_exp = small_int(fields[1], "cube", text)
    cube_pos = small_int(fields[2], "cube position", text)
    turn = small_int(fields[3], "turn", text)
    dice_f = fields[4].strip()
    s1 = small_int(fields[5], "score", text)
    s2 = small_int(fields[6], "score", text)
    rules = small_int(fields[7], "Crawford/Jacoby field", text)
    length = small_int(fields[8], "match length", text)
    max_exp = small_int(fields[9], "max cube", text) if len(fields) == 10 else 10
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

