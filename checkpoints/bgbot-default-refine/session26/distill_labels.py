"""Session 26's one-off: relabel refinement folders' boards with the mean probabilities of several networks.

    python distill_labels.py M1,M2,... OUT FOLDER...

Each ``FOLDER/data/chunk-*.npz`` (``training.refine generate``'s output) is copied to ``OUT/<folder name>/data/``
with its ``labels`` replaced by the mean of the models' probabilities of its boards (each row from its side on
roll's view, the networks of each row's class); boards, groups and the rest are kept. Writes are atomic.
"""

import json
import sys
from pathlib import Path

import numpy as np

from bgbot.eval.evaluate import NetEvaluator
from bgbot.fileio import atomic_open, write_text_atomic


def main() -> None:
    models, out, folders = sys.argv[1].split(","), Path(sys.argv[2]), sys.argv[3:]
    evaluators = [NetEvaluator.from_checkpoint(m) for m in models]
    for folder in map(Path, folders):
        dst = out / folder.name
        (dst / "data").mkdir(parents=True, exist_ok=True)
        for f in sorted((folder / "data").glob("chunk-*.npz")):
            with np.load(f, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            boards = arrays["boards"].astype(np.int8)
            arrays["labels"] = np.mean([e(boards) for e in evaluators], axis=0).astype(np.float32)
            with atomic_open(dst / "data" / f.name) as fh:
                np.savez(fh, **arrays)
        write_text_atomic(dst / "distill.json", json.dumps({"models": models, "from": str(folder)}) + "\n")
        print(dst, flush=True)


if __name__ == "__main__":
    main()
