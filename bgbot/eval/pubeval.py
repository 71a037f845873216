"""Tesauro's pubeval: the classic linear benchmark player.

The score of a resulting position is ``w . x`` from the view of the side that
has just moved (higher is better for it); the race weights are used when the
position *before* the move has no contact.  Weights: Gerald Tesauro,
``pubeval.c`` (1993), as carried by GNU Backgammon (see ``data/pubeval.json``).
"""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
from numpy.typing import NDArray

from bgbot.eval.evaluate import segment_argmax
from bgbot.rules.position import has_contact

_W = json.loads(resources.files("bgbot").joinpath("data/pubeval.json").read_text())
RACE = np.asarray(_W["race"], dtype=np.float64)
CONTACT = np.asarray(_W["contact"], dtype=np.float64)
WON = 99999999.0


def features(mover: NDArray[np.int8]) -> NDArray[np.float64]:
    """Pubeval's 122 inputs for ``(N, 26)`` positions seen from the side that has just moved."""
    mover = np.asarray(mover, dtype=np.int64)
    n = mover[:, 24:0:-1]  # points 24..1 of the mover, (N, 24)
    x = np.zeros((mover.shape[0], 122), dtype=np.float64)
    x[:, 0:120:5] = n == -1
    x[:, 1:120:5] = n == 1
    x[:, 2:120:5] = n >= 2
    x[:, 3:120:5] = n == 3
    x[:, 4:120:5] = np.where(n >= 4, (n - 3) / 2.0, 0.0)
    x[:, 120] = -mover[:, 0] / 2.0
    x[:, 121] = (15 - np.where(mover > 0, mover, 0).sum(axis=1)) / 15.0
    return x


def scores(before: NDArray[np.int8], succ: NDArray[np.int8], parent: NDArray[np.int64]) -> NDArray[np.float64]:
    """Pubeval score of each successor for the side that moved.

    ``before``: the positions before the move (mover on roll); ``succ``: results
    from the opponent's view (as :func:`bgbot.rules.movegen.successors_batch` gives
    them); ``parent``: the row of ``before`` each came from.
    """
    mover = -np.asarray(succ)[:, ::-1]  # back to the mover's view
    x = features(mover)
    race = ~has_contact(before)[parent]
    s = np.where(race, x @ RACE, x @ CONTACT)
    off_all = (np.where(mover > 0, mover, 0).sum(axis=1) == 0)
    s[off_all] = WON
    return s


def choose(before: NDArray[np.int8], succ: NDArray[np.int8], parent: NDArray[np.int64]) -> NDArray[np.int64]:
    """For each row of ``before``, the index into ``succ`` of pubeval's choice."""
    return segment_argmax(scores(before, succ, parent), parent, len(before))
