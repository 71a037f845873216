"""The shared input checks: counts are Python or numpy integers (never bools, floats or text); settings fields
are whole numbers above their minimum; each error names the field and quotes the value."""

from __future__ import annotations

import re

import numpy as np
import pytest

from bgbot.config import check_whole_fields
from bgbot.engine.met import load_met
from bgbot.engine.rollout import RolloutSettings
from bgbot.errors import ConfigError, InvalidCubeError, MetError, as_integer


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


@pytest.mark.parametrize(("field", "value"), [("trials", 0), ("truncate", -1), ("seed", 1.0), ("min_trials", True)])
def test_rollout_settings_refuse_a_field_below_its_minimum_or_not_whole(field: str, value: object) -> None:
    said = rf"^rollout {field} must be a whole number >= \d, got {re.escape(repr(value))}$"
    with pytest.raises(ConfigError, match=said):
        RolloutSettings(**{field: value})


def test_check_whole_fields_passes_fields_at_their_minimum() -> None:
    settings = RolloutSettings(trials=36, truncate=0, seed=0, min_trials=1, trials_per_task=1)
    check_whole_fields(settings, "rollout", {"trials": 36, "truncate": 0})
    with pytest.raises(ConfigError, match=r"^rollout trials must be a whole number >= 37, got 36$"):
        check_whole_fields(settings, "rollout", {"trials": 37})
