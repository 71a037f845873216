"""``bgbot warm-up``: compile bgbot's numba kernels once, with a progress bar, and cache them on disk.

A fresh install has no compiled code: the first process that needs the
compiled kernels would spend 20-30 s in numba, silently.  This compiles them
step by step (the move generator, the position classes, the network pass,
the bear-off database's lookups, the search's helpers, then whole decisions
so that every specialisation they use is cached) and leaves a marker
(:func:`bgbot.jit.mark_cached`).  Afterwards a process loads the cached code
in about a second.

The commands that run compiled (``bgbot analyse``, and ``move``/``eval``/``cube``
from 3-ply up) call :func:`ensure_warm` first, so the first of them shows the
bar instead of a long silent pause; one-position questions at 1- and 2-ply
run as plain Python until the kernels are cached (:func:`choose_kernels`).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable

__all__ = ["add_parser", "choose_kernels", "ensure_warm", "warm_up"]


def compile_movegen() -> None:
    """Compile (or load) the move generator's kernels: what a second process does during :func:`warm_up`."""
    import numpy as np

    from bgbot.rules.movegen import successors, successors_batch
    from bgbot.rules.position import Position

    start = Position.from_id("4HPwATDgc/ABMA")
    boards = np.array([start.board, start.board], dtype=np.int8)
    successors_batch(boards[:1], (3, 1))
    successors_batch(boards, (6, 6))
    successors_batch(boards, np.array([[3, 1], [5, 2]], dtype=np.int64))
    successors(start, (4, 2))
    from bgbot.rules.moves import play_texts

    play_texts(start, (4, 2))  # the compiled walk that names plays (analyses and answers)
    play_texts(start, (6, 6))


def _steps(child: subprocess.Popen[bytes] | None) -> list[tuple[str, Callable[[], object]]]:
    """The warm-up's steps, each a call that compiles (or loads) some kernels: ``(what, call)``.

    With ``child`` (a process compiling the move generator, :func:`compile_movegen`) the steps before
    "move generator" use no move generation, and that step waits for the child, then loads its work.
    """
    import numpy as np

    state: dict[str, object] = {}

    def classes() -> None:
        from bgbot.rules.classes import classify_rows
        from bgbot.rules.position import Position

        classify_rows(np.array([Position.from_id("4HPwATDgc/ABMA").board], dtype=np.int8))

    def network() -> None:
        from bgbot.engine.api import Engine
        from bgbot.eval.encoding import encode
        from bgbot.rules.position import Position

        engine = Engine.load()
        state["engine"] = engine
        # a contact position, a race and a bear-off (no move generator: a second process compiles it)
        positions = (Position.from_id("4HPwATDgc/ABMA"), Position.from_points({8: 5, 6: 5, 4: 5}, {9: 5, 7: 5, 5: 5}),
                     Position.from_points({6: 3, 5: 2, 4: 2, 1: 1}, {6: 2, 5: 3, 3: 1}))
        succ = np.array([p.board for p in positions], dtype=np.int8)
        engine.base(succ)
        net = getattr(engine.base, "net", None)
        if net is not None and hasattr(net, "compiled"):
            net.probs(encode(succ, net.spec.encoding_version))

    def bearoff() -> None:
        from bgbot.rules.position import Position

        engine = state["engine"]
        race = Position.from_points({6: 3, 5: 2, 4: 2, 1: 1}, {6: 2, 5: 3, 3: 1})
        engine.evaluate(race)  # type: ignore[attr-defined]
        engine.cube_action(race)  # type: ignore[attr-defined]

    def search() -> None:
        from bgbot.engine.search import lookahead_probs
        from bgbot.rules.position import Position

        engine = state["engine"]
        boards = np.array([Position.from_id(i).board for i in ("4HPwATDgc/ABMA", "sGfwATDgc/ABMA")], dtype=np.int8)
        lookahead_probs(engine.evaluator, boards, 1)  # type: ignore[attr-defined]

    def decisions() -> None:
        from bgbot.rules.matchstate import MatchState

        engine = state["engine"]
        pos = "4HPwATDgc/ABMA"
        for ply in (1, 2):
            engine.best_move(pos, (3, 1), ply, cubeless=True)  # type: ignore[attr-defined]
            engine.best_move(pos, (3, 1), ply)  # type: ignore[attr-defined]
            engine.cube_action("sGfwATDgc/ABMA", ply=ply)  # type: ignore[attr-defined]
        match = MatchState(match_length=7)
        engine.best_move(pos, (3, 1), 2, match)  # type: ignore[attr-defined]
        engine.cube_action(pos, match, ply=2)  # type: ignore[attr-defined]

    def movegen() -> None:
        if child is not None:
            child.wait()  # its cache is ours: loading it takes a moment (and compiles here if it failed)
        compile_movegen()

    return [
        ("position classes", classes),
        ("network", network),
        ("bear-off database", bearoff),
        ("move generator", movegen),
        ("search", search),
        ("decisions", decisions),
    ]


def _movegen_child() -> subprocess.Popen[bytes] | None:
    """A second process compiling the move generator while this one compiles the network (the two biggest
    parts, about 15 s each): None on a single core or when it cannot start (this process then does it)."""
    if (os.cpu_count() or 1) < 2:
        return None
    try:
        return subprocess.Popen([sys.executable, "-c", "from bgbot.cli.warmup import compile_movegen; "
                                 "compile_movegen()"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)  # the environment (NUMBA_CACHE_DIR, BGBOT_JIT) goes along
    except OSError:
        return None


def warm_up(progress: bool = True) -> float:
    """Compile (or load) every kernel a decision or an analysis uses and mark them cached.

    Returns the seconds it took.  The move generator compiles in a second
    process meanwhile (on two cores or more).  Does nothing when the kernels
    are interpreted in this process (``BGBOT_JIT=0``): there is nothing to compile.
    """
    from bgbot import jit  # here, not at import: a bad BGBOT_JIT is a user error main() reports

    t0 = time.perf_counter()
    if not jit.COMPILED:
        return 0.0
    jit.configure_cache()
    child = _movegen_child()
    steps = _steps(child)
    try:
        _run_steps(steps, progress)
    finally:
        if child is not None and child.poll() is None:
            child.kill()  # interrupted: the second process stops with us
            child.wait()
    jit.mark_cached()
    return time.perf_counter() - t0


def _run_steps(steps: list[tuple[str, Callable[[], object]]], progress: bool) -> None:
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(steps), desc="compiling bgbot's kernels once (later runs load them)", unit="step",
                   file=sys.stderr, bar_format="{desc}: {n_fmt}/{total_fmt} {bar} {elapsed}{postfix}")
        try:
            for what, call in steps:
                bar.set_postfix_str(what)
                call()
                bar.update(1)
            bar.set_postfix_str("done")
        finally:
            bar.close()
    else:
        for _, call in steps:
            call()


def ensure_warm(progress: bool = True) -> None:
    """:func:`warm_up` unless the kernels are cached already or this process interprets them."""
    from bgbot import jit  # here, not at import: a bad BGBOT_JIT is a user error main() reports

    if jit.COMPILED and not jit.kernels_cached():
        warm_up(progress)


def choose_kernels(ply: int | None) -> None:
    """Pick compiled or plain-Python kernels for a command, before it imports the engine.

    ``ply`` is the look-ahead of a one-position question (``move``, ``eval``,
    ``cube``), None for any other command (which decides for itself).  At
    1-ply the question runs as plain Python (it finishes before numba would
    have loaded); at 2-ply too while the compiled kernels are not cached (under
    a second or two, instead of 20-30 s of compiling); deeper questions
    compile, showing :func:`warm_up`'s progress bar the first time.
    """
    from bgbot import jit  # here, not at import: a bad BGBOT_JIT is a user error main() reports

    if ply is None:
        return
    if ply == 1 or (ply == 2 and not jit.kernels_cached()):
        jit.interpret()
        return
    if ply == 3:  # any other value is a mistake the command reports at once, before anything compiles
        ensure_warm(progress=True)


def _cmd_warm_up(args: argparse.Namespace) -> int:
    from bgbot import jit  # here, not at import: a bad BGBOT_JIT is a user error main() reports

    if not jit.COMPILED:
        print("bgbot: the kernels run as plain Python here (BGBOT_JIT=0): nothing to compile", file=sys.stderr)
        return 0
    seconds = warm_up(progress=not args.quiet)
    folder = jit.cache_dir()
    where = "next to bgbot's sources" if folder is None else str(folder)
    print(f"bgbot's kernels are compiled and cached ({where}) in {seconds:.1f} s")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``bgbot warm-up``."""
    s = sub.add_parser("warm-up", help="compile bgbot's kernels once (20-30 s, with a progress bar) and cache them",
                       description=__doc__.splitlines()[0])
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.set_defaults(func=_cmd_warm_up)
