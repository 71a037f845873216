"""First use after ``pip install``: how long the first questions take in a fresh virtual environment.

Builds the wheel of this checkout, installs it into a new virtual environment (its dependencies
from PyPI, or from pip's cache), and times, each as a new process:

1. the first ``bgbot move 4HPwATDgc/ABMA 31 --ply 2`` (nothing compiled yet: plain-Python kernels),
2. ``bgbot warm-up`` (compiles and caches the numba kernels, with its progress bar),
3. the same 2-ply move again (compiled kernels loaded from the cache), the reference a warm call is,
4. the first ``bgbot analyse`` of a 7-point match at 1-ply after a fresh install (its warm-up included),

then the same from a **read-only** install: the virtual environment's files are made unwritable and the
commands run as an unprivileged user (root ignores permission bits), so numba's cache must go to the
user's cache folder (``~/.cache/bgbot/numba``).  Every figure is the median of ``--repeat`` fresh
installs' caches (the install is reused; its caches are wiped between repeats).

Usage::

    .venv/bin/python benchmarks/first_use.py [--repeat 3] [--keep /tmp/first-use]
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

ROOT = Path(__file__).resolve().parent.parent
MATCH = ROOT / "tests" / "data" / "analyse" / "speed-7pt.mat"
MOVE = ["move", "4HPwATDgc/ABMA", "31", "--ply", "2"]


def sh(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` and fail loudly (its output shown) if it fails."""
    done = subprocess.run(cmd, capture_output=True, text=True, **kw)  # type: ignore[call-overload]
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return done  # type: ignore[no-any-return]


def timed(cmd: list[str], env: dict[str, str], user: str | None = None) -> tuple[float, str]:
    """Wall-clock seconds of one command (as ``user`` when given) and its stdout."""
    if user is not None:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *cmd]
    t0 = time.perf_counter()
    done = sh(cmd, env=env, cwd="/")
    return time.perf_counter() - t0, done.stdout


def wipe_caches(venv: Path, home: Path) -> None:
    """Remove every numba cache of the installed bgbot (in-tree and the user's)."""
    for pyc in venv.rglob("bgbot/**/__pycache__"):
        for f in pyc.iterdir():
            if f.suffix in (".nbi", ".nbc", ".ready"):
                f.unlink()
    shutil.rmtree(home / ".cache" / "bgbot", ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="fresh caches per figure (default 3)")
    ap.add_argument("--rebuild", action="store_true", help="with --keep: build the wheel and the venv afresh")
    ap.add_argument("--keep", type=Path, help="build the wheel and the venv here and keep them (default: a temp dir)")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bgbot-first-use-"))
    work.mkdir(parents=True, exist_ok=True)
    wheels, venv, home = work / "wheels", work / "venv", work / "home"
    if args.rebuild:
        shutil.rmtree(wheels, ignore_errors=True)
        shutil.rmtree(venv, ignore_errors=True)
    if not any(wheels.glob("bgbot-*.whl")):
        sh([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)])
    wheel = max(wheels.glob("bgbot-*.whl"), key=lambda p: p.stat().st_mtime)
    if not (venv / "bin" / "bgbot").exists():
        sh([sys.executable, "-m", "venv", str(venv)])
        sh([str(venv / "bin" / "pip"), "install", "-q", str(wheel)])
    bgbot = str(venv / "bin" / "bgbot")
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "BGBOT_", "XDG_"))}
    env.update(HOME=str(home), PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    print(f"wheel {wheel.name}; venv {venv}; {os.cpu_count()} CPUs, load average "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()) + " (a machine shared with other work)", flush=True)

    figures: dict[str, list[float]] = {}

    def add(name: str, secs: float) -> None:
        figures.setdefault(name, []).append(secs)
        print(f"  {name}: {secs:.2f} s", flush=True)  # as it comes: a long run on a busy machine shows progress

    answer = ""
    for _ in range(args.repeat):
        wipe_caches(venv, home)
        secs, answer = timed([bgbot, *MOVE], env)
        add("first 2-ply move (nothing compiled)", secs)
        add("bgbot warm-up (compile + cache)", timed([bgbot, "warm-up", "--quiet"], env)[0])
        add("2-ply move, kernels cached (warm)", timed([bgbot, *MOVE], env)[0])
        wipe_caches(venv, home)
        add("first analyse 7-point match 1-ply (warm-up included)",
            timed([bgbot, "analyse", str(MATCH), "--ply", "1", "--quiet"], env)[0])
    assert "8/5 6/5" in answer.splitlines()[4], answer  # the right answer, not just a fast one

    # a read-only install: nobody may write in the venv; the commands run as an unprivileged user
    nobody = "65534"
    if os.geteuid() == 0 and shutil.which("setpriv"):
        wipe_caches(venv, home)
        ro_home = work / "home-ro"
        shutil.rmtree(ro_home, ignore_errors=True)
        ro_home.mkdir()
        os.chown(ro_home, int(nobody), int(nobody))
        sh(["chmod", "-R", "a-w", str(venv)])
        os.chmod(work, 0o755)
        try:
            ro_env = {**env, "HOME": str(ro_home)}
            for _ in range(args.repeat):
                shutil.rmtree(ro_home / ".cache", ignore_errors=True)
                add("read-only install: first 2-ply move", timed([bgbot, *MOVE], ro_env, nobody)[0])
                add("read-only install: warm-up", timed([bgbot, "warm-up", "--quiet"], ro_env, nobody)[0])
                add("read-only install: 2-ply move, cached", timed([bgbot, *MOVE], ro_env, nobody)[0])
            cached = list((ro_home / ".cache" / "bgbot" / "numba").rglob("*.nbi"))
            in_tree = list(venv.rglob("bgbot/**/__pycache__/*.nbi"))
            print(f"read-only install: {len(cached)} numba index files in the user's cache folder, "
                  f"{len(in_tree)} in the install")
        finally:
            sh(["chmod", "-R", "u+w", str(venv)])
    else:
        print("read-only install not measured: needs root (to run as an unprivileged user) and setpriv")

    print(f"\n{'figure':<56} {'median s':>9}  runs")
    for name, secs in figures.items():
        print(f"{name:<56} {statistics.median(secs):>9.2f}  " + " ".join(f"{s:.2f}" for s in secs))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
