"""Match equity tables (METs): the chance of winning a match from a given score.

Scores are *away* scores: the number of points a player still needs.  Every
function here answers for "me", one named side (in cube decisions the side on
roll); the other side's chance is ``1 - mwc``.

Two 25-point tables from GNU Backgammon ship with bgbot (``bgbot/data/met``):

* ``kazaross-xg2`` (the default): XG rollouts to 9 points, gnubg rollouts to 15,
  extended to 25 by projecting take points;
* ``rockwell-kazaross``: gnubg rollouts to 15 points, extended the same way.

Each JSON file holds ``pre_crawford[i][j]``, the chance of the player who is
``i+1``-away when the opponent is ``j+1``-away (used for the Crawford game as
well), and ``post_crawford[k]``, the chance of the *trailer* who is ``k+1``-away
against a 1-away leader after the Crawford game.  ``source`` says where the
numbers come from.  No torch, numpy or engine code is imported: this module
loads in milliseconds.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bgbot.errors import MetError, as_integer

__all__ = [
    "DEFAULT_MET",
    "SHIPPED_METS",
    "MatchEquityTable",
    "MetError",
    "load_met",
]

DEFAULT_MET = "kazaross-xg2"
SHIPPED_METS: tuple[str, ...] = ("kazaross-xg2", "rockwell-kazaross")


@dataclass(frozen=True)
class MatchEquityTable:
    """A match equity table of ``length`` points (probabilities, not equities).

    ``pre_crawford[i][j]``: match winning chance of the player ``i+1``-away
    against ``j+1``-away, before the Crawford game and in it.
    ``post_crawford[k]``: chance of the trailer ``k+1``-away against a 1-away
    leader in the games after the Crawford game.
    """

    name: str
    length: int
    pre_crawford: tuple[tuple[float, ...], ...] = field(repr=False)
    post_crawford: tuple[float, ...] = field(repr=False)
    description: str = field(default="", repr=False)
    source: str = field(default="", repr=False)

    def mwc(
        self, away_me: int, away_opp: int, *, crawford: bool = False, post_crawford: bool = False
    ) -> float:
        """Match winning chance of "me" at the start of a game at this score.

        ``away_me``/``away_opp`` are the points each side still needs; 0 or
        less means that side has already won (1.0 or 0.0).  With one side
        1-away the game is either the Crawford game (``crawford=True``, the
        default reading of the table: ``pre_crawford``) or a later game
        (``post_crawford=True``: the post-Crawford table, whose value for the
        leader is ``1 - post_crawford[trailer]``).  Both flags only make sense
        with a side 1-away; giving one without raises :class:`MetError`, as do
        both together and a score beyond the table's length.
        """
        a = _away(away_me, "away_me")
        b = _away(away_opp, "away_opp")
        if crawford and post_crawford:
            raise MetError(f"a game cannot be both Crawford and post-Crawford (score {a!r}-away, {b!r}-away)")
        if a <= 0 and b <= 0:
            raise MetError(f"both sides cannot have won the match: away_me={a!r}, away_opp={b!r}")
        if a <= 0:
            return 1.0
        if b <= 0:
            return 0.0
        for away, what in ((a, "away_me"), (b, "away_opp")):
            if away > self.length:
                raise MetError(
                    f"{what}={away!r} is beyond the {self.length}-point match equity table {self.name!r}"
                )
        if (crawford or post_crawford) and a != 1 and b != 1:
            flag = "crawford" if crawford else "post_crawford"
            raise MetError(f"{flag}=True needs a side 1-away, but the score is {a!r}-away, {b!r}-away")
        if post_crawford:
            if a == 1:
                return 1.0 - self.post_crawford[b - 1]
            return self.post_crawford[a - 1]
        return self.pre_crawford[a - 1][b - 1]

    def mwc_after(
        self,
        away_me: int,
        away_opp: int,
        points: int,
        *,
        crawford: bool = False,
        post_crawford: bool = False,
    ) -> float:
        """Match winning chance of "me" after the current game ends.

        ``points`` > 0: I win that many points; < 0: the opponent wins
        ``-points``.  ``crawford``/``post_crawford`` describe the *current*
        game.  The next game is post-Crawford when the current game is already
        the Crawford game or a post-Crawford one (and someone is then 1-away);
        otherwise a side reaching 1-away makes the next game the Crawford game,
        read from ``pre_crawford``.
        """
        pts = _away(points, "points")
        a = _away(away_me, "away_me")
        b = _away(away_opp, "away_opp")
        if a <= 0 or b <= 0:
            raise MetError(f"the match is already over at {a!r}-away, {b!r}-away")
        if pts == 0:
            raise MetError("a game always ends with some points won: points=0")
        new_a, new_b = (a - pts, b) if pts > 0 else (a, b + pts)
        if new_a <= 0:
            return 1.0
        if new_b <= 0:
            return 0.0
        already_crawford = crawford or post_crawford or a == 1 or b == 1
        next_post = already_crawford and (new_a == 1 or new_b == 1)
        return self.mwc(new_a, new_b, post_crawford=next_post)

    def is_symmetric(self, tol: float = 1e-9) -> bool:
        """True when ``mwc(a, b) + mwc(b, a) == 1`` for every pre-Crawford score."""
        n = self.length
        pc = self.pre_crawford
        return all(abs(pc[i][j] + pc[j][i] - 1.0) <= tol for i in range(n) for j in range(n))


def _away(value: object, what: str) -> int:
    return as_integer(value, what, MetError, "an integer number of points")


def load_met(name_or_path: str | Path = DEFAULT_MET) -> MatchEquityTable:
    """Load a shipped table by name (see :data:`SHIPPED_METS`) or a JSON file in the same format.

    A path must name a file with ``name``, ``length`` (>= 1), ``pre_crawford``
    (``length`` x ``length`` probabilities) and ``post_crawford`` (``length``
    probabilities).  Any problem raises :class:`MetError` quoting the path.
    """
    if isinstance(name_or_path, str) and name_or_path in SHIPPED_METS:
        from importlib import resources  # only here: it pulls in tempfile, urllib, ... (import time)

        resource = resources.files("bgbot") / "data" / "met" / f"{name_or_path}.json"
        where = f"bgbot/data/met/{name_or_path}.json"
        try:
            text = resource.read_text(encoding="utf-8")
        except OSError as exc:  # a broken installation, not a user mistake, but still say which file
            raise MetError(f"cannot read the shipped match equity table {where!r}: {exc}") from None
        return _parse(text, where)
    path = Path(name_or_path)
    if not path.is_file():
        raise MetError(
            f"no match equity table {str(name_or_path)!r}: not a shipped table "
            f"({', '.join(SHIPPED_METS)}) nor an existing file"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MetError(f"cannot read match equity table file {str(path)!r}: {exc}") from None
    return _parse(text, str(path))


def _parse(text: str, where: str) -> MatchEquityTable:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MetError(f"match equity table file {where!r} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise MetError(f"match equity table file {where!r} must hold a JSON object")
    for key in ("length", "pre_crawford", "post_crawford"):
        if key not in data:
            raise MetError(f"match equity table file {where!r} has no {key!r} field")
    length = data["length"]
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise MetError(
            f"match equity table file {where!r}: 'length' must be a positive integer, got {length!r}"
        )
    pre = data["pre_crawford"]
    if not isinstance(pre, list) or len(pre) != length:
        raise MetError(f"match equity table file {where!r}: 'pre_crawford' must have {length} rows")
    rows = tuple(_row(r, length, where, f"pre_crawford[{i}]") for i, r in enumerate(pre))
    post = _row(data["post_crawford"], length, where, "post_crawford")
    name = data.get("name", Path(where).stem)
    if not isinstance(name, str):
        raise MetError(f"match equity table file {where!r}: 'name' must be text, got {name!r}")
    return MatchEquityTable(
        name=name,
        length=length,
        pre_crawford=rows,
        post_crawford=post,
        description=str(data.get("description", "")),
        source=str(data.get("source", "")),
    )


def _row(values: Any, length: int, where: str, what: str) -> tuple[float, ...]:
    if not isinstance(values, list) or len(values) != length:
        raise MetError(f"match equity table file {where!r}: {what} must be a list of {length} numbers")
    out = []
    for k, v in enumerate(values):
        ok = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and 0.0 <= v <= 1.0
        if not ok:
            raise MetError(f"match equity table file {where!r}: {what}[{k}] = {v!r} is not a probability")
        out.append(float(v))
    return tuple(out)
