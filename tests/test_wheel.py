"""The wheel is what a user installs: the model inside, no trainer, no torch needed to play."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the working tree's files (the checkout itself is left untouched)."""
    src = tmp_path_factory.mktemp("src") / "bgbot"
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True,
        text=True, check=True,
    ).stdout.split("\n")
    for f in filter(None, files):
        if (ROOT / f).is_file() and not f.startswith(("checkpoints/", "tests/")):
            (src / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, src / f)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out), str(src)],
        check=True, capture_output=True, timeout=300,
    )
    (whl,) = out.glob("bgbot-*.whl")
    return whl


def test_the_wheel_holds_the_model_and_no_trainer(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "bgbot/data/models/bgbot-default.npz" in names
    assert "bgbot/data/bearoff-v1.npz" in names and "bgbot/py.typed" in names
    assert "bgbot/data/escapes.npy" in names  # the features' table, read by the plain-Python 1-ply path
    assert not [n for n in names if n.startswith(("training/", "checkpoints/", "tests/"))]
    assert wheel.stat().st_size < 5_000_000
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    requires = [line for line in zipfile.ZipFile(wheel).read(meta).decode().splitlines()
                if line.startswith("Requires-Dist:")]
    torch_lines = [line for line in requires if "torch" in line]
    assert torch_lines and all("extra ==" in line for line in torch_lines)  # torch only with an extra


def test_an_installed_wheel_plays_from_anywhere_without_torch(wheel: Path, tmp_path: Path) -> None:
    """A fresh venv outside the source tree with the wheel installed: ``bgbot move`` and ``bgbot eval`` work.

    The venv borrows the test venv's numpy/numba/... through a path entry (a ``.pth`` line adds the
    folder without running the ``.pth`` files in it, so the checkout's editable install stays out);
    bgbot itself comes only from the wheel.
    """
    import site
    import sysconfig

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    purelib = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    deps = [p for p in site.getsitepackages() if Path(p).is_dir()] or [sysconfig.get_paths()["purelib"]]
    (purelib / "deps.pth").write_text("\n".join(deps) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-index",
                    str(wheel)], check=True, capture_output=True, timeout=300)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    where = subprocess.run([str(py), "-c", "import bgbot, sys; print(bgbot.__file__, 'torch' in sys.modules)"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
    assert where.stdout.startswith(str(purelib / "bgbot")), where.stdout + where.stderr
    bgbot = str(venv / "bin" / "bgbot")
    move = subprocess.run([bgbot, "move", "4HPwATDgc/ABMA", "31"], cwd=elsewhere, env=env, capture_output=True,
                          text=True, timeout=600)
    assert move.returncode == 0, move.stderr[-2000:]
    assert "8/5 6/5" in move.stdout.split("\n", 3)[-1]
    ev = subprocess.run([bgbot, "eval", "4HPwATDgc/ABMA", "--json"], cwd=elsewhere, env=env, capture_output=True,
                        text=True, timeout=600)
    assert ev.returncode == 0, ev.stderr[-2000:]
    assert '"win"' in ev.stdout
    # 2-ply compiles the kernels with numba (1-ply questions run them as plain Python): the same best 31
    deep = subprocess.run([bgbot, "move", "4HPwATDgc/ABMA", "31", "--ply", "2"], cwd=elsewhere, env=env,
                          capture_output=True, text=True, timeout=900)
    assert deep.returncode == 0, deep.stderr[-2000:]
    assert "8/5 6/5" in deep.stdout.split("\n", 3)[-1]
    probe = ("import sys\nfrom bgbot.cli.main import main\nrc = main(['move', '4HPwATDgc/ABMA', '31'])\n"
             "print('TORCH', 'torch' in sys.modules, 'RC', rc)\n")
    proc = subprocess.run([str(py), "-c", probe], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=600)
    assert "TORCH False RC 0" in proc.stdout, proc.stderr[-2000:]
    # the trainer is not in the wheel: `bgbot train` says where training runs instead of a traceback
    train = subprocess.run([bgbot, "train"], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=600)
    assert train.returncode == 2
    assert "training runs from a clone of the repository" in train.stderr
    assert "Traceback" not in train.stderr


def test_a_torch_checkpoint_without_torch_says_what_to_do(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import importlib.util

    from bgbot.errors import CheckpointError
    from bgbot.eval.models import load_model

    ckpt = tmp_path / "run.pt"
    ckpt.write_bytes(b"PK")  # never read: the missing torch is found first
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    with pytest.raises(CheckpointError, match=r"torch training checkpoint and torch is not installed"):
        load_model(ckpt)
