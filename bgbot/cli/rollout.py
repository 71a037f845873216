"""``bgbot rollout POSITION [DICE]``: roll a position out before its roll, or the top plays of a roll.

Figures are from the side on roll; a table like gnubg's rollout output, or ``--json``.  The work runs
on local processes (``--workers``, default every core) or on Ray (``--executor ray``, ``ray://HOST:PORT``
or a cluster's ``HOST:PORT``); ``--resume DIR`` keeps every finished task in DIR, so a killed run given
the same DIR again goes on from there.  The same seed gives the same figures on any executor.
"""

from __future__ import annotations

import argparse
from typing import Any

from bgbot.cli.options import add_cube_options, cube_state_from_args, positive_number, whole

__all__ = ["add_parser"]


def _cmd_rollout(args: argparse.Namespace) -> int:
    import json

    from bgbot.engine.api import Engine, position_ids
    from bgbot.engine.executor import default_workers, parse_executor
    from bgbot.engine.rollout import RolloutSettings
    from bgbot.errors import ExecutorError
    from bgbot.formats.parse import parse_position_and_state
    from bgbot.rules.dice import parse_dice

    pos, state = parse_position_and_state(args.position)
    dice = parse_dice(args.dice) if args.dice is not None else None
    cs = cube_state_from_args(args, state)
    spec = parse_executor(args.executor)
    workers = args.workers if args.workers is not None else default_workers()
    if workers < 1:
        raise ExecutorError(f"--workers must be at least 1, got {workers!r}")
    settings = RolloutSettings(
        trials=args.trials,
        ply=args.ply,
        truncate=args.truncate,
        cubeful=args.cubeful,
        luck=args.luck,
        stratify=args.stratify,
        seed=args.seed,
        se_stop=args.se_stop,
        trials_per_task=args.trials_per_task,
        stop_at_bearoff=args.bearoff_stop,
    )
    engine = Engine.load(args.checkpoint)
    options: dict[str, Any] = {
        "top": args.top,
        "preselect_ply": args.preselect,
        "executor": spec,
        "workers": workers,
        "resume": args.resume,
        "progress": not args.json,
    }
    result = engine.rollout(pos, dice, cs, settings, **options)
    if args.json:
        from bgbot.engine.answers import finished

        print(json.dumps(finished(result.to_dict()), indent=2))
        return 0
    print(position_ids(pos, state, dice=dice, doubled=False) if dice else position_ids(pos, state))
    what = f"the top {len(result.entries)} plays of {dice[0]}{dice[1]}" if dice else "the position before its roll"
    where = (
        "money game" + (", Jacoby rule" if cs.jacoby else "")
        if cs.is_money
        else (f"{cs.match}-point match, score {cs.score[0]}-{cs.score[1]}" + (", Crawford game" if cs.crawford else ""))
    )
    print(f"Rollout of {what}; {where}; cube {cs.cube} ({cs.owner}); {engine.describe()}")
    print("Figures from the side on roll; equities normalised to the cube (± one standard error).")
    print(result.table())
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``bgbot rollout``."""
    s = sub.add_parser("rollout", help="roll out a position, or the top plays of a roll, with standard errors")
    s.add_argument("position", help="gnubg Position ID (optionally :MatchID), XGID or FIBS board")
    s.add_argument("dice", nargs="?", help="roll out the top plays of this roll (e.g. 31); none: before the roll")
    s.add_argument("--trials", type=whole, default=1296, help="games per line (default 1296)")
    s.add_argument("--ply", default="1", help="checker play inside the rollout, 1-3 ply (XG numbering; default 1)")
    s.add_argument(
        "--truncate",
        type=whole,
        default=0,
        metavar="N",
        help="stop after N plies and take the network's value (default 0: play to the end)",
    )
    s.add_argument("--top", type=whole, default=5, help="candidate plays rolled out (default 5)")
    s.add_argument("--preselect", default="1", metavar="PLY", help="ply of the pre-selection of plays (1 or 2)")
    on_by_default = (
        ("--cubeful", "play the cube in the rollout (default; --cubeless: cubeless equities only)"),
        ("--luck", "luck adjustment (variance reduction; default on)"),
        ("--bearoff-stop", "stop a trial at an exact bear-off position with the database's value (default)"),
    )
    for flag, text in on_by_default:  # each with its --no- form
        s.add_argument(flag, action=argparse.BooleanOptionalAction, default=True, help=text)
    s.add_argument("--cubeless", dest="cubeful", action="store_false", help="same as --no-cubeful")
    s.add_argument(
        "--stratify",
        type=whole,
        choices=(0, 36, 1296),
        help="stratified first rolls: 36 or 1296 sequences, 0 none (default: 1296, or 36, whichever the trials fill)",
    )
    s.add_argument("--seed", type=whole, default=0, help="dice seed (default 0)")
    s.add_argument(
        "--se-stop",
        type=positive_number,
        metavar="X",
        help="stop early once every ranked equity's standard error is below X",
    )
    s.add_argument("--workers", type=whole, help="local worker processes (default: every core)")
    s.add_argument(
        "--executor", default="local", help="local (default), ray, ray://HOST:PORT or HOST:PORT of a Ray cluster"
    )
    s.add_argument("--trials-per-task", type=whole, default=72, help="trials in one task (default 72)")
    s.add_argument("--resume", metavar="DIR", help="results folder: finished tasks are kept there and reused")
    s.add_argument("--checkpoint", help="network file (default: $BGBOT_CHECKPOINT, else the model shipped)")
    s.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_cube_options(s)
    s.set_defaults(func=_cmd_rollout)
