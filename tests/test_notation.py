"""Text formats against gnubg's reference data and the format documents.

Given a position or state, when it is written in a format and read back, then
nothing changes; given documented example IDs, when they are read, then they
mean what their documents say; given any text at all, when it is parsed, then
either a BgbotError quoting the text is raised or the result re-formats to the
same position.
"""

from __future__ import annotations

import base64
import json
import random
import re
import socket
import subprocess
import time
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bgbot.errors import (
    QUOTE_LIMIT,
    AmbiguousMoveError,
    BgbotError,
    IllegalMoveError,
    InvalidIdError,
    InvalidMoveError,
)
from bgbot.formats.board import render_board
from bgbot.formats.fibs import DIALECT_FIBS, format_fibs_board, parse_fibs_board
from bgbot.formats.ids import decode_match_id, encode_match_id, format_xgid, parse_xgid
from bgbot.formats.parse import parse_position, parse_position_and_state
from bgbot.rules.matchstate import MatchState
from bgbot.rules.moves import format_move, legal_moves, parse_move
from bgbot.rules.position import Position, gnubg_position_id, parse_gnubg_position_id

DATA = Path(__file__).resolve().parent / "data"  # reference data kept in the repository (data/README.md)
GNUBG = Path("/usr/games/gnubg")
START_ID = "4HPwATDgc/ABMA"
START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@cache
def oracle() -> list[dict]:
    with open(DATA / "movegen" / "oracle.jsonl") as f:
        return [json.loads(line) for line in f]


@cache
def oracle_ids() -> list[str]:
    ids = {line["position"] for line in oracle()}
    for line in oracle():
        ids.update(line["results"])
    return sorted(ids)


def quoted(text: str, message: str) -> bool:
    """The error message repeats the input, or its first QUOTE_LIMIT characters."""
    return repr(text) in message or repr(text[:QUOTE_LIMIT]) in message


def bits_to_id(bits: list[int]) -> str:
    """A Position ID built straight from gnubg's documented bit string (LSB of byte 0 first)."""
    bits = bits + [0] * (80 - len(bits))
    data = bytes(sum(bits[8 * i + j] << j for j in range(8)) for i in range(10))
    return base64.b64encode(data).decode()[:14]


def key_bits(player_on_roll: list[int], opponent: list[int]) -> list[int]:
    """gnubg's key: the opponent's 25 counts, then the side on roll's, each point as 1s and a 0."""
    out: list[int] = []
    for counts in (opponent, player_on_roll):
        for n in counts:
            out += [1] * n + [0]
    return out


# ---------------------------------------------------------------------------
# gnubg Position ID
# ---------------------------------------------------------------------------


def test_start_position_id() -> None:
    assert gnubg_position_id(Position.start()) == START_ID
    assert parse_gnubg_position_id(START_ID) == Position.start()
    assert Position.start().swap() == Position.start()
    assert Position.from_id(START_ID) == Position.start()


def test_position_id_round_trip_over_the_oracle() -> None:
    for text in oracle_ids():
        assert gnubg_position_id(parse_gnubg_position_id(text)) == text


def test_position_id_puts_the_opponent_first() -> None:
    # given the side on roll with one checker on its 20-point and the opponent with one on its 3-point
    pos = Position.from_points({20: 1}, {3: 1})
    on_roll = [0] * 19 + [1] + [0] * 5
    opponent = [0, 0, 1] + [0] * 22
    assert gnubg_position_id(pos) == bits_to_id(key_bits(on_roll, opponent))


def test_results_are_the_opponents_view() -> None:
    # every result of the oracle is the position after the move with the opponent on roll:
    # the mover (now not on roll) has fewer pips, the side now on roll as many or more (hits)
    for line in oracle()[:300]:
        before = parse_gnubg_position_id(line["position"])
        for text in line["results"]:
            result = parse_gnubg_position_id(text)
            assert result.pips()[1] < before.pips()[0]
            assert result.pips()[0] >= before.pips()[1]


@pytest.mark.parametrize(
    "text, why",
    [
        ("4HPwATDgc/AB", "14 characters"),
        ("4HPwATDgc/ABMAA", "14 characters"),
        ("4HPwATDgc/AB!A", "base64"),
        ("4HPwATDgc/ABMB", "padding"),
        ("/////////////w", "80 bits"),
    ],
)
def test_bad_position_ids(text: str, why: str) -> None:
    with pytest.raises(InvalidIdError, match=why) as err:
        parse_gnubg_position_id(text)
    assert repr(text) in str(err.value)


def test_position_id_rejects_impossible_keys() -> None:
    empty = [0] * 25
    sixteen = [16] + [0] * 24
    shared_on_roll = [1] + [0] * 24  # its 1-point ...
    shared_opp = [0] * 23 + [1, 0]  # ... is the opponent's 24-point
    stray = [*key_bits(empty, empty), 1]
    closed = [2] * 6 + [0] * 18 + [1]
    cases = [
        (bits_to_id(key_bits(sixteen, empty)), "at most 15"),
        (bits_to_id(key_bits(shared_on_roll, shared_opp)), "both sides"),
        (bits_to_id(stray), "stray bits"),
        (bits_to_id(key_bits(closed, closed)), "closed boards"),
    ]
    for text, why in cases:
        with pytest.raises(InvalidIdError, match=why):
            parse_gnubg_position_id(text)


# ---------------------------------------------------------------------------
# gnubg Match ID
# ---------------------------------------------------------------------------


def test_match_id_example_from_the_gnubg_manual() -> None:
    # manual, "A technical description of the Match ID": score 2-4 in a 9-point match,
    # player 0 holds a 2-cube, player 1 has just rolled 52
    state = decode_match_id("QYkqASAAIAAA")
    assert state.match_length == 9
    assert state.score == (2, 4)
    assert (state.cube_value, state.cube_owner) == (2, 0)
    assert (state.on_roll, state.turn) == (1, 1)
    assert state.dice == (5, 2)
    assert not state.doubled and not state.crawford and state.resign == 0
    assert state.game_state == 1
    assert encode_match_id(state) == "QYkqASAAIAAA"


def test_match_id_bits_follow_the_manual_layout() -> None:
    # the manual's key for that example, field by field in reading order (each field reversed there)
    fields = "1000 00 1 0 100 1 0 00 101 010 100100000000000 010000000000000 001000000000000"
    bits = [int(c) for c in fields.replace(" ", "")] + [0] * 6
    data = bytes(sum(bits[8 * i + j] << j for j in range(8)) for i in range(9))
    assert base64.b64encode(data).decode() == "QYkqASAAIAAA"


@pytest.mark.parametrize("text", ["QYkqASAAIAAA", "cAn7ADAAIAAA", "MAAAAAAAAAAA", "8IhuACAACAAE"])
def test_published_match_ids_round_trip(text: str) -> None:
    assert encode_match_id(decode_match_id(text)) == text


def test_start_of_money_session_match_id() -> None:
    # gnubg's ID before the first game of a money session: cube 1 centred, no game, Jacoby on
    state = decode_match_id("MAAAAAAAAAAA")
    assert state.is_money and state.cube_value == 1 and state.cube_owner == -1
    assert state.game_state == 0 and state.jacoby


@st.composite
def match_states(draw: st.DrawFn, *, xgid: bool = False, fibs: bool = False) -> MatchState:
    """Valid states; ``xgid``/``fibs`` keep to what those formats can carry."""
    max_length = 99 if fibs else 2**15 - 1
    length = draw(st.sampled_from([0, 0, 1, 3, 5, 7, 11]) | st.integers(0, max_length))
    if length:
        score = (draw(st.integers(0, length - 1)), draw(st.integers(0, length - 1)))
    else:
        score = (draw(st.integers(0, 2**15 - 1)), draw(st.integers(0, 2**15 - 1)))
    on_roll = draw(st.integers(0, 1))
    crawford = length > 1 and length - 1 in score and draw(st.booleans())  # a 1-point match has none
    if crawford:
        cube, owner, doubled = 1, -1, False
    else:
        cube = 2 ** draw(st.integers(0, 15))
        owner = draw(st.sampled_from([-1, 0, 1]))
        doubled = owner != 1 - on_roll and draw(st.booleans())
    dice = None if doubled else draw(st.none() | st.tuples(st.integers(1, 6), st.integers(1, 6)))
    plain = xgid or fibs
    resign = 0 if plain or doubled else draw(st.integers(0, 3))
    turn = draw(st.integers(0, 1)) if resign else None
    return MatchState(
        match_length=length,
        score=score,
        cube_value=cube,
        cube_owner=owner,
        on_roll=on_roll,
        turn=turn,
        doubled=doubled,
        dice=dice,
        crawford=crawford,
        jacoby=draw(st.booleans()) and not fibs and not (xgid and length),
        game_state=1 if plain else draw(st.integers(0, 1)),
        resign=resign,
        max_cube=2 ** draw(st.integers(0, 15)) if xgid else 1024,
        beaver=xgid and not length and draw(st.booleans()),
    )


@FUZZ
@given(match_states())
def test_match_id_round_trip(state: MatchState) -> None:
    text = encode_match_id(state)
    assert len(text) == 12
    expected = state if state.dice is None else replace(state, dice=tuple(sorted(state.dice, reverse=True)))
    assert decode_match_id(text) == expected


@pytest.mark.parametrize(
    "text, why",
    [
        ("QYkqASAAIAA", "12 characters"),
        ("QYkqASAAIA.A", "base64"),
        ("QYkqASAAIAAI", "beyond bit"),  # bit 67 set
        ("QYkqASAAIA//", "beyond bit"),
        ("YYkqASAAIAAA", "owner code 2"),
        ("QYkqASAAIP//", "beyond bit"),
    ],
)
def test_bad_match_ids(text: str, why: str) -> None:
    with pytest.raises(InvalidIdError, match=why) as err:
        decode_match_id(text)
    assert repr(text) in str(err.value)


def test_match_id_state_checks_quote_the_id() -> None:
    text = encode_match_id(MatchState(match_length=3, score=(2, 1)))
    key = int.from_bytes(base64.b64decode(text), "little")
    key |= 3 << 36  # score0 (bit 36 on) = 3 in a 3-point match: only possible once the game is over
    bad = base64.b64encode(key.to_bytes(9, "little")).decode()
    with pytest.raises(InvalidIdError, match="does not fit") as err:
        decode_match_id(bad)
    assert repr(bad) in str(err.value)


# ---------------------------------------------------------------------------
# MatchState
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields, shown",
    [
        ({"cube_value": 3}, "3"),
        ({"cube_value": 2**16}, "65536"),
        ({"crawford": True}, "crawford"),
        ({"match_length": 5, "score": (5, 0)}, "(5, 0)"),
        ({"match_length": 5, "score": (4, 0), "crawford": True, "cube_value": 2}, "cube 2"),
        ({"dice": (0, 3)}, "(0, 3)"),
        ({"cube_owner": 2}, "2"),
        ({"doubled": True, "dice": (3, 1)}, "(3, 1)"),
        ({"doubled": True, "cube_owner": 1}, "owned by player 1"),
        ({"turn": 1}, "turn=1"),
        ({"beaver": True, "match_length": 3}, "beaver"),
    ],
)
def test_match_state_validation(fields: dict, shown: str) -> None:
    with pytest.raises(InvalidIdError, match="invalid match state") as err:
        MatchState(**fields)
    assert shown in str(err.value)


def test_match_state_helpers() -> None:
    state = MatchState(match_length=7, score=(6, 4), crawford=True, on_roll=1)
    assert (state.away(0), state.away(1)) == (1, 3)
    assert not state.is_money
    assert state.cube_owner_relative() == "center"
    assert MatchState(cube_value=2, cube_owner=1, on_roll=1).cube_owner_relative() == "me"
    assert MatchState(cube_value=2, cube_owner=1, on_roll=0).cube_owner_relative() == "opp"
    assert MatchState(doubled=True, on_roll=1).turn == 0
    assert MatchState(on_roll=1).turn == 1
    with pytest.raises(InvalidIdError):
        MatchState().away(0)


# ---------------------------------------------------------------------------
# XGID
# ---------------------------------------------------------------------------


def test_start_xgid() -> None:
    assert format_xgid(Position.start()) == START_XGID
    assert format_xgid(Position.start()) == START_XGID
    pos, state = parse_xgid(START_XGID)
    assert pos == Position.start()
    assert state == MatchState()
    assert parse_xgid(START_XGID.removeprefix("XGID=")) == (pos, state)


def test_xgid_exported_by_extreme_gammon() -> None:
    # an XGID as eXtreme Gammon exports it (backgammonforums.com "How to post positions"):
    # bottom player on roll with 31, 6-4 in a 7-point match, Crawford game
    text = "XGID=--A-bBBBB--BbB-----dbbc-B-:0:0:1:31:6:4:1:7:10"
    pos, state = parse_xgid(text)
    bottom = {2: 1, 5: 2, 6: 2, 7: 2, 8: 2, 11: 2, 13: 2, 24: 2}
    top = {21: 2, 13: 2, 6: 4, 5: 2, 4: 2, 3: 3}  # top player's own numbering
    assert pos == Position.from_points(bottom, top)
    assert state == MatchState(match_length=7, score=(6, 4), crawford=True, dice=(3, 1))
    assert format_xgid(pos, state) == text


def test_xgid_top_player_on_roll_and_double() -> None:
    # the same board with the top player to play: the position is from the top player's view
    text = "XGID=-b----E-C---eE---c-e----B-:1:-1:-1:D:3:5:0:9:10"
    pos, state = parse_xgid(text)
    assert pos == Position.start()
    assert state.on_roll == 1 and state.doubled and state.turn == 0
    assert (state.cube_value, state.cube_owner) == (2, 1)  # the top player redoubles its 2-cube
    assert state.score == (3, 5) and state.match_length == 9
    assert format_xgid(pos, state) == text
    # with the top player on roll its view is the swapped board
    pos2, _ = parse_xgid("XGID=--A-bBBBB--BbB-----dbbc-B-:0:0:-1:31:3:4:0:7:10")
    assert pos2 == parse_xgid("XGID=--A-bBBBB--BbB-----dbbc-B-:0:0:1:31:3:4:0:7:10")[0].swap()


@FUZZ
@given(st.sampled_from(oracle_ids()), match_states(xgid=True))
def test_xgid_round_trip(pos_id: str, state: MatchState) -> None:
    pos = parse_gnubg_position_id(pos_id)
    text = format_xgid(pos, state)
    assert parse_xgid(text) == (pos, state)
    assert parse_position_and_state(text) == (pos, state)


@pytest.mark.parametrize(
    "text, why",
    [
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0", "9 or 10"),
        ("XGID=-b----E-C---eE---c-e----B:0:0:1:00:0:0:0:0:10", "26 characters"),
        ("XGID=Ab----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10", "wrong bar"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:2:00:0:0:0:0:10", "turn"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:B:0:0:0:0:10", "beavers"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:70:0:0:0:0:10", "dice"),
        ("XGID=-b----E-C---eE---c-e----B-:x:0:1:00:0:0:0:0:10", "not an integer"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:5:0:0:5:10", "does not fit"),
        ("XGID=-b----E-C---eE---c-e----BB:0:0:1:00:0:0:0:0:10", "15 checkers"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:4:0:10", "0..3"),
    ],
)
def test_bad_xgids(text: str, why: str) -> None:
    with pytest.raises(InvalidIdError, match=why) as err:
        parse_xgid(text)
    assert repr(text) in str(err.value)


# ---------------------------------------------------------------------------
# FIBS board
# ---------------------------------------------------------------------------

# the example of FIBS's client protocol specification (fibs.com/fibs_interface.html#board_state)
FIBS_DOC = (
    "board:You:someplayer:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:6:2:0:0:1:1:1:0:1:"
    "-1:0:25:0:0:0:0:2:0:0:0"
)
# a board FIBS sent to a bot playing X (from a fibsboard.com thread), spaces as posted
FIBS_X = (
    "board:mpgnu:buster:17:0:2:0:0:0:2: 1: 4: 3: 0: 1: 0: 1: 0: 0: 2: 0: 0: 0: 0: 0: 1: -2: -2: -1: -4: -4: 0:"
    " -1: 3: 6: 0: 0: 1: 1: 1: 0: -1: 1: 25: 0: 2: 0: 0: 0: 2: 2: 0: 0"
)


def test_fibs_documentation_example() -> None:
    pos, board = parse_fibs_board(FIBS_DOC)
    assert pos == Position.start()
    assert (board.player, board.opponent, board.match_length) == ("You", "someplayer", 3)
    assert board.player_dice == (6, 2) and board.is_your_turn
    assert (board.colour, board.direction, board.home, board.bar) == (1, -1, 0, 25)
    assert board.can_move == 2
    state = board.to_match_state()
    assert state == MatchState(match_length=3, dice=(6, 2))
    # bgbot writes the same line, up to the opponent's name
    assert format_fibs_board(pos, state, opponent="someplayer") == FIBS_DOC
    assert format_fibs_board(Position.start(), state=state, opponent="someplayer") == FIBS_DOC


def test_fibs_board_for_x_moving_up() -> None:
    pos, board = parse_fibs_board(FIBS_X)
    # X (mpgnu) bears off from FIBS points 20-24 = its own 5..1 points; O counts by FIBS index
    mine = {5: 2, 4: 2, 3: 1, 2: 4, 1: 4}
    theirs = {3: 2, 4: 1, 5: 4, 6: 3, 8: 1, 10: 1, 13: 2, 19: 1}
    assert pos == Position.from_points(mine, theirs)
    assert pos.off() == (2, 0) == (board.player_on_home, board.opponent_on_home)
    state = board.to_match_state(DIALECT_FIBS)  # a line the FIBS server wrote: the addressee's score first
    assert state.on_roll == 1 == board.you and state.dice == (3, 6)
    assert state.score == (2, 0) and state.match_length == 17
    assert board.to_match_state().score == (0, 2)  # gnubg's socket puts the scores the other way round
    again = format_fibs_board(pos, state, player="mpgnu", opponent="buster", dialect=DIALECT_FIBS)
    assert parse_fibs_board(again)[0] == pos
    fields = FIBS_X.replace(" ", "").split(":")
    fields[-3] = "0"  # bgbot writes 0 in the "forced move" field
    assert again == ":".join(fields)


def test_fibs_pending_double_goes_to_the_taker() -> None:
    state = MatchState(match_length=5, score=(1, 2), cube_value=2, cube_owner=0, on_roll=0, doubled=True)
    pos = Position.from_points({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 4, 20: 3})
    line = format_fibs_board(pos, state)
    _, board = parse_fibs_board(line)
    assert board.was_doubled == 1 and board.you == 1  # addressed to player 1, who must take or drop
    assert board.turn == 1  # "turn" stays on the doubler (O, player 0), as gnubg reads a take
    assert board.is_your_turn
    assert board.scores() == (2, 1)  # (addressee's, opponent's), read as gnubg writes them
    assert (board.score_field_1, board.score_field_2) == (1, 2)  # gnubg's order: the opponent's first
    assert parse_position_and_state(line) == (pos, state)


@FUZZ
@given(st.sampled_from(oracle_ids()), match_states(fibs=True))
def test_fibs_round_trip(pos_id: str, state: MatchState) -> None:
    pos = parse_gnubg_position_id(pos_id)
    line = format_fibs_board(pos, state)
    assert parse_position_and_state(line) == (pos, state)
    you_view, board = parse_fibs_board(line)
    assert board.you == state.turn
    assert you_view == (pos if state.turn == state.on_roll else pos.swap())


@pytest.mark.parametrize(
    "text, why",
    [
        (FIBS_DOC.replace("board:", "bored:"), "starts with 'board:'"),
        (FIBS_DOC + ":0", "52 fields"),
        (FIBS_DOC.replace(":1:-1:0:25:", ":2:-1:0:25:", 1), "colour"),
        (FIBS_DOC.replace(":0:-2:", ":0:-16:", 1), "15 checkers"),
        (FIBS_DOC.replace(":0:-2:", ":0:-9:", 1), "more than 15"),
        (FIBS_DOC.replace(":1:6:2:", ":1:7:2:", 1), "dice"),
        (FIBS_DOC.replace(":0:1:1:1:0:", ":0:3:1:1:0:", 1), "power of two"),
        (FIBS_DOC.replace(":3:0:0:", ":3:3:0:", 1), "does not fit"),
    ],
)
def test_bad_fibs_boards(text: str, why: str) -> None:
    # the score check belongs to the match state, the rest to the board itself
    parse = parse_position_and_state if why == "does not fit" else parse_fibs_board
    with pytest.raises(InvalidIdError, match=why) as err:
        parse(text)
    assert quoted(text, str(err.value))


# ---------------------------------------------------------------------------
# any format
# ---------------------------------------------------------------------------


def test_parse_position_accepts_every_format() -> None:
    pos = parse_gnubg_position_id("sHPMATDgc/ADIA")
    state = MatchState(match_length=7, score=(3, 4), cube_value=2, cube_owner=1, on_roll=1, dice=(4, 2))
    texts = [
        gnubg_position_id(pos),
        f"{gnubg_position_id(pos)}:{encode_match_id(state)}",
        format_xgid(pos, state),
        format_xgid(pos, state).removeprefix("XGID="),
        format_fibs_board(pos, state),
        "  " + gnubg_position_id(pos) + "\n",
    ]
    for text in texts:
        assert parse_position(text) == pos
    assert parse_position_and_state(texts[1]) == (pos, state)
    assert parse_position_and_state(texts[0]) == (pos, None)


@pytest.mark.parametrize("text", ["", "hello", "4HPwATDgc/AB", "x" * 500, "board:", "XGID=", "a:b"])
def test_parse_position_rejects_other_text(text: str) -> None:
    with pytest.raises(InvalidIdError) as err:
        parse_position(text)
    assert quoted(text, str(err.value))
    assert len(str(err.value)) < 400


# ---------------------------------------------------------------------------
# fuzzing: only BgbotErrors quoting the input, never a wrong position
# ---------------------------------------------------------------------------

VALID_SAMPLES = [
    START_ID,
    f"{START_ID}:QYkqASAAIAAA",
    START_XGID,
    "XGID=--A-bBBBB--BbB-----dbbc-B-:0:0:1:31:6:4:1:7:10",
    FIBS_DOC,
    FIBS_X,
    "QYkqASAAIAAA",
]
ALPHABET = st.sampled_from([*"ABCDEFGHIJKLMNOPabcdefghijklmnop0123456789+/=-:*() \n\t", "board:", "XGID="])


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """A valid sample with a few characters replaced, inserted or deleted."""
    text = list(draw(st.sampled_from(VALID_SAMPLES)))
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["replace", "insert", "delete"]))
        if action == "insert" or i == len(text):
            text.insert(i, draw(ALPHABET))
        elif action == "replace":
            text[i] = draw(ALPHABET)
        else:
            del text[i]
    return "".join(text)


any_text = st.text(max_size=300) | mutated() | st.lists(ALPHABET, max_size=40).map("".join)


def fails_cleanly(func, text: str):  # type: ignore[no-untyped-def]
    """Call ``func(text)``; a BgbotError must quote the text. Returns the result or None."""
    try:
        return func(text)
    except BgbotError as exc:
        assert quoted(text, str(exc)), str(exc)
        return None


@FUZZ
@given(any_text)
def test_fuzz_position_id(text: str) -> None:
    pos = fails_cleanly(parse_gnubg_position_id, text)
    if pos is not None:
        assert parse_gnubg_position_id(gnubg_position_id(pos)) == pos
    assert fails_cleanly(Position.from_id, text) == pos  # Position.from_id reads exactly a Position ID


@FUZZ
@given(any_text)
def test_fuzz_parse_position_and_state(text: str) -> None:
    got = fails_cleanly(parse_position_and_state, text)
    if got is None:
        return
    pos, state = got
    assert parse_gnubg_position_id(gnubg_position_id(pos)) == pos
    if state is not None:
        assert parse_xgid(format_xgid(pos, state))[0] == pos
        assert decode_match_id(encode_match_id(state)).score == state.score
        if state.match_length != 9999:
            assert parse_position_and_state(format_fibs_board(pos, state))[0] == pos


@FUZZ
@given(any_text)
def test_fuzz_xgid(text: str) -> None:
    got = fails_cleanly(parse_xgid, text)
    if got is not None:
        assert parse_xgid(format_xgid(*got)) == got


@FUZZ
@given(any_text)
def test_fuzz_match_id(text: str) -> None:
    state = fails_cleanly(decode_match_id, text)
    if state is not None:
        again = decode_match_id(encode_match_id(state))
        assert replace(again, dice=state.dice) == state
        assert again.dice is None or sorted(again.dice) == sorted(state.dice)  # type: ignore[arg-type]


@FUZZ
@given(any_text)
def test_fuzz_fibs_board(text: str) -> None:
    got = fails_cleanly(parse_fibs_board, text)
    if got is None:
        return
    you_view, board = got
    try:
        state = board.to_match_state()
    except InvalidIdError:
        with pytest.raises(InvalidIdError) as err:
            parse_position_and_state(text)
        assert quoted(text, str(err.value))
        return
    pos = you_view if state.on_roll == board.you else you_view.swap()
    assert parse_position_and_state(text) == (pos, state)
    assert parse_position_and_state(format_fibs_board(pos, state))[0] == pos


MOVE_ALPHABET = st.sampled_from([*"0123456789/-*() ,", "bar", "off", "b", "o", "24/18", "13/11", "(2)"])
move_text = (
    st.lists(MOVE_ALPHABET, max_size=12).map(" ".join)
    | st.lists(MOVE_ALPHABET, max_size=12).map("".join)
    | st.text(max_size=40)
)


@FUZZ
@given(st.sampled_from(range(len(oracle()))), move_text)
def test_fuzz_parse_move(index: int, text: str) -> None:
    line = oracle()[index]
    pos, dice = parse_gnubg_position_id(line["position"]), tuple(line["dice"])
    move = fails_cleanly(lambda t: parse_move(pos, dice, t), text)
    if move is not None:
        assert gnubg_position_id(move.result) in line["results"] or not move.steps
        assert parse_move(pos, dice, format_move(move.steps)).result == move.result


# ---------------------------------------------------------------------------
# move text
# ---------------------------------------------------------------------------


def test_every_legal_move_text_parses_back() -> None:
    for line in oracle():
        pos, dice = parse_gnubg_position_id(line["position"]), tuple(line["dice"])
        moves = legal_moves(pos, dice)
        for move in moves:
            text = format_move(move.steps)
            assert parse_move(pos, dice, text, legal=moves).result == move.result, (line, text)


def after(mine: dict[int, int], theirs: dict[int, int]) -> Position:
    """The position after a move given in the mover's numbering, seen by the opponent (on roll next)."""
    return Position.from_points(mine, theirs).swap()


def test_doubles_grouped() -> None:
    start = Position.start()
    move = parse_move(start, (3, 3), "8/5(2) 6/3(2)")
    assert move.result == after({24: 2, 13: 5, 8: 1, 6: 3, 5: 2, 3: 2}, {24: 2, 13: 5, 8: 3, 6: 5})
    assert format_move(move.steps) == "8/5(2) 6/3(2)"
    assert parse_move(start, (3, 3), "6/3(2) 8/5 8/5").result == move.result


def test_enter_and_hit() -> None:
    mine = {25: 1, 6: 5, 8: 3, 13: 5, 24: 1}
    theirs = {3: 1, 6: 5, 8: 3, 13: 5, 24: 1}  # their 3-point is our 22-point
    pos = Position.from_points(mine, theirs)
    expected = after({22: 1, 6: 4, 5: 1, 8: 3, 13: 5, 24: 1}, {25: 1, 6: 5, 8: 3, 13: 5, 24: 1})
    for text in ["bar/22* 6/5", "b/22 6/5", "25/22* 6/5", "6/5 bar/22", "BAR / 22*  6-5"]:
        assert parse_move(pos, (3, 1), text).result == expected
    assert format_move(parse_move(pos, (1, 3), "bar/22* 6/5").steps) == "bar/22* 6/5"


def test_hit_on_the_way() -> None:
    start = {24: 2, 13: 5, 8: 3, 6: 5}
    theirs = {24: 1, 18: 1, 13: 5, 8: 3, 6: 5}  # a blot on our 7-point
    pos = Position.from_points(start, theirs)
    hit = after({24: 2, 13: 4, 8: 3, 6: 5, 5: 1}, {25: 1, 24: 1, 13: 5, 8: 3, 6: 5})
    quiet = after({24: 2, 13: 4, 8: 3, 6: 5, 5: 1}, theirs)
    assert parse_move(pos, (6, 2), "13/7*/5").result == hit
    assert parse_move(pos, (6, 2), "13/7/5").result == hit  # '*' may be left out
    assert parse_move(pos, (6, 2), "13/11/5").result == quiet
    assert parse_move(pos, (6, 2), "13/5").result == quiet  # no '*': the route that does not hit
    assert format_move(parse_move(pos, (6, 2), "13/7*/5").steps) == "13/7*/5"
    assert format_move(parse_move(pos, (6, 2), "13/11/5").steps) == "13/5"


def test_bear_off() -> None:
    pos = Position.from_points({6: 2, 5: 3, 4: 3, 3: 3, 2: 2, 1: 2}, {1: 5, 2: 5, 3: 5})
    expected = after({6: 1, 5: 2, 4: 3, 3: 3, 2: 2, 1: 2}, {1: 5, 2: 5, 3: 5})
    for text in ["6/off 5/off", "5/off 6/off", "6/0 5/0", "6/o 5/o"]:
        assert parse_move(pos, (6, 5), text).result == expected
    assert format_move(parse_move(pos, (5, 6), "6/off 5/off").steps) == "6/off 5/off"


def test_illegal_and_unreadable_moves() -> None:
    start = Position.start()
    for text in ["24/18 13/7", "6/off 6/1", "13/11", "24/23 24/18", "13/15 6/1", "8/3(5)"]:
        with pytest.raises(IllegalMoveError) as err:
            parse_move(start, (6, 5), text)
        message = str(err.value)
        assert repr(text) in message and START_ID in message and "65" in message
    for text in ["hello", "24/", "/18", "24//18", "off/3", "24/bar", "8/5(0)", "24/18**", "26/20"]:
        with pytest.raises(InvalidMoveError) as err:
            parse_move(start, (6, 5), text)
        assert not isinstance(err.value, IllegalMoveError), text
        assert repr(text) in str(err.value) and START_ID in str(err.value)


def test_ambiguous_move() -> None:
    # blots on our 11- and 7-points: 13/5 with 62 hits one of them either way
    theirs = {18: 1, 14: 1, 13: 5, 8: 3, 6: 5}
    pos = Position.from_points({24: 2, 13: 5, 8: 3, 6: 5}, theirs)
    with pytest.raises(AmbiguousMoveError) as err:
        parse_move(pos, (6, 2), "13/5")
    message = str(err.value)
    assert "'13/5'" in message and gnubg_position_id(pos) in message and "62" in message
    assert "13/7*/5" in message and "13/11*/5" in message
    assert parse_move(pos, (6, 2), "13/11*/5").result != parse_move(pos, (6, 2), "13/7*/5").result


def test_empty_move() -> None:
    blocked = next(line for line in oracle() if not line["results"])
    pos, dice = parse_gnubg_position_id(blocked["position"]), tuple(blocked["dice"])
    move = parse_move(pos, dice, "")
    assert move.steps == () and move.result == pos.swap()
    assert format_move(move.steps) == ""
    with pytest.raises(IllegalMoveError):
        parse_move(Position.start(), (3, 1), "")


# ---------------------------------------------------------------------------
# ASCII board
# ---------------------------------------------------------------------------


def test_render_start() -> None:
    text = render_board(Position.start())
    assert text.count("167") >= 2
    assert START_ID in text and START_XGID in text
    assert "13-14-15-16-17-18" in text and "12-11-10--9--8--7" in text


def test_render_with_state_and_stacks() -> None:
    pos = Position.from_points({6: 12, 5: 3}, {25: 1, 1: 14})
    state = MatchState(match_length=5, score=(1, 3), cube_value=2, cube_owner=1, dice=(4, 1))
    text = render_board(pos, state)
    assert encode_match_id(state) in text and format_xgid(pos, state) in text
    lines = text.splitlines()
    assert "14 |" in lines[5] and "|12 " in lines[7]  # stacks above five are written as numbers
    assert f"X {pos.pips()[0]}, O {pos.pips()[1]}" in text



# ---------------------------------------------------------------------------
# against gnubg itself
# ---------------------------------------------------------------------------


def exchanged(state: MatchState) -> MatchState:
    """The same state with players 0 and 1 renamed: gnubg's ``set xgid`` makes the bottom player 1."""
    owner = -1 if state.cube_owner == -1 else 1 - state.cube_owner
    return replace(
        state,
        score=(state.score[1], state.score[0]),
        cube_owner=owner,
        on_roll=1 - state.on_roll,
        turn=1 - state.turn,  # type: ignore[operator]
    )


@pytest.mark.gnubg
@pytest.mark.skipif(not GNUBG.exists(), reason="gnubg absent")
def test_xgid_position_and_match_ids_agree_with_gnubg() -> None:
    rng = random.Random(11)
    xgids = [
        "XGID=--A-bBBBB--BbB-----dbbc-B-:0:0:1:31:6:4:1:7:10",
        START_XGID,
        "XGID=-b----E-C---eE---c-e----B-:1:-1:1:52:3:1:0:9:10",
    ]
    ids = oracle_ids()
    for _ in range(8):
        length = rng.choice([0, 3, 5, 7, 11])
        cube = 2 ** rng.randrange(4)
        state = MatchState(
            match_length=length,
            score=(rng.randrange(length), rng.randrange(length)) if length else (0, 0),
            cube_value=cube,
            cube_owner=rng.choice([-1, 0, 1]) if cube > 1 else -1,
            dice=(rng.randint(1, 6), rng.randint(1, 6)),
            jacoby=not length and rng.random() < 0.5,
        )
        xgids.append(format_xgid(parse_gnubg_position_id(rng.choice(ids)), state))
    for xgid in xgids:
        # bottom player on roll only: otherwise gnubg stops to ask whether to swap the players
        out = subprocess.run(
            [str(GNUBG), "-t", "-q"], input=f"set xgid {xgid}\nshow board\n", capture_output=True, text=True,
            timeout=60, check=True,
        ).stdout
        pos, state = parse_xgid(xgid)
        assert re.findall(r"Position ID: (\S+)", out)[-1] == gnubg_position_id(pos), xgid
        assert re.findall(r"Match ID   : (\S+)", out)[-1] == encode_match_id(exchanged(state)), xgid


@pytest.mark.gnubg
@pytest.mark.skipif(not GNUBG.exists(), reason="gnubg absent")
def test_fibs_boards_drive_gnubg_external_player() -> None:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [str(GNUBG), "-t", "-q"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write(f"set threads 1\nexternal localhost:{port}\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 30
        while True:
            try:
                conn = socket.create_connection(("localhost", port), timeout=60)
                break
            except OSError:
                assert time.monotonic() < deadline, "gnubg's external player did not start"
                time.sleep(0.1)
        with conn, conn.makefile("rw") as stream:

            def ask(line: str) -> str:
                stream.write(line + "\n")
                stream.flush()
                return stream.readline().strip()

            start = Position.start()
            for on_roll in (0, 1):  # as O and as X
                reply = ask(format_fibs_board(start, MatchState(dice=(6, 2), on_roll=on_roll)))
                assert reply == "24/18 13/11"
                played = after({24: 1, 18: 1, 13: 4, 11: 1, 8: 3, 6: 5}, {24: 2, 13: 5, 8: 3, 6: 5})
                assert parse_move(start, (6, 2), reply).result == played
            # the doubler closes out three checkers: a clear pass; far behind in a race: a clear take
            crush = Position.from_points(
                {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 3, 8: 2}, {25: 3, 24: 2, 13: 5, 8: 3, 6: 2}
            )
            race = Position.from_points({24: 2, 23: 2, 22: 2, 13: 5, 8: 2, 6: 2}, {6: 5, 5: 5, 4: 5})
            for on_roll in (0, 1):
                state = MatchState(on_roll=on_roll, doubled=True)
                assert ask(format_fibs_board(crush, state)) == "drop"
                assert ask(format_fibs_board(race, state)) in ("take", "beaver")
                assert ask(format_fibs_board(crush, MatchState(on_roll=on_roll))) == "double"
                assert ask(format_fibs_board(race, MatchState(on_roll=on_roll))) == "roll"
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_a_fibs_board_with_one_die_of_two_is_an_error() -> None:
    fields = FIBS_DOC.split(":")
    fields[33] = "0"  # "6:2" becomes "6:0": neither a roll nor a cube question
    with pytest.raises(InvalidIdError, match="one die of two"):
        parse_fibs_board(":".join(fields))
