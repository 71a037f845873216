"""Reading Jellyfish ``.mat`` match records (gnubg's ``export match mat``, eXtreme Gammon's, bgbot's pit).

Writing lives in :mod:`bgbot.formats.records` (:func:`~bgbot.formats.records.format_mat`).
The layout::

    ; [Site "bgbot pit"]                    header comments, [Tag "value"] fields kept
     7 point match                          0 = a money session

     Game 1
     alice : 0                      bob : 0 names and the score before the game
      1) 21: 24/22 6/5               65: 24/18 18/13
      2)                             52: 13/8 24/22       an empty left column: player 1 acts
      5) 62: 25/23 8/2                Doubles => 2
      6)  Drops                       Wins 1 point
     19) 62:                         65: 21/15 13/8       dice with no move: no legal play
          Wins 2 points                                   (left, player 0) or far right (player 1)

Moves are written in the mover's own numbering, 25 = the bar and 0 = off
(``bar`` and ``off`` are read too), one step per die or combined.  The
first action on a numbered line is player 0's unless it starts in the
right-hand column; a second one is player 1's.  Anything else on a line is
an error quoting it: a truncated or corrupt file fails on the first line it
cannot read, or at the replay (:func:`~bgbot.formats.records.replay`).
"""

from __future__ import annotations

import re

from bgbot.formats.record_model import MatchRecord, RawAction, RawGame, record_error, replay
from bgbot.rules.dice import Dice

RIGHT_COLUMN = 30  # an action starting at or after this column (0-based) is player 1's; gnubg puts it at 33

_LENGTH_RE = re.compile(r"^\s*(\d{1,5})\s+point\s+match\s*$", re.I)
_GAME_RE = re.compile(r"^\s*Game\s+(\d{1,5})\s*$", re.I)
_SCORE_RE = re.compile(r"^\s*(\S.*?)\s*:\s*(\d{1,5})\s+(\S.*?)\s*:\s*(\d{1,5})\s*$")
_TAG_RE = re.compile(r'^;\s*\[\s*([A-Za-z][A-Za-z0-9 _]*?)\s+"(.*)"\s*\]\s*$')
_NUMBERED_RE = re.compile(r"^\s*(\d{1,5})\)(.*)$")
_WINS_RE = re.compile(r"^\s*Wins\s+(\d{1,5})\s+points?(\s+and\s+the\s+match)?\s*$", re.I)
# one action inside a numbered line: dice and a move, a cube action, or a result
_ACTION_RE = re.compile(
    r"(?P<dice>[1-6][1-6]):(?P<move>(?:\s*(?:\d{1,2}|bar|off)(?:/(?:\d{1,2}|bar|off)\*?)+(?:\(\d\))?)*)"
    r"|(?P<double>Doubles\s*=>\s*(?P<cube>\d{1,5}))"
    r"|(?P<take>Takes)|(?P<drop>Drops|Passes)"
    r"|(?P<wins>Wins\s+(?P<points>\d{1,5})\s+points?(?:\s+and\s+the\s+match)?)",
    re.I,
)


def parse_mat(text: str, source: str = "") -> MatchRecord:
    """Parse and replay ``.mat`` text; ``source`` (a file name) heads error messages."""
    lines = text.splitlines()
    tags: list[tuple[str, str]] = []
    length: int | None = None
    games: list[RawGame] = []
    names: tuple[str, str] | None = None
    cur: dict | None = None  # the game being read

    def close() -> None:
        nonlocal cur
        if cur is not None:
            if cur["score"] is None:
                raise record_error(source, cur["line"], cur["text"], f"game {cur['number']} has no score line")
            games.append(
                RawGame(
                    number=cur["number"],
                    line=cur["line"],
                    text=cur["text"],
                    score=cur["score"],
                    actions=tuple(cur["actions"]),
                    winner=cur["winner"],
                    points=cur["points"],
                    result_line=cur["result_line"],
                    result_text=cur["result_text"],
                )
            )
        cur = None

    for n, raw in enumerate(lines, 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        if line.lstrip().startswith(";"):
            m = _TAG_RE.match(line.strip())
            if m:
                tags.append((m.group(1).strip(), m.group(2)))
            continue
        m = _LENGTH_RE.match(line)
        if m:
            if length is not None:
                raise record_error(source, n, raw, "a second 'point match' line: two matches in one file")
            length = int(m.group(1))
            continue
        if length is None:
            raise record_error(source, n, raw, "expected the 'N point match' line first")
        m = _GAME_RE.match(line)
        if m:
            close()
            number = int(m.group(1))
            if number != len(games) + 1:
                raise record_error(source, n, raw, f"game {number} where game {len(games) + 1} was due")
            cur = {
                "number": number,
                "line": n,
                "text": raw,
                "score": None,
                "actions": [],
                "winner": None,
                "points": None,
                "result_line": 0,
                "result_text": "",
            }
            continue
        if cur is None:
            raise record_error(source, n, raw, "expected 'Game 1'")
        if cur["score"] is None:
            m = _SCORE_RE.match(line)
            if not m:
                raise record_error(source, n, raw, "expected the score line 'name : points   name : points'")
            pair = (m.group(1).strip(), m.group(3).strip())
            if names is None:
                names = pair
            elif pair != names:
                raise record_error(source, n, raw, f"the players are {names[0]!r} and {names[1]!r} in game 1")
            cur["score"] = (int(m.group(2)), int(m.group(4)))
            continue
        if cur["winner"] is not None:
            raise record_error(source, n, raw, f"game {cur['number']} goes on after its result")
        m = _WINS_RE.match(line)
        if m:
            _result(cur, 0 if len(line) - len(line.lstrip()) < RIGHT_COLUMN else 1, int(m.group(1)), n, raw)
            continue
        m = _NUMBERED_RE.match(line)
        if not m:
            raise record_error(source, n, raw, "cannot read this line of a .mat record")
        _numbered(cur, m, n, raw, source)
    close()
    if length is None:
        raise record_error(
            source,
            max(len(lines), 1),
            lines[-1] if lines else "",
            "no 'N point match' line: not a .mat record (empty or truncated?)",
        )
    if not games:
        raise record_error(source, max(len(lines), 1), lines[-1] if lines else "", "the record holds no game")
    assert names is not None  # every game has a score line
    jacoby = any(k.lower() == "jacoby" and v.strip().lower() == "on" for k, v in tags)
    return replay(games, names=names, length=length, jacoby=jacoby, tags=tags, source=source, fmt="mat")


def _result(cur: dict, player: int, points: int, n: int, raw: str) -> None:
    cur["winner"], cur["points"], cur["result_line"], cur["result_text"] = player, points, n, raw


def _numbered(cur: dict, m: re.Match[str], n: int, raw: str, source: str) -> None:
    body = m.group(2)
    offset = m.start(2)
    pos = 0
    found: list[tuple[int, re.Match[str]]] = []
    while True:
        rest = body[pos:]
        if not rest.strip():
            break
        am = _ACTION_RE.match(rest, len(rest) - len(rest.lstrip()))
        if not am:
            raise record_error(source, n, raw, f"cannot read {rest.strip()!r} as a move, a cube action or a result")
        found.append((offset + pos + am.start(), am))
        pos += am.end()
    if not found or len(found) > 2:
        raise record_error(source, n, raw, "a numbered line holds one action per player")
    for k, (col, am) in enumerate(found):
        player = 1 if (k == 1 or col >= RIGHT_COLUMN) else 0
        if k == 1 and found[0][0] >= RIGHT_COLUMN:
            raise record_error(source, n, raw, "two actions in player 1's column")
        if cur["winner"] is not None:
            raise record_error(source, n, raw, f"game {cur['number']} goes on after its result")
        if am.group("wins"):
            _result(cur, player, int(am.group("points")), n, raw)
            continue
        if am.group("dice"):
            d = am.group("dice")
            dice: Dice = (int(d[0]), int(d[1]))
            cur["actions"].append(RawAction(player, "move", n, raw, dice=dice, move=am.group("move").strip()))
        elif am.group("double"):
            cur["actions"].append(RawAction(player, "double", n, raw, cube=int(am.group("cube"))))
        elif am.group("take"):
            cur["actions"].append(RawAction(player, "take", n, raw))
        else:
            cur["actions"].append(RawAction(player, "drop", n, raw))
