"""The ASCII board, like gnubg's text board, with the IDs of the position under it."""

from __future__ import annotations

from collections.abc import Sequence

from bgbot.formats.ids import encode_match_id, format_xgid
from bgbot.rules.matchstate import MatchState
from bgbot.rules.position import Position, gnubg_position_id


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

