"""Stopping ``bgbot train`` with SIGTERM (or Ctrl-C) and resuming gives the model an uninterrupted run gives, bit for
bit, as kill -9 and a resume from the last interval checkpoint does."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")  # training needs the train extra

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "configs" / "smoke.toml"


def _train(out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "bgbot.cli", "train", "--config", str(SMOKE), "--out", str(out), "--quiet", *extra]


def _load(path: Path) -> dict[str, object]:
    return torch.load(path, weights_only=False)  # type: ignore[no-any-return]


@pytest.mark.slow
def test_sigterm_mid_interval_resumes_bit_for_bit(tmp_path: Path) -> None:
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    # 1,000 games (five intervals), so that the signal lands mid-run even on a loaded machine
    done = subprocess.run(_train(whole, "--games", "1000"), capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr
    first_interval = json.loads((whole / "metrics.jsonl").read_text().splitlines()[0])["games_trained"]

    proc = subprocess.Popen(_train(cut, "--games", "1000"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT)
    try:
        deadline = time.time() + 300
        while not (cut / "checkpoint.pt").exists() and proc.poll() is None and time.time() < deadline:
            time.sleep(0.005)
        time.sleep(0.3)  # a few steps into the second interval of checkpoint_every = 200 games
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, (out, err)
    stopped = _load(cut / "checkpoint.pt")["games_trained"]
    final = _load(whole / "checkpoint.pt")["games_trained"]
    assert isinstance(stopped, int) and isinstance(final, int)
    assert first_interval < stopped < final, (first_interval, stopped, final)  # really in the middle of an interval

    resumed = subprocess.run(_train(cut, "--resume", str(cut / "checkpoint.pt"), "--games", "1000"),
                             capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    a, b = _load(whole / "checkpoint.pt"), _load(cut / "checkpoint.pt")
    assert a["games_trained"] == b["games_trained"]
    wa, wb = a["state_dict"], b["state_dict"]
    assert isinstance(wa, dict) and isinstance(wb, dict) and wa.keys() == wb.keys()
    for k in wa:
        assert torch.equal(wa[k], wb[k]), f"{k}: max difference {float((wa[k] - wb[k]).abs().max())}"
    ta, tb = a["trainer"], b["trainer"]
    assert isinstance(ta, dict) and isinstance(tb, dict)
    for key in ("games_done", "positions_trained", "updates", "rng"):
        assert ta[key] == tb[key], key
    rows = [json.loads(line) for line in (cut / "metrics.jsonl").read_text().splitlines()]
    assert [r["games_trained"] for r in rows] == [
        json.loads(line)["games_trained"] for line in (whole / "metrics.jsonl").read_text().splitlines()
    ]
    assert f"stopped after {stopped} games" in out  # the run says where it stopped


def test_first_signal_waits_for_the_step_a_second_stops_at_once() -> None:
    from training.selfplay import _StopBetweenSteps

    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with _StopBetweenSteps() as stop:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)  # the handler runs at the next bytecode of the main thread
        assert stop.requested == "SIGTERM"
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.5)
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
