"""Publish a training run into ``checkpoints/``: the model users load, and the run to resume.

    python -m training.ship runs/full [--name bgbot-default]

writes the model users load into the package, ``bgbot/data/models/NAME.npz``
(numpy weights and a JSON description: no torch needed to play, and every
install finds it), the slim torch checkpoint ``checkpoints/NAME.pt`` (weights,
model description, config, games trained and the last yardstick result: no
trainer state; what a new run's ``init_from`` starts from), and copies the
resumable checkpoint, ``metrics.jsonl`` and ``learning_curve.png`` to
``checkpoints/NAME-run/``.  Resume training with
``bgbot train --resume checkpoints/NAME-run/checkpoint.pt --out runs/NAME``.

    python -m training.ship runs/fit --refined [--name bgbot-default]

publishes a self-labelled refinement (:mod:`training.refine`) the same way:
its ``refined.pt`` becomes the model, its ``fit.json`` (or, for ``refine average`` and
``refine ensemble``, ``average.json`` or ``ensemble.json``) goes to ``checkpoints/NAME-refine/``.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from bgbot.eval.inference import save_npz
from bgbot.eval.models import DEFAULT_MODEL
from bgbot.eval.nets import load_checkpoint, save_checkpoint, to_numpy

ROOT = Path(__file__).resolve().parents[1]


RUN_FILES = ("checkpoint.pt", "metrics.jsonl", "learning_curve.png")
REFINE_FILES = ("refined.pt", "fit.json", "average.json", "ensemble.json")


def ship(
    run_dir: str | Path,
    name: str = "bgbot-default",
    dest: str | Path = ROOT / "checkpoints",
    models: str | Path = DEFAULT_MODEL.parent,
    *,
    refined: bool = False,
) -> Path:
    """Write the numpy model into ``models``, the slim checkpoint and a copy of the run into ``dest``.

    A self-play run ships its ``checkpoint.pt`` and keeps its records in
    ``dest/NAME-run``; a refinement (``refined=True``, the output folder of
    ``python -m training.refine fit``) ships ``refined.pt`` and keeps
    ``fit.json`` in ``dest/NAME-refine``.  Returns the numpy model's path.
    """
    run_dir, dest = Path(run_dir), Path(dest)
    files = REFINE_FILES if refined else RUN_FILES
    model = load_checkpoint(run_dir / files[0])
    data, net = model.data, model.net
    meta = {"config": data.get("config", {}), "games_trained": data.get("games_trained", 0),
            "last_eval": data.get("last_eval", "")}
    save_checkpoint(dest / f"{name}.pt", net, class_nets=model.class_nets, **meta)
    shipped = save_npz(Path(models) / f"{name}.npz", to_numpy(net, model.class_nets), **meta)
    keep = dest / f"{name}-{'refine' if refined else 'run'}"
    keep.mkdir(parents=True, exist_ok=True)
    for f in files:
        if (run_dir / f).exists() and not (refined and f.endswith(".pt")):  # the slim .pt is the refined net
            shutil.copy2(run_dir / f, keep / f)
    return shipped


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir")
    ap.add_argument("--name", default="bgbot-default")
    ap.add_argument("--refined", action="store_true", help="RUN_DIR is a training.refine fit folder")
    args = ap.parse_args()
    print(ship(args.run_dir, args.name, refined=args.refined))


if __name__ == "__main__":
    from training.cli import run

    run(main, "training.ship")
