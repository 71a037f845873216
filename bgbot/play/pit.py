"""Pit two bots against each other: duplicate dice, cube or not, money or matches, on the executor.

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
* **Tasks.**  The pairs are cut into seeded tasks of ``pairs_per_task``
  consecutive pairs (:func:`pit_task`: the two bot specs, the rules, the seed,
  the pairs), run by :func:`bgbot.engine.executor.run_tasks`: in this process
  (one local worker), on ``workers`` local processes, or on Ray
  (``executor='ray'``, ``'ray://HOST:PORT'``).  The cut depends on neither, and a
  pair's games depend on the pair alone (dice and random bots are seeded by
  the pair), so the same seed gives the same games on any executor.  A worker
  keeps its bots from task to task (one gnubg process per worker for the whole
  duel, not one per task) and rebuilds them only for other specs.  With
  ``resume`` (a folder) every finished task is kept there as it finishes, and
  a killed pit given the same folder plays only the tasks it lacks.
* **Networks by hash.**  A bgbot bot's network is loaded here (its checkpoint,
  ``.npz`` or torch ``.pt``, or the default model), turned into numpy and shipped
  to the workers by hash with the run (:class:`~bgbot.engine.executor.ModelBlob`),
  as rollouts ship theirs: a Ray node needs neither the file nor torch, and
  resuming with a checkpoint whose weights changed is refused (the hash is part
  of every task).
* **Game records** (``save_games``) are made by the workers and written here,
  atomically, as each task's results come in.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import math
import multiprocessing as mp
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bgbot.config import check_output_dir
from bgbot.engine.executor import (
    NO_MODEL,
    Journal,
    ModelBlob,
    RunStats,
    Task,
    parse_executor,
    prepare_executor,
    run_tasks,
    shipped_model,
    shutdown_pools,
)
from bgbot.errors import BgbotError, ConfigError, EngineError, is_interrupt
from bgbot.play.bots import Bot, BotSpec, make_bot, parse_bot_spec, prepare_bot
from bgbot.play.match import play_match
from bgbot.play.table import DEFAULT_RULES, GameResult, Rules, play_game

__all__ = ["GameSummary", "LegSummary", "PitConfig", "PitReport", "close_bots", "pit_task", "pit_tasks", "run_pit"]

PIT_TASK = "bgbot.play.pit:pit_task"
DEFAULT_PAIRS_PER_TASK = 2
_IN_PROCESS_KINDS = ("bgbot", "pubeval", "random")  # bots that hold no process, socket or file open


@dataclass(frozen=True)
class PitConfig:
    """What to play, and where.

    ``games``: money games, or matches when ``match_length`` > 0; rounded up
    to an even number (duplicate pairs).  ``rules``: how each game is played
    (:class:`~bgbot.play.table.Rules`: cube, Jacoby and automatic doubles for
    money, backgammon count, turn limit).  ``workers``: parallel workers (1:
    this process).  ``executor``: ``local`` (processes), ``ray``,
    ``ray://HOST:PORT`` or a Ray cluster's ``HOST:PORT``.  ``pairs_per_task``:
    duplicate pairs in one task.  ``resume``: a results folder keeping every
    finished task (a killed pit given it again goes on from there).
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
    executor: str = "local"
    pairs_per_task: int = DEFAULT_PAIRS_PER_TASK
    resume: str | None = None

    def __post_init__(self) -> None:
        if self.record_format not in ("mat", "sgf"):
            raise ConfigError(f"record_format must be 'mat' or 'sgf', got {self.record_format!r}")
        for name, lo in (("games", 1), ("match_length", 0), ("workers", 1), ("pairs_per_task", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise ConfigError(f"{name} must be an integer >= {lo}, got {v!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ConfigError(f"seed must be an integer >= 0, got {self.seed!r}")
        if not isinstance(self.rules, Rules):
            raise ConfigError(f"rules must be a Rules, got {self.rules!r}")
        if self.match_length and (self.rules.jacoby or self.rules.auto_doubles):
            raise ConfigError("the Jacoby rule and automatic doubles are money options, not used in a match")
        parse_executor(self.executor)  # ExecutorError quoting a bad one

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
        pair=pair,
        leg=leg,
        game=game,
        points_a=res.points_for(a),
        kind=res.kind,
        how=res.how,
        cube=res.cube,
        turns=res.turns,
        a_doubles=res.doubles[a],
        a_takes=res.takes[a],
        a_drops=res.drops[a],
        b_doubles=res.doubles[b],
        b_takes=res.takes[b],
        b_drops=res.drops[b],
        a_decisions=res.times[a].total,
        a_seconds=sum(res.times[a].seconds.values()),
        b_decisions=res.times[b].total,
        b_seconds=sum(res.times[b].seconds.values()),
        fault=res.fault.describe() if res.fault else None,
        fault_by=fault_by,
    )


# ---------------------------------------------------------------------------
# playing pairs (a task, in this process or on a worker)
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


@dataclass(frozen=True)
class _Play:
    """What a task plays with (rebuilt on the worker from the task's payload)."""

    spec_a: BotSpec
    spec_b: BotSpec
    match_length: int
    rules: Rules
    seed: int
    record: str | None  # None, or the record format: 'mat' / 'sgf'

    def payload(self) -> dict[str, Any]:
        return {
            "match_length": self.match_length,
            "rules": asdict(self.rules),
            "seed": self.seed,
            "record": self.record,
        }

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> _Play:
        cfg = payload["config"]
        return cls(
            parse_bot_spec(payload["a"]["spec"]),
            parse_bot_spec(payload["b"]["spec"]),
            int(cfg["match_length"]),
            Rules(**cfg["rules"]),
            int(cfg["seed"]),
            cfg["record"],
        )


def _play_pairs(
    a: Bot,
    b: Bot,
    play: _Play,
    pairs: Sequence[int],
    emit: Callable[[LegSummary], None],
    records: list[dict[str, str]],
) -> str | None:
    """Play the legs of ``pairs`` in order, sending a :class:`LegSummary` per leg to ``emit``.

    Game records (when ``play.record``) go to ``records`` as ``{"name", "text"}``.  Returns None, or the
    message that stops the duel (a bot that cannot be restarted), after the leg it happened in.
    """
    rules = play.rules
    spec_a, spec_b = play.spec_a, play.spec_b
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
            seats = (a, b) if leg == 0 else (b, a)
            _seed_bot(a, play.seed, pair, leg, 0)
            _seed_bot(b, play.seed, pair, leg, 1)
            games: list[GameResult] = []
            a_seat = 0 if leg == 0 else 1
            fatal: str | None = None
            won: bool | None = None
            score = (0, 0)
            try:
                if play.match_length:
                    m = play_match(
                        seats,
                        play.match_length,
                        lambda g, pair=pair: np.random.default_rng([play.seed, pair, g]),
                        rules,
                        record=play.record is not None,
                        on_game=lambda res, _score, seats=seats, games=games: (
                            games.append(res),
                            reset_after_fault(res, seats),
                        ),
                    )
                    won = None if m.winner is None else m.winner == a_seat
                else:
                    res = play_game(
                        seats, np.random.default_rng([play.seed, pair]), rules, record=play.record is not None
                    )
                    games.append(res)
                    reset_after_fault(res, seats)
            except EngineError as exc:
                fatal = f"stopped at pair {pair}: a bot could not be restarted: {exc}"
            if play.match_length:
                score = (
                    sum(g.points for g in games if g.winner == a_seat),
                    sum(g.points for g in games if g.winner == 1 - a_seat),
                )
            emit(
                LegSummary(
                    pair,
                    leg,
                    tuple(_summarise(g, pair, leg, i) for i, g in enumerate(games)),
                    score[0],
                    score[1],
                    won,
                )
            )
            if play.record is not None:
                names = (names_ab[0], names_ab[1]) if leg == 0 else (names_ab[1], names_ab[0])
                records.append(_record(games, names, play, pair, leg))
            if fatal is not None:
                return fatal
    return None


def _record(games: list[GameResult], names: tuple[str, str], play: _Play, pair: int, leg: int) -> dict[str, str]:
    """The game record of one leg as ``{"name": file name, "text": .mat or .sgf text}``."""
    from bgbot.formats.records import format_mat, format_match, match_from_games

    jacoby = play.rules.jacoby
    if play.record == "sgf":
        text = format_match(match_from_games(games, names, play.match_length, jacoby=jacoby), "sgf")
        return {"name": f"pair{pair:05d}-{leg + 1}.sgf", "text": text}
    specs = (play.spec_a, play.spec_b) if leg == 0 else (play.spec_b, play.spec_a)
    text = format_mat(
        games,
        names,
        play.match_length,
        site="bgbot pit",
        jacoby=jacoby if play.rules.cube else None,
        comments=(
            f"player 1: {specs[0].text}",
            f"player 2: {specs[1].text}",
            f"duplicate pair {pair}, seed {play.seed}",
        ),
    )
    return {"name": f"pair{pair:05d}-{leg + 1}.mat", "text": text}


# the bots of this process (a worker's, or this one's for one worker), kept from task to task: role -> (key, bot)
_BOTS: dict[str, tuple[str, Bot]] = {}
_HOOKED = False


def close_bots() -> None:
    """Close the bots this process keeps between pit tasks (stops their gnubg processes, connections)."""
    while _BOTS:
        _, (_, bot) = _BOTS.popitem()
        with contextlib.suppress(Exception):
            bot.close()


def _on_sigterm(signum: int, frame: object) -> None:
    close_bots()
    import os

    os._exit(128 + signum)


def _hook_exit() -> None:
    """Close the kept bots when this process ends; in a local worker process, on SIGTERM too."""
    global _HOOKED
    if _HOOKED:
        return
    _HOOKED = True
    atexit.register(close_bots)
    if mp.parent_process() is not None:  # a spawned local worker (the executor terminates it on Ctrl-C)
        with contextlib.suppress(ValueError):  # (not the main thread)
            if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
                signal.signal(signal.SIGTERM, _on_sigterm)


def _build_bot(bot: dict[str, Any], spec: BotSpec, *, jacoby: bool, seed: int, cube: bool) -> Bot:
    if spec.kind == "bgbot" and bot.get("model"):
        from bgbot.engine.api import Engine
        from bgbot.engine.search import parse_filters
        from bgbot.play.bots import BgbotBot

        o = dict(spec.options)
        ckpt = bot.get("checkpoint")
        engine = Engine(
            shipped_model(str(bot["model"])).evaluator(),  # the network as shipped (no bear-off: the engine's)
            bearoff=bool(o.get("bearoff", True)),
            checkpoint=Path(ckpt) if ckpt else None,
            games_trained=bot.get("games_trained"),
            filters=parse_filters(o.get("filter", "normal")),
        )
        return BgbotBot(
            engine,
            ply=int(o.get("ply", 1)),  # type: ignore[call-overload]
            cube_ply=o.get("cube_ply"),  # type: ignore[arg-type]
            name=spec.text,
            cubeful=bool(o.get("cubeful", cube)),
        )
    return make_bot(spec, jacoby=jacoby, seed=seed, cube=cube)


def _bot_for(role: str, bot: dict[str, Any], spec: BotSpec, *, jacoby: bool, seed: int, cube: bool) -> Bot:
    """This process's bot for ``role`` ('A'/'B'), kept from earlier tasks when they had the same spec."""
    key = json.dumps([bot, jacoby, seed, cube], sort_keys=True)
    kept = _BOTS.get(role)
    if kept is not None and kept[0] == key:
        return kept[1]
    if kept is not None:
        del _BOTS[role]
        with contextlib.suppress(Exception):
            kept[1].close()
    _hook_exit()
    new = _build_bot(bot, spec, jacoby=jacoby, seed=seed, cube=cube)
    _BOTS[role] = (key, new)
    return new


def pit_task(evaluator: object, payload: dict[str, Any], seed: int) -> dict[str, Any]:
    """The executor task: play duplicate pairs ``payload['pairs'] = [p0, p1)`` between bots A and B.

    ``payload``: ``a``/``b`` (``{"spec": text, "model": hash or None, ...}``), ``config`` (match length,
    rules, seed, record format or None), ``pairs``.  Returns JSON-ready ``{"legs": [LegSummary as dict,
    ...], "records": [{"name", "text"}, ...], "fatal": None or the message that stops the duel}``, every
    figure from A's point of view.  ``evaluator`` is unused (the bots' networks travel by hash).
    """
    play = _Play.from_payload(payload)
    p0, p1 = (int(x) for x in payload["pairs"])
    cube = play.rules.cube or bool(play.match_length)  # without the cube a money game is ranked cubeless
    legs: list[LegSummary] = []
    records: list[dict[str, str]] = []
    try:
        try:
            a = _bot_for("A", payload["a"], play.spec_a, jacoby=play.rules.jacoby, seed=seed, cube=cube)
            b = _bot_for("B", payload["b"], play.spec_b, jacoby=play.rules.jacoby, seed=seed + 1, cube=cube)
        except BgbotError as exc:
            close_bots()
            return {"legs": [], "records": [], "fatal": f"cannot start a bot: {exc}"}
        fatal = _play_pairs(a, b, play, range(p0, p1), legs.append, records)
    except Exception as exc:
        close_bots()  # a bot's conversation may be out of step: the next task starts afresh
        if is_interrupt(exc):
            raise
        fatal = f"a task crashed at pairs {p0}-{p1 - 1}: {type(exc).__name__}: {exc}"
    except BaseException:  # Ctrl-C, SIGTERM
        close_bots()
        raise
    if fatal is not None:
        close_bots()
    return {"legs": [asdict(leg) for leg in legs], "records": records, "fatal": fatal}


def _leg_from_dict(d: dict[str, Any]) -> LegSummary:
    return LegSummary(
        int(d["pair"]),
        int(d["leg"]),
        tuple(GameSummary(**g) for g in d["games"]),
        int(d["score_a"]),
        int(d["score_b"]),
        d["match_won_by_a"],
    )


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
    ``se`` over pairs).  ``executor``: where the games ran; ``resumed_games``:
    games taken from the ``resume`` folder, not played again (not counted in
    ``games_per_minute``).
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
    executor: str = "local"
    resumed_games: int = 0

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
            f"({self.games_per_minute:.0f} games/min, {self.workers} worker{'s' if self.workers > 1 else ''}"
            f"{'' if self.executor == 'local' else ' on ' + self.executor}"
            f"{f'; {self.resumed_games} taken from the results folder' if self.resumed_games else ''})",
        ]
        if self.matches:
            m = self.matches
            mse = f" ± {100 * m['se']:.1f}" if m.get("se") is not None else ""
            lines.append(f"matches: A won {m['won_by_a']} of {m['played']} ({100 * m['win_rate']:.1f}%{mse})")
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
        self._points = 0.0  # A's points over the finished games received, kept as they come so that
        self._finished = 0  # the progress bar's ppg costs O(1) a leg, not O(games so far)

    def add(self, leg: LegSummary) -> None:
        old = self.legs.get((leg.pair, leg.leg))
        for g, sign in [(g, -1) for g in (old.games if old else [])] + [(g, 1) for g in leg.games]:
            if g.how != "unfinished":
                self._points += sign * g.points_a
                self._finished += sign
        self.legs[(leg.pair, leg.leg)] = leg

    def games(self) -> list[GameSummary]:
        return [g for key in sorted(self.legs) for g in self.legs[key].games]  # in pair order, however they came

    def ppg(self) -> float:
        """A's mean points per finished game so far (the progress bar's figure)."""
        return self._points / self._finished if self._finished else 0.0

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
            "A": {
                "doubles": sum(g.a_doubles for g in games),
                "takes": sum(g.a_takes for g in games),
                "drops": sum(g.a_drops for g in games),
            },
            "B": {
                "doubles": sum(g.b_doubles for g in games),
                "takes": sum(g.b_takes for g in games),
                "drops": sum(g.b_drops for g in games),
            },
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


def _ship(spec: BotSpec) -> tuple[dict[str, Any], ModelBlob | None]:
    """What a task says about a bot, and the network to ship with the run (bgbot bots: by hash)."""
    if spec.kind != "bgbot":
        return {"spec": spec.text, "model": None}, None
    from bgbot.eval.models import load_model

    model = load_model(spec.get("checkpoint"))  # type: ignore[arg-type]
    blob = ModelBlob.from_net(model.net, bearoff=False)  # the bot's engine adds the bear-off database itself
    return {
        "spec": spec.text,
        "model": blob.hash,
        "checkpoint": str(model.path),
        "games_trained": model.games_trained,
    }, blob


def pit_tasks(spec_a: BotSpec, spec_b: BotSpec, cfg: PitConfig) -> tuple[list[Task], list[ModelBlob]]:
    """The tasks of the duel ``cfg`` describes (``cfg.pairs_per_task`` pairs each) and the networks they need."""
    bot_a, blob_a = _ship(spec_a)
    bot_b, blob_b = _ship(spec_b)
    blobs = {b.hash: b for b in (blob_a, blob_b) if b is not None}
    play = _Play(spec_a, spec_b, cfg.match_length, cfg.rules, cfg.seed, cfg.record_format if cfg.save_games else None)
    base = {"a": bot_a, "b": bot_b, "config": play.payload()}
    per = cfg.pairs_per_task
    tasks = [
        Task(PIT_TASK, NO_MODEL, base | {"pairs": [p0, min(cfg.pairs, p0 + per)]}, cfg.seed)
        for p0 in range(0, cfg.pairs, per)
    ]
    return tasks, list(blobs.values())


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
    any game, and so do a Ray cluster that cannot be reached and a ``resume``
    folder of another run (:class:`~bgbot.errors.JournalError`).  Faults
    during the duel are reported, not raised.  Ctrl-C (or SIGTERM, turned
    into it) stops the duel and returns the results of the tasks finished so
    far.  ``on_report`` is given the report of the games finished so far as
    tasks finish (its ``stopped`` says the pit is still running), at most 10%
    of the time spent on it, so that a pit killed outright keeps its finished
    games in what it wrote.
    """
    spec_a = a if isinstance(a, BotSpec) else parse_bot_spec(a)
    spec_b = b if isinstance(b, BotSpec) else parse_bot_spec(b)
    prepare_bot(spec_a)
    prepare_bot(spec_b)
    save = Path(cfg.save_games) if cfg.save_games else None
    if save is not None:
        check_output_dir(str(save), "--save-games folder")
    tasks, blobs = pit_tasks(spec_a, spec_b, cfg)
    executor = prepare_executor(cfg.executor)
    journal = None
    if cfg.resume is not None:
        about = {
            "what": "pit",
            "a": spec_a.text,
            "b": spec_b.text,
            "mode": cfg.mode(),
            "games": 2 * cfg.pairs,
            "seed": cfg.seed,
        }
        journal = Journal(cfg.resume, tasks, about)
    workers = min(cfg.workers, len(tasks))
    report = PitReport(
        a=spec_a.text,
        b=spec_b.text,
        mode=cfg.mode(),
        seed=cfg.seed,
        workers=workers,
        executor=executor.describe(),
    )
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
        same_pit = ("a", "b", "mode", "seed", "workers", "executor", "resumed_games")  # which pit; tallies afresh
        r = PitReport(**{k: getattr(report, k) for k in same_pit})
        tally.fill(r)
        r.elapsed_s = start - t0
        r.stopped = report.stopped or "running: the pit had not finished when this report was written"
        on_report(r)
        last_write[:] = [time.perf_counter(), time.perf_counter() - start]

    stats = RunStats()
    it = run_tasks(
        tasks,
        None,
        executor=executor,
        workers=workers,
        journal=journal,
        stats=stats,
        models=blobs,
        inline=True,
        keep=lambda res: res.get("fatal") is None,  # a task stopped part-way is played again
    )
    try:
        executed = 0
        for _, res in it:
            from_journal = stats.executed == executed
            executed = stats.executed
            if save is not None:
                from bgbot.fileio import write_text_atomic

                for rec in res["records"]:
                    write_text_atomic(save / rec["name"], rec["text"], parents=True)
            for d in res["legs"]:
                leg = _leg_from_dict(d)
                tally.add(leg)
                n = len(leg.games)
                if from_journal:
                    report.resumed_games += n
                bar.update(1 if cfg.match_length else n)
            bar.set_postfix_str(f"A ppg {tally.ppg():+.3f}", refresh=False)
            if res.get("fatal"):
                report.stopped = str(res["fatal"])
                break
            interim()
    except (KeyboardInterrupt, SystemError) as exc:
        if not is_interrupt(exc):
            raise
        report.stopped = "interrupted (Ctrl-C or SIGTERM)"
    except OSError as exc:  # a game record that cannot be written (full disk): keep what was played
        report.stopped = f"stopped: cannot write a game record: {exc}"
    finally:
        with contextlib.suppress(Exception):
            it.close()  # cancels the tasks not started (an early stop)
        bar.close()
        local_pool = executor.kind == "local" and workers > 1
        if report.stopped and report.stopped.startswith("interrupted") and local_pool:
            shutdown_pools(kill=True)  # running tasks too: their games are not wanted any more
        elif local_pool and not all(s.kind in _IN_PROCESS_KINDS for s in (spec_a, spec_b)):
            shutdown_pools()  # the workers' gnubg processes and connections end with the pit
        if executor.kind == "local" and workers == 1:
            close_bots()  # the bots this process built
    report.elapsed_s = time.perf_counter() - t0
    tally.fill(report)
    played = report.games + report.unfinished - report.resumed_games
    report.games_per_minute = 60.0 * played / report.elapsed_s if report.elapsed_s else 0.0
    return report
