"""The training config: a frozen dataclass, read from ``configs/*.toml`` with ``--set`` overrides."""

from __future__ import annotations

import math
from dataclasses import dataclass

from bgbot.errors import ConfigError
from bgbot.eval.encoding import DEFAULT_VERSION


@dataclass(frozen=True)
class TrainConfig:
    """Every knob of a self-play run; stored in each checkpoint."""

    seed: int = 1
    games: int = 200_000  # total games to train to (a resumed run continues to this count)
    parallel_games: int = 1024  # games advanced together in lock-step
    encoding_version: int = DEFAULT_VERSION
    hidden: tuple[int, ...] = (80,)
    activation: str = "sigmoid"
    lam: float = 0.7  # lambda of the forward-view lambda-return
    lr: float = 1e-3  # Adam step size at the start ...
    lr_final: float = 1e-4  # ... decayed linearly to this at `games`
    min_batch: int = 1024  # positions gathered from finished games before one update
    explore: float = 0.0  # probability of a random legal move instead of the greedy one
    checkpoint_every: int = 10_000  # games
    eval_every: int = 10_000  # games; 0 = never
    eval_pairs: int = 500  # duplicate-dice pairs against pubeval at each evaluation
    threads: int = 0  # torch threads; 0 = torch's default
    max_turns: int = 1000  # a game this long is abandoned (never seen in practice)
    init_from: str = ""  # start a fresh run from this checkpoint's weights (widened to encoding_version)

    def __post_init__(self) -> None:
        checks = {
            "games": self.games >= 0,
            "parallel_games": self.parallel_games >= 1,
            "lr": math.isfinite(self.lr) and self.lr > 0,
            "lr_final": math.isfinite(self.lr_final) and self.lr_final > 0,
            "lam": math.isfinite(self.lam) and 0.0 <= self.lam <= 1.0,
            "min_batch": self.min_batch >= 1,
            "explore": 0.0 <= self.explore <= 1.0,
            "checkpoint_every": self.checkpoint_every >= 1,
            "eval_every": self.eval_every >= 0,
            "eval_pairs": self.eval_pairs >= 1,
            "threads": self.threads >= 0,
            "max_turns": self.max_turns >= 10,
        }
        for key, ok in checks.items():
            if not ok:
                raise ConfigError(f"config key {key!r} has a bad value {getattr(self, key)!r}")
