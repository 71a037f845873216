"""An engine speaking UBGI on stdin/stdout as a bot (spec ``ubgi:COMMAND``, e.g. ``ubgi:bgbot ubgi``).

Every question sends the whole context again (``newsession``, ``setscore``,
``setcube``, ``setturn``, ``setcrawford``, ``position gnubgid``, ``dice``), so
the engine's state can never drift from the referee's, then ``go role
chequer|cube|take``.  A move answer is taken from ``bestmoveid`` when the
engine sends one that names a legal result, else from the ``bestmove`` text
(``pass`` is the empty play); the referee checks it either way.  An engine
without ``go role take`` (an ``error unsupported_feature`` answer) is taken
to always take.  See :mod:`bgbot.serve.ubgi` for the protocol.
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Sequence

from bgbot.errors import EngineError, ProtocolError
from bgbot.play.bots.base import BaseBot
from bgbot.play.bots.fibsline import DEFAULT_TIMEOUT, ChildEngine, move_from_text
from bgbot.rules.dice import Dice
from bgbot.rules.matchstate import MatchState
from bgbot.rules.movegen import successors_batch
from bgbot.rules.position import Position

START_TIMEOUT = 120.0  # seconds for the handshake: an engine may load a network on 'ubgi'


def context_lines(pos: Position, state: MatchState) -> list[str]:
    """The UBGI commands that set ``state`` and ``pos`` (the view of ``state.on_roll``, who is on turn)."""
    if state.match_length:
        session = f"newsession type match length {state.match_length} crawford on"
    else:
        session = f"newsession type money jacoby {'on' if state.jacoby else 'off'}"
    owner = "center" if state.cube_owner < 0 else f"p{state.cube_owner}"
    lines = [
        session,
        f"setscore {state.score[0]} {state.score[1]}",
        f"setcube value {state.cube_value} owner {owner}",
        f"setturn p{state.on_roll}",
    ]
    if state.match_length:
        lines.append(f"setcrawford {'on' if state.crawford else 'off'}")
    lines.append(f"position gnubgid {pos.gnubg_id()}")
    return lines


class UbgiEngineBot(BaseBot):
    """A child process speaking UBGI (see the module docstring)."""

    def __init__(self, command: str | Sequence[str], *, timeout: float = DEFAULT_TIMEOUT, name: str | None = None):
        self.engine = ChildEngine(command, "UBGI engine")
        self.argv = self.engine.argv
        self.timeout = timeout
        self.name = name or f"ubgi:{shlex.join(self.argv)}"
        self.engine_name = ""
        self._start()

    # ---- process ---------------------------------------------------------------
    def _start(self) -> None:
        chan = self.engine.start()
        chan.send("ubgi")
        for line in self._until("ubgiok", START_TIMEOUT):
            if line.startswith("id name "):
                self.engine_name = line[len("id name ") :].strip()
        chan.send("isready")
        self._until("readyok", START_TIMEOUT)

    def _until(self, prefix: str, timeout: float | None = None) -> list[str]:
        """Lines up to and including the first that starts with ``prefix`` (an ``error`` line raises)."""
        chan = self.engine.channel()
        lines = []
        while True:
            line = chan.recv(self.timeout if timeout is None else timeout).strip()
            lines.append(line)
            if line.startswith(prefix):
                return lines
            if line.startswith("error"):
                raise ProtocolError(f"{self.name} answered {line[:120]!r}")

    def _ask(self, commands: list[str], question: str, prefix: str) -> list[str]:
        """Send the context ``commands`` and wait for ``readyok`` (an engine may not know some: its
        ``unknown_command``/``unsupported`` errors there are ignored), then ask ``question``."""
        chan = self.engine.channel()
        chan.drain()
        for c in commands:
            chan.send(c)
        chan.send("isready")
        while True:
            line = chan.recv(self.timeout).strip()
            if line == "readyok":
                break
            if line.startswith("error") and not ("unknown" in line or "unsupported" in line):
                raise ProtocolError(f"{self.name} answered {line[:120]!r} to the position's context")
        chan.send(question)
        return self._until(prefix)

    def reset(self) -> None:
        """Start a fresh engine: after a fault its answers may be out of step."""
        self._start()

    def close(self) -> None:
        """Send ``quit`` and stop the child process."""
        if self.engine.running():
            with contextlib.suppress(EngineError):
                self.engine.channel().send("quit")
        self.engine.stop()

    # ---- the Bot questions ---------------------------------------------------------
    def new_game(self, state: MatchState) -> None:
        """``newgame`` (the context is sent again with every question anyway)."""
        self.engine.channel().send("newgame")

    def move(self, pos: Position, dice: Dice, state: MatchState) -> Position:
        """``go role chequer``; the result (opponent's view) from ``bestmoveid`` or the ``bestmove`` text."""
        legal, _ = successors_batch(pos.array()[None, :], dice, include_pass=False)
        lines = self._ask([*context_lines(pos, state), f"dice {dice[0]} {dice[1]}"], "go role chequer", "bestmove ")
        by_id = {Position._trusted(tuple(row)).gnubg_id(): row for row in legal.tolist()}
        for line in lines:
            if line.startswith("bestmoveid "):
                ident = line.split()[1] if len(line.split()) > 1 else ""
                if ident in by_id:
                    return Position._trusted(tuple(by_id[ident]))
        text = lines[-1][len("bestmove ") :].strip()
        return move_from_text(pos, dice, "" if text == "pass" else text.replace("-", "/"), legal)

    def double(self, pos: Position, state: MatchState) -> bool:
        """``go role cube`` before the roll: ``bestcube double`` or ``nodouble``."""
        word = self._ask(context_lines(pos, state), "go role cube", "bestcube ")[-1].split()
        if len(word) < 2 or word[1] not in ("double", "nodouble"):
            raise ProtocolError(f"{self.name} answered {' '.join(word)!r} to go role cube")
        return word[1] == "double"

    def take(self, pos: Position, state: MatchState) -> bool:
        """``go role take`` with the doubler on turn: ``bestcube take`` or ``drop``."""
        try:
            word = self._ask(context_lines(pos, state.at_decision()), "go role take", "bestcube ")[-1].split()
        except ProtocolError as exc:
            if "unsupported" in str(exc) or "unknown" in str(exc):
                return True
            raise
        if len(word) < 2 or word[1] not in ("take", "drop", "pass", "beaver"):
            raise ProtocolError(f"{self.name} answered {' '.join(word)!r} to go role take")
        return word[1] in ("take", "beaver")
