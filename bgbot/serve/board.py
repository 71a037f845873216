"""The web board's games: a person against bgbot, money or a match of any length, refereed on the server.

``bgbot serve`` mounts :func:`board_router` under ``/v1/board``.  The page at
``/`` (``static/board.js``) only draws what these routes answer and sends
what the person clicks: every rule lives here and below (the rules engine
for legal plays, :class:`~bgbot.play.bots.local.BgbotBot` for bgbot's checker
play and cube actions, :mod:`bgbot.formats.records` for the record).

The person is player 0 (bottom of the board, XGID's bottom player, the left
column of a ``.mat``), bgbot is player 1.  Every answer is the whole state of
the game (:meth:`BoardGame.state`): the board drawn from the person's view,
the gnubg ``Position ID:Match ID`` and the XGID of the decision on the table
(position from the side on roll, as gnubg and XG write them), the pip counts,
dice, cube, score, whether this is the Crawford game, and the list of
``actions`` legal now.  The page offers exactly those actions.

The turn, as on gnubg's and XG's boards:

* the opening roll (one die each, ties rolled again); the higher die moves;
* before each later roll the side on roll may double when the cube is
  centred or its own, below 64, not in the Crawford game, and not dead (in a
  match: the doubler's score plus the cube already reaches the match length,
  which covers 1-point matches, double match point and the post-Crawford
  leader, as gnubg's ``GetDPEq``).  When the person cannot double, the server
  rolls for them at once;
* the person moves checker by checker (``hop``: one checker from a point to
  another, over one or more dice), can take back each hop (``undo``) and
  plays the move when it is a whole legal play (``commit``); a move with a
  single legal result is made for them;
* the person may resign a single game, a gammon or a backgammon, as far as
  that loss is still possible; bgbot accepts when the resignation is worth at
  least what it expects from playing on (cubeless money equity, or match
  winning chances at the score), as gnubg does;
* bgbot, on roll, doubles and takes as its cube decisions say and plays its
  best move at the game's ply.

Games are kept at most :data:`MAX_GAMES` at once; a game nobody touched for
:data:`GAME_TTL` seconds is dropped, and the oldest goes first when the store
is full.  One server process keeps them in its memory (:class:`GameStore`);
the worker processes of ``bgbot serve --workers N`` share them in a private
folder (:class:`FolderGameStore`), so that each request of a game may go to
any worker.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pickle
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path as FilePath
from typing import Annotated, Any, Literal

import numpy as np
from fastapi import APIRouter, HTTPException, Path, Query
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from bgbot.engine.answers import analyse_cube, finished, move_answer
from bgbot.errors import BgbotError, IllegalMoveError
from bgbot.fileio import atomic_open
from bgbot.formats.ids import encode_match_id, format_xgid
from bgbot.formats.records import RecordEntry, format_match, match_from_games
from bgbot.play.bots.local import BgbotBot
from bgbot.rules.dice import Dice, opening_roll, roll_dice
from bgbot.rules.matchstate import (
    GAME_DROP,
    GAME_OVER,
    GAME_PLAYING,
    GAME_RESIGNED,
    MAX_CUBE,
    CubeState,
    MatchState,
    crawford_game,
    cube_available,
)
from bgbot.rules.moves import Move, format_move, legal_moves, parse_move, step
from bgbot.rules.position import Outcome, Position, game_points
from bgbot.serve.jobs import file_lock
from bgbot.serve.service import FieldError, Service, field

HUMAN, BOT = 0, 1
NAMES = ("you", "bgbot")
MAX_GAMES = 256  # games kept at once; the least recently used goes when a new one needs room
GAME_TTL = 6 * 3600.0  # seconds a game is kept after its last request
MAX_EVENTS = 400  # lines of a game's log kept (a long game has ~120)

Phase = Literal["roll", "move", "take", "game_over", "match_over"]
ResignLevel = Literal[1, 2, 3]
RESIGN_NAMES = {1: "a single game", 2: "a gammon", 3: "a backgammon"}


# ---------------------------------------------------------------------------
# checker-by-checker input: which hops keep a legal play within reach
# ---------------------------------------------------------------------------

Board = tuple[int, ...]
Step = tuple[int, int, bool]


@functools.lru_cache(maxsize=4096)
def _finals(board: Board, rest: tuple[int, ...]) -> frozenset[Board]:
    """Every board (mover's view) the mover can end on from ``board`` with the dice ``rest`` still to play.

    Dice are played in any order while one can be; a board where none can is final.  The legal
    plays (most dice used, the higher die when only one can be) are a subset: :func:`hop_state`
    keeps a partial move only while one of them is still reachable.
    """
    out: set[Board] = set()
    for d in sorted(set(rest)):
        left = list(rest)
        left.remove(d)
        for src in range(25, 0, -1):
            if board[src] <= 0:
                continue
            s = step(board, src, d)
            if s is not None:
                out |= _finals(tuple(s[0]), tuple(left))
    return frozenset(out) if out else frozenset({board})


@dataclass(frozen=True)
class Partial:
    """A move under way: the board after the hops so far (mover's view), the dice left, the steps made."""

    board: Board
    rest: tuple[int, ...]
    steps: tuple[Step, ...]


class TurnInput:
    """The person's move of ``dice`` in ``pos`` (their view), built hop by hop; checked against the legal plays."""

    def __init__(self, pos: Position, dice: Dice) -> None:
        self.pos = pos
        self.dice = dice
        self.plays: list[Move] = legal_moves(pos, dice)
        # the legal results seen from the mover (what a partial board is compared with)
        self.legal: dict[Board, Move] = {m.result.swap().board: m for m in self.plays}
        d1, d2 = dice
        self.start = Partial(pos.board, (d1,) * 4 if d1 == d2 else (d1, d2), ())

    def reachable(self, p: Partial) -> bool:
        """True while some legal play can still be reached from ``p``."""
        return not _finals(p.board, p.rest).isdisjoint(self.legal)

    def complete(self, p: Partial) -> Move | None:
        """The legal play ``p`` has made, or None while it is unfinished."""
        return self.legal.get(p.board)

    def hops_from(self, p: Partial, src: int) -> dict[int, Partial]:
        """Each destination one checker on ``src`` can reach now (over one or more dice), with the partial after.

        A destination reached by several routes keeps the one with the fewest steps, the larger die
        first (bearing off: the smaller die first, which leaves the larger for later).
        """
        out: dict[int, Partial] = {}
        frontier = [(src, p)]
        while frontier:
            nxt: list[tuple[int, Partial]] = []
            for at, cur in frontier:
                if at == 0:
                    continue
                for d in sorted(set(cur.rest), reverse=True):
                    s = step(cur.board, at, d)
                    if s is None:
                        continue
                    nb, st = s
                    left = list(cur.rest)
                    left.remove(d)
                    q = Partial(tuple(nb), tuple(left), (*cur.steps, st))
                    if not self.reachable(q):
                        continue
                    to = st[1]
                    best = out.get(to)
                    if best is None or (to == 0 and len(q.steps) == len(best.steps) and sum(q.rest) > sum(best.rest)):
                        out[to] = q
                    nxt.append((to, q))
            frontier = nxt
        return out

    def targets(self, p: Partial) -> list[dict[str, int]]:
        """Every hop legal now: ``{"from", "to", "steps"}`` (0 = off, 25 = the bar)."""
        rows = []
        for src in range(25, 0, -1):
            if p.board[src] > 0:
                for to, q in sorted(self.hops_from(p, src).items(), reverse=True):
                    rows.append({"from": src, "to": to, "steps": len(q.steps) - len(p.steps)})
        return rows

    def hop(self, p: Partial, src: int, dst: int) -> Partial:
        """``p`` after one checker moves ``src`` -> ``dst``; an :class:`~bgbot.errors.IllegalMoveError` if it cannot."""
        if not (0 <= src <= 25 and 0 <= dst <= 25) or src == 0:
            raise IllegalMoveError(f"no checker can move from {src!r} to {dst!r}: points are 1-24, 25 the bar, 0 off")
        if p.board[src] <= 0:
            raise IllegalMoveError(f"you have no checker on {_point_name(src)} to move")
        q = self.hops_from(p, src).get(dst)
        if q is None:
            left = "-".join(str(d) for d in p.rest) or "none"
            raise IllegalMoveError(
                f"{_point_name(src)} to {_point_name(dst)} is not part of a legal play of "
                f"{self.dice[0]}-{self.dice[1]} here (dice left: {left})"
            )
        return q


def _point_name(p: int) -> str:
    return "the bar" if p == 25 else "off" if p == 0 else f"point {p}"


# ---------------------------------------------------------------------------
# a game in progress and its match
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PlayedBoardGame:
    """A game of the board as the record writers read it (players 0 = the person, 1 = bgbot)."""

    actions: tuple[RecordEntry, ...]
    winner: int | None
    points: int
    how: str
    crawford: bool


def resign_limit(pos: Position) -> int:
    """The most a side can still lose in ``pos`` (its own view): 1 once it has borne off, 2 when it can no
    longer be caught in the opponent's home board or on the bar, else 3 (single, gammon, backgammon)."""
    if pos.off()[0] > 0:
        return 1
    b = pos.board
    behind = b[25] > 0 or any(b[i] > 0 for i in range(19, 25))
    return 3 if behind or pos.has_contact() else 2


class BoardGame:
    """One person's session against bgbot: a money session or a match, with its games so far.

    Mutated only under :attr:`lock`; every public method that changes it takes the lock itself.
    """

    def __init__(self, game_id: str, bot: BgbotBot, match: int, jacoby: bool, seed: int | None, max_ply: int) -> None:
        self.id = game_id
        self.bot = bot
        self.length = match
        self.jacoby = jacoby and match == 0
        self.max_ply = max_ply
        self.rng = np.random.default_rng(seed)
        self.lock = threading.Lock()
        self.touched = time.monotonic()
        self.score = [0, 0]
        self.game_score = (0, 0)  # the score before the game in progress
        self.crawford_played = False
        self.games: list[PlayedBoardGame] = []
        # the game in progress (set by _start_game)
        self.number = 0
        self.crawford = False
        self.cube = 1
        self.owner = -1
        self.pos = Position.start()  # from on_roll's view
        self.on_roll = HUMAN
        self.dice: Dice | None = None
        self.phase: Phase = "roll"
        self.actions: list[RecordEntry] = []
        self.events: list[str] = []
        self.turn_input: TurnInput | None = None
        self.partials: list[Partial] = []
        self.result: dict[str, Any] | None = None
        self.last_bot_dice: Dice | None = None
        self._start_game()

    def __getstate__(self) -> dict[str, Any]:
        """The game without its bot (an engine) and lock: what :class:`FolderGameStore` keeps."""
        state = dict(self.__dict__)
        state["bot"] = self.bot.ply
        del state["lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """A kept game; its ``bot`` is the ply until the store gives it the bot of that ply."""
        self.__dict__.update(state)
        self.lock = threading.Lock()

    # ---- rules ------------------------------------------------------------
    def match_state(
        self,
        on_roll: int | None = None,
        *,
        doubled: bool = False,
        dice: Dice | None = None,
        score: tuple[int, int] | None = None,
        game_state: int = GAME_PLAYING,
        resign: int = 0,
    ) -> MatchState:
        """The state of the game for ``on_roll`` (default: the side on roll), players absolute.

        ``score``: the score before the game (default: the score now); ``game_state`` and ``resign``:
        a game over (:meth:`decision_position`).
        """
        return MatchState(
            match_length=self.length,
            score=(self.score[0], self.score[1]) if score is None else score,
            cube_value=self.cube,
            cube_owner=self.owner,
            on_roll=self.on_roll if on_roll is None else on_roll,
            doubled=doubled,
            dice=dice,
            crawford=self.crawford,
            jacoby=self.jacoby,
            game_state=game_state,
            resign=resign,
        )

    def cube_dead_reason(self, player: int) -> str:
        """Why ``player`` may not double now ('' when it may): gnubg's availability of the cube."""
        if cube_available(self.length, (self.score[0], self.score[1]), self.cube, self.owner, player, self.crawford):
            return ""
        if self.crawford:
            return "the cube is out of play in the Crawford game"
        if self.owner == 1 - player:
            return f"{NAMES[1 - player]} owns the cube"
        if self.cube >= MAX_CUBE:
            return f"the cube is at its highest face {MAX_CUBE}"
        # what is left: the cube is dead, a win at this cube already gives the match
        if self.length == 1:
            return "the cube is dead in a 1-point match"
        return f"the cube is dead: a win at cube {self.cube} already wins the match"

    def _say(self, text: str) -> None:
        self.events.append(text)
        del self.events[:-MAX_EVENTS]

    # ---- the turn loop, one step per request --------------------------------
    def _start_game(self) -> None:
        self.number += 1
        self.game_score = (self.score[0], self.score[1])
        self.crawford = crawford_game(self.length, self.game_score, self.crawford_played)
        self.crawford_played = self.crawford_played or self.crawford
        self.cube, self.owner = 1, -1
        self.actions, self.events, self.result = [], [], None
        self.last_bot_dice = None
        first, dice, _ = opening_roll(self.rng)
        mine, theirs = (dice[0], dice[1]) if first == HUMAN else (dice[1], dice[0])
        head = f"Game {self.number}" + (" (Crawford game)" if self.crawford else "")
        self._say(f"{head}: you roll {mine}, bgbot rolls {theirs}; {NAMES[first]} to play {dice[0]}-{dice[1]}.")
        self.pos, self.on_roll = Position.start(), first
        if first == HUMAN:
            self._human_rolled(dice)
        else:
            self._bot_moves(dice)

    def _finish(self, winner: int, points: int, how: str, kind: int = 0) -> None:
        self.score[winner] += points
        self.games.append(PlayedBoardGame(tuple(self.actions), winner, points, how, self.crawford))
        what = {1: "", 2: " (gammon)", 3: " (backgammon)"}.get(kind, "")
        verb = "win" if winner == HUMAN else "wins"
        self._say(f"{NAMES[winner].capitalize()} {verb} {points} point{'s' if points != 1 else ''}{what}.")
        self.result = {"winner": NAMES[winner], "points": points, "how": how, "kind": kind}
        self.dice, self.turn_input, self.partials = None, None, []
        over = bool(self.length) and max(self.score) >= self.length
        self.phase = "match_over" if over else "game_over"
        if over:
            self._say(f"{NAMES[winner].capitalize()} {verb} the match {self.score[0]}-{self.score[1]}.")

    def _move_made(self, player: int, dice: Dice, result: Position) -> None:
        """``player`` (on roll in ``self.pos``) played ``dice`` to ``result`` (the opponent's view)."""
        self.actions.append(RecordEntry(player, "move", self.pos, dice, result, self.cube))
        self.dice, self.turn_input, self.partials = None, None, []
        if result.off()[1] == 15:
            out = Outcome.of(result, 1 - player, self.cube, jacoby=self.jacoby, cube_turned=self.owner != -1)
            self.pos, self.on_roll = result, 1 - player
            self._finish(out.winner, out.points, "played", int(out.kind))
            return
        self.pos, self.on_roll = result, 1 - player
        if self.on_roll == BOT:
            self._bot_turn()
        else:
            self._human_turn()

    def _human_turn(self) -> None:
        """The person is on roll before rolling: they choose (roll, double, resign) if they may double, else roll."""
        self.phase = "roll"
        if self.cube_dead_reason(HUMAN):
            self._human_rolled(roll_dice(self.rng))

    def _human_rolled(self, dice: Dice) -> None:
        ti = TurnInput(self.pos, dice)
        self._say(f"You roll {dice[0]}-{dice[1]}.")
        if len(ti.plays) == 1:
            only = ti.plays[0]
            self._say(f"You play {only.text} (the only play)." if only.steps else "You cannot move.")
            self._move_made(HUMAN, dice, only.result)
            return
        self.phase, self.dice, self.turn_input, self.partials = "move", dice, ti, [ti.start]

    def _bot_turn(self) -> None:
        """bgbot on roll before its roll: it doubles if its cube decision says so, else rolls and moves."""
        if not self.cube_dead_reason(BOT) and self.bot.double(self.pos, self.match_state(BOT)):
            self.actions.append(RecordEntry(BOT, "double", self.pos, cube=2 * self.cube))
            self._say(f"bgbot doubles to {2 * self.cube}.")
            self.phase = "take"
            return
        self._bot_moves(roll_dice(self.rng))

    def _bot_moves(self, dice: Dice) -> None:
        plays = legal_moves(self.pos, dice)
        if len(plays) == 1:
            chosen = plays[0]
        else:
            result = self.bot.move(self.pos, dice, self.match_state(BOT, dice=dice))
            chosen = next(m for m in plays if m.result == result)  # the bot answers one of the legal results
        self.last_bot_dice = dice
        self._say(f"bgbot rolls {dice[0]}-{dice[1]} and plays {chosen.text}." if chosen.steps
                  else f"bgbot rolls {dice[0]}-{dice[1]} and cannot move.")
        self._move_made(BOT, dice, chosen.result)

    # ---- the person's actions -------------------------------------------------
    def _need(self, action: str, where: str) -> None:
        if action not in self.legal_actions():
            now = ", ".join(self.legal_actions()) or "none"
            raise FieldError(
                where,
                f"{action!r} is not a legal action now (game {self.number}, phase {self.phase!r}; legal: {now})",
                "IllegalActionError",
            )

    def legal_actions(self) -> list[str]:
        """The actions the person may take now, in the page's order."""
        if self.phase == "roll":
            acts = ["roll"]
            if not self.cube_dead_reason(HUMAN):
                acts.append("double")
            return [*acts, "resign"]
        if self.phase == "move":
            p = self.partials[-1]
            acts = ["hop"] if self.turn_input is not None and self.turn_input.complete(p) is None else []
            if self.turn_input is not None and self.turn_input.complete(p) is not None:
                acts.append("commit")
            if len(self.partials) > 1:
                acts.append("undo")
            return [*acts, "move", "resign"]
        if self.phase == "take":
            return ["take", "pass"]
        if self.phase == "game_over":
            return ["next"]
        return []

    def roll(self) -> None:
        """The person rolls instead of doubling."""
        self._need("roll", "action")
        self._human_rolled(roll_dice(self.rng))

    def double(self) -> None:
        """The person doubles; bgbot takes or passes at once."""
        self._need("double", "action")
        self.actions.append(RecordEntry(HUMAN, "double", self.pos, cube=2 * self.cube))
        self._say(f"You double to {2 * self.cube}.")
        if self.bot.take(self.pos, self.match_state(HUMAN, doubled=True)):
            self.cube, self.owner = 2 * self.cube, BOT
            self.actions.append(RecordEntry(BOT, "take", self.pos, cube=self.cube))
            self._say("bgbot takes.")
            self._human_rolled(roll_dice(self.rng))
        else:
            self.actions.append(RecordEntry(BOT, "drop", self.pos, cube=self.cube))
            self._say("bgbot passes.")
            self._finish(HUMAN, self.cube, "dropped")

    def take(self) -> None:
        """The person takes bgbot's double; bgbot rolls and moves."""
        self._need("take", "action")
        self.cube, self.owner = 2 * self.cube, HUMAN
        self.actions.append(RecordEntry(HUMAN, "take", self.pos, cube=self.cube))
        self._say("You take.")
        self._bot_moves(roll_dice(self.rng))

    def drop(self) -> None:
        """The person passes bgbot's double: bgbot wins the cube's value."""
        self._need("pass", "action")
        self.actions.append(RecordEntry(HUMAN, "drop", self.pos, cube=self.cube))
        self._say("You pass.")
        self._finish(BOT, self.cube, "dropped")

    def hop(self, src: int, dst: int) -> None:
        """One checker of the person's from ``src`` to ``dst`` (their numbering; 25 the bar, 0 off)."""
        self._need("hop", "hop")
        assert self.turn_input is not None  # phase "move" has one
        with field("hop"):
            self.partials.append(self.turn_input.hop(self.partials[-1], src, dst))

    def undo(self) -> None:
        """Take back the last hop of this turn."""
        self._need("undo", "action")
        self.partials.pop()

    def commit(self) -> None:
        """Play the move the hops have made (a whole legal play)."""
        self._need("commit", "action")
        assert self.turn_input is not None and self.dice is not None
        mv = self.turn_input.complete(self.partials[-1])
        assert mv is not None  # "commit" is legal only then
        self._play(mv)

    def move_text(self, text: str) -> None:
        """Play a whole move given in standard notation (``24/18 13/11``)."""
        self._need("move", "move")
        assert self.turn_input is not None and self.dice is not None
        with field("move"):
            mv = parse_move(self.pos, self.dice, text, legal=self.turn_input.plays)
        self._play(mv)

    def _play(self, mv: Move) -> None:
        assert self.dice is not None
        self._say(f"You play {mv.text}." if mv.steps else "You cannot move.")
        self._move_made(HUMAN, self.dice, mv.result)

    def resign_levels(self) -> list[int]:
        """The resignations the person may offer now (1 single, 2 gammon, 3 backgammon)."""
        if "resign" not in self.legal_actions():
            return []
        mine = self.pos if self.on_roll == HUMAN else self.pos.swap()
        return list(range(1, resign_limit(mine) + 1))

    def resign_points(self, level: int) -> int:
        """Points a resignation of ``level`` gives bgbot (cube, Jacoby applied)."""
        return game_points(level, self.cube, jacoby=self.jacoby, cube_turned=self.owner != -1)

    def offer_resign(self, level: int) -> bool:
        """The person offers to resign ``level`` now; bgbot judges it by its 1-ply probabilities (:meth:`resign`)."""
        self._need("resign", "action")
        mine = self.pos if self.on_roll == HUMAN else self.pos.swap()
        eng = self.bot.engine
        if self.dice is not None:  # after the roll: the position after the person's best play
            probs = eng.best_move(mine, self.dice, 1, self.match_state(HUMAN, dice=self.dice)).best.probs
        else:
            probs = eng.evaluate(mine, 1)
        return self.resign(level, np.asarray(probs, dtype=np.float64))

    def resign(self, level: int, human_probs: np.ndarray) -> bool:
        """The person offers to resign ``level``; bgbot accepts if it gains nothing by playing on.

        ``human_probs``: the person's cubeless probabilities now (their view; after their best
        move when they have rolled).  Returns whether bgbot accepted.
        """
        self._need("resign", "action")
        if level not in self.resign_levels():
            raise FieldError(
                "level",
                f"resign level {level!r} is more than you can still lose here "
                f"(possible: {', '.join(map(str, self.resign_levels()))})",
                "IllegalActionError",
            )
        points = self.resign_points(level)
        w, wg, wbg, lg, lbg = (float(x) for x in human_probs)
        # bgbot's chances: it wins what the person loses
        q = {1: (1 - w) - lg, 2: lg - lbg, 3: lbg, -1: w - wg, -2: wg - wbg, -3: wbg}
        if self.length:
            met = self.bot.engine.met
            a, b = self.length - self.score[BOT], self.length - self.score[HUMAN]
            post = not self.crawford and self.length > 1 and 1 in (a, b)

            def mwc(pts: int) -> float:
                return met.mwc_after(a, b, pts, crawford=self.crawford, post_crawford=post)

            play_on = sum(p * mwc(self.resign_points(abs(k)) * (1 if k > 0 else -1)) for k, p in q.items())
            accept = mwc(points) >= play_on - 1e-9
        else:
            play_on = sum(p * self.resign_points(abs(k)) * (1 if k > 0 else -1) for k, p in q.items())
            accept = points >= play_on - 1e-9
        self._say(f"You offer to resign {RESIGN_NAMES[level]} ({points} point{'s' if points != 1 else ''}).")
        if not accept:
            self._say("bgbot declines: it expects more from playing on.")
            return False
        self._say("bgbot accepts.")
        self._finish(BOT, points, "resigned", level)
        return True

    def next_game(self) -> None:
        """Start the next game of the match or money session."""
        self._need("next", "action")
        self._start_game()

    # ---- answers ----------------------------------------------------------------
    def decision_position(self) -> tuple[Position, MatchState]:
        """The position on the table from its side on roll's view, and its state (what the IDs describe)."""
        if self.phase in ("game_over", "match_over"):
            how = self.result["how"] if self.result else "played"
            gs = {"dropped": GAME_DROP, "resigned": GAME_RESIGNED}.get(how, GAME_OVER)
            # the final position of the game at the score it was played at (an XGID has no game state, and
            # the score after the last game of a match does not fit one); the answer's "score" is the new one
            resign = self.result["kind"] if self.result and how == "resigned" else 0
            return self.pos, self.match_state(score=self.game_score, game_state=gs, resign=resign)
        if self.phase == "take":
            return self.pos, self.match_state(BOT, doubled=True)
        return self.pos, self.match_state(self.on_roll, dice=self.dice)

    def state(self) -> dict[str, Any]:
        """The whole game as JSON: what the page draws and which actions it offers (see the module docstring)."""
        pos, st = self.decision_position()
        match_id = encode_match_id(st)
        mine = pos if st.on_roll == HUMAN else pos.swap()  # the person's view
        drawn = Position(self.partials[-1].board, validate=False) if self.phase == "move" and self.partials else mine
        pips = drawn.pips()
        off = drawn.off()
        out: dict[str, Any] = {
            "id": self.id,
            "match": self.length,
            "jacoby": self.jacoby,
            "ply": self.bot.ply,
            "max_ply": self.max_ply,
            "game": self.number,
            "phase": self.phase,
            "on_roll": NAMES[st.on_roll] if self.phase not in ("game_over", "match_over") else None,
            "score": [self.score[0], self.score[1]],
            "crawford": self.crawford,
            "cube": {"value": self.cube, "owner": "center" if self.owner == -1 else NAMES[self.owner]},
            "cube_note": self.cube_dead_reason(HUMAN) if self.phase == "roll" else "",
            "dice": list(self.dice) if self.dice else None,
            "bot_dice": list(self.last_bot_dice) if self.last_bot_dice else None,
            "board": list(drawn.board),
            "pips": [pips[0], pips[1]],
            "off": [off[0], off[1]],
            "position_id": f"{pos.gnubg_id()}:{match_id}",
            "xgid": format_xgid(pos, st),
            "actions": self.legal_actions(),
            "resign_levels": self.resign_levels(),
            "events": list(self.events),
            "result": self.result,
            "match_winner": (
                NAMES[0 if self.score[0] >= self.length else 1] if self.phase == "match_over" else None
            ),
            "games": len(self.games),
        }
        if self.phase == "move" and self.turn_input is not None:
            ti, p = self.turn_input, self.partials[-1]
            done = ti.complete(p)
            out["turn"] = {
                "hops": len(self.partials) - 1,
                "steps": [[s[0], s[1], bool(s[2])] for s in p.steps],
                "text": format_move(p.steps) if p.steps else "",
                "dice_left": list(p.rest) if done is None else [],
                "targets": [] if done is not None else ti.targets(p),
                "complete": done is not None,
            }
        return out

    def record(self, fmt: str) -> str:
        """The games so far as ``.mat`` or ``.sgf`` text: the game in progress unfinished, a pending double left out."""
        games = list(self.games)
        if self.phase not in ("game_over", "match_over"):  # the game in progress, even before its first move
            acts = self.actions[:-1] if self.actions and self.actions[-1].kind == "double" else self.actions
            games.append(PlayedBoardGame(tuple(acts), None, 0, "unfinished", self.crawford))
        rec = match_from_games(games, NAMES, self.length, jacoby=self.jacoby)
        return format_match(rec, fmt)


# ---------------------------------------------------------------------------
# the store of games
# ---------------------------------------------------------------------------


class GameStore:
    """The games in memory: at most ``limit``, each dropped ``ttl`` seconds after its last request."""

    def __init__(self, limit: int = MAX_GAMES, ttl: float = GAME_TTL) -> None:
        self.limit = limit
        self.ttl = ttl
        self._games: OrderedDict[str, BoardGame] = OrderedDict()
        self._lock = threading.Lock()

    def _expire(self, now: float) -> None:
        for gid in [g for g, v in self._games.items() if now - v.touched > self.ttl]:
            del self._games[gid]

    def add(self, make: Callable[[str], BoardGame]) -> BoardGame:
        """A new game (made by ``make(id)``), room made by dropping the least recently used."""
        gid = secrets.token_urlsafe(12)
        game = make(gid)
        with self._lock:
            self._expire(time.monotonic())
            while len(self._games) >= self.limit:
                self._games.popitem(last=False)
            self._games[gid] = game
        return game

    def get(self, gid: str) -> BoardGame:
        """The game ``gid``; HTTP 404 naming it when there is none (never made, expired or pushed out)."""
        now = time.monotonic()
        with self._lock:
            self._expire(now)
            game = self._games.get(gid)
            if game is None:
                raise HTTPException(
                    404,
                    f"no game {gid!r} on this server: it never existed, was idle over {self.ttl / 3600:g} h, "
                    f"or was pushed out by newer games (at most {self.limit} are kept); start a new one",
                )
            self._games.move_to_end(gid)
            game.touched = now
        return game

    @contextlib.contextmanager
    def use(self, gid: str) -> Iterator[BoardGame]:
        """The game ``gid`` under its lock (HTTP 404 when there is none); what the block changes stays."""
        game = self.get(gid)
        with game.lock:
            yield game

    def __len__(self) -> int:
        return len(self._games)


class FolderGameStore:
    """The games in ``folder``, shared by the worker processes of one server (each request may go to any).

    A game is a pickle ``ID.game`` (written atomically) with a lock file ``ID.lock``: :meth:`use` holds
    the lock (across processes and threads) while it loads the game, runs the block and saves it.  The
    folder must be private to the server (``bgbot serve`` makes a temporary one, mode 0700): its files are
    unpickled.  ``bot(ply)`` gives the loaded games their bot.  Limits as :class:`GameStore`: at most
    ``limit`` games, each dropped ``ttl`` seconds after its last request (by the file's time).
    """

    def __init__(
        self, folder: str | os.PathLike[str], bot: Callable[[int], BgbotBot], limit: int = MAX_GAMES,
        ttl: float = GAME_TTL,
    ) -> None:
        self.folder = FilePath(folder)
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.bot = bot
        self.limit = limit
        self.ttl = ttl

    def _file(self, gid: str) -> FilePath:
        return self.folder / f"{gid}.game"

    def _drop(self, path: FilePath) -> None:
        """Remove a game's files, unless a request holds the game now."""
        with file_lock(path.with_suffix(".lock"), blocking=False) as free:
            if free:
                path.unlink(missing_ok=True)
                path.with_suffix(".lock").unlink(missing_ok=True)

    def _save(self, game: BoardGame) -> None:
        with atomic_open(self._file(game.id)) as f:
            pickle.dump(game, f, protocol=pickle.HIGHEST_PROTOCOL)

    def add(self, make: Callable[[str], BoardGame]) -> BoardGame:
        """A new game (made by ``make(id)``), saved; room made by dropping expired games, then the oldest."""
        gid = secrets.token_urlsafe(12)
        game = make(gid)
        now = time.time()
        kept = []
        for path in self.folder.glob("*.game"):
            with contextlib.suppress(FileNotFoundError):
                age = now - path.stat().st_mtime
                if age > self.ttl:
                    self._drop(path)
                else:
                    kept.append((age, path))
        for _, path in sorted(kept, reverse=True)[: max(0, len(kept) - self.limit + 1)]:
            self._drop(path)
        with file_lock(self._file(gid).with_suffix(".lock")):
            self._save(game)
        return game

    @contextlib.contextmanager
    def use(self, gid: str) -> Iterator[BoardGame]:
        """The game ``gid`` under its lock (HTTP 404 when there is none); what the block changes is saved."""
        path = self._file(gid)
        with file_lock(path.with_suffix(".lock")):
            try:
                with open(path, "rb") as f:
                    game = pickle.load(f)
            except FileNotFoundError:
                game = None
            if game is None or time.time() - path.stat().st_mtime > self.ttl:
                path.unlink(missing_ok=True)
                path.with_suffix(".lock").unlink(missing_ok=True)
                raise HTTPException(
                    404,
                    f"no game {gid!r} on this server: it never existed, was idle over {self.ttl / 3600:g} h, "
                    f"or was pushed out by newer games (at most {self.limit} are kept); start a new one",
                )
            game.bot = self.bot(game.bot)
            try:
                yield game
            finally:
                game.touched = time.monotonic()
                self._save(game)

    def __len__(self) -> int:
        return sum(1 for _ in self.folder.glob("*.game"))


# ---------------------------------------------------------------------------
# HTTP
# ---------------------------------------------------------------------------


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NewGameBody(_Body):
    """``POST /v1/board``: a new money session (``match`` 0) or match against bgbot."""

    match: Annotated[StrictInt, Field(ge=0)] = Field(0, description="match length in points, 0 = money play")
    ply: StrictInt | None = Field(None, description="bgbot's ply (1-3, XG numbering); omitted: the server's default")
    jacoby: StrictBool = Field(False, description="Jacoby rule (money play only)")
    seed: Annotated[StrictInt, Field(ge=0)] | None = Field(None, description="seed of the dice (repeatable games)")


class HopBody(_Body):
    """``POST /v1/board/{id}/hop``: one checker from a point to another (the person's numbering)."""

    src: Annotated[StrictInt, Field(ge=0, le=25)] = Field(alias="from", description="24..1, 25 = the bar")
    to: Annotated[StrictInt, Field(ge=0, le=25)] = Field(description="24..1, 0 = off")


class MoveTextBody(_Body):
    """``POST /v1/board/{id}/move``: a whole move in standard notation."""

    move: Annotated[StrictStr, Field(max_length=80)] = Field(examples=["24/18 13/11"])


class ResignBody(_Body):
    """``POST /v1/board/{id}/resign``: offer to resign a single game (1), a gammon (2) or a backgammon (3)."""

    level: Literal[1, 2, 3] = 1


class HintBody(_Body):
    """``POST /v1/board/{id}/hint``: bgbot's analysis of the person's decision now."""

    ply: StrictInt | None = Field(None, description="1, 2 or 3 (XG numbering), at most the server's max ply")


GameId = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{8,40}$", description="the id POST /v1/board answered")]


def board_router(service: Callable[[], Service], folder: str | os.PathLike[str] | None = None) -> APIRouter:
    """The ``/v1/board`` routes; ``service()`` gives the server's engine and thread pool.

    ``folder``: keep the games there, shared with the server's other worker processes
    (:class:`FolderGameStore`); None: in this process's memory (:class:`GameStore`).
    """
    router = APIRouter(prefix="/v1/board", tags=["board"])
    bots: dict[int, BgbotBot] = {}

    def bot(ply: int) -> BgbotBot:
        if ply not in bots:
            bots[ply] = BgbotBot(service().engine, ply=ply)
        return bots[ply]

    games: GameStore | FolderGameStore = GameStore() if folder is None else FolderGameStore(folder, bot)

    async def act(gid: str, fn: Callable[[BoardGame], object]) -> dict[str, Any]:
        """Run ``fn`` on the game under its lock on the engine's pool (bgbot may think) and answer the state."""

        def work() -> dict[str, Any]:
            with games.use(gid) as game:
                fn(game)
                return finished(game.state())

        return await service().run(work)

    @router.post("", summary="Start a money session or a match against bgbot; answers the game's state")
    async def new_game(body: NewGameBody) -> dict[str, Any]:
        s = service()
        ply = s.ply(body.ply)
        if body.match > s.engine.met.length:
            raise FieldError(
                "match", f"match length {body.match!r} is beyond the {s.engine.met.length}-point match equity table"
            )
        if body.jacoby and body.match:
            raise FieldError("jacoby", f"the Jacoby rule is for money play, not a {body.match}-point match")
        b = bot(ply)

        def work() -> dict[str, Any]:
            game = games.add(lambda gid: BoardGame(gid, b, body.match, body.jacoby, body.seed, s.config.max_ply))
            return finished(game.state())  # nobody else knows its id yet

        return await s.run(work)

    @router.get("/{game_id}", summary="The game's state: board, IDs, pips, dice, cube, score, legal actions")
    def get_game(game_id: GameId) -> dict[str, Any]:
        with games.use(game_id) as game:
            return finished(game.state())

    def action_route(path: str, action: Callable[[BoardGame], object], summary: str) -> None:
        """``POST /{game_id}/PATH``: one action without a body (the route is named after ``action``)."""

        async def run(game_id: GameId) -> dict[str, Any]:
            return await act(game_id, action)

        router.add_api_route(f"/{{game_id}}/{path}", run, methods=["POST"], summary=summary, name=action.__name__)

    for path, action, summary in (
        ("roll", BoardGame.roll, "Roll (instead of doubling)"),
        ("double", BoardGame.double, "Double bgbot (it takes or passes at once)"),
        ("take", BoardGame.take, "Take bgbot's double"),
        ("pass", BoardGame.drop, "Pass bgbot's double"),
        ("commit", BoardGame.commit, "Play the move the checkers moved make; bgbot answers"),
        ("next", BoardGame.next_game, "Start the next game of the match or session"),
    ):
        action_route(path, action, summary)

    @router.post("/{game_id}/hop", summary="Move one checker (part of a move): from a point to another")
    def hop(game_id: GameId, body: HopBody) -> dict[str, Any]:
        with games.use(game_id) as game:
            game.hop(body.src, body.to)
            return finished(game.state())

    @router.post("/{game_id}/undo", summary="Take back the last checker moved this turn")
    def undo(game_id: GameId) -> dict[str, Any]:
        with games.use(game_id) as game:
            game.undo()
            return finished(game.state())

    @router.post("/{game_id}/move", summary="Play a whole move in standard notation; bgbot answers")
    async def move(game_id: GameId, body: MoveTextBody) -> dict[str, Any]:
        return await act(game_id, lambda g: g.move_text(body.move))

    @router.post("/{game_id}/resign", summary="Offer to resign 1 (single), 2 (gammon) or 3 (backgammon)")
    async def resign(game_id: GameId, body: ResignBody) -> dict[str, Any]:
        return await act(game_id, lambda g: g.offer_resign(body.level))

    @router.post("/{game_id}/hint", summary="bgbot's analysis of your decision: ranked moves, or the cube")
    async def hint(game_id: GameId, body: HintBody) -> dict[str, Any]:
        s = service()
        ply = s.ply(body.ply)

        def work() -> dict[str, Any]:
            with games.use(game_id) as game:
                phase, pos, dice = game.phase, game.pos, game.dice
                st_h = game.match_state(HUMAN, dice=dice) if phase in ("roll", "move") else None
                st_take = game.match_state(BOT, doubled=True) if phase == "take" else None
                can_double = not game.cube_dead_reason(HUMAN)
            eng = s.engine
            if phase == "move" and dice is not None and st_h is not None:
                a = eng.best_move(pos, dice, ply, st_h)
                return {"kind": "move", **move_answer(eng, a)}
            if phase == "roll" and st_h is not None:
                ans = analyse_cube(eng, pos, CubeState.of(st_h), ply)
                return {"kind": "cube", "can_double": can_double, **ans}
            if phase == "take" and st_take is not None:
                ans = analyse_cube(eng, pos, CubeState.of(st_take.at_decision()), ply)
                dt = ans.get("equity_double_take")
                advice = "take" if dt is not None and dt < 1.0 else "pass"
                return {"kind": "take", "advice": advice, **ans}
            raise FieldError("action", f"there is no decision of yours to hint at now (phase {phase!r})",
                             "IllegalActionError")

        return await s.run(work)

    @router.get("/{game_id}/record", summary="The games so far as a .mat or gnubg .sgf record")
    def record(game_id: GameId, format: Literal["mat", "sgf"] = Query("mat")) -> PlainTextResponse:
        with games.use(game_id) as game:
            try:
                text = game.record(format)
            except BgbotError as exc:  # pragma: no cover - a record of legal plays always writes
                raise FieldError("format", str(exc), type(exc).__name__) from None
        name = f"bgbot-{'match' if game.length else 'money'}-{game.id[:8]}.{format}"
        return PlainTextResponse(text, headers={"content-disposition": f'attachment; filename="{name}"'})

    return router


__all__ = [
    "GAME_TTL",
    "MAX_GAMES",
    "BoardGame",
    "FolderGameStore",
    "GameStore",
    "PlayedBoardGame",
    "TurnInput",
    "board_router",
    "resign_limit",
]
