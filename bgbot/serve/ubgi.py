"""``bgbot ubgi``: bgbot as an engine speaking UBGI (Universal Backgammon Interface) on stdin/stdout.

UBGI is the UCI-like text protocol of Øystein Schønning-Johansen's draft and
of the bgci harness's v0.1 text; ``docs/api.md`` lists what bgbot answers and
the compliance level (Level 1 of UBGI v0.1, with the extensions named
there).  One command per line; every answer line is flushed.  The controller
(GUI or dueller) owns the game: the engine keeps only the context it was told.

Context commands: ``newgame``, ``newsession type money|match [length N]
[jacoby on|off] [crawford on|off]`` (``newsession money`` and ``newsession
match 7`` too), ``setscore <p0> <p1>``, ``setcube value <N> owner
<center|p0|p1>``, ``setturn <p0|p1>``, ``setcrawford on|off`` (extension:
whether this game is the Crawford game), ``position gnubgid <ID>`` (the side
on roll's view, as gnubg writes it; also ``position xgid <XGID>``, which
sets the score, cube, turn and dice it carries), ``dice <d1> <d2>``.

Questions: ``go [role chequer]`` -> ``bestmove <from/to ...>`` (single-die
steps written out, ``bar``/``off``, no ``*``, ``pass`` when nothing moves),
preceded by ``bestmoveid <gnubg ID of the result>``; ``go role cube`` ->
``bestcube double|nodouble``; ``go role take`` (extension: the side on roll
has doubled, answer for the taker) -> ``bestcube take|drop``; ``go role
turn`` -> ``bestturn cube=double`` or ``bestturn cube=nodouble
moveid=<ID>``.  Each answer is preceded by one ``eval eq <e> [mwc <m>] pwin
<w> pgammon <wg> pbg <wbg> plgammon <lg> plbg <lbg>`` line: the side to
act's probabilities (after the move for ``chequer``).  Errors are ``error
<code> <message>`` (codes ``unknown_command``, ``bad_argument``,
``missing_context``, ``unsupported_feature``, ``internal``) and the engine
goes on.  A bare XGID or FIBS ``board:`` line (the first UBGI draft) is
answered with the move, ``double``/``roll`` or ``take``/``drop``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TextIO

from bgbot import __version__
from bgbot.engine.api import Engine
from bgbot.engine.search import check_ply
from bgbot.errors import BgbotError, ascii_int
from bgbot.formats.parse import parse_position_and_state
from bgbot.rules.dice import parse_dice
from bgbot.rules.matchstate import CubeState, MatchState
from bgbot.rules.position import Position

PROTOCOL = "0.1"


class UbgiError(BgbotError):
    """A command the engine cannot act on; ``code`` is the UBGI error code of the ``error`` line."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def ubgi_move_text(steps: Iterable[tuple[int, int, bool]]) -> str:
    """UBGI's move payload: every single-die step as ``from/to`` (``bar``, ``off``), no ``*``; ``pass`` if none."""
    parts = [f"{'bar' if a == 25 else a}/{'off' if b == 0 else b}" for a, b, _ in steps]
    return " ".join(parts) or "pass"


def _on_off(text: str, what: str) -> bool:
    t = text.lower()
    if t in ("on", "true", "1", "yes"):
        return True
    if t in ("off", "false", "0", "no"):
        return False
    raise UbgiError("bad_argument", f"{what} is on or off, got {text!r}")


def _int(text: str, what: str, lo: int, hi: int) -> int:
    try:
        v = ascii_int(text)
    except ValueError:
        raise UbgiError("bad_argument", f"{what} must be a whole number, got {text!r}") from None
    if not lo <= v <= hi:
        raise UbgiError("bad_argument", f"{what} must be {lo}..{hi}, got {text!r}")
    return v


def _player(text: str) -> int:
    if text in ("p0", "0"):
        return 0
    if text in ("p1", "1"):
        return 1
    raise UbgiError("bad_argument", f"a player is p0 or p1, got {text!r}")


@dataclass
class Context:
    """What the controller has told the engine: session, score, cube, turn, position and dice (absolute players)."""

    match: int = 0
    jacoby: bool = False
    crawford_rule: bool = True
    crawford_game: bool | None = None  # None: the Crawford game when the rule is on and one side is 1-away
    score: list[int] = field(default_factory=lambda: [0, 0])
    cube: int = 1
    owner: int = -1  # -1 centred, else the player
    turn: int = 0
    position: Position | None = None
    dice: tuple[int, int] | None = None

    def cube_state(self) -> CubeState:
        """The cube and score seen from the side on roll (``turn``)."""
        me = self.turn
        owner = "center" if self.owner < 0 else "me" if self.owner == me else "opp"
        if not self.match:
            return CubeState(cube=self.cube, owner=owner, jacoby=self.jacoby)  # type: ignore[arg-type]
        crawford = self.crawford_game
        if crawford is None:
            away = [self.match - s for s in self.score]
            crawford = self.crawford_rule and (away[0] == 1) != (away[1] == 1)
        return CubeState(
            cube=self.cube,
            owner=owner,  # type: ignore[arg-type]
            match=self.match,
            score=(self.score[me], self.score[1 - me]),
            crawford=crawford,
        )


OPTIONS = (
    "option name Ply type spin default {ply} min 1 max 3",
    "option name CubePly type spin default {cube_ply} min 1 max 3",
    "option name EvalMode type combo default cubeful var cubeful var cubeless",
    "option name Deterministic type check default true",
    "option name Threads type spin default {threads} min 1 max 256",
)


class UbgiSession:
    """One UBGI conversation: feed it lines with :meth:`handle`; answers go to ``out``.

    ``load_engine`` is called on ``ubgi`` (the protocol asks engines to
    initialise only then); ``ply`` and ``cube_ply`` are the defaults the
    ``Ply``/``CubePly`` options change.
    """

    def __init__(
        self, load_engine: Callable[[], Engine], out: TextIO, *, ply: int = 1, cube_ply: int | None = None
    ) -> None:
        self._load = load_engine
        self.engine: Engine | None = None
        self.out = out
        self.ply = check_ply(ply)
        self.cube_ply = check_ply(cube_ply if cube_ply is not None else ply)
        self.cubeless = False
        self.ctx = Context()

    # ---- output ---------------------------------------------------------
    def say(self, line: str) -> None:
        """Write one answer line and flush it."""
        self.out.write(line + "\n")
        self.out.flush()

    def _threads(self) -> int:
        return self._engine().threads

    def _engine(self) -> Engine:
        if self.engine is None:
            self.engine = self._load()
        return self.engine

    # ---- the loop ---------------------------------------------------------
    def handle(self, line: str) -> bool:
        """Act on one command line; False after ``quit``.  Errors become ``error`` lines, never exceptions."""
        text = line.strip()
        if not text:
            return True
        try:
            return self._dispatch(text)
        except UbgiError as exc:
            self.say(f"error {exc.code} {exc}")
        except BgbotError as exc:
            self.say(f"error bad_argument {exc}")
        except Exception as exc:  # a bug must not kill the engine mid-match; the controller sees it
            self.say(f"error internal {type(exc).__name__}: {exc}")
        return True

    def _dispatch(self, text: str) -> bool:
        if text.startswith(("XGID=", "board:")):
            self._bare_position(text)
            return True
        words = text.split()
        cmd, args = words[0], words[1:]
        handler = {
            "ubgi": self._ubgi,
            "isready": lambda a: self.say("readyok"),
            "newgame": self._newgame,
            "newsession": self._newsession,
            "setscore": self._setscore,
            "setcube": self._setcube,
            "setturn": self._setturn,
            "setcrawford": self._setcrawford,
            "position": self._position,
            "dice": self._dice,
            "go": self._go,
            "setoption": self._setoption,
            "set": self._set,
            "get": self._get,
            "keys": self._keys,
            "stop": lambda a: None,  # answers are synchronous: nothing runs to stop
        }.get(cmd)
        if cmd == "quit":
            return False
        if handler is None:
            raise UbgiError("unknown_command", f"{text[:80]!r}")
        handler(args)
        return True

    # ---- handshake and options ----------------------------------------------
    def _ubgi(self, args: list[str]) -> None:
        engine = self._engine()
        self.say("id name bgbot")
        self.say("id author bgbot contributors")
        self.say(f"id version {__version__}")
        self.say(f"proto {PROTOCOL}")
        self.say(f"info string {engine.describe()}")
        for o in OPTIONS:
            self.say(o.format(ply=self.ply, cube_ply=self.cube_ply, threads=self._threads()))
        self.say("ubgiok")

    def _option(self, name: str, value: str) -> None:
        key = name.lower().replace("_", "").replace("engine.", "")
        if key == "ply":
            self.ply = _int(value, "Ply", 1, 3)
        elif key == "cubeply":
            self.cube_ply = _int(value, "CubePly", 1, 3)
        elif key == "evalmode":
            if value.lower() not in ("cubeful", "cubeless"):
                raise UbgiError("bad_argument", f"EvalMode is cubeful or cubeless, got {value!r}")
            self.cubeless = value.lower() == "cubeless"
        elif key == "threads":
            # the threads a big batch of the network is split across: the same answers with any number
            net = self._engine().base
            n = _int(value, "Threads", 1, 256)
            if hasattr(net, "threads"):
                net.threads = n
        elif key in ("seed", "deterministic"):
            pass  # bgbot's answers are deterministic whatever these say
        elif key in ("variant", "game.variant"):
            if value.lower() != "backgammon":
                raise UbgiError("unsupported_feature", f"variant {value!r}: bgbot plays backgammon only")
        else:
            raise UbgiError("unsupported_feature", f"unknown option {name!r}")

    def _setoption(self, args: list[str]) -> None:
        if len(args) < 4 or args[0] != "name" or "value" not in args[2:]:
            raise UbgiError("bad_argument", f"expected: setoption name <Name> value <Value>, got {' '.join(args)!r}")
        at = args.index("value", 2)
        self._option(" ".join(args[1:at]), " ".join(args[at + 1 :]))

    def _set(self, args: list[str]) -> None:
        if len(args) != 2:
            raise UbgiError("bad_argument", f"expected: set <key> <value>, got {' '.join(args)!r}")
        self._option(args[0], args[1])

    def _get(self, args: list[str]) -> None:
        values: dict[str, Callable[[], object]] = {
            "engine.ply": lambda: self.ply,
            "engine.cube_ply": lambda: self.cube_ply,
            "engine.eval_mode": lambda: "cubeless" if self.cubeless else "cubeful",
            "engine.threads": self._threads,  # (loads the engine: asked for only)
            "game.variant": lambda: "backgammon",
        }
        if len(args) != 1 or args[0] not in values:
            raise UbgiError("bad_argument", f"get one of {', '.join(values)}, got {' '.join(args)!r}")
        self.say(f"value {args[0]} {values[args[0]]()}")

    def _keys(self, args: list[str]) -> None:
        self.say(f"key engine.ply int 1..3 {self.ply} root-inclusive checker-play depth (XG numbering)")
        self.say(f"key engine.cube_ply int 1..3 {self.cube_ply} depth of cube decisions")
        self.say("key engine.eval_mode enum cubeful|cubeless cubeful ranking of checker plays")
        self.say(f"key engine.threads int 1..256 {self._threads()} threads a big batch of positions is split across")
        self.say("key game.variant enum backgammon backgammon")

    # ---- context ----------------------------------------------------------------
    def _newgame(self, args: list[str]) -> None:
        self.ctx.position, self.ctx.dice = None, None
        self.ctx.cube, self.ctx.owner, self.ctx.turn, self.ctx.crawford_game = 1, -1, 0, None

    def _newsession(self, args: list[str]) -> None:
        a = list(args)
        if a[:1] == ["type"]:
            a = a[1:]
        if not a or a[0] not in ("money", "match"):
            raise UbgiError("bad_argument", f"expected: newsession type money|match ..., got {' '.join(args)!r}")
        kind, rest = a[0], a[1:]
        ctx = Context()
        if rest and rest[0].isdigit():  # "newsession match 7"
            rest = ["length", *rest]
        for key, value in zip(rest[::2], rest[1::2], strict=False):
            if key == "length":
                ctx.match = _int(value, "length", 1, 64)
            elif key == "jacoby":
                ctx.jacoby = _on_off(value, "jacoby")
            elif key == "crawford":
                ctx.crawford_rule = _on_off(value, "crawford")
            else:
                raise UbgiError("bad_argument", f"unknown newsession field {key!r}")
        if len(rest) % 2:
            raise UbgiError("bad_argument", f"newsession field {rest[-1]!r} has no value")
        if kind == "match" and not ctx.match:
            raise UbgiError("bad_argument", "newsession type match needs: length <N>")
        if kind == "money":
            ctx.match = 0
        self.ctx = ctx

    def _setscore(self, args: list[str]) -> None:
        if len(args) != 2:
            raise UbgiError("bad_argument", f"expected: setscore <p0> <p1>, got {' '.join(args)!r}")
        self.ctx.score = [_int(args[0], "score p0", 0, 64), _int(args[1], "score p1", 0, 64)]

    def _setcube(self, args: list[str]) -> None:
        fields = dict(zip(args[::2], args[1::2], strict=False))
        if len(args) % 2 or not set(fields) <= {"value", "owner"} or not fields:
            raise UbgiError("bad_argument", f"expected: setcube value <N> owner <center|p0|p1>, got {' '.join(args)!r}")
        if "value" in fields:
            v = _int(fields["value"], "cube value", 1, 4096)
            if v & (v - 1):
                raise UbgiError("bad_argument", f"a cube value is a power of 2, got {fields['value']!r}")
            self.ctx.cube = v
        if "owner" in fields:
            o = fields["owner"]
            self.ctx.owner = -1 if o in ("center", "centre", "none") else _player(o)

    def _setturn(self, args: list[str]) -> None:
        if len(args) != 1:
            raise UbgiError("bad_argument", f"expected: setturn <p0|p1>, got {' '.join(args)!r}")
        self.ctx.turn = _player(args[0])

    def _setcrawford(self, args: list[str]) -> None:
        if len(args) != 1:
            raise UbgiError("bad_argument", f"expected: setcrawford on|off, got {' '.join(args)!r}")
        self.ctx.crawford_game = _on_off(args[0], "setcrawford")

    def _position(self, args: list[str]) -> None:
        if len(args) < 2 or args[0] not in ("gnubgid", "xgid", "fibs"):
            raise UbgiError("bad_argument", f"expected: position gnubgid <ID> | xgid <XGID>, got {' '.join(args)!r}")
        text = " ".join(args[1:])
        if args[0] == "xgid" and not text.upper().startswith("XGID="):
            text = "XGID=" + text
        pos, state = parse_position_and_state(text)
        self.ctx.position = pos
        if state is not None:  # an XGID, ID:MatchID or FIBS board brings its score, cube, turn and dice
            self._take_state(state)

    def _take_state(self, state: MatchState) -> None:
        c = self.ctx
        c.match, c.score, c.cube, c.owner = state.match_length, list(state.score), state.cube_value, state.cube_owner
        c.turn, c.jacoby, c.crawford_game = state.on_roll, state.jacoby, state.crawford if state.match_length else None
        if state.dice is not None:
            c.dice = state.dice

    def _dice(self, args: list[str]) -> None:
        self.ctx.dice = parse_dice(" ".join(args))

    # ---- questions ----------------------------------------------------------------
    def _need_position(self) -> Position:
        if self.ctx.position is None:
            raise UbgiError("missing_context", "position: send 'position gnubgid <ID>' first")
        if self.ctx.position.is_game_over():
            raise UbgiError("bad_argument", f"the game is over in {self.ctx.position.gnubg_id()!r}")
        return self.ctx.position

    def _eval_line(self, probs: object, equity: float, mwc: float | None) -> None:
        w, wg, wbg, lg, lbg = (float(v) for v in probs)  # type: ignore[attr-defined]
        m = "" if mwc is None else f" mwc {mwc:.6f}"
        probs_text = f"pwin {w:.6f} pgammon {wg:.6f} pbg {wbg:.6f} plgammon {lg:.6f} plbg {lbg:.6f}"
        self.say(f"eval eq {equity:.6f}{m} {probs_text}")

    def _go(self, args: list[str]) -> None:
        role = "chequer"
        if args[:1] == ["role"]:
            if len(args) < 2:
                raise UbgiError("bad_argument", "expected: go role chequer|cube|take|turn")
            role, rest = args[1], args[2:]
        elif args and args[0] in ("chequer", "checker", "cube", "take", "turn", "eval"):
            role, rest = args[0], args[1:]
        else:
            rest = args
        limits = {"movetime", "depth", "nodes", "trials"}
        for key in rest[::2]:
            if key not in limits:
                raise UbgiError("bad_argument", f"unknown go field {key!r}")
        depth = dict(zip(rest[::2], rest[1::2], strict=False)).get("depth")
        ply = _int(depth, "depth", 1, 3) if depth is not None else None
        if role in ("chequer", "checker"):
            self._go_chequer(ply or self.ply)
        elif role == "cube":
            self._go_cube(ply or self.cube_ply)
        elif role == "take":
            self._go_take(ply or self.cube_ply)
        elif role == "turn":
            self._go_turn(ply)
        elif role == "eval":
            pos = self._need_position()
            probs = self._engine().evaluate(pos, ply or self.ply)
            self._eval_line(probs, float(self._engine().equity(pos, ply or self.ply)), None)
        else:
            raise UbgiError("unsupported_feature", f"go role {role!r}")

    def _best(self, ply: int) -> tuple[str, str]:
        pos = self._need_position()
        if self.ctx.dice is None:
            raise UbgiError("missing_context", "dice: send 'dice <d1> <d2>' first")
        a = self._engine().best_move(pos, self.ctx.dice, ply, self.ctx.cube_state(), cubeless=self.cubeless)
        best = a.best
        self._eval_line(best.probs, best.equity, best.mwc)
        return best.result.gnubg_id(), ubgi_move_text(best.steps)

    def _go_chequer(self, ply: int) -> None:
        move_id, text = self._best(ply)
        self.say(f"bestmoveid {move_id}")
        self.say(f"bestmove {text}")

    def _decision(self, ply: int):  # type: ignore[no-untyped-def]
        pos = self._need_position()
        engine = self._engine()
        probs = engine.evaluate(pos, ply)
        d = engine.cube_action(pos, self.ctx.cube_state(), ply=ply)
        return probs, d

    def _go_cube(self, ply: int) -> None:
        probs, d = self._decision(ply)
        self._eval_line(probs, d.equity_optimal, d.mwc_optimal)
        self.say(f"bestcube {'double' if d.doubles else 'nodouble'}")

    def _go_take(self, ply: int) -> None:
        probs, d = self._decision(ply)
        self._eval_line(probs, d.equity_optimal, d.mwc_optimal)  # the doubler's view, as the position is
        self.say(f"bestcube {'take' if d.takes else 'drop'}")

    def _go_turn(self, ply: int | None) -> None:
        probs, d = self._decision(ply or self.cube_ply)
        if d.doubles:
            self._eval_line(probs, d.equity_optimal, d.mwc_optimal)
            self.say("bestturn cube=double")
            return
        move_id, _ = self._best(ply or self.ply)
        self.say(f"bestturn cube=nodouble moveid={move_id}")

    def _bare_position(self, text: str) -> None:
        """The first draft's form: a whole XGID or FIBS board in, the best action out."""
        pos, state = parse_position_and_state(text)
        engine = self._engine()
        if pos.is_game_over():
            raise UbgiError("bad_argument", f"the game is over in {pos.gnubg_id()!r}")
        if state is not None and state.doubled:
            self.say("take" if engine.cube_action(pos, state.at_decision(), ply=self.cube_ply).takes else "drop")
        elif state is not None and state.dice is not None:
            a = engine.best_move(pos, state.dice, self.ply, state.at_decision(), cubeless=self.cubeless)
            text_out = ubgi_move_text(a.best.steps)
            self.say("" if text_out == "pass" else text_out)
        else:
            cs = state.at_decision() if state is not None else None
            self.say("double" if engine.cube_action(pos, cs, ply=self.cube_ply).doubles else "roll")


def serve_ubgi(
    load_engine: Callable[[], Engine],
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    *,
    ply: int = 1,
    cube_ply: int | None = None,
) -> None:
    """Answer UBGI commands from ``stdin`` (default: the process's) until ``quit`` or end of input."""
    session = UbgiSession(load_engine, stdout or sys.stdout, ply=ply, cube_ply=cube_ply)
    for line in stdin or sys.stdin:
        if not session.handle(line):
            break
