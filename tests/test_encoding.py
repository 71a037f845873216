"""Network inputs against a plain reference implementation."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import read_jsonl

from bgbot.errors import CheckpointError
from bgbot.eval.encoding import ENCODING_VERSIONS, encode, num_inputs
from bgbot.rules.position import Position


def reference(pos: Position) -> list[float]:
    out: list[float] = []
    for counts in (pos.mine(), pos.theirs()):
        for p in range(1, 25):
            n = counts[p]
            out += [float(n >= 1), float(n >= 2), float(n >= 3), (n - 3) / 2 if n > 3 else 0.0]
        out += [counts[25] / 2, counts[0] / 15]
    return [*out, 1.0, 0.0]


def test_version_1_is_tesauro_198_and_version_2_extends_it() -> None:
    positions = [Position.from_id(r["position"]) for r in read_jsonl("movegen/oracle.jsonl")[:400]]
    boards = np.array([p.board for p in positions], dtype=np.int8)
    v1 = encode(boards, 1)
    v2 = encode(boards, 2)
    assert v1.shape == (len(positions), 198) and v2.shape == (len(positions), num_inputs(2))
    for i, pos in enumerate(positions):
        np.testing.assert_allclose(v1[i], reference(pos), atol=1e-6)
        np.testing.assert_allclose(v2[i, :198], v1[i])
        me, opp = pos.pips()
        np.testing.assert_allclose(v2[i, 198:201], [me / 100, opp / 100, float(pos.has_contact())], atol=1e-6)


def test_every_unit_written() -> None:
    boards = np.array([Position.start().board] * 3, dtype=np.int8)
    out = np.full((3, ENCODING_VERSIONS[2]), np.nan, dtype=np.float32)
    encode(boards, 2, out=out)
    assert not np.isnan(out).any()


def test_unknown_version_is_an_error() -> None:
    with pytest.raises(CheckpointError, match="encoding version 7"):
        num_inputs(7)
