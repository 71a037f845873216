"""FIBS ``board:`` lines (52 colon-separated fields), as gnubg's external player reads and writes them.

"turn" names the side on roll, also while its double is pending; O is player 0,
X is player 1.  :func:`parse_fibs_board` returns the position from the view of
the player the board is addressed to ("you"), with a :class:`FibsBoard` of the
other fields.

**Whose score is which** depends on who wrote the line (the ``dialect``).  On
FIBS the fields after the match length are the addressee's score, then the
opponent's.  GNU Backgammon's external-player socket writes them the other way
round, the opponent's first: asked to move as either player at 2-5, gnubg 1.07
sends the score of the side *not* addressed in the first score field (checked
against the real gnubg in ``tests/test_gnubg.py``), and it reads the lines it is
sent the same way.  Everything else (board, turn, colour, cube, may-double
flags) means the same in both.  ``DIALECT_GNUBG`` is the default: engines that
speak this protocol are written for gnubg's socket.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bgbot.errors import InvalidIdError, InvalidPositionError, quote_input
from bgbot.formats.ids import require_str, small_int
from bgbot.rules.matchstate import GAME_OVER, GAME_PLAYING, MatchState
from bgbot.rules.moves import legal_moves
from bgbot.rules.position import CHECKERS, Position

_FIBS_FIELDS = 52  # after "board:"
DIALECT_GNUBG = "gnubg"  # the score fields are (opponent's, addressee's): gnubg's external-player socket
DIALECT_FIBS = "fibs"  # the score fields are (addressee's, opponent's): the FIBS server
DIALECTS = (DIALECT_GNUBG, DIALECT_FIBS)


def _check_dialect(dialect: str) -> str:
    if dialect not in DIALECTS:
        raise InvalidIdError(f"a FIBS board dialect is one of {', '.join(DIALECTS)}, got {dialect!r}")
    return dialect


@dataclass(frozen=True)
class FibsBoard:
    """The fields of a FIBS ``board:`` line, as written (raw numbers, the addressee's side first).

    ``board`` holds the 26 raw numbers (O positive, X negative).  ``turn`` is
    the colour of the side on roll (+1 O, -1 X, 0 game over), which stays the
    doubler's while a double is pending; ``colour`` and ``direction`` are the
    addressee's.  ``home``, ``bar``, the ``on_home`` and
    ``on_bar`` counts, ``can_move``, ``forced_move`` and ``redoubles`` are kept
    as read; the position is taken from ``board`` alone, as gnubg does.
    """

    player: str
    opponent: str
    match_length: int
    score_field_1: int  # the first score field: the opponent's (gnubg) or the addressee's (FIBS)
    score_field_2: int
    board: tuple[int, ...]
    turn: int
    player_dice: tuple[int, int]
    opponent_dice: tuple[int, int]
    cube: int
    player_may_double: bool
    opponent_may_double: bool
    was_doubled: int
    colour: int
    direction: int
    home: int
    bar: int
    player_on_home: int
    opponent_on_home: int
    player_on_bar: int
    opponent_on_bar: int
    can_move: int
    forced_move: int
    did_crawford: int
    redoubles: int

    @property
    def you(self) -> int:
        """The addressee as an absolute player: 0 for O (colour +1), 1 for X."""
        return 0 if self.colour > 0 else 1

    def _on_roll_and_doubled(self) -> tuple[int, bool]:
        on_roll = self.you if self.turn == 0 else 0 if self.turn > 0 else 1
        dice = self.player_dice if on_roll == self.you else self.opponent_dice
        no_flags = not (self.player_may_double or self.opponent_may_double)
        return on_roll, self.turn != 0 and (bool(self.was_doubled) or (no_flags and not any(dice)))

    @property
    def is_your_turn(self) -> bool:
        """True when the addressee must act (roll/double, move, or answer a double)."""
        on_roll, doubled = self._on_roll_and_doubled()
        return self.turn != 0 and (on_roll != self.you if doubled else on_roll == self.you)

    def scores(self, dialect: str = DIALECT_GNUBG) -> tuple[int, int]:
        """``(addressee's score, opponent's score)`` read the way ``dialect`` writes them (module docstring)."""
        if _check_dialect(dialect) == DIALECT_GNUBG:
            return self.score_field_2, self.score_field_1
        return self.score_field_1, self.score_field_2

    def to_match_state(self, dialect: str = DIALECT_GNUBG) -> MatchState:
        """The :class:`~bgbot.rules.matchstate.MatchState` of this board (O = player 0, X = player 1).

        Read the way gnubg's external player reads it: the side on roll is the
        one "turn" names (player ``you`` when the game is over); a double is
        pending when "was doubled" is set, or when both may-double flags are 0
        before the roll (how FIBS shows the doubler its own double).  Match
        length 9999 (unlimited, FIBS) or 0 (gnubg) is a money game.  The cube owner comes from the
        may-double flags (equal flags mean centred).  The Crawford game is a
        game where a player is 1-away and neither the "forced move" nor the
        "did Crawford" field is set.
        """
        you, opp = self.you, 1 - self.you
        length = 0 if self.match_length in (0, 9999) else self.match_length
        score = [0, 0]
        score[you], score[opp] = self.scores(dialect)
        on_roll, doubled = self._on_roll_and_doubled()
        dice_raw = self.player_dice if on_roll == you else self.opponent_dice
        dice = dice_raw if dice_raw[0] and dice_raw[1] and not doubled else None
        owner = -1  # equal flags: centred (FIBS sets both in the Crawford game too)
        if self.player_may_double != self.opponent_may_double:
            owner = you if self.player_may_double else opp
        crawford = bool(
            length > 1 and (length - 1) in score and not (self.forced_move or self.did_crawford)
        )
        return MatchState(
            match_length=length,
            score=(score[0], score[1]),
            cube_value=self.cube,
            cube_owner=owner,
            on_roll=on_roll,
            doubled=doubled,
            dice=dice,
            crawford=crawford,
            game_state=GAME_OVER if self.turn == 0 else GAME_PLAYING,
        )


def _fibs_name(name: str) -> str:
    cleaned = re.sub(r"[:\s]", "_", name)
    return cleaned or "_"


def format_fibs_board(
    pos: Position,
    state: MatchState | None = None,
    *,
    player: str = "You",
    opponent: str = "bgbot",
    you: int | None = None,
    can_move: int | None = None,
    redoubles: int = 0,
    dialect: str = DIALECT_GNUBG,
) -> str:
    """A FIBS ``board:`` line for ``pos`` (seen from ``state.on_roll``) addressed to player ``you``.

    ``you`` (absolute, 0 or 1) defaults to the player who must act
    (``state.turn``): with a pending double that is the player who must take
    or drop, and the line has "was doubled" set.  The "turn" field always
    names the side on roll (the doubler while its double is pending): gnubg's
    external player evaluates a take from the side "turn" names, and answers
    nonsense otherwise (checked against gnubg 1.07).  Player 0 is O (colour
    +1, moving from board index 24 to 1), player 1 is X.  A money game is
    written as match length 9999.  In the Crawford game both may-double flags
    are 1 (as FIBS writes them); after it, "did Crawford" is 1.  Addressed to
    the doubler while its double is pending, both may-double flags are 0.
    ``can_move`` defaults to the number of checker steps the addressee can
    play with the dice (0 before the roll).  The score fields are written in
    ``dialect``'s order (see the module docstring).
    """
    _check_dialect(dialect)
    st = state if state is not None else MatchState()
    if st.match_length == 9999:
        raise InvalidIdError("a 9999-point match cannot be written as a FIBS board: 9999 means unlimited")
    addressee = st.turn if you is None else you
    if addressee not in (0, 1):
        raise InvalidIdError(f"the addressee must be player 0 or 1, got {you!r}")
    other = 1 - addressee
    o_view = pos if st.on_roll == 0 else pos.swap()
    raw = o_view.board  # O's view is exactly FIBS's numbering (O moves 24 -> 1)
    mine_view = pos if addressee == st.on_roll else pos.swap()
    colour, direction = (1, -1) if addressee == 0 else (-1, 1)
    home = 0 if direction < 0 else 25
    turn = 0 if st.game_state != GAME_PLAYING else 1 if st.on_roll == 0 else -1
    my_dice = st.dice if st.dice and addressee == st.on_roll else (0, 0)
    opp_dice = st.dice if st.dice and other == st.on_roll else (0, 0)
    if st.crawford:
        may = (1, 1)
    elif st.doubled and addressee == st.on_roll:
        may = (0, 0)  # FIBS: the doubler sees both flags cleared while the double is pending
    else:
        may = (int(st.cube_owner in (-1, addressee)), int(st.cube_owner in (-1, other)))
    was_doubled = int(st.doubled and addressee != st.on_roll)
    my_off, opp_off = mine_view.off()
    if can_move is None:
        can_move = 0
        if st.dice and addressee == st.on_roll and not st.doubled:
            can_move = max(len(m.steps) for m in legal_moves(mine_view, st.dice))
    length = st.match_length or 9999
    scores = (st.score[addressee], st.score[other])
    did_crawford = int(bool(st.match_length) and (st.match_length - 1) in st.score and not st.crawford)
    numbers: list[int] = [
        length,
        *(reversed(scores) if dialect == DIALECT_GNUBG else scores),
        *raw,
        turn,
        *my_dice,
        *opp_dice,
        st.cube_value,
        *may,
        was_doubled,
        colour,
        direction,
        home,
        25 - home,
        my_off,
        opp_off,
        mine_view[25],
        -mine_view[0],
        can_move,
        0,
        did_crawford,
        redoubles,
    ]
    return f"board:{_fibs_name(player)}:{_fibs_name(opponent)}:" + ":".join(str(n) for n in numbers)


def parse_fibs_board(text: str) -> tuple[Position, FibsBoard]:
    """Parse a FIBS ``board:`` line.

    The position is **from the view of the player the board is addressed to**
    (the first name, "You" on FIBS), whoever is to act; use
    :func:`parse_position_and_state` for the side-on-roll view.  Points are
    read with the addressee's ``colour`` and ``direction``; bar counts are
    taken as absolute values, as gnubg does.
    """
    require_str(text, "a FIBS board")
    t = text.strip()
    q = quote_input(text)
    if not t.startswith("board:"):
        raise InvalidIdError(f"a FIBS board starts with 'board:', got {q}")
    fields = t[6:].split(":")
    if len(fields) != _FIBS_FIELDS:
        raise InvalidIdError(
            f"a FIBS board has {_FIBS_FIELDS} fields after 'board:', got {len(fields)}: {q}"
        )
    player, opponent = fields[0].strip(), fields[1].strip()
    if not player or not opponent:
        raise InvalidIdError(f"empty player name in FIBS board {q}")
    n = [small_int(f, "FIBS field", text) for f in fields[2:]]
    (length, my_score, opp_score), raw = n[0:3], tuple(n[3:29])
    (turn, d1, d2, o1, o2, cube, may, opp_may, was_doubled, colour, direction, home, bar,
     my_home, opp_home, my_bar, opp_bar, can_move, forced, did_crawford, redoubles) = n[29:50]

    def check(ok: bool, what: str) -> None:
        if not ok:
            raise InvalidIdError(f"{what} in FIBS board {q}")

    # FIBS writes 9999 for unlimited (money) play, gnubg's external player writes 0
    check(length in (0, 9999) or 1 <= length <= 2**15 - 1, f"match length {length} is not 0..32767 or 9999")
    check(my_score >= 0 and opp_score >= 0, f"negative score {my_score}-{opp_score}")
    check(all(abs(v) <= CHECKERS for v in raw), "a board value is beyond 15 checkers")
    check(turn in (-1, 0, 1), f"turn {turn} is not -1, 0 or 1")
    check(all(0 <= d <= 6 for d in (d1, d2, o1, o2)), f"dice {d1}{d2}/{o1}{o2} are not 0..6")
    check((d1 == 0) == (d2 == 0) and (o1 == 0) == (o2 == 0), f"dice {d1}{d2}/{o1}{o2} have one die of two")
    check(1 <= cube <= 2**15 and cube & (cube - 1) == 0, f"cube {cube} is not a power of two")
    check(may in (0, 1) and opp_may in (0, 1), f"may-double flags {may}, {opp_may} are not 0/1")
    check(was_doubled in (-1, 0, 1), f"was-doubled {was_doubled} is not -1, 0 or 1")
    check(colour in (-1, 1) and direction in (-1, 1), f"colour {colour} / direction {direction} not +-1")
    check(home in (0, 25) and bar in (0, 25), f"home {home} / bar {bar} are not 0 or 25")
    counts = (my_home, opp_home, my_bar, opp_bar)
    check(all(0 <= c <= CHECKERS for c in counts), f"checker counts {counts} are not 0..15")
    check(0 <= can_move <= 4, f"can-move {can_move} is not 0..4")
    check(min(forced, did_crawford, redoubles) >= 0, "negative crawford/redouble field")

    b = [0] * 26
    for p in range(1, 25):
        b[p] = (raw[p] if direction < 0 else raw[25 - p]) * colour
    mine_bar, theirs_bar = (raw[25], raw[0]) if direction < 0 else (raw[0], raw[25])
    b[25] = abs(mine_bar)
    b[0] = -abs(theirs_bar)
    try:
        pos = Position(b)
    except InvalidPositionError as exc:
        raise InvalidIdError(f"FIBS board {q}: {exc}") from None
    fb = FibsBoard(
        player=player,
        opponent=opponent,
        match_length=length,
        score_field_1=my_score,
        score_field_2=opp_score,
        board=raw,
        turn=turn,
        player_dice=(d1, d2),
        opponent_dice=(o1, o2),
        cube=cube,
        player_may_double=bool(may),
        opponent_may_double=bool(opp_may),
        was_doubled=was_doubled,
        colour=colour,
        direction=direction,
        home=home,
        bar=bar,
        player_on_home=my_home,
        opponent_on_home=opp_home,
        player_on_bar=my_bar,
        opponent_on_bar=opp_bar,
        can_move=can_move,
        forced_move=forced,
        did_crawford=did_crawford,
        redoubles=redoubles,
    )
    return pos, fb

