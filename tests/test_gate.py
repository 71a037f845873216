"""The generation gate (training/gate.py): measures, verdict, the record and its curve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from bgbot.errors import ConfigError
from bgbot.eval.inference import ModelSpec
from bgbot.eval.nets import ValueNet, save_checkpoint
from training.gate import gate, load_record


def test_a_generation_is_measured_recorded_and_drawn(tmp_path: Path) -> None:
    torch.manual_seed(3)
    parent = save_checkpoint(tmp_path / "parent.pt", ValueNet(ModelSpec(3, (8,))))
    torch.manual_seed(4)
    cand = save_checkpoint(tmp_path / "cand.pt", ValueNet(ModelSpec(3, (8,))))
    record = tmp_path / "generations.jsonl"
    row = gate(cand, parent, "g1", games=4, record=record, progress=False, positions=12, yardstick=2)
    for ply in ("1", "2"):
        c = row["checker"][ply]
        assert c["positions"] == 12 and c["all"] >= 0 and c["contact"] >= 0
    assert row["duel"]["games"] == 4 and abs(row["duel"]["ppg"]) <= 3
    assert row["yardstick"]["games"] == 2
    se = row["duel"]["se"] if row["duel"]["se"] is not None else float("inf")
    passed = row["duel"]["ppg"] > se and row["checker"]["1"]["all"] < row["parent_checker_1ply"]
    assert row["verdict"] == ("pass" if passed else "fail")
    assert (tmp_path / "generations.png").stat().st_size > 10_000
    # the same candidate against itself cannot pass: no duel won, no lower error
    again = gate(cand, cand, "g1-self", games=2, record=record, progress=False, positions=12)
    assert again["verdict"] == "fail"
    assert [r["name"] for r in load_record(record)] == ["g1", "g1-self"]


def test_a_damaged_record_is_a_clear_error(tmp_path: Path) -> None:
    record = tmp_path / "generations.jsonl"
    record.write_text(json.dumps({"name": "ok"}) + "\n{half a line\n")
    with pytest.raises(ConfigError, match="line 2 is not JSON"):
        load_record(record)
    with pytest.raises(ConfigError, match="even number"):
        gate(tmp_path / "a.pt", tmp_path / "b.pt", "x", games=3, record=record, progress=False)
