"""What the network benchmarks share: the reference data's place, common options, the thread setting."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

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
