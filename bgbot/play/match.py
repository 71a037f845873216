"""Matches: a session of games on the one turn loop, scored to N points with the Crawford rule."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from bgbot.errors import ConfigError
from bgbot.play.bots.base import Bot
from bgbot.play.table import DEFAULT_RULES, GameResult, Observer, Resume, Rules, play_game
from bgbot.rules.matchstate import crawford_game


@dataclass(frozen=True)
class MatchResult:
    """A match to ``length`` points: its games in order and the final ``score`` (players absolute).

    ``winner`` is None when a game could not be finished (``max_turns``).
    """

    length: int
    games: tuple[GameResult, ...]
    score: tuple[int, int]
    winner: int | None


def play_match(
    bots: Sequence[Bot],
    length: int,
    game_rng: Callable[[int], np.random.Generator],
    rules: Rules = DEFAULT_RULES,
    *,
    record: bool = True,
    observer: Observer | None = None,
    on_game: Callable[[GameResult, tuple[int, int]], None] | None = None,
    start_score: tuple[int, int] = (0, 0),
    first_game: int = 0,
    crawford_played: bool = False,
    resume: Resume | None = None,
) -> MatchResult:
    """Play a match to ``length`` points; game ``g`` (0-based) takes its dice from ``game_rng(g)``.

    The Crawford rule applies when ``rules.crawford``; Jacoby and automatic
    doubles never do in a match.  ``on_game(result, score_after)`` is called
    after each game.  A match taken up again starts at ``start_score`` with
    game number ``first_game`` (``crawford_played``: the Crawford game is
    behind), its first game going on from ``resume`` when given; the result
    holds the games played here.
    """
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise ConfigError(f"a match is at least 1 point long, got {length!r}")
    match_rules = Rules(
        cube=rules.cube, jacoby=False, auto_doubles=0, backgammon_counts=rules.backgammon_counts,
        crawford=rules.crawford, max_turns=rules.max_turns,
    )
    score = [start_score[0], start_score[1]]
    games: list[GameResult] = []
    g = first_game
    while max(score) < length:
        is_crawford = rules.crawford and crawford_game(length, (score[0], score[1]), crawford_played)
        crawford_played = crawford_played or is_crawford
        res = play_game(
            bots, game_rng(g), match_rules, match_length=length, score=(score[0], score[1]),
            crawford=is_crawford, record=record, observer=observer, resume=resume if g == first_game else None,
        )
        games.append(res)
        if res.winner is None:
            if on_game is not None:
                on_game(res, (score[0], score[1]))
            return MatchResult(length, tuple(games), (score[0], score[1]), None)
        score[res.winner] += res.points
        if on_game is not None:
            on_game(res, (score[0], score[1]))
        g += 1
    return MatchResult(length, tuple(games), (score[0], score[1]), 0 if score[0] >= length else 1)
