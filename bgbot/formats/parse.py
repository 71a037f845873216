"""One entry point for position text in any format bgbot reads."""

from __future__ import annotations

from bgbot.errors import InvalidIdError, quote_input
from bgbot.formats.fibs import parse_fibs_board
from bgbot.formats.ids import decode_match_id, parse_xgid, require_str
from bgbot.rules.matchstate import MatchState
from bgbot.rules.position import Position, parse_gnubg_position_id


def parse_position_and_state(text: str) -> tuple[Position, MatchState | None]:
    """Parse a gnubg Position ID, ``PositionID:MatchID``, an XGID or a FIBS ``board:`` line.

    The position is **from the view of the side on roll** (``state.on_roll``;
    with a pending double that is the doubler).  The state is ``None`` for a
    bare Position ID.
    """
    require_str(text, "a position")
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

