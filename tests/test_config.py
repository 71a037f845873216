"""Config loading: presets, overrides, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from bgbot.config import load_config
from bgbot.errors import ConfigError
from training.config import TrainConfig

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("preset", sorted((ROOT / "configs").glob("*.toml")), ids=lambda p: p.name)
def test_presets_load(preset: Path) -> None:
    cfg = load_config(TrainConfig, preset)
    assert cfg.games > 0 and cfg.hidden


def test_overrides_apply_with_types() -> None:
    cfg = load_config(TrainConfig, ROOT / "configs" / "smoke.toml", ["lam=0.3", "hidden=32,8", "explore=0.1"])
    assert cfg.lam == 0.3 and cfg.hidden == (32, 8) and cfg.explore == 0.1


@pytest.mark.parametrize(
    ("override", "needle"),
    [("lamda=0.3", "'lamda'"), ("lam=high", "'high'"), ("games=1.5", "'1.5'"), ("lam=2", "'lam'"),
     ("noequals", "'noequals'"), ("hidden=a,b", "'a'")],
)
def test_bad_overrides_raise_config_error(override: str, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        load_config(TrainConfig, None, [override])


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(TrainConfig, tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("games = [")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(TrainConfig, bad)
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('games = "many"')
    with pytest.raises(ConfigError, match="'many'"):
        load_config(TrainConfig, wrong)
