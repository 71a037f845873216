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
from bgbot.rules.position import Position

__version__ = "0.1.0"

_LAZY = {
    "successors": "bgbot.rules.movegen",
    "successors_batch": "bgbot.rules.movegen",
    "legal_moves": "bgbot.rules.moves",
    "Move": "bgbot.rules.moves",
    "parse_move": "bgbot.rules.moves",
    "format_move": "bgbot.rules.moves",
    "parse_dice": "bgbot.rules.dice",
    "ROLLS": "bgbot.rules.dice",
    "flip": "bgbot.rules.position",
    "classify": "bgbot.rules.position",
    "PositionClass": "bgbot.rules.position",
    "Outcome": "bgbot.rules.position",
    "MatchState": "bgbot.rules.matchstate",
    "CubeState": "bgbot.rules.matchstate",
    "render_board": "bgbot.formats.board",
    "encode_match_id": "bgbot.formats.ids",
    "decode_match_id": "bgbot.formats.ids",
    "parse_xgid": "bgbot.formats.ids",
    "format_xgid": "bgbot.formats.ids",
    "parse_fibs_board": "bgbot.formats.fibs",
    "format_fibs_board": "bgbot.formats.fibs",
    "parse_position": "bgbot.formats.parse",
    "parse_position_and_state": "bgbot.formats.parse",
    "Engine": "bgbot.engine.api",
    "load_model": "bgbot.eval.models",
    "read_match": "bgbot.formats.records",
    "write_match": "bgbot.formats.records",
    "MatchRecord": "bgbot.formats.records",
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
