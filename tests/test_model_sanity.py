"""A model whose weights are finite but absurd (scaled by 1e30, an output pushed to certainty) is refused where it
is loaded, with one line quoting the file, by every entry point; sound and untrained networks still load."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bgbot.cli.main import main
from bgbot.engine.api import Engine
from bgbot.errors import CheckpointError
from bgbot.eval.inference import NumpyNet, read_npz, save_npz
from bgbot.eval.models import DEFAULT_MODEL, check_outputs, load_model
from bgbot.rules.position import Position

ROOT = Path(__file__).resolve().parents[1]
START = Position.start().gnubg_id()


def _scaled(net: NumpyNet, factor: float, only: str | None = None) -> NumpyNet:
    """``net`` with every weight and bias times ``factor`` (only class network ``only``, when given)."""
    def scale(n: NumpyNet) -> NumpyNet:
        return NumpyNet(n.spec, tuple((w * np.float32(factor), b * np.float32(factor)) for w, b in n.layers))

    main_net = scale(net) if only is None else NumpyNet(net.spec, net.layers)
    subs = {k: scale(v) if only in (None, k) else v for k, v in net.by_class.items()}
    return NumpyNet(main_net.spec, main_net.layers, subs)


@pytest.fixture(scope="module")
def shipped() -> tuple[NumpyNet, dict[str, object]]:
    return read_npz(DEFAULT_MODEL)


@pytest.fixture(scope="module")
def absurd(shipped: tuple[NumpyNet, dict[str, object]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    net, meta = shipped
    return save_npz(tmp_path_factory.mktemp("models") / "scaled.npz", _scaled(net, 1e30),
                    **{k: v for k, v in meta.items() if k not in ("format", "encoding_version", "hidden",
                                                                   "activation", "class_nets")})


def test_scaled_weights_are_finite_yet_refused(absurd: Path) -> None:
    net, _ = read_npz(absurd)  # the file itself is well formed: finite float32 weights of the right shapes
    assert all(np.isfinite(w).all() and np.abs(w).max() > 1e25 for w, _ in net.layers)
    with pytest.raises(CheckpointError, match=r"absurd values") as err:
        load_model(absurd)
    assert repr(str(absurd)) in str(err.value) and "starting position" in str(err.value)


def test_the_shipped_model_and_untrained_networks_load(shipped: tuple[NumpyNet, dict[str, object]]) -> None:
    torch = pytest.importorskip("torch")
    from bgbot.eval.nets import ModelSpec, ValueNet, to_numpy

    assert load_model().net.spec == shipped[0].spec
    checked = 0
    for act in ("sigmoid", "relu", "tanh"):
        for hidden in ((8,), (16,), (80,), (64, 32)):
            for version in (1, 2, 3):
                for seed in range(6):
                    torch.manual_seed(seed)
                    check_outputs(to_numpy(ValueNet(ModelSpec(version, hidden, act))), "untrained")
                    checked += 1
    assert checked == 216


def test_a_damaged_class_network_is_named(shipped: tuple[NumpyNet, dict[str, object]], tmp_path: Path) -> None:
    net, _ = shipped
    assert sorted(net.by_class) == ["crashed", "race"]
    for name in net.by_class:
        path = save_npz(tmp_path / f"{name}.npz", _scaled(net, 1e30, only=name))
        with pytest.raises(CheckpointError, match=f"its {name} network"):
            load_model(path)


def test_a_certain_gammon_is_refused(shipped: tuple[NumpyNet, dict[str, object]], tmp_path: Path) -> None:
    net, _ = shipped
    *hidden, (w, b) = net.layers
    b = b.copy()
    b[0] -= 1.0  # the side on roll wins about 0.29 at the start, within what sound networks say
    b[1] = 60.0  # ... yet its gammon output is certain: wg = 1, far above w
    bad = NumpyNet(net.spec, (*hidden, (w, b)), dict(net.by_class))
    x = np.asarray(__import__("bgbot.eval.encoding", fromlist=["encode"]).encode(
        np.asarray(Position.start().board, dtype=np.int8)[None], net.spec.encoding_version), dtype=np.float32)
    w0, wg0 = (float(v) for v in bad.probs_numpy(x)[0, :2])
    assert 0.15 < w0 < 0.85 and wg0 - w0 > 0.5, (w0, wg0)
    with pytest.raises(CheckpointError, match="gammons far above"):
        load_model(save_npz(tmp_path / "gammon.npz", bad))


def test_a_torch_checkpoint_is_checked_too(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from bgbot.eval.nets import ModelSpec, ValueNet, save_checkpoint

    torch.manual_seed(0)
    net = ValueNet(ModelSpec(hidden=(16,)))
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(1e30)
    path = save_checkpoint(tmp_path / "scaled.pt", net)
    with pytest.raises(CheckpointError, match="absurd values"):
        load_model(path)


@pytest.mark.parametrize(
    "argv",
    [
        ["move", "--checkpoint", "{m}", START, "31"],
        ["eval", "--checkpoint", "{m}", START],
        ["cube", "--checkpoint", "{m}", START],
        ["rollout", "--checkpoint", "{m}", START, "--trials", "36"],
        ["analyse", str(ROOT / "tests" / "data" / "analyse" / "m06.mat"), "--checkpoint", "{m}", "--ply", "1"],
        ["pit", "bgbot:checkpoint={m}", "pubeval", "--games", "2", "--workers", "1", "--quiet"],
        ["pit", "pubeval", "bgbot:ply=1,checkpoint={m}", "--games", "2", "--workers", "1", "--quiet"],
    ],
    ids=["move", "eval", "cube", "rollout", "analyse", "pit-first", "pit-second"],
)
def test_every_entry_point_says_one_line(argv: list[str], absurd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([a.replace("{m}", str(absurd)) for a in argv]) == 2
    stderr = capsys.readouterr().err
    # the error is one line (above it may stand progress: kernels compiling on a first run, pit's header)
    err = [line for line in stderr.splitlines() if line.startswith("bgbot:")]
    assert len(err) == 1 and err[0].startswith("bgbot: error:") and "Traceback" not in stderr, stderr
    assert "absurd values" in err[0] and str(absurd) in err[0]


def test_the_library_and_the_environment_variable(absurd: Path) -> None:
    with pytest.raises(CheckpointError, match="absurd values"):
        Engine.load(absurd)
    proc = subprocess.run([sys.executable, "-m", "bgbot.cli", "move", START, "31"], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, env={**__import__("os").environ, "BGBOT_CHECKPOINT": str(absurd)})
    assert proc.returncode == 2 and "absurd values" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
