"""bgbot: a backgammon engine with a batched move generator, a TD(lambda) network and 1-3 ply search.

The everyday names are importable from here::

    import bgbot
    pos = bgbot.Position.from_id("4HPwATDgc/ABMA")
    bgbot.successors(pos, (3, 1))          # results, each from the opponent's view
    bgbot.Engine.load().best_move(pos, (3, 1), ply=2)

Heavy modules (numba, torch) load only when their names are first used, so
``import bgbot`` stays cheap and the rules engine never pulls in torch.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from bgbot.errors import (
    AmbiguousMoveError,
    BgbotError,
    CheckpointError,
    ConfigError,
    EngineError,
    IllegalMoveError,
    InvalidDiceError,
    InvalidIdError,
    InvalidMoveError,
    InvalidPositionError,
    ProtocolError,
)
from bgbot.position import Position

__version__ = "0.1.0"

_LAZY = {
    "successors": "bgbot.movegen",
    "successors_batch": "bgbot.movegen",
    "legal_moves": "bgbot.movegen",
    "Move": "bgbot.movegen",
    "parse_dice": "bgbot.movegen",
    "parse_move": "bgbot.notation",
    "format_move": "bgbot.notation",
    "render_board": "bgbot.notation",
    "encode_match_id": "bgbot.notation",
    "decode_match_id": "bgbot.notation",
    "parse_xgid": "bgbot.notation",
    "parse_position_and_state": "bgbot.notation",
    "MatchState": "bgbot.matchstate",
    "Engine": "bgbot.engine",
}

__all__ = [
    "AmbiguousMoveError",
    "BgbotError",
    "CheckpointError",
    "ConfigError",
    "EngineError",
    "IllegalMoveError",
    "InvalidDiceError",
    "InvalidIdError",
    "InvalidMoveError",
    "InvalidPositionError",
    "Position",
    "ProtocolError",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'bgbot' has no attribute {name!r}")
