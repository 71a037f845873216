"""The generation gate (training/gate.py): measures, verdict, the record and its curve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from bgbot.errors import ConfigError
from bgbot.eval.inference import ModelSpec
from bgbot.eval.nets import ValueNet, load_checkpoint, save_checkpoint
from training.gate import DUEL_SE, gate, load_record


def _two_nets(tmp_path: Path) -> tuple[Path, Path]:
    """Two small networks of different weights, saved as ``parent.pt`` and ``cand.pt`` under ``tmp_path``."""
    torch.manual_seed(3)
    parent = save_checkpoint(tmp_path / "parent.pt", ValueNet(ModelSpec(3, (8,))))
    torch.manual_seed(4)
    return parent, save_checkpoint(tmp_path / "cand.pt", ValueNet(ModelSpec(3, (8,))))


def test_a_generation_is_measured_recorded_and_drawn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import training.gate as gate_module

    measured: list[str] = []
    real_measure = gate_module.measure

    def counting_measure(checkpoint: str | Path, *args: object) -> dict[str, object]:
        measured.append(Path(checkpoint).name)
        return real_measure(checkpoint, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(gate_module, "measure", counting_measure)
    parent, cand = _two_nets(tmp_path)
    record = tmp_path / "generations.jsonl"
    row = gate(cand, parent, "g1", games=4, record=record, progress=False, positions=12, yardstick=2,
               cube_plies=(1,))
    for ply in ("1", "2"):
        c = row["checker"][ply]
        assert c["positions"] == 12 and c["all"] >= 0 and c["contact"] >= 0
    assert list(row["cube"]) == ["1"] and row["cube"]["1"]["positions"] == 12
    assert 0 <= row["cube"]["1"]["agree"] <= 100 and row["cube"]["1"]["mae_opt"] > 0
    assert measured == ["cand.pt", "parent.pt"]
    assert row["duel"]["games"] == 4 and abs(row["duel"]["ppg"]) <= 3
    assert row["yardstick"]["games"] == 2
    theirs = row["parent_measures"]
    assert theirs["checker"]["1"]["positions"] == 12 and list(theirs["cube"]) == ["1"]
    se = row["duel"]["se"] if row["duel"]["se"] is not None else float("inf")
    rules = {
        "duel": row["duel"]["ppg"] > DUEL_SE * se,
        "checker": row["checker"]["1"]["all"] + row["checker"]["2"]["all"]
        < theirs["checker"]["1"]["all"] + theirs["checker"]["2"]["all"],
        "cube": row["cube"]["1"]["agree"] >= theirs["cube"]["1"]["agree"] - 1.0,
    }
    assert row["rules"] == rules
    assert row["verdict"] == ("pass" if all(rules.values()) else "fail")
    assert (tmp_path / "generations.png").stat().st_size > 10_000
    assert "reused" not in row
    # the same candidate against itself cannot pass: no duel won, no lower error; its figures, as
    # candidate and as parent, come from the record (the first gate measured it the same way)
    again = gate(cand, cand, "g1-self", games=2, record=record, progress=False, positions=12, cube_plies=(1,))
    assert again["verdict"] == "fail" and not again["rules"]["checker"] and again["rules"]["cube"]
    assert again["parent_measures"] == {"checker": row["checker"], "cube": row["cube"]}
    assert again["reused"] == ["measures"]
    # a parent measured once, as some candidate's parent, is not measured again
    third = gate(parent, parent, "p-self", games=2, record=record, progress=False, positions=12, cube_plies=(1,))
    assert third["parent_measures"] == theirs and third["checker"] == theirs["checker"]
    assert measured == ["cand.pt", "parent.pt"]
    # the same duel (networks, games, seed) is read from the record; another seed is played
    fourth = gate(cand, parent, "g1-again", games=4, record=record, progress=False, positions=12, cube_plies=(1,))
    assert fourth["duel"] == row["duel"] and fourth["reused"] == ["measures", "duel"]
    fifth = gate(cand, parent, "g1-seed2", games=4, seed=2, record=record, progress=False, positions=12,
                 cube_plies=(1,))
    assert fifth["reused"] == ["measures"] and fifth["duel"]["seed"] == 2
    assert [r["name"] for r in load_record(record)] == ["g1", "g1-self", "p-self", "g1-again", "g1-seed2"]


def test_a_rebuilt_checkpoint_of_the_same_weights_reads_the_record(tmp_path: Path) -> None:
    """A file of the same weights but other bytes (a rebuild records other run paths) is the same network to the
    record: its measures, duel and reference blocks are reused; a network of other weights is measured."""
    parent, cand = _two_nets(tmp_path)
    record = tmp_path / "generations.jsonl"
    kw = {"games": 2, "record": record, "progress": False, "positions": 4, "cube_plies": (1,),
          "reference": "pubeval", "reference_games": 2, "reference_blocks": 2}
    row = gate(cand, parent, "g1", **kw)  # type: ignore[arg-type]
    rebuilt = save_checkpoint(tmp_path / "rebuilt.pt", load_checkpoint(cand).net, run="elsewhere")
    assert rebuilt.read_bytes() != cand.read_bytes()
    again = gate(rebuilt, parent, "g1-rebuilt", **kw)  # type: ignore[arg-type]
    assert again["sha256"] != row["sha256"] and again["weights"] == row["weights"]
    assert again["reused"] == ["measures", "reference candidate", "reference parent", "duel"]
    assert again["checker"] == row["checker"] and again["reference"] == row["reference"]
    # another record (a pipeline run's) reads this one's figures and writes its own row only
    elsewhere = tmp_path / "run" / "generations.jsonl"
    copied = gate(cand, parent, "g1-copied", **{**kw, "record": elsewhere, "reads": (record,)})  # type: ignore[arg-type]
    assert copied["reused"] == again["reused"] and copied["duel"] == row["duel"]
    assert [r["name"] for r in load_record(elsewhere)] == ["g1-copied"] and len(load_record(record)) == 2
    torch.manual_seed(5)
    other = save_checkpoint(tmp_path / "other.pt", ValueNet(ModelSpec(3, (8,))))
    third = gate(other, parent, "g2", **kw)  # type: ignore[arg-type]
    assert third["weights"] != row["weights"]
    assert third["reused"] == ["reference parent"]  # its own measures are new; the parent's come from the record


def test_each_rule_can_fail_on_its_own() -> None:
    """A candidate that wins the duel still fails on worse checker play or on worse cube decisions."""
    from training.gate import verdict_rules

    def row(ppg: float, errors: tuple[float, float], agree: float) -> dict[str, object]:
        return {"duel": {"ppg": ppg, "se": 0.01},
                "checker": {"1": {"all": errors[0]}, "2": {"all": errors[1]}},
                "cube": {"1": {"agree": agree}, "2": {"agree": agree}},
                "parent_measures": {"checker": {"1": {"all": 4.0}, "2": {"all": 4.0}},
                                    "cube": {"1": {"agree": 85.0}, "2": {"agree": 85.0}}}}

    assert verdict_rules(row(0.025, (3.9, 4.0), 85.0)) == {"duel": True, "checker": True, "cube": True}
    assert verdict_rules(row(0.015, (3.9, 4.0), 85.0))["duel"] is False  # 1.5 standard errors: not enough
    assert verdict_rules(row(0.005, (3.9, 4.0), 85.0))["duel"] is False
    # a better 1-ply error does not make up for a worse 2-ply one: the mean counts
    assert verdict_rules(row(0.02, (3.5, 4.6), 85.0))["checker"] is False
    assert verdict_rules(row(0.02, (3.9, 4.0), 84.0))["cube"] is True  # within the slack
    assert verdict_rules(row(0.02, (3.9, 4.0), 83.5))["cube"] is False


def test_the_reference_reading_pairs_blocks_of_the_same_dice(tmp_path: Path) -> None:
    """Both networks play the reference on the same seeds; the reading is the per-block difference's mean."""
    import statistics

    from bgbot.play.pit import PitConfig, run_pit
    from bgbot.play.table import Rules

    parent, cand = _two_nets(tmp_path)
    record = tmp_path / "generations.jsonl"
    row = gate(cand, parent, "g1", games=2, record=record, progress=False, positions=4, cube_plies=(1,),
               reference="pubeval", reference_games=4, reference_blocks=3, reference_seed=7)
    ref = row["reference"]
    assert ref["against"] == "pubeval" and ref["seeds"] == [7, 8, 9] and ref["games"] == 4
    # each block is the pit the gate says it is: the parent's second block, played again
    again = run_pit(f"bgbot:ply=1,checkpoint={parent}", "pubeval", PitConfig(games=4, rules=Rules(cube=False), seed=8))
    assert ref["parent"][1] == again.ppg
    diff = [a - b for a, b in zip(ref["candidate"], ref["parent"], strict=True)]
    assert ref["diff"] == pytest.approx(statistics.fmean(diff))
    assert ref["se"] == pytest.approx(statistics.stdev(diff) / 3**0.5)
    assert list(row["rules"]) == ["duel", "reference", "checker", "cube"]
    assert row["rules"]["reference"] == (ref["diff"] > DUEL_SE * ref["se"])
    # played again as the parent of another candidate: the parent's blocks come from the record
    later = gate(parent, parent, "p-self", games=2, record=record, progress=False, positions=4, cube_plies=(1,),
                 reference="pubeval", reference_games=4, reference_blocks=3, reference_seed=7)
    assert later["reused"] == ["measures", "reference candidate", "reference parent"]
    assert later["reference"]["candidate"] == ref["parent"] and later["reference"]["diff"] == 0
    assert not later["rules"]["reference"]


def test_with_a_reference_the_reading_decides_and_the_duel_must_not_be_lost() -> None:
    from training.gate import verdict_rules

    def row(duel: float, diff: float) -> dict[str, object]:
        measures = {"checker": {"1": {"all": 4.0}, "2": {"all": 4.0}}, "cube": {"1": {"agree": 85.0}}}
        return {"duel": {"ppg": duel, "se": 0.002}, "reference": {"diff": diff, "se": 0.004},
                "checker": {"1": {"all": 3.9}, "2": {"all": 4.0}}, "cube": {"1": {"agree": 85.0}},
                "parent_measures": measures}

    assert all(verdict_rules(row(0.001, 0.009)).values())  # the duel level, the reading 2.25 SE
    assert verdict_rules(row(0.01, 0.007))["reference"] is False  # a won duel does not stand in for it
    assert verdict_rules(row(-0.003, 0.02))["duel"] is True
    assert verdict_rules(row(-0.005, 0.02))["duel"] is False  # lost by 2.5 standard errors


def test_bad_reference_settings_are_named(tmp_path: Path) -> None:
    from training.gate import check_reference

    for args, msg in ((("", 2000, 4, 1), "needs a reference engine"),
                      (("pubeval", 2000, 1, 1), "0 .* or >= 2"),
                      (("pubeval", 3, 2, 1), "must be even"),
                      (("pubeval", 2000, -1, 1), "blocks must be an integer >= 0, got -1"),
                      (("nosuchbot:ply=1", 2000, 2, 1), "nosuchbot")):
        with pytest.raises(ConfigError, match=msg):
            check_reference(*args)  # type: ignore[arg-type]
    check_reference("", 2000, 0, 1)  # no reading


def test_a_reference_engine_that_cannot_start_is_refused_before_any_measuring(tmp_path: Path) -> None:
    from bgbot.errors import BgbotError

    torch.manual_seed(3)
    cand = save_checkpoint(tmp_path / "cand.pt", ValueNet(ModelSpec(3, (8,))))
    record = tmp_path / "generations.jsonl"
    missing = tmp_path / "no-gnubg"
    with pytest.raises(BgbotError, match="no-gnubg"):
        gate(cand, cand, "x", games=2, record=record, progress=False, positions=2, cube_plies=(1,),
             reference=f"gnubg:ply=0,path={missing}", reference_blocks=2)
    assert not record.exists()


def test_a_pit_stopped_part_way_records_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGTERM stops a pit with the games played so far: the gate must not record that as its duel or block."""
    import bgbot.play.pit as pit
    from bgbot.errors import EngineError

    real = pit.run_pit
    stop = {"why": "interrupted (Ctrl-C or SIGTERM)", "against": "bgbot"}

    def stopped_pit(a: object, b: object, cfg: object, **kw: object) -> object:
        rep = real(a, b, cfg, **kw)  # type: ignore[arg-type]
        if str(b).startswith(stop["against"]):
            rep.stopped = stop["why"]
        return rep

    monkeypatch.setattr(pit, "run_pit", stopped_pit)
    parent, cand = _two_nets(tmp_path)
    record = tmp_path / "generations.jsonl"
    kw = {"games": 2, "record": record, "progress": False, "positions": 2, "cube_plies": (1,)}
    with pytest.raises(KeyboardInterrupt):
        gate(cand, parent, "x", **kw)  # type: ignore[arg-type]
    assert not record.exists()
    stop.update(why="stopped at pair 3: a bot could not be restarted: gone", against="pubeval")
    with pytest.raises(EngineError, match=r"reference block of seed 5 stopped after .* could not be restarted"):
        gate(cand, parent, "x", reference="pubeval", reference_games=2, reference_blocks=2, reference_seed=5,
             **kw)  # type: ignore[arg-type]
    assert not record.exists()


def test_a_killed_gate_keeps_its_finished_pits_in_its_work_folder(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import bgbot.play.pit as pit

    real = pit.run_pit
    reports: list[pit.PitReport] = []
    kill = {"seed": 6}

    def spy(a: str, b: str, cfg: pit.PitConfig, **kw: object) -> pit.PitReport:
        if b == "pubeval" and cfg.seed == kill["seed"]:
            raise KeyboardInterrupt  # killed during the candidate's second reference block
        rep = real(a, b, cfg, **kw)  # type: ignore[arg-type]
        reports.append(rep)
        return rep

    monkeypatch.setattr(pit, "run_pit", spy)
    parent, cand = _two_nets(tmp_path)
    kw = {"games": 4, "record": tmp_path / "g.jsonl", "progress": False, "positions": 2, "cube_plies": (1,),
          "reference": "pubeval", "reference_games": 4, "reference_blocks": 2, "reference_seed": 5,
          "work": tmp_path / "work"}
    with pytest.raises(KeyboardInterrupt):
        gate(cand, parent, "x", **kw)  # type: ignore[arg-type]
    assert [r.resumed_games for r in reports] == [0, 0]  # both networks' blocks of seed 5 were played, before the duel
    assert not (tmp_path / "g.jsonl").exists()
    reports.clear()
    kill["seed"] = -1
    import training.gate

    monkeypatch.setattr(training.gate, "measure", lambda *a, **k: pytest.fail("measured again"))
    row = gate(cand, parent, "x", **kw)  # type: ignore[arg-type]
    # run again: the measures and the blocks of seed 5 come from the folder; the two of seed 6 and the duel are played
    assert [r.resumed_games for r in reports] == [4, 4, 0, 0, 0]
    assert "measures" in row["reused"]
    monkeypatch.undo()
    fresh = gate(cand, parent, "y", **{**kw, "record": tmp_path / "h.jsonl", "work": None})  # type: ignore[arg-type]
    assert row["duel"] == fresh["duel"]
    assert row["reference"]["candidate"] == fresh["reference"]["candidate"]
    assert row["reference"]["parent"] == fresh["reference"]["parent"]


def test_a_gate_ledger_lets_a_fresh_checkout_resume_a_killed_gate(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The ledger keeps every finished measure, duel and reference block: a gate killed mid-block and run again
    with no work folder (another checkout) measures nothing, plays only the blocks it lacks and then the duel, and
    gives the figures of a gate never killed."""
    import bgbot.play.pit as pit
    import training.gate as gate_module
    from training.gate import Known, ledger_reading, load_ledger

    real = pit.run_pit
    played: list[tuple[str, int]] = []
    kill = {"seed": 6}

    def spy(a: str, b: str, cfg: pit.PitConfig, **kw: object) -> pit.PitReport:
        if b == "pubeval" and cfg.seed == kill["seed"]:
            raise KeyboardInterrupt  # killed during the candidate's second reference block
        played.append((b, cfg.seed))
        return real(a, b, cfg, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(pit, "run_pit", spy)
    parent, cand = _two_nets(tmp_path)
    ledger = tmp_path / "ledger.jsonl"
    kw = {"games": 4, "record": tmp_path / "g.jsonl", "progress": False, "positions": 2, "cube_plies": (1,),
          "reference": "pubeval", "reference_games": 4, "reference_blocks": 2, "reference_seed": 5,
          "ledger": ledger}
    with pytest.raises(KeyboardInterrupt):
        gate(cand, parent, "x", **kw)  # type: ignore[arg-type]
    rows = load_ledger(ledger)
    # the reference blocks before the duel, seed by seed: the candidate's and the parent's first blocks, a pair
    assert [r["kind"] for r in rows] == ["measures", "measures", "reference", "reference"]
    assert [r["seed"] for r in rows[2:]] == [5, 5] and rows[2]["against"] == "pubeval" and rows[2]["games"] == 4
    assert {r["weights"] for r in rows[2:]} == {Known(cand).weights, Known(parent).weights}
    # what the stopped gate holds so far, read without playing
    so_far = ledger_reading(ledger, cand, parent, "pubeval", games=4, blocks=2, seed=5, duel_games=4, duel_seed=1)
    mine = next(r for r in rows[2:] if r["weights"] == Known(cand).weights)
    assert so_far["paired"] == [5] and so_far["se"] is None and so_far["duel"] is None
    assert so_far["diff"] == pytest.approx(mine["ppg"] - so_far["parent_ppg"])
    played.clear()
    kill["seed"] = -1
    monkeypatch.setattr(gate_module, "measure", lambda *a, **k: pytest.fail("measured again"))
    row = gate(cand, parent, "x", **kw)  # type: ignore[arg-type]
    # the candidate's second block, the parent's, then the duel
    assert played == [("pubeval", 6), ("pubeval", 6), (f"bgbot:checkpoint={parent}", 1)]
    assert row["reused"] == ["measures", "reference candidate blocks", "reference parent blocks"]
    assert [r["kind"] for r in load_ledger(ledger)] == ["measures", "measures", "reference", "reference",
                                                        "reference", "reference", "duel"]
    whole = ledger_reading(ledger, cand, parent, "pubeval", games=4, blocks=2, seed=5, duel_games=4, duel_seed=1)
    assert whole["paired"] == [5, 6] and whole["diff"] == pytest.approx(row["reference"]["diff"])
    assert whole["se"] == pytest.approx(row["reference"]["se"]) and whole["duel"]["ppg"] == row["duel"]["ppg"]
    monkeypatch.undo()
    fresh = gate(cand, parent, "y", **{**kw, "record": tmp_path / "h.jsonl", "ledger": None})  # type: ignore[arg-type]
    assert row["duel"] == fresh["duel"] and row["reference"] == fresh["reference"]
    assert row["checker"] == fresh["checker"] and row["parent_measures"] == fresh["parent_measures"]
    # a damaged ledger is refused with its file and line, before anything is measured or played
    ledger.write_text(ledger.read_text() + "{half a line\n")
    with pytest.raises(ConfigError, match=r"gate ledger '.*ledger\.jsonl' line 8 is not JSON"):
        gate(cand, parent, "z", **kw)  # type: ignore[arg-type]
    ledger.write_text(json.dumps({"kind": "elsewhere"}) + "\n")
    with pytest.raises(ConfigError, match="line 1 is not a ledger row"):
        load_ledger(ledger)
    ledger.write_text(json.dumps({"kind": "reference", "weights": "ab", "games": 4, "seed": 5}) + "\n")
    with pytest.raises(ConfigError, match="line 1: a reference row lacks against, ppg"):
        load_ledger(ledger)
    ledger.write_text(json.dumps({"kind": "reference", "weights": "ab", "against": "pubeval", "games": 4, "seed": 5,
                                  "ppg": "high"}) + "\n")
    with pytest.raises(ConfigError, match="line 1: a reference row whose ppg is not a number"):
        load_ledger(ledger)


def test_a_damaged_record_is_a_clear_error(tmp_path: Path) -> None:
    record = tmp_path / "generations.jsonl"
    record.write_text(json.dumps({"name": "ok"}) + "\n{half a line\n")
    with pytest.raises(ConfigError, match="line 2 is not JSON"):
        load_record(record)
    with pytest.raises(ConfigError, match="even number"):
        gate(tmp_path / "a.pt", tmp_path / "b.pt", "x", games=3, record=record, progress=False)
    with pytest.raises(ConfigError, match="cube plies"):
        gate(tmp_path / "a.pt", tmp_path / "b.pt", "x", games=2, record=record, progress=False, cube_plies=(4,))


def test_an_unreadable_checkpoint_is_refused_before_any_measuring(tmp_path: Path) -> None:
    from bgbot.errors import CheckpointError

    torch.manual_seed(3)
    cand = save_checkpoint(tmp_path / "cand.pt", ValueNet(ModelSpec(3, (8,))))
    record = tmp_path / "generations.jsonl"
    with pytest.raises(CheckpointError, match=r"cannot read checkpoint '.*missing\.pt'"):
        gate(cand, tmp_path / "missing.pt", "x", games=2, record=record, progress=False, positions=2)
    assert not record.exists()


def test_the_training_commands_end_bad_input_with_one_line(tmp_path: Path) -> None:
    """python -m training.refine|gate: a BgbotError is one line quoting the input, status 2, no traceback."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    missing = str(tmp_path / "missing.pt")
    for cmd in (["training.refine", "average", "--models", missing, missing, "--out", str(tmp_path / "o")],
                ["training.gate", missing, "--parent", missing, "--name", "n", "--games", "2"]):
        done = subprocess.run([sys.executable, "-m", *cmd], cwd=root, capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(f"{cmd[0]}: error: ") and missing in done.stderr
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_checker_losses_add_up_to_the_gates_error_and_pair_up(tmp_path: Path) -> None:
    """Per-position losses (points) average to checker_error's millipoints; the paired benchmark
    script finds no difference between a model and itself and the difference of the means between two
    (checker error and cube agreement)."""
    import subprocess
    import sys

    from bgbot.engine.api import Engine
    from training.gate import CHECKER, CUBE, checker_error, checker_losses, cube_agreement

    root = Path(__file__).resolve().parents[1]
    # new: the shipped model; old: its parent (both kept in checkpoints/)
    new, old = str(root / "checkpoints" / "bgbot-default.pt"), str(root / "checkpoints" / "bgbot-gen15.pt")
    rows = [json.loads(line) for line in CHECKER.read_text().splitlines() if line.strip()][:30]
    new_engine, old_engine = Engine.load(new), Engine.load(old)
    mean = {}
    for name, engine in (("new", new_engine), ("old", old_engine)):
        losses = checker_losses(engine, rows, 1)
        assert len(losses) == 30 and all(x >= 0 for *_, x in losses)
        assert [c for c, *_ in losses] == [r["class"] for r in rows]
        mean[name] = 1000 * sum(x for *_, x in losses) / 30
        assert checker_error(engine, rows, 1)["all"] == pytest.approx(mean[name])
    script = root / "benchmarks" / "benchmark_pairs.py"
    out = tmp_path / "pairs.json"
    proc = subprocess.run([sys.executable, str(script), new, old, "--against", new, "--plies", "1", "--cube-plies", "1",
                           "--limit", "30", "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    same, other = (json.loads(out.read_text())["candidates"][c] for c in (new, old))
    assert same["checker"]["1"]["diff"] == 0 and same["checker"]["1"]["se"] == 0
    assert same["checker"]["1"]["differ"] == 0 and same["cube"]["1"]["differ"] == 0
    assert other["checker"]["1"]["diff"] == pytest.approx(mean["old"] - mean["new"])
    assert other["checker"]["1"]["first"] == pytest.approx(mean["old"])
    assert other["checker"]["1"]["second"] == pytest.approx(mean["new"])
    cube_rows = [json.loads(line) for line in CUBE.read_text().splitlines() if line.strip()][:30]
    engines = (("new", new_engine), ("old", old_engine))
    agree = {name: cube_agreement(engine, cube_rows, 1)["agree"] for name, engine in engines}
    assert other["cube"]["1"]["first"] == pytest.approx(agree["old"])
    assert other["cube"]["1"]["diff"] == pytest.approx(agree["old"] - agree["new"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"position": "4HPwATDgc/ABMA", "dice": [3, 1]}\n{"position": "nope"}\n')
    proc = subprocess.run([sys.executable, str(script), new, "--against", new, "--data", str(bad), "--cube-plies", ""],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "bad.jsonl' is not a checker benchmark" in proc.stderr
    assert "line 1 lacks one of position, dice, moves" in proc.stderr
    bad.write_text('{"position": "nope", "dice": [3, 1], "moves": []}\n' * 2)  # well formed, not a position
    proc = subprocess.run([sys.executable, str(script), new, "--against", new, "--data", str(bad), "--cube-plies", ""],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "is not a benchmark file" in proc.stderr and "nope" in proc.stderr


def test_other_benchmark_files_are_checked_and_never_mixed_with_the_default_ones(tmp_path: Path) -> None:
    from training.gate import _DEFAULT_DATA, CHECKER, Known, _recorded

    torch.manual_seed(3)
    cand = save_checkpoint(tmp_path / "cand.pt", ValueNet(ModelSpec(3, (8,))))
    record = tmp_path / "generations.jsonl"
    bad = tmp_path / "checker.jsonl"
    bad.write_text('{"position": "4HPwATDgc/ABMA", "dice": [3, 1]}\n')
    with pytest.raises(ConfigError, match=r"checker\.jsonl' is not a checker benchmark .*line 1 lacks"):
        gate(cand, cand, "x", games=2, record=record, progress=False, checker_data=bad)
    with pytest.raises(ConfigError, match=r"cannot read the cube benchmark '.*nothing\.jsonl'"):
        gate(cand, cand, "x", games=2, record=record, progress=False, cube_data=tmp_path / "nothing.jsonl")
    assert not record.exists()
    # a parent measured on the default files is not reused for a gate on other files, and the other way round
    row = gate(cand, cand, "x", games=2, record=record, progress=False, positions=3, cube_plies=(1,))
    assert row["benchmarks"] == _DEFAULT_DATA
    assert _recorded(load_record(record), Known(cand), 3, 3, (1,)) is not None
    other = {"checker": "elsewhere/checker.jsonl", "cube": _DEFAULT_DATA["cube"]}
    assert _recorded(load_record(record), Known(cand), 3, 3, (1,), other) is None
    copy = tmp_path / "copy.jsonl"
    copy.write_text(CHECKER.read_text())
    row2 = gate(cand, cand, "y", games=2, record=record, progress=False, positions=3, cube_plies=(1,),
                checker_data=copy)
    assert row2["benchmarks"]["checker"] == str(copy.resolve())
    assert row2["checker"] == row["checker"]  # the same positions, measured again


def test_a_generation_on_the_held_out_files_is_drawn_from_its_parents_point(tmp_path: Path) -> None:
    """The curve joins a row measured on other files to its parent's figures on those files, at the parent's x."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from training.gate import _DEFAULT_DATA, _plot_held_out

    measures = {"checker": {"1": {"all": 3.8}, "2": {"all": 2.4}}, "cube": {"2": {"agree": 85.1}}}
    parent = {"name": "p", "sha256": "a" * 64, "checker": {"1": {"all": 3.5}, "2": {"all": 2.3}}}
    held_out = {"name": "c", "sha256": "b" * 64, "parent_sha256": "a" * 64, "benchmarks": {"checker": "x", "cube": "y"},
                "checker": {"1": {"all": 3.4}, "2": {"all": 2.1}}, "cube": {"2": {"agree": 84.6}},
                "parent_measures": measures}
    orphan = {**held_out, "sha256": "c" * 64, "parent_sha256": "d" * 64}
    rows = [parent, {"name": "q", "sha256": "e" * 64}, held_out, orphan]
    default = [r.get("benchmarks", _DEFAULT_DATA) == _DEFAULT_DATA for r in rows]
    fig, (ax1, ax2) = plt.subplots(2)
    drawn = _plot_held_out(ax1, ax2, rows, default)
    plt.close(fig)
    assert ("checker", "1", [0, 2], [3.8, 3.4]) in drawn and ("checker", "2", [0, 2], [2.4, 2.1]) in drawn
    assert ("cube", "2", [0, 2], [85.1, 84.6]) in drawn
    assert ("checker", "1", [3], [3.4]) in drawn  # a parent the record does not hold: the point alone
    assert len(drawn) == 6


def test_the_reference_reading_is_drawn_with_its_standard_error_beside_the_parents_score() -> None:
    """The curve's reference panel: each candidate's mean over its blocks with one standard error, and its parent's
    score on the same dice at the parent's point, found by the parent's file or, failing that, its weights."""
    import statistics

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from training.gate import _plot_reference

    parent = {"name": "p", "sha256": "a" * 64, "weights": "w" * 64}
    by_file = {"name": "c", "sha256": "b" * 64, "parent_sha256": "a" * 64, "verdict": "pass",
               "reference": {"candidate": [0.01, 0.03, -0.01], "parent": [0.0, 0.01, 0.0], "parent_ppg": 0.0033}}
    by_weights = {"name": "d", "sha256": "c" * 64, "parent_sha256": "x" * 64, "parent_weights": "w" * 64,
                  "verdict": "fail", "reference": {"candidate": [0.02, 0.02], "parent_ppg": 0.01}}
    rows = [parent, by_file, {"name": "no reading", "sha256": "d" * 64}, by_weights]
    fig, ax = plt.subplots()
    drawn = _plot_reference(ax, rows, [r.get("verdict") == "fail" for r in rows])
    lines = [(list(line.get_xdata()), list(line.get_ydata())) for line in ax.get_lines()]
    plt.close(fig)
    blocks = [0.01, 0.03, -0.01]
    assert drawn == [(1, pytest.approx(0.01), pytest.approx(statistics.stdev(blocks) / 3 ** 0.5)),
                     (3, pytest.approx(0.02), 0.0)]
    assert ([0, 1], [0.0033, pytest.approx(0.01)]) in lines  # the parent joined by its file's hash
    assert ([0, 3], [0.01, pytest.approx(0.02)]) in lines  # and by its weights' hash


def test_so_far_names_what_it_lacks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--so-far`` reads a ledger's reference blocks: without a ledger or blocks it says which option is missing;
    with them it prints the paired reading (here: nothing paired yet, no duel)."""
    from training.gate import main

    parent, cand = _two_nets(tmp_path)
    base = [str(cand), "--parent", str(parent), "--name", "x", "--so-far"]
    with pytest.raises(ConfigError, match="--ledger FILE"):
        main(base)
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text("")
    with pytest.raises(ConfigError, match="--reference-blocks 0"):
        main([*base, "--ledger", str(ledger)])
    main([*base, "--ledger", str(ledger), "--reference", "pubeval", "--reference-blocks", "3"])
    out = capsys.readouterr().out
    assert "none of 3 blocks paired yet" in out and "duel: not finished" in out
