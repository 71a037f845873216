"""``bgbot train CONFIG``: one training pipeline, stage by stage, each resumable and skipped when done.

A pipeline config (``configs/train/*.toml``) has up to eight tables::

    [pipeline]  out = "runs/train-bank"      where every stage writes
                init = "checkpoints/bgbot-default.pt"   the network the stages start from ("" : none)
    [selfplay]  TD(lambda) self-play (training.config.TrainConfig keys; games = 0 or no table: skipped)
    [siblings]  preset, seed, chunks, workers: sibling labels of the network so far (training.refine generate)
    [race_siblings]  the same for the race network's fit (a race preset such as configs/refine/race-rollout-rank.toml)
    [crashed_siblings]  the same for the crashed network's fit (configs/refine/crashed-2ply-rank.toml)
    [fit]       nets = ["main", "crashed", "race"], epochs, lr, batch, holdout, seed, min_rows, bank, shards,
                schedule, rank, keep ("best": the epoch of least held-out loss, none if none improves;
                "last": the last epoch's), to_end (networks fitted to labels rolled out to the end only),
                [fit.NET] epochs, lr, schedule, rank, keep: one network's own settings (e.g. [fit.race]), and for a
                class network from_main = true: start it from a copy of the main network (as fitted so far),
                ensemble = [seed, ...], ensemble_width, ensemble_epochs, ensemble_lr (fresh main networks
                fitted to the same labels and joined to the refit as one wide network)
    [gate]      games, seed, workers, positions, against (default: the shipped model), checker_data, cube_data,
                reference, reference_games, reference_blocks, reference_seed (both networks against a third engine),
                ledger (a committed file of the gate's finished pits and measures, e.g. checkpoints/gate-ledger.jsonl)
    [ship]      ship = true: publish the candidate when the gate passes (training.ship)

Stages, in order (each writes ``OUT/stages/NAME.json`` with a hash of its settings when it is done; a
rerun with the same settings skips it, and a changed setting reruns it and the stages after it):

1. **selfplay**: ``OUT/selfplay/checkpoint.pt``, started from ``init`` (its weights, widened to the
   config's encoding) or from nothing; resumed from its own checkpoint after a kill.
2. **siblings**: ``OUT/siblings``, labels of the plays of one roll made by the network so far
   (``training.refine generate`` with a preset such as ``configs/refine/2ply-rank.toml``, its seed and
   chunk count); a killed run resumes at the missing chunks.
   **race-siblings** (with a ``[race_siblings]`` table): ``OUT/race-siblings``, the same for the race
   network, from a preset that keeps race positions only (``configs/refine/race-rollout-rank.toml``:
   the plays of one roll rolled out to the end on common dice, since a lookahead is no better than the
   race network's own value there); **crashed-siblings** (``[crashed_siblings]``) the same for the
   crashed network (2-ply values of crashed rolls: ``configs/refine/crashed-2ply-rank.toml``).
3. **fit**: the label bank (:mod:`bgbot.labels.bank`: every shard checked by its SHA-256, each position
   once, repeated labels combined; ``shards = N`` reads the manifest's first N shards only, so that a
   config names the same labels as the bank grows) written as training chunks, then each network of
   ``nets`` fitted to the rows of its class in turn (:func:`training.refine.fit`: minibatch Adam on the
   cross-entropy, the best held-out epoch kept, or the last with ``keep = "last"``; with a siblings stage the
   main network's fit also reads its labels, and with a race-siblings stage the race network's, ``rank``
   weighing their sibling loss);
   a network with fewer than ``min_rows`` rows (the bank's and its sibling labels') is left as it is.
   With ``ensemble = [s1, s2, ...]``, one fresh main network a seed (``ensemble_width`` hidden units
   from random weights seeded by it, ``ensemble_epochs`` at ``ensemble_lr`` on the same labels) is
   fitted after the refit, and the refit and the fresh networks become one wide network whose output
   logits are their mean (:func:`training.refine.ensemble`): networks of independent starts err less
   alike than refits of one network (docs/training.md, "Ensembles of fresh fits").  A member fitted under
   the same stage settings and labels is kept when a killed fit stage runs again.
4. **gate**: :func:`training.gate.gate` against ``against``: checker error, cube agreement, a
   duplicate-dice duel and, with ``reference_blocks``, both networks' play against a reference engine
   on the same dice; the verdict goes to ``OUT/generations.jsonl``. Figures the repository's record
   (``checkpoints/generations.jsonl``) holds for the same networks, such as the shipped model's, are read
   from it, not measured again. With ``ledger`` every finished duel, reference block and measure is
   also kept in that file as it finishes, and a gate run on another checkout that has the file (committed)
   plays only what it lacks.
5. **ship**: only when ``[ship] ship = true`` and the gate passed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bgbot.errors import ConfigError
from bgbot.eval.inference import CLASS_NETS
from bgbot.fileio import atomic_open, write_text_atomic
from training.config import KEEP, SCHEDULES

ROOT = Path(__file__).resolve().parents[1]
STAGES = ("selfplay", "siblings", "race-siblings", "crashed-siblings", "fit", "gate", "ship")
PER_NET = ("epochs", "lr", "schedule", "rank", "keep")  # the [fit] keys a network's own subtable may set
CLASS_ONLY = ("from_main",)  # and the keys only a class network's subtable may set
# the siblings tables: table name, stage name, the network whose fit reads the labels
SIBLING_TABLES = (("siblings", "siblings", "main"), ("race_siblings", "race-siblings", "race"),
                  ("crashed_siblings", "crashed-siblings", "crashed"))
CHUNK_ROWS = 8192  # at most, a training chunk
MIN_CHUNKS = 100  # at least (when the bank allows 64 rows a chunk): the fit holds out a share of chunks


@dataclass(frozen=True)
class FitStage:
    """The fit stage's settings (the ``[fit]`` table)."""

    nets: tuple[str, ...] = ("main", "crashed", "race")
    epochs: int = 4
    lr: float = 3e-5
    batch: int = 128
    holdout: float = 0.05
    seed: int = 1
    min_rows: int = 2000
    bank: str = "training/labels"
    shards: int = 0  # the manifest's first N shards (0: all of them)
    schedule: str = "constant"  # the learning rate's course (training.config.SCHEDULES)
    rank: float = 0.0  # the sibling loss's weight in the main network's fit (with a [siblings] stage)
    keep: str = "best"  # the epoch whose network a fit writes: "best" held-out loss (none if none improves) or "last"
    # networks fitted only to labels rolled out to the end (no network's value at a truncated leaf), such as the
    # race network's of `bgbot label --only race` (docs/training.md: pointwise race fits, "Races rolled out to the end")
    to_end: tuple[str, ...] = ()
    # fresh main networks (one a seed) fitted beside the refit and joined to it as one wide network
    ensemble: tuple[int, ...] = ()
    ensemble_width: int = 256
    ensemble_epochs: int = 12
    ensemble_lr: float = 2e-3
    # one network's own fit settings over the ones above, from a subtable named after it: [fit.race] epochs = 8
    per_net: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        bad = [n for n in self.nets if n != "main" and n not in CLASS_NETS]
        if bad or not self.nets:
            raise ConfigError(f"[fit] nets {list(self.nets)!r}: choose from main, {', '.join(CLASS_NETS)}")
        for net, values in self.per_net.items():
            if net not in self.nets:
                raise ConfigError(f"[fit.{net}] sets a network that [fit] nets {list(self.nets)!r} does not fit")
            own = PER_NET + (CLASS_ONLY if net != "main" else ())
            unknown = set(values) - set(own)
            if unknown:
                raise ConfigError(f"[fit.{net}]: unknown keys {sorted(unknown)}; {net} network's own keys are "
                                  f"{sorted(own)}")
            if not isinstance(values.get("from_main", False), bool):
                raise ConfigError(f"[fit.{net}] from_main must be true or false, got {values['from_main']!r}")
            try:  # each value checked as the [fit] key it overrides
                dataclasses.replace(self, per_net={}, **{k: v for k, v in values.items() if k not in CLASS_ONLY})
            except ConfigError as e:
                raise ConfigError(f"[fit.{net}] {str(e).removeprefix('[fit] ')}") from None
        if self.ensemble:
            seeds = self.ensemble
            if (not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in seeds)
                    or len(set(seeds)) != len(seeds)):
                raise ConfigError(f"[fit] ensemble {list(seeds)!r} must list distinct whole-number seeds")
            if "main" not in self.nets:
                raise ConfigError(f"[fit] ensemble {list(seeds)!r} joins fresh main networks to the main network's "
                                  f"refit, but nets {list(self.nets)!r} does not fit it")
        if not set(self.to_end) <= set(self.nets):
            raise ConfigError(f"[fit] to_end {list(self.to_end)!r} names networks that nets {list(self.nets)!r} "
                              "does not fit")
        for name in ("epochs", "ensemble_width", "ensemble_epochs"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ConfigError(f"[fit] {name} must be a whole number >= 1, got {v!r}")
        for name in ("lr", "ensemble_lr"):
            v = getattr(self, name)
            if not (isinstance(v, float | int) and 0 < v < 1):
                raise ConfigError(f"[fit] {name} must be a number between 0 and 1, got {v!r}")
        if not (isinstance(self.holdout, float | int) and 0 < self.holdout < 0.5):
            raise ConfigError(f"[fit] holdout must be a share above 0 and below 0.5, got {self.holdout!r}")
        if self.schedule not in SCHEDULES:
            raise ConfigError(f"[fit] schedule must be {' or '.join(SCHEDULES)}, got {self.schedule!r}")
        if self.keep not in KEEP:
            raise ConfigError(f"[fit] keep must be {' or '.join(KEEP)}, got {self.keep!r}")
        if isinstance(self.rank, bool) or not isinstance(self.rank, int | float) or not 0 <= self.rank < 1e3:
            raise ConfigError(f"[fit] rank must be a number >= 0, got {self.rank!r}")
        for name in ("batch", "seed", "min_rows", "shards"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < (1 if name == "batch" else 0):
                raise ConfigError(f"[fit] {name} must be a whole number, got {v!r}")


@dataclass(frozen=True)
class SiblingStage:
    """A siblings stage's settings (the ``[siblings]``, ``[race_siblings]`` or ``[crashed_siblings]`` table): a
    ``training.refine`` preset and its run."""

    preset: str = "configs/refine/2ply-rank.toml"
    seed: int = 1
    chunks: int = 100
    workers: int = 1

    def __post_init__(self) -> None:
        for name in ("seed", "chunks", "workers"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < (0 if name == "seed" else 1):
                raise ConfigError(f"siblings {name} must be a whole number, got {v!r}")
        if not _resolve(self.preset).is_file():
            raise ConfigError(f"siblings preset {self.preset!r} is not a file")


@dataclass(frozen=True)
class GateStage:
    """The gate stage's settings (the ``[gate]`` table)."""

    games: int = 2000
    seed: int = 1
    workers: int = 1
    positions: int = 0  # 0: every benchmark position
    against: str = ""  # default: the shipped model
    # the checker and cube benchmark files (default: the gate's 400 and 200 positions); the held-out
    # tests/data/benchmark/checker-3000.jsonl and cube-1000.jsonl resolve 2.7 and 2.2 times finer
    checker_data: str = ""
    cube_data: str = ""
    # the reference reading (training/gate.py): both networks at 1-ply against this engine, in blocks of
    # reference_games games seeded reference_seed, +1, ...; 0 blocks: none
    reference: str = ""
    reference_games: int = 2000
    reference_blocks: int = 0
    reference_seed: int = 1
    # a gate ledger (training/gate.py): every finished duel, reference block and measure, kept where a commit keeps
    # it (such as checkpoints/gate-ledger.jsonl), so a gate longer than a day resumes on a fresh checkout; "": none
    ledger: str = ""

    def __post_init__(self) -> None:
        from training.gate import check_reference, load_ledger

        if not (isinstance(self.games, int) and self.games >= 2 and self.games % 2 == 0):
            raise ConfigError(f"[gate] games must be an even number >= 2, got {self.games!r}")
        try:
            check_reference(self.reference, self.reference_games, self.reference_blocks, self.reference_seed)
        except ConfigError as e:
            raise ConfigError(f"[gate] {e}") from None
        for name in ("checker_data", "cube_data"):
            v = getattr(self, name)
            if v and not _resolve(v).is_file():
                raise ConfigError(f"[gate] {name} {v!r} is not a file")
        if not isinstance(self.ledger, str):
            raise ConfigError(f"[gate] ledger must be a file name, got {self.ledger!r}")
        if self.ledger:
            try:
                load_ledger(_resolve(self.ledger))  # a damaged ledger is an error now, not after the fits
            except ConfigError as e:
                raise ConfigError(f"[gate] {e}") from None


@dataclass(frozen=True)
class Pipeline:
    """A whole pipeline config (see the module doc)."""

    out: str
    init: str
    selfplay: dict[str, Any] | None
    siblings: SiblingStage | None
    fit: FitStage | None
    gate: GateStage | None
    ship: bool
    race_siblings: SiblingStage | None = None
    crashed_siblings: SiblingStage | None = None


_TABLES = {"pipeline", "selfplay", "fit", "gate", "ship", *(t for t, _, _ in SIBLING_TABLES)}


def is_pipeline(path: str | Path) -> bool:
    """Whether a config file is a pipeline (it has a table of :data:`_TABLES`), not a flat self-play preset.

    An unreadable file is not decided here: the self-play loader reports it.
    """
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return any(isinstance(v, dict) for v in raw.values()) and bool(set(raw) & _TABLES)


def load_pipeline(path: str | Path, out: str | None = None) -> Pipeline:
    """Read a pipeline config; an unknown table or key, or a bad value, is a ConfigError naming it."""
    p = Path(path)
    try:
        raw = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"pipeline config {str(p)!r} is not readable: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"pipeline config {str(p)!r} is not valid TOML: {exc}") from None
    unknown = set(raw) - _TABLES
    if unknown:
        raise ConfigError(f"pipeline config {str(p)!r}: unknown tables or keys {sorted(unknown)}; "
                          f"known tables {sorted(_TABLES)}")
    head = raw.get("pipeline", {})
    extra = set(head) - {"out", "init"}
    if extra:
        raise ConfigError(f"pipeline config {str(p)!r}: unknown [pipeline] keys {sorted(extra)}")

    def table(name: str, cls: type) -> Any:
        if name not in raw:
            return None
        if not isinstance(raw[name], dict):
            raise ConfigError(f"pipeline config {str(p)!r}: [{name}] must be a table, got {raw[name]!r}")
        known = {f.name for f in dataclasses.fields(cls)} - {"per_net"}
        bad = {k for k, v in raw[name].items() if not (cls is FitStage and isinstance(v, dict))} - known
        if bad:
            raise ConfigError(f"pipeline config {str(p)!r}: unknown [{name}] keys {sorted(bad)}; known {sorted(known)}")
        values = dict(raw[name])
        if cls is FitStage:  # subtables [fit.NET]: that network's own settings
            values["per_net"] = {k: values.pop(k) for k in list(values) if isinstance(values[k], dict)}
        if "ensemble" in values:
            if not isinstance(values["ensemble"], list):
                raise ConfigError(f"pipeline config {str(p)!r}: [{name}] ensemble must be a list of seeds, got "
                                  f"{values['ensemble']!r}")
            values["ensemble"] = tuple(values["ensemble"])
        for key in ("nets", "to_end"):
            if key in values:
                if not isinstance(values[key], list) or not all(isinstance(v, str) for v in values[key]):
                    raise ConfigError(f"pipeline config {str(p)!r}: [{name}] {key} must be a list of network "
                                      f"names, got {values[key]!r}")
                values[key] = tuple(values[key])
        if cls is not SiblingStage:
            return cls(**values)
        try:  # one class for both siblings tables: its errors are named by the table here
            return cls(**values)
        except ConfigError as e:
            raise ConfigError(f"[{name}] {e}") from None

    selfplay = raw.get("selfplay")
    if selfplay is not None:
        from training.config import TrainConfig

        known = {f.name for f in dataclasses.fields(TrainConfig)}
        bad = set(selfplay) - known
        if bad:
            raise ConfigError(f"pipeline config {str(p)!r}: unknown [selfplay] keys {sorted(bad)}")
        if "hidden" in selfplay:
            selfplay = {**selfplay, "hidden": tuple(selfplay["hidden"])}
        TrainConfig(**selfplay)  # checks every value now, not after the stages before it
    ship = raw.get("ship", {})
    if set(ship) - {"ship"} or not isinstance(ship.get("ship", False), bool):
        raise ConfigError(f"pipeline config {str(p)!r}: [ship] takes one key, ship = true or false")
    init = str(head.get("init", "checkpoints/bgbot-default.pt"))
    fit, gate = table("fit", FitStage), table("gate", GateStage)
    sib = {t: table(t, SiblingStage) for t, _, _ in SIBLING_TABLES}
    if sib["siblings"] is not None and (fit is None or "main" not in fit.nets):
        raise ConfigError(f"pipeline config {str(p)!r}: [siblings] labels are for the main network's fit")
    for t, _, net in SIBLING_TABLES[1:]:
        if sib[t] is not None and (fit is None or net not in fit.nets):
            raise ConfigError(f"pipeline config {str(p)!r}: [{t}] labels are for the {net} network's fit, "
                              f"which [fit] nets {list(fit.nets) if fit else []!r} does not list")
    if fit is not None and fit.rank and not any(sib.values()):
        raise ConfigError(f"pipeline config {str(p)!r}: [fit] rank = {fit.rank!r} weighs the sibling loss, "
                          "which needs a [siblings] stage")
    if selfplay is None and not init:
        raise ConfigError(f"pipeline config {str(p)!r}: with no [selfplay] stage, init must name a model")
    if fit is not None and not selfplay and not init:
        raise ConfigError(f"pipeline config {str(p)!r}: the fit needs a network to start from")
    return Pipeline(str(out or head.get("out", "runs/train")), init, selfplay, sib["siblings"], fit, gate,
                    bool(ship.get("ship")), sib["race_siblings"], sib["crashed_siblings"])


def _hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


def _resolve(path: str) -> Path:
    p = Path(path)
    return p if p.is_absolute() or p.exists() else ROOT / p


class _Stages:
    """The stage journal ``OUT/stages/``: which stages are done, with which settings."""

    def __init__(self, out: Path) -> None:
        self.dir = out / "stages"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.chain = ""

    def done(self, name: str, settings: Any) -> dict[str, Any] | None:
        self.chain = _hash([self.chain, name, settings])  # a stage's key includes every stage before it
        path = self.dir / f"{name}.json"
        if path.exists():
            rec = json.loads(path.read_text())
            if rec.get("key") == self.chain:
                return rec  # type: ignore[no-any-return]
        return None

    def finish(self, name: str, result: dict[str, Any]) -> dict[str, Any]:
        rec = {"key": self.chain, **result}
        write_text_atomic(self.dir / f"{name}.json", json.dumps(rec, indent=1, default=str) + "\n")
        return rec


def bank_chunks(bank: Path, out: Path, seed: int, shards: int = 0, *, to_end: bool = False) -> int:
    """Write the bank's positions (each once, labels combined) as training chunks ``out/data/chunk-*.npz``.

    Rows are shuffled by ``seed`` so that the held-out chunks are a fair sample, and cut into at least
    :data:`MIN_CHUNKS` chunks where the bank allows, so that the fit's held-out share of chunks is near its
    ``holdout``.  ``shards`` > 0 reads the manifest's first ``shards`` shards only; ``to_end`` keeps only
    the positions whose every label was rolled out to the end.  Returns the row count.
    """
    from bgbot.labels.bank import load_bank

    labels = load_bank(bank, first=shards)
    if to_end:
        keep = np.flatnonzero(labels.truncate == 0)
        labels = dataclasses.replace(labels, **{f.name: getattr(labels, f.name)[keep]
                                                for f in dataclasses.fields(labels)})
    if len(labels) == 0:
        what = "no labels rolled out to the end" if to_end else "no labels"
        raise ConfigError(f"the label bank {str(bank)!r} holds {what}: run bgbot label first")
    order = np.random.default_rng([seed, 0xBA4C]).permutation(len(labels))
    data = out / "data"
    if data.exists():
        shutil.rmtree(data)
    data.mkdir(parents=True)
    size = min(CHUNK_ROWS, max(64, -(-len(order) // MIN_CHUNKS)))
    for k, i in enumerate(range(0, len(order), size)):
        rows = order[i:i + size]
        with atomic_open(data / f"chunk-{k:05d}.npz") as f:
            np.savez(f, boards=labels.board[rows], labels=labels.probs[rows],
                     groups=np.arange(len(rows), dtype=np.int64), se=labels.se[rows])
    return len(labels)


def _rows_for(boards: np.ndarray, init: Path, net: str) -> int:
    """How many of the bank's ``boards`` the network ``net`` of ``init`` answers (the rows its fit learns from)."""
    from bgbot.eval.nets import load_checkpoint
    from training.refine import _rows_of

    return int(_rows_of(boards, net, load_checkpoint(init).class_nets).sum())


def run_pipeline(config: str | Path, *, out: str | None = None, progress: bool = True) -> dict[str, Any]:
    """Run every stage of a pipeline config that is not done yet; returns ``{stage: its record}``."""
    pl = load_pipeline(config, out)
    root = Path(pl.out)
    root.mkdir(parents=True, exist_ok=True)
    stages = _Stages(root)
    records: dict[str, Any] = {}
    current = str(_resolve(pl.init)) if pl.init else ""

    if pl.selfplay and int(pl.selfplay.get("games", 0)) > 0:
        settings = {**pl.selfplay, "init_from": pl.selfplay.get("init_from", current)}
        rec = stages.done("selfplay", settings)
        if rec is None:
            rec = stages.finish("selfplay", _selfplay(settings, root / "selfplay", progress))
        records["selfplay"] = rec
        current = rec["checkpoint"]

    siblings: dict[str, Path] = {}  # a network's sibling labels, by the network they are fitted to
    for table_name, name, net in SIBLING_TABLES:
        stage = getattr(pl, table_name)
        if stage is None:  # no stage: no key in the chain, so configs without it keep their stage keys
            continue
        settings = {**dataclasses.asdict(stage), "model": current}
        rec = stages.done(name, settings)
        if rec is None:
            rec = stages.finish(name, _siblings(stage, Path(current), root / name, progress))
        records[name] = rec
        siblings[net] = Path(rec["data"])

    if pl.fit is not None:
        bank = _resolve(pl.fit.bank)
        from bgbot.labels.bank import check_bank

        entries = _first_shards(check_bank(bank), pl.fit.shards, bank)
        settings = {**dataclasses.asdict(pl.fit), "init": current, "shard_sha256": [e["sha256"] for e in entries]}
        if not pl.fit.to_end:  # a setting added later: runs made before it keep their stage keys
            del settings["to_end"]
        if not pl.fit.ensemble:  # the same
            for key in ("ensemble", "ensemble_width", "ensemble_epochs", "ensemble_lr"):
                del settings[key]
        if not pl.fit.per_net:  # the same
            del settings["per_net"]
        rec = stages.done("fit", settings)
        if rec is None:
            rec = stages.finish("fit", _fit(pl.fit, bank, Path(current), root, progress, siblings, key=stages.chain))
        records["fit"] = rec
        current = rec["checkpoint"]

    if pl.gate is not None:
        against = str(_resolve(pl.gate.against)) if pl.gate.against else str(ROOT / "checkpoints" / "bgbot-default.pt")
        settings = {**dataclasses.asdict(pl.gate), "candidate": current, "against": against}
        del settings["ledger"]  # where the finished pits are kept changes no figure
        rec = stages.done("gate", settings)
        if rec is None:
            from training.gate import RECORD, gate

            files = {k: _resolve(v) for k, v in (("checker_data", pl.gate.checker_data),
                                                  ("cube_data", pl.gate.cube_data)) if v}
            row = gate(current, against, root.name, games=pl.gate.games, seed=pl.gate.seed,
                       workers=pl.gate.workers, record=root / "generations.jsonl", progress=progress,
                       positions=pl.gate.positions or None, reference=pl.gate.reference,
                       reference_games=pl.gate.reference_games, reference_blocks=pl.gate.reference_blocks,
                       reference_seed=pl.gate.reference_seed, reads=(RECORD,),
                       work=root / "gate-pits", ledger=_resolve(pl.gate.ledger) if pl.gate.ledger else None,
                       **files)
            rec = stages.finish("gate", {"verdict": row["verdict"], "rules": row["rules"], "duel": row["duel"],
                                         "checkpoint": current})
        records["gate"] = rec

    if pl.ship:
        gate_rec = records.get("gate")
        if gate_rec is None or gate_rec["verdict"] != "pass":
            records["ship"] = {"shipped": False, "why": "the gate did not pass" if gate_rec else "no gate stage"}
        else:
            rec = stages.done("ship", {"candidate": current})
            if rec is None:
                from training.ship import ship

                shipped = ship(Path(current).parent, refined=True)
                rec = stages.finish("ship", {"shipped": True, "model": str(shipped)})
            records["ship"] = rec
    write_text_atomic(root / "pipeline.json", json.dumps(records, indent=1, default=str) + "\n")
    return records


def _selfplay(settings: dict[str, Any], out: Path, progress: bool) -> dict[str, Any]:
    from training.config import TrainConfig
    from training.selfplay import run

    cfg = TrainConfig(**settings)
    t0 = time.perf_counter()
    ckpt = out / "checkpoint.pt"
    if ckpt.exists():
        run(cfg, out, resume=ckpt, until=cfg.games, progress=progress)
    else:
        run(cfg, out, until=cfg.games, progress=progress, force=True)
    return {"checkpoint": str(ckpt), "games": cfg.games, "seconds": round(time.perf_counter() - t0, 1)}


def _first_shards(entries: list[dict[str, Any]], n: int, bank: Path) -> list[dict[str, Any]]:
    """The manifest's first ``n`` shards (0: all); a ConfigError when the bank holds fewer."""
    if n and len(entries) < n:
        raise ConfigError(f"[fit] shards = {n}, but the bank {str(bank)!r} lists {len(entries)}")
    return entries[:n] if n else entries


def _siblings(st: SiblingStage, model: Path, out: Path, progress: bool) -> dict[str, Any]:
    from training.refine import generate, load_preset

    cfg, _ = load_preset(_resolve(st.preset))
    t0 = time.perf_counter()
    generate(model, out, st.chunks, dataclasses.replace(cfg, seed=st.seed), progress=progress, workers=st.workers)
    return {"data": str(out), "chunks": st.chunks, "seconds": round(time.perf_counter() - t0, 1)}


def _fit(st: FitStage, bank: Path, init: Path, root: Path, progress: bool,
         siblings: dict[str, Path] | None = None, key: str = "") -> dict[str, Any]:
    from training.refine import NoImprovement, fit, load_chunks

    t0 = time.perf_counter()
    data = root / "bank-data"
    rows = bank_chunks(bank, data, st.seed, st.shards)
    boards, _, _ = load_chunks(data)  # read once: which rows each network answers
    if st.to_end:
        data_to_end = root / "bank-data-to-end"
        bank_chunks(bank, data_to_end, st.seed, st.shards, to_end=True)
        boards_to_end, _, _ = load_chunks(data_to_end)
    current = init
    fitted: dict[str, Any] = {}
    for net in st.nets:
        net_data, net_boards = (data_to_end, boards_to_end) if net in st.to_end else (data, boards)
        n = _rows_for(net_boards, current, net)
        extra = siblings[net] if siblings and net in siblings else None
        n_extra = _rows_for(load_chunks(extra)[0], current, net) if extra is not None else 0
        if n + n_extra < st.min_rows:
            fitted[net] = {"rows": n, "fitted": False, "why": f"fewer than min_rows {st.min_rows}"}
            continue
        out = root / f"fit-{net}"
        sources: list[str | Path] = [net_data, *([extra] if extra is not None else [])]
        mine = st.per_net.get(net, {})
        own = dataclasses.replace(st, per_net={}, **{k: v for k, v in mine.items() if k not in CLASS_ONLY})
        try:  # [fit] with this network's [fit.NET]
            res = fit(current, sources, out, epochs=own.epochs, lr=own.lr, batch=st.batch, holdout=st.holdout,
                      seed=st.seed, schedule=own.schedule, progress=progress, net_name=net,
                      rank=own.rank if len(sources) > 1 else 0.0, from_main=bool(mine.get("from_main", False)),
                      keep=own.keep)
        except NoImprovement as e:  # the network stays as it was; the other networks are still fitted
            fitted[net] = {"rows": n, "fitted": False, "why": str(e)}
            continue
        losses = {k: v for k, v in res.items() if k.startswith(("best_", "kept_"))}
        fitted[net] = {"rows": n, **({"sibling_rows": n_extra} if extra is not None else {}), "fitted": True,
                       "positions_train": res.get("positions_train"), "positions_holdout": res.get("positions_holdout"),
                       **losses}
        current = out / "refined.pt"
    if current == init:  # nothing fitted: the candidate is the start, copied so the gate names a file here
        (root / "fit-none").mkdir(exist_ok=True)
        shutil.copy2(init, root / "fit-none" / "refined.pt")
        current = root / "fit-none" / "refined.pt"
    members: dict[str, Any] = {}
    if st.ensemble:
        from training.refine import ensemble

        if not fitted.get("main", {}).get("fitted"):
            raise ConfigError(f"[fit] ensemble {list(st.ensemble)!r}: the main network was not fitted "
                              f"({fitted.get('main', {}).get('why', 'no rows')}), so there is no refit to join")
        sources = [data, *([siblings["main"]] if siblings and "main" in siblings else [])]
        paths: list[str | Path] = [current]
        for s in st.ensemble:
            out = root / f"fresh-{s}"
            stamp = out / "stage-key.txt"  # the fit stage's key when the member was fitted: a member of other
            # settings or labels is fitted again, one of these (a killed stage run again) kept
            if not (stamp.is_file() and stamp.read_text() == key and (out / "fit.json").is_file()):
                stamp.unlink(missing_ok=True)
                fit(current, sources, out, epochs=st.ensemble_epochs, lr=st.ensemble_lr, batch=st.batch,
                    holdout=st.holdout, seed=st.seed, schedule=st.schedule, progress=progress, net_name="main",
                    rank=st.rank if len(sources) > 1 else 0.0, fresh=st.ensemble_width, fresh_seed=s)
                write_text_atomic(stamp, key)
            best = json.loads((out / "fit.json").read_text())
            members[str(s)] = {k: v for k, v in best.items() if k.startswith("best_")}
            paths.append(out / "refined.pt")
        ensemble(paths, root / "ensemble")
        current = root / "ensemble" / "refined.pt"
    return {"checkpoint": str(current), "bank_positions": rows, "nets": fitted,
            **({"ensemble": members} if members else {}), "seconds": round(time.perf_counter() - t0, 1)}
