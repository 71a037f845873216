"""``bgbot train CONFIG``: the training pipeline's stages, their skipping and resuming, and its configs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")  # training is the train extra; CI installs it (README's test command)

from bgbot.cli.main import main as cli_main
from bgbot.errors import ConfigError
from bgbot.eval.nets import load_checkpoint
from bgbot.labels.generate import LabelSettings, generate
from training.pipeline import is_pipeline, load_pipeline, run_pipeline

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def small_bank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    bank = tmp_path_factory.mktemp("bank")
    quick = LabelSettings(trials=36, truncate=2, crashed_truncate=2, batch=8, pool=48, parallel=16)
    generate(bank, 5.0, settings=quick, seed=1,
             max_shards=1, progress=False)
    return bank


def _config(tmp: Path, bank: Path, epochs: int = 1) -> Path:
    cfg = tmp / "pipeline.toml"
    cfg.write_text(f"""
[pipeline]
out = "{tmp / 'run'}"
init = ""
[selfplay]
games = 200
parallel_games = 32
hidden = [8]
min_batch = 128
checkpoint_every = 100
eval_every = 0
[fit]
nets = ["main"]
epochs = {epochs}
lr = 0.001
min_rows = 10
bank = "{bank}"
[gate]
games = 4
positions = 2
""")
    return cfg


def test_the_stages_run_once_and_a_changed_stage_reruns_what_follows(small_bank: Path, tmp_path: Path) -> None:
    cfg = _config(tmp_path, small_bank)
    first = run_pipeline(cfg, progress=False)
    assert set(first) == {"selfplay", "fit", "gate"}
    assert Path(first["fit"]["checkpoint"]).is_file()
    assert first["fit"]["bank_positions"] == 48 and first["fit"]["nets"]["main"]["fitted"]
    main = first["fit"]["nets"]["main"]
    assert main["positions_holdout"] < main["positions_train"] / 4  # the fit learns from most of the bank
    assert first["gate"]["verdict"] in ("pass", "fail")
    stamps = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "run" / "stages").iterdir()}
    again = run_pipeline(cfg, progress=False)
    assert again == first  # every stage skipped: the same records, nothing rewritten
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "run" / "stages").iterdir()} == stamps
    changed = run_pipeline(_config(tmp_path, small_bank, epochs=2), progress=False)
    stages = tmp_path / "run" / "stages"
    assert (stages / "selfplay.json").stat().st_mtime_ns == stamps["selfplay.json"]  # not rerun
    assert (stages / "fit.json").stat().st_mtime_ns != stamps["fit.json"]
    assert (stages / "gate.json").stat().st_mtime_ns != stamps["gate.json"]  # the gate follows the fit
    assert changed["selfplay"] == first["selfplay"]


def test_a_network_no_epoch_improves_stays_as_it_was_and_the_pipeline_goes_on(
        small_bank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import training.refine
    from training.refine import NoImprovement

    def no_better(init: Path, *a: object, net_name: str = "main", **k: object) -> dict[str, object]:
        raise NoImprovement(f"no epoch improved the held-out loss of {str(init)!r}'s {net_name} network")

    monkeypatch.setattr(training.refine, "fit", no_better)
    rec = run_pipeline(_config(tmp_path, small_bank), progress=False)
    main = rec["fit"]["nets"]["main"]
    assert not main["fitted"] and "no epoch improved" in main["why"]
    start, candidate = load_checkpoint(rec["selfplay"]["checkpoint"]), load_checkpoint(rec["fit"]["checkpoint"])
    for a, b in zip(start.net.state_dict().values(), candidate.net.state_dict().values(), strict=True):
        assert (a == b).all()  # the candidate is the start network
    assert rec["gate"]["verdict"] in ("pass", "fail")  # and the gate still ran


def test_fit_keep_reaches_each_networks_fit_and_names_the_epoch_written(small_bank: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """[fit] keep, or a network's [fit.NET] keep over it, is the keep its fit is called with; the stage record
    names the epoch written."""
    import training.refine

    real, seen = training.refine.fit, []

    def spy(*a: object, **k: object) -> dict[str, object]:
        seen.append(k["keep"])
        return real(*a, **k)

    monkeypatch.setattr(training.refine, "fit", spy)
    cfg = _config(tmp_path, small_bank, epochs=2)
    cfg.write_text(cfg.read_text().replace("min_rows = 10\n", 'min_rows = 10\nkeep = "best"\n')
                   .replace("[gate]\n", '[fit.main]\nkeep = "last"\n[gate]\n'))
    rec = run_pipeline(cfg, progress=False)
    main = rec["fit"]["nets"]["main"]
    assert seen == ["last"] and main["fitted"] and main["kept_epoch"] == 2


def test_the_gate_stage_reads_the_benchmark_files_it_names_and_keeps_its_ledger(small_bank: Path,
                                                                                 tmp_path: Path) -> None:
    from training.gate import load_ledger

    cfg = _config(tmp_path, small_bank)
    held_out = "tests/data/benchmark/checker-3000.jsonl", "tests/data/benchmark/cube-1000.jsonl"
    ledger = tmp_path / "ledger.jsonl"
    cfg.write_text(cfg.read_text().replace("positions = 2\n", f"positions = 2\nchecker_data = \"{held_out[0]}\"\n"
                                                               f"cube_data = \"{held_out[1]}\"\n"
                                                               f"ledger = \"{ledger}\"\n"))
    first = run_pipeline(cfg, progress=False)
    row = json.loads((tmp_path / "run" / "generations.jsonl").read_text().splitlines()[-1])
    assert row["benchmarks"] == {"checker": held_out[0], "cube": held_out[1]}
    kept = load_ledger(ledger)
    assert [r["kind"] for r in kept] == ["measures", "measures", "duel"]
    assert kept[2]["ppg"] == row["duel"]["ppg"] and kept[2]["weights"] == row["weights"]
    # another checkout: the run folder is gone, the ledger is not; the gate measures and plays nothing again
    import shutil

    shutil.rmtree(tmp_path / "run" / "gate-pits")
    (tmp_path / "run" / "generations.jsonl").unlink()
    (tmp_path / "run" / "stages" / "gate.json").unlink()
    again = run_pipeline(cfg, progress=False)
    assert again["gate"]["duel"] == first["gate"]["duel"] and load_ledger(ledger) == kept
    row = json.loads((tmp_path / "run" / "generations.jsonl").read_text().splitlines()[-1])
    assert row["reused"] == ["measures", "duel"]
    ledger.write_text("not json\n")
    with pytest.raises(ConfigError, match=r"\[gate\] gate ledger '.*ledger.jsonl' line 1 is not JSON"):
        load_pipeline(cfg)


def test_a_new_shard_reruns_the_fit(small_bank: Path, tmp_path: Path) -> None:
    import shutil

    bank = tmp_path / "bank"
    shutil.copytree(small_bank, bank)
    cfg = _config(tmp_path, bank)
    cfg.write_text(cfg.read_text().replace("[gate]\ngames = 4\npositions = 2\n", ""))
    first = run_pipeline(cfg, progress=False)
    quick = LabelSettings(trials=36, truncate=2, crashed_truncate=2, batch=8, pool=16, parallel=16)
    generate(bank, 5.0, settings=quick, seed=1,
             max_shards=1, progress=False)
    second = run_pipeline(cfg, progress=False)
    assert second["fit"]["bank_positions"] == first["fit"]["bank_positions"] + 16


def test_the_cli_runs_a_pipeline_and_reports_its_stages(small_bank: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _config(tmp_path, small_bank)
    assert cli_main(["train", str(cfg), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "selfplay: " in out and "fit: " in out and "gate: verdict=" in out
    assert json.loads((tmp_path / "run" / "pipeline.json").read_text())["fit"]["bank_positions"] == 48


@pytest.mark.parametrize(("text", "match"), [
    ("[pipeline]\nout='x'\n[fitt]\nepochs=1\n", "unknown tables"),
    ("[pipeline]\nout='x'\nwhere='y'\n", r"unknown \[pipeline\] keys"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nepoch=2\n", r"unknown \[fit\] keys"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nnets=['mian']\n", "choose from main"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nschedule='linear'\n", "schedule must be constant or cosine, got 'linear'"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nrank=-1\n", "rank must be a number >= 0, got -1"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nrank=1.0\n", r"rank = 1.0 weighs the sibling loss, which needs a \[siblings\]"),
    ("[pipeline]\ninit='m.pt'\n[gate]\ncube_data='no.jsonl'\n", r"\[gate\] cube_data 'no.jsonl' is not a file"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nshards=-2\n", "shards must be a whole number, got -2"),
    ("[pipeline]\ninit='m.pt'\n[siblings]\nchunks=2\n", "labels are for the main network's fit"),
    ("[pipeline]\ninit='m.pt'\n[race_siblings]\nchunks=2\n[fit]\nnets=['main']\n",
     r"\[race_siblings\] labels are for the race network's fit, which \[fit\] nets \['main'\] does not list"),
    ("[pipeline]\ninit='m.pt'\n[race_siblings]\nchunks=0\n[fit]\n", r"\[race_siblings\] siblings chunks must be"),
    ("fit=3\n[pipeline]\ninit='m.pt'\n", r"\[fit\] must be a table, got 3"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nnets=['main']\n[fit.race]\nepochs=2\n",
     r"\[fit.race\] sets a network that \[fit\] nets \['main'\] does not fit"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nnets=['race']\n[fit.race]\nbatch=2\n", r"\[fit.race\]: unknown keys \['batch'\]"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nnets=['race']\n[fit.race]\nepochs=0\n",
     r"\[fit.race\] epochs must be a whole number >= 1, got 0"),
    ("[pipeline]\ninit='m.pt'\n[siblings]\npreset='nowhere.toml'\n[fit]\n", "preset 'nowhere.toml' is not a file"),
    ("[pipeline]\ninit='m.pt'\n[gate]\ngames=3\n", "even number"),
    ("[pipeline]\ninit='m.pt'\n[gate]\nledger=3\n", r"\[gate\] ledger must be a file name, got 3"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nnets=['main']\n[fit.main]\nfrom_main=true\n",
     r"\[fit.main\]: unknown keys \['from_main'\]"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nkeep='final'\n", r"\[fit\] keep must be best or last, got 'final'"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nnets=['main']\n[fit.main]\nkeep=1\n",
     r"\[fit.main\] keep must be best or last, got 1"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nnets=['crashed']\n[fit.crashed]\nfrom_main=1\n",
     r"\[fit.crashed\] from_main must be true or false, got 1"),
    ("[pipeline]\ninit='m.pt'\n[crashed_siblings]\nchunks=2\n[fit]\nnets=['main']\n",
     r"\[crashed_siblings\] labels are for the crashed network's fit"),
    ("[pipeline]\ninit='m.pt'\n[gate]\nreference_blocks=30\n", r"\[gate\] reference blocks = 30 needs a reference"),
    ("[pipeline]\ninit='m.pt'\n[gate]\nreference='gnubg:plies=0'\n", r"\[gate\] .*plies"),
    ("[pipeline]\ninit=''\n[selfplay]\nlr=-1.0\n", "lr"),
    ("[pipeline]\ninit=''\n[fit]\nepochs=1\n", "init must name a model"),
    ("[pipeline]\ninit='m.pt'\n[ship]\nship='yes'\n", "ship = true or false"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nnets=['main']\nto_end=['race']\n", r"to_end \['race'\] names networks"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nto_end='race'\n", "to_end must be a list of network names, got 'race'"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nensemble=6\n", "ensemble must be a list of seeds, got 6"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nensemble=[6, 6]\n", r"ensemble \[6, 6\] must list distinct"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nensemble=['a']\n", "must list distinct whole-number seeds"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nnets=['crashed']\nensemble=[6]\n", "does not fit it"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nensemble=[6]\nensemble_width=0\n", "ensemble_width must be a whole"),
    ("[pipeline]\ninit='m.pt'\n[fit]\nensemble=[6]\nensemble_lr=2\n", "ensemble_lr must be a number"),
])
def test_bad_pipeline_configs_are_named(tmp_path: Path, text: str, match: str) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text(text)
    assert is_pipeline(cfg)
    with pytest.raises(ConfigError, match=match):
        load_pipeline(cfg)


def test_a_bad_pipeline_is_one_line_from_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[pipeline]\ninit='m.pt'\n[fit]\nepoch=2\n")
    assert cli_main(["train", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "epoch" in err and err.count("\n") == 1


def test_the_shipped_configs_load() -> None:
    configs = sorted((REPO / "configs" / "train").glob("*.toml"))
    assert configs
    for cfg in configs:
        assert is_pipeline(cfg)
        load_pipeline(cfg)
    assert not is_pipeline(REPO / "configs" / "smoke.toml")  # a flat self-play preset runs as before


def test_a_bank_is_cut_into_enough_chunks_for_a_fair_holdout(tmp_path: Path) -> None:
    import numpy as np

    from bgbot.engine.search import BearoffEvaluator
    from bgbot.eval.evaluate import NetEvaluator
    from bgbot.eval.models import load_model
    from bgbot.labels.bank import write_shard
    from bgbot.labels.generate import sample_pool
    from bgbot.rules.position import classify_boards
    from training.pipeline import MIN_CHUNKS, bank_chunks

    rng = np.random.default_rng(3)
    ev = BearoffEvaluator(NetEvaluator(load_model().net))
    boards, ids, src = sample_pool(ev, LabelSettings(pool=6400, parallel=256, mine_share=0.0), rng)
    probs = np.tile(np.array([[0.5, 0.1, 0.01, 0.1, 0.01]], np.float32), (len(ids), 1))
    arrays = {"position_id": ids, "board": boards, "probs": probs, "se": np.full(len(ids), 0.01, np.float32),
              "trials": np.full(len(ids), 36, np.int32), "cls": classify_boards(boards), "source": src}
    write_shard(tmp_path / "bank", arrays, {"file": "shard-00000009-00000.npz", "kind": "rollout", "settings": {},
                                            "model_sha256": "0" * 64, "seed": 9, "shard": 0, "command": "test",
                                            "created": "2026-01-01T00:00:00Z"})
    assert bank_chunks(tmp_path / "bank", tmp_path / "data", 1) == 6400
    chunks = sorted((tmp_path / "data" / "data").glob("chunk-*.npz"))
    assert len(chunks) == MIN_CHUNKS


def test_a_network_may_learn_from_labels_rolled_out_to_the_end_only(tmp_path: Path) -> None:
    """``[fit] to_end``: the rows of a shard whose settings truncate a class's rollouts are left out of that fit;
    a position labelled both ways counts as truncated."""
    from bgbot import Position
    from bgbot.labels.bank import load_bank, write_shard
    from bgbot.rules.position import PositionClass, classify_boards
    from training.pipeline import bank_chunks
    from training.refine import load_chunks

    def pid(mine: dict[int, int], theirs: dict[int, int]) -> str:
        board = [0] * 26
        for p, n in mine.items():
            board[p] = n
        for p, n in theirs.items():
            board[p] = -n
        return Position(board).gnubg_id()

    race = pid({6: 5, 5: 5, 8: 5}, {20: 5, 19: 5, 24: 5})
    other_race = pid({6: 5, 5: 5, 9: 5}, {20: 5, 19: 5, 17: 5})
    contact = Position.start().gnubg_id()
    crashed = pid({1: 5, 2: 5, 20: 2}, {19: 5, 18: 5, 17: 5})  # 6 left besides the stacks on its 1 and 2

    def shard(k: int, ids: list[str], settings: dict[str, object]) -> None:
        boards = np.array([Position.from_id(i).board for i in ids], dtype=np.int8)
        n = len(ids)
        arrays = {"position_id": np.array(ids, dtype="<U14"), "board": boards,
                  "probs": np.tile(np.array([[0.5, 0.1, 0.0, 0.1, 0.0]], np.float32), (n, 1)),
                  "se": np.full(n, 0.05, np.float32), "trials": np.full(n, 36, np.int32),
                  "cls": classify_boards(boards), "source": np.zeros(n, np.int8)}
        write_shard(tmp_path / "bank", arrays, {"file": f"shard-00000009-{k:05d}.npz", "kind": "rollout",
                                                "settings": settings, "model_sha256": "0" * 64, "seed": 9, "shard": k,
                                                "command": "test", "created": "2026-01-01T00:00:00Z"})

    shard(0, [race, contact, crashed], {"truncate": 7, "crashed_truncate": 0})  # races truncated as the rest
    shard(1, [race, other_race, contact], {"truncate": 7, "crashed_truncate": 0, "race_truncate": 0})
    labels = load_bank(tmp_path / "bank")
    got = {str(i): (PositionClass(int(c)).name, int(t), int(n))
           for i, c, t, n in zip(labels.position_id, labels.cls, labels.truncate, labels.labels, strict=True)}
    assert got == {race: ("RACE", 7, 2), contact: ("CONTACT", 7, 2), crashed: ("CRASHED", 0, 1),
                   other_race: ("RACE", 0, 1)}
    assert bank_chunks(tmp_path / "bank", tmp_path / "all", 1) == 4
    assert bank_chunks(tmp_path / "bank", tmp_path / "end", 1, to_end=True) == 2
    boards, _, _ = load_chunks(tmp_path / "end")
    assert sorted(Position(b.tolist()).gnubg_id() for b in boards) == sorted([crashed, other_race])


def test_sibling_labels_of_the_network_join_the_main_fit_with_the_rank_loss(small_bank: Path,
                                                                             tmp_path: Path) -> None:
    preset = tmp_path / "siblings.toml"
    preset.write_text("[generate]\nseed = 9\nchunk_size = 64\nparallel = 16\nkeep = 0.5\ncandidates = 4\n"
                      "classes = \"contact\"\n")
    cfg = _config(tmp_path, small_bank)
    text = cfg.read_text().replace("[fit]\n", f"[siblings]\npreset = \"{preset}\"\nseed = 3\nchunks = 2\n"
                                              "[fit]\nrank = 1.0\nschedule = \"cosine\"\n")
    cfg.write_text(text.replace("[gate]\ngames = 4\npositions = 2\n", ""))
    rec = run_pipeline(cfg, progress=False)
    assert rec["siblings"]["chunks"] == 2
    from training.refine import load_chunks, load_groups

    sib = Path(rec["siblings"]["data"])
    boards, _, _ = load_chunks(sib)
    assert len(boards) == 128 and np.bincount(load_groups(sib)).max() > 1  # plays of one roll, grouped
    main = rec["fit"]["nets"]["main"]
    assert main["positions_train"] + main["positions_holdout"] > rec["fit"]["bank_positions"] + 100
    refined = load_checkpoint(rec["fit"]["checkpoint"]).data["config"]["refined"]
    assert refined["rank"] == 1.0 and refined["schedule"] == "cosine" and refined["data"][1] == str(sib)
    again = run_pipeline(cfg, progress=False)
    assert again["siblings"] == rec["siblings"] and again["fit"] == rec["fit"]  # both skipped


def _class_siblings_config(tmp_path: Path, bank: Path, init: Path, net: str, generate: str, nets: list[str],
                           lr: float, own: str) -> Path:
    """A pipeline of one class network's siblings stage (``[NET_siblings]``, the preset's ``[generate]`` keys
    ``generate``, one chunk) and a one-epoch fit of ``nets`` from ``init`` with ``own`` as its ``[fit.NET]``."""
    preset = tmp_path / f"{net}.toml"
    preset.write_text("[generate]\nseed = 9\nchunk_size = 64\nparallel = 16\n" + generate)
    cfg = tmp_path / "pipeline.toml"
    cfg.write_text(f"""
[pipeline]
out = "{tmp_path / 'run'}"
init = "{init}"
[{net}_siblings]
preset = "{preset}"
seed = 4
chunks = 1
[fit]
nets = {nets!r}
epochs = 1
lr = {lr}
min_rows = 1
rank = 1.0
bank = "{bank}"
[fit.{net}]
{own}""".replace("'", '"'))
    return cfg


def test_race_sibling_labels_join_the_race_fit_and_only_it(small_bank: Path, tmp_path: Path) -> None:
    """[race_siblings] labels the plays of race rolls; the race network's fit reads them, the main network's not."""
    from bgbot.eval.inference import ModelSpec
    from bgbot.eval.nets import ValueNet, save_checkpoint
    from bgbot.rules.position import PositionClass, classify_boards
    from training.refine import load_chunks, load_groups

    init = save_checkpoint(tmp_path / "init.pt", ValueNet(ModelSpec(3, (8,))),
                           class_nets={"race": ValueNet(ModelSpec(3, (4,)))})
    cfg = _class_siblings_config(
        tmp_path, small_bank, init, "race", "keep = 0.5\ncandidates = 4\nclasses = \"race\"\nlabel = \"rollout\"\n"
        "trials = 36\ntruncate = 2\ncommon_dice = true\n", ["main", "race"], 0.001, "rank = 3.0\nepochs = 2\n")
    rec = run_pipeline(cfg, progress=False)
    assert "siblings" not in rec and rec["race-siblings"]["chunks"] == 1
    sib = Path(rec["race-siblings"]["data"])
    boards, _, _ = load_chunks(sib)
    assert len(boards) == 64 and np.bincount(load_groups(sib)).max() > 1  # plays of one roll, grouped
    # each row is the position after a race play, from the opponent's view: a race (or a bear-off) still
    assert set(classify_boards(boards).tolist()) <= {int(PositionClass.RACE), int(PositionClass.BEAROFF)}
    race, main = rec["fit"]["nets"]["race"], rec["fit"]["nets"]["main"]
    assert race["fitted"] and race["sibling_rows"] == 64  # every play: the race network answers races and bear-offs
    assert race["positions_train"] + race["positions_holdout"] == race["rows"] + race["sibling_rows"]
    assert main["positions_train"] + main["positions_holdout"] == main["rows"]  # the bank's rows only
    refined = load_checkpoint(rec["fit"]["checkpoint"]).data["config"]["refined"]
    assert refined["net"] == "race" and refined["data"][1] == str(sib)
    assert refined["rank"] == 3.0 and refined["epochs"] == 2  # [fit.race] over [fit]
    main_fit = load_checkpoint(tmp_path / "run" / "fit-main" / "refined.pt").data["config"]["refined"]
    assert main_fit["net"] == "main" and main_fit["epochs"] == 1 and len(main_fit["data"]) == 1
    again = run_pipeline(cfg, progress=False)
    assert again["race-siblings"] == rec["race-siblings"] and again["fit"] == rec["fit"]  # both skipped


def test_crashed_siblings_feed_a_crashed_network_started_from_the_main_one(small_bank: Path,
                                                                         tmp_path: Path) -> None:
    """[crashed_siblings] labels the plays of crashed rolls for the crashed network's fit, and [fit.crashed]
    from_main = true starts that network from a copy of the main network, not from its own weights."""
    import torch

    from bgbot.eval.inference import ModelSpec
    from bgbot.eval.nets import ValueNet, save_checkpoint
    from training.refine import load_chunks, load_groups

    torch.manual_seed(11)
    init = save_checkpoint(tmp_path / "init.pt", ValueNet(ModelSpec(3, (8,))),
                           class_nets={"crashed": ValueNet(ModelSpec(3, (4,)))})
    cfg = _class_siblings_config(tmp_path, small_bank, init, "crashed", "keep = 1.0\ncandidates = 4\n"
                                 "classes = \"crashed\"\n", ["crashed"], 0.01, "from_main = true\nrank = 3.0\n")
    rec = run_pipeline(cfg, progress=False)
    sib = Path(rec["crashed-siblings"]["data"])
    assert len(load_chunks(sib)[0]) == 64 and np.bincount(load_groups(sib)).max() > 1  # plays of one roll
    crashed = rec["fit"]["nets"]["crashed"]
    assert crashed["fitted"] and crashed["sibling_rows"] > 0
    assert crashed["positions_train"] + crashed["positions_holdout"] == crashed["rows"] + crashed["sibling_rows"]
    out = load_checkpoint(rec["fit"]["checkpoint"])
    start = load_checkpoint(init)
    assert out.class_nets["crashed"].spec.hidden == (8,)  # the main network's shape, not the crashed one's 4
    assert out.data["config"]["refined"]["from_main"] is True and out.data["config"]["refined"]["rank"] == 3.0
    for a, b in zip(start.net.state_dict().values(), out.net.state_dict().values(), strict=True):
        assert torch.equal(a, b)  # the main network is not fitted, only copied
    assert run_pipeline(cfg, progress=False)["fit"] == rec["fit"]  # skipped when done


def test_fresh_networks_join_the_refit_as_one_wide_network(small_bank: Path, tmp_path: Path) -> None:
    import torch

    cfg = _config(tmp_path, small_bank)
    cfg.write_text(cfg.read_text().replace("[fit]\n", "[fit]\nensemble = [6, 7]\nensemble_width = 4\n"
                                                      "ensemble_epochs = 1\n").replace(
        "[gate]\ngames = 4\npositions = 2\n", ""))
    rec = run_pipeline(cfg, progress=False)
    run = tmp_path / "run"
    assert rec["fit"]["checkpoint"] == str(run / "ensemble" / "refined.pt")
    assert set(rec["fit"]["ensemble"]) == {"6", "7"}
    refit = load_checkpoint(run / "fit-main" / "refined.pt").net
    members = [refit] + [load_checkpoint(run / f"fresh-{s}" / "refined.pt").net for s in (6, 7)]
    assert [m.spec.hidden for m in members] == [(8,), (4,), (4,)]
    assert not torch.equal(members[1].body[0].weight, members[2].body[0].weight)  # seeded apart
    wide = load_checkpoint(rec["fit"]["checkpoint"]).net
    assert wide.spec.hidden == (16,)
    x = torch.rand(5, wide.body[0].in_features)
    with torch.no_grad():
        assert torch.allclose(wide(x), torch.stack([m(x) for m in members]).mean(0), atol=1e-5)
    stamp = (run / "fresh-6" / "fit.json").stat().st_mtime_ns
    (run / "stages" / "fit.json").unlink()  # as a fit killed after its members: they are kept
    assert run_pipeline(cfg, progress=False)["fit"]["ensemble"] == rec["fit"]["ensemble"]
    assert (run / "fresh-6" / "fit.json").stat().st_mtime_ns == stamp
    cfg.write_text(cfg.read_text().replace("\nepochs = 1\n", "\nepochs = 2\n"))  # the refit's settings change:
    run_pipeline(cfg, progress=False)
    assert (run / "fresh-6" / "fit.json").stat().st_mtime_ns != stamp  # so the members are fitted again


def test_a_config_naming_the_first_shards_keeps_its_labels_as_the_bank_grows(small_bank: Path,
                                                                              tmp_path: Path) -> None:
    import shutil

    bank = tmp_path / "bank"
    shutil.copytree(small_bank, bank)
    cfg = _config(tmp_path, bank)
    cfg.write_text(cfg.read_text().replace("[fit]\n", "[fit]\nshards = 1\n").replace(
        "[gate]\ngames = 4\npositions = 2\n", ""))
    first = run_pipeline(cfg, progress=False)
    quick = LabelSettings(trials=36, truncate=2, crashed_truncate=2, batch=8, pool=16, parallel=16)
    generate(bank, 5.0, settings=quick, seed=1, max_shards=1, progress=False)
    assert run_pipeline(cfg, progress=False)["fit"] == first["fit"]  # the new shard is not among the first one
    cfg.write_text(cfg.read_text().replace("shards = 1", "shards = 3"))
    with pytest.raises(ConfigError, match=r"shards = 3, but the bank .* lists 2"):
        run_pipeline(cfg, progress=False)


@pytest.mark.parametrize("config", sorted((REPO / "configs" / "train").glob("*.toml")), ids=lambda p: p.name)
def test_each_shipped_pipeline_names_what_the_repository_holds(config: Path) -> None:
    """Every config under configs/train loads, starts from a checkpoint the repository keeps, names a sibling preset
    that exists and no more shards than the committed bank lists."""
    from bgbot.labels.bank import read_manifest

    pl = load_pipeline(config)
    for path in (pl.init, pl.gate.against if pl.gate else "", pl.siblings.preset if pl.siblings else ""):
        assert not path or (REPO / path).is_file(), f"{config.name} names {path}, which is not in the repository"
    if pl.fit is not None:
        assert pl.fit.shards <= len(read_manifest(REPO / "training" / "labels")["shards"])
