"""Shared fixtures: where the reference data lives, and small helpers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"  # reference data kept in the repository (data/README.md)


def read_jsonl(rel: str) -> list[dict]:
    """Every record of a JSON-lines file under tests/data."""
    path = DATA / rel
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="session")
def data_dir() -> Path:
    assert DATA.is_dir(), f"reference data missing at {DATA}"
    return DATA


#: plays whose equities differ by less than this are tied: the difference is float rounding, which another CPU's
#: vector kernels can tip either way (a recorded choice of a tie is any of the tied plays)
TIE = 1e-6


def tied_best(result) -> set[str]:  # type: ignore[no-untyped-def]
    """The Position IDs of a :class:`~bgbot.engine.search.MoveAnalysis`'s best play and of every play of the same
    ply whose equity is within :data:`TIE` of it (the mover's view): one ID unless the best play is a tie."""
    best = result.best
    return {c.result.gnubg_id() for c in result.candidates if c.ply == best.ply and best.equity - c.equity <= TIE}


def loaded_after(imports: str, watched: tuple[str, ...]) -> list[str]:
    """Which of ``watched`` a fresh interpreter has in ``sys.modules`` after ``import {imports}``."""
    code = f"import sys, {imports}; print(sorted(m for m in {watched!r} if m in sys.modules))"
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    return eval(out.stdout)  # a list of module names printed by our own code above


def make_tiny_checkpoint(path: Path, seed: int, hidden: tuple[int, ...] = (8,)) -> Path:
    """A small random network saved as a checkpoint (tests that only need *a* network)."""
    import torch

    from bgbot.eval.nets import ModelSpec, ValueNet, save_checkpoint

    torch.manual_seed(seed)
    return save_checkpoint(path, ValueNet(ModelSpec(hidden=hidden)))


def fuzz(n: int):  # type: ignore[no-untyped-def]
    """Hypothesis settings of the fuzz suites: ``n`` examples, seeded (derandomized), no example database."""
    from hypothesis import HealthCheck, settings

    return settings(
        max_examples=n,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
