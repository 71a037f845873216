"""The training config: a frozen dataclass, read from ``configs/*.toml`` with ``--set`` overrides."""

from __future__ import annotations

import math
from dataclasses import dataclass

from bgbot.config import check_seed
from bgbot.errors import ConfigError
from bgbot.eval.encoding import DEFAULT_VERSION, ENCODING_VERSIONS
from bgbot.eval.inference import ACTIVATIONS, check_hidden

MAX_PARALLEL_GAMES = 65_536
MAX_TURNS = 10_000
MAX_LIVE_BYTES = 2**31  # the live games' move history, parallel_games * max_turns * 26 bytes, fits in 2 GiB
MAX_COUNT = 10**12  # games, batch sizes and intervals beyond this are typing mistakes, not plans
#: the learning rate's courses of a supervised fit (training.refine.fit's ``schedule``)
SCHEDULES = ("constant", "cosine")
KEEP = ("best", "last")  # which epoch's network a supervised fit writes (training.refine.fit)


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
        check_seed(self.seed, "config key 'seed'")
        check_hidden(self.hidden, ConfigError, "config key 'hidden' (hidden layer sizes)")
        checks = {
            "games": 0 <= self.games <= MAX_COUNT,
            "parallel_games": 1 <= self.parallel_games <= MAX_PARALLEL_GAMES,
            "encoding_version": self.encoding_version in ENCODING_VERSIONS,
            "activation": self.activation in ACTIVATIONS,
            "lr": math.isfinite(self.lr) and self.lr > 0,
            "lr_final": math.isfinite(self.lr_final) and self.lr_final > 0,
            "lam": math.isfinite(self.lam) and 0.0 <= self.lam <= 1.0,
            "min_batch": 1 <= self.min_batch <= MAX_COUNT,
            "explore": 0.0 <= self.explore <= 1.0,
            "checkpoint_every": 1 <= self.checkpoint_every <= MAX_COUNT,
            "eval_every": 0 <= self.eval_every <= MAX_COUNT,
            "eval_pairs": 1 <= self.eval_pairs <= MAX_COUNT,
            "threads": 0 <= self.threads <= 1024,
            "max_turns": 10 <= self.max_turns <= MAX_TURNS,
        }
        for key, ok in checks.items():
            if not ok:
                raise ConfigError(f"config key {key!r} has a bad value {getattr(self, key)!r}")
        if self.parallel_games * self.max_turns * 26 > MAX_LIVE_BYTES:
            raise ConfigError(
                f"parallel_games {self.parallel_games} x max_turns {self.max_turns} needs more than "
                f"{MAX_LIVE_BYTES >> 30} GiB for the live games' history: lower one of them"
            )
