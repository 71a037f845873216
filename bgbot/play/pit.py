"""Pit two bots against each other: duplicate dice, cube or not, money or matches, in parallel.

``run_pit("bgbot:ply=1", "gnubg:ply=0", PitConfig(games=2000, rules=Rules(cube=False), workers=2))``
plays ``games`` money games (or ``games`` matches to ``match_length``) between
bot A and bot B (specs as :func:`bgbot.play.bots.parse_bot_spec`) and returns a
:class:`PitReport` from **A's point of view**.

* **Duplicate dice.**  Games come in pairs: pair ``k`` is played twice with
  the same dice (a generator seeded by ``(seed, k)``; in a match, game ``g``
  of the match by ``(seed, k, g)``), once with A as player 0 and once with the
  seats swapped, so each bot gets the rolls the other had.  The standard
  error of the points per game is taken over the pair means, which removes
  most of the dice luck.
* **Referee.**  :mod:`bgbot.play.table` plays every game with bgbot's own rules
  engine; an illegal move, garbage or a dead engine forfeits that game (it
  is listed in the report) and the duel goes on after the bot is reset (an
  external engine is restarted).  If a bot cannot be restarted, the duel
  stops with that message and the results so far are kept.
* **Workers.**  ``workers`` processes each build their own bots (one gnubg
  per worker for the whole duel) and play every ``workers``-th pair.
"""

from __future__ import annotations

import contextlib
import json
import math
import multiprocessing as mp
import os
import queue as queue_mod
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bgbot.config import check_output_dir
from bgbot.errors import BgbotError, ConfigError, EngineError, is_interrupt
from bgbot.play.bots import Bot, BotSpec, make_bot, parse_bot_spec, prepare_bot
from bgbot.play.match import play_match
from bgbot.play.table import DEFAULT_RULES, GameResult, Rules, play_game

__all__ = ["GameSummary", "LegSummary", "PitConfig", "PitReport", "run_pit"]


@dataclass(frozen=True)
class PitConfig:
    """What to play.

    ``games``: money games, or matches when ``match_length`` > 0; rounded up
    to an even number (duplicate pairs).  ``rules``: how each game is played
    (:class:`~bgbot.play.table.Rules`: cube, Jacoby and automatic doubles for
    money, backgammon count, turn limit).  ``workers``: parallel processes.
    ``save_games``: a folder for ``.mat`` records (one file per game, or per
    match); ``record_format`` ``'mat'`` (default) or ``'sgf'`` (gnubg's SGF).
    """

    games: int = 100
    match_length: int = 0
    rules: Rules = DEFAULT_RULES
    seed: int = 0
    workers: int = 1
    save_games: str | None = None
    record_format: str = "mat"

    def __post_init__(self) -> None:
        if self.record_format not in ("mat", "sgf"):
            raise ConfigError(f"record_format must be 'mat' or 'sgf', got {self.record_format!r}")
        for name, lo in (("games", 1), ("match_length", 0), ("workers", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise ConfigError(f"{name} must be an integer >= {lo}, got {v!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ConfigError(f"seed must be an integer >= 0, got {self.seed!r}")
        if not isinstance(self.rules, Rules):
            raise ConfigError(f"rules must be a Rules, got {self.rules!r}")
        if self.match_length and (self.rules.jacoby or self.rules.auto_doubles):
            raise ConfigError("the Jacoby rule and automatic doubles are money options, not used in a match")

    @property
    def pairs(self) -> int:
        """Duplicate pairs to play: ``ceil(games / 2)``."""
        return (self.games + 1) // 2

    def mode(self) -> str:
        """A short description, e.g. ``money, cubeful, Jacoby`` or ``matches to 7``."""
        r = self.rules
        if self.match_length:
            return f"matches to {self.match_length}" + ("" if r.cube else " (no cube)")
        parts = ["money", "cubeful" if r.cube else "cubeless"]
        if r.cube and r.jacoby:
            parts.append("Jacoby")
        if r.cube and r.auto_doubles:
            parts.append(f"automatic doubles (max {r.auto_doubles})")
        return ", ".join(parts)


@dataclass(frozen=True)
class GameSummary:
    """One game from A's point of view (what the workers send back).

    ``leg`` 0: A was player 0; 1: seats swapped.  ``points_a`` is signed.
    Cube counts are per bot; ``*_decisions``/``*_seconds`` are the decisions
    each bot was asked for and the time they took.
    """

    pair: int
    leg: int
    game: int
    points_a: int
    kind: int
    how: str
    cube: int
    turns: int
    a_doubles: int
    a_takes: int
    a_drops: int
    b_doubles: int
    b_takes: int
    b_drops: int
    a_decisions: int
    a_seconds: float
    b_decisions: int
    b_seconds: float
    fault: str | None = None
    fault_by: str | None = None


@dataclass(frozen=True)
class LegSummary:
    """One leg of a pair: its games, and for a match the final score (A, B) and whether A won."""

    pair: int
    leg: int
    games: tuple[GameSummary, ...]
    score_a: int = 0
    score_b: int = 0
    match_won_by_a: bool | None = None


def _summarise(res: GameResult, pair: int, leg: int, game: int) -> GameSummary:
    a = 0 if leg == 0 else 1  # A's seat
    b = 1 - a
    fault_by = None
    if res.fault is not None:
        fault_by = "A" if res.fault.player == a else "B"
    return GameSummary(
        pair=pair, leg=leg, game=game, points_a=res.points_for(a), kind=res.kind, how=res.how, cube=res.cube,
        turns=res.turns,
        a_doubles=res.doubles[a], a_takes=res.takes[a], a_drops=res.drops[a],
        b_doubles=res.doubles[b], b_takes=res.takes[b], b_drops=res.drops[b],
        a_decisions=res.times[a].total, a_seconds=sum(res.times[a].seconds.values()),
        b_decisions=res.times[b].total, b_seconds=sum(res.times[b].seconds.values()),
        fault=res.fault.describe() if res.fault else None, fault_by=fault_by,
    )


# ---------------------------------------------------------------------------
# playing pairs (in this process or a worker)
# ---------------------------------------------------------------------------


def short_name(spec: BotSpec) -> str:
    """A short player name for game records: ``bgbot-1ply``, ``gnubg-0ply``, ``pubeval``, ``random``..."""
    ply = spec.get("ply")
    if spec.kind == "bgbot":
        return f"bgbot-{ply if ply is not None else 1}ply"
    if spec.kind == "gnubg":
        return f"gnubg-{ply if ply is not None else 0}ply"
    return spec.kind


def _seed_bot(bot: Bot, *seed: int) -> None:
    # random bots draw from their own generator: reseed per leg so results do not depend on the worker split
    rng = getattr(bot, "rng", None)
    if isinstance(rng, np.random.Generator):
        bot.rng = np.random.default_rng(list(seed))  # type: ignore[attr-defined]


def _one_thread_if_torch(*specs: BotSpec) -> contextlib.AbstractContextManager[None]:
    """One torch thread while a bgbot bot plays a torch checkpoint (``.pt``); nothing to do otherwise.

    Shipped models play in numpy; a torch network answers one position at a
    time, where a second intra-op thread only spins.
    """
    if not any(s.kind == "bgbot" and str(s.get("checkpoint", "")).endswith(".pt") for s in specs):
        return contextlib.nullcontext()
    import importlib.util

    if importlib.util.find_spec("torch") is None:  # loading the checkpoint will say what to install
        return contextlib.nullcontext()
    from bgbot.eval.nets import torch_threads

    return torch_threads(1)


def _play_pairs(
    spec_a: BotSpec,
    spec_b: BotSpec,
    cfg: PitConfig,
    pairs: Sequence[int],
    emit: Callable[[object], None],
    stop: Callable[[], bool],
) -> None:
    """Play the legs of ``pairs`` in order, sending a :class:`LegSummary` per leg to ``emit``.

    Sends ``("fatal", message)`` and returns when a bot cannot be built or
    reset.  Bots are closed on the way out, whatever happens.
    """
    rules = cfg.rules
    cube = rules.cube or bool(cfg.match_length)  # without the cube a money game is ranked cubeless
    bots: list[Bot] = []
    with _one_thread_if_torch(spec_a, spec_b):
        try:
            try:
                bots.append(make_bot(spec_a, jacoby=cfg.rules.jacoby, seed=cfg.seed, cube=cube))
                bots.append(make_bot(spec_b, jacoby=cfg.rules.jacoby, seed=cfg.seed + 1, cube=cube))
            except BgbotError as exc:
                emit(("fatal", f"cannot start a bot: {exc}"))
                return
            a, b = bots
            save = Path(cfg.save_games) if cfg.save_games else None
            names_ab = (short_name(spec_a), short_name(spec_b))
            if names_ab[0] == names_ab[1]:
                names_ab = (f"A-{names_ab[0]}", f"B-{names_ab[1]}")

            def reset_after_fault(res: GameResult, seats: tuple[Bot, Bot]) -> None:
                # a dead or silent engine is restarted (its answers may be out of step); EngineError here stops
                # the duel.  A wrong answer leaves the conversation in step: no restart needed.
                if res.fault is not None and res.fault.engine_failed:
                    seats[res.fault.player].reset()

            for pair in pairs:
                for leg in (0, 1):
                    if stop():
                        return
                    seats = (a, b) if leg == 0 else (b, a)
                    _seed_bot(a, cfg.seed, pair, leg, 0)
                    _seed_bot(b, cfg.seed, pair, leg, 1)
                    games: list[GameResult] = []
                    a_seat = 0 if leg == 0 else 1
                    fatal: str | None = None
                    won: bool | None = None
                    score = (0, 0)
                    try:
                        if cfg.match_length:
                            m = play_match(
                                seats, cfg.match_length,
                                lambda g, pair=pair: np.random.default_rng([cfg.seed, pair, g]),
                                rules, record=save is not None,
                                on_game=lambda res, _score, seats=seats, games=games: (
                                    games.append(res), reset_after_fault(res, seats)),
                            )
                            won = None if m.winner is None else m.winner == a_seat
                        else:
                            res = play_game(
                                seats, np.random.default_rng([cfg.seed, pair]), rules, record=save is not None
                            )
                            games.append(res)
                            reset_after_fault(res, seats)
                    except EngineError as exc:
                        fatal = f"stopped at pair {pair}: a bot could not be restarted: {exc}"
                    if cfg.match_length:
                        score = (sum(g.points for g in games if g.winner == a_seat),
                                 sum(g.points for g in games if g.winner == 1 - a_seat))
                    summary = LegSummary(
                        pair, leg, tuple(_summarise(g, pair, leg, i) for i, g in enumerate(games)),
                        score[0], score[1], won,
                    )
                    if save is not None:
                        from bgbot.formats.records import write_mat

                        specs = (spec_a, spec_b) if leg == 0 else (spec_b, spec_a)
                        names = (names_ab[0], names_ab[1]) if leg == 0 else (names_ab[1], names_ab[0])
                        if cfg.record_format == "sgf":
                            from bgbot.formats.records import match_from_games, write_match

                            write_match(
                                save / f"pair{pair:05d}-{leg + 1}.sgf",
                                match_from_games(games, names, cfg.match_length, jacoby=cfg.rules.jacoby),
                            )
                        else:
                            write_mat(
                                save / f"pair{pair:05d}-{leg + 1}.mat", games, names,
                                cfg.match_length, site="bgbot pit",
                                jacoby=cfg.rules.jacoby if cfg.rules.cube else None,
                                comments=(f"player 1: {specs[0].text}", f"player 2: {specs[1].text}",
                                          f"duplicate pair {pair}, seed {cfg.seed}"),
                            )
                    emit(summary)
                    if fatal is not None:
                        emit(("fatal", fatal))
                        return
        finally:
            for bot in bots:
                bot.close()


def _worker_main(
    spec_a: BotSpec, spec_b: BotSpec, cfg: PitConfig, pairs: list[int], out: Any, stop_event: Any
) -> None:
    """Entry point of a worker process: one thread for torch, then :func:`_play_pairs`."""
    import signal
    import sys

    # a terminate from the parent should still close the bots (and stop their gnubg processes)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        _play_pairs(spec_a, spec_b, cfg, pairs, out.put, stop_event.is_set)
    except Exception as exc:  # a bug in a worker must still reach the report, not vanish
        out.put(("fatal", f"worker crashed: {type(exc).__name__}: {exc}"))
    finally:
        out.put(("done", os.getpid()))


# ---------------------------------------------------------------------------
# statistics
# ---------------------------------------------------------------------------


@dataclass
class PitReport:
    """The results of a pit, from A's point of view, and how they were obtained.

    ``ppg`` is A's mean points per game and ``ppg_se`` its standard error
    over complete duplicate pairs (None with fewer than two).  Rates are
    shares of games played: ``win_rate`` A's wins; ``gammon_rate`` /
    ``backgammon_rate`` games A won with a gammon (backgammons included) /
    backgammon played out, ``lose_*`` the same for B.  ``cube`` counts each
    bot's doubles, takes and drops; ``forfeits`` each bot's faults (the first
    few are listed in ``faults``).  ``ms_per_decision``: mean time each bot
    took per decision asked (moves with one legal play are not asked).  In
    match mode ``matches`` holds the match results (``win_rate`` and its
    ``se`` over pairs).
    """

    a: str
    b: str
    mode: str
    seed: int
    workers: int
    games: int = 0
    pairs: int = 0
    ppg: float = 0.0
    ppg_se: float | None = None
    win_rate: float = 0.0
    gammon_rate: float = 0.0
    backgammon_rate: float = 0.0
    lose_gammon_rate: float = 0.0
    lose_backgammon_rate: float = 0.0
    mean_turns: float = 0.0
    cube: dict[str, dict[str, int]] = field(default_factory=dict)
    forfeits: dict[str, int] = field(default_factory=dict)
    faults: list[str] = field(default_factory=list)
    unfinished: int = 0
    ms_per_decision: dict[str, float] = field(default_factory=dict)
    decisions: dict[str, int] = field(default_factory=dict)
    matches: dict[str, Any] | None = None
    elapsed_s: float = 0.0
    games_per_minute: float = 0.0
    stopped: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return asdict(self)

    def to_json(self) -> str:
        """The report as indented JSON."""
        return json.dumps(self.to_dict(), indent=2)

    def format(self) -> str:
        """The report as text for a terminal."""
        se = f" ± {self.ppg_se:.3f} (1 se over {self.pairs} duplicate pairs)" if self.ppg_se is not None else ""
        lines = [
            f"A = {self.a}   B = {self.b}",
            f"{self.mode}; seed {self.seed}; {self.games} games in {self.elapsed_s:.1f} s "
            f"({self.games_per_minute:.0f} games/min, {self.workers} worker{'s' if self.workers > 1 else ''})",
        ]
        if self.matches:
            m = self.matches
            mse = f" ± {100 * m['se']:.1f}" if m.get("se") is not None else ""
            lines.append(
                f"matches: A won {m['won_by_a']} of {m['played']} ({100 * m['win_rate']:.1f}%{mse})"
            )
        lines += [
            f"A points per game: {self.ppg:+.3f}{se}",
            f"A wins {100 * self.win_rate:.1f}% of games; gammons won {100 * self.gammon_rate:.1f}% / lost "
            f"{100 * self.lose_gammon_rate:.1f}%; backgammons won {100 * self.backgammon_rate:.1f}% / lost "
            f"{100 * self.lose_backgammon_rate:.1f}%; {self.mean_turns:.1f} turns a game",
        ]
        if self.cube and "cubeless" not in self.mode and "no cube" not in self.mode:
            for who in ("A", "B"):
                c = self.cube[who]
                lines.append(f"cube {who}: doubled {c['doubles']}, took {c['takes']}, dropped {c['drops']}")
        lines.append(
            f"time per decision: A {self.ms_per_decision.get('A', 0):.2f} ms "
            f"({self.decisions.get('A', 0)} decisions), B {self.ms_per_decision.get('B', 0):.2f} ms "
            f"({self.decisions.get('B', 0)} decisions)"
        )
        lines.append(f"forfeits: A {self.forfeits.get('A', 0)}, B {self.forfeits.get('B', 0)}")
        lines += [f"  {f}" for f in self.faults]
        if self.unfinished:
            lines.append(f"unfinished games (turn limit): {self.unfinished}")
        if self.stopped:
            lines.append(f"STOPPED: {self.stopped}")
        return "\n".join(lines)


MAX_FAULTS_LISTED = 20


class _Tally:
    """Running statistics over the legs received so far."""

    def __init__(self, match: bool) -> None:
        self.match = match
        self.legs: dict[tuple[int, int], LegSummary] = {}

    def add(self, leg: LegSummary) -> None:
        self.legs[(leg.pair, leg.leg)] = leg

    def games(self) -> list[GameSummary]:
        return [g for leg in self.legs.values() for g in leg.games]

    def ppg(self) -> float:
        pts = [g.points_a for g in self.games() if g.how != "unfinished"]
        return float(np.mean(pts)) if pts else 0.0

    def fill(self, r: PitReport) -> None:
        games = [g for g in self.games() if g.how != "unfinished"]
        n = len(games)
        r.games = n
        r.unfinished = len(self.games()) - n
        pts = np.array([g.points_a for g in games], dtype=np.float64)
        r.ppg = float(pts.mean()) if n else 0.0
        complete = sorted({p for p, _ in self.legs if (p, 0) in self.legs and (p, 1) in self.legs})
        r.pairs = len(complete)
        pair_pts = [
            np.mean([g.points_a for leg in (0, 1) for g in self.legs[(p, leg)].games] or [0.0]) for p in complete
        ]
        r.ppg_se = float(np.std(pair_pts, ddof=1) / math.sqrt(len(pair_pts))) if len(pair_pts) > 1 else None
        played = [g for g in games if g.how == "played"]
        won = [g for g in games if g.points_a > 0]
        r.win_rate = len(won) / n if n else 0.0
        r.gammon_rate = sum(1 for g in played if g.points_a > 0 and g.kind >= 2) / n if n else 0.0
        r.backgammon_rate = sum(1 for g in played if g.points_a > 0 and g.kind == 3) / n if n else 0.0
        r.lose_gammon_rate = sum(1 for g in played if g.points_a < 0 and g.kind >= 2) / n if n else 0.0
        r.lose_backgammon_rate = sum(1 for g in played if g.points_a < 0 and g.kind == 3) / n if n else 0.0
        r.mean_turns = float(np.mean([g.turns for g in games])) if n else 0.0
        r.cube = {
            "A": {"doubles": sum(g.a_doubles for g in games), "takes": sum(g.a_takes for g in games),
                  "drops": sum(g.a_drops for g in games)},
            "B": {"doubles": sum(g.b_doubles for g in games), "takes": sum(g.b_takes for g in games),
                  "drops": sum(g.b_drops for g in games)},
        }
        r.forfeits = {who: sum(1 for g in games if g.fault_by == who) for who in ("A", "B")}
        faults = sorted((g for g in games if g.fault), key=lambda g: (g.pair, g.leg, g.game))
        r.faults = [f"pair {g.pair} leg {g.leg + 1}: {g.fault}" for g in faults[:MAX_FAULTS_LISTED]]
        if len(faults) > MAX_FAULTS_LISTED:
            r.faults.append(f"... and {len(faults) - MAX_FAULTS_LISTED} more")
        for who, dec, sec in (("A", "a_decisions", "a_seconds"), ("B", "b_decisions", "b_seconds")):
            d = sum(getattr(g, dec) for g in games)
            s = sum(getattr(g, sec) for g in games)
            r.decisions[who] = d
            r.ms_per_decision[who] = 1000.0 * s / d if d else 0.0
        if self.match:
            legs = [leg for leg in self.legs.values() if leg.match_won_by_a is not None]
            wins = sum(1 for leg in legs if leg.match_won_by_a)
            pair_w = [
                np.mean([1.0 if self.legs[(p, leg)].match_won_by_a else 0.0 for leg in (0, 1)])
                for p in complete
                if all(self.legs[(p, leg)].match_won_by_a is not None for leg in (0, 1))
            ]
            r.matches = {
                "played": len(legs),
                "won_by_a": wins,
                "win_rate": wins / len(legs) if legs else 0.0,
                "se": float(np.std(pair_w, ddof=1) / math.sqrt(len(pair_w))) if len(pair_w) > 1 else None,
                "points_a": sum(leg.score_a for leg in legs),
                "points_b": sum(leg.score_b for leg in legs),
            }


# ---------------------------------------------------------------------------
# the runner
# ---------------------------------------------------------------------------


def run_pit(
    a: str | BotSpec,
    b: str | BotSpec,
    cfg: PitConfig = PitConfig(),
    *,
    progress: bool = False,
    on_report: Callable[[PitReport], None] | None = None,
) -> PitReport:
    """Play the duel ``cfg`` describes between bots ``a`` and ``b``; the report is from A's view.

    Bad specs raise :class:`~bgbot.errors.ConfigError`; a bot that cannot be
    started at all (gnubg missing, bad checkpoint) raises its error before
    any game.  Faults during the duel are reported, not raised.  Ctrl-C
    stops the duel and returns the results so far.  ``on_report`` is given
    the report of the legs finished so far as they finish (its ``stopped``
    says the pit is still running), at most 10% of the time spent on it, so
    that a pit killed outright keeps its finished games in what it wrote.
    """
    spec_a = a if isinstance(a, BotSpec) else parse_bot_spec(a)
    spec_b = b if isinstance(b, BotSpec) else parse_bot_spec(b)
    prepare_bot(spec_a)
    prepare_bot(spec_b)
    if cfg.save_games:
        check_output_dir(cfg.save_games, "--save-games folder")
    report = PitReport(a=spec_a.text, b=spec_b.text, mode=cfg.mode(), seed=cfg.seed, workers=cfg.workers)
    tally = _Tally(bool(cfg.match_length))
    total = 2 * cfg.pairs
    from tqdm import tqdm

    bar = tqdm(total=total, unit="match" if cfg.match_length else "game", disable=not progress, smoothing=0.05)
    t0 = time.perf_counter()
    last_write = [0.0, 0.0]  # when on_report last ran, and how long it took

    def interim() -> None:
        if on_report is None or time.perf_counter() - last_write[0] < 10 * last_write[1]:
            return
        start = time.perf_counter()
        r = PitReport(a=report.a, b=report.b, mode=report.mode, seed=report.seed, workers=report.workers)
        tally.fill(r)
        r.elapsed_s = start - t0
        r.stopped = report.stopped or "running: the pit had not finished when this report was written"
        on_report(r)
        last_write[:] = [time.perf_counter(), time.perf_counter() - start]

    def receive(item: object) -> None:
        if isinstance(item, LegSummary):
            tally.add(item)
            bar.update(1 if cfg.match_length else len(item.games))
            bar.set_postfix_str(f"A ppg {tally.ppg():+.3f}", refresh=False)
            interim()
        elif isinstance(item, tuple) and item and item[0] == "fatal":
            report.stopped = report.stopped or str(item[1])

    try:
        workers = min(cfg.workers, cfg.pairs)
        if workers == 1:
            _play_pairs(spec_a, spec_b, cfg, range(cfg.pairs), receive, lambda: report.stopped is not None)
        else:
            _run_workers(spec_a, spec_b, cfg, workers, receive, lambda: report.stopped is not None)
    except (KeyboardInterrupt, SystemError) as exc:
        if not is_interrupt(exc):
            raise
        report.stopped = "interrupted (Ctrl-C or SIGTERM)"
    except OSError as exc:  # a game record that cannot be written (full disk): keep what was played
        report.stopped = f"stopped: cannot write a game record: {exc}"
    finally:
        bar.close()
    report.elapsed_s = time.perf_counter() - t0
    tally.fill(report)
    report.games_per_minute = 60.0 * (report.games + report.unfinished) / report.elapsed_s if report.elapsed_s else 0.0
    return report


def _run_workers(
    spec_a: BotSpec,
    spec_b: BotSpec,
    cfg: PitConfig,
    workers: int,
    receive: Callable[[object], None],
    should_stop: Callable[[], bool],
) -> None:
    ctx = mp.get_context("spawn")  # torch and sockets do not survive fork() well
    out = ctx.Queue()
    stop_event = ctx.Event()
    procs = [
        ctx.Process(
            target=_worker_main,
            args=(spec_a, spec_b, cfg, list(range(w, cfg.pairs, workers)), out, stop_event),
            daemon=True,
        )
        for w in range(workers)
    ]
    for p in procs:
        p.start()
    running = len(procs)
    try:
        while running:
            try:
                item = out.get(timeout=1.0)
            except queue_mod.Empty:
                if not any(p.is_alive() for p in procs):
                    break
                continue
            if isinstance(item, tuple) and item and item[0] == "done":
                running -= 1
                continue
            receive(item)
            if should_stop():
                stop_event.set()
    except (KeyboardInterrupt, SystemError):
        stop_event.set()
        raise
    finally:
        stop_event.set()
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)
