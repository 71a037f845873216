"""The ``bgbot`` command line.  Every subcommand imports what it needs lazily.

User mistakes (bad IDs, dice, configs, checkpoints ...) print one line on
stderr and exit with status 2.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bgbot.cli.analyse import add_parser as add_analyse_parser
from bgbot.cli.label import add_parser as add_label_parser
from bgbot.cli.options import add_cube_options, add_filter_option, cube_state_from_args, whole
from bgbot.cli.rollout import add_parser as add_rollout_parser
from bgbot.errors import QUOTE_LIMIT, BgbotError, ConfigError, ascii_int, is_interrupt

if TYPE_CHECKING:
    from bgbot.engine.api import Engine

DEFAULT_RUN_DIR = "runs/default"


def _import_training() -> None:
    """Make the trainer importable: ``training/`` is not installed, it lives next to ``bgbot/`` in a clone.

    An editable install (``pip install -e .``) finds it there; a wheel install
    has no trainer and says how to get one.  torch is the ``train`` extra.
    """
    import importlib.util

    import bgbot

    if importlib.util.find_spec("torch") is None:
        raise ConfigError("training needs torch, which is not installed: pip install torch==2.13.0 "
                          "&& pip install -e '.[train]' (in a clone of the repository)")
    if importlib.util.find_spec("training") is None:
        root = Path(bgbot.__file__).resolve().parents[1]
        if not (root / "training" / "selfplay.py").is_file():
            raise ConfigError(f"training runs from a clone of the repository (training/ next to bgbot/), "
                              f"not from an installed wheel ({str(root)!r} has no training/): git clone the "
                              f"repository and pip install -e '.[train]' there")
        sys.path.insert(0, str(root))


def _cmd_train(args: argparse.Namespace) -> int:
    from bgbot.config import check_output_dir, load_config, parse_overrides

    _import_training()
    from training.config import TrainConfig
    from training.pipeline import is_pipeline, run_pipeline
    from training.selfplay import run

    if args.config_file and args.config:
        raise ConfigError(f"give the config once: {args.config_file!r} or --config {args.config!r}")
    config = args.config_file or args.config or "configs/full.toml"
    if not args.resume and is_pipeline(config):
        if args.set or args.games is not None or args.force:
            raise ConfigError(f"{config!r} is a pipeline config: --set, --games and --force are for self-play "
                              "presets; change the pipeline's TOML instead")
        if args.out:
            check_output_dir(args.out, "run folder (--out)")
        records = run_pipeline(config, out=args.out, progress=not args.quiet)
        for stage, rec in records.items():
            print(f"{stage}: " + ", ".join(f"{k}={v}" for k, v in rec.items() if k != "key"))
        return 0
    args.out = args.out or DEFAULT_RUN_DIR
    check_output_dir(args.out, "run folder (--out)")

    if args.resume:
        run(TrainConfig(), args.out, resume=args.resume, until=args.games, progress=not args.quiet,
            overrides=parse_overrides(args.set))
    else:
        cfg = load_config(TrainConfig, config, args.set)
        run(cfg, args.out, until=args.games, progress=not args.quiet, force=args.force)
    return 0


def _cmd_yardstick(args: argparse.Namespace) -> int:
    import json

    from bgbot.eval import pubeval
    from bgbot.eval.evaluate import NetEvaluator
    from bgbot.eval.models import load_model
    from bgbot.play.duel import duel, greedy_chooser, random_chooser

    if args.games < 2 or args.games % 2:
        raise ConfigError(f"--games must be an even number >= 2 (pairs of duplicate games), got {args.games!r}")
    from bgbot.config import check_output_file, write_text_atomic

    out = check_output_file(args.out, "--out file") if args.out else None  # before the games, not after
    model = load_model(args.checkpoint)
    opponent = {"pubeval": lambda: pubeval.choose, "random": lambda: random_chooser(args.seed + 1)}
    if args.opponent not in opponent:
        raise ConfigError(f"--opponent must be pubeval or random, got {args.opponent!r}")
    res = duel(greedy_chooser(NetEvaluator(model.net)), opponent[args.opponent](),
               args.games // 2, seed=args.seed, progress=True)
    record = {"checkpoint": str(model.path), "games_trained": model.data.get("games_trained"), "ply": 1,
              "opponent": args.opponent, "seed": args.seed, **res.as_dict()}
    print(f"bgbot 1-ply vs {args.opponent}: {res}")
    if out is not None:
        write_text_atomic(out, json.dumps(record, indent=1) + "\n", "--out file")
    return 0


def _cmd_build_bearoff(args: argparse.Namespace) -> int:
    from bgbot.config import check_output_file
    from bgbot.eval.bearoff import build_bearoff

    if args.path:
        check_output_file(args.path, "bear-off database file")
    print(build_bearoff(args.path, progress=True))
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    from bgbot.formats.board import render_board
    from bgbot.formats.parse import parse_position_and_state

    pos, state = parse_position_and_state(args.position)
    print(render_board(pos, state))
    return 0


def _cmd_moves(args: argparse.Namespace) -> int:
    from bgbot.formats.parse import parse_position
    from bgbot.rules.dice import parse_dice
    from bgbot.rules.moves import legal_moves

    pos = parse_position(args.position)
    dice = parse_dice(args.dice)
    moves = legal_moves(pos, dice)
    if len(moves) == 1 and not moves[0].steps:
        print(f"no legal move for {dice[0]}{dice[1]}")
        return 0
    for i, m in enumerate(moves, 1):
        print(f"{i:3d}. {m.text:<24} -> {m.result.gnubg_id()}")
    return 0


def _engine_args(s: argparse.ArgumentParser, what: str) -> None:
    s.add_argument("position", help="gnubg Position ID (optionally :MatchID), XGID or FIBS board")
    s.add_argument("--ply", default="1", help=f"{what} at 1, 2 or 3 ply (XG numbering; default 1)")
    s.add_argument(
        "--checkpoint", help="network file (default: $BGBOT_CHECKPOINT, else the model shipped in the package)"
    )
    s.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _seed(text: str) -> int:
    """A seed option: a whole number 0..2**63-1 (numpy's generators refuse negative seeds)."""
    from bgbot.config import check_seed

    try:
        return check_seed(ascii_int(text))
    except ValueError as exc:  # ConfigError is a ValueError
        raise argparse.ArgumentTypeError(str(exc)) from None


def _one_torch_thread() -> None:
    """The CLI answers one position at a time: if a torch network is in play, keep torch on one thread.

    Shipped models play in numpy; torch is only loaded for a ``.pt`` checkpoint.
    """
    if "torch" in sys.modules:
        from bgbot.eval.nets import set_torch_threads

        set_torch_threads(1)


def _load_engine(args: argparse.Namespace, **kwargs: Any) -> Engine:
    from bgbot.engine.api import Engine

    engine = Engine.load(args.checkpoint, **kwargs)
    _one_torch_thread()
    return engine


def _cmd_move(args: argparse.Namespace) -> int:
    import json

    from bgbot.engine.api import position_ids
    from bgbot.engine.search import check_ply, parse_filters
    from bgbot.errors import InvalidDiceError
    from bgbot.formats.parse import parse_position_and_state
    from bgbot.rules.dice import parse_dice

    pos, state = parse_position_and_state(args.position)
    ply = check_ply(args.ply)
    if args.dice is not None:
        dice = parse_dice(args.dice)
    elif state is not None and state.dice is not None:
        dice = state.dice
    else:
        raise InvalidDiceError(f"no dice given for {args.position!r}: add DICE like 31, or an XGID with dice")
    cs = cube_state_from_args(args, state)
    engine = _load_engine(args, filters=parse_filters(args.filter))
    analysis = engine.best_move(pos, dice, ply, cs, cubeless=args.cubeless)
    if args.json:
        from bgbot.engine.answers import move_answer

        print(json.dumps(move_answer(engine, analysis), indent=2))
        return 0
    print(position_ids(pos, state, dice=dice, doubled=False))
    print(f"Dice {dice[0]}{dice[1]}, {ply}-ply, {len(analysis)} legal moves; {engine.describe()}")
    where = "money game" + (", Jacoby rule" if cs.jacoby else "") if cs.is_money else (
        f"{cs.match}-point match, score {cs.score[0]}-{cs.score[1]}" + (", Crawford game" if cs.crawford else ""))
    print(f"{where}; cube {cs.cube} ({cs.owner}). Equities: {analysis.kind} of the side to move, "
          "normalised to the cube; probabilities from its view.")
    print(analysis.table())
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    import json

    from bgbot.engine.api import position_ids
    from bgbot.engine.search import check_ply
    from bgbot.eval.evaluate import equity
    from bgbot.formats.parse import parse_position_and_state

    pos, state = parse_position_and_state(args.position)
    ply = check_ply(args.ply)
    engine = _load_engine(args)
    probs = engine.evaluate(pos, ply)
    eq = float(equity(probs))
    if args.json:
        from bgbot.engine.answers import eval_answer

        print(json.dumps(eval_answer(engine, pos, ply, probs), indent=2))
        return 0
    w, wg, wbg, lg, lbg = (float(v) for v in probs)
    print(position_ids(pos, state))
    print(f"{ply}-ply evaluation of the side on roll, before its roll; {engine.describe()}")
    print("   win    w-g   w-bg   lose    l-g   l-bg   cubeless equity")
    print(f" {w:5.3f}  {wg:5.3f}  {wbg:5.3f}  {1 - w:5.3f}  {lg:5.3f}  {lbg:5.3f}   {eq:+.3f}")
    return 0


def _cmd_cube(args: argparse.Namespace) -> int:
    import json

    from bgbot.engine.api import describe_action, position_ids
    from bgbot.engine.search import check_ply
    from bgbot.eval.evaluate import equity
    from bgbot.formats.parse import parse_position_and_state

    pos, state = parse_position_and_state(args.position)
    ply = check_ply(args.ply)
    cs = cube_state_from_args(args, state)
    cube, owner, match, score, crawford, jacoby = cs.cube, cs.owner, cs.match, cs.score, cs.crawford, cs.jacoby
    engine = _load_engine(args)
    probs = engine.evaluate(pos, ply)
    x = engine.cube_efficiency(pos)
    d = engine.cube_action(pos, cs, ply=ply)  # its own lookahead above 1-ply; probs and x are shown
    if args.json:
        from bgbot.engine.answers import cube_answer

        print(json.dumps(cube_answer(engine, pos, ply, cs, probs, x, d), indent=2))
        return 0
    print(position_ids(pos, state))
    where = "money game" + (", Jacoby rule" if jacoby else "") if match == 0 else (
        f"{match}-point match, score {score[0]}-{score[1]} (side on roll {match - score[0]}-away, "
        f"opponent {match - score[1]}-away)" + (", Crawford game" if crawford else ""))
    owned = {"center": "centred", "me": "owned by the side on roll", "opp": "owned by the opponent"}[owner]
    print(f"{where}; cube {cube} {owned}; {ply}-ply; {engine.describe()}")
    w, wg, wbg, lg, lbg = (float(v) for v in probs)
    print(f"cubeless: win {w:.3f} (gammon {wg:.3f}, backgammon {wbg:.3f}), lose {1 - w:.3f} "
          f"(gammon {lg:.3f}, backgammon {lbg:.3f}); equity {float(equity(probs)):+.3f}")
    print(f"cube efficiency x = {x:.3f}")
    print("cubeful equities (side on roll, in units of the cube value):")
    rows = [("No double", d.equity_no_double), ("Double, take", d.equity_double_take),
            ("Double, pass", d.equity_double_pass)]
    for name, eq in rows:
        if eq is not None:
            diff = "" if eq == d.equity_optimal else f"  ({eq - d.equity_optimal:+.3f})"
            print(f"  {name:<13} {eq:+.3f}{diff}")
    print(f"proper cube action: {describe_action(d, owner)}")
    if d.take_point is not None:
        print(f"opponent's take point: {100 * d.take_point:.1f}% cubeless wins")
    if d.note:
        print(f"note: {d.note}")
    return 0


def _add_engine_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    s = sub.add_parser("move", help="rank the legal moves of a roll (best move)")
    _engine_args(s, "search")
    s.add_argument("dice", nargs="?", help="e.g. 31 or 3-1 (optional with an XGID that carries the dice)")
    add_cube_options(s)
    s.add_argument("--cubeless", action="store_true", help="rank by cubeless money equity (cube and score ignored)")
    add_filter_option(s)
    s.set_defaults(func=_cmd_move)

    s = sub.add_parser("cube", help="cube decision of the side on roll, before its roll")
    _engine_args(s, "evaluate")
    add_cube_options(s)
    s.set_defaults(func=_cmd_cube)

    s = sub.add_parser("eval", help="cubeless probabilities of the side on roll")
    _engine_args(s, "evaluate")
    s.set_defaults(func=_cmd_eval)


def _cmd_pit(args: argparse.Namespace) -> int:
    import json

    from bgbot.engine.executor import default_workers
    from bgbot.play.bots import parse_bot_spec
    from bgbot.play.pit import PitConfig, PitReport, run_pit
    from bgbot.play.table import Rules

    spec_a, spec_b = parse_bot_spec(args.a), parse_bot_spec(args.b)
    rules = Rules(cube=args.cube, jacoby=args.jacoby, auto_doubles=args.auto_doubles)
    cfg = PitConfig(
        games=args.games, match_length=args.match, rules=rules, seed=args.seed,
        workers=args.workers if args.workers is not None else default_workers(),
        save_games=args.save_games, record_format=args.record_format, executor=args.executor,
        pairs_per_task=args.pairs_per_task, resume=args.resume,
    )
    print(
        f"pit: A = {args.a}, B = {args.b}; {cfg.mode()}; {2 * cfg.pairs} "
        f"{'matches' if cfg.match_length else 'games'} in {cfg.pairs} duplicate pairs; seed {cfg.seed}; "
        f"{cfg.workers} worker{'s' if cfg.workers > 1 else ''}",
        file=sys.stderr,
    )
    from bgbot.config import check_output_file, write_text_atomic

    out = check_output_file(args.out, "--out file") if args.out else None  # before any game, not after

    def write(rep: PitReport) -> None:  # also after each finished leg: a pit killed outright keeps its games
        if out is not None:
            write_text_atomic(out, json.dumps(rep.to_dict(), indent=2) + "\n", "--out file")

    report = run_pit(spec_a, spec_b, cfg, progress=not args.quiet, on_report=write)
    print(report.format())
    if out is not None:
        write(report)
        print(f"results written to {out}", file=sys.stderr)
    if report.stopped and report.stopped.startswith("interrupted"):
        return 130
    return 1 if report.stopped else 0


def _bot_from_args(args: argparse.Namespace) -> str:
    if args.bot:
        return str(args.bot)
    opts = [f"ply={args.ply}"] + ([f"checkpoint={args.checkpoint}"] if args.checkpoint else [])
    return "bgbot:" + ",".join(opts)


def _cmd_serve_external(args: argparse.Namespace) -> int:
    from bgbot.play.bots import make_bot, parse_bot_spec
    from bgbot.play.external import serve_external, serve_stdio

    spec = parse_bot_spec(_bot_from_args(args))
    bot = make_bot(spec, jacoby=args.jacoby)
    _one_torch_thread()
    try:
        if args.stdio:
            serve_stdio(bot, jacoby=args.jacoby)
        else:
            serve_external(bot, args.port, host=args.host, once=args.once, jacoby=args.jacoby, log=sys.stderr)
    finally:
        bot.close()
    return 0


def _cmd_play(args: argparse.Namespace) -> int:
    from bgbot.play.bots.local import BgbotBot
    from bgbot.play.terminal import play_terminal

    record = None
    if args.resume:
        from bgbot.formats.records import read_match
        from bgbot.play.terminal import resume_point

        record = read_match(args.resume)
        resume_point(record)  # a record that cannot go on fails here, before the model loads
        if args.match and args.match != record.length:
            raise ConfigError(
                f"--match {args.match} contradicts the {record.length}-point match in {args.resume!r}"
            )
    bot = BgbotBot.load(args.checkpoint, ply=args.ply, name="bgbot")
    _one_torch_thread()
    play_terminal(bot, match_length=args.match, seed=args.seed, cube=args.cube, jacoby=args.jacoby,
                  save=_play_record_path(args), resume=record)
    return 0


def _play_record_path(args: argparse.Namespace) -> Path | None:
    """Where ``bgbot play`` saves the session: ``--save``, else ``$BGBOT_HOME/games`` (default ``~/.bgbot``)."""
    import os
    import time

    if args.no_save:
        return None
    if args.save:
        return Path(args.save)
    if getattr(args, "resume", None):
        return Path(args.resume)  # a resumed session is saved where it came from
    home = Path(os.environ.get("BGBOT_HOME") or Path.home() / ".bgbot")
    return home / "games" / f"play-{time.strftime('%Y%m%d-%H%M%S')}.mat"


def _add_pit_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    s = sub.add_parser(
        "pit", help="duel two bots with duplicate dice (bgbot, gnubg, bgsage, pubeval, random, engines)",
        description="Bots: bgbot[:checkpoint=PATH,ply=N,cube_ply=N,bearoff=0], gnubg[:ply=N,cube_ply=N,path=P], "
        "bgsage[:ply=N,cube_ply=N,cubeful=0|1] (pip install bgsage), "
        "pubeval, random[:seed=S,double=P,take=P], cmd:[timeout=S:]COMMAND (external-player protocol on "
        "stdin/stdout), "
        "tcp:HOST:PORT.  Results are from A's point of view.",
    )
    s.add_argument("a", help="bot A, e.g. bgbot:ply=2")
    s.add_argument("b", help="bot B, e.g. gnubg:ply=0")
    s.add_argument("--games", type=whole, default=100, help="games (or matches with --match); default 100")
    s.add_argument("--match", type=whole, default=0, metavar="N", help="play matches to N points (default: money)")
    s.add_argument("--cube", action=argparse.BooleanOptionalAction, default=True,
                   help="play with the doubling cube (default) or without (--no-cube)")
    s.add_argument("--jacoby", action="store_true", help="Jacoby rule (money games)")
    s.add_argument("--auto-doubles", type=whole, default=0, metavar="N",
                   help="automatic doubles on opening ties, at most N per game (money; default off)")
    s.add_argument("--seed", type=_seed, default=0, help="dice seed (default 0)")
    s.add_argument("--workers", type=whole, help="parallel workers (default: every core; 1: in this process)")
    s.add_argument("--executor", default="local",
                   help="local (default), ray, ray://HOST:PORT or HOST:PORT of a Ray cluster")
    s.add_argument("--pairs-per-task", type=whole, default=2, help="duplicate pairs in one task (default 2)")
    s.add_argument("--resume", metavar="DIR", help="results folder: finished tasks are kept there and reused")
    s.add_argument("--out", metavar="FILE", help="write the report as JSON")
    s.add_argument("--save-games", metavar="DIR", help="write every game (money) or match as a .mat file")
    s.add_argument("--record-format", choices=("mat", "sgf"), default="mat",
                   help="format of --save-games records: Jellyfish .mat (default) or gnubg .sgf")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.set_defaults(func=_cmd_pit)

    s = sub.add_parser(
        "serve-external", help="be an external player for gnubg (set player 1 external localhost:PORT)"
    )
    s.add_argument("--port", type=whole, default=4321, help="TCP port to listen on (default 4321; 0 = any free)")
    s.add_argument("--host", default="localhost", help="address to listen on (default localhost)")
    s.add_argument("--bot", metavar="SPEC", help="the bot answering (default bgbot with --ply/--checkpoint)")
    s.add_argument("--ply", type=whole, default=1, help="bgbot's ply (XG numbering; default 1)")
    s.add_argument("--checkpoint", help="network file (default: $BGBOT_CHECKPOINT or the shipped model)")
    s.add_argument("--jacoby", action="store_true", help="money games use the Jacoby rule")
    s.add_argument("--once", action="store_true", help="stop after the first connection closes")
    s.add_argument("--stdio", action="store_true", help="speak the protocol on stdin/stdout instead of TCP")
    s.set_defaults(func=_cmd_serve_external)

    s = sub.add_parser("play", help="play against bgbot in the terminal")
    s.add_argument("--ply", type=whole, default=1, help="bgbot's ply (XG numbering; default 1)")
    s.add_argument("--match", type=whole, default=0, metavar="N", help="a match to N points (default: money games)")
    s.add_argument("--checkpoint", help="network file (default: $BGBOT_CHECKPOINT or the shipped model)")
    s.add_argument("--seed", type=_seed, help="dice seed (default: random)")
    s.add_argument("--cube", action=argparse.BooleanOptionalAction, default=True, help="play with the cube")
    s.add_argument("--jacoby", action="store_true", help="Jacoby rule (money games)")
    s.add_argument("--save", metavar="FILE",
                   help="save the session as a .mat or .sgf record (default: ~/.bgbot/games/play-DATE.mat)")
    s.add_argument("--no-save", action="store_true", help="do not save the session")
    s.add_argument("--resume", metavar="FILE",
                   help="go on with a session saved by the 'save' command (.mat or .sgf; saved back there)")
    s.set_defaults(func=_cmd_play)


def _cmd_chouette(args: argparse.Namespace) -> int:
    import json

    import numpy as np

    from bgbot.errors import ConfigError
    from bgbot.play.bots import Bot, make_bot, parse_bot_spec
    from bgbot.play.chouette import MIN_PLAYERS, play_chouette
    from bgbot.play.table import Rules

    if len(args.specs) < MIN_PLAYERS:
        raise ConfigError(
            f"a chouette needs at least {MIN_PLAYERS} players, got {len(args.specs)}: {' '.join(args.specs)!r}"
        )
    if args.games < 1:
        raise ConfigError(f"--games must be a positive integer, got {args.games!r}")
    specs = [parse_bot_spec(text) for text in args.specs]
    texts = [s.text for s in specs]
    # equal specs get their seat number, so that the table tells them apart
    names = [t if texts.count(t) == 1 else f"{t}#{seat + 1}" for seat, t in enumerate(texts)]
    bots: list[Bot] = []
    try:
        for seat, spec in enumerate(specs):
            bots.append(make_bot(spec, jacoby=args.jacoby, seed=args.seed + seat, name=names[seat]))
        _one_torch_thread()
        result = play_chouette(bots, args.games, np.random.default_rng(args.seed), Rules(jacoby=args.jacoby))
    finally:
        for bot in bots:
            bot.close()
    if args.json:
        print(json.dumps({"seed": args.seed, "jacoby": args.jacoby, "specs": texts, **result.to_dict()}, indent=2))
    else:
        print(result.format())
    return 0


def _add_chouette_command(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    s = sub.add_parser(
        "chouette", help="a chouette of 3+ bots: one in the box against a team with a captain",
        description="Bots as for 'bgbot pit'.  The team's checker play is decided by majority (ties: the "
        "captain's proposal), it doubles only when unanimous, and each member answers the box's doubles alone.",
    )
    s.add_argument("specs", nargs="+", metavar="SPEC", help="a bot per player, at least 3 (e.g. pubeval random)")
    s.add_argument("--games", type=whole, default=10, help="games to play (default 10)")
    s.add_argument("--seed", type=_seed, default=0, help="dice seed (default 0); random bots get seed+seat")
    s.add_argument("--jacoby", action="store_true", help="Jacoby rule")
    s.add_argument("--json", action="store_true", help="print JSON (totals, orders, game log) instead of a table")
    s.set_defaults(func=_cmd_chouette)


class _Parser(argparse.ArgumentParser):
    """argparse with its errors on one line (no usage block), the input in them bounded."""

    def error(self, message: str) -> typing.NoReturn:
        self.exit(2, f"{self.prog}: error: {_one_line(message)} (see {self.prog} -h)\n")


def _one_line(message: str, limit: int = 6 * QUOTE_LIMIT) -> str:
    text = message.replace("\r", " ").replace("\n", " ")
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def version_text() -> str:
    """``bgbot --version``: the package version, and the default model's file, encoding and networks."""
    from bgbot import __version__
    from bgbot.eval.encoding import ENCODING_VERSIONS
    from bgbot.eval.models import default_checkpoint, load_model

    lines = [f"bgbot {__version__} (reads encodings {', '.join(f'v{v}' for v in sorted(ENCODING_VERSIONS))})"]
    try:
        model = load_model()
    except BgbotError as exc:
        lines.append(f"model: none usable at {str(default_checkpoint())!r}: {exc}")
        return "\n".join(lines)
    net = model.net

    def one(n: typing.Any) -> str:
        return f"encoding v{n.spec.encoding_version}, hidden {'x'.join(map(str, n.spec.hidden))} {n.spec.activation}"

    classes = "".join(f"; {name} net: {one(sub)}" for name, sub in net.by_class.items())
    games = model.games_trained
    lines.append(f"model: {model.path.name} ({one(net)}{classes}"
                 + (f"; {games:,} self-play games" if games else "") + ")")
    return "\n".join(lines)


class _VersionAction(argparse.Action):
    """``--version``, its text built only when asked (reading the model costs a few milliseconds)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: typing.Any) -> None:
        super().__init__(option_strings, dest=dest, nargs=0, default=argparse.SUPPRESS,
                         help="print the version of bgbot, its encodings and the default model, then exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: typing.Any,
                 option_string: str | None = None) -> None:
        print(version_text())
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``bgbot`` command."""
    p = _Parser(prog="bgbot", description="backgammon engine and self-play trainer")
    p.add_argument("--version", action=_VersionAction)
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("show", help="print the board, pip counts and IDs of a position")
    s.add_argument("position", help="gnubg Position ID (optionally :MatchID), XGID or FIBS board")
    s.set_defaults(func=_cmd_show)

    s = sub.add_parser("moves", help="list every legal move of a roll")
    s.add_argument("position")
    s.add_argument("dice", help="e.g. 31 or 3-1")
    s.set_defaults(func=_cmd_moves)

    s = sub.add_parser("train", help="run a training pipeline (self-play, fit to the label bank, gate, ship)")
    s.add_argument("config_file", nargs="?", metavar="CONFIG",
                   help="a pipeline config (configs/train/*.toml) or a self-play preset (default configs/full.toml)")
    s.add_argument("--config", help="the same as CONFIG")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config key (repeatable)")
    s.add_argument("--resume", metavar="CKPT", help="continue a run from its checkpoint")
    s.add_argument("--games", type=whole, help="stop at this many games trained (default: the config's games)")
    s.add_argument("--out", help=f"run folder (default: the pipeline's out, or {DEFAULT_RUN_DIR} for self-play)")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.add_argument("--force", action="store_true", help="start a fresh run even where one exists (its files go)")
    s.set_defaults(func=_cmd_train)

    s = sub.add_parser("build-bearoff", help="(re)build the one-sided bear-off database")
    s.add_argument("path", nargs="?", help="where to write it (default: the file bgbot loads)")
    s.set_defaults(func=_cmd_build_bearoff)

    _add_engine_commands(sub)
    add_rollout_parser(sub)
    add_analyse_parser(sub)
    add_label_parser(sub)
    _add_pit_commands(sub)
    _add_chouette_command(sub)
    from bgbot.cli import serve as _serve_cli
    from bgbot.cli import ubgi as _ubgi_cli

    _serve_cli.add_parser(sub)
    _ubgi_cli.add_parser(sub)
    from bgbot.cli import warmup as _warmup_cli

    _warmup_cli.add_parser(sub)

    s = sub.add_parser("yardstick", help="cubeless duplicate-dice duel of a network (1-ply) against pubeval")
    s.add_argument("--checkpoint", help="network (default: $BGBOT_CHECKPOINT, else the shipped model)")
    s.add_argument("--games", type=whole, default=10_000, help="games, an even number (default 10000)")
    s.add_argument("--opponent", default="pubeval", help="pubeval (default) or random")
    s.add_argument("--seed", type=_seed, default=1)
    s.add_argument("--out", help="also write the result as JSON here")
    s.set_defaults(func=_cmd_yardstick)
    return p


_BARE_XGID = re.compile(r"[-A-Oa-o]{26}:")


def _xgid_arguments(argv: list[str]) -> list[str]:
    """An XGID given without its ``XGID=`` prefix starts with ``-`` (an empty point), which argparse would
    take for an option: give it its prefix back."""
    return [f"XGID={a}" if _BARE_XGID.match(a) else a for a in argv]


def _terminate_as_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM (a scheduler, `timeout`) saves what Ctrl-C saves: checkpoint, pit report


def _one_position_ply(args: argparse.Namespace) -> int | None:
    """The ply of a question about one position (``move``, ``eval``, ``cube``), else None.

    At 1-ply those need a few dozen network evaluations: run as plain Python
    (:mod:`bgbot.jit`) they finish before numba would have loaded
    (:func:`bgbot.cli.warmup.choose_kernels` decides).
    """
    if args.func not in (_cmd_move, _cmd_eval, _cmd_cube):
        return None
    bearoff = os.environ.get("BGBOT_BEAROFF")
    if bearoff and not Path(bearoff).expanduser().is_file():
        return None  # the bear-off database is about to be built: that is a job for compiled kernels
    try:
        return ascii_int(str(args.ply))
    except ValueError:
        return None  # check_ply reports it


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bgbot`` console script."""
    import signal
    import threading

    args = build_parser().parse_args(_xgid_arguments(sys.argv[1:] if argv is None else argv))
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    try:
        from bgbot.cli.warmup import choose_kernels

        choose_kernels(_one_position_ply(args))  # plain Python, or compiled (compiled once with a progress bar)
        return int(args.func(args) or 0)
    except BgbotError as exc:
        print(f"bgbot: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, SystemError) as exc:
        if not is_interrupt(exc):
            raise
        print("bgbot: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # the machine, not bgbot: a full disk, a read-only or missing folder
        print(f"bgbot: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

