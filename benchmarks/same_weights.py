"""Whether two models play with the same weights: every network (main and class networks), layer by layer.

Both files are read with :func:`bgbot.eval.models.load_model` (``.pt`` checkpoints without unpickling
anything but tensors, or ``.npz`` models), so the comparison is of what plays, not of the files' bytes: a
checkpoint's metadata (paths, dates, the training record) may differ while its weights are equal.  Prints
each network's largest absolute weight difference and exits 0 when every weight is equal, 1 when any
differs (or a network is missing from one side), 2 when a file cannot be read.

    python benchmarks/same_weights.py checkpoints/bgbot-default.pt runs/generation-10/fit-crashed/refined.pt
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from _common import ROOT  # noqa: F401  (puts the checkout on sys.path)

from bgbot.errors import BgbotError
from bgbot.eval.inference import NumpyNet
from bgbot.eval.models import load_model


def networks(net: NumpyNet) -> dict[str, NumpyNet]:
    """The main network and its class networks, by name ("main", then the class names)."""
    return {"main": net, **net.by_class}


def max_difference(a: NumpyNet, b: NumpyNet) -> float | None:
    """The largest absolute difference between two networks' weights and biases (None: their specs differ; a
    loaded network's layer shapes are its spec's, which :class:`NumpyNet` checks)."""
    if a.spec != b.spec:
        return None
    worst = 0.0
    for (wa, ba), (wb, bb) in zip(a.layers, b.layers, strict=True):
        worst = max(worst, float(np.max(np.abs(wa - wb), initial=0.0)), float(np.max(np.abs(ba - bb), initial=0.0)))
    return worst


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", type=Path, help="a checkpoint (.pt) or model (.npz)")
    ap.add_argument("b", type=Path, help="another")
    args = ap.parse_args(argv)
    try:
        na, nb = networks(load_model(args.a).net), networks(load_model(args.b).net)
    except BgbotError as exc:
        print(f"same_weights: {exc}", file=sys.stderr)
        return 2
    for path in (args.a, args.b):
        print(f"{path}: sha256 {hashlib.sha256(path.read_bytes()).hexdigest()[:16]}...")
    equal = True
    for name in sorted(set(na) | set(nb), key=lambda n: (n != "main", n)):
        if name not in na or name not in nb:
            print(f"{name:<8} only in {args.a if name in na else args.b}")
            equal = False
            continue
        diff = max_difference(na[name], nb[name])
        if diff is None:
            print(f"{name:<8} different shapes: {na[name].spec} / {nb[name].spec}")
            equal = False
        else:
            print(f"{name:<8} {na[name].spec}: max |difference| {diff:.3g}")
            equal = equal and diff == 0.0
    print("same weights" if equal else "the weights differ")
    return 0 if equal else 1


if __name__ == "__main__":
    raise SystemExit(main())
