"""Shared fixtures: where the reference data lives, and small helpers."""

from __future__ import annotations

import json
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
