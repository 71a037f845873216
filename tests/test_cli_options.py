"""The shared option types of the CLI: whole numbers in ASCII, counts that may not be negative, positive numbers."""

from __future__ import annotations

import argparse

import pytest

from bgbot.cli.main import build_parser
from bgbot.cli.options import count, positive_number, whole


def test_whole_reads_ascii_integers_with_a_sign() -> None:
    assert whole("12") == 12
    assert whole(" -3 ") == -3
    for bad in ("٢", "1.5", "", "x1"):
        with pytest.raises(argparse.ArgumentTypeError, match="not a whole number"):
            whole(bad)


def test_count_refuses_a_negative_number_quoting_it() -> None:
    assert count("0") == 0
    with pytest.raises(argparse.ArgumentTypeError, match=r"must not be negative: '-1'"):
        count("-1")


def test_positive_number_refuses_zero_infinity_and_nan() -> None:
    assert positive_number("2.5") == 2.5
    for bad in ("0", "-1", "inf", "nan"):
        with pytest.raises(argparse.ArgumentTypeError, match="must be a positive number"):
            positive_number(bad)
    with pytest.raises(argparse.ArgumentTypeError, match=r"not a number: 'ten'"):
        positive_number("ten")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["label", "--workers", "-2"], "must not be negative: '-2'"),
        (["label", "--minutes", "0"], "must be a positive number: '0'"),
        (["rollout", "4HPwATDgc/ABMA", "--trials", "many"], "not a whole number: 'many'"),
        (["rollout", "4HPwATDgc/ABMA", "--se-stop", "-0.1"], "must be a positive number: '-0.1'"),
        (["pit", "a", "b", "--games", "٢"], "not a whole number: '٢'"),
    ],
)
def test_a_bad_option_exits_2(argv: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(argv)
    assert exc.value.code == 2
    assert said in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "cubeful", "luck", "bearoff_stop"),
    [
        ([], True, True, True),
        (["--cubeless", "--no-luck", "--no-bearoff-stop"], False, False, False),
        (["--no-cubeful", "--luck", "--bearoff-stop"], False, True, True),
    ],
)
def test_rollout_on_off_options(flags: list[str], cubeful: bool, luck: bool, bearoff_stop: bool) -> None:
    args = build_parser().parse_args(["rollout", "4HPwATDgc/ABMA", *flags])
    assert (args.cubeful, args.luck, args.bearoff_stop) == (cubeful, luck, bearoff_stop)
