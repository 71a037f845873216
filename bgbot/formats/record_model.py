"""Game records: the record types, the replay through the rules, and the Jellyfish ``.mat`` writer.

Import them from :mod:`bgbot.formats.records`, which adds reading and writing files of both formats.

``.mat`` text is the format GNU Backgammon imports (``import mat FILE``).

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

Reading
-------
:func:`read_match` reads a ``.mat`` (:mod:`bgbot.formats.mat`) or gnubg
``.sgf`` (:mod:`bgbot.formats.sgf`) file into a :class:`MatchRecord`: the
file is parsed into raw actions (who did what, on which line), then
:func:`replay` plays every game through the rules (:func:`~bgbot.rules.moves.parse_move`
on the position at that point, cube ownership, the Crawford game, the
result).  Every problem is one :class:`~bgbot.errors.RecordError` naming the
file, the line and quoting it; an illegal move is a
:class:`~bgbot.errors.RecordMoveError` naming the game and the move.
:func:`write_match` writes either format (atomically: temp file + rename), and
what it writes reads back as the same :class:`MatchRecord`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Literal, Protocol

from bgbot import fileio
from bgbot.errors import InvalidMoveError, RecordError, RecordMoveError, quote_input
from bgbot.rules.dice import Dice
from bgbot.rules.matchstate import MAX_CUBE, MatchState, crawford_game
from bgbot.rules.moves import legal_moves, parse_move
from bgbot.rules.position import Outcome, Position

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
    raise RecordMoveError(
        f"the recorded move of {action.position.gnubg_id()!r} with {head.strip(': ')} is not legal: corrupt record"
    )


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
    plural = "s" if game.points != 1 else ""
    # gnubg writes the result of a double player 0 dropped on the drop's line (its importer needs it there)
    wins_inline = game.winner == 1 and bool(game.actions) and game.actions[-1].kind == "drop" and len(slots) % 2 == 1
    if wins_inline:
        slots.append(f" Wins {game.points} point{plural}")
    for k in range(0, len(slots), 2):
        right = slots[k + 1] if k + 1 < len(slots) else ""
        lines.append(f"{k // 2 + 1:3d}) {slots[k].ljust(_LEFT - 1)} {right}".rstrip())
    if game.winner is not None and not wins_inline:
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
        n0, n1 = f"{n0[: MAX_NAME - 2]}_1", f"{n1[: MAX_NAME - 2]}_2"
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
    return fileio.write_text_atomic(path, format_mat(games, names, match_length, **kwargs), parents=True)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# reading: raw actions from a parser, replayed through the rules
# ---------------------------------------------------------------------------

RawKind = Literal["move", "double", "take", "drop"]


@dataclass(frozen=True)
class RawAction:
    """One action as a file states it: ``player`` (0/1) and ``kind``; for a move the ``dice`` and the move
    text in the mover's numbering (``parse_move`` syntax, ``""`` = no play); ``cube`` the value a double
    offers when the file says it.  ``line`` (1-based) and ``text`` locate it for error messages."""

    player: int
    kind: RawKind
    line: int
    text: str
    dice: Dice | None = None
    move: str = ""
    cube: int | None = None


@dataclass(frozen=True)
class RawGame:
    """One game as a file states it: the score before it (``None`` when the file does not say), its actions,
    and the result it claims (``winner`` None when it has none).  ``resigned``: the file says the game ended by
    resignation (gnubg SGF ``RE[W+2R]``); ``crawford``: the file marks the Crawford game (None: not said)."""

    number: int
    line: int
    text: str
    score: tuple[int, int] | None
    actions: tuple[RawAction, ...]
    winner: int | None = None
    points: int | None = None
    result_line: int = 0
    result_text: str = ""
    resigned: bool = False
    crawford: bool | None = None


GameEnd = Literal["played", "dropped", "resigned", "unfinished"]


@dataclass(frozen=True)
class GameRecord:
    """One replayed game of a :class:`MatchRecord` (players absolute, 0 and 1).

    ``score`` is the score before the game; ``crawford`` whether it is the
    Crawford game.  ``actions`` are :class:`RecordEntry` items whose positions
    are from the acting side's view (see :class:`RecordEntry`); ``lines`` the
    file line of each (empty for a record not read from a file).  ``winner``
    and ``points`` are the result (``None``/0 for an unfinished game), ``how``
    how it ended: played out, a double dropped, a resignation (or a pit's
    forfeit), or unfinished.
    """

    number: int
    score: tuple[int, int]
    crawford: bool
    actions: tuple[RecordEntry, ...]
    winner: int | None
    points: int
    how: GameEnd
    match_length: int = 0
    jacoby: bool = False
    lines: tuple[int, ...] = field(default=(), compare=False)

    @property
    def moves(self) -> tuple[RecordEntry, ...]:
        """The checker plays, in order."""
        return tuple(a for a in self.actions if a.kind == "move")

    def states(self) -> Iterator[tuple[RecordEntry, MatchState]]:
        """Each action with the :class:`~bgbot.rules.matchstate.MatchState` of the situation it was taken in.

        The state's ``on_roll`` is the side whose view ``action.position`` is
        (the mover, or the doubler for double / take / drop); for a take or a
        drop it holds the pending double (``doubled=True``), for a move the
        dice.  Cube value and owner are those before the action.
        """
        cube, owner = 1, -1
        for a in self.actions:
            side = a.player if a.kind in ("move", "double") else 1 - a.player
            st = MatchState(
                match_length=self.match_length,
                score=self.score,
                cube_value=cube,
                cube_owner=owner,
                on_roll=side,
                doubled=a.kind in ("take", "drop"),
                dice=a.dice if a.kind == "move" else None,
                crawford=self.crawford,
                jacoby=self.jacoby and not self.match_length,
            )
            yield a, st
            if a.kind == "take":
                cube, owner = a.cube, a.player


@dataclass(frozen=True)
class MatchRecord:
    """A match (``length`` points) or money session (``length`` 0) read from a record, replayed through the rules.

    ``names`` of players 0 and 1 (the left column of a ``.mat``, White in an
    ``.sgf``); ``games`` in order; ``jacoby`` (money) and ``crawford_rule``
    (matches) the rules the file states; ``tags`` the header fields the file
    had (``Site``, ``EventDate``, ...); ``source`` the file and ``format``
    (``'mat'`` or ``'sgf'``) it was read from.
    """

    names: tuple[str, str]
    length: int
    games: tuple[GameRecord, ...]
    jacoby: bool = False
    crawford_rule: bool = True
    tags: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    source: str = field(default="", compare=False)
    format: str = field(default="", compare=False)

    @property
    def score(self) -> tuple[int, int]:
        """Points won by players 0 and 1 over all games."""
        s = [0, 0]
        for g in self.games:
            if g.winner is not None:
                s[g.winner] += g.points
        return s[0], s[1]

    @property
    def winner(self) -> int | None:
        """The player who reached ``length`` (None for money sessions and unfinished matches)."""
        if not self.length:
            return None
        s = self.score
        return 0 if s[0] >= self.length else 1 if s[1] >= self.length else None


def _where(source: str, line: int, text: str) -> str:
    head = f"{source}: " if source else ""
    return f"{head}line {line}: {quote_input(text.rstrip())}"


def record_error(source: str, line: int, text: str, what: str, cls: type[RecordError] = RecordError) -> RecordError:
    """A :class:`~bgbot.errors.RecordError` (or ``cls``) ``'FILE: line N: 'the line': what'``."""
    return cls(f"{_where(source, line, text)}: {what}")


def replay(
    games: Sequence[RawGame],
    *,
    names: tuple[str, str],
    length: int,
    jacoby: bool = False,
    crawford_rule: bool = True,
    tags: Sequence[tuple[str, str]] = (),
    source: str = "",
    fmt: str = "",
) -> MatchRecord:
    """Play the raw games through the rules into a :class:`MatchRecord`; any breach is a :class:`RecordError`.

    Checks: each move is a legal play of its dice in the position reached
    (:class:`~bgbot.errors.RecordMoveError` naming game and move), turns
    alternate, doubles only by the side on roll with the cube available
    (never in the Crawford game), take or drop only to a pending double, the
    stated score before each game is the sum of the results before it, and a
    stated result agrees with the game (played out, dropped, or a
    resignation worth 1-3 times the cube).
    """
    out: list[GameRecord] = []
    score = [0, 0]
    crawford_done = False
    for g in games:
        if length and max(score) >= length:
            raise record_error(source, g.line, g.text, f"game {g.number} follows the end of the {length}-point match")
        if g.score is not None and tuple(g.score) != tuple(score):
            raise record_error(
                source,
                g.line,
                g.text,
                f"game {g.number} starts at {g.score[0]}-{g.score[1]}, "
                f"but the games before it make {score[0]}-{score[1]}",
            )
        crawford = crawford_rule and crawford_game(length, (score[0], score[1]), crawford_done)
        crawford_done = crawford_done or crawford
        # a 1-point match has no Crawford game; a file marking one there (as older bgbot wrote) changes nothing
        if g.crawford is not None and g.crawford != crawford and length != 1:
            raise record_error(
                source,
                g.line,
                g.text,
                f"game {g.number} is {'not ' if not g.crawford else ''}marked as the Crawford game, but the score "
                f"{score[0]}-{score[1]} to {length} makes it {'one' if crawford else 'not one'}",
            )
        out.append(_replay_game(g, (score[0], score[1]), crawford, length, jacoby and not length, names, source))
        last = out[-1]
        if last.winner is not None:
            score[last.winner] += last.points
    return MatchRecord(
        names=names,
        length=length,
        games=tuple(out),
        jacoby=jacoby and not length,
        crawford_rule=crawford_rule,
        tags=tuple(tags),
        source=source,
        format=fmt,
    )


def _replay_game(
    g: RawGame,
    score: tuple[int, int],
    crawford: bool,
    length: int,
    jacoby: bool,
    names: tuple[str, str],
    source: str,
) -> GameRecord:
    pos = Position.start()
    side: int | None = None
    cube, owner = 1, -1
    pending = False
    entries: list[RecordEntry] = []
    lines: list[int] = []
    end: tuple[int, int, GameEnd] | None = None  # winner, points, how
    turns = [0, 0]
    for a in g.actions:

        def bad(what: str, a: RawAction = a, cls: type[RecordError] = RecordError) -> RecordError:
            return record_error(source, a.line, a.text, f"game {g.number}: {what}", cls)

        who = f"{names[a.player]} (player {a.player})"
        if end is not None:
            raise bad(f"{who} acts after the game is over")
        if side is None:
            if a.kind != "move":
                raise bad(f"the game must start with a move, not a {a.kind}")
            side = a.player
        if a.kind == "move":
            turns[a.player] += 1
            if pending:
                raise bad(f"{who} moves while a double is waiting for an answer", cls=RecordMoveError)
            if a.player != side:
                raise bad(f"{who} moves, but it is {names[side]}'s turn", cls=RecordMoveError)
            if a.dice is None:
                raise bad(f"move {turns[a.player]} of {who} has no dice")
            try:
                mv = parse_move(pos, a.dice, a.move)
            except InvalidMoveError as exc:
                raise bad(f"move {turns[a.player]} of {who} is not legal: {exc}", cls=RecordMoveError) from None
            entries.append(RecordEntry(side, "move", pos, a.dice, mv.result, cube))
            lines.append(a.line)
            if mv.result.off()[1] == 15:
                out = Outcome.of(mv.result, 1 - side, cube, jacoby=jacoby, cube_turned=owner != -1)
                end = (out.winner, out.points, "played")
            pos, side = mv.result, 1 - side
        elif a.kind == "double":
            if pending:
                raise bad(f"{who} doubles while a double is waiting for an answer", cls=RecordMoveError)
            if a.player != side:
                raise bad(f"{who} doubles, but it is {names[side]}'s turn", cls=RecordMoveError)
            if crawford:
                raise bad(f"{who} doubles in the Crawford game, where the cube is out of play", cls=RecordMoveError)
            if owner == 1 - side:
                raise bad(f"{who} doubles, but {names[owner]} owns the cube", cls=RecordMoveError)
            if cube >= MAX_CUBE:
                raise bad(f"{who} doubles a cube already at {cube}", cls=RecordMoveError)
            if a.cube is not None and a.cube != 2 * cube:
                raise bad(f"{who} doubles to {a.cube}, but the cube is at {cube}", cls=RecordMoveError)
            entries.append(RecordEntry(side, "double", pos, cube=2 * cube))
            lines.append(a.line)
            pending = True
        else:
            if not pending or side is None or a.player != 1 - side:
                raise bad(
                    f"{who} {'takes' if a.kind == 'take' else 'drops'} without a double to answer", cls=RecordMoveError
                )
            pending = False
            if a.kind == "take":
                cube, owner = 2 * cube, a.player
                entries.append(RecordEntry(a.player, "take", pos, cube=cube))
            else:
                entries.append(RecordEntry(a.player, "drop", pos, cube=cube))
                end = (side, cube, "dropped")
            lines.append(a.line)
    rline, rtext = (g.result_line, g.result_text) if g.result_line else (g.line, g.text)
    if pending and g.winner is None:
        raise record_error(source, rline, rtext, f"game {g.number} ends with a double nobody answered")
    if end is not None:
        if g.winner is not None and (g.winner, g.points) != end[:2]:
            raise record_error(
                source,
                rline,
                rtext,
                f"game {g.number} says {names[g.winner]} wins {g.points}, but the game gives "
                f"{names[end[0]]} {end[1]} point(s) ({end[2]})",
            )
        winner, points, how = end
    elif g.winner is not None:
        assert g.points is not None  # a parser sets both
        if g.points not in (cube, 2 * cube, 3 * cube):
            raise record_error(
                source,
                rline,
                rtext,
                f"game {g.number} ends unfinished with {g.points} point(s) to {names[g.winner]}: a resignation "
                f"with the cube at {cube} is worth {cube}, {2 * cube} or {3 * cube}",
            )
        winner, points, how = g.winner, g.points, "resigned"
    else:
        winner, points, how = None, 0, "unfinished"
    return GameRecord(
        number=g.number,
        score=score,
        crawford=crawford,
        actions=tuple(entries),
        winner=winner,
        points=points,
        how=how,
        match_length=length,
        jacoby=jacoby,
        lines=tuple(lines),
    )


class PlayedGame(RecordedGame, Protocol):
    """A game as the turn loop returns it (:class:`bgbot.play.table.GameResult`): a record plus how it ended."""

    @property
    def how(self) -> str: ...
    @property
    def crawford(self) -> bool: ...


def match_from_games(
    games: Sequence[PlayedGame],
    names: tuple[str, str],
    match_length: int = 0,
    *,
    jacoby: bool = False,
) -> MatchRecord:
    """A :class:`MatchRecord` of games just played (players 0/1 as in the games; scores summed in order).

    A game forfeited by a bot is recorded as a resignation worth the points
    the referee gave; a game stopped unfinished keeps no result.  Dice are
    kept highest first, as both formats write them, so that the record reads
    back equal to itself.
    """
    out: list[GameRecord] = []
    score = [0, 0]
    for k, g in enumerate(games, 1):
        how: GameEnd = {"played": "played", "dropped": "dropped", "unfinished": "unfinished"}.get(g.how, "resigned")  # type: ignore[assignment]
        out.append(
            GameRecord(
                number=k,
                score=(score[0], score[1]),
                crawford=bool(g.crawford),
                actions=tuple(_high_first(a) for a in g.actions),
                winner=g.winner,
                points=g.points if g.winner is not None else 0,
                how=how,
                match_length=match_length,
                jacoby=jacoby and not match_length,
            )
        )
        if g.winner is not None:
            score[g.winner] += g.points
    n0, n1 = mat_name(names[0]), mat_name(names[1])
    if n0 == n1:  # as format_mat does, so that the record reads back with the same names
        n0, n1 = f"{n0[: MAX_NAME - 2]}_1", f"{n1[: MAX_NAME - 2]}_2"
    return MatchRecord(
        names=(n0, n1),
        length=match_length,
        games=tuple(out),
        jacoby=jacoby and not match_length,
    )


def _high_first(a: RecordEntry) -> RecordEntry:
    if a.dice is None or a.dice[0] >= a.dice[1]:
        return a
    return RecordEntry(a.player, a.kind, a.position, (a.dice[1], a.dice[0]), a.result, a.cube)
