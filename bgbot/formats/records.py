"""Game records in Jellyfish ``.mat`` text, the format GNU Backgammon imports (``import mat FILE``).

The layout follows gnubg's own ``export match mat``: a ``N point match``
line (0 for a money game), then per game ``Game k``, the two names with the
score before the game, and numbered lines with player 0's action on the left
and player 1's on the right.  Moves are written die by die from the mover's
own numbering (``52: 13/8 13/11``, 25 = the bar, 0 = off, ``*`` = a hit);
cube actions as `` Doubles => 2``, `` Takes``, `` Drops``; the end as ``Wins
N point(s)``.

gnubg recomputes every result from the moves, so two settings must match
the games: for money games gnubg applies its own Jacoby setting on import
(``set jacoby off`` or ``on`` before ``import mat``, as the games were
played; bgbot writes a ``; [Jacoby ...]`` comment as a reminder), and
automatic doubles have no place in the format (the file's cube starts at
1).  A forfeited game stops where the fault happened; its ``Wins`` line
carries the points the referee gave.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Literal, Protocol

from bgbot.rules.dice import Dice
from bgbot.rules.moves import legal_moves
from bgbot.rules.position import Position

EntryKind = Literal["move", "double", "take", "drop"]


@dataclass(frozen=True)
class RecordEntry:
    """One entry of a game record.

    ``player`` (0/1) acted in ``position``, seen from the side on roll (the
    mover, or the doubler for ``double``/``take``/``drop``).  For a move,
    ``dice`` and ``result`` (the opponent's view; ``position.swap()`` when
    nothing could be played).  ``cube`` is the cube value after the action
    (for ``double`` the value offered).
    """

    player: int
    kind: EntryKind
    position: Position
    dice: Dice | None = None
    result: Position | None = None
    cube: int = 1


class RecordedGame(Protocol):
    """What a record is written from: the entries in order and who won how much (players 0/1)."""

    @property
    def actions(self) -> tuple[RecordEntry, ...]: ...
    @property
    def winner(self) -> int | None: ...
    @property
    def points(self) -> int: ...

_LEFT = 28  # width of player 0's column, as gnubg writes it


MAX_NAME = 20  # gnubg keeps at most 31 characters and the score header needs room after the name


def mat_name(name: str) -> str:
    """A player name gnubg's importer reads back: letters, digits and ``_.+-`` only, at most 20 characters."""
    cleaned = re.sub(r"[^A-Za-z0-9_.+-]+", "_", name).strip("_")
    return cleaned[:MAX_NAME] or "player"


def _move_text(action: RecordEntry) -> str:
    assert action.dice is not None and action.result is not None  # a move action always has both
    d1, d2 = action.dice
    head = f"{max(d1, d2)}{min(d1, d2)}: "
    for move in legal_moves(action.position, action.dice):
        if move.result == action.result:
            # gnubg's order: highest source first, then highest destination (a checker's hops stay in order)
            steps = sorted(move.steps, key=lambda st: (-st[0], -st[1]))
            hits = {t for _, t, hit in steps if hit}
            parts = []
            for s, t, _ in steps:
                parts.append(f"{s}/{t}{'*' if t in hits else ''}")
                hits.discard(t)  # like gnubg, mark only the first checker landing on the hit point
            return head + " ".join(parts)
    raise ValueError(f"the recorded move of {action.position.gnubg_id()} is not legal: corrupt record")


def _entries(game: RecordedGame) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for a in game.actions:
        if a.kind == "move":
            out.append((a.player, _move_text(a)))
        elif a.kind == "double":
            out.append((a.player, f" Doubles => {a.cube}"))
        elif a.kind == "take":
            out.append((a.player, " Takes"))
        else:
            out.append((a.player, " Drops"))
    return out


def format_game(game: RecordedGame, names: tuple[str, str], score: tuple[int, int], number: int) -> str:
    """One game as ``.mat`` text: ``names`` and ``score`` (before the game) of players 0 and 1."""
    n0, n1 = mat_name(names[0]), mat_name(names[1])
    lines = [f" Game {number}", " " + f"{n0} : {score[0]}".ljust(30) + f" {n1} : {score[1]}"]
    slots: list[str] = []  # alternating player 0 / player 1; "" where a player did nothing
    for player, text in _entries(game):
        if player != len(slots) % 2:
            slots.append("")
        slots.append(text)
    for k in range(0, len(slots), 2):
        right = slots[k + 1] if k + 1 < len(slots) else ""
        lines.append(f"{k // 2 + 1:3d}) {slots[k].ljust(_LEFT - 1)} {right}".rstrip())
    if game.winner is not None:
        plural = "s" if game.points != 1 else ""
        indent = " " * 6 if game.winner == 0 else " " * 34
        lines.append(f"{indent}Wins {game.points} point{plural}")
    return "\n".join(lines) + "\n"


def format_mat(
    games: Sequence[RecordedGame],
    names: tuple[str, str],
    match_length: int = 0,
    *,
    site: str = "bgbot",
    jacoby: bool | None = None,
    comments: Sequence[str] = (),
) -> str:
    """A whole match (or money session) as ``.mat`` text; scores are summed from the games' results.

    ``comments`` are extra ``;`` lines for the header (e.g. the full bot specs).
    """
    n0, n1 = mat_name(names[0]), mat_name(names[1])
    if n0 == n1:
        n0, n1 = f"{n0[:MAX_NAME - 2]}_1", f"{n1[:MAX_NAME - 2]}_2"
    head = [
        f'; [Site "{site}"]',
        f'; [Player 1 "{n0}"]',
        f'; [Player 2 "{n1}"]',
        f'; [EventDate "{date.today():%Y.%m.%d}"]',
    ]
    if jacoby is not None and not match_length:
        head.append(f'; [Jacoby "{"On" if jacoby else "Off"}"]')
    head += [f"; {c}" for c in comments]
    parts = ["\n".join(head), "", f" {match_length} point match", ""]
    score = [0, 0]
    for k, g in enumerate(games, 1):
        parts.append(format_game(g, (n0, n1), (score[0], score[1]), k))
        if g.winner is not None:
            score[g.winner] += g.points
    return "\n".join(parts) + "\n"


def write_mat(
    path: str | Path,
    games: Sequence[RecordedGame],
    names: tuple[str, str],
    match_length: int = 0,
    **kwargs: object,
) -> Path:
    """Write :func:`format_mat` to ``path`` (folders created); returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(format_mat(games, names, match_length, **kwargs))  # type: ignore[arg-type]
    return p
