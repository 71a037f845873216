"""The work behind the HTTP routes, without HTTP: parse a request's fields, ask the engine, build the answer.

Every function takes plain values and returns JSON-ready dicts; bad input
raises :class:`FieldError` (a :class:`~bgbot.errors.BgbotError` that names the
request field it came from and quotes it).  :class:`Service` runs the CPU work
on a small thread pool with a bound on the work in flight and on the time a
caller waits; only the cheapest work (1-ply: the network alone) runs on the event loop itself, where
the hop to a thread and back would cost more than the work.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import math
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from bgbot.engine.answers import analyse_cube, eval_answer, finished, move_answer, resolve_cube_state
from bgbot.engine.api import Engine, describe_action
from bgbot.engine.search import check_ply
from bgbot.errors import BgbotError, ConfigError, RequestLimitError, quote_input
from bgbot.formats.ids import format_xgid
from bgbot.formats.parse import parse_position_and_state
from bgbot.rules.dice import Dice, parse_dice, roll_dice
from bgbot.rules.matchstate import CubeState, MatchState
from bgbot.rules.moves import legal_moves
from bgbot.rules.position import Position
from bgbot.serve.jobs import JobStore

T = TypeVar("T")
# a roll as text: two digits 1-6, together or with one separator (as the CLI's dice, without its extra leniency)
DICE_TEXT = re.compile(r"[1-6][-/, ]?[1-6]")
DICE_SPELLINGS = "'31', '3-1', '3/1', '3,1' or '3 1'"
# work at this ply or less runs on the event loop, without the hop to the thread pool (Service.run)
INLINE_PLY = 1


class FieldError(BgbotError):
    """Bad input in one request field: ``field`` names it, ``kind`` is the bgbot error class behind it."""

    def __init__(self, field: str, message: str, kind: str = "BgbotError") -> None:
        super().__init__(message)
        self.field = field
        self.kind = kind


@contextlib.contextmanager
def field(name: str) -> Iterator[None]:
    """Turn a :class:`~bgbot.errors.BgbotError` raised inside into a :class:`FieldError` naming ``name``."""
    try:
        yield
    except FieldError:
        raise
    except BgbotError as exc:
        raise FieldError(name, str(exc), type(exc).__name__) from None


@dataclasses.dataclass(frozen=True)
class ServeConfig:
    """Limits and defaults of a server.

    ``ply``: the ply of a request that names none; ``max_ply``: the deepest a
    request may ask (deeper is a 400); ``timeout``: seconds a request waits for
    its evaluation before a 503; ``threads``: evaluation threads of each
    worker process; ``queue``: evaluations in flight (running or waiting)
    beyond which new ones are refused at once with a 503; ``max_body``: bytes
    of a request body (larger is a 413), ``max_record_body`` the same for
    ``/v1/analyse``, whose body carries a whole match record;
    ``header_timeout``: seconds a client has to send a request's headers
    (:mod:`bgbot.serve.guard`).

    Rollouts: a synchronous ``/v1/rollout`` rolls out at most
    ``max_sync_trials`` games per line and may take ``rollout_timeout``
    seconds (then a 503); longer work is a job (``/v1/jobs/rollout``,
    :mod:`bgbot.serve.jobs`) of at most ``max_trials`` games per line, run in
    its own process with ``job_workers`` worker processes, stopped after
    ``job_timeout`` seconds; at most ``max_jobs`` jobs are queued or running at
    once, and a finished job's result is kept ``job_keep`` seconds.  Jobs live
    in ``jobs_dir`` (None: a temporary folder of the server's own).

    ``workers``: the server's worker processes (``bgbot serve --workers``, as
    ``/v1/health`` states it); with several, the web board's games live in
    ``board_dir``, a private folder they share (None: in the process's memory).
    """

    ply: int = 1
    max_ply: int = 2
    timeout: float = 10.0
    threads: int = 2
    queue: int = 32
    max_body: int = 16_384
    max_record_body: int = 1_100_000
    header_timeout: float = 10.0
    max_sync_trials: int = 288
    rollout_timeout: float = 300.0
    max_trials: int = 5184
    max_jobs: int = 4
    job_timeout: float = 3600.0
    job_keep: float = 3600.0
    job_workers: int = 1
    jobs_dir: str | None = None
    checkpoint: str | None = None
    workers: int = 1
    board_dir: str | None = None

    def to_json(self) -> str:
        """The config as JSON, for the worker processes of ``bgbot serve`` (:meth:`from_json`)."""
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ServeConfig:
        """The config :meth:`to_json` wrote (checked again)."""
        return cls(**json.loads(text))

    def __post_init__(self) -> None:
        check_ply(self.ply)
        check_ply(self.max_ply)
        if self.ply > self.max_ply:
            raise ConfigError(
                f"the default ply {self.ply!r} is deeper than the most a request may ask ({self.max_ply!r})"
            )
        for name, lo in (
            ("threads", 1),
            ("queue", 1),
            ("max_body", 256),
            ("max_record_body", 256),
            ("max_sync_trials", 1),
            ("max_trials", 1),
            ("max_jobs", 1),
            ("job_workers", 1),
            ("workers", 1),
        ):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise ConfigError(f"{name} must be an integer >= {lo}, got {v!r}")
        for name in ("timeout", "header_timeout", "rollout_timeout", "job_timeout", "job_keep"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or not v > 0:
                raise ConfigError(f"{name} must be a positive number of seconds, got {v!r}")

    def limits(self) -> dict[str, Any]:
        """The limits a client runs into, as ``/v1/health`` states them."""
        plain = ("timeout", "queue", "max_ply", "max_body", "max_record_body", "header_timeout")
        return {
            **{name: getattr(self, name) for name in plain},
            "rollout": {"max_trials": self.max_sync_trials, "timeout": self.rollout_timeout},
            "jobs": {
                "max_jobs": self.max_jobs,
                "max_trials": self.max_trials,
                "timeout": self.job_timeout,
                "keep": self.job_keep,
                "workers": self.job_workers,
            },
        }


class Service:
    """One engine, one thread pool: the answers of every ``/v1`` and wildbg route."""

    def __init__(self, engine: Engine, config: ServeConfig | None = None) -> None:
        self.engine = engine
        self.config = config or ServeConfig()
        self._pool = ThreadPoolExecutor(self.config.threads, thread_name_prefix="bgbot-eval")
        self._slots = threading.BoundedSemaphore(self.config.queue)
        self._rng_lock = threading.Lock()
        self._rng = np.random.default_rng()
        self._rollout_lock = threading.Lock()  # one rollout at a time per process: it has its own worker
        self._jobs_lock = threading.Lock()
        self._jobs: JobStore | None = None
        self._own_jobs_dir: Path | None = None
        # load the lazy parts (match equity table, bear-off database) now, not in racing request threads
        _ = self.engine.met
        self.engine.evaluate(Position.from_points({1: 2}, {1: 2}))
        # and the kernels of a 1-ply checker play, which runs on the event loop (run's ``ply``)
        for cubeless in (False, True):
            self.engine.best_move(Position.start(), (3, 1), 1, CubeState(), cubeless=cubeless)

    def close(self) -> None:
        """Stop the thread pool (running evaluations finish) and the rollout jobs of this process."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        with self._jobs_lock:
            if self._jobs is not None:
                self._jobs.close()
            if self._own_jobs_dir is not None:
                shutil.rmtree(self._own_jobs_dir, ignore_errors=True)

    def jobs(self) -> JobStore:
        """The server's rollout jobs (:mod:`bgbot.serve.jobs`), started on first use."""
        with self._jobs_lock:
            if self._jobs is None:
                if self.config.jobs_dir is not None:
                    folder = Path(self.config.jobs_dir)
                else:
                    folder = self._own_jobs_dir = Path(tempfile.mkdtemp(prefix="bgbot-jobs-"))
                self._jobs = JobStore(folder, self._job_model(folder), self.config)
            return self._jobs

    def _job_model(self, folder: Path) -> Path | None:
        """The network file a job's process loads: the engine's checkpoint, or its numpy network saved in ``folder``."""
        if self.engine.checkpoint is not None:
            return Path(self.engine.checkpoint)
        from bgbot.eval.evaluate import NetEvaluator
        from bgbot.eval.inference import NumpyNet, save_npz

        base = self.engine.base
        if isinstance(base, NetEvaluator) and isinstance(base.net, NumpyNet):
            return Path(save_npz(folder / f"model-{os.getpid()}.npz", base.net))
        return None

    # ---- running work --------------------------------------------------
    async def run(
        self, fn: Callable[[], T], timeout: float | None = None, too_slow: str = "", ply: int | None = None
    ) -> T:
        """Run ``fn`` on the pool; a :class:`RequestLimitError` when too much is in flight or it is too slow.

        ``timeout``: seconds to wait (default the server's ``timeout``); ``too_slow`` is added to the
        error's message.  A slot is held until ``fn`` really ends (a timed-out evaluation still runs to
        its end in its thread), so slow requests cannot pile up.

        ``ply``: the look-ahead of the work, when it is a checker play, cube decision or evaluation.  At
        :data:`INLINE_PLY` or less (the network alone: well under a millisecond a decision) ``fn`` runs at
        once on the calling thread, the event loop: the hop to a pool thread and back would cost more than
        the work itself.
        """
        if ply is not None and ply <= INLINE_PLY:
            return fn()
        limit = self.config.timeout if timeout is None else timeout
        if not self._slots.acquire(blocking=False):
            raise RequestLimitError(
                f"the server is busy: {self.config.queue} evaluations are in flight; try again shortly"
            )
        try:
            future = self._pool.submit(fn)
        except RuntimeError:
            self._slots.release()
            raise
        future.add_done_callback(lambda _f: self._slots.release())
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), limit)
        except TimeoutError:
            raise RequestLimitError(
                f"the evaluation took longer than the server's limit of {limit:g} s{too_slow}"
            ) from None

    # ---- parsing -------------------------------------------------------
    def ply(self, ply: object) -> int:
        """The request's ply, or the server's default; deeper than ``max_ply`` is a :class:`FieldError`."""
        if ply is None:
            return self.config.ply
        with field("ply"):
            n = check_ply(ply)
        if n > self.config.max_ply:
            raise FieldError(
                "ply",
                f"ply {ply!r} is deeper than this server allows (at most {self.config.max_ply}; bgbot serve --max-ply)",
                "RequestLimitError",
            )
        return n

    @staticmethod
    def position(text: str) -> tuple[Position, MatchState | None]:
        """A position (side on roll's view) and its state, from the ``position`` field."""
        with field("position"):
            return parse_position_and_state(text)

    @staticmethod
    def board(counts: list[int]) -> Position:
        """A position (side on roll's view) from the ``board`` field's 26 signed counts, checked by the rules."""
        with field("board"):
            return Position(counts)

    @staticmethod
    def dice(value: object, state: MatchState | None = None, position: str = "") -> Dice:
        """The ``dice`` field, or the dice the position text carries (XGID)."""
        if value is None:
            if state is not None and state.dice is not None:
                return state.dice
            raise FieldError(
                "dice", f"no dice given for {position!r}: add dice like '31', or an XGID with dice", "InvalidDiceError"
            )
        if isinstance(value, str) and not DICE_TEXT.fullmatch(value.strip()):
            raise FieldError(
                "dice",
                f"dice must be two digits 1-6 like {DICE_SPELLINGS}, got {quote_input(value)}",
                "InvalidDiceError",
            )
        with field("dice"):
            return parse_dice(value)

    @staticmethod
    def cube_state(state: MatchState | None, body: Any) -> CubeState:
        """The cube and score of the side on roll: the position's own, overridden by the request's fields."""
        given = ("cube", "owner", "match", "score", "crawford", "jacoby")
        names = [n for n in given if getattr(body, n) is not None and getattr(body, n) is not False]
        with field(names[0] if len(names) == 1 else "cube/owner/match/score" if names else "position"):
            return resolve_cube_state(state, **{n: getattr(body, n) for n in given})

    def check_match(self, cs: CubeState) -> CubeState:
        """``cs`` if the engine's match equity table covers it."""
        with field("match"):
            return self.engine.cube_state(cs)

    # ---- answers (run on the pool) ----------------------------------------
    def move(self, pos: Position, dice: Dice, ply: int, cs: CubeState, cubeless: bool) -> dict[str, Any]:
        """The ``bgbot move --json`` answer."""
        with field("position"):
            return move_answer(self.engine, self.engine.best_move(pos, dice, ply, cs, cubeless=cubeless))

    def cube(self, pos: Position, cs: CubeState, ply: int) -> dict[str, Any]:
        """The ``bgbot cube --json`` answer."""
        with field("position"):
            return analyse_cube(self.engine, pos, cs, ply)

    def eval(self, pos: Position, ply: int) -> dict[str, Any]:
        """The ``bgbot eval --json`` answer."""
        with field("position"):
            return eval_answer(self.engine, pos, ply, self.engine.evaluate(pos, ply))

    def analyse(self, record: str, fmt: str | None, ply: int, mistakes: int, luck: bool) -> dict[str, Any]:
        """The ``bgbot analyse --json`` answer for the text of a .mat or .sgf record (``source`` is 'request')."""
        from bgbot.formats.records import parse_match

        kind = fmt or ("sgf" if record.lstrip().startswith("(;") else "mat")
        with field("record"):
            match = parse_match(record, kind, "request")
            return finished(self.engine.analyse(match, ply, luck=luck).to_dict(mistakes))

    def trials(self, trials: int, job: bool = False) -> int:
        """The ``trials`` field: at most ``max_sync_trials`` for ``/v1/rollout``, ``max_trials`` for a job."""
        c = self.config
        if job and trials > c.max_trials:
            raise FieldError(
                "trials",
                f"trials {trials!r} is more than this server rolls out in a job (at most {c.max_trials} games a "
                "line; bgbot serve --max-trials)",
                "RequestLimitError",
            )
        if not job and trials > c.max_sync_trials:
            raise FieldError(
                "trials",
                f"trials {trials!r} is more than a synchronous /v1/rollout rolls out (at most {c.max_sync_trials}): "
                f"POST the same body to /v1/jobs/rollout to run it as a job (at most {c.max_trials} games a line)",
                "RequestLimitError",
            )
        return trials

    @staticmethod
    def rollout_settings(body: Any, ply: int) -> Any:
        """The :class:`~bgbot.engine.rollout.RolloutSettings` of a rollout request (checked: a :class:`FieldError`)."""
        from bgbot.engine.rollout import RolloutSettings

        with field("trials"):
            return RolloutSettings(
                trials=body.trials,
                ply=ply,
                truncate=body.truncate,
                cubeful=body.cubeful,
                luck=body.luck,
                seed=body.seed,
            )

    def rollout(self, pos: Position, dice: Dice | None, cs: CubeState, body: Any, ply: int) -> dict[str, Any]:
        """The ``bgbot rollout --json`` answer, on one local worker (figures do not depend on the workers)."""
        self.trials(body.trials)
        settings = self.rollout_settings(body, ply)
        with field("position"), self._rollout_lock:
            result = self.engine.rollout(pos, dice, cs, settings, top=body.top, executor="local", workers=1)
        return finished(result.to_dict())

    @staticmethod
    def show(pos: Position, state: MatchState | None) -> dict[str, Any]:
        """What a board needs to draw ``pos`` (side on roll's view): counts, IDs, pips, off, state."""
        me_pips, opp_pips = pos.pips()
        me_off, opp_off = pos.off()
        out: dict[str, Any] = {
            "position": pos.gnubg_id(),
            "xgid": format_xgid(pos, state),
            "board": list(pos.board),
            "pips": [me_pips, opp_pips],
            "off": [me_off, opp_off],
            "game_over": pos.is_game_over(),
        }
        if state is not None:
            cs = CubeState.of(state)
            out["state"] = {
                "cube": {"value": cs.cube, "owner": cs.owner},
                "match": cs.match,
                "score": list(cs.score),
                "crawford": cs.crawford,
                "dice": list(state.dice) if state.dice else None,
                "doubled": state.doubled,
            }
        return out

    @staticmethod
    def moves(pos: Position, dice: Dice) -> dict[str, Any]:
        """Every legal play of ``dice`` in ``pos`` (mover's view), in the generator's order, with its results."""
        with field("position"):
            if pos.is_game_over():
                raise FieldError(
                    "position", f"the game is over in {pos.gnubg_id()!r}: nobody moves", "InvalidPositionError"
                )
            plays = legal_moves(pos, dice)
        rows = []
        for m in plays:
            after = m.result.swap()  # the mover's view of the result
            rows.append(
                {
                    "move": m.text if m.steps else "cannot move",
                    "steps": [[s[0], s[1], bool(s[2])] for s in m.steps],
                    "result": m.result.gnubg_id(),
                    "board": list(after.board),
                    "game_over": after.is_game_over(),
                    "points": _points(after),
                }
            )
        return {"position": pos.gnubg_id(), "dice": list(dice), "board": list(pos.board), "moves": rows}

    def game_cube(self, cube: int, owner: str) -> CubeState:
        """A money game's cube from the ``cube``/``owner`` fields (owner from the position's side)."""
        with field("cube" if owner == "center" else "cube/owner"):
            return CubeState(cube=cube, owner=owner)  # type: ignore[arg-type]

    def take(self, pos: Position, cs: CubeState, ply: int) -> dict[str, Any]:
        """bgbot's answer to a double by the side on roll in ``pos`` (its view; ``cs`` from its side)."""
        with field("position"):
            if pos.is_game_over():
                raise FieldError("position", f"the game is over in {pos.gnubg_id()!r}", "InvalidPositionError")
        if cs.owner == "opp":
            raise FieldError(
                "owner", "the side on roll cannot double: bgbot owns the cube (owner 'opp')", "InvalidCubeError"
            )
        with field("position"):
            d = self.engine.cube_action(pos, cs, ply=ply)
        return {"take": d.takes, "decision_text": describe_action(d, cs.owner), "ply": ply}

    def bot_move(
        self,
        pos: Position,
        dice: Dice | None,
        ply: int,
        seed: int | None,
        cs: CubeState | None = None,
        may_double: bool = False,
    ) -> dict[str, Any]:
        """bgbot on roll in ``pos`` (its view) doubles, or plays ``dice`` (rolled if None) at ``ply``; money game.

        With ``may_double`` and the cube available to bgbot it first makes its cube decision: a
        double is answered ``{"double": true, ...}`` without a move.  Otherwise ``board``/``result``
        are the position after its move from the **other** side's view (the human's, on roll next);
        ``points`` is what bgbot won at cube 1 if the move ended the game.
        """
        cs = cs or CubeState()
        with field("position"):
            if pos.is_game_over():
                raise FieldError(
                    "position", f"the game is over in {pos.gnubg_id()!r}: nobody moves", "InvalidPositionError"
                )
        if may_double and cs.owner != "opp":
            with field("position"):
                d = self.engine.cube_action(pos, cs, ply=ply)
            if d.doubles:
                return {"double": True, "decision_text": describe_action(d, cs.owner), "ply": ply}
        if dice is None:
            if seed is not None:
                dice = roll_dice(np.random.default_rng(seed))
            else:
                with self._rng_lock:
                    dice = roll_dice(self._rng)
        with field("position"):
            a = self.engine.best_move(pos, dice, ply, cs)
        best = a.best
        mover_after = best.result.swap()
        return {
            "double": False,
            "dice": list(dice),
            "ply": ply,
            "move": best.move,
            "steps": [[s[0], s[1], bool(s[2])] for s in best.steps],
            "equity": best.equity,
            "result": best.result.gnubg_id(),
            "board": list(best.result.board),
            "game_over": mover_after.is_game_over(),
            "points": _points(mover_after),
        }


def _points(mover_view: Position) -> int:
    """Points (cube 1) the side whose view ``mover_view`` is won, if it has just ended the game; else 0."""
    if not mover_view.is_game_over():
        return 0
    return max(mover_view.result(), 0)
