"""gnubg's backgammon SGF (``save match FILE.sgf``): reading and writing.

SGF (Smart Game Format, FF[4]) with GM[6] = backgammon, as GNU Backgammon
writes it: one game tree per game, its root node holding the match
properties, then one node per action::

    (;FF[4]GM[6]CA[UTF-8]AP[GNU Backgammon:1.07.001]MI[length:7][game:0][ws:0][bs:0]
      PW[alice]PB[bob]DT[2026-12-01]RU[Crawford]RE[B+2]
    ;W[21xvfe]            White (player 0) rolls 21 and plays 24/22 6/5
    ;B[double] ;W[take]   cube actions (``drop`` for a pass)
    ;B[62] ...)           dice alone: no legal play

A move is the two dice and a pair of letters per checker step, in the
mover's numbering: ``a``..``x`` are points 1..24, ``y`` the bar, ``z`` off.
``MI`` holds the match length, the game number (from 0) and the score of
White (``ws``) and Black (``bs``) before the game; ``RU`` the rules
(``Crawford``, ``Crawford:CrawfordGame`` in the Crawford game, ``Jacoby``);
``RE`` the result (``W+2``; a trailing ``R`` marks a resignation).  gnubg's
analysis properties (``A``, ``DA``, ``LU``, ``GS``, ...) are recognised and
skipped.  Any other property is an error naming its line, so is a position
set up by hand (``AB``/``AW``/``AE``): bgbot replays games from the start.

Why a hand-written tokenizer: the SGF readers on PyPI (``sgfmill``,
``pysgf``, ``sgf``) are written for Go (their property checks reject or
mangle GM[6]), one is unmaintained since 2016, and none reports line numbers,
which every error here must name.  The grammar is four rules; the tokenizer
below is short.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from bgbot.errors import RecordError, quote_input
from bgbot.formats.record_model import (
    MatchRecord,
    RawAction,
    RawGame,
    RecordEntry,
    mat_name,
    record_error,
    replay,
)
from bgbot.rules.moves import legal_moves

# Root properties gnubg 1.07 writes or reads (sgf.c), and the standard SGF game-info ones.
ROOT_PROPERTIES = frozenset(
    [
        "FF",
        "GM",
        "CA",
        "AP",
        "MI",
        "PW",
        "PB",
        "WR",
        "BR",
        "DT",
        "EV",
        "RO",
        "PC",
        "AN",
        "GC",
        "SO",
        "US",
        "RU",
        "RE",
        "GS",
        "CP",
        "ON",
        "OT",
        "TM",
        "WT",
        "BT",
        "GN",
        "C",
    ]
)
# Properties of a move node: the move, gnubg's analysis and marks, SGF annotations.
NODE_PROPERTIES = frozenset(
    ["W", "B", "A", "DA", "LU", "MR", "C", "N", "BM", "DO", "IT", "TE", "GB", "GW", "DM", "UC", "HO", "V"]
)
SETUP_PROPERTIES = frozenset(["AB", "AW", "AE", "PL", "CV", "CO", "DI"])
_POINT_LETTERS = "abcdefghijklmnopqrstuvwx"  # points 1..24; y = bar, z = off


@dataclass(frozen=True)
class Prop:
    """One property: its name, its values (escapes resolved) and the line it starts on."""

    name: str
    values: tuple[str, ...]
    line: int


Node = list[Prop]


def _line_text(lines: list[str], n: int) -> str:
    return lines[n - 1] if 0 < n <= len(lines) else ""


def tokenize(text: str, source: str = "") -> list[list[Node]]:
    """The game trees of SGF ``text``: each a list of nodes, each a list of :class:`Prop`.

    Variations (a tree inside a tree) are an error: gnubg writes none and a
    match record has one line of play.
    """
    lines = text.splitlines() or [""]
    i, n, line = 0, len(text), 1
    trees: list[list[Node]] = []

    def err(what: str, at: int) -> RecordError:
        return record_error(source, at, _line_text(lines, at), what)

    def skip_ws() -> None:
        nonlocal i, line
        while i < n and text[i].isspace():
            if text[i] == "\n":
                line += 1
            i += 1

    while True:
        skip_ws()
        if i >= n:
            break
        if text[i] != "(":
            raise err(f"expected '(' to open a game tree, found {text[i]!r}", line)
        i += 1
        nodes: list[Node] = []
        while True:
            skip_ws()
            if i >= n:
                raise err("the file ends inside a game tree (no closing ')'): truncated?", line)
            c = text[i]
            if c == ")":
                i += 1
                break
            if c == "(":
                raise err("a variation (a game tree inside a game tree): bgbot reads one line of play", line)
            if c != ";":
                raise err(f"expected ';' to start a node, found {c!r}", line)
            i += 1
            node: Node = []
            while True:
                skip_ws()
                if i >= n or not text[i].isalpha():
                    break
                start, at = i, line
                while i < n and text[i].isalpha():
                    i += 1
                name = text[start:i]
                if not name.isupper():
                    raise err(f"a property name is upper-case letters, got {name!r}", at)
                values: list[str] = []
                while True:
                    skip_ws()
                    if i >= n or text[i] != "[":
                        break
                    i += 1
                    buf: list[str] = []
                    while True:
                        if i >= n:
                            raise err(f"the value of {name} is not closed with ']': truncated?", at)
                        ch = text[i]
                        if ch == "\\" and i + 1 < n:
                            if text[i + 1] == "\n":
                                line += 1
                            else:
                                buf.append(text[i + 1])
                            i += 2
                            continue
                        if ch == "]":
                            i += 1
                            break
                        if ch == "\n":
                            line += 1
                        buf.append(ch)
                        i += 1
                    values.append("".join(buf))
                if not values:
                    raise err(f"property {name} has no value", at)
                node.append(Prop(name, tuple(values), at))
            nodes.append(node)
        if not nodes:
            raise err("an empty game tree", line)
        trees.append(nodes)
    if not trees:
        raise RecordError(f"{source + ': ' if source else ''}no game tree in the file: not an SGF record (empty?)")
    return trees


def _point(letter: str, player: int) -> int:
    """A point letter read in ``player``'s own numbering (25 = bar, 0 = off)."""
    if letter == "y":
        return 25
    if letter == "z":
        return 0
    k = _POINT_LETTERS.index(letter)
    return k + 1 if player == 0 else 24 - k


def _move_text(value: str, player: int) -> str:
    """``'21xvfe'`` -> ``'24/22 6/5'``: the letters name White's points (``a`` = White's 1-point, Black's
    24-point), so White's moves read directly and Black's mirrored."""
    body = value[2:]
    return " ".join(f"{_point(body[k], player)}/{_point(body[k + 1], player)}" for k in range(0, len(body), 2))


_MOVE_RE = re.compile(r"[1-6][1-6](?:[a-y][a-xz])*")
_RESULT_RE = re.compile(r"([WB])\+(\d{1,5})(R?)")


def parse_sgf(text: str, source: str = "") -> MatchRecord:
    """Parse and replay gnubg SGF ``text``; ``source`` (a file name) heads error messages."""
    lines = text.splitlines() or [""]
    trees = tokenize(text, source)
    games: list[RawGame] = []
    names: tuple[str, str] | None = None
    length: int | None = None
    crawford_rule = False
    jacoby = False
    tags: list[tuple[str, str]] = []

    def err(p: Prop, what: str) -> RecordError:
        return record_error(source, p.line, _line_text(lines, p.line), what)

    for k, nodes in enumerate(trees, 1):
        root = nodes[0]
        props = {p.name: p for p in root}
        for p in root:
            if p.name in SETUP_PROPERTIES:
                raise err(p, f"game {k} starts from a position set up by hand ({p.name}): not supported")
            if p.name not in ROOT_PROPERTIES and p.name not in NODE_PROPERTIES:
                raise err(p, f"unknown property {p.name}[{p.values[0][:20]}] in game {k}")
        gm = props.get("GM")
        if gm is None or gm.values[0].strip() != "6":
            p = gm or root[0]
            raise err(p, f"game {k} is not a backgammon record (GM[6]), got GM[{gm.values[0] if gm else ''}]")
        first = root[0]
        mi: dict[str, str] = {}
        if "MI" in props:
            for v in props["MI"].values:
                key, _, val = v.partition(":")
                mi[key.strip()] = val.strip()
        try:
            g_len = int(mi.get("length", "0"))
            score = (int(mi["ws"]), int(mi["bs"])) if "ws" in mi and "bs" in mi else None
            g_no = int(mi["game"]) + 1 if "game" in mi else k
        except ValueError:
            raise err(props["MI"], f"cannot read the match information of game {k}") from None
        if g_no != k:
            raise err(props.get("MI", first), f"game number {g_no} where game {k} was due")
        if length is None:
            length = g_len
        elif g_len != length:
            raise err(props.get("MI", first), f"game {k} says the match is to {g_len}, game 1 to {length}")
        pair = (
            props["PW"].values[0] if "PW" in props else "White",
            props["PB"].values[0] if "PB" in props else "Black",
        )
        if names is None:
            names = pair
            for key in ("EV", "RO", "PC", "DT", "AN", "GC"):
                if key in props:
                    tags.append((key, props[key].values[0]))
        crawford_game: bool | None = None
        if "RU" in props:
            for rule in props["RU"].values[0].split(":"):
                r = rule.strip().lower()
                if r == "crawford":
                    crawford_rule = True
                elif r == "crawfordgame":
                    crawford_rule, crawford_game = True, True
                elif r == "jacoby":
                    jacoby = True
                elif r:
                    raise err(props["RU"], f"rule {rule!r} is not supported (Crawford and Jacoby are)")
            if crawford_game is None and length:
                crawford_game = False
        winner = points = None
        resigned = False
        if "RE" in props:
            m = _RESULT_RE.fullmatch(props["RE"].values[0].strip())
            if not m:
                raise err(props["RE"], f"cannot read the result {props['RE'].values[0]!r} (like W+2 or B+1R)")
            winner, points, resigned = (0 if m.group(1) == "W" else 1), int(m.group(2)), bool(m.group(3))
        actions: list[RawAction] = []
        for node in nodes[1:] if len(root) and not any(p.name in ("W", "B") for p in root) else nodes:
            for p in node:
                if p.name in SETUP_PROPERTIES:
                    raise err(p, f"game {k} sets up a position by hand ({p.name}): not supported")
                if p.name not in NODE_PROPERTIES and p.name not in ROOT_PROPERTIES:
                    raise err(p, f"unknown property {p.name}[{p.values[0][:20]}] in game {k}")
                if p.name not in ("W", "B"):
                    continue
                player = 0 if p.name == "W" else 1
                v = p.values[0].strip().lower()
                t = _line_text(lines, p.line)
                if v == "double":
                    actions.append(RawAction(player, "double", p.line, t))
                elif v == "take":
                    actions.append(RawAction(player, "take", p.line, t))
                elif v in ("drop", "pass"):
                    actions.append(RawAction(player, "drop", p.line, t))
                elif _MOVE_RE.fullmatch(v):
                    dice = (int(v[0]), int(v[1]))
                    actions.append(RawAction(player, "move", p.line, t, dice=dice, move=_move_text(v, player)))
                else:
                    raise err(p, f"cannot read {p.name}[{quote_input(p.values[0])[1:-1]}] as a move or cube action")
        res = props.get("RE")
        games.append(
            RawGame(
                number=k,
                line=first.line,
                text=_line_text(lines, first.line),
                score=score,
                actions=tuple(actions),
                winner=winner,
                points=points,
                result_line=res.line if res else 0,
                result_text=_line_text(lines, res.line) if res else "",
                resigned=resigned,
                crawford=crawford_game,
            )
        )
    assert names is not None and length is not None  # tokenize returns at least one tree
    return replay(
        games,
        names=names,
        length=length,
        jacoby=jacoby,
        crawford_rule=crawford_rule or not length,
        tags=tags,
        source=source,
        fmt="sgf",
    )


# ---------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


def _letter(p: int, player: int) -> str:
    """The letter of ``player``'s point ``p`` (25 = bar, 0 = off), in White's numbering."""
    if p == 25:
        return "y"
    if p == 0:
        return "z"
    return _POINT_LETTERS[p - 1] if player == 0 else _POINT_LETTERS[24 - p]


def _move_value(a: RecordEntry) -> str:
    assert a.dice is not None and a.result is not None  # a move entry has both
    d1, d2 = a.dice
    head = f"{max(d1, d2)}{min(d1, d2)}"
    for mv in legal_moves(a.position, a.dice):
        if mv.result == a.result:
            return head + "".join(_letter(s, a.player) + _letter(t, a.player) for s, t, _ in mv.steps)
    raise RecordError(f"the recorded move of {a.position.gnubg_id()!r} with {head} is not legal: corrupt record")


def format_sgf(match: MatchRecord, *, application: str = "bgbot", day: date | None = None, comment: str = "") -> str:
    """``match`` as gnubg SGF text (one game tree per game), which gnubg's ``load match`` reads.

    ``comment`` goes into the first game's ``GC[]`` (game comment) property.
    """
    n0, n1 = mat_name(match.names[0]), mat_name(match.names[1])
    if n0 == n1:
        n0, n1 = f"{n0[:18]}_1", f"{n1[:18]}_2"
    when = (day or date.today()).isoformat()
    out: list[str] = []
    score = [0, 0]
    for g in match.games:
        rules = []
        if match.length:
            if match.crawford_rule:
                rules.append("Crawford")
                if g.crawford:
                    rules.append("CrawfordGame")
        elif match.jacoby:
            rules.append("Jacoby")
        head = (
            f"(;FF[4]GM[6]CA[UTF-8]AP[{_escape(application)}]"
            f"MI[length:{match.length}][game:{g.number - 1}][ws:{score[0]}][bs:{score[1]}]"
            f"PW[{_escape(n0)}]PB[{_escape(n1)}]DT[{when}]"
        )
        if rules:
            head += f"RU[{':'.join(rules)}]"
        if g.winner is not None:
            head += f"RE[{'WB'[g.winner]}+{g.points}{'R' if g.how == 'resigned' else ''}]"
        if comment and g is match.games[0]:
            head += f"GC[{_escape(comment)}]"
        parts = [head]
        for a in g.actions:
            colour = "WB"[a.player]
            if a.kind == "move":
                parts.append(f";{colour}[{_move_value(a)}]")
            else:
                parts.append(f";{colour}[{a.kind}]")
        out.append("\n".join(parts) + ")")
        if g.winner is not None:
            score[g.winner] += g.points
    return "\n".join(out) + "\n"
