"""Game records: ``.mat`` (Jellyfish, as gnubg, XG and the pit export) and gnubg ``.sgf`` files.

The record types (:class:`RecordEntry`, :class:`GameRecord`, :class:`MatchRecord`), the replay
through the rules and the ``.mat`` writer live in :mod:`bgbot.formats.record_model`; the parsers in
:mod:`bgbot.formats.mat` and :mod:`bgbot.formats.sgf`.  This module is the one to import: it has
them all, and :func:`read_match` / :func:`write_match` pick the format from the file name.

Reading parses a file into raw actions (who did what, on which line), then replays every game
through the rules (:func:`~bgbot.rules.moves.parse_move` on the position reached, cube ownership,
the Crawford game, the result).  Every problem is one :class:`~bgbot.errors.RecordError` naming the
file and line and quoting it; an illegal move is a :class:`~bgbot.errors.RecordMoveError` naming
the game and the move.  Writing is atomic (temp file + rename), and what bgbot writes reads back as
the same :class:`MatchRecord`.
"""

from __future__ import annotations

from pathlib import Path

from bgbot import fileio
from bgbot.errors import RecordError
from bgbot.formats.mat import parse_mat
from bgbot.formats.record_model import (
    MAX_NAME,
    EntryKind,
    GameEnd,
    GameRecord,
    MatchRecord,
    PlayedGame,
    RawAction,
    RawGame,
    RawKind,
    RecordedGame,
    RecordEntry,
    format_game,
    format_mat,
    mat_name,
    match_from_games,
    record_error,
    replay,
    write_mat,
)
from bgbot.formats.sgf import format_sgf, parse_sgf

__all__ = [
    "FORMATS",
    "MAX_NAME",
    "MAX_RECORD_BYTES",
    "EntryKind",
    "GameEnd",
    "GameRecord",
    "MatchRecord",
    "PlayedGame",
    "RawAction",
    "RawGame",
    "RawKind",
    "RecordEntry",
    "RecordedGame",
    "format_game",
    "format_mat",
    "format_match",
    "mat_name",
    "match_from_games",
    "parse_match",
    "read_match",
    "record_error",
    "record_format",
    "replay",
    "write_mat",
    "write_match",
]


FORMATS = ("mat", "sgf")
# 8 MiB: about 50 times gnubg's SGF of a whole analysed match (tests/data/analyse/m01.sgf is 172 KB); the file is
# read no further than this, so an endless stream (a pipe, a device, a file still growing) fails at once
MAX_RECORD_BYTES = 8 * 1024 * 1024


def record_format(path: str | Path, fmt: str | None = None) -> str:
    """``'mat'`` or ``'sgf'``: ``fmt`` when given, else from the file's suffix (``.txt`` reads as ``.mat``)."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise RecordError(f"a record format is 'mat' or 'sgf', got {fmt!r}")
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix in (".mat", ".txt"):
        return "mat"
    if suffix == ".sgf":
        return "sgf"
    raise RecordError(f"cannot tell the record format of {str(path)!r}: name it .mat or .sgf (or say the format)")


def parse_match(text: str, fmt: str, source: str = "") -> MatchRecord:
    """Parse and replay record ``text`` of format ``fmt`` (``'mat'`` or ``'sgf'``); ``source`` names it in errors."""
    if fmt == "mat":
        return parse_mat(text, source)
    if fmt == "sgf":
        return parse_sgf(text, source)
    raise RecordError(f"a record format is 'mat' or 'sgf', got {fmt!r}")


def read_match(path: str | Path, fmt: str | None = None) -> MatchRecord:
    """Read a ``.mat`` or gnubg ``.sgf`` file into a replayed :class:`MatchRecord` (format from the suffix).

    A missing, unreadable, binary, corrupt or truncated file, one over
    :data:`MAX_RECORD_BYTES` (8 MiB, never read further), an unknown property
    or an illegal move is one :class:`~bgbot.errors.RecordError` naming the
    file (and the line).
    """
    p = Path(path)
    kind = record_format(p, fmt)
    try:
        with p.open("rb") as f:
            raw = f.read(MAX_RECORD_BYTES + 1)
    except OSError as exc:
        raise RecordError(f"cannot read the record {str(p)!r}: {exc.strerror or exc}") from None
    if len(raw) > MAX_RECORD_BYTES:
        raise RecordError(
            f"{str(p)!r} is more than {MAX_RECORD_BYTES:,} bytes (8 MiB): too big for a game record, not read further"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        try:
            text = raw.decode("latin-1") if b"\x00" not in raw else ""
        except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes every byte
            text = ""
        if not text:
            raise RecordError(f"{str(p)!r} is not a text file: not a game record") from None
    return parse_match(text, kind, str(p))


def format_match(match: MatchRecord, fmt: str) -> str:
    """``match`` as ``.mat`` or gnubg ``.sgf`` text."""
    if fmt == "mat":
        return format_mat(match.games, match.names, match.length, jacoby=None if match.length else match.jacoby)
    if fmt == "sgf":
        return format_sgf(match)
    raise RecordError(f"a record format is 'mat' or 'sgf', got {fmt!r}")


def write_match(path: str | Path, match: MatchRecord, fmt: str | None = None) -> Path:
    """Write ``match`` to ``path`` as ``.mat`` or ``.sgf`` (from the suffix unless ``fmt``), atomically."""
    return fileio.write_text_atomic(path, format_match(match, record_format(path, fmt)), parents=True)
