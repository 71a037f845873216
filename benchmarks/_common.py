"""What the network benchmarks share: the reference data's place, common options, the thread setting."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without an install

REFDATA = ROOT / "tests" / "data" / "benchmark"  # gnubg's reference positions (tests/data/README.md)


def network_args(ap: argparse.ArgumentParser, data: Path, data_help: str, threads_help: str) -> None:
    """Add ``--checkpoint``, ``--data`` and ``--threads`` to a benchmark's parser."""
    ap.add_argument("--checkpoint", help="network (default: $BGBOT_CHECKPOINT or the shipped model)")
    ap.add_argument("--data", type=Path, default=data, help=data_help)
    ap.add_argument("--threads", type=int, default=1, help=threads_help)


def start(args: argparse.Namespace) -> list[dict]:
    """Set torch's threads from ``--threads`` and read the ``--data`` JSON-lines file."""
    from bgbot.eval.nets import set_torch_threads

    set_torch_threads(args.threads)
    return [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]


def gnubg_net_evaluator() -> Callable[[np.ndarray], np.ndarray]:
    """gnubg's own 0-ply networks (``gnubg_nn``, a reference install) as a bgbot evaluator.

    Boards ``(N, 26)`` from the view of their side on roll, before the roll; returns ``(N, 5)``
    probabilities from the same view, in bgbot's (and gnubg's) output order.  An engine built on it
    (``Engine(gnubg_net_evaluator())``) runs bgbot's search and cube code on gnubg's probabilities,
    which separates those from bgbot's network.  One Python call per distinct board, cached: for
    benchmarks only.  Raises ``SystemExit`` with a hint when gnubg-nn is not installed.
    """
    try:
        import gnubg_nn
    except ImportError:
        raise SystemExit("gnubg's networks need gnubg-nn (pip install gnubg-nn, or the .[ref] extra)") from None
    from bgbot.rules.position import Position

    cache: dict[bytes, Sequence[float]] = {}

    def evaluate(boards: np.ndarray) -> np.ndarray:
        out = np.empty((len(boards), 5), dtype=np.float32)
        for i, b in enumerate(np.asarray(boards, dtype=np.int8)):
            key = b.tobytes()
            if key not in cache:
                board = gnubg_nn.board_from_position_id(Position.from_array(b).gnubg_id())
                cache[key] = gnubg_nn.probabilities(board, 0)
            out[i] = cache[key]
        return out

    return evaluate
