"""Everything about a game besides the checkers: score, cube, turn, dice.

A :class:`MatchState` carries what gnubg's Match ID and an XGID carry next to
the board.  Players are *absolute*: player 0 and player 1 keep their numbers
for the whole match, while a :class:`~bgbot.rules.position.Position` is always seen
from the side on roll.  ``on_roll`` says which absolute player that is, so a
``(Position, MatchState)`` pair describes the situation completely.

Conventions shared by :mod:`bgbot.formats`:

* gnubg Match ID: players 0 and 1 are gnubg's players 0 and 1.
* XGID: player 0 is the bottom player (upper-case letters, ``turn`` = 1),
  player 1 the top player.  (gnubg's ``set xgid`` numbers them the other way
  round; the situation described is the same.)
* FIBS board: player 0 is O (colour +1), player 1 is X (colour -1).

Limits decided here (and why):

* ``cube_value`` is a power of two from 1 to 2**15: the Match ID stores its
  logarithm in 4 bits.  The rule book caps a real game at the 64 face; that
  cap belongs to the game runner, not to a record of a position.
* ``max_cube`` (the XGID's last field) is a power of two from 1 to 2**15 and
  defaults to 1024, the value eXtreme Gammon writes (``:10``).  gnubg ignores
  it; it is not checked against ``cube_value``.
* ``match_length`` and the scores fit the Match ID's 15-bit fields.  In a
  match a score may equal the match length only once the game is over.
"""

from __future__ import annotations

import contextlib
import numbers
import re
from dataclasses import dataclass
from typing import Literal, NoReturn, cast

from bgbot.errors import InvalidCubeError, InvalidIdError, InvalidScoreError, ascii_int

MAX_FIELD = 2**15 - 1  # the Match ID's 15-bit score and length fields
MATCH_ID_MAX_CUBE = 2**15  # 4 bits of log2 in the Match ID: the highest cube a state can hold
MAX_CUBE = 64  # the highest cube value bgbot plays to and decides about (gnubg's cube faces)

# gnubg's game states (Match ID bits 9-11)
GAME_NONE, GAME_PLAYING, GAME_OVER, GAME_RESIGNED, GAME_DROP = range(5)


def _is_power_of_two(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


@dataclass(frozen=True)
class MatchState:
    """Score, cube, turn and dice of a backgammon position; players are absolute (0 and 1).

    The :class:`~bgbot.rules.position.Position` that goes with a state is seen from
    ``on_roll``'s side.  ``turn`` is the player who must make the next
    decision: ``on_roll`` normally, the opponent while a double (or a
    resignation) is pending.  Passing ``turn=None`` fills it in (``on_roll``, or
    the opponent when ``doubled``), so after construction it is always an int.

    Invalid combinations raise :class:`~bgbot.errors.InvalidIdError` quoting
    the offending values.

    >>> MatchState(match_length=7, score=(6, 4), crawford=True).away(0)
    1
    """

    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    cube_value: int = 1
    cube_owner: int = -1
    on_roll: int = 0
    turn: int | None = None
    doubled: bool = False
    dice: tuple[int, int] | None = None
    crawford: bool = False
    jacoby: bool = False
    game_state: int = GAME_PLAYING
    resign: int = 0
    max_cube: int = 1024
    beaver: bool = False

    def __post_init__(self) -> None:
        # normalise first, so that lists and numpy scalars from callers compare equal to plain values
        set_ = object.__setattr__
        for name in ("match_length", "cube_value", "cube_owner", "on_roll", "turn", "game_state", "resign",
                     "max_cube"):
            set_(self, name, _plain(getattr(self, name)))
        for name in ("doubled", "crawford", "jacoby", "beaver"):
            value = getattr(self, name)
            if type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_"):
                set_(self, name, bool(value))
        for name, what in (("score", "two integers"), ("dice", "None or two integers 1-6")):
            value = getattr(self, name)
            if value is None and name == "dice":
                continue
            try:
                set_(self, name, tuple(_plain(x) for x in value))
            except TypeError:
                _bad(f"{name} must be {what}, got {value!r}")
        if self.turn is None:
            set_(self, "turn", 1 - self.on_roll if self.doubled and self.on_roll in (0, 1) else self.on_roll)
        self._validate()

    def _validate(self) -> None:
        _int_field("match_length", self.match_length, 0, MAX_FIELD)
        if len(self.score) != 2:
            _bad(f"score must be two integers, got {self.score!r}")
        for s in self.score:
            _int_field("score", s, 0, MAX_FIELD, whole=self.score)
        _int_field("cube_value", self.cube_value, 1, MATCH_ID_MAX_CUBE)
        if not _is_power_of_two(self.cube_value):
            _bad(f"cube_value must be a power of two, got {self.cube_value!r}")
        _int_field("max_cube", self.max_cube, 1, MATCH_ID_MAX_CUBE)
        if not _is_power_of_two(self.max_cube):
            _bad(f"max_cube must be a power of two, got {self.max_cube!r}")
        if self.cube_owner not in (-1, 0, 1) or isinstance(self.cube_owner, bool):
            _bad(f"cube_owner must be -1 (centred), 0 or 1, got {self.cube_owner!r}")
        for name in ("on_roll", "turn"):
            value = getattr(self, name)
            if value not in (0, 1) or isinstance(value, bool):
                _bad(f"{name} must be player 0 or 1, got {value!r}")
        for name in ("doubled", "crawford", "jacoby", "beaver"):
            if not isinstance(getattr(self, name), bool):
                _bad(f"{name} must be True or False, got {getattr(self, name)!r}")
        _int_field("game_state", self.game_state, 0, 4)
        _int_field("resign", self.resign, 0, 3)
        if self.dice is not None and (
            len(self.dice) != 2
            or not all(isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= 6 for d in self.dice)
        ):
            _bad(f"dice must be None or two integers 1-6, got {self.dice!r}")

        if self.match_length:
            over = self.game_state in (GAME_OVER, GAME_RESIGNED, GAME_DROP)
            for s in self.score:
                if s > self.match_length or (s == self.match_length and not over):
                    _bad(
                        f"score {self.score!r} does not fit a {self.match_length}-point match "
                        f"(game state {self.game_state})"
                    )
            if min(self.score) >= self.match_length:
                _bad(f"both players cannot have won: score {self.score!r} to {self.match_length}")
            if self.crawford:
                if self.match_length == 1:
                    _bad("a 1-point match has no Crawford game (both sides are 1-away from the start)")
                if self.match_length - 1 not in self.score:
                    _bad(
                        f"crawford=True needs a player 1-away, score {self.score!r} to {self.match_length}"
                    )
                if self.cube_value != 1 or self.cube_owner != -1 or self.doubled:
                    _bad(
                        "the cube is out of play in the Crawford game: "
                        f"cube {self.cube_value!r}, owner {self.cube_owner!r}, doubled {self.doubled!r}"
                    )
            if self.beaver:
                _bad("beavers are a money-game option, not allowed in a match")
        elif self.crawford:
            _bad(f"crawford=True needs a match, got match_length={self.match_length!r}")

        if self.doubled:
            if self.turn == self.on_roll:
                _bad(
                    f"a pending double is answered by the opponent: on_roll={self.on_roll}, turn={self.turn}"
                )
            if self.dice is not None:
                _bad(f"a double is offered before rolling, but dice={self.dice!r}")
            if self.cube_owner == 1 - self.on_roll:
                _bad(f"player {self.on_roll} cannot double a cube owned by player {self.cube_owner}")
        elif self.turn != self.on_roll and not self.resign:
            _bad(
                f"turn={self.turn} differs from on_roll={self.on_roll} "
                "without a pending double or resignation"
            )

    # ---- helpers ------------------------------------------------------
    @property
    def is_money(self) -> bool:
        """True for a money game (``match_length == 0``)."""
        return self.match_length == 0

    def away(self, player: int) -> int:
        """Points ``player`` (absolute, 0 or 1) still needs to win the match.

        Raises :class:`~bgbot.errors.InvalidIdError` in a money game, which has no
        away score.
        """
        if player not in (0, 1):
            _bad(f"player must be 0 or 1, got {player!r}")
        if self.is_money:
            _bad("a money game has no away score")
        return self.match_length - self.score[player]

    def at_decision(
        self,
        on_roll: int | None = None,
        *,
        doubled: bool = False,
        dice: tuple[int, int] | None = None,
        jacoby: bool | None = None,
    ) -> MatchState:
        """The same match, score and cube at a decision of ``on_roll`` (default: the same player).

        ``doubled`` marks a pending double of ``on_roll``; ``dice`` the roll to
        play; ``turn`` is derived again; resignations and the game state are
        those of a game in play.
        """
        who = self.on_roll if on_roll is None else on_roll
        jac = self.jacoby if jacoby is None else jacoby
        if (
            type(who) is int and who in (0, 1) and type(doubled) is bool and type(jac) is bool
            and (dice is None or (type(dice) is tuple and len(dice) == 2
                                  and all(type(d) is int and 1 <= d <= 6 for d in dice)))
            and (not self.match_length or max(self.score) < self.match_length)
            and (not doubled or (dice is None and not self.crawford and self.cube_owner != 1 - who))
        ):  # fmt: skip
            # this state was validated, and the fields that change are plain and fit it: what
            # MatchState(...) below would build, without checking everything again (the engine makes
            # several of these a decision)
            return _trusted_state(self.match_length, self.score, self.cube_value, self.cube_owner, who,
                                  1 - who if doubled else who, doubled, dice, self.crawford, jac)
        return MatchState(
            match_length=self.match_length,
            score=self.score,
            cube_value=self.cube_value,
            cube_owner=self.cube_owner,
            on_roll=who,
            doubled=doubled,
            dice=dice,
            crawford=self.crawford,
            jacoby=jac,
        )

    @property
    def may_double(self) -> bool:
        """True when ``on_roll`` may usefully double now (gnubg's ``GetDPEq``); see :func:`cube_available`."""
        return cube_available(
            self.match_length, self.score, self.cube_value, self.cube_owner, self.on_roll, self.crawford
        )

    def cube_owner_relative(self) -> Literal["center", "me", "opp"]:
        """Who owns the cube from ``on_roll``'s point of view."""
        if self.cube_owner == -1:
            return "center"
        return "me" if self.cube_owner == self.on_roll else "opp"


def _trusted_state(
    match_length: int,
    score: tuple[int, int],
    cube_value: int,
    cube_owner: int,
    on_roll: int,
    turn: int,
    doubled: bool,
    dice: tuple[int, int] | None,
    crawford: bool,
    jacoby: bool,
) -> MatchState:
    """A :class:`MatchState` of a game in play from fields known to be valid together (no checks): the
    copies the engine derives from a validated state.  The other fields take their defaults."""
    state = object.__new__(MatchState)
    object.__setattr__(state, "__dict__", {
        "match_length": match_length, "score": score, "cube_value": cube_value, "cube_owner": cube_owner,
        "on_roll": on_roll, "turn": turn, "doubled": doubled, "dice": dice, "crawford": crawford,
        "jacoby": jacoby, "game_state": GAME_PLAYING, "resign": 0, "max_cube": 1024, "beaver": False,
    })  # fmt: skip
    return state


def crawford_game(match_length: int, score: tuple[int, int], crawford_played: bool) -> bool:
    """Whether the next game of a match at ``score`` (players 0 and 1) is the Crawford game.

    It is the first game after a player reaches ``match_length - 1`` (gnubg's
    ``ApplyGameOver``).  A 1-point match has none: both players are 1-away at
    0-0 and every game is played as gnubg's post-Crawford play, with the cube
    dead (:func:`cube_available`).  ``crawford_played``: the Crawford game is
    already behind.
    """
    return match_length > 1 and not crawford_played and (match_length - 1) in score


def cube_available(
    match_length: int, score: tuple[int, int], cube: int, owner: int, player: int, crawford: bool
) -> bool:
    """Whether ``player`` (0/1, on roll before rolling) may double: gnubg's cube availability (``GetDPEq``).

    The cube must be centred or ``player``'s and below 64.  In a match it is
    also dead in the Crawford game and for a player whom the current cube
    already gives the match (``score[player] + cube >= match_length``), which
    covers a 1-point match and the leader after the Crawford game: doubling
    there cannot gain, so gnubg's players never do and bgbot never offers it.
    """
    if owner not in (-1, player) or cube >= MAX_CUBE:
        return False
    if not match_length:
        return True
    return not crawford and score[player] + cube < match_length


def _plain(value: object) -> object:
    """``int(value)`` for integer-like values (numpy included), anything else unchanged."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    return value


def _bad(message: str) -> NoReturn:
    raise InvalidIdError(f"invalid match state: {message}")


def _int_field(name: str, value: object, lo: int, hi: int, *, whole: object = None) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        shown = whole if whole is not None else value
        _bad(f"{name} must be an integer {lo}..{hi}, got {shown!r}")


# ---------------------------------------------------------------------------
# the cube situation seen from the side on roll (what the engine decides on)
# ---------------------------------------------------------------------------

Owner = Literal["center", "me", "opp"]
OWNERS: tuple[str, ...] = ("center", "me", "opp")
MAX_MATCH = 25  # the longest match the match equity tables cover


def parse_cube_value(value: object) -> int:
    """A cube value: a power of two from 1 to 64, as an int or text (``InvalidCubeError`` otherwise)."""
    v: object = value
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            v = ascii_int(value)
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_CUBE or v & (v - 1):
        raise InvalidCubeError(f"the cube value must be a power of two from 1 to 64, got {value!r}")
    return v


def parse_owner(value: object) -> Owner:
    """Cube owner seen from the side on roll: ``'center'`` (or ``'centre'``), ``'me'`` or ``'opp'``."""
    text = value.strip().lower() if isinstance(value, str) else value
    if text == "centre":
        text = "center"
    if text not in OWNERS:
        raise InvalidCubeError(f"the cube owner must be one of me, opp, center, got {value!r}")
    return cast("Owner", text)


def parse_score(value: object) -> tuple[int, int]:
    """A score ``(side on roll, opponent)`` in points won so far: a pair of ints or text like ``'2-4'``."""
    if isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9]{1,5})\s*[-:,/ ]\s*([0-9]{1,5})\s*", value)
        if not m:
            raise InvalidScoreError(f"a score is two numbers like '2-4' (side on roll first), got {value!r}")
        return int(m.group(1)), int(m.group(2))
    try:
        a, b = value  # type: ignore[misc]
    except (TypeError, ValueError):
        raise InvalidScoreError(f"a score is two integers (side on roll, opponent), got {value!r}") from None
    if any(isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 0 for s in (a, b)):
        raise InvalidScoreError(f"a score is two integers >= 0 (side on roll, opponent), got {value!r}")
    return int(a), int(b)


def parse_match(value: object) -> int:
    """A match length in points (0 = money game), as an int or text (``InvalidScoreError`` otherwise)."""
    v: object = value
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            v = ascii_int(value)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise InvalidScoreError(f"the match length is a whole number of points (0 = money game), got {value!r}")
    return v


def _check_cube_state(
    cube: object,
    owner: object,
    match: object,
    score: object,
    crawford: object,
    jacoby: object,
    max_match: int = MAX_MATCH,
) -> tuple[int, Owner, int, tuple[int, int], bool, bool]:
    """Validate a cube situation; returns ``(cube, owner, match, score, crawford, jacoby)`` normalised.

    Raises :class:`~bgbot.errors.InvalidCubeError` for a cube that cannot be
    (an owned cube at 1, a centred cube above 1 in a match, a turned cube in
    the Crawford game) and :class:`~bgbot.errors.InvalidScoreError` for a
    score that does not fit the match.
    """
    value = parse_cube_value(cube)
    own = parse_owner(owner)
    length = parse_match(match)
    me, opp = parse_score(score)
    if not isinstance(crawford, bool) or not isinstance(jacoby, bool):
        raise InvalidScoreError(f"crawford and jacoby are True or False, got {crawford!r} and {jacoby!r}")
    if own != "center" and value == 1:
        raise InvalidCubeError(f"an owned cube has been turned, so it is at least 2: owner {own!r}, cube 1")
    if length == 0:
        if (me, opp) != (0, 0):
            raise InvalidScoreError(f"a money game has no score, got {score!r} (give a match length)")
        if crawford:
            raise InvalidScoreError("the Crawford rule belongs to matches, not to a money game (match 0)")
        return value, own, 0, (0, 0), False, jacoby
    if jacoby:
        raise InvalidScoreError("the Jacoby rule applies to money games only, not to a match")
    if length > max_match:
        raise InvalidScoreError(f"match length {length!r} is beyond the {max_match}-point match equity table")
    if not (me < length and opp < length):
        raise InvalidScoreError(
            f"score {me}-{opp} is impossible in a {length}-point match (both must be below {length})"
        )
    if own == "center" and value != 1:
        raise InvalidCubeError(f"a centred cube in a match is always 1, got cube {value!r} owned by nobody")
    if crawford:
        if (me == length - 1) == (opp == length - 1):
            raise InvalidScoreError(
                f"the Crawford game needs exactly one side 1-away, got {me}-{opp} in a {length}-point match"
            )
        if value != 1:
            raise InvalidCubeError(f"the cube is out of play in the Crawford game, got cube {value!r}")
    return value, own, length, (me, opp), crawford, False


_OWNER_PLAYER = {"center": -1, "me": 0, "opp": 1}  # a CubeState's owner as a MatchState's (side on roll = 0)


@dataclass(frozen=True)
class CubeState:
    """The cube and score **seen from the side on roll**: what a cube decision or a checker play depends on.

    ``cube``/``owner``: the cube's value and owner (``'center'``, ``'me'``,
    ``'opp'``).  ``match``: the match length (0 = money game); ``score``: points
    won so far as ``(side on roll, opponent)`` (text ``'2-4'`` is accepted);
    ``crawford``: this is the Crawford game; ``jacoby`` (money only).  Built
    from text or numbers, validated and normalised on construction: an
    impossible situation raises :class:`~bgbot.errors.InvalidCubeError` or
    :class:`~bgbot.errors.InvalidScoreError` quoting it.

    >>> CubeState(cube=2, owner="me", match=7, score="2-4").away
    (5, 3)
    """

    cube: int = 1
    owner: Owner = "center"
    match: int = 0
    score: tuple[int, int] = (0, 0)
    crawford: bool = False
    jacoby: bool = False

    def __post_init__(self) -> None:
        values = _check_cube_state(self.cube, self.owner, self.match, self.score, self.crawford, self.jacoby)
        for name, value in zip(("cube", "owner", "match", "score", "crawford", "jacoby"), values, strict=True):
            object.__setattr__(self, name, value)

    @classmethod
    def of(cls, state: MatchState) -> CubeState:
        """The situation of ``state.on_roll``'s side in ``state`` (absolute players made relative)."""
        me = state.on_roll
        return cls(
            cube=state.cube_value,
            owner=state.cube_owner_relative(),
            match=state.match_length,
            score=(state.score[me], state.score[1 - me]) if state.match_length else (0, 0),
            crawford=state.crawford,
            jacoby=state.jacoby and not state.match_length,
        )

    def match_state(self, dice: tuple[int, int] | None = None) -> MatchState:
        """This situation as a :class:`MatchState` with the side on roll as player 0 (what an XGID carries)."""
        if dice is None:  # a valid cube situation is a valid state in play: nothing to check again
            return _trusted_state(self.match, self.score, self.cube, _OWNER_PLAYER[self.owner], 0, 0, False, None,
                                  self.crawford, self.jacoby)
        return MatchState(
            match_length=self.match,
            score=self.score,
            cube_value=self.cube,
            cube_owner=_OWNER_PLAYER[self.owner],
            on_roll=0,
            dice=dice,
            crawford=self.crawford,
            jacoby=self.jacoby,
        )

    @property
    def is_money(self) -> bool:
        """True for a money game (``match == 0``)."""
        return self.match == 0

    @property
    def away(self) -> tuple[int, int]:
        """Points each side still needs ``(side on roll, opponent)``; ``(0, 0)`` in a money game."""
        if not self.match:
            return (0, 0)
        return self.match - self.score[0], self.match - self.score[1]
