"""Engines that speak gnubg's external-player protocol: one FIBS ``board:`` line in, one line out.

The protocol (what GNU Backgammon's ``external`` command answers):

* a board **with dice** for the side on roll -> the move in standard notation
  (``24/18 13/11``), from that side's numbering;
* a board **without dice** for the side on roll -> ``double`` or ``roll``;
* a board with the **was-doubled flag set** -> ``take`` or ``drop`` (gnubg
  also says ``beaver``, taken here as a take: beavers are not played).

Boards follow gnubg's reading of the FIBS format: the "turn" field names the
side on roll, also while its double is pending (gnubg evaluates the take from
the side that "turn" names), and a money game is match length 9999.  The line
is addressed to the side on roll (colour and direction are its own).

Two transports share the protocol here: a child process on stdin/stdout
(:class:`PipeEngineBot`, spec ``cmd:COMMAND``) and a TCP connection to an
engine already listening (:class:`TcpEngineBot`, spec ``tcp:HOST:PORT``);
:mod:`bgbot.play.bots.gnubg` starts gnubg itself and talks over TCP.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import shlex
import socket
import subprocess
import time
from collections.abc import Sequence

import numpy as np

from bgbot.errors import (
    BgbotError,
    ConfigError,
    EngineError,
    IllegalMoveError,
    InvalidMoveError,
    ProtocolError,
    quote_input,
)
from bgbot.formats.fibs import format_fibs_board
from bgbot.play.bots.base import BaseBot
from bgbot.rules.dice import Dice
from bgbot.rules.matchstate import MatchState
from bgbot.rules.movegen import successors_batch
from bgbot.rules.moves import play_text
from bgbot.rules.position import Position

DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 86_400.0  # seconds: a day for one answer is the most an engine may be given
MAX_REPLY = 4096  # characters of one reply line read from an engine (a move is about 30); longer lines fail
MAX_MOVE_TEXT = 200  # characters a move reply may have; a longer one is refused unread


def _quote(text: str) -> str:
    return quote_input(text)


def check_timeout(timeout: object) -> float:
    """``timeout`` as seconds, a number > 0 and at most :data:`MAX_TIMEOUT` (``ConfigError`` otherwise)."""
    value = float(timeout) if isinstance(timeout, int | float) and not isinstance(timeout, bool) else math.nan
    if not math.isfinite(value) or not 0 < value <= MAX_TIMEOUT:
        raise ConfigError(f"timeout must be a number of seconds > 0 and <= {MAX_TIMEOUT:g}, got {timeout!r}")
    return value


# ---------------------------------------------------------------------------
# boards
# ---------------------------------------------------------------------------


def engine_board(
    pos: Position,
    state: MatchState,
    *,
    dice: Dice | None = None,
    doubled: bool = False,
    player: str = "bgbot",
    opponent: str = "opponent",
) -> str:
    """The ``board:`` line asking the side on roll (``state.on_roll``, whose view ``pos`` is) to act.

    With ``dice`` it asks for a move, without for ``double``/``roll``; with
    ``doubled`` it asks the opponent whether it takes the double of the side
    on roll: the board is addressed to the taker, with "turn" still on the
    doubler and the was-doubled flag set.  That is how gnubg writes it to an
    external player and how its ``external`` command reads it (it takes the
    side named by "turn" as the doubler, whoever the board is addressed to).
    """
    st = state.at_decision(doubled=doubled, dice=None if doubled else dice)
    # can_move is informational (gnubg ignores it); counting it would cost a full move listing
    can_move = 0 if dice is None or doubled else (4 if dice[0] == dice[1] else 2)
    you = 1 - state.on_roll if doubled else state.on_roll
    return format_fibs_board(pos, st, player=player, opponent=opponent, you=you, can_move=can_move)


# ---------------------------------------------------------------------------
# replies
# ---------------------------------------------------------------------------

def move_from_text(pos: Position, dice: Dice, text: str, legal: np.ndarray | None = None) -> Position:
    """The legal result (opponent's view) that an engine's move ``text`` names; ``pos`` is the mover's view.

    Raises :class:`~bgbot.errors.InvalidMoveError` (or its subclasses
    ``IllegalMoveError`` / ``AmbiguousMoveError``) quoting the text, the
    position and the dice when the text names no single legal play.
    """
    if legal is None:
        legal, _ = successors_batch(pos.array()[None, :], dice, include_pass=False)
    results = {Position._trusted(tuple(row)) for row in legal.tolist()}
    try:
        # the rules' own reading of move text, checked against the generator's legal results
        return play_text(pos, dice, text, results, Position.gnubg_id, empty_ok=not results)
    except InvalidMoveError:
        raise
    except BgbotError as exc:  # e.g. dice the notation module rejects: still the engine's fault
        raise IllegalMoveError(f"cannot use move {_quote(text)}: {exc}") from None


def cube_reply(text: str, expected: tuple[str, ...], where: str) -> str:
    """The first word of a cube reply, checked against ``expected`` (``ProtocolError`` otherwise)."""
    word = text.strip().split()[0].lower() if text.strip() else ""
    if word not in expected:
        raise ProtocolError(f"expected {' or '.join(expected)} from the engine {where}, got {_quote(text)}")
    return word


# ---------------------------------------------------------------------------
# a line channel with a timeout, over a socket or a pipe
# ---------------------------------------------------------------------------


class LineChannel:
    """Send a line, read a line, with a timeout: over a connected socket or a pair of pipe ends."""

    def __init__(self, read_fd: int, write: object, *, sock: socket.socket | None = None, what: str) -> None:
        self._fd = read_fd
        self._write = write
        self._sock = sock
        self._buf = b""
        self.what = what

    @classmethod
    def from_socket(cls, sock: socket.socket, what: str) -> LineChannel:
        """A channel over a connected TCP socket."""
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(sock.fileno(), sock, sock=sock, what=what)

    @classmethod
    def from_process(cls, proc: subprocess.Popen[bytes], what: str) -> LineChannel:
        """A channel over a child's stdin (we write) and stdout (we read)."""
        assert proc.stdout is not None and proc.stdin is not None  # we created both pipes
        return cls(proc.stdout.fileno(), proc.stdin, what=what)

    def send(self, line: str) -> None:
        """Write ``line`` and a newline (``EngineError`` if the other side has gone)."""
        data = (line + "\n").encode()
        try:
            if self._sock is not None:
                self._sock.sendall(data)
            else:
                self._write.write(data)  # type: ignore[attr-defined]
                self._write.flush()  # type: ignore[attr-defined]
        except OSError as exc:
            raise EngineError(f"{self.what} is gone: cannot send to it ({exc})") from None

    def recv(self, timeout: float) -> str:
        """The next line without its newline (``EngineError`` on end of stream or after ``timeout`` s)."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise EngineError(f"{self.what} did not answer within {timeout:g} s")
            ready, _, _ = select.select([self._fd], [], [], left)
            if not ready:
                continue
            try:
                chunk = self._sock.recv(65536) if self._sock is not None else os.read(self._fd, 65536)
            except OSError as exc:
                raise EngineError(f"{self.what} is gone: cannot read from it ({exc})") from None
            if not chunk:
                raise EngineError(f"{self.what} closed the connection (it died or quit)")
            self._buf += chunk
            if b"\n" not in self._buf and len(self._buf) > MAX_REPLY:
                # out of step from here on: an EngineError, so that the engine is restarted
                head = self._buf[:MAX_REPLY].decode(errors="replace")
                self._buf = b""
                raise EngineError(f"{self.what} sent a line longer than {MAX_REPLY} characters: {_quote(head)}")
        line, self._buf = self._buf.split(b"\n", 1)
        if len(line) > MAX_REPLY:
            raise EngineError(f"{self.what} sent a line of {len(line)} characters (at most {MAX_REPLY}): "
                              f"{_quote(line[:MAX_REPLY].decode(errors='replace'))}")
        return line.decode(errors="replace").rstrip("\r")

    def drain(self) -> None:
        """Drop whatever the other side has sent unasked (extra lines after a bad answer)."""
        self._buf = b""
        while select.select([self._fd], [], [], 0)[0]:
            try:
                chunk = self._sock.recv(65536) if self._sock is not None else os.read(self._fd, 65536)
            except OSError:
                return
            if not chunk:
                return  # end of stream: the next recv reports it
            self._buf = b""

    def ask(self, line: str, timeout: float) -> str:
        """Send ``line`` and return the answer line (anything unasked that came before is dropped)."""
        self.drain()
        self.send(line)
        return self.recv(timeout)


# ---------------------------------------------------------------------------
# bots
# ---------------------------------------------------------------------------


class FibsLineBot(BaseBot):
    """A bot asked through FIBS ``board:`` lines (see the module docstring); subclasses bring the channel."""

    timeout: float = DEFAULT_TIMEOUT

    def _channel(self) -> LineChannel:
        raise NotImplementedError

    def _ask(self, line: str) -> str:
        return self._channel().ask(line, self.timeout)

    def move(self, pos: Position, dice: Dice, state: MatchState) -> Position:
        """Ask for the move; the reply text must name one legal play (opponent's view returned)."""
        legal, _ = successors_batch(pos.array()[None, :], dice, include_pass=False)
        reply = self._ask(engine_board(pos, state, dice=dice))
        if reply.lower().startswith("error"):
            raise ProtocolError(f"{self.name} answered {_quote(reply)} instead of a move")
        if len(reply.strip()) > MAX_MOVE_TEXT:
            raise ProtocolError(f"{self.name} answered {len(reply)} characters, not a move: {_quote(reply)}")
        return move_from_text(pos, dice, reply.strip(), legal)

    def double(self, pos: Position, state: MatchState) -> bool:
        """Ask ``double``/``roll`` before the roll."""
        reply = self._ask(engine_board(pos, state))
        return cube_reply(reply, ("double", "roll"), "before its roll") == "double"

    def take(self, pos: Position, state: MatchState) -> bool:
        """Ask ``take``/``drop`` (``beaver`` counts as a take, ``pass`` as a drop)."""
        reply = self._ask(engine_board(pos, state, doubled=True))
        return cube_reply(reply, ("take", "drop", "pass", "beaver"), "facing a double") in ("take", "beaver")


def _stop_process(proc: subprocess.Popen[bytes] | None, grace: float = 2.0) -> None:
    """Close the child's stdin, then terminate it, then kill it if it lingers."""
    if proc is None:
        return
    with contextlib.suppress(OSError, ValueError):
        if proc.stdin:
            proc.stdin.close()
    if proc.poll() is None:
        with contextlib.suppress(OSError):
            proc.terminate()
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                proc.kill()
            proc.wait(grace)
    with contextlib.suppress(OSError, ValueError):
        if proc.stdout:
            proc.stdout.close()


def _die_with_parent() -> None:
    """In the child before exec: get SIGKILL when the parent dies, so no engine outlives a killed pit."""
    with contextlib.suppress(Exception):
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def spawn_engine(argv: list[str], what: str) -> tuple[subprocess.Popen[bytes], LineChannel]:
    """Start an engine process that talks in lines on stdin/stdout and dies with this process.

    ``what`` names it in errors ("engine", "UBGI engine"); a command that cannot start is an
    :class:`~bgbot.errors.EngineError` quoting it.
    """
    try:
        proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
        )
    except OSError as exc:
        raise EngineError(f"cannot start {what} {shlex.join(argv)!r}: {exc}") from None
    return proc, LineChannel.from_process(proc, f"{what} {shlex.join(argv)!r}")


class ChildEngine:
    """An engine child process that talks in lines on its stdin/stdout, and its channel.

    ``command``: a shell-like string or an argument list; ``what`` names it in errors ("engine",
    "UBGI engine").  Not started until :meth:`start`.
    """

    def __init__(self, command: str | Sequence[str], what: str) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise EngineError(f"empty {what} command {command!r}")
        self.what = what
        self.proc: subprocess.Popen[bytes] | None = None
        self.chan: LineChannel | None = None

    def start(self) -> LineChannel:
        """Start the process (:func:`spawn_engine`, stopping a running one first); its channel."""
        _stop_process(self.proc)
        self.proc, self.chan = spawn_engine(self.argv, self.what)
        return self.chan

    def channel(self) -> LineChannel:
        """The running process's channel; :class:`~bgbot.errors.EngineError` when it is closed or has died."""
        if self.proc is None or self.chan is None:
            raise EngineError(f"{self.what} {shlex.join(self.argv)!r} is closed")
        if self.proc.poll() is not None:
            raise EngineError(f"{self.what} {shlex.join(self.argv)!r} died (exit status {self.proc.returncode})")
        return self.chan

    def running(self) -> bool:
        """Whether the process is started and alive."""
        return self.proc is not None and self.chan is not None and self.proc.poll() is None

    def stop(self) -> None:
        """Stop the process (closing its pipes, then SIGTERM, then SIGKILL)."""
        _stop_process(self.proc)
        self.proc = None
        self.chan = None


class PipeEngineBot(FibsLineBot):
    """An engine started as a child process, speaking the protocol on its stdin/stdout (spec ``cmd:...``)."""

    def __init__(self, command: str | Sequence[str], *, timeout: float = DEFAULT_TIMEOUT, name: str | None = None):
        self.engine = ChildEngine(command, "engine")
        self.argv = self.engine.argv
        self.timeout = check_timeout(timeout)
        self.name = name or f"cmd:{shlex.join(self.argv)}"
        self.engine.start()

    def _channel(self) -> LineChannel:
        return self.engine.channel()

    def reset(self) -> None:
        """Start a fresh engine: after a fault (death, timeout, garbage) its answers may be out of step."""
        self.engine.start()

    def close(self) -> None:
        """Stop the child process."""
        self.engine.stop()


class TcpEngineBot(FibsLineBot):
    """An engine already listening on ``host:port`` (e.g. ``gnubg`` after ``external``, or ``bgbot serve-external``)."""

    def __init__(self, host: str, port: int, *, timeout: float = DEFAULT_TIMEOUT, name: str | None = None):
        self.host, self.port = host, int(port)
        self.timeout = check_timeout(timeout)
        self.name = name or f"tcp:{host}:{port}"
        self._chan: LineChannel | None = None
        self._sock: socket.socket | None = None
        self._connect()

    def _connect(self) -> None:
        try:
            self._sock = socket.create_connection((self.host, self.port), timeout=10)
        except OSError as exc:
            raise EngineError(f"cannot connect to the engine at {self.host}:{self.port}: {exc}") from None
        self._sock.settimeout(None)
        self._chan = LineChannel.from_socket(self._sock, f"engine at {self.host}:{self.port}")

    def _channel(self) -> LineChannel:
        if self._chan is None:
            raise EngineError(f"engine at {self.host}:{self.port} is not connected")
        return self._chan

    def reset(self) -> None:
        """Reconnect (the answers of the old connection may be out of step)."""
        self.close()
        self._connect()

    def close(self) -> None:
        """Close the connection."""
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
        self._sock = None
        self._chan = None
