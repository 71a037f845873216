"""The rules-engine commands: `bgbot show` and `bgbot moves`."""

from __future__ import annotations

import pytest
from conftest import read_jsonl

from bgbot.cli.main import main


def test_moves_lists_the_16_plays_of_31_from_the_start(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["moves", "4HPwATDgc/ABMA", "31"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 16
    texts = {line.split(".", 1)[1].split("->")[0].strip() for line in lines}
    assert {"8/5 6/5", "24/23 24/21", "6/2", "13/9"} <= texts


def test_moves_results_are_the_oracle_results(capsys: pytest.CaptureFixture[str]) -> None:
    for rec in read_jsonl("movegen/oracle.jsonl")[:60]:
        d1, d2 = rec["dice"]
        assert main(["moves", rec["position"], f"{d1}-{d2}"]) == 0
        out = capsys.readouterr().out.strip().splitlines()
        if not rec["results"]:
            assert out == [f"no legal move for {d1}{d2}"]
            continue
        assert sorted(line.rsplit("-> ", 1)[1] for line in out) == rec["results"]


def test_show_prints_board_pips_and_ids(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10"]) == 0
    out = capsys.readouterr().out
    assert "4HPwATDgc/ABMA" in out and "167" in out and "XGID=" in out


@pytest.mark.parametrize(
    ("argv", "quoted"),
    [
        (["moves", "4HPwATDgc/ABMX!", "31"], "4HPwATDgc/ABMX!"),
        (["moves", "4HPwATDgc/ABMA", "37"], "37"),
        (["moves", "4HPwATDgc/ABMA", "3"], "'3'"),
        (["show", "hello"], "hello"),
    ],
)
def test_bad_input_is_one_line_exit_2(argv: list[str], quoted: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and quoted in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import bgbot

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    out = capsys.readouterr().out.splitlines()
    assert done.value.code == 0 and out[0].startswith(f"bgbot {bgbot.__version__} (reads encodings v1, ")
    from bgbot.eval.models import load_model

    net = load_model().net
    assert out[1].startswith(f"model: bgbot-default.npz (encoding v{net.spec.encoding_version}, hidden "
                             f"{'x'.join(map(str, net.spec.hidden))} {net.spec.activation}")
    assert all(f"{name} net: encoding v" in out[1] for name in net.by_class)


def test_version_names_a_missing_model(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BGBOT_CHECKPOINT", "/nowhere/model.npz")
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    out = capsys.readouterr().out.splitlines()
    assert done.value.code == 0 and out[1].startswith("model: none usable at '/nowhere/model.npz'")


@pytest.mark.parametrize(
    "argv",
    [
        ["move", "4HPwATDgc/ABMA", "31", "--ply", "²"],
        ["move", "4HPwATDgc/ABMA", "31", "--ply", "٢"],  # an Arabic-Indic 2: not silently 2-ply
        ["cube", "4HPwATDgc/ABMA", "--cube", "²"],
        ["cube", "4HPwATDgc/ABMA", "--match", "٧"],
        ["pit", "pubeval", "random", "--games", "٢"],
    ],
)
def test_digits_of_other_scripts_are_one_line_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own error for a typed option
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and argv[-1] in err and "Traceback" not in err


def test_an_xgid_without_its_prefix_is_a_position_not_an_option(capsys: pytest.CaptureFixture[str]) -> None:
    bare = "-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10"  # starts with '-': argparse took it for an option
    assert main(["show", bare]) == 0
    assert "4HPwATDgc/ABMA" in capsys.readouterr().out
