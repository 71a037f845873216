"""``bgbot label``: grow the label bank; ``bgbot label verify SHARD``; ``bgbot label stats``.

The generator (:mod:`bgbot.labels.generate`) runs for a wall-clock budget at low priority (nice 19 and, on
Linux, the SCHED_IDLE class) with one worker by default, so that it can run beside other work all day; the
bank defaults to ``training/labels/`` of the clone bgbot runs from.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from bgbot.cli.options import count, positive_number
from bgbot.errors import ConfigError

__all__ = ["add_parser", "default_bank"]


def _idle_policy() -> bool:
    """Put this process (and the workers it spawns) in Linux's SCHED_IDLE class where there is one.

    Nice 19 alone still holds a core against other work's threads: the scheduler places a waking thread
    on an idle core only, and a core running a niced process is not idle.  A core running only SCHED_IDLE
    work counts as idle, so another program's second thread gets it at once.  True when it was set.
    """
    setter = getattr(os, "sched_setscheduler", None)
    policy = getattr(os, "SCHED_IDLE", None)
    if setter is None or policy is None:
        return False
    try:
        setter(0, policy, os.sched_param(0))
    except OSError:  # a sandbox that refuses it: nice 19 is still there
        return False
    return True


def default_bank() -> Path:
    """The repository's bank, ``training/labels/`` next to ``bgbot/`` (a clone), else a ConfigError."""
    import bgbot

    root = Path(bgbot.__file__).resolve().parents[1]
    if not (root / "training").is_dir():
        raise ConfigError(f"no label bank next to this install ({str(root)!r} has no training/): give --bank DIR")
    return root / "training" / "labels"


def _share(text: str) -> float:
    """A number above 0 and at most 1 (argparse type), or an error quoting the text."""
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not 0.0 < v <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a share above 0 and at most 1")
    return v


def _settings(args: argparse.Namespace) -> object:
    from bgbot.labels.generate import LUCK_POOL, LabelSettings

    names = ("trials", "truncate", "crashed_truncate", "race_truncate", "batch", "pool", "keep", "only")
    over = {k: getattr(args, k) for k in names if getattr(args, k) is not None}
    if args.luck is not None:
        over["luck"] = args.luck
    if args.luck and args.pool is None:  # luck-adjusted labels cost 21 times more: a smaller pool fills a shard
        over["pool"] = LUCK_POOL
    return LabelSettings(**over)


def _cmd_label(args: argparse.Namespace) -> int:
    from bgbot.engine.executor import parse_executor
    from bgbot.labels.generate import generate

    bank = Path(args.bank) if args.bank else default_bank()
    settings = _settings(args)
    parse_executor(args.executor)
    if args.workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {args.workers!r}")
    if args.nice:
        os.nice(max(0, args.nice - os.nice(0)))  # workers spawned from here inherit it
        _idle_policy()
    entries = generate(bank, args.minutes, settings=settings, model=args.checkpoint, seed=args.seed,  # type: ignore[arg-type]
                       workers=args.workers, executor=args.executor, shard_minutes=args.shard_minutes,
                       max_shards=args.max_shards, progress=not args.quiet)
    n = sum(int(e["count"]) for e in entries)
    print(f"{n} labels in {len(entries)} new shards of {str(bank)!r}")
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    from bgbot.labels.generate import verify

    bank = Path(args.bank) if args.bank else Path(args.shard).parent
    n, diff = verify(bank, args.shard, args.first, model=args.checkpoint)
    if diff == 0.0:
        print(f"{args.shard}: the first {n} labels made again are equal to the stored ones")
        return 0
    print(f"{args.shard}: the first {n} labels made again differ from the stored ones by up to {diff:.3g}",
          file=sys.stderr)
    return 1


def _cmd_stats(args: argparse.Namespace) -> int:
    import numpy as np

    from bgbot.labels.bank import SOURCES, check_bank, load_bank
    from bgbot.rules.position import PositionClass

    bank = Path(args.bank) if args.bank else default_bank()
    entries = check_bank(bank)
    labels = load_bank(bank, verify=False)
    out = {
        "bank": str(bank),
        "shards": len(entries),
        "labels": int(sum(int(e["count"]) for e in entries)),
        "positions": len(labels),
        "bytes": int(sum((bank / e["file"]).stat().st_size for e in entries)),
        "by_class": {PositionClass(c).name.lower(): int((labels.cls == c).sum()) for c in np.unique(labels.cls)},
        "by_source": {SOURCES[s]: int((labels.source == s).sum()) for s in np.unique(labels.source)},
        "rms_se": float(np.sqrt((labels.se.astype(np.float64) ** 2).mean())) if len(labels) else None,
        # per shard (the manifest's wall and CPU seconds), medians, by the network pass that made them
        **_throughput(entries),
    }
    print(json.dumps(out, indent=1) if args.json else "\n".join(f"{k}: {v}" for k, v in out.items()))
    return 0


def _throughput(entries: list[dict[str, object]]) -> dict[str, dict[str, float]]:
    """Median CPU seconds a label (finding and labelling it) and labels a wall-clock hour of the shards, by their
    kind of label (``luck`` or ``no_luck``) and how the network ran (``row_by_row`` shards, or the default pass);
    shards without the figures are left out.  Shards made before the finding was timed count the labelling only."""
    import statistics

    cpu: dict[str, list[float]] = {}
    rate: dict[str, list[float]] = {}
    for e in entries:
        count, wall, used = e.get("count"), e.get("wall_seconds"), e.get("cpu_seconds")
        settings = e.get("settings")
        if not (isinstance(count, int) and count > 0 and isinstance(wall, int | float) and wall > 0
                and isinstance(used, int | float) and isinstance(settings, dict)):
            continue
        sampled = e.get("sample_cpu_seconds", 0.0)
        kind = (("luck" if settings.get("luck", True) else "no_luck") + ", "
                + ("row_by_row" if settings.get("row_by_row", True) else "default_pass"))
        cpu.setdefault(kind, []).append((used + (sampled if isinstance(sampled, int | float) else 0.0)) / count)
        rate.setdefault(kind, []).append(3600.0 * count / wall)
    return {
        "cpu_seconds_a_label": {k: round(statistics.median(v), 4) for k, v in sorted(cpu.items())},
        "labels_a_wall_hour": {k: round(statistics.median(v)) for k, v in sorted(rate.items())},
    }


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``label`` (with its ``verify`` and ``stats`` actions) to the ``bgbot`` command."""
    s = sub.add_parser("label", help="grow the label bank: rollout labels of positions worth learning")
    s.add_argument("--bank", help="the bank folder (default: training/labels/ of this clone)")
    s.add_argument("--minutes", type=positive_number, default=10.0, help="wall-clock budget (default 10)")
    s.add_argument("--shard-minutes", type=positive_number, default=5.0, help="write a shard this often (default 5)")
    s.add_argument("--max-shards", type=count, help="stop after this many shards")
    s.add_argument("--seed", type=count, default=1, help="shards of a seed go on from its last one (default 1)")
    s.add_argument("--workers", type=count, default=1, help="worker processes (default 1)")
    s.add_argument("--executor", default="local", help="local (default), ray, ray://HOST:PORT")
    s.add_argument("--nice", type=count, default=19,
                   help="run at this niceness (default 19, with Linux's SCHED_IDLE class; 0 leaves both)")
    s.add_argument("--checkpoint", help="labelling model (default: the shipped model)")
    s.add_argument("--trials", type=count, help="rollout trials a position (a multiple of 36)")
    s.add_argument("--truncate", type=count, help="plies before the network values the leaf (0: to the end)")
    s.add_argument("--crashed-truncate", type=count,
                   help="the same for crashed positions (default 0: to the end; their network is the least sure)")
    s.add_argument("--race-truncate", type=count,
                   help="the same for races (default 0: to the end; a race is short)")
    s.add_argument("--only", choices=("contact", "crashed", "race"),
                   help="keep only positions of this class (a labeller for one network)")
    s.add_argument("--keep", type=_share, help="the base chance of keeping a position of a game (default 0.04; "
                   "raise it with --only race, which keeps few)")
    s.add_argument("--luck", action=argparse.BooleanOptionalAction, default=None,
                   help="luck adjustment (default: none, which buys more per CPU-second; BENCHMARKS.md, label bank)")
    s.add_argument("--batch", type=count, help="positions a task")
    s.add_argument("--pool", type=count, help="positions sampled a shard (its most rows)")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.set_defaults(func=_cmd_label)
    acts = s.add_subparsers(dest="label_action", metavar="{verify,stats}")
    v = acts.add_parser("verify", help="label a shard's first rows again from its provenance and compare")
    v.add_argument("shard", help="a shard file (shard-SSSSSSSS-KKKKK.npz)")
    v.add_argument("--first", type=count, default=64, help="rows to label again (default 64)")
    # SUPPRESS: given before the action (``bgbot label --bank B verify ...``), the option keeps its value
    v.add_argument("--checkpoint", default=argparse.SUPPRESS,
                   help="the model that made the shard (default: the shipped model)")
    v.add_argument("--bank", default=argparse.SUPPRESS, help="the bank that lists it (default: the shard's folder)")
    v.set_defaults(func=_cmd_verify)
    t = acts.add_parser("stats", help="check every shard and count the bank's labels")
    t.add_argument("--bank", default=argparse.SUPPRESS,
                   help="the bank folder (default: training/labels/ of this clone)")
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=_cmd_stats)
