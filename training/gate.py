"""The generation gate: a new network ships only if it beats its parent and lowers the checker error.

    python -m training.gate runs/fit3/refined.pt --parent checkpoints/bgbot-default.pt \
        --name refine3 --games 2000 --workers 2 [--yardstick 10000]

measures, for the candidate (and for the parent when the record does not
hold it yet):

* **checker error** at 1-ply and 2-ply on ``tests/data/benchmark/checker.jsonl``
  (400 positions with gnubg 2-ply equities): the mean equity loss of the
  chosen play in millipoints, split contact / race, cubeless, as
  ``benchmarks/checker_error.py`` computes it;
* a **duplicate-dice duel** candidate against parent at 1-ply, cubeless money
  games (:func:`bgbot.play.pit.run_pit`), ppg with its standard error;
* optionally the **yardstick** (1-ply against pubeval).

The candidate **passes** when it wins the duel by more than one standard
error *and* its 1-ply checker error is lower than the parent's.  Every
verdict is appended to the generations record (default
``checkpoints/generations.jsonl``, rewritten atomically), and the
per-generation curve (``checkpoints/generations.png``: ppg against pubeval
and checker error against gnubg 2-ply, one point per generation) is redrawn
from it.  Shipping stays a separate step (``python -m training.ship``), taken
when the gate says pass.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from bgbot.engine.api import Engine
from bgbot.errors import ConfigError
from bgbot.rules.position import Position, PositionClass, classify

ROOT = Path(__file__).resolve().parents[1]
CHECKER = ROOT / "tests" / "data" / "benchmark" / "checker.jsonl"
RECORD = ROOT / "checkpoints" / "generations.jsonl"


def file_hash(path: str | Path) -> str:
    """SHA-256 of a checkpoint file: how the record knows a network (paths get reused when a model ships)."""
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def checker_error(engine: Engine, rows: list[dict[str, Any]], ply: int) -> dict[str, float]:
    """Mean loss (millipoints) of ``engine``'s cubeless choice at ``ply`` against gnubg 2-ply: all / contact / race.

    ``crashed`` is the mean over the contact positions :func:`~bgbot.rules.position.classify` calls crashed.

    A choice the file does not list (it lists the 40 best of bigger move lists) counts at the
    worst listed equity, a lower bound on its loss.
    """
    losses: dict[str, list[float]] = {"contact": [], "race": [], "crashed": []}
    for row in rows:
        pos = Position.from_id(row["position"])
        choice = engine.best_move(pos, row["dice"], ply, cubeless=True)
        eqs = {m["result"]: m["equity"] for m in row["moves"]}
        eq = eqs.get(choice.best.result.gnubg_id(), min(eqs.values()))
        loss = row["moves"][0]["equity"] - eq
        losses[row["class"]].append(loss)
        if classify(pos) is PositionClass.CRASHED:
            losses["crashed"].append(loss)
    every = losses["contact"] + losses["race"]
    out = {"all": 1000 * statistics.fmean(every), "positions": len(every)}
    out.update({k: 1000 * statistics.fmean(v) for k, v in losses.items() if v})
    return out


def load_record(path: str | Path) -> list[dict[str, Any]]:
    """The generations recorded so far (oldest first); a damaged line is a :class:`ConfigError` naming it."""
    path = Path(path)
    if not path.exists():
        return []
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{str(path)!r} line {n} is not JSON ({exc.msg}): {line[:80]!r}") from None
        if not isinstance(row, dict) or "name" not in row:
            raise ConfigError(f"{str(path)!r} line {n} is not a generation record: {line[:80]!r}")
        out.append(row)
    return out


def append_record(path: str | Path, row: dict[str, Any]) -> None:
    """Add ``row`` to the record, rewriting the file atomically (an interrupted write loses nothing)."""
    path = Path(path)
    rows = [*load_record(path), row]
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    os.replace(tmp, path)


def plot_generations(record: str | Path, png: str | Path) -> Path:
    """Draw ppg against pubeval and checker error against gnubg 2-ply, one point per generation."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = load_record(record)
    names = [r["name"] for r in rows]
    xs = list(range(len(rows)))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6.5), dpi=100, sharex=True)
    ys = [(x, r["yardstick"]["ppg"], r["yardstick"].get("se", 0.0)) for x, r in zip(xs, rows, strict=True)
          if r.get("yardstick")]
    if ys:
        top.errorbar([y[0] for y in ys], [y[1] for y in ys], yerr=[y[2] for y in ys], marker="o", capsize=3,
                     label="1-ply vs pubeval")
    top.axhline(0.63, color="tab:red", lw=0.8, ls=":", label="gnubg 0-ply (+0.63)")
    top.axhline(0.58, color="tab:green", lw=0.8, ls="--", label="target +0.58")
    top.set_ylabel("ppg vs pubeval")
    top.legend(loc="lower right", fontsize=8)
    top.grid(alpha=0.3)
    for ply, style in ((1, "o-"), (2, "s-")):
        pts = [(x, r["checker"][str(ply)]["all"]) for x, r in zip(xs, rows, strict=True)
               if str(ply) in r.get("checker", {})]
        bottom.plot([p[0] for p in pts], [p[1] for p in pts], style, label=f"bgbot {ply}-ply")
    bottom.axhline(1.7, color="tab:red", lw=0.8, ls=":", label="gnubg 0-ply (1.7)")
    bottom.axhline(4.0, color="tab:green", lw=0.8, ls="--", label="target 1-ply (4.0)")
    for x, r in zip(xs, rows, strict=True):
        if r.get("verdict") == "fail":
            bottom.annotate("not shipped", (x, r["checker"]["1"]["all"]), textcoords="offset points",
                            xytext=(0, 8), ha="center", fontsize=7, color="grey")
    bottom.set_ylabel("checker error vs gnubg 2-ply (mp)")
    bottom.set_xticks(xs, names, rotation=15, fontsize=8)
    bottom.legend(loc="upper right", fontsize=8)
    bottom.grid(alpha=0.3)
    fig.suptitle("bgbot per generation")
    fig.tight_layout()
    png = Path(png)
    fig.savefig(png)
    plt.close(fig)
    return png


def gate(
    candidate: str | Path,
    parent: str | Path,
    name: str,
    *,
    games: int = 2000,
    seed: int = 1,
    workers: int = 1,
    yardstick: int = 0,
    record: str | Path = RECORD,
    note: str = "",
    progress: bool = True,
    positions: int | None = None,
) -> dict[str, Any]:
    """Measure ``candidate`` against ``parent``, append the verdict to ``record`` and redraw its curve.

    ``positions`` limits the checker benchmark to its first N positions (tests); the verdict is
    from the candidate's point of view against its parent.
    """
    from bgbot.play.pit import PitConfig, run_pit
    from bgbot.play.table import Rules

    if games < 2 or games % 2:
        raise ConfigError(f"--games must be an even number >= 2 (duplicate pairs), got {games!r}")
    rows = [json.loads(line) for line in CHECKER.read_text().splitlines() if line.strip()][:positions]
    t0 = time.perf_counter()
    engine = Engine.load(candidate)
    checker = {str(ply): checker_error(engine, rows, ply) for ply in (1, 2)}
    parent_rows = [r for r in load_record(record) if r.get("sha256") == file_hash(parent)]
    if parent_rows:
        parent_1ply = parent_rows[-1]["checker"]["1"]["all"]
    else:
        parent_1ply = checker_error(Engine.load(parent), rows, 1)["all"]
    duel = run_pit(f"bgbot:checkpoint={candidate}", f"bgbot:checkpoint={parent}",
                   PitConfig(games=games, rules=Rules(cube=False), seed=seed, workers=workers), progress=progress)
    row: dict[str, Any] = {
        "name": name, "checkpoint": str(candidate), "sha256": file_hash(candidate), "parent": str(parent),
        "parent_sha256": file_hash(parent), "checker": checker,
        "parent_checker_1ply": parent_1ply,
        "duel": {"ppg": duel.ppg, "se": duel.ppg_se, "games": games, "seed": seed},
    }
    if yardstick:
        from bgbot.eval import pubeval
        from bgbot.eval.evaluate import NetEvaluator
        from bgbot.eval.models import load_model
        from bgbot.play.duel import duel as play_duel
        from bgbot.play.duel import greedy_chooser

        res = play_duel(greedy_chooser(NetEvaluator(load_model(candidate).net)), pubeval.choose, yardstick // 2,
                        seed=seed, progress=progress)
        row["yardstick"] = {"ppg": res.ppg, "se": res.se, "games": yardstick, "seed": seed}
    se = duel.ppg_se if duel.ppg_se is not None else float("inf")  # too few pairs: no verdict can pass
    passed = duel.ppg > se and checker["1"]["all"] < parent_1ply
    row["verdict"] = "pass" if passed else "fail"
    row["seconds"] = round(time.perf_counter() - t0, 1)
    if note:
        row["note"] = note
    append_record(record, row)
    plot_generations(record, Path(record).with_suffix(".png"))
    return row


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("candidate")
    ap.add_argument("--parent", required=True)
    ap.add_argument("--name", required=True, help="the generation's name in the record and the curve")
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--yardstick", type=int, default=0, help="games against pubeval (0: skip)")
    ap.add_argument("--record", default=str(RECORD))
    ap.add_argument("--note", default="")
    args = ap.parse_args(argv)
    row = gate(args.candidate, args.parent, args.name, games=args.games, seed=args.seed, workers=args.workers,
               yardstick=args.yardstick, record=args.record, note=args.note)
    print(json.dumps(row, indent=1))
    print(f"verdict: {row['verdict']} (duel {row['duel']['ppg']:+.3f} +- {row['duel']['se']}; 1-ply error "
          f"{row['checker']['1']['all']:.1f} mp against the parent's {row['parent_checker_1ply']:.1f})")


if __name__ == "__main__":
    main()
