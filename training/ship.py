"""Publish a training run into ``checkpoints/``: the model users load, and the run to resume.

    python -m training.ship runs/full [--name bgbot-default]

writes ``checkpoints/NAME.pt`` (weights, model description, config, games
trained and the last yardstick result: no trainer state, so it stays small)
and copies the resumable checkpoint, ``metrics.jsonl`` and
``learning_curve.png`` to ``checkpoints/NAME-run/``.  Resume training with
``bgbot train --resume checkpoints/NAME-run/checkpoint.pt --out runs/NAME``.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from bgbot.eval.nets import net_from_checkpoint, read_checkpoint, save_checkpoint

ROOT = Path(__file__).resolve().parents[1]


def ship(run_dir: str | Path, name: str = "bgbot-default", dest: str | Path = ROOT / "checkpoints") -> Path:
    """Write the slim model and a copy of the resumable run; returns the slim model's path."""
    run_dir, dest = Path(run_dir), Path(dest)
    data = read_checkpoint(run_dir / "checkpoint.pt")
    net = net_from_checkpoint(data, run_dir / "checkpoint.pt")
    slim = save_checkpoint(
        dest / f"{name}.pt", net, config=data.get("config", {}), games_trained=data.get("games_trained", 0),
        last_eval=data.get("last_eval", ""),
    )
    keep = dest / f"{name}-run"
    keep.mkdir(parents=True, exist_ok=True)
    for f in ("checkpoint.pt", "metrics.jsonl", "learning_curve.png"):
        if (run_dir / f).exists():
            shutil.copy2(run_dir / f, keep / f)
    return slim


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir")
    ap.add_argument("--name", default="bgbot-default")
    args = ap.parse_args()
    print(ship(args.run_dir, args.name))


if __name__ == "__main__":
    main()
