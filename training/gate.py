"""The generation gate: a new network ships only if it beats its parent and plays no worse anywhere measured.

    python -m training.gate runs/fit3/refined.pt --parent checkpoints/bgbot-default.pt \
        --name refine3 --games 10000 --seed 3 --workers 2 [--yardstick 10000]

measures, for the candidate (and for the parent when the record does not
hold it yet):

* **checker error** at 1-ply and 2-ply on ``tests/data/benchmark/checker.jsonl``
  (400 positions with gnubg 2-ply equities): the mean equity loss of the
  chosen play in millipoints, split contact / race, cubeless, as
  ``benchmarks/checker_error.py`` computes it;
* **cube agreement** at 1-, 2- and 3-ply on ``tests/data/benchmark/cube.jsonl``
  (200 money positions with gnubg 2-ply decisions): how often the engine's
  money cube decision (Janowski at 1-ply, gnubg's cubeful lookahead above,
  gnubg's cube efficiencies) is gnubg's, and the mean absolute error of its
  optimal equity in millipoints, as ``benchmarks/cube_error.py --engine PLY``
  computes them;
  (``--checker-data`` / ``--cube-data`` take other files of the same formats, such as the held-out
  ``checker-3000.jsonl`` and ``cube-1000.jsonl`` beside them, whose standard errors are 2.7 and
  2.2 times smaller; the record notes which files a row was measured on);
* a **duplicate-dice duel** candidate against parent at 1-ply, cubeless money
  games (:func:`bgbot.play.pit.run_pit`), ppg with its standard error;
* optionally a **reference reading** (``--reference gnubg:ply=0 --reference-blocks 30``): candidate and
  parent each play cubeless money games at 1-ply against a third engine, in blocks of
  ``--reference-games`` duplicate games seeded ``--reference-seed``, ``+1``, ...; a block's two pits
  deal the same dice, so the per-block difference of their ppg cancels most of the luck, and the
  reading is that difference's mean over the blocks with its standard error;
* optionally the **yardstick** (1-ply against pubeval).

The candidate **passes** when all three hold:

1. it beats its parent by more than :data:`DUEL_SE` (two) standard errors: in the duel, or, when
   the gate takes a reference reading, in that reading, with the duel not lost by more than two
   standard errors;
2. its checker error, the mean of the 1-ply and 2-ply figures, is lower than the parent's;
3. its cube agreement, the mean over the plies, is at most :data:`CUBE_SLACK`
   points below the parent's.

The reference reading is there because a self-play duel between a network and its parent, both fitted
to one lineage's labels, can be blind to what another engine's play exposes: the ensemble that
docs/training.md describes beat generation 12 by +0.0135 ± 0.0055 ppg paired against gnubg 0-ply while
their duel read +0.0024 ± 0.0022.

Figures the record already holds for the same network (measures on the same files, a duel against the
same parent with the same games and seed, reference blocks against the same engine with the same games
and seeds) are taken from it, not measured again: each is deterministic given the networks and the
seeds. ``reused`` in the row lists them. The record knows a network by its file's SHA-256 and by its
weights' (:func:`weights_hash`), so a rebuild's checkpoint, whose file records other run paths, reads
the figures of the model it rebuilt.

The second and third rules are there because generation 5 passed the older
gate (duel and 1-ply error only) while its 2-ply play and its cube decisions
got worse: a refit that sharpens the choice between sibling plays can move the
absolute probabilities that lookahead and the cube read.

Every verdict is appended to the generations record (default
``checkpoints/generations.jsonl``, rewritten atomically), and the
per-generation curve (``checkpoints/generations.png``: ppg against pubeval, the
reference reading against gnubg 0-ply, checker error against gnubg 2-ply and cube
agreement, one point per generation) is redrawn
from it.  Shipping stays a separate step (``python -m training.ship``), taken
when the gate says pass.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bgbot.engine.api import Engine
from bgbot.errors import CheckpointError, ConfigError, EngineError
from bgbot.fileio import write_text_atomic
from bgbot.rules.matchstate import CubeState
from bgbot.rules.position import Position, PositionClass, classify

ROOT = Path(__file__).resolve().parents[1]
CHECKER = ROOT / "tests" / "data" / "benchmark" / "checker.jsonl"
CUBE = ROOT / "tests" / "data" / "benchmark" / "cube.jsonl"
CUBE_PLIES = (1, 2, 3)
# How far (percentage points) the candidate's mean cube agreement may fall below its parent's: one
# position in 200 at each of three plies is 0.5 point, and a refit reshuffles a few borderline ones.
CUBE_SLACK = 1.0
DUEL_SE = 2.0  # the duel must be won by more than this many standard errors
RECORD = ROOT / "checkpoints" / "generations.jsonl"
MEASURES = "measures.jsonl"  # in a gate's work folder: the benchmark measures it took, for a killed run to reuse
# The gate ledger a pipeline's gate may keep in the repository (``[gate] ledger``): every finished duel, reference
# block and benchmark measure, one JSON line each, so a gate longer than a working day resumes on a fresh checkout.
LEDGER = ROOT / "checkpoints" / "gate-ledger.jsonl"
# what each kind of ledger row must hold
LEDGER_KINDS = {"measures": ("weights", "benchmarks", "checker", "cube"),
                "duel": ("weights", "parent_weights", "games", "seed", "ppg", "se"),
                "reference": ("weights", "against", "games", "seed", "ppg")}
# How the cube figures are taken. Rows without it predate the cubeful lookahead; rows with
# "cubeful-lookahead" predate its cubeless tie-break (3-ply double/take came out too high
# where tied plays stood in for the double/take tree); rows with "cubeful-lookahead-tiebreak" predate the
# correction of 2-ply decisions (bgbot.engine.cube_lookahead.ONE_ROLL_SHIFT). None is reused.
CUBE_METHOD = "cubeful-lookahead-tiebreak-one-roll-shift"


def file_hash(path: str | Path) -> str:
    """SHA-256 of a checkpoint file: how the record knows a network (paths get reused when a model ships)."""
    import hashlib

    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:
        raise CheckpointError(f"cannot read checkpoint {str(path)!r}: {exc.strerror or exc}") from None


def weights_hash(path: str | Path) -> str:
    """SHA-256 of a checkpoint's networks (spec and weights, class networks included; :func:`net_hash`).

    Two files of the same weights (a rebuild's checkpoint records other run paths than the shipped one's) share
    it, so the record knows a rebuilt network by it too.
    """
    from bgbot.engine.executor import net_hash
    from bgbot.eval.models import load_model

    return net_hash(load_model(path).net)


class Known:
    """A network as the record knows it: its file's SHA-256 and its weights' (rows older than weights hashes
    name a network by its file alone)."""

    def __init__(self, path: str | Path) -> None:
        self.sha256 = file_hash(path)
        self.weights = weights_hash(path)

    def is_side(self, row: dict[str, Any], side: str) -> bool:
        """Whether ``row``'s candidate (``side`` "") or parent (``side`` "parent_") is this network."""
        held = row.get(f"{side}weights")
        return row.get(f"{side}sha256") == self.sha256 or (held is not None and held == self.weights)


def checker_losses(engine: Engine, rows: list[dict[str, Any]], ply: int) -> list[tuple[str, bool, float]]:
    """Each position's loss of ``engine``'s cubeless choice at ``ply`` against gnubg 2-ply, in points.

    One ``(class, crashed, loss)`` per row, in the rows' order: ``class`` is the file's ``contact``
    or ``race``, ``crashed`` whether :func:`~bgbot.rules.position.classify` calls the position
    crashed, ``loss`` the equity of gnubg's best play minus that of the engine's choice (the mover's
    cubeless equity, from the view of the side on roll; 0 when it chose gnubg's best).  A choice the
    file does not list (it lists the 40 best of bigger move lists) counts at the worst listed equity,
    a lower bound on its loss.
    """
    out = []
    for row in rows:
        pos = Position.from_id(row["position"])
        choice = engine.best_move(pos, row["dice"], ply, cubeless=True).best.result.gnubg_id()
        out.append((row["class"], classify(pos) is PositionClass.CRASHED, choice_loss(row, choice)))
    return out


def choice_loss(row: dict[str, Any], result: str) -> float:
    """The equity a play (``result``: gnubg ID of the position after it) gives up against a checker row's best.

    The row's gnubg 2-ply cubeless equities, from the view of the side on roll; a play the row does not
    list counts at the worst listed equity (a lower bound on its loss).
    """
    eqs = {m["result"]: m["equity"] for m in row["moves"]}
    return row["moves"][0]["equity"] - eqs.get(result, min(eqs.values()))


def checker_error(engine: Engine, rows: list[dict[str, Any]], ply: int) -> dict[str, float]:
    """Mean loss (millipoints) of ``engine``'s cubeless choice at ``ply`` against gnubg 2-ply: all / contact / race.

    ``crashed`` is the mean over the contact positions :func:`~bgbot.rules.position.classify` calls crashed.
    The losses are :func:`checker_losses`'.
    """
    losses: dict[str, list[float]] = {"contact": [], "race": [], "crashed": []}
    for cls, crashed, loss in checker_losses(engine, rows, ply):
        losses[cls].append(loss)
        if crashed:
            losses["crashed"].append(loss)
    every = losses["contact"] + losses["race"]
    out = {"all": 1000 * statistics.fmean(every), "positions": len(every)}
    out.update({k: 1000 * statistics.fmean(v) for k, v in losses.items() if v})
    return out


def cube_decisions(engine: Engine, rows: list[dict[str, Any]], ply: int) -> list[tuple[bool, float]]:
    """Each money position's ``(agrees, error)``: whether ``engine``'s cube decision at ``ply`` is gnubg 2-ply's,
    and the absolute error of its optimal equity (points per cube value, the side on roll's view).

    Each row is a money position (side on roll's view, before the roll) with gnubg's decision and
    equities; the decision is :meth:`~bgbot.engine.api.Engine.cube_action` at ``ply`` (Janowski at
    1-ply, the cubeful lookahead above, gnubg's cube efficiencies, Jacoby off), as
    ``benchmarks/cube_error.py --engine PLY`` takes it.
    """
    out = []
    for row in rows:
        pos = Position.from_id(row["position"])
        owner = {"center": "center", "on_roll": "me"}[row["cube"]["owner"]]
        d = engine.cube_action(pos, CubeState(cube=row["cube"]["value"], owner=owner), ply=ply)
        out.append((d.action == row["decision"], abs(d.equity_optimal - row["equity_optimal"])))
    return out


def cube_agreement(engine: Engine, rows: list[dict[str, Any]], ply: int) -> dict[str, Any]:
    """How often ``engine``'s money cube decision at ``ply`` is gnubg 2-ply's, in percent, and its error.

    The decisions are :func:`cube_decisions`'; ``mae_opt`` is the mean absolute error of the optimal
    equity, millipoints; ``method`` (:data:`CUBE_METHOD`) tells these figures from those of earlier
    gates, which applied Janowski once to the lookahead's averaged probabilities.
    """
    decided = cube_decisions(engine, rows, ply)
    return {"agree": 100 * sum(a for a, _ in decided) / len(rows),
            "mae_opt": 1000 * statistics.fmean(e for _, e in decided), "positions": len(rows),
            "method": CUBE_METHOD}


def _mean_agreement(cube: dict[str, dict[str, float]]) -> float:
    return statistics.fmean(c["agree"] for c in cube.values())


def _mean_error(checker: dict[str, dict[str, float]]) -> float:
    return statistics.fmean(checker[p]["all"] for p in ("1", "2"))


def measure(
    checkpoint: str | Path, checker_rows: list[dict[str, Any]], cube_rows: list[dict[str, Any]],
    cube_plies: tuple[int, ...] = CUBE_PLIES,
) -> dict[str, Any]:
    """A network's checker error at 1- and 2-ply and its cube agreement at ``cube_plies`` (the gate's benchmarks)."""
    engine = Engine.load(checkpoint)
    return {
        "checker": {str(ply): checker_error(engine, checker_rows, ply) for ply in (1, 2)},
        "cube": {str(ply): cube_agreement(engine, cube_rows, ply) for ply in cube_plies},
    }


def _json_lines(path: str | Path, what: str = "") -> list[tuple[int, str, Any]]:
    """``(line number, line, value)`` of each non-blank line of a JSON-lines file (none when it is absent); a line
    that is not JSON is a :class:`ConfigError` naming the file (after ``what``) and the line."""
    path = Path(path)
    if not path.exists():
        return []
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append((n, line, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{what}{str(path)!r} line {n} is not JSON ({exc.msg}): {line[:80]!r}") from None
    return out


def load_record(path: str | Path) -> list[dict[str, Any]]:
    """The generations recorded so far (oldest first); a damaged line is a :class:`ConfigError` naming it."""
    out = []
    for n, line, row in _json_lines(path):
        if not isinstance(row, dict) or "name" not in row:
            raise ConfigError(f"{str(path)!r} line {n} is not a generation record: {line[:80]!r}")
        out.append(row)
    return out


def append_record(path: str | Path, row: dict[str, Any]) -> None:
    """Add ``row`` to the record, rewriting the file atomically (an interrupted write loses nothing)."""
    path = Path(path)
    rows = [*load_record(path), row]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, "".join(json.dumps(r) + "\n" for r in rows))


def _parent_at(rows: list[dict[str, Any]]) -> Callable[[dict[str, Any]], int | None]:
    """A function from a record row to its parent's index in ``rows`` (known by its file's SHA-256, else by its
    weights'), or None where the record does not hold the parent."""
    at = {r.get("sha256"): x for x, r in enumerate(rows)}
    at_weights = {r.get("weights"): x for x, r in enumerate(rows) if r.get("weights")}
    return lambda r: at.get(r.get("parent_sha256"), at_weights.get(r.get("parent_weights")))


def _plot_held_out(checker_ax: Any, cube_ax: Any, rows: list[dict[str, Any]],
                   default: list[bool]) -> list[tuple[str, str, list[int], list[float]]]:
    """Rows measured on other benchmark files (the held-out 3,000 / 1,000): hollow markers, each joined to its
    parent's figures on the same files at the parent's own point, where the record holds the parent (known by its
    file's or its weights' SHA-256).  Returns what it drew: ``(figure, ply, xs, ys)`` per line."""
    parent_at = _parent_at(rows)
    drawn: list[tuple[str, str, list[int], list[float]]] = []
    labelled: set[tuple[str, str]] = set()  # one legend entry per figure and ply
    for x, r in enumerate(rows):
        if default[x] or "parent_measures" not in r:
            continue
        px = parent_at(r)
        for ax, key, plies, fig in ((checker_ax, "checker", ("1", "2"), "all"), (cube_ax, "cube", ("2",), "agree")):
            for ply in plies:
                if ply not in r.get(key, {}) or ply not in r["parent_measures"].get(key, {}):
                    continue
                xs, ys = [x], [r[key][ply][fig]]
                if px is not None:
                    xs, ys = [px, x], [r["parent_measures"][key][ply][fig], ys[0]]
                ax.plot(xs, ys, "--o" if ply == "1" else "--s", mfc="none", color="grey",
                        label=None if (key, ply) in labelled else f"{ply}-ply, held-out files")
                labelled.add((key, ply))
                drawn.append((key, ply, xs, ys))
    return drawn


def _plot_reference(ax: Any, rows: list[dict[str, Any]], failed: list[bool]) -> list[tuple[int, float, float]]:
    """The reference reading of each row that has one: the candidate's ppg against the reference engine at its
    point with one standard error of its blocks (a grey cross when it failed), joined by a dotted line to a hollow
    point for its parent's ppg on the same dice, at the parent's own point where the record holds the parent (known
    by its file's or its weights' SHA-256).  ppg is the candidate's (then the parent's) at 1-ply against the
    reference, cubeless.  Returns ``(x, ppg, se)`` per candidate drawn."""
    parent_at = _parent_at(rows)
    drawn: list[tuple[int, float, float]] = []
    labelled: set[str] = set()

    def label(name: str) -> str | None:
        first = name not in labelled
        labelled.add(name)
        return name if first else None

    for x, r in enumerate(rows):
        ref = r.get("reference")
        if not ref or not ref.get("candidate"):
            continue
        blocks = [float(b) for b in ref["candidate"]]
        ppg = statistics.fmean(blocks)
        se = _standard_error(blocks) or 0.0
        px = parent_at(r)
        if px is not None and "parent_ppg" in ref:
            ax.plot([px, x], [ref["parent_ppg"], ppg], ":", color="grey", lw=0.8)
            ax.plot([px], [ref["parent_ppg"]], "o", mfc="none", color="grey", label=label("parent, same dice"))
        if failed[x]:
            ax.errorbar([x], [ppg], yerr=[se], fmt="x", color="grey", capsize=3, label=label("candidate not shipped"))
        else:
            ax.errorbar([x], [ppg], yerr=[se], fmt="o", color="tab:blue", capsize=3, label=label("bgbot 1-ply"))
        drawn.append((x, ppg, se))
    return drawn


def plot_generations(record: str | Path, png: str | Path) -> Path:
    """Draw ppg against pubeval, the gate's reference reading (1-ply against gnubg 0-ply, with the parent on the same
    dice), checker error against gnubg 2-ply and cube agreement, one point per generation
    (cube agreement only for the generations the gate measured it for; the checker and cube curves only for
    rows measured on the default benchmark files, so that one curve never mixes two sets of positions; rows
    measured on other files are hollow grey points joined to their parent's figures on those files). The curves
    join and the axis names the generations that passed; failed candidates are unnamed grey crosses."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = load_record(record)
    default = [r.get("benchmarks", _DEFAULT_DATA) == _DEFAULT_DATA for r in rows]
    failed = [r.get("verdict") == "fail" for r in rows]
    # only the generations that passed are named and joined by the curves: the record keeps every failed
    # candidate too, and their names would crowd out the lineage's; a failed candidate is a grey cross
    names = ["" if f else r["name"] + ("" if d else " (other data)")
             for r, d, f in zip(rows, default, failed, strict=True)]
    xs = list(range(len(rows)))
    fig, (top, ref_ax, bottom, cube_ax) = plt.subplots(4, 1, figsize=(11, 11), dpi=100, sharex=True,
                                                       gridspec_kw={"height_ratios": [3, 2, 3, 2]})

    def crosses(ax: Any, pts: list[tuple[int, float]], label: str | None = None) -> None:
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "x", color="grey", ms=5, label=label)

    ys = [(x, r["yardstick"]["ppg"], r["yardstick"].get("se", 0.0)) for x, r in zip(xs, rows, strict=True)
          if r.get("yardstick") and not failed[x]]
    if ys:
        top.errorbar([y[0] for y in ys], [y[1] for y in ys], yerr=[y[2] for y in ys], marker="o", capsize=3,
                     label="1-ply vs pubeval")
    crosses(top, [(x, r["yardstick"]["ppg"]) for x, r in enumerate(rows) if r.get("yardstick") and failed[x]],
            "candidate not shipped")
    top.axhline(0.63, color="tab:red", lw=0.8, ls=":", label="gnubg 0-ply (+0.63)")
    top.axhline(0.58, color="tab:green", lw=0.8, ls="--", label="target +0.58")
    top.set_ylabel("ppg vs pubeval")
    top.legend(loc="lower right", fontsize=8)
    top.grid(alpha=0.3)
    if _plot_reference(ref_ax, rows, failed):
        ref_ax.axhline(0.0, color="tab:red", lw=0.8, ls=":", label="level with it")
        ref_ax.axhline(0.02, color="tab:green", lw=0.8, ls="--", label="target +0.02")
        ref_ax.legend(loc="upper left", fontsize=8, ncol=2)
    ref_ax.set_ylabel("ppg vs the gate's\nreference (gnubg 0-ply)")
    ref_ax.grid(alpha=0.3)
    for ply, style in ((1, "o-"), (2, "s-")):
        pts = [(x, r["checker"][str(ply)]["all"]) for x, r in zip(xs, rows, strict=True)
               if str(ply) in r.get("checker", {}) and default[x]]
        bottom.plot([p[0] for p in pts if not failed[p[0]]], [p[1] for p in pts if not failed[p[0]]], style,
                    label=f"bgbot {ply}-ply")
        crosses(bottom, [p for p in pts if failed[p[0]]], "candidate not shipped" if ply == 1 else None)
    _plot_held_out(bottom, cube_ax, rows, [d or f for d, f in zip(default, failed, strict=True)])
    bottom.axhline(1.7, color="tab:red", lw=0.8, ls=":", label="gnubg 0-ply (1.7)")
    bottom.axhline(4.0, color="tab:green", lw=0.8, ls="--", label="target 1-ply (4.0)")
    bottom.axhline(2.5, color="tab:orange", lw=0.8, ls="--", label="target 2-ply (2.5)")
    bottom.set_ylabel("checker error vs gnubg 2-ply (mp)")
    bottom.legend(loc="upper right", fontsize=8)
    bottom.grid(alpha=0.3)
    for ply, style in (("1", "o-"), ("2", "s-"), ("3", "^-")):
        pts = [(x, r["cube"][ply]["agree"]) for x, r in zip(xs, rows, strict=True)
               if ply in r.get("cube", {}) and default[x]]
        if pts:
            cube_ax.plot([p[0] for p in pts if not failed[p[0]]], [p[1] for p in pts if not failed[p[0]]], style,
                         label=f"bgbot {ply}-ply")
            crosses(cube_ax, [p for p in pts if failed[p[0]]])
    cube_ax.axhline(90, color="tab:green", lw=0.8, ls="--", label="target 2-ply (90%)")
    cube_ax.set_ylabel("cube agreement with\ngnubg 2-ply (%)")
    cube_ax.legend(loc="lower left", fontsize=8, ncol=4)
    cube_ax.grid(alpha=0.3)
    cube_ax.set_xticks(xs, names, rotation=40, ha="right", fontsize=8)
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
    cube_plies: tuple[int, ...] = CUBE_PLIES,
    checker_data: str | Path = CHECKER,
    cube_data: str | Path = CUBE,
    reference: str = "",
    reference_games: int = 2000,
    reference_blocks: int = 0,
    reference_seed: int = 1,
    reads: tuple[str | Path, ...] = (),
    work: str | Path | None = None,
    ledger: str | Path | None = None,
) -> dict[str, Any]:
    """Measure ``candidate`` against ``parent``, append the verdict to ``record`` and redraw its curve.

    ``positions`` limits the checker and cube benchmarks to their first N positions and
    ``cube_plies`` the plies of the cube benchmark (tests). ``reference`` (a bot spec such as
    ``gnubg:ply=0``) with ``reference_blocks`` >= 2 adds the reference reading (module doc). Figures
    the record holds for the same networks measured the same way are reused, and so are those of the
    records ``reads`` names (read only: another run's record, or the repository's). The verdict is from
    the candidate's point of view against its parent. With ``work`` (a folder) the duel and every
    reference block keep their finished games there as they finish (:class:`~bgbot.play.pit.PitConfig`'s
    ``resume``, one folder a pit, named by the networks' weights), and the benchmark measures go to
    ``work/measures.jsonl``, so a killed gate run again plays only the games it lacks and measures nothing
    it measured before. With ``ledger`` (a JSON-lines file, such as :data:`LEDGER`) every finished duel,
    reference block and measure is also appended there as it finishes and read back by any later gate: a
    file small enough to commit, so a gate that outlasts a working day resumes on another checkout, losing at
    most the pit it was playing.
    """
    from bgbot.play.pit import PitConfig, run_pit
    from bgbot.play.table import Rules

    if isinstance(games, bool) or not isinstance(games, int) or games < 2 or games % 2:
        raise ConfigError(f"--games must be an even number >= 2 (duplicate pairs), got {games!r}")
    if not cube_plies or any(p not in (1, 2, 3) for p in cube_plies):
        raise ConfigError(f"cube plies are some of 1, 2, 3, got {cube_plies!r}")
    check_reference(reference, reference_games, reference_blocks, reference_seed)
    if reference_blocks:
        from bgbot.play.bots import prepare_bot

        prepare_bot(reference)  # a missing gnubg is an error now, not after an hour of measuring
    mine_id, theirs_id = Known(candidate), Known(parent)  # both readable before any measuring
    held = [r for other in reads if Path(other).resolve() != Path(record).resolve() for r in load_record(other)]
    kept = load_ledger(ledger)
    held += [r for r in kept if r["kind"] == "measures"]
    if work is not None:  # the measures a killed run of this gate took (rows of the record's shape)
        held += load_record(Path(work) / MEASURES)
    held += load_record(record)  # the record written last: its rows are the newest
    rows = read_benchmark(checker_data, "checker")[:positions]
    cube_rows = read_benchmark(cube_data, "cube")[:positions]
    data = {"checker": _repo_name(checker_data), "cube": _repo_name(cube_data)}
    t0 = time.perf_counter()
    reused: list[str] = []
    mine = _recorded(held, mine_id, len(rows), len(cube_rows), cube_plies, data)
    if mine is None:
        mine = measure(candidate, rows, cube_rows, cube_plies)
        _keep_measures(work, mine_id, data, mine, ledger)
    else:
        reused.append("measures")
    theirs = _recorded(held, theirs_id, len(rows), len(cube_rows), cube_plies, data)
    if theirs is None:
        theirs = measure(parent, rows, cube_rows, cube_plies)
        _keep_measures(work, theirs_id, data, theirs, ledger)
    reading = None
    if reference_blocks:  # before the duel: the rule that decides, and a gate stopped part way leaves paired blocks
        reading = reference_reading(
            candidate, parent, reference, games=reference_games, blocks=reference_blocks, seed=reference_seed,
            workers=workers, record=record, progress=progress, reused=reused, known=(held, mine_id, theirs_id),
            work=work, ledger=ledger)
    duel_row = _recorded_duel(held, mine_id, theirs_id, games, seed)
    if duel_row is None and (kept_duel := _ledger_find(kept, _duel_key(mine_id, theirs_id, games, seed))):
        duel_row = {"ppg": kept_duel["ppg"], "se": kept_duel["se"], "games": games, "seed": seed}
    if duel_row is None:
        resume = _pit_folder(work, f"duel-{mine_id.weights[:12]}-{theirs_id.weights[:12]}-s{seed}")
        duel = _finished(run_pit(f"bgbot:checkpoint={candidate}", f"bgbot:checkpoint={parent}",
                                 PitConfig(games=games, rules=Rules(cube=False), seed=seed, workers=workers,
                                           resume=resume), progress=progress), "the duel")
        duel_row = {"ppg": duel.ppg, "se": duel.ppg_se, "games": games, "seed": seed}
        _ledger_add(ledger, {**_duel_key(mine_id, theirs_id, games, seed), "ppg": duel.ppg, "se": duel.ppg_se})
    else:
        reused.append("duel")
    row: dict[str, Any] = {
        "name": name, "checkpoint": _repo_name(candidate), "sha256": mine_id.sha256, "weights": mine_id.weights,
        "parent": _repo_name(parent), "parent_sha256": theirs_id.sha256, "parent_weights": theirs_id.weights,
        **mine, "benchmarks": data,
        "parent_checker_1ply": theirs["checker"]["1"]["all"], "parent_measures": theirs,
        "duel": duel_row,
    }
    if reading is not None:
        row["reference"] = reading
    if yardstick:
        from bgbot.eval import pubeval
        from bgbot.eval.evaluate import NetEvaluator
        from bgbot.eval.models import load_model
        from bgbot.play.duel import duel as play_duel
        from bgbot.play.duel import greedy_chooser

        res = play_duel(greedy_chooser(NetEvaluator(load_model(candidate).net)), pubeval.choose, yardstick // 2,
                        seed=seed, progress=progress)
        row["yardstick"] = {"ppg": res.ppg, "se": res.se, "games": yardstick, "seed": seed}
    row["rules"] = verdict_rules(row)
    row["verdict"] = "pass" if all(row["rules"].values()) else "fail"
    row["seconds"] = round(time.perf_counter() - t0, 1)
    if reused:
        row["reused"] = reused
    if note:
        row["note"] = note
    append_record(record, row)
    plot_generations(record, Path(record).with_suffix(".png"))
    return row


def _slug(spec: str) -> str:
    """A bot spec as a file-name part (``gnubg:ply=0`` -> ``gnubg-ply-0``)."""
    return "".join(c if c.isalnum() else "-" for c in spec)


def _keep_measures(work: str | Path | None, net: Known, data: dict[str, str], measures: dict[str, Any],
                   ledger: str | Path | None = None) -> None:
    """Append a network's benchmark measures to ``work/MEASURES`` (rewritten atomically) and to the ``ledger``, so
    that a killed gate run again reads them instead of measuring again; nothing without either."""
    row = {"name": "measures", "sha256": net.sha256, "weights": net.weights, "benchmarks": data, **measures}
    _ledger_add(ledger, {"kind": "measures", **row})
    if work is None:
        return
    path = Path(work) / MEASURES
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.read_text() if path.exists() else ""
    write_text_atomic(path, old + json.dumps(row) + "\n")


def _pit_folder(work: str | Path | None, name: str) -> str | None:
    """The results folder of one of the gate's pits under ``work`` (None: no folder, nothing kept)."""
    return None if work is None else str(Path(work) / name)


def load_ledger(path: str | Path | None) -> list[dict[str, Any]]:
    """The rows of a gate ledger (oldest first; none when ``path`` is None or absent); a damaged line is a
    :class:`ConfigError` naming the file and line."""
    if path is None:
        return []
    out = []
    for n, line, row in _json_lines(path, "gate ledger "):
        if not isinstance(row, dict) or row.get("kind") not in LEDGER_KINDS:
            raise ConfigError(f"gate ledger {str(path)!r} line {n} is not a ledger row (its kind is one of "
                              f"{', '.join(LEDGER_KINDS)}): {line[:80]!r}")
        lacks = [k for k in LEDGER_KINDS[row["kind"]] if k not in row]
        if lacks or (row["kind"] != "measures" and not isinstance(row["ppg"], int | float)):
            raise ConfigError(f"gate ledger {str(path)!r} line {n}: a {row['kind']} row "
                              f"{'lacks ' + ', '.join(lacks) if lacks else 'whose ppg is not a number'}: "
                              f"{line[:80]!r}")
        out.append(row)
    return out


def _ledger_find(rows: list[dict[str, Any]], key: dict[str, Any]) -> dict[str, Any] | None:
    """The latest ledger row that holds every item of ``key`` (a pit: its kind, networks, games and seed)."""
    for r in reversed(rows):
        if all(r.get(k) == v for k, v in key.items()):
            return r
    return None


def _ledger_add(path: str | Path | None, row: dict[str, Any]) -> None:
    """Append ``row`` to the ledger, rewriting it atomically (an interrupted write loses nothing); nothing when
    ``path`` is None."""
    if path is None:
        return
    path = Path(path)
    old = path.read_text() if path.exists() else ""
    if old and not old.endswith("\n"):
        old += "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    write_text_atomic(path, old + json.dumps({**row, "finished": stamp}) + "\n")


def _duel_key(mine: Known, theirs: Known, games: int, seed: int) -> dict[str, Any]:
    return {"kind": "duel", "weights": mine.weights, "parent_weights": theirs.weights, "games": games, "seed": seed}


def _block_key(net: Known, reference: str, games: int, seed: int) -> dict[str, Any]:
    return {"kind": "reference", "weights": net.weights, "against": reference, "ply": 1, "games": games,
            "seed": seed}


def verdict_rules(row: dict[str, Any]) -> dict[str, bool]:
    """The gate's rules on a measured record row (see the module docstring): each True when met.

    Without a reference reading: ``duel`` (won by two standard errors), ``checker``, ``cube``. With
    one: ``duel`` (not lost by more than two), ``reference`` (won by two), ``checker``, ``cube``.
    """
    duel = row["duel"]
    se = duel["se"] if duel["se"] is not None else float("inf")  # too few pairs: no verdict can pass
    theirs = row["parent_measures"]
    ref = row.get("reference")
    rules = {"duel": duel["ppg"] > (-DUEL_SE if ref else DUEL_SE) * se}
    if ref:
        rules["reference"] = ref["se"] is not None and ref["diff"] > DUEL_SE * ref["se"]
    rules["checker"] = _mean_error(row["checker"]) < _mean_error(theirs["checker"])
    rules["cube"] = _mean_agreement(row["cube"]) >= _mean_agreement(theirs["cube"]) - CUBE_SLACK
    return rules


def _standard_error(values: list[float]) -> float | None:
    """The standard error of ``values``' mean (their sample standard deviation over the root of their count); None
    under two values."""
    return statistics.stdev(values) / len(values) ** 0.5 if len(values) >= 2 else None


def check_reference(reference: str, games: int, blocks: int, seed: int) -> None:
    """Refuse reference-reading settings that cannot give a reading (a :class:`ConfigError` quoting them)."""
    from bgbot.play.pit import parse_bot_spec

    for what, v, lo in (("blocks", blocks, 0), ("seed", seed, 0), ("games", games, 2)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise ConfigError(f"reference {what} must be an integer >= {lo}, got {v!r}")
    if games % 2:
        raise ConfigError(f"reference games must be even (duplicate pairs), got {games!r}")
    if blocks == 1:
        raise ConfigError("reference blocks must be 0 (no reference reading) or >= 2 (a standard error), got 1")
    if blocks and not reference:
        raise ConfigError(f"reference blocks = {blocks} needs a reference engine, such as 'gnubg:ply=0'")
    if reference:
        parse_bot_spec(reference)  # a ConfigError quoting a bad spec


def reference_reading(
    candidate: str | Path, parent: str | Path, reference: str, *, games: int, blocks: int, seed: int,
    workers: int = 1, record: str | Path = RECORD, progress: bool = True, reused: list[str] | None = None,
    known: tuple[list[dict[str, Any]], Known, Known] | None = None, work: str | Path | None = None,
    ledger: str | Path | None = None,
) -> dict[str, Any]:
    """Candidate and parent, each at 1-ply, against ``reference`` on the same dice: their paired difference.

    ``blocks`` pits of ``games`` cubeless money games each, seeded ``seed``, ``seed + 1``, ...; the
    two networks' pits of one seed deal the same dice. Returns each network's ppg per block (the
    candidate's and parent's points of view against the reference), ``diff``: the mean over blocks
    of candidate minus parent, and ``se``: its standard error over blocks. A network whose blocks the
    record already holds (same reference, games and seeds) is not played again; ``reused`` gets
    ``reference candidate`` / ``reference parent`` then. ``known``: the record's rows and the two networks
    as :class:`Known` (the gate's, read once), else read here. ``work``: a folder that keeps each block's
    finished games (:func:`gate`'s); ``ledger``: a gate ledger that keeps each finished block's ppg, whose
    blocks are not played again (``reused`` gets ``reference candidate blocks`` / ``... parent blocks`` when
    some were taken from it).
    """
    from tqdm import tqdm

    from bgbot.play.pit import PitConfig, run_pit
    from bgbot.play.table import Rules

    check_reference(reference, games, blocks, seed)
    seeds = list(range(seed, seed + blocks))
    key = {"against": reference, "games": games, "seeds": seeds}
    held_rows, mine, theirs = known if known is not None else (load_record(record), Known(candidate), Known(parent))
    kept = [r for r in load_ledger(ledger) if r["kind"] == "reference"]
    ppgs: dict[str, list[float]] = {}
    todo = []
    for who, ident in (("candidate", mine), ("parent", theirs)):
        held = _recorded_reference(held_rows, ident, key)
        if held is None:
            todo.append(who)
        else:
            ppgs[who] = held
            if reused is not None:
                reused.append(f"reference {who}")
    nets = {"candidate": (candidate, mine), "parent": (parent, theirs)}
    from_ledger = dict.fromkeys(todo, 0)
    ppgs.update({who: [] for who in todo})
    # seed by seed, the candidate's block then the parent's: a gate stopped part way leaves paired blocks, which
    # :func:`ledger_reading` reads
    with tqdm(total=blocks * len(todo), desc=f"against {reference}", unit="block", disable=not progress) as bar:
        for s in seeds:
            for who in todo:
                path, net = nets[who]
                block = _ledger_find(kept, _block_key(net, reference, games, s))
                if block is not None:
                    ppgs[who].append(float(block["ppg"]))
                    from_ledger[who] += 1
                    bar.update()
                    continue
                resume = _pit_folder(work, f"reference-{net.weights[:12]}-{_slug(reference)}-g{games}-s{s}")
                rep = _finished(run_pit(f"bgbot:ply=1,checkpoint={path}", reference,
                                        PitConfig(games=games, rules=Rules(cube=False), seed=s, workers=workers,
                                                  resume=resume)),
                                f"the {who}'s reference block of seed {s}")
                ppgs[who].append(rep.ppg)
                _ledger_add(ledger, {**_block_key(net, reference, games, s), "ppg": rep.ppg, "se": rep.ppg_se})
                bar.update()
    if reused is not None:
        reused += [f"reference {who} blocks" for who in todo if from_ledger[who]]
    diff = [a - b for a, b in zip(ppgs["candidate"], ppgs["parent"], strict=True)]
    return {**key, "ply": 1, "candidate": ppgs["candidate"], "parent": ppgs["parent"],
            "candidate_ppg": statistics.fmean(ppgs["candidate"]), "parent_ppg": statistics.fmean(ppgs["parent"]),
            "diff": statistics.fmean(diff), "se": _standard_error(diff)}


def ledger_reading(
    ledger: str | Path, candidate: str | Path, parent: str | Path, reference: str, *, games: int, blocks: int,
    seed: int, duel_games: int, duel_seed: int,
) -> dict[str, Any]:
    """What a gate's ledger holds so far for ``candidate`` against ``parent``, playing nothing: the reading of a gate
    still running or stopped part way.

    ``reference``, ``games``, ``blocks`` and ``seed`` name the reference blocks as :func:`reference_reading` plays
    them, ``duel_games`` and ``duel_seed`` the duel. Returns ``paired``: the seeds both networks have played,
    ``candidate_ppg`` / ``parent_ppg``: their means over those seeds (each network's point of view against the
    reference), ``diff`` and ``se``: the paired difference's mean and standard error (None under two pairs), and
    ``duel``: the ledger's duel row (the candidate's point of view) or None.
    """
    check_reference(reference, games, blocks, seed)
    rows = load_ledger(ledger)
    mine, theirs = Known(candidate), Known(parent)
    pairs = []
    for s in range(seed, seed + blocks):
        a = _ledger_find(rows, _block_key(mine, reference, games, s))
        b = _ledger_find(rows, _block_key(theirs, reference, games, s))
        if a is not None and b is not None:
            pairs.append((s, float(a["ppg"]), float(b["ppg"])))
    diff = [a - b for _, a, b in pairs]
    return {"against": reference, "games": games, "blocks": blocks, "paired": [s for s, _, _ in pairs],
            "candidate_ppg": statistics.fmean(a for _, a, _ in pairs) if pairs else None,
            "parent_ppg": statistics.fmean(b for _, _, b in pairs) if pairs else None,
            "diff": statistics.fmean(diff) if diff else None,
            "se": _standard_error(diff),
            "duel": _ledger_find(rows, _duel_key(mine, theirs, duel_games, duel_seed))}


def _finished(report: Any, what: str) -> Any:
    """``report`` (a :class:`~bgbot.play.pit.PitReport`) if its pit played every game; else stop the gate.

    A pit stopped by Ctrl-C or SIGTERM returns the games played so far: a gate that went on would
    record a short duel or block as if whole. An interrupted pit raises KeyboardInterrupt (nothing is
    recorded); a pit stopped by a fault raises :class:`~bgbot.errors.EngineError` naming it.
    """
    if report.stopped:
        if report.stopped.startswith("interrupted"):
            raise KeyboardInterrupt
        raise EngineError(f"{what} stopped after {report.games} games: {report.stopped}")
    return report


def _recorded_reference(rows: list[dict[str, Any]], net: Known, key: dict[str, Any]) -> list[float] | None:
    """The reference blocks of ``net`` in the record's ``rows``, if played with the same ``key``."""
    for r in reversed(rows):
        ref = r.get("reference")
        if not ref or any(ref.get(k) != v for k, v in key.items()):
            continue
        if net.is_side(r, ""):
            return [float(x) for x in ref["candidate"]]
        if net.is_side(r, "parent_"):
            return [float(x) for x in ref["parent"]]
    return None


def _recorded_duel(rows: list[dict[str, Any]], net: Known, parent: Known, games: int, seed: int
                   ) -> dict[str, Any] | None:
    """The duel of ``net`` against ``parent`` in the record's ``rows``, if played with the same games and seed."""
    for r in reversed(rows):
        duel = r.get("duel") or {}
        if (net.is_side(r, "") and parent.is_side(r, "parent_")
                and (duel.get("games"), duel.get("seed")) == (games, seed)):
            return dict(duel)
    return None


def read_benchmark(path: str | Path, kind: str) -> list[dict[str, Any]]:
    """The rows of a checker or cube benchmark file (``ConfigError`` quoting the file when it is not one)."""
    need = {"checker": ("position", "dice", "moves"), "cube": ("position", "cube", "decision")}[kind]
    try:
        rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    except (OSError, ValueError) as e:
        raise ConfigError(f"cannot read the {kind} benchmark {str(path)!r}: {e}") from None
    bad = next((i for i, r in enumerate(rows, 1) if not isinstance(r, dict) or any(k not in r for k in need)), None)
    if not rows or bad is not None:
        where = f"line {bad} lacks one of {', '.join(need)}" if bad else "it is empty"
        raise ConfigError(f"{str(path)!r} is not a {kind} benchmark (tests/data/README.md): {where}")
    return rows


def _repo_name(path: str | Path) -> str:
    """A file (benchmark or checkpoint) as the record names it: relative to the repository when inside it."""
    p = Path(path).resolve()
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)


#: the benchmark files of records written before the gate took others
_DEFAULT_DATA = {"checker": _repo_name(CHECKER), "cube": _repo_name(CUBE)}


def _recorded(rows: list[dict[str, Any]], net: Known, n_checker: int, n_cube: int,
              cube_plies: tuple[int, ...], data: dict[str, str] = _DEFAULT_DATA) -> dict[str, Any] | None:
    """The latest measures of ``net`` in the record's ``rows`` (as a candidate or as a parent), if taken on the
    same benchmarks (the same files, positions and plies)."""
    for r in reversed(rows):
        if r.get("benchmarks", _DEFAULT_DATA) != data:
            continue
        if net.is_side(r, ""):
            checker, cube = r.get("checker", {}), r.get("cube", {})
        elif net.is_side(r, "parent_") and "parent_measures" in r:
            checker, cube = r["parent_measures"]["checker"], r["parent_measures"]["cube"]
        else:
            continue
        same_checker = all(checker.get(p, {}).get("positions") == n_checker for p in ("1", "2"))
        same_cube = sorted(cube) == sorted(str(p) for p in cube_plies) and all(
            c.get("positions") == n_cube and c.get("method") == CUBE_METHOD for c in cube.values())
        if same_checker and same_cube:
            return {"checker": checker, "cube": cube}
    return None


def _print_so_far(r: dict[str, Any]) -> None:
    n = len(r["paired"])
    if n:
        se = f" +- {r['se']:.4f}" if r["se"] is not None else ""
        print(f"against {r['against']}: {n} of {r['blocks']} blocks of {r['games']} games paired: candidate "
              f"{r['candidate_ppg']:+.4f}, parent {r['parent_ppg']:+.4f}, paired {r['diff']:+.4f}{se}")
    else:
        print(f"against {r['against']}: none of {r['blocks']} blocks paired yet")
    duel = r["duel"]
    print(f"duel: {duel['ppg']:+.4f} +- {duel['se']:.4f} ({duel['games']} games, seed {duel['seed']})" if duel
          else "duel: not finished")


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
    ap.add_argument("--read", action="append", default=[], metavar="RECORD",
                    help="another record whose figures for the same networks are reused (repeatable), such as a "
                         "pipeline run's OUT/generations.jsonl")
    ap.add_argument("--work", metavar="DIR", help="keep the duel's and reference blocks' finished games here, so "
                                                   "that a killed gate run again plays only what it lacks")
    ap.add_argument("--ledger", metavar="FILE",
                    help="also keep every finished duel, reference block and measure in this JSON-lines file (such "
                         f"as {_repo_name(LEDGER)}), and reuse those it holds")
    ap.add_argument("--note", default="")
    ap.add_argument("--checker-data", default=str(CHECKER),
                    help="checker benchmark (default tests/data/benchmark/checker.jsonl)")
    ap.add_argument("--cube-data", default=str(CUBE), help="cube benchmark (default tests/data/benchmark/cube.jsonl)")
    ap.add_argument("--reference", default="", help="a third engine both networks play at 1-ply, e.g. gnubg:ply=0")
    ap.add_argument("--reference-games", type=int, default=2000, help="games a block (default 2000)")
    ap.add_argument("--reference-blocks", type=int, default=0, help="blocks against the reference (0: no reading)")
    ap.add_argument("--reference-seed", type=int, default=1, help="the first block's seed (default 1)")
    ap.add_argument("--so-far", action="store_true",
                    help="measure and play nothing: print what --ledger holds so far for these networks (the paired "
                         "reference blocks and the duel)")
    args = ap.parse_args(argv)
    if args.so_far:
        if not args.ledger:
            raise ConfigError("--so-far reads a gate ledger: give it with --ledger FILE")
        if args.reference_blocks < 2:
            raise ConfigError(f"--so-far reads reference blocks: give --reference and --reference-blocks (>= 2), got "
                              f"--reference-blocks {args.reference_blocks}")
        _print_so_far(ledger_reading(args.ledger, args.candidate, args.parent, args.reference,
                                     games=args.reference_games, blocks=args.reference_blocks,
                                     seed=args.reference_seed, duel_games=args.games, duel_seed=args.seed))
        return
    row = gate(args.candidate, args.parent, args.name, games=args.games, seed=args.seed, workers=args.workers,
               yardstick=args.yardstick, record=args.record, note=args.note, checker_data=args.checker_data,
               cube_data=args.cube_data, reference=args.reference, reference_games=args.reference_games,
               reference_blocks=args.reference_blocks, reference_seed=args.reference_seed, reads=tuple(args.read),
               work=args.work, ledger=args.ledger)
    print(json.dumps(row, indent=1))
    theirs = row["parent_measures"]
    failed = [k for k, ok in row["rules"].items() if not ok]
    print(f"verdict: {row['verdict']} ({'failed: ' + ', '.join(failed) if failed else 'every rule met'})")
    print(f"  duel {row['duel']['ppg']:+.4f} +- {row['duel']['se']}")
    if "reference" in row:
        ref = row["reference"]
        print(f"  against {ref['against']}, {len(ref['seeds'])} blocks of {ref['games']} games: candidate "
              f"{ref['candidate_ppg']:+.4f}, parent {ref['parent_ppg']:+.4f}, paired {ref['diff']:+.4f} +- "
              f"{ref['se']:.4f}")
    print(f"  checker error 1-/2-ply {row['checker']['1']['all']:.2f} / {row['checker']['2']['all']:.2f} mp, "
          f"parent {theirs['checker']['1']['all']:.2f} / {theirs['checker']['2']['all']:.2f}")
    for label, m in (("candidate", row), ("parent", theirs)):
        cube = " / ".join(f"{c['agree']:.1f}" for c in m["cube"].values())
        print(f"  {label}: cube agreement {' / '.join(m['cube'])}-ply {cube}%")


if __name__ == "__main__":
    from training.cli import run

    run(main, "training.gate")
