"""wildbg-compatible ``GET /move`` and ``GET /eval``: the same query parameters and response fields as wildbg's web API.

wildbg's conventions (its ``web_api.rs`` and OpenAPI page), which happen to be
bgbot's own: the player on turn ``x`` moves from pip 24 to pip 1; ``p1``..``p24``
are its points, positive counts its checkers and negative counts the
opponent's; ``p25`` is x's bar (>= 0) and ``p0`` the opponent's bar (<= 0); pips
without checkers are left out and checkers not on the board are borne off.
``x_away``/``o_away`` are the points each side still needs (both 0 or left
out: money game).  wildbg itself answers only money games and 1-pointers;
bgbot answers any match length its match equity table covers (the longer
side's away count is the match length; a side 1-away while the other is not
is taken as the post-Crawford game unless ``crawford=true``; ``crawford`` is ``true`` or
``false``, any other value is an error).  Dice are ``die1`` and ``die2``, each a whole number 1-6, as in wildbg
(no other spelling of a roll).

Responses, as wildbg writes them:

* ``/move``: ``{"moves": [{"play": [{"from": 24, "to": 18}, ...], "probabilities": {...}}, ...]}``, best
  first; ``play`` lists single-checker steps (up to 4 for doubles, each die its own step, 25 = bar,
  0 = off), empty when no checker can move; probabilities are the mover's after its move.
* ``/eval``: ``{"cube": {"double": bool, "accept": bool}, "probabilities": {...}}`` for x before it
  rolls; ``double`` is whether x should double, ``accept`` whether o should take.
* probabilities: ``{"win", "winG", "winBg", "loseG", "loseBg"}``, gammons including backgammons.
* errors: HTTP 400 with ``{"message": "..."}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bgbot.errors import InvalidScoreError, ascii_int, quote_input
from bgbot.rules.dice import Dice
from bgbot.rules.matchstate import CubeState
from bgbot.rules.moves import step
from bgbot.rules.position import Position
from bgbot.serve.service import FieldError, Service, field

PIP_NAMES = tuple(f"p{i}" for i in range(26))


def probabilities_view(probs: Any) -> dict[str, float]:
    """bgbot's five probabilities under wildbg's names (``win``, ``winG``, ``winBg``, ``loseG``, ``loseBg``)."""
    w, wg, wbg, lg, lbg = (float(v) for v in probs)
    return {"win": w, "winG": wg, "winBg": wbg, "loseG": lg, "loseBg": lbg}


def _int_param(params: Mapping[str, str], name: str, lo: int, hi: int) -> int | None:
    """The query parameter ``name`` as a whole number in ``lo..hi``, None when absent; else a :class:`FieldError`."""
    text = params.get(name)
    if text is None:
        return None
    try:
        value = ascii_int(text)
    except ValueError:
        digits = text.strip().lstrip("+-")
        if digits and digits.isascii() and digits.isdigit():  # a whole number, only too long to read
            raise FieldError(
                name, f"{name} must be between {lo} and {hi}, got {quote_input(text)} (out of range)", "InvalidIdError"
            ) from None
        raise FieldError(name, f"{name} must be a whole number, got {quote_input(text)}", "InvalidIdError") from None
    if not lo <= value <= hi:
        raise FieldError(name, f"{name} must be between {lo} and {hi}, got {text!r}", "InvalidPositionError")
    return value


TRUE = ("true", "1", "yes", "on")
FALSE = ("false", "0", "no", "off")


def _bool_param(params: Mapping[str, str], name: str) -> bool:
    """The query parameter ``name`` as a boolean (``true``/``false``, ``1``/``0``, ``yes``/``no``, ``on``/``off``,
    any case; absent: false); any other value is a :class:`FieldError` quoting it."""
    text = params.get(name)
    if text is None:
        return False
    word = text.strip().lower()
    if word in TRUE:
        return True
    if word in FALSE:
        return False
    raise FieldError(name, f"{name} must be true or false, got {quote_input(text)}", "InvalidScoreError")


def position_from_pips(params: Mapping[str, str]) -> Position:
    """The position (x on roll, x's view) that ``p0``..``p25`` describe; checkers not given are borne off."""
    board = [0] * 26
    for i, name in enumerate(PIP_NAMES):
        v = _int_param(params, name, -15, 15)
        if v is None:
            continue
        if i == 0 and v > 0:
            raise FieldError(name, f"p0 is the bar of the opponent o: its count must be <= 0, got {params[name]!r}")
        if i == 25 and v < 0:
            raise FieldError(name, f"p25 is the bar of the player x: its count must be >= 0, got {params[name]!r}")
        board[i] = v
    with field("p0..p25"):
        return Position(board)


def cube_state_from_away(params: Mapping[str, str]) -> CubeState:
    """Money game for ``x_away = o_away = 0`` (or both left out), else the match score they describe."""
    x = _int_param(params, "x_away", 0, 64) or 0
    o = _int_param(params, "o_away", 0, 64) or 0
    crawford = _bool_param(params, "crawford")
    if x == 0 and o == 0:
        if crawford:
            raise FieldError(
                "crawford", "crawford=true needs a match: give x_away and o_away (one of them 1)", "InvalidScoreError"
            )
        return CubeState()
    if x == 0 or o == 0:
        name = "x_away" if x == 0 else "o_away"
        raise FieldError(
            name,
            f"x_away and o_away are both 0 (money game) or both >= 1, got x_away={x!r}, o_away={o!r}",
            "InvalidScoreError",
        )
    length = max(x, o)
    with field("x_away/o_away"):
        try:
            return CubeState(match=length, score=(length - x, length - o), crawford=crawford)
        except InvalidScoreError as exc:
            raise FieldError("crawford", str(exc), "InvalidScoreError") from None


def _step(board: list[int], src: int, die: int) -> list[int] | None:
    out = step(board, src, die)
    return None if out is None else out[0]


def _both(board: list[int], src1: int, d1: int, src2: int, d2: int) -> list[int] | None:
    first = _step(board, src1, d1)
    return None if first is None or src2 < 1 else _step(first, src2, d2)


def wildbg_play(old: Position, new: Position, dice: Dice) -> list[dict[str, int]]:
    """The single-checker steps from ``old`` to ``new`` (both the mover's view), split and ordered as wildbg does.

    Doubles: from the highest point down, one die at a time.  Other rolls: a
    checker moved twice takes the smaller die first where that lands on the
    same result (a hit on the way decides), else the larger; two checkers moved
    are tried as (higher point with the larger die, lower with the smaller),
    then the other three pairings.  25 is the bar, 0 borne off.
    """
    ob, nb = list(old.board), list(new.board)
    d1, d2 = dice
    details: list[dict[str, int]] = []
    if d1 == d2:
        cur, index = ob, 25
        while index > 0 and len(details) < 4:
            if cur[index] > nb[index]:
                nxt = _step(cur, index, d1)
                if nxt is None:
                    break
                cur = nxt
                details.append({"from": index, "to": max(index - d1, 0)})
            else:
                index -= 1
        return details
    small, big = min(d1, d2), max(d1, d2)
    froms: list[int] = []
    for i in range(25, 0, -1):
        diff = ob[i] - max(0, nb[i])
        if diff >= 2:
            froms = [i, i]
            break
        if diff == 1:
            froms.append(i)
    if not froms:
        return []
    if len(froms) == 1:
        src = froms[0]
        for a, b in ((small, big), (big, small)):
            if _both(ob, src, a, src - a, b) == nb:
                return [{"from": src, "to": src - a}, {"from": src - a, "to": max(src - a - b, 0)}]
        for a in (small, big):
            if _step(ob, src, a) == nb:
                return [{"from": src, "to": max(src - a, 0)}]
        return []
    f1, f2 = froms[0], froms[1]
    for a, da, b, db in ((f1, big, f2, small), (f1, small, f2, big), (f2, big, f1, small), (f2, small, f1, big)):
        if _both(ob, a, da, b, db) == nb:
            return [{"from": a, "to": max(a - da, 0)}, {"from": b, "to": max(b - db, 0)}]
    return []


def wildbg_move(service: Service, params: Mapping[str, str]) -> dict[str, Any]:
    """wildbg's ``/move`` answer at the server's default ply: every legal play, best first."""
    die1 = _int_param(params, "die1", 1, 6)
    die2 = _int_param(params, "die2", 1, 6)
    if die1 is None or die2 is None:
        missing = "die1" if die1 is None else "die2"
        raise FieldError(missing, f"missing query parameter {missing!r} (a die 1-6)", "InvalidDiceError")
    pos = position_from_pips(params)
    cs = service.check_match(cube_state_from_away(params))
    if pos.is_game_over():
        raise FieldError("p0..p25", f"the game is over in {pos.gnubg_id()!r}: nobody moves", "InvalidPositionError")
    with field("p0..p25"):
        a = service.engine.best_move(pos, (die1, die2), service.config.ply, cs)
    moves = []
    for c in a.candidates:
        play = wildbg_play(pos, c.result.swap(), (die1, die2))
        moves.append({"play": play, "probabilities": probabilities_view(c.probs)})
    return {"moves": moves}


def wildbg_eval(service: Service, params: Mapping[str, str]) -> dict[str, Any]:
    """wildbg's ``/eval`` answer: x's probabilities before it rolls and the cube decision of both sides."""
    pos = position_from_pips(params)
    cs = service.check_match(cube_state_from_away(params))
    if pos.is_game_over():
        raise FieldError(
            "p0..p25", f"the game is over in {pos.gnubg_id()!r}: nothing to evaluate", "InvalidPositionError"
        )
    with field("p0..p25"):
        probs = service.engine.evaluate(pos, service.config.ply)
        d = service.engine.cube_action(pos, cs, ply=service.config.ply)
    return {"cube": {"double": d.doubles, "accept": d.takes}, "probabilities": probabilities_view(probs)}
