"""``bgbot ubgi``: bgbot as a UBGI engine on stdin/stdout (see :mod:`bgbot.serve.ubgi` and docs/api.md)."""

from __future__ import annotations

import argparse
import sys

from bgbot.errors import ascii_int


def _whole(text: str) -> int:
    try:
        return ascii_int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def _cmd_ubgi(args: argparse.Namespace) -> int:
    from bgbot.engine.api import Engine
    from bgbot.engine.search import check_ply
    from bgbot.serve.ubgi import serve_ubgi

    ply = check_ply(args.ply)
    cube_ply = check_ply(args.cube_ply) if args.cube_ply is not None else ply
    # the first ubgi command loads the engine; until then a controller can start many engines cheaply
    serve_ubgi(lambda: Engine.load(args.checkpoint), sys.stdin, sys.stdout, ply=ply, cube_ply=cube_ply)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``bgbot ubgi``."""
    s = sub.add_parser("ubgi", help="be a UBGI engine on stdin/stdout (ubgi, position, dice, go ...)")
    s.add_argument("--ply", type=_whole, default=1, help="checker-play ply (XG numbering; option Ply; default 1)")
    s.add_argument("--cube-ply", type=_whole, help="cube-decision ply (option CubePly; default --ply)")
    s.add_argument("--checkpoint", help="network file (default: $BGBOT_CHECKPOINT or the shipped model)")
    s.set_defaults(func=_cmd_ubgi)
