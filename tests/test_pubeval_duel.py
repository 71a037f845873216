"""Pubeval against gnubg's reference choices, and the duplicate-dice duel runner."""

from __future__ import annotations

import numpy as np
from conftest import read_jsonl

from bgbot.eval import pubeval
from bgbot.play.duel import duel, random_chooser
from bgbot.rules.movegen import successors_batch
from bgbot.rules.position import Position


def test_pubeval_matches_reference_choices() -> None:
    lines = read_jsonl("pubeval/oracle.jsonl")
    boards = np.array([Position.from_id(r["position"]).board for r in lines], dtype=np.int8)
    dice = np.array([r["dice"] for r in lines])
    succ, parent = successors_batch(boards, dice)
    pick = pubeval.choose(boards, succ, parent)
    s = pubeval.scores(boards, succ, parent)
    race = ~pubeval.has_contact(boards)
    for i, r in enumerate(lines):
        assert Position.from_array(succ[pick[i]]).gnubg_id() == r["pubeval_best"], r
        assert abs(s[pick[i]] - r["pubeval_score"]) < 1e-4, r
        assert bool(race[i]) == r["race"]


def test_duplicate_dice_mirror_match_is_exactly_even() -> None:
    res = duel(pubeval.choose, pubeval.choose, 50, seed=11)
    assert res.games == 100
    assert res.ppg == 0.0 and res.se == 0.0
    assert 0.0 < res.gammon_rate < 0.5


def test_pubeval_beats_random_and_seed_reproduces() -> None:
    a = duel(pubeval.choose, random_chooser(1), 30, seed=2)
    b = duel(pubeval.choose, random_chooser(1), 30, seed=2)
    assert a == b
    assert a.ppg > 1.0 and a.win_rate > 0.9
    c = duel(random_chooser(1), pubeval.choose, 30, seed=2)
    assert c.ppg < -1.0
