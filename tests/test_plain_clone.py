"""The test suite's reference data is inside the repository: a plain clone, with nothing beside it, passes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# every test module that reads tests/data (the movegen and pubeval oracles, the gnubg benchmarks, the METs)
DATA_TESTS = [
    "tests/test_movegen.py",
    "tests/test_met.py",
    "tests/test_cube.py",
    "tests/test_pubeval_duel.py",
    "tests/test_encoding.py",
    "tests/test_heldout_benchmarks.py",
]


@pytest.mark.slow
def test_a_plain_clone_passes_the_data_reading_tests(tmp_path: Path) -> None:
    if not (ROOT / ".git").exists():
        pytest.fail(f"{ROOT} is not a git checkout: this test clones it")
    clone = tmp_path / "bgbot"  # tmp_path holds nothing else: no data folder beside the clone
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bgbot"]
    env = {**os.environ, "PYTHONPATH": str(clone)}  # import the clone's bgbot, not the installed checkout
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-x", *DATA_TESTS],
        cwd=clone, env=env, capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout and "error" not in proc.stdout.lower()


def test_nothing_refers_to_a_folder_outside_the_repository() -> None:
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    needle = "../" + "shared"  # written in two parts so that this file does not match itself
    bad = [
        f for f in tracked
        if (ROOT / f).is_file() and (ROOT / f).suffix in {".py", ".md", ".toml", ".txt", ""}
        and needle in (ROOT / f).read_text(errors="ignore")
    ]
    assert bad == []
    beside = "parents[1]" + ".parent"  # the old way tests reached past the repository root
    parent_data = [f for f in tracked if (ROOT / f).suffix == ".py" and beside in (ROOT / f).read_text()]
    assert parent_data == []
