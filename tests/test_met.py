"""Match equity tables: the shipped copies against gnubg's files in tests/data/met."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from conftest import loaded_after

from bgbot.engine.met import DEFAULT_MET, SHIPPED_METS, MatchEquityTable, load_met
from bgbot.errors import BgbotError, MetError

DATA = Path(__file__).resolve().parent / "data"  # reference data kept in the repository (data/README.md)
MET_DIR = DATA / "met"
REPO = Path(__file__).resolve().parents[1]


def shared(name: str) -> dict:
    return json.loads((MET_DIR / f"{name}.json").read_text())


@pytest.mark.parametrize("name", SHIPPED_METS)
def test_shipped_table_is_the_shared_file(name: str) -> None:
    raw = shared(name)
    met = load_met(name)
    assert met.name == raw["name"]
    assert met.length == raw["length"] == 25
    assert met.source == raw["source"] and "gnubg" in met.source.lower()
    for a in range(1, 26):
        for b in range(1, 26):
            assert met.mwc(a, b) == raw["pre_crawford"][a - 1][b - 1]
    for k in range(1, 26):
        assert met.mwc(k, 1, post_crawford=True) == raw["post_crawford"][k - 1]
        assert met.mwc(1, k, post_crawford=True) == pytest.approx(
            1.0 - raw["post_crawford"][k - 1], abs=1e-15
        )


def test_default_is_kazaross_xg2() -> None:
    assert DEFAULT_MET == "kazaross-xg2"
    assert load_met().name == shared("kazaross-xg2")["name"]


@pytest.mark.parametrize("name", SHIPPED_METS)
def test_symmetry_where_the_table_is_symmetric(name: str) -> None:
    raw = shared(name)
    met = load_met(name)
    # The files state their own asymmetry; both are symmetric, so mwc(a, b) + mwc(b, a) must be 1.
    assert raw["max_abs_asymmetry_pre_crawford"] == 0.0
    assert met.is_symmetric()
    for a in range(1, 26):
        for b in range(1, 26):
            assert met.mwc(a, b) + met.mwc(b, a) == pytest.approx(1.0, abs=1e-12)
            for crawford in (False, True):
                if a == 1 or b == 1:
                    flags = {"crawford": crawford, "post_crawford": not crawford}
                    assert met.mwc(a, b, **flags) + met.mwc(b, a, **flags) == pytest.approx(1.0, abs=1e-12)


def test_known_values_kazaross() -> None:
    met = load_met("kazaross-xg2")
    assert met.mwc(1, 1) == 0.5
    assert met.mwc(1, 2) == 0.67736  # Crawford game, leader 1-away
    assert met.mwc(2, 1) == 0.32264
    assert met.mwc(2, 1, crawford=True) == 0.32264
    assert met.mwc(2, 1, post_crawford=True) == 0.48803  # trailer 2-away after Crawford: free drop
    assert met.mwc(2, 4) == 0.6687
    assert met.mwc(7, 7) == 0.5
    # Monotone: needing fewer points is better.
    for a in range(1, 25):
        for b in range(1, 26):
            assert met.mwc(a, b) > met.mwc(a + 1, b)


def test_won_and_lost_matches() -> None:
    met = load_met()
    assert met.mwc(0, 5) == 1.0
    assert met.mwc(-3, 5) == 1.0
    assert met.mwc(5, 0) == 0.0
    assert met.mwc(30, 0) == 0.0  # the loser's score does not matter once the match is over
    with pytest.raises(MetError, match="both sides"):
        met.mwc(0, 0)


def test_mwc_after_transitions() -> None:
    met = load_met()
    raw = shared("kazaross-xg2")
    pre, post = raw["pre_crawford"], raw["post_crawford"]
    # Pre-Crawford 3-away/5-away: winning 2 makes me 1-away and the next game the Crawford game.
    assert met.mwc_after(3, 5, 2) == pre[0][4]
    assert met.mwc_after(3, 5, 4) == 1.0
    assert met.mwc_after(3, 5, -1) == pre[2][3]
    assert met.mwc_after(3, 5, -6) == 0.0
    # In the Crawford game (me 1-away), losing 1 makes the next game post-Crawford.
    assert met.mwc_after(1, 3, -1, crawford=True) == pytest.approx(1.0 - post[1])
    # The same from a post-Crawford game, flag given or inferred from the 1-away score.
    assert met.mwc_after(1, 3, -1, post_crawford=True) == pytest.approx(1.0 - post[1])
    assert met.mwc_after(4, 1, 2, post_crawford=True) == post[1]
    assert met.mwc_after(4, 1, 2) == post[1]
    assert met.mwc_after(4, 1, -1) == 0.0


def test_bad_scores() -> None:
    met = load_met()
    with pytest.raises(MetError, match="26"):
        met.mwc(26, 3)
    with pytest.raises(MetError, match="beyond"):
        met.mwc(3, 40)
    with pytest.raises(MetError, match="needs a side 1-away"):
        met.mwc(3, 4, crawford=True)
    with pytest.raises(MetError, match="needs a side 1-away"):
        met.mwc(3, 4, post_crawford=True)
    with pytest.raises(MetError, match="both Crawford and post-Crawford"):
        met.mwc(1, 4, crawford=True, post_crawford=True)
    with pytest.raises(MetError, match=r"'3'"):
        met.mwc("3", 4)  # type: ignore[arg-type]
    with pytest.raises(MetError, match="True"):
        met.mwc(True, 4)  # type: ignore[arg-type]
    with pytest.raises(MetError, match="points=0"):
        met.mwc_after(3, 4, 0)
    with pytest.raises(MetError, match="already over"):
        met.mwc_after(0, 4, 1)
    assert issubclass(MetError, BgbotError)


def test_table_is_frozen() -> None:
    met = load_met()
    assert isinstance(met, MatchEquityTable)
    with pytest.raises(dataclasses.FrozenInstanceError):
        met.length = 3  # type: ignore[misc]


def test_load_from_path_matches_shipped(tmp_path: Path) -> None:
    path = tmp_path / "copy.json"
    path.write_text((MET_DIR / "rockwell-kazaross.json").read_text())
    assert load_met(path) == load_met("rockwell-kazaross")
    assert load_met(str(path)) == load_met("rockwell-kazaross")


def test_small_custom_table(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(
        json.dumps(
            {
                "name": "tiny",
                "length": 2,
                "pre_crawford": [[0.5, 0.7], [0.3, 0.5]],
                "post_crawford": [0.5, 0.45],
            }
        )
    )
    met = load_met(path)
    assert met.length == 2 and met.mwc(2, 1, post_crawford=True) == 0.45
    with pytest.raises(MetError, match="beyond the 2-point"):
        met.mwc(3, 1)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json {", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"length": 2, "pre_crawford": [[0.5, 0.5], [0.5, 0.5]]}', "post_crawford"),
        ('{"length": 0, "pre_crawford": [], "post_crawford": []}', "positive integer"),
        ('{"length": 2, "pre_crawford": [[0.5, 0.5]], "post_crawford": [0.5, 0.5]}', "2 rows"),
        ('{"length": 2, "pre_crawford": [[0.5, 0.5], [0.5]], "post_crawford": [0.5, 0.5]}', "list of 2"),
        ('{"length": 2, "pre_crawford": [[0.5, 1.5], [0.5, 0.5]], "post_crawford": [0.5, 0.5]}', "1.5"),
        ('{"length": 2, "pre_crawford": [[0.5, "x"], [0.5, 0.5]], "post_crawford": [0.5, 0.5]}', "'x'"),
    ],
)
def test_bad_files_quote_the_path(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(MetError, match=message) as info:
        load_met(path)
    assert repr(str(path)) in str(info.value)


def test_missing_file_or_unknown_name() -> None:
    with pytest.raises(MetError, match="no-such-table") as info:
        load_met("no-such-table")
    assert "kazaross-xg2" in str(info.value)  # lists what is shipped
    with pytest.raises(BgbotError, match=r"nowhere\.json"):
        load_met(Path("/nowhere/nowhere.json"))


def test_met_and_cube_import_without_torch_or_movegen() -> None:
    watched = ("torch", "numba", "bgbot.rules.movegen", "bgbot.eval.nets", "bgbot.eval.evaluate")
    assert loaded_after("bgbot.engine.met, bgbot.engine.cube", watched) == []
