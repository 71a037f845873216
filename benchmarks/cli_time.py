"""Wall time of one `bgbot move` command, warm (median of N calls) and first after install, with a reference.

Each contender is a fresh process started from an empty temporary folder (as a
user would call it); the calls are interleaved round by round so that load
swings hit all of them alike.  Contenders:

- ``bgbot move 4HPwATDgc/ABMA 31`` as shipped: a 1-ply question runs the
  kernels as plain Python (``bgbot/jit.py``), numba is never imported;
- the same with ``BGBOT_JIT=1`` (numba, its disk cache warm);
- ``--ply 2`` (compiled, cache warm);
- reference, where bgsage is installed: a Python process that imports bgsage
  and asks its 1-ply analyzer for the same position's best play.

``--first`` also times the first call after an install: the compiled command
with an empty numba cache (``NUMBA_CACHE_DIR`` pointed at a new folder), and
the shipped 1-ply command with that empty cache (it needs none).

    python benchmarks/cli_time.py --runs 10 --first
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

POSITION, DICE = "4HPwATDgc/ABMA", "31"
BGSAGE = (
    "import bgsage\n"
    "a = bgsage.BgBotAnalyzer(eval_level='1ply', cubeful=False, parallel_threads=0)\n"
    "b = [0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0]\n"
    "print(a.checker_play(b, 3, 1).moves[0].board)\n"
)


def bgbot_exe() -> str:
    """The ``bgbot`` console script next to this Python (the venv's), else the one on PATH."""
    here = Path(sys.executable).with_name("bgbot")
    return str(here) if here.is_file() else (shutil.which("bgbot") or "bgbot")


def wall(cmd: list[str], env: dict[str, str], cwd: str) -> float:
    """Seconds one command takes, start to exit (it must succeed)."""
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10, help="warm calls of each contender (default 10)")
    ap.add_argument("--first", action="store_true", help="also time the first call with an empty numba cache")
    args = ap.parse_args()

    exe = bgbot_exe()
    base = {k: v for k, v in os.environ.items() if k != "BGBOT_JIT"}
    move = [exe, "move", POSITION, DICE]
    contenders: dict[str, tuple[list[str], dict[str, str]]] = {
        "bgbot move (1-ply, shipped: plain Python kernels)": (move, base),
        "bgbot move, BGBOT_JIT=1 (numba, warm cache)": (move, {**base, "BGBOT_JIT": "1"}),
        "bgbot move --ply 2 (numba, warm cache)": ([*move, "--ply", "2"], base),
    }
    try:
        import bgsage  # noqa: F401
    except ImportError:
        print("no bgsage reference: pip install bgsage (or .[ref])")
    else:
        contenders["reference: bgsage 1-ply, one Python process"] = ([sys.executable, "-c", BGSAGE], base)

    with tempfile.TemporaryDirectory(prefix="bgbot-cli-time-") as cwd:
        for cmd, env in contenders.values():  # untimed: numba's cache filled, files in the page cache
            wall(cmd, env, cwd)
        times: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(args.runs):
            for name, (cmd, env) in contenders.items():
                times[name].append(wall(cmd, env, cwd))
        load = os.getloadavg()[0]
        print(f"warm wall time over {args.runs} calls each, interleaved, from an empty folder; load {load:.1f}")
        ref = statistics.median(times[next(reversed(times))]) if "bgsage" in next(reversed(times)) else None
        for name, ts in times.items():
            med = statistics.median(ts)
            ratio = f"  ({med / ref:.2f}x the reference)" if ref else ""
            print(f"  {name:<52} median {med:.3f} s  min {min(ts):.3f}  max {max(ts):.3f}{ratio}")
        if args.first:
            print("first call after install (empty numba cache):")
            for name, (cmd, env) in list(contenders.items())[:3]:
                with tempfile.TemporaryDirectory(prefix="bgbot-numba-cache-") as cache:
                    label = name.replace("warm cache", "empty cache")
                    print(f"  {label:<52} {wall(cmd, {**env, 'NUMBA_CACHE_DIR': cache}, cwd):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
