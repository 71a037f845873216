"""bgbot.errors.as_integer: counts given to the API are Python or numpy integers, never bools, floats or text."""

from __future__ import annotations

import re

import numpy as np
import pytest

from bgbot.engine.met import load_met
from bgbot.errors import InvalidCubeError, MetError, as_integer


def test_integers_of_python_and_numpy_pass() -> None:
    assert as_integer(3, "n", InvalidCubeError) == 3
    assert as_integer(np.int16(-4), "n", InvalidCubeError) == -4
    assert type(as_integer(np.int64(2), "n", InvalidCubeError)) is int


@pytest.mark.parametrize("bad", [True, 2.0, "2", None, np.float32(1)])
def test_anything_else_raises_the_given_error_quoting_it(bad: object) -> None:
    with pytest.raises(InvalidCubeError, match="^cube must be an integer, got " + re.escape(repr(bad))):
        as_integer(bad, "cube", InvalidCubeError)


def test_match_equity_table_refuses_a_fractional_score_naming_the_argument() -> None:
    met = load_met()
    assert met.mwc(np.int64(3), 5) == met.mwc(3, 5)
    with pytest.raises(MetError, match=r"away_opp must be an integer number of points, got 2\.5"):
        met.mwc(3, 2.5)  # type: ignore[arg-type]
    with pytest.raises(MetError, match=r"points must be an integer number of points, got False"):
        met.mwc_after(3, 3, False)  # type: ignore[arg-type]
