"""Moves: the single-checker step rule, legal plays with their steps, and move notation.

:func:`legal_moves` lists, for one position, each distinct result with one
sequence of checker steps that reaches it; :func:`format_move` and
:func:`parse_move` write and read standard notation (``24/18 13/11``,
``bar/22*``, ``6/off``, ``8/5(2)``, ``13/7*/5``).  Both walk the board with
:func:`step`, the one plain-Python statement of how a checker moves; the
compiled batched generator (:mod:`bgbot.rules.movegen`) states the same rule
for speed, and the tests hold the two to gnubg's move lists.
Positions are from the side on roll's view; results from the opponent's view.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bgbot.errors import AmbiguousMoveError, IllegalMoveError, InvalidMoveError, InvalidPositionError, quote_input
from bgbot.rules.dice import parse_dice
from bgbot.rules.position import Position, flip, gnubg_position_id

Step = tuple[int, int, bool]  # (from, to, hit) in the mover's numbering; 25 = bar, 0 = off


def step(b: Sequence[int], src: int, d: int) -> tuple[list[int], Step] | None:
    """Move one checker from ``src`` by die ``d`` under the rules: the new board and the step, or None.

    ``b`` is from the mover's view (25 its bar, 0 the opponent's bar).  A checker
    on the bar must enter first; it lands on an open point (at most one opposing
    checker, which is hit and goes to the opponent's bar); bearing off needs all
    checkers home, exactly or from the highest point when the die is larger.
    """
    if b[src] <= 0 or (src != 25 and b[25] > 0):
        return None
    dst = src - d
    nb = list(b)
    if dst >= 1:
        if nb[dst] < -1:
            return None
        hit = nb[dst] == -1
        nb[src] -= 1
        if hit:
            nb[dst] = 1
            nb[0] -= 1
        else:
            nb[dst] += 1
        return nb, (src, dst, hit)
    if any(nb[i] > 0 for i in range(7, 26)):
        return None
    if dst < 0 and any(nb[i] > 0 for i in range(src + 1, 7)):
        return None
    nb[src] -= 1
    return nb, (src, 0, False)


@dataclass(frozen=True)
class Move:
    """One legal play: the checker steps (mover's numbering) and the result.

    ``steps`` are ``(from, to, hit)`` single-die steps in play order, from 25 =
    the bar, to 0 = borne off.  ``result`` is the position after the move **from
    the opponent's view** (opponent on roll).  The empty move (no legal play)
    has no steps.
    """

    steps: tuple[Step, ...]
    result: Position

    @property
    def text(self) -> str:
        """The move in standard notation, e.g. ``24/18 13/11`` or ``8/5(2)``."""
        return format_move(self.steps)

    def __str__(self) -> str:
        return self.text


def legal_moves(pos: Position, dice: object) -> list[Move]:
    """Every legal play of ``dice`` in ``pos``, one :class:`Move` per distinct result.

    ``pos`` is from the side on roll's view; each ``Move.result`` is from the
    opponent's view.  When nothing can be played the list holds one empty
    move whose result is ``pos.swap()``.  The order is that of the steps'
    source points, highest first.
    """
    if not isinstance(pos, Position):
        raise InvalidPositionError(f"legal_moves needs a Position, got {pos!r}")
    d1, d2 = parse_dice(dice)
    kernel = _kernel()
    if kernel is not None:
        return _legal_moves_compiled(kernel, pos, d1, d2)
    return _legal_moves_walk(pos, d1, d2)


def _kernel() -> Callable[..., tuple[Any, Any, Any]] | None:
    """The compiled walk (:func:`bgbot.rules.movesteps.play_steps`) once this process runs compiled kernels, else None.

    Asked only after a kernel module has fixed the mode (:mod:`bgbot.jit`): a one-position command that
    runs its kernels as plain Python must not be switched to compiling them by naming a play.
    """
    global _PLAY_STEPS
    if _PLAY_STEPS is None:
        from bgbot import jit

        if not (jit._used and jit.COMPILED):
            return None
        from bgbot.rules.movesteps import play_steps

        _PLAY_STEPS = play_steps
    return _PLAY_STEPS


_PLAY_STEPS: Callable[..., tuple[Any, Any, Any]] | None = None
_new = object.__new__
_setattr = object.__setattr__


def _make_move(steps: tuple[Step, ...], result: Position) -> Move:
    """A :class:`Move` made by filling its ``__dict__`` at once (the frozen ``__init__`` sets field by field)."""
    m = _new(Move)
    _setattr(m, "__dict__", {"steps": steps, "result": result})
    return m


def _sort_key(m: Move) -> list[int]:
    return [-s[0] for s in m.steps]


def _legal_moves_compiled(
    kernel: Callable[..., tuple[Any, Any, Any]], pos: Position, d1: int, d2: int
) -> list[Move]:
    """:func:`legal_moves` from the compiled walk: the same plays, steps and order."""
    import numpy as np

    from bgbot.rules.position import positions_of_rows

    finals, steps, counts = kernel(np.array(pos.board, dtype=np.int8), d1, d2)
    n_steps = counts.tolist()
    if n_steps[0] == 0:
        return [_make_move((), pos.swap())]
    results = positions_of_rows(np.ascontiguousarray(finals[:, ::-1] * np.int8(-1)))  # the opponent's view
    moves = [
        _make_move(tuple([(a, b, h == 1) for a, b, h in rows[:k]]), r)
        for rows, k, r in zip(steps.tolist(), n_steps, results, strict=True)
    ]
    moves.sort(key=_sort_key)
    return moves


def play_texts(pos: Position, dice: object) -> dict[Position, str]:
    """The notation of every legal play of ``dice`` in ``pos``, by its result: what :attr:`Move.text` says.

    ``pos`` is from the side on roll's view, the results (the keys) from the
    opponent's view; the empty play is ``""``.  The same texts as
    ``{m.result: m.text for m in legal_moves(pos, dice)}``.
    """
    fmt = format_move
    return {r: fmt(steps) for r, steps in legal_steps(pos, dice).items()}


def legal_steps(pos: Position, dice: object) -> dict[Position, Sequence[Sequence[int]]]:
    """The steps of every legal play of ``dice`` in ``pos``, by its result, for :func:`format_move`.

    The steps ``legal_moves`` gives each result (``(from, to, hit)``, the mover's
    numbering; ``hit`` may be 0/1), without making the :class:`Move` objects when
    the compiled walk is in use; the results (keys) are from the opponent's
    view, the empty play has no steps.  In ``legal_moves``' order.
    """
    if not isinstance(pos, Position):
        raise InvalidPositionError(f"legal_steps needs a Position, got {pos!r}")
    d1, d2 = parse_dice(dice)
    kernel = _kernel()
    if kernel is None:
        return {m.result: m.steps for m in _legal_moves_walk(pos, d1, d2)}
    import numpy as np

    from bgbot.rules.position import positions_of_rows

    finals, steps, counts = kernel(np.array(pos.board, dtype=np.int8), d1, d2)
    n_steps = counts.tolist()
    if n_steps[0] == 0:
        return {pos.swap(): ()}
    results = positions_of_rows(np.ascontiguousarray(finals[:, ::-1] * np.int8(-1)))
    found = [(rows[:k], r) for rows, k, r in zip(steps.tolist(), n_steps, results, strict=True)]
    found.sort(key=_source_order)
    return {r: rows for rows, r in found}


def _source_order(item: tuple[list[list[int]], Position]) -> list[int]:
    return [-s[0] for s in item[0]]


def _legal_moves_walk(pos: Position, d1: int, d2: int) -> list[Move]:
    """:func:`legal_moves` as a plain-Python walk: the statement of the rule the compiled walk follows."""
    orders = [[d1] * 4] if d1 == d2 else [[d1, d2], [d2, d1]]
    # result -> (steps, dice used); the first sequence found for a result is kept
    found: dict[tuple[int, ...], tuple[tuple[Step, ...], tuple[int, ...]]] = {}

    def walk(b: list[int], rest: list[int], steps: tuple[Step, ...], used: tuple[int, ...], lo: int) -> None:
        moved = False
        if rest:
            d = rest[0]
            # with doubles, sources in non-increasing order reach every result once
            top = lo if d1 == d2 else 25
            for src in range(top, 0, -1):
                if b[src] <= 0:
                    continue  # no checker of the mover there (step would say None)
                s = step(b, src, d)
                if s is not None:
                    moved = True
                    nb_, st = s
                    walk(nb_, rest[1:], (*steps, st), (*used, d), src)
        if not moved:
            found.setdefault(tuple(b), (steps, used))

    base = list(pos.board)
    for order in orders:
        walk(base, order, (), (), 25)
    best = max(len(u) for _, u in found.values())
    keep = {k: v for k, v in found.items() if len(v[1]) == best}
    if best == 1 and d1 != d2 and any(u == (max(d1, d2),) for _, u in keep.values()):
        keep = {k: v for k, v in keep.items() if v[1] == (max(d1, d2),)}
    if best == 0:
        return [Move((), pos.swap())]
    # flip(k) by C-level map (the results are many; flip's generator expression costs more than the walk)
    moves = [Move(steps, Position._trusted(tuple(map(operator.neg, k[::-1])))) for k, (steps, _) in keep.items()]
    moves.sort(key=lambda m: [-s[0] for s in m.steps])
    return moves


_POINT_TEXT = ("off", *map(str, range(1, 25)), "bar")  # a point's name by its number (0 = off, 25 = bar)


def _point_text(p: int) -> str:
    return _POINT_TEXT[p] if 0 <= p <= 25 else str(p)


def format_move(steps: Iterable[Step]) -> str:
    """Standard notation for a sequence of ``(from, to, hit)`` steps (mover's numbering).

    A checker moving on is written as one path (``13/5``); points where it hit
    on the way stay in the path (``13/7*/5``).  Identical paths are grouped
    (``8/5(2)``), highest starting point first.  The empty move is ``""``.

    >>> format_move([(8, 5, False), (6, 5, False)])
    '8/5 6/5'
    >>> format_move([(25, 22, True), (13, 7, False)])
    'bar/22* 13/7'
    """
    if isinstance(steps, list | tuple) and len(steps) == 2:
        (s1, e1, h1), (s2, e2, h2) = steps  # the usual play: two dice, written without the loops below
        name = _point_text
        if s2 == e1:  # one checker moving on
            return name(s1) + ("/" + name(e1) + "*/" if h1 else "/") + name(e2) + ("*" if h2 else "")
        if s1 == s2 and e1 == e2:
            return name(s1) + "/" + name(e1) + ("*(2)" if h1 or h2 else "(2)")
        a = name(s1) + "/" + name(e1) + ("*" if h1 else "")
        b = name(s2) + "/" + name(e2) + ("*" if h2 else "")
        return f"{a} {b}" if (s1, e1) > (s2, e2) else f"{b} {a}"
    # one chain per checker: a step from where a chain ends (the latest such chain) moves that checker on
    starts: list[int] = []
    ends: list[int] = []
    mids: list[tuple[int, ...]] = []  # the points a chain passed through where it hit: they stay in its path
    end_hit: list[bool] = []
    for src, dst, hit in steps:
        k = len(ends) - 1
        while k >= 0 and ends[k] != src:
            k -= 1
        if k < 0:
            starts.append(src)
            ends.append(dst)
            mids.append(())
            end_hit.append(bool(hit))
        else:
            if end_hit[k]:
                mids[k] = (*mids[k], src)
            ends[k] = dst
            end_hit[k] = bool(hit)
    if len(starts) == 1:
        return _path_text(starts[0], mids[0], ends[0], end_hit[0])
    # identical paths are grouped; a point is marked when any of them hit there
    counts: dict[tuple[int, ...], list[int]] = {}
    for i, start in enumerate(starts):
        path = (start, *mids[i], ends[i])
        seen = counts.get(path)
        if seen is None:
            counts[path] = [1, end_hit[i]]
        else:
            seen[0] += 1
            seen[1] |= end_hit[i]
    parts = []
    for path in sorted(counts, key=_path_order):
        n, hit_end = counts[path]
        text = _path_text(path[0], path[1:-1], path[-1], bool(hit_end))
        parts.append(f"{text}({n})" if n > 1 else text)
    return " ".join(parts)


def _path_order(path: tuple[int, ...]) -> tuple[int, int]:
    return -path[0], -path[-1]


def _path_text(start: int, mids: tuple[int, ...], end: int, hit_end: bool) -> str:
    """One checker's path: ``13/5``, with the points it hit on the way (``13/7*/5``) and at the end (``6/2*``)."""
    name = _point_text
    head = name(start) + "/" + "".join([name(m) + "*/" for m in mids]) if mids else name(start) + "/"
    return head + name(end) + ("*" if hit_end else "")


_POINT = r"(?:bar|b|off|o|[0-9]{1,3})"
_PATH_RE = re.compile(rf"({_POINT})((?:[/-]{_POINT}\*?)+)(?:\(([0-9]{{1,3}})\))?")
_SEG_RE = re.compile(rf"[/-]({_POINT})(\*?)")


def _point_value(tok: str) -> int:
    if tok in ("bar", "b"):
        return 25
    if tok in ("off", "o"):
        return 0
    return int(tok)


class _Where:
    """The position and dice for an error message, formatted only when an error is raised."""

    def __init__(self, pos: Position, d1: int, d2: int) -> None:
        self.pos, self.d1, self.d2 = pos, d1, d2

    def __str__(self) -> str:
        return f" (position {gnubg_position_id(self.pos)!r}, dice {self.d1}{self.d2})"


def _parse_move_text(text: str, where: object) -> tuple[list[tuple[int, ...]], set[int]]:
    """Checker paths (with repeats expanded) and the points marked ``*`` in move text."""
    s = text.strip().lower()
    s = re.sub(r"\s*([/\-(])\s*", r"\1", s)
    s = re.sub(r"\s+([)*])", r"\1", s)
    paths: list[tuple[int, ...]] = []
    marks: set[int] = set()
    for token in (tok for tok in re.split(r"[\s,]+", s) if tok):
        m = _PATH_RE.fullmatch(token)
        if not m:
            raise InvalidMoveError(f"cannot read {token!r} as a checker move in {quote_input(text)}{where}")
        points = [_point_value(m.group(1))]
        for seg in _SEG_RE.finditer(m.group(2)):
            points.append(_point_value(seg.group(1)))
            if seg.group(2):
                marks.add(points[-1])
        if points[0] == 0 or any(p == 25 for p in points[1:]):
            raise InvalidMoveError(
                f"a checker moves from the bar and to off, not the other way, in {quote_input(text)}{where}"
            )
        if any(p > 25 for p in points):
            raise InvalidMoveError(f"points are 1..24, 'bar' or 'off' in {quote_input(text)}{where}")
        count = int(m.group(3)) if m.group(3) else 1
        if count < 1:
            raise InvalidMoveError(f"a repeat count must be at least 1 in {quote_input(text)}{where}")
        if count > 4:
            raise IllegalMoveError(
                f"at most 4 checkers move in one turn, not {count}: {quote_input(text)}{where}"
            )
        paths.extend([tuple(points)] * count)
    return paths, marks


def _simulate(
    board: Sequence[int], paths: Sequence[tuple[int, ...]], dice: tuple[int, ...]
) -> dict[tuple[int, ...], set[frozenset[int]]]:
    """Every final board (mover's view) reachable by playing ``paths`` with ``dice``, with its hits.

    Steps of different paths may interleave: with two checkers on the bar,
    ``bar/23(2)`` enters both before either moves on.
    """
    results: dict[tuple[int, ...], set[frozenset[int]]] = {}
    n = len(paths)
    nxt = [1] * n  # index in each path of the next point to reach
    cur = [p[0] for p in paths]  # where each path's checker stands now
    rest = list(dice)
    seen: set[tuple[object, ...]] = set()

    def walk(b: list[int], hits: frozenset[int]) -> None:
        # the board follows from where each checker stands and which blots were hit
        key = (tuple(nxt), tuple(cur), tuple(sorted(rest)), hits)
        if key in seen:
            return
        seen.add(key)
        done = True
        for k in range(n):
            path, j, c = paths[k], nxt[k], cur[k]
            if j == len(path):
                continue
            done = False
            # a path identical to an earlier one at the same progress gives the same boards
            if any(paths[e] == path and nxt[e] == j and cur[e] == c for e in range(k)):
                continue
            target = path[j]
            tried: set[int] = set()
            for i, d in enumerate(rest):
                if d in tried or (target and c - d < target):
                    continue
                tried.add(d)
                s = step(b, c, d)
                if s is None:
                    continue
                nb, (_, dst, hit) = s
                nxt[k], cur[k] = (j + 1 if dst == target else j), dst
                del rest[i]
                walk(nb, hits | {dst} if hit else hits)
                rest.insert(i, d)
                nxt[k], cur[k] = j, c
        if done:
            results.setdefault(tuple(b), set()).add(hits)

    walk(list(board), frozenset())
    return results


def parse_move(pos: Position, dice: object, text: str, *, legal: Sequence[Move] | None = None) -> Move:
    """The legal :class:`Move` that ``text`` means for ``dice`` in ``pos``.

    ``pos`` is from the side on roll's view (the steps use its numbering);
    ``Move.result`` is from the opponent's view.

    Accepts ``24/18 13/11``, ``bar/22*``, ``b/22``, ``25/22``, ``6/off``,
    ``6/0``, ``8/5(2)``, ``13/7*/5``, ``13/7/5``, ``13-7``, extra spaces, with
    or without ``*``; the empty text is the empty move (only when nothing can
    be played).  Paths may come in any order; each is played die by die
    through open points, hitting blots on the way, and the resulting position
    must be one of the legal results.  When the text fits several results,
    the ``*`` marks decide (a path written without ``*`` does not hit).

    ``legal`` may pass ``legal_moves(pos, dice)`` when the caller already has
    it, to save generating it again.

    Raises :class:`~bgbot.errors.InvalidMoveError` for unreadable text,
    :class:`~bgbot.errors.IllegalMoveError` when no legal move matches and
    :class:`~bgbot.errors.AmbiguousMoveError` when legal moves with different
    results match; messages quote the text, the Position ID and the dice.
    """
    if legal is None:
        legal = legal_moves(pos, dice)
    by_result = {m.result: m for m in legal}
    empty_ok = len(legal) == 1 and not legal[0].steps
    result = play_text(pos, dice, text, by_result, lambda r: format_move(by_result[r].steps), empty_ok=empty_ok)
    return by_result[result]


def play_text(
    pos: Position,
    dice: object,
    text: str,
    results: Collection[Position],
    describe: Callable[[Position], str],
    *,
    empty_ok: bool = False,
) -> Position:
    """The one result among ``results`` (legal results, opponent's view) that move ``text`` plays in ``pos``.

    The reading and the errors of :func:`parse_move`, for callers that hold
    only the legal results (an engine's reply checked against the batched
    generator).  ``describe`` names a result in the ambiguity message;
    ``empty_ok`` says whether the empty move is legal.
    """
    d1, d2 = parse_dice(dice)
    where = _Where(pos, d1, d2)
    if not isinstance(text, str):
        raise InvalidMoveError(f"a move must be text, got {quote_input(text)}{where}")
    paths, marks = _parse_move_text(text, where)
    if not paths:
        if empty_ok:
            return pos.swap()
        raise IllegalMoveError(f"the empty move {quote_input(text)} is not legal: a play exists{where}")
    for path in paths:
        if any(a <= c for a, c in itertools.pairwise(path)):
            raise IllegalMoveError(
                f"checkers move towards the 1-point, not {path!r}: {quote_input(text)}{where}"
            )
    n_dice = 4 if d1 == d2 else 2
    if sum(len(p) - 1 for p in paths) > n_dice:
        raise IllegalMoveError(f"{quote_input(text)} needs more than the {n_dice} dice rolled{where}")
    sims = _simulate(pos.board, paths, (d1,) * 4 if d1 == d2 else (d1, d2))
    matched: dict[Position, set[frozenset[int]]] = {}
    for final, hit_sets in sims.items():
        # a result is from the opponent's view: swap the mover's final board
        result = Position(flip(final), validate=False)
        if result in results:
            matched.setdefault(result, set()).update(hit_sets)
    if len(matched) > 1:
        marked = {r: h for r, h in matched.items() if frozenset(marks) in h}
        if len(marked) == 1:
            matched = marked
    if not matched:
        raise IllegalMoveError(f"{quote_input(text)} is not a legal play{where}")
    if len(matched) > 1:
        options = ", ".join(sorted(repr(describe(r)) for r in matched))
        raise AmbiguousMoveError(f"{quote_input(text)} could mean {options}{where}")
    return next(iter(matched))

