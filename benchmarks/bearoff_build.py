"""Time the one-sided bear-off database build and print the file size.

    .venv/bin/python benchmarks/bearoff_build.py [--out PATH] [--max-checkers 15] [--no-reference]

Prints wall and CPU seconds of the build (the numba move generator is compiled
before the clock starts), the size of the compressed file, the time to load it
and the speed of ``BearoffDB.evaluate``.  As a reference measured in the same
run it times gnubg's own builder, ``makebearoff -o 6`` (same 54,264 positions
with gammon distributions), when ``/usr/games/makebearoff`` exists, and prints
the ratio of CPU times.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import ROOT  # noqa: F401  (puts the checkout on sys.path)

from bgbot.eval.bearoff import MAX_CHECKERS, BearoffDB, build_bearoff, unrank_all
from bgbot.rules.movegen import successors_batch

MAKEBEAROFF = Path("/usr/games/makebearoff")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None, help="file to write (default: in a temp dir)")
    parser.add_argument("--max-checkers", type=int, default=MAX_CHECKERS)
    parser.add_argument("--no-reference", action="store_true", help="skip timing gnubg's makebearoff")
    args = parser.parse_args()

    successors_batch(np.zeros((1, 26), dtype=np.int8), (1, 1))  # compile outside the clock
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp) / "bearoff.npz"
        wall, cpu = time.perf_counter(), time.process_time()
        build_bearoff(out, progress=False, max_checkers=args.max_checkers)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        size = out.stat().st_size
        start = time.perf_counter()
        db = BearoffDB.load(out, build_if_missing=False)
        load_s = time.perf_counter() - start
        n_pos = db.rolls.shape[0]
        print(f"build: {n_pos} positions (<= {args.max_checkers} checkers) in {wall:.2f} s wall, {cpu:.2f} s CPU")
        print(f"file: {size / 1e6:.2f} MB compressed ({size} bytes) at {out}")
        print(f"load: {load_s:.3f} s")

        counts = unrank_all(args.max_checkers)
        rng = np.random.default_rng(0)
        boards = np.zeros((100_000, 26), dtype=np.int8)
        boards[:, 1:7] = counts[rng.integers(0, n_pos, len(boards))]
        boards[:, 24:18:-1] = -counts[rng.integers(0, n_pos, len(boards))]
        start = time.perf_counter()
        db.evaluate(boards)
        eval_s = time.perf_counter() - start
        print(f"evaluate: {len(boards) / eval_s:,.0f} positions/s (batch of {len(boards)})")

        if args.no_reference or not MAKEBEAROFF.exists() or args.max_checkers != MAX_CHECKERS:
            print("reference: skipped (needs /usr/games/makebearoff and the full 15-checker build)")
            return
        ref_out = Path(tmp) / "gnubg_os.bd"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        ref_wall = time.perf_counter()
        subprocess.run([str(MAKEBEAROFF), "-o", "6", "-f", str(ref_out)], check=True, capture_output=True)
        ref_wall = time.perf_counter() - ref_wall
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        ref_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        print(
            f"reference gnubg makebearoff -o 6: {ref_wall:.2f} s wall, {ref_cpu:.2f} s CPU, "
            f"{ref_out.stat().st_size / 1e6:.2f} MB; bgbot/gnubg CPU time ratio {cpu / ref_cpu:.2f}"
        )


if __name__ == "__main__":
    main()
