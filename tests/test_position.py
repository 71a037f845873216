"""Position model: start, swap, pips, results, validation."""

from __future__ import annotations

import pytest

import bgbot
from bgbot.errors import InvalidPositionError
from bgbot.rules.position import Position


def test_start_is_symmetric_with_167_pips() -> None:
    start = Position.start()
    assert start.swap() == start
    assert start.pips() == (167, 167)
    assert start.off() == (0, 0)
    assert start.has_contact()
    assert not start.is_game_over()
    assert start.gnubg_id() == "4HPwATDgc/ABMA"
    assert eval(repr(start), {"Position": Position}) == start


def test_swap_is_an_involution_and_moves_the_bars() -> None:
    pos = Position.from_points({25: 2, 6: 3}, {25: 1, 1: 4})
    assert pos.board[25] == 2 and pos.board[0] == -1
    assert pos.board[24] == -4  # the opponent's 1-point is our 24-point
    flipped = pos.swap()
    assert flipped.board[25] == 1 and flipped.board[0] == -2
    assert flipped.swap() == pos
    assert flipped.pips() == pos.pips()[::-1]
    assert hash(flipped.swap()) == hash(pos)


def test_results_single_gammon_backgammon() -> None:
    # the side on roll lost: the opponent has no checker left
    assert Position.from_points({1: 1}, {}).result() == -1  # we bore off 14: single
    assert Position.from_points({6: 15}, {}).result() == -2  # none off, all home: gammon
    assert Position.from_points({6: 14, 20: 1}, {}).result() == -3  # one in the winner's home: backgammon
    assert Position.from_points({6: 14, 25: 1}, {}).result() == -3  # one on the bar: backgammon
    assert Position.from_points({}, {5: 15}).result() == 2  # we are off, they have none off
    with pytest.raises(InvalidPositionError, match="not over"):
        Position.start().result()


@pytest.mark.parametrize(
    ("board", "needle"),
    [
        ([0] * 25, "26 slots"),
        ([0] * 25 + [-1], "slot 25"),
        ([1] + [0] * 25, "slot 0"),
        ([0, 16] + [0] * 24, "more than 15"),
        ([0, -16] + [0] * 24, "more than 15"),
    ],
)
def test_invalid_positions_are_rejected(board: list[int], needle: str) -> None:
    with pytest.raises(InvalidPositionError, match=needle):
        Position(board)


def test_from_points_rejects_bad_points() -> None:
    with pytest.raises(InvalidPositionError, match="26"):
        Position.from_points({26: 1})


@pytest.mark.parametrize(
    "call",
    [
        lambda: Position([0.5] * 26),  # once silently an empty board
        lambda: Position(["a"] * 26),
        lambda: Position([0] * 26),  # no checker of either side
        lambda: Position.from_points(None),  # type: ignore[arg-type]
        lambda: Position.from_points({6: 1.5}),
        lambda: bgbot.parse_dice((float("inf"), 1)),
        lambda: bgbot.legal_moves("4HPwATDgc/ABMA", (3, 1)),  # type: ignore[arg-type]
    ],
)
def test_bad_api_input_is_a_bgbot_error(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(bgbot.BgbotError):
        call()
