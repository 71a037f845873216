"""The label bank: shard format, integrity checks, combining repeated positions, resume after kill -9, verify."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from bgbot import Position
from bgbot.cli.main import main as cli_main
from bgbot.errors import ConfigError, LabelBankError
from bgbot.eval.evaluate import equity
from bgbot.labels.bank import (
    MANIFEST,
    adopt_orphans,
    check_bank,
    combine,
    load_bank,
    read_manifest,
    read_shard,
    shard_name,
    write_shard,
)
from bgbot.labels.generate import LabelSettings, generate, interest

# small and quick: rollouts truncated after two plies, a handful of positions a shard
FAST = LabelSettings(trials=36, truncate=2, crashed_truncate=4, race_truncate=3, luck=True, batch=4, pool=8,
                     parallel=16)
FAST_ARGS = ["--trials", "36", "--truncate", "2", "--crashed-truncate", "4", "--race-truncate", "3", "--batch", "4",
             "--pool", "8", "--nice", "0", "--quiet"]
REPO = Path(__file__).resolve().parents[1]


def _entry(name: str) -> dict[str, object]:
    return {"file": name, "kind": "rollout", "settings": {}, "model_sha256": "0" * 64, "seed": 9, "shard": 0,
            "command": "test", "created": "2026-01-01T00:00:00Z"}


def _arrays(ids: list[str], probs: list[list[float]], se: list[float]) -> dict[str, np.ndarray]:
    boards = np.array([Position.from_id(i).board for i in ids], dtype=np.int8)
    n = len(ids)
    return {"position_id": np.array(ids, dtype="<U14"), "board": boards, "probs": np.array(probs, np.float32),
            "se": np.array(se, np.float32), "trials": np.full(n, 36, np.int32), "cls": np.full(n, 4, np.int8),
            "source": np.zeros(n, np.int8)}


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    b = tmp_path_factory.mktemp("bank")
    entries = generate(b, 5.0, settings=FAST, seed=3, max_shards=2, progress=False, command="test")
    assert [e["shard"] for e in entries] == [0, 1]
    return b


def test_shard_format_and_manifest(bank: Path) -> None:
    manifest = json.loads((bank / MANIFEST).read_text())
    assert [e["file"] for e in manifest["shards"]] == [shard_name(3, 0), shard_name(3, 1)]
    for e in manifest["shards"]:
        for key in ("file", "sha256", "count", "kind", "settings", "model_sha256", "seed", "command", "created"):
            assert key in e
        assert e["count"] == FAST.pool and e["settings"]["truncate"] == 2
        with np.load(bank / e["file"], allow_pickle=False) as z:  # no object arrays: loads without pickle
            ids, boards, probs, se = z["position_id"], z["board"], z["probs"], z["se"]
        assert ids.dtype.kind == "U" and probs.shape == (FAST.pool, 5) and probs.dtype == np.float32
        assert se.dtype == np.float32 and (se > 0).all()
        for pid, board in zip(ids, boards, strict=True):
            assert Position.from_id(str(pid)).board == tuple(int(v) for v in board)  # the ID is the board
        assert (probs[:, 1] <= probs[:, 0] + 1e-6).all() and (probs[:, 4] <= probs[:, 3] + 1e-6).all()
    both = np.concatenate([read_shard(bank / e["file"])["position_id"] for e in manifest["shards"]])
    assert len(set(both.tolist())) == len(both)  # the second shard skipped what the first labelled


def test_labels_track_the_positions(bank: Path) -> None:
    """A label is the rollout of its own row: the equities of a shard correlate with the network's values."""
    from bgbot.engine.api import Engine

    labels = load_bank(bank)
    net = equity(np.array([Engine.load().evaluate(Position.from_id(str(p))) for p in labels.position_id]))
    assert np.corrcoef(net, equity(labels.probs))[0, 1] > 0.5


def test_a_damaged_or_missing_shard_is_named(bank: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "b"
    shutil.copytree(bank, copy)
    name = shard_name(3, 1)
    data = bytearray((copy / name).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (copy / name).write_bytes(bytes(data))
    with pytest.raises(LabelBankError, match=f"{name}.*damaged"):
        load_bank(copy)
    with pytest.raises(LabelBankError, match=name):
        check_bank(copy)
    (copy / name).unlink()
    with pytest.raises(LabelBankError, match=f"{name}.* is missing"):
        load_bank(copy)


def test_the_cli_refuses_a_damaged_bank_in_one_line(bank: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   ) -> None:
    import shutil

    copy = tmp_path / "b"
    shutil.copytree(bank, copy)
    (copy / shard_name(3, 0)).write_bytes(b"not a zip file")
    assert cli_main(["label", "stats", "--bank", str(copy)]) == 2
    err = capsys.readouterr().err
    assert shard_name(3, 0) in err and err.count("\n") == 1


def test_a_pickled_shard_is_refused(tmp_path: Path) -> None:
    path = tmp_path / shard_name(1, 0)
    np.savez(path, position_id=np.array([object()], dtype=object), board=np.zeros((1, 26), np.int8))
    with pytest.raises(LabelBankError, match="not a readable"):
        read_shard(path)


def test_a_position_labelled_twice_is_combined_by_its_standard_errors(tmp_path: Path) -> None:
    start, other = "4HPwATDgc/ABMA", "4HPwARLgc/ABMA"
    a = [0.5, 0.15, 0.01, 0.12, 0.005]
    b = [0.6, 0.20, 0.02, 0.10, 0.004]
    write_shard(tmp_path, _arrays([start, other], [a, a], [0.02, 0.02]), _entry(shard_name(9, 0)))
    write_shard(tmp_path, _arrays([start], [b], [0.01]), _entry(shard_name(9, 1)))
    labels = load_bank(tmp_path)
    assert len(labels) == 2  # never counted twice
    row = int(np.flatnonzero(labels.position_id == start)[0])
    w_a, w_b = 1 / 0.02**2, 1 / 0.01**2
    want = (w_a * np.array(a) + w_b * np.array(b)) / (w_a + w_b)
    assert labels.probs[row] == pytest.approx(want, abs=1e-6)
    assert labels.se[row] == pytest.approx(1 / np.sqrt(w_a + w_b), rel=1e-5)
    assert labels.labels[row] == 2
    with pytest.raises(LabelBankError, match="written once"):
        write_shard(tmp_path, _arrays([start], [b], [0.01]), _entry(shard_name(9, 1)))


def test_combine_maps_every_row_to_its_position() -> None:
    ids = np.array(["4HPwATDgc/ABMA", "4HPwARLgc/ABMA", "4HPwATDgc/ABMA"])
    probs = np.array([[0.5, 0.1, 0.0, 0.1, 0.0], [0.4, 0.1, 0.0, 0.1, 0.0], [0.7, 0.1, 0.0, 0.1, 0.0]], np.float32)
    c = combine(ids, probs, np.array([0.02, 0.02, 0.02], np.float32))
    assert list(ids[c.first][c.inverse]) == list(ids)
    assert list(c.counts[c.inverse]) == [2, 1, 2]
    assert c.probs[c.inverse[0], 0] == pytest.approx(0.6)


def test_inconsistent_labels_are_refused(tmp_path: Path) -> None:
    with pytest.raises(LabelBankError, match="consistent"):
        write_shard(tmp_path, _arrays(["4HPwATDgc/ABMA"], [[0.5, 0.6, 0.0, 0.1, 0.0]], [0.01]),
                    _entry(shard_name(9, 0)))
    assert not list(tmp_path.glob("*.npz"))


def test_an_orphan_shard_is_adopted(bank: Path, tmp_path: Path) -> None:
    """A run killed between writing a shard and listing it: the next run lists it."""
    import shutil

    copy = tmp_path / "b"
    shutil.copytree(bank, copy)
    data = read_manifest(copy)
    data["shards"] = data["shards"][:1]
    (copy / MANIFEST).write_text(json.dumps(data))
    assert len(check_bank(copy)) == 1
    assert adopt_orphans(copy) == [shard_name(3, 1)]
    assert [e["file"] for e in check_bank(copy)] == [shard_name(3, 0), shard_name(3, 1)]
    assert len(load_bank(copy)) == len(load_bank(bank))


def test_verify_makes_the_labels_again(bank: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shard = bank / shard_name(3, 1)
    assert cli_main(["label", "verify", str(shard), "--first", "6"]) == 0
    assert "equal" in capsys.readouterr().out


def test_verify_fails_on_labels_that_were_not_made_so(bank: Path, tmp_path: Path) -> None:
    arrays = read_shard(bank / shard_name(3, 0))
    meta = json.loads(str(np.load(bank / shard_name(3, 0), allow_pickle=False)["meta"]))
    arrays["probs"] = arrays["probs"].copy()
    arrays["probs"][1, 0] = min(1.0, float(arrays["probs"][1, 0]) + 0.01)  # a label not what its seed makes
    arrays["probs"][1, 1] = min(arrays["probs"][1, 1], arrays["probs"][1, 0])
    entry = {k: v for k, v in meta.items() if k not in ("count", "sha256")}
    write_shard(tmp_path, arrays, entry)
    assert cli_main(["label", "verify", str(tmp_path / shard_name(3, 0)), "--first", "3"]) == 1
    assert cli_main(["label", "verify", str(tmp_path / shard_name(3, 0)), "--first", "1"]) == 0


def test_verify_wants_the_model_that_made_the_shard(bank: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import dataclasses

    from bgbot.eval.inference import save_npz
    from bgbot.eval.models import load_model

    net = load_model().net
    w, b = net.layers[-1]
    other = save_npz(tmp_path / "other.npz", dataclasses.replace(net, layers=(*net.layers[:-1], (w, b + 0.01))))
    assert cli_main(["label", "verify", str(bank / shard_name(3, 0)), "--checkpoint", str(other)]) == 2
    assert "was made by the model" in capsys.readouterr().err


def test_kill_9_leaves_the_bank_loadable_and_a_new_run_goes_on(tmp_path: Path) -> None:
    bank = tmp_path / "bank"
    cmd = [sys.executable, "-m", "bgbot.cli", "label", "--bank", str(bank), "--minutes", "5", "--seed", "4",
           "--shard-minutes", "0.001", *FAST_ARGS]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and len(read_manifest(bank)["shards"] if bank.exists() else []) < 2:
            time.sleep(0.2)
        assert proc.poll() is None, "the generator stopped before it was killed"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    adopt_orphans(bank)
    entries = check_bank(bank)
    assert len(entries) >= 2
    load_bank(bank)
    before = max(e["shard"] for e in entries)
    new = generate(bank, 5.0, settings=FAST, seed=4, max_shards=1, progress=False)
    assert new[0]["shard"] == before + 1
    assert len(load_bank(bank)) == sum(e["count"] for e in check_bank(bank))


def test_sigterm_writes_the_shard_in_progress(tmp_path: Path) -> None:
    import re
    import threading

    bank = tmp_path / "bank"
    cmd = [sys.executable, "-m", "bgbot.cli", "label", "--bank", str(bank), "--minutes", "5", "--seed", "5",
           "--trials", "36", "--truncate", "2", "--batch", "2", "--pool", "400", "--nice", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(iter(lambda: proc.stderr.read(1), "")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:  # until its bar shows two finished tasks (the shard is cut at 5 min)
            counts = [int(n) for n in re.findall(r"label: (\d+)label", "".join(err))]
            if counts and max(counts) >= 4:
                break
            time.sleep(0.2)
        assert proc.poll() is None, "".join(err)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
        reader.join(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == 130, "".join(err)
    entries = check_bank(bank)
    assert len(entries) == 1 and 4 <= entries[0]["count"] < 400


def test_bad_settings_and_options_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ConfigError, match="multiple of 36"):
        LabelSettings(trials=40)
    with pytest.raises(ConfigError, match="keep"):
        LabelSettings(keep=1.5)
    assert cli_main(["label", "--bank", str(tmp_path), "--trials", "50", "--minutes", "1"]) == 2
    assert "multiple of 36" in capsys.readouterr().err
    assert cli_main(["label", "verify", str(tmp_path / "nothing.npz")]) == 2
    assert "missing" in capsys.readouterr().err


def test_interest_weights_where_nets_err() -> None:
    start = np.array([Position.start().board], dtype=np.int8)
    assert interest(start)[0] == 1.0
    board = np.zeros(26, dtype=np.int8)
    board[[24, 22, 6, 8, 13]] = [2, 2, 5, 2, 4]  # the side on roll holds two points of its opponent's home
    board[[7, 9, 10, 11, 12, 18, 19]] = [-2, -2, -2, -2, -2, -3, -2]
    assert board[board > 0].sum() == 15 and -board[board < 0].sum() == 15
    assert interest(board[None, :])[0] == 4.0  # a back game
    race = np.zeros(26, dtype=np.int8)
    race[[6, 5, 8]] = [5, 5, 5]
    race[[20, 19, 24]] = [-5, -5, -5]
    assert interest(race[None, :])[0] == 0.5


@pytest.mark.slow
def test_a_local_ray_cluster_makes_the_same_labels(bank: Path, tmp_path: Path) -> None:
    """Labels are the same on any executor: a shard made on Ray equals the local one of the same seed."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        generate(tmp_path, 5.0, settings=FAST, seed=3, max_shards=1, progress=False, executor="ray", workers=2)
    finally:
        ray.shutdown()
    here, there = read_shard(bank / shard_name(3, 0)), read_shard(tmp_path / shard_name(3, 0))
    for key in ("position_id", "board", "probs", "se"):
        np.testing.assert_array_equal(here[key], there[key])


def test_the_committed_bank_is_whole_and_its_labels_reproduce() -> None:
    """The repository's own bank: every shard's sha256 holds, and the first rows of its newest shard are made
    again exactly by the model that made them (the shipped one, or a model kept under checkpoints/)."""
    from bgbot.engine.executor import net_hash
    from bgbot.eval.models import load_model
    from bgbot.labels.generate import verify

    bank = REPO / "training" / "labels"
    entries = check_bank(bank)
    assert entries, "the committed label bank is empty"
    models = {net_hash(load_model(p).net): p for p in [None, *sorted((REPO / "checkpoints").glob("*.pt"))]}
    newest = max(entries, key=lambda e: e["created"])
    assert newest["model_sha256"] in models, "no model in the repository made the newest shard"
    n, diff = verify(bank, bank / newest["file"], 3, model=models[newest["model_sha256"]])
    assert n == 3 and diff == 0.0


def test_crashed_positions_and_races_are_rolled_out_with_their_own_truncation() -> None:
    """A task's crashed rows are rolled out ``crashed_truncate`` plies, its races ``race_truncate``, the rest
    ``truncate``; each part on the dice its rows have among that part, so any prefix of a task labels the same."""
    import dataclasses

    from bgbot.engine.rollout import rollout_probs
    from bgbot.engine.search import BearoffEvaluator
    from bgbot.eval.evaluate import NetEvaluator
    from bgbot.eval.models import load_model
    from bgbot.labels.generate import _pack, _unpack, label_task, rollout_settings, sample_pool
    from bgbot.rules.position import PositionClass, classify_boards

    ev = BearoffEvaluator(NetEvaluator(load_model().net, row_by_row=True))  # as label_task evaluates
    boards, _, _ = sample_pool(ev, dataclasses.replace(FAST, pool=600), np.random.default_rng(11))
    cls = classify_boards(boards)
    parts = [(PositionClass.CONTACT, 3), (PositionClass.CRASHED, 2), (PositionClass.RACE, 2)]
    rows = np.concatenate([np.flatnonzero(cls == c)[:n] for c, n in parts])
    assert len(rows) == 7
    batch = boards[np.sort(rows)]
    cls = classify_boards(batch)
    got = _unpack(label_task(ev, {"boards": _pack(batch), "settings": dataclasses.asdict(FAST)}, 77)["probs"])
    for part, truncate in ((cls == PositionClass.CONTACT, FAST.truncate),
                           (cls == PositionClass.CRASHED, FAST.crashed_truncate),
                           (cls == PositionClass.RACE, FAST.race_truncate)):
        want = rollout_probs(ev, batch[part], rollout_settings(dataclasses.replace(FAST, truncate=truncate), 77),
                             dice_per_row=True)
        np.testing.assert_array_equal(got[part], want)


def test_a_shard_made_before_race_truncation_existed_labels_races_as_the_rest() -> None:
    from bgbot.labels.generate import settings_from_meta

    old = settings_from_meta({"trials": 36, "truncate": 7, "crashed_truncate": 0, "luck": False})
    assert (old.truncate, old.crashed_truncate, old.race_truncate) == (7, 0, 7)
    oldest = settings_from_meta({"trials": 36, "truncate": 5, "luck": True})
    assert (oldest.crashed_truncate, oldest.race_truncate, oldest.row_by_row) == (5, 5, True)
    new = LabelSettings()
    assert (new.truncate, new.crashed_truncate, new.race_truncate) == (7, 0, 0)


def test_a_shard_with_a_bad_truncation_is_named_when_the_bank_is_read(tmp_path: Path) -> None:
    from bgbot.labels.bank import label_truncation

    with pytest.raises(LabelBankError, match="shard 'x': race_truncate -1 is not a whole number"):
        label_truncation({"truncate": 7, "race_truncate": -1}, np.array([2], np.int8), "shard 'x'")
    ids = [Position.start().gnubg_id()]
    entry = {**_entry("shard-00000009-00000.npz"), "settings": {"truncate": "seven"}}
    write_shard(tmp_path, _arrays(ids, [[0.5, 0.1, 0.0, 0.1, 0.0]], [0.01]), entry)
    with pytest.raises(LabelBankError, match=r"label shard 'shard-00000009-00000\.npz': truncate 'seven'"):
        load_bank(tmp_path)


def test_a_labeller_can_keep_one_class_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--only race`` fills a shard with races only (for the race network), each labelled to the end."""
    from bgbot.rules.position import PositionClass

    args = ["label", "--bank", str(tmp_path), "--minutes", "5", "--max-shards", "1", "--trials", "36", "--batch", "4",
            "--pool", "12", "--nice", "0", "--quiet", "--only", "race", "--keep", "1", "--seed", "4"]
    assert cli_main(args) == 0
    (entry,) = check_bank(tmp_path)
    assert entry["settings"]["only"] == "race" and entry["settings"]["keep"] == 1.0
    shard = read_shard(tmp_path / entry["file"])
    assert len(shard["cls"]) == 12 and (shard["cls"] == PositionClass.RACE).all()
    capsys.readouterr()
    assert cli_main(["label", "verify", str(tmp_path / entry["file"]), "--first", "5"]) == 0
    with pytest.raises(ConfigError, match="'backgame'"):
        LabelSettings(only="backgame")
    with pytest.raises(SystemExit) as exit_:
        cli_main(["label", "--bank", str(tmp_path), "--keep", "0", "--minutes", "1"])
    assert exit_.value.code == 2 and "'0' is not a share" in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="SCHED_IDLE is Linux's")
def test_the_labeller_gives_its_core_up_to_any_other_work() -> None:
    """With --nice the labeller is in SCHED_IDLE: a core running only it counts as idle for other threads."""
    code = ("import os; from bgbot.cli.label import _idle_policy; ok = _idle_policy(); "
            "print(ok, os.sched_getscheduler(0) == os.SCHED_IDLE)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True"]


def test_stats_count_the_bank_and_its_cost_by_network_pass(bank: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = json.loads((bank / MANIFEST).read_text())
    assert cli_main(["label", "stats", "--bank", str(bank), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["shards"] == 2 and out["labels"] == 2 * FAST.pool == out["positions"]
    kind = ("luck" if FAST.luck else "no_luck") + ", " + ("row_by_row" if FAST.row_by_row else "default_pass")
    # a label's cost is finding its position and rolling it out, both timed in each shard
    assert all(e["sample_cpu_seconds"] > 0 and e["cpu_seconds"] > 0 for e in manifest["shards"])
    per_label = sorted((e["cpu_seconds"] + e["sample_cpu_seconds"]) / e["count"] for e in manifest["shards"])
    assert set(out["cpu_seconds_a_label"]) == {kind}
    assert out["cpu_seconds_a_label"][kind] == pytest.approx(sum(per_label) / 2, abs=1e-3)  # the median of two
    assert out["labels_a_wall_hour"][kind] > 0


def test_bank_given_before_the_action_is_the_one_read(bank: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `bgbot label --bank B stats` must read B, not fall back to the clone's bank
    assert cli_main(["label", "--bank", str(bank), "stats", "--json"]) == 0
    before = json.loads(capsys.readouterr().out)
    assert cli_main(["label", "stats", "--bank", str(bank), "--json"]) == 0
    after = json.loads(capsys.readouterr().out)
    assert before["bank"] == after["bank"] == str(bank) and before["labels"] == after["labels"] == 2 * FAST.pool


def test_the_default_labels_are_plain_rollouts_and_luck_takes_a_smaller_pool() -> None:
    import argparse

    from bgbot.cli.label import _settings, add_parser
    from bgbot.labels.generate import LUCK_POOL

    def settings(*argv: str) -> LabelSettings:
        parser = argparse.ArgumentParser()
        add_parser(parser.add_subparsers())
        return _settings(parser.parse_args(["label", *argv]))  # type: ignore[return-value]

    plain = settings()
    assert plain == LabelSettings() and not plain.luck and plain.pool == 32768 and plain.truncate == 7
    luck = settings("--luck")
    assert luck.luck and luck.pool == LUCK_POOL < plain.pool
    assert settings("--luck", "--pool", "100").pool == 100 and settings("--no-luck").pool == plain.pool


def test_the_manifest_keeps_the_order_shards_were_written(tmp_path: Path) -> None:
    """A shard of a lower seed written later comes after the earlier ones, so the first N shards stay put."""
    ids = [Position.start().gnubg_id()]
    for name in (shard_name(7, 0), shard_name(7, 1), shard_name(2, 0), shard_name(7, 2), shard_name(1, 5)):
        write_shard(tmp_path, _arrays(ids, [[0.5, 0.1, 0.0, 0.1, 0.0]], [0.1]), _entry(name))
    files = [e["file"] for e in read_manifest(tmp_path)["shards"]]
    assert files == [shard_name(7, 0), shard_name(7, 1), shard_name(2, 0), shard_name(7, 2), shard_name(1, 5)]
    assert [e["file"] for e in check_bank(tmp_path)[:3]] == files[:3]
