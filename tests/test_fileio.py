"""Atomic writes (:mod:`bgbot.fileio`): the old file or the new one, never half of one, no temporary left behind."""

from __future__ import annotations

import stat
from pathlib import Path

import numpy as np
import pytest

from bgbot.fileio import atomic_open, write_text_atomic


def test_a_write_replaces_the_file_readable_by_everyone(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    assert write_text_atomic(target, "new ü\nline\n") == target
    assert target.read_bytes() == "new ü\nline\n".encode()
    assert stat.S_IMODE(target.stat().st_mode) == 0o644  # mkstemp's 0600 would hide a shared file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_a_failure_inside_the_block_keeps_the_old_file_and_removes_the_temporary(tmp_path: Path) -> None:
    target = tmp_path / "model.npz"
    np.savez(target, w=np.arange(3))
    before = target.read_bytes()
    with pytest.raises(RuntimeError, match="half-way"), atomic_open(target) as f:
        f.write(b"PK\x03\x04 partial")
        raise RuntimeError("interrupted half-way")
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.npz"]


def test_a_binary_writer_takes_numpy_archives(tmp_path: Path) -> None:
    target = tmp_path / "a.npz"
    with atomic_open(target) as f:
        np.savez(f, x=np.arange(5, dtype=np.int8))
    with np.load(target, allow_pickle=False) as z:
        np.testing.assert_array_equal(z["x"], np.arange(5))


def test_a_missing_folder_is_an_os_error_and_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_text_atomic(tmp_path / "nowhere" / "x.txt", "x")
    assert list(tmp_path.iterdir()) == []


def test_parents_makes_the_missing_folders_first(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "x.mat"
    assert write_text_atomic(target, "x\n", parents=True) == target
    assert target.read_text() == "x\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["x.mat"]
