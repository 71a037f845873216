"""The ``bgbot`` command line.  Every subcommand imports what it needs lazily.

User mistakes (bad IDs, dice, configs, checkpoints ...) print one line on
stderr and exit with status 2.
"""

from __future__ import annotations

import argparse
import sys

from bgbot.errors import BgbotError

DEFAULT_RUN_DIR = "runs/default"


def _cmd_train(args: argparse.Namespace) -> int:
    from bgbot.config import load_config, parse_overrides
    from training.config import TrainConfig
    from training.selfplay import run

    if args.resume:
        run(TrainConfig(), args.out, resume=args.resume, until=args.games, progress=not args.quiet,
            overrides=parse_overrides(args.set))
    else:
        cfg = load_config(TrainConfig, args.config, args.set)
        run(cfg, args.out, until=args.games, progress=not args.quiet)
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    from bgbot.notation import parse_position_and_state, render_board

    pos, state = parse_position_and_state(args.position)
    print(render_board(pos, state))
    return 0


def _cmd_moves(args: argparse.Namespace) -> int:
    from bgbot.movegen import legal_moves, parse_dice
    from bgbot.notation import parse_position

    pos = parse_position(args.position)
    dice = parse_dice(args.dice)
    moves = legal_moves(pos, dice)
    if len(moves) == 1 and not moves[0].steps:
        print(f"no legal move for {dice[0]}{dice[1]}")
        return 0
    for i, m in enumerate(moves, 1):
        print(f"{i:3d}. {m.text:<24} -> {m.result.gnubg_id()}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``bgbot`` command."""
    p = argparse.ArgumentParser(prog="bgbot", description="backgammon engine and self-play trainer")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("show", help="print the board, pip counts and IDs of a position")
    s.add_argument("position", help="gnubg Position ID (optionally :MatchID), XGID or FIBS board")
    s.set_defaults(func=_cmd_show)

    s = sub.add_parser("moves", help="list every legal move of a roll")
    s.add_argument("position")
    s.add_argument("dice", help="e.g. 31 or 3-1")
    s.set_defaults(func=_cmd_moves)

    s = sub.add_parser("train", help="train a network by self-play TD(lambda)")
    s.add_argument("--config", default="configs/full.toml", help="TOML preset (default configs/full.toml)")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config key (repeatable)")
    s.add_argument("--resume", metavar="CKPT", help="continue a run from its checkpoint")
    s.add_argument("--games", type=int, help="stop at this many games trained (default: the config's games)")
    s.add_argument("--out", default=DEFAULT_RUN_DIR, help=f"run folder (default {DEFAULT_RUN_DIR})")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.set_defaults(func=_cmd_train)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bgbot`` console script."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BgbotError as exc:
        print(f"bgbot: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bgbot: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())

