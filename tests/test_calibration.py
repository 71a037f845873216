"""Per-class calibration of the network's outputs (bgbot.eval.calibration) and its benchmark script.

``benchmarks/calibration.py`` plots the network's 1-ply probabilities against reference labels per class and
prints the mean signed error per output; the module fits and applies Platt maps of the conditional chances.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bgbot.eval.calibration import (
    CalibratedEvaluator,
    Calibration,
    CalibrationError,
    apply_calibration,
    conditionals,
    cumulative,
    fit_calibration,
    load_calibration,
)
from bgbot.rules.position import Position, PositionClass, classify_boards

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "calibration.py"
CONTACT, CRASHED, RACE = int(PositionClass.CONTACT), int(PositionClass.CRASHED), int(PositionClass.RACE)


def _probs(rng: np.random.Generator, n: int) -> np.ndarray:
    """Consistent random probabilities (side on roll): win, then conditional gammon and backgammon chances."""
    cond = np.stack([rng.uniform(0.05, 0.95, n), rng.uniform(0.02, 0.5, n), rng.uniform(0.01, 0.2, n),
                     rng.uniform(0.02, 0.5, n), rng.uniform(0.01, 0.2, n)], axis=1)
    return cumulative(cond)


def test_conditionals_and_cumulative_are_inverse() -> None:
    p = _probs(np.random.default_rng(0), 50)
    np.testing.assert_allclose(cumulative(conditionals(p)), p, atol=1e-12)
    # no win possible: the win-side chances are 0, not a division by zero
    assert conditionals(np.array([[0.0, 0.0, 0.0, 0.3, 0.1]]))[0].tolist() == pytest.approx([0, 0, 0, 0.3, 1 / 3])


def test_fit_recovers_a_known_distortion_per_class_and_leaves_other_classes_alone() -> None:
    rng = np.random.default_rng(1)
    n = 3000
    pred = _probs(rng, n)
    cls = np.where(np.arange(n) % 2 == 0, CONTACT, RACE).astype(np.int8)
    # the reference: contact wins really happen more often (logit + 0.4), gammon wins less (logit * 0.8)
    cond = conditionals(pred)
    z = np.log(cond / (1 - cond))
    true = cond.copy()
    c = cls == CONTACT
    true[c, 0] = 1 / (1 + np.exp(-(z[c, 0] + 0.4)))
    true[c, 1] = 1 / (1 + np.exp(-(0.8 * z[c, 1])))
    ref = cumulative(true)
    cal = fit_calibration(pred, ref, cls, ridge=1e-3)
    a, b = cal.maps["contact"]["win"]
    assert a == pytest.approx(1.0, abs=0.02) and b == pytest.approx(0.4, abs=0.02)
    a, b = cal.maps["contact"]["wg|win"]
    assert a == pytest.approx(0.8, abs=0.02) and b == pytest.approx(0.0, abs=0.03)
    for out, (a, b) in cal.maps["race"].items():  # race had no distortion: identity
        assert a == pytest.approx(1.0, abs=0.02) and b == pytest.approx(0.0, abs=0.02), out
    after = apply_calibration(cal, pred, cls)
    assert np.abs(after - ref).max() < 0.01 < np.abs(pred - ref).max()
    # consistent by construction: wbg <= wg <= win, lbg <= lg <= 1 - win
    assert (after[:, 2] <= after[:, 1] + 1e-7).all() and (after[:, 1] <= after[:, 0] + 1e-7).all()
    assert (after[:, 4] <= after[:, 3] + 1e-7).all() and (after[:, 3] <= 1 - after[:, 0] + 1e-6).all()


def test_a_class_with_too_little_mass_keeps_the_identity() -> None:
    rng = np.random.default_rng(2)
    pred = _probs(rng, 10)
    cal = fit_calibration(pred, np.clip(pred + 0.05, 0, 1), np.full(10, CRASHED), min_mass=20.0)
    assert "crashed" not in cal.maps


def _cube_rows() -> tuple[list[dict], np.ndarray, np.ndarray]:
    rows = [json.loads(line) for line in (ROOT / "tests/data/benchmark/cube.jsonl").read_text().splitlines()]
    boards = np.stack([Position.from_id(r["position"]).array() for r in rows]).astype(np.int8)
    return rows, boards, classify_boards(boards)


def test_the_evaluator_wrapper_touches_only_calibrated_classes(tmp_path: Path) -> None:
    _, boards, cls = _cube_rows()
    pick = [int(np.flatnonzero(cls == CONTACT)[0]), int(np.flatnonzero(cls == RACE)[0])]
    base_out = np.array([[0.5, 0.15, 0.01, 0.12, 0.005], [0.6, 0.0, 0.0, 0.0, 0.0]], dtype=np.float32)
    cal = Calibration({"contact": {"win": (1.0, 0.5)}}, {"reference": "test"})
    path = cal.save(tmp_path / "cal.json")
    ev = CalibratedEvaluator(lambda b: base_out[: len(b)].copy(), load_calibration(path))
    out = ev(boards[pick])
    assert out[0, 0] == pytest.approx(1 / (1 + np.exp(-0.5)), abs=1e-6)  # logit(0.5) + 0.5
    assert out[0, 1] / out[0, 0] == pytest.approx(0.3, abs=1e-6)  # the gammon share of wins kept
    np.testing.assert_array_equal(out[1], base_out[1])  # a race: no map for it
    assert load_calibration(path).provenance == {"reference": "test"}


def test_bad_calibration_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(CalibrationError, match="does not exist"):
        load_calibration(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "bgbot-calibration-1", "maps": {"bearoff": {"win": [1, 0]}}}))
    with pytest.raises(CalibrationError, match="bearoff"):
        load_calibration(bad)
    bad.write_text(json.dumps({"format": "bgbot-calibration-1", "maps": {"contact": {"win": [-1, 0]}}}))
    with pytest.raises(CalibrationError, match="contact win"):
        load_calibration(bad)
    bad.write_text("{not json")
    with pytest.raises(CalibrationError, match=r"bad\.json"):
        load_calibration(bad)


def _tiny_cube_file(path: Path) -> Path:
    """Two positions of each class from the cube benchmark (gnubg 2-ply probabilities)."""
    rows, _, cls = _cube_rows()
    keep = [i for c in (CONTACT, CRASHED, RACE) for i in np.flatnonzero(cls == c)[:2]]
    path.write_text("".join(json.dumps(rows[i]) + "\n" for i in keep))
    return path


def test_the_script_writes_a_png_and_a_table(tmp_path: Path) -> None:
    data = _tiny_cube_file(tmp_path / "tiny.jsonl")
    png = tmp_path / "out" / "cal.png"
    fit = tmp_path / "fit.json"
    r = subprocess.run([sys.executable, str(SCRIPT), "--data", str(data), "--png", str(png), "--bins", "2",
                        "--fit", str(fit)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    lines = r.stdout.splitlines()
    table = {w[0]: w for w in map(str.split, lines) if w and w[0] in ("contact", "crashed", "race")}
    assert set(table) == {"contact", "crashed", "race"} and all(t[1] == "2" for t in table.values())
    # too few positions to fit anything: the calibration written is the identity, with its provenance
    written = load_calibration(fit)
    assert dict(written.maps) == {} and written.provenance["positions"] == 6


def test_the_script_refuses_a_bad_file_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"position": "nonsense!!", "probs": [0.5, 0.1, 0, 0.1, 0]}\n')
    r = subprocess.run([sys.executable, str(SCRIPT), "--data", str(bad), "--png", str(tmp_path / "x.png")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 2
    assert "nonsense!!" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.png").exists()


def test_the_script_reads_saved_rollout_labels(tmp_path: Path) -> None:
    rows, boards, cls = _cube_rows()
    keep = np.flatnonzero(np.isin(cls, (CONTACT, RACE)))[:4]
    labels = tmp_path / "labels.npz"
    np.savez(labels, boards=boards[keep], probs=np.array([rows[i]["probs"] for i in keep], dtype=np.float32),
             se=np.zeros(len(keep), np.float32), settings=np.str_("a test"))
    png = tmp_path / "cal.png"
    r = subprocess.run([sys.executable, str(SCRIPT), "--reference", "npz", "--labels", str(labels), "--png", str(png)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "4 labels (a test)" in r.stdout and png.stat().st_size > 0
    r = subprocess.run([sys.executable, str(SCRIPT), "--reference", "npz", "--png", str(png)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 2 and "--labels" in r.stderr
