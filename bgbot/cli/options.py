"""Command-line options several commands take (apart from ``main.py``, so that command modules can share them)."""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING

from bgbot.errors import ascii_int, quote_input

if TYPE_CHECKING:
    from bgbot.rules.matchstate import CubeState, MatchState


def whole(text: str) -> int:
    """An integer option (``type=``): ASCII digits and an optional sign only (``int`` would read ``'٢'`` as 2)."""
    try:
        return ascii_int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {quote_input(text)}") from None


def count(text: str) -> int:
    """A whole-number option that may not be negative (``type=``): a count, a size, a seed, a niceness."""
    value = whole(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {quote_input(text)}")
    return value


def positive_number(text: str) -> float:
    """A number option above 0 and finite (``type=``): a time, a threshold."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {quote_input(text)}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number: {quote_input(text)}")
    return value


def add_cube_options(s: argparse.ArgumentParser) -> None:
    """``--cube --owner --match --score --crawford --jacoby``: the cube and score, seen from the side on roll.

    Read with :func:`bgbot.engine.answers.resolve_cube_state`, over what the position's own text
    (XGID, Match ID, FIBS board) says.
    """
    s.add_argument("--cube", help="cube value (default 1, or the position's)")
    s.add_argument("--owner", help="me, opp or center, seen from the side on roll")
    s.add_argument("--match", help="match length (0 = money game)")
    s.add_argument("--score", help="points won so far, side on roll first, e.g. 2-4")
    s.add_argument("--crawford", action="store_true", help="this is the Crawford game")
    s.add_argument("--jacoby", action="store_true", help="Jacoby rule (money games)")


def cube_state_from_args(args: argparse.Namespace, state: MatchState | None) -> CubeState:
    """The cube and score from the side on roll: the position's own (XGID, Match ID, FIBS board), then the options
    of :func:`add_cube_options`."""
    from bgbot.engine.answers import resolve_cube_state

    return resolve_cube_state(state, cube=args.cube, owner=args.owner, match=args.match, score=args.score,
                              crawford=args.crawford, jacoby=args.jacoby)


def add_filter_option(s: argparse.ArgumentParser) -> None:
    """``--filter``: the move filter after 1-ply, read with :func:`bgbot.engine.search.parse_filters`."""
    s.add_argument(
        "--filter", default="normal",
        help="which plays a 2-/3-ply search looks at deeper: tiny (5 within 0.08), narrow (8, 0.12), normal "
        "(8, 0.16; default), large (16, 0.32), huge (20, 0.44) as gnubg names them, or KEEP:MARGIN",
    )
