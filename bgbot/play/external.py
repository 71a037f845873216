"""Reverse mode: bgbot as an external player that GNU Backgammon (or any referee) drives.

``bgbot serve-external --port 4321`` listens on ``localhost:4321``; in gnubg::

    set player 1 external localhost:4321
    new match 5

gnubg then sends FIBS ``board:`` lines for every decision of player 1 and
bgbot answers as gnubg's own ``external`` command does (see
:mod:`bgbot.play.bots.fibsline`): a move in standard notation for a board with
dice (an empty line when nothing can be played), ``double`` or ``roll`` for a
board without dice, ``take`` or ``drop`` for a board with the was-doubled
flag.  ``version`` is answered, ``exit`` closes the connection, anything else
gets one ``Error: ...`` line and the connection stays open.

The same answers are available over stdin/stdout (``--stdio``), which makes
bgbot usable as a ``cmd:`` engine of :mod:`bgbot.play.pit`.
"""

from __future__ import annotations

import contextlib
import socket
import socketserver
import sys
import threading
from collections.abc import Callable
from typing import IO

from bgbot.errors import BgbotError, EngineError, ProtocolError
from bgbot.formats.fibs import parse_fibs_board
from bgbot.play.bots.base import Bot
from bgbot.rules.matchstate import MatchState
from bgbot.rules.movegen import successors
from bgbot.rules.moves import legal_moves
from bgbot.rules.position import Position

VERSION_TEXT = "bgbot external player (gnubg external-player protocol, FIBS board lines)"


def read_board(line: str) -> tuple[Position, MatchState]:
    """Parse a FIBS ``board:`` line as gnubg sends it: the position from the side on roll's view and the state.

    gnubg writes match length 0 for a money game (FIBS uses 9999); both are
    read as money.  While a double is pending the doubler is the side the
    "turn" field names, whoever the board is addressed to (gnubg's reading).
    Raises :class:`~bgbot.errors.InvalidIdError` for a line that is not a
    board.
    """
    text = line.replace("\x00", "").strip()
    pos, fb = parse_fibs_board(text)  # pos: the addressee's view
    state = fb.to_match_state()
    if fb.was_doubled and fb.turn:
        doubler = 0 if fb.turn > 0 else 1
        if doubler != state.on_roll:
            state = state.at_decision(doubler, doubled=True)
    return (pos if state.on_roll == fb.you else pos.swap()), state


def _with_jacoby(state: MatchState, jacoby: bool) -> MatchState:
    if not jacoby or state.match_length:
        return state
    return state.at_decision(doubled=state.doubled, dice=state.dice, jacoby=True)


def move_text(pos: Position, dice: tuple[int, int], result: Position) -> str:
    """The standard notation of the legal play of ``dice`` in ``pos`` (mover's view) that leads to ``result``."""
    for move in legal_moves(pos, dice):
        if move.result == result:
            return move.text
    raise ProtocolError(f"the bot's result {result.gnubg_id()!r} is not a legal play of {dice} in {pos.gnubg_id()!r}")


def answer(bot: Bot, line: str, *, jacoby: bool = False) -> str | None:
    """bgbot's reply to one line of the protocol; None means "close the connection".

    Board lines are answered by asking ``bot``; the reply never ends with a
    newline.  Bad input gives an ``Error: ...`` reply, never an exception.
    """
    text = line.replace("\x00", "").strip()  # gnubg ends each line it sends with a NUL byte too
    low = text.lower()
    if not text:
        return "Error: no command given"
    if low in ("exit", "quit"):
        return None
    if low == "version":
        return VERSION_TEXT
    if low.startswith("set "):
        return "Error: set options are not supported"
    if not low.startswith("board:"):
        return f"Error: unknown command {text[:60]!r}"
    try:
        pos, state = read_board(text)
        state = _with_jacoby(state, jacoby)
        if pos.is_game_over():
            return "Error: the game is over in this board"
        if state.doubled:
            return "take" if bot.take(pos, state) else "drop"
        if state.dice is None:
            # a dead cube (Crawford game, a 1-point match, a cube that already wins the match) is never turned
            return "double" if state.may_double and bot.double(pos, state) else "roll"
        legal = successors(pos, state.dice)
        if not legal:
            return ""
        result = legal[0] if len(legal) == 1 else bot.move(pos, state.dice, state)
        return move_text(pos, state.dice, result)
    except BgbotError as exc:
        return f"Error: {exc}".replace("\n", " ")


def serve_lines(bot: Bot, read_line: Callable[[], str], write_line: Callable[[str], None], *,
                jacoby: bool = False, lock: threading.Lock | None = None) -> int:
    """Answer lines until the input ends or ``exit``; returns the number of lines answered.

    ``lock`` (shared by the connections of one server) is held while the bot answers.
    """
    n = 0
    while True:
        line = read_line()
        if not line:
            return n
        with lock if lock is not None else contextlib.nullcontext():
            reply = answer(bot, line, jacoby=jacoby)
        if reply is None:
            return n
        write_line(reply)
        n += 1


def serve_stdio(bot: Bot, stdin: IO[str] | None = None, stdout: IO[str] | None = None, *,
                jacoby: bool = False) -> int:
    """Speak the protocol on stdin/stdout (one board line in, one answer line out)."""
    inp = stdin if stdin is not None else sys.stdin
    out = stdout if stdout is not None else sys.stdout

    def write(reply: str) -> None:
        out.write(reply + "\n")
        out.flush()

    return serve_lines(bot, inp.readline, write, jacoby=jacoby)


MAX_LINE = 4096  # characters: a FIBS board line is about 150; anything longer is refused
IDLE_TIMEOUT = 600.0  # seconds a connection may stay silent (gnubg thinks between its own moves)
MAX_CLIENTS = 64  # connections served at once (a thread each); more are told so and closed
LISTEN_BACKLOG = 128  # connections the kernel queues before they are accepted (socketserver's default is 5)


def serve_external(
    bot: Bot,
    port: int,
    *,
    host: str = "localhost",
    once: bool = False,
    jacoby: bool = False,
    ready: Callable[[int], None] | None = None,
    log: IO[str] | None = None,
    idle_timeout: float = IDLE_TIMEOUT,
    max_clients: int = MAX_CLIENTS,
) -> None:
    """Listen on ``host:port`` and answer every connection in its own thread (gnubg connects, plays, disconnects).

    One slow or silent client never holds up the others: reading and writing
    happen per connection, and only the bot's answer is taken in turn (one
    lock, as a bot's engine or pipe serves one question at a time).  A
    connection silent for ``idle_timeout`` seconds is closed, a line longer
    than :data:`MAX_LINE` gets one ``Error:`` line and the connection is
    closed, and beyond ``max_clients`` connections a new one is told so and
    closed.  ``port`` 0 picks a free port; ``ready(port)`` is called once
    listening.  With ``once`` the server returns after the first connection
    closes.  Raises :class:`~bgbot.errors.EngineError` when the host is empty
    (say ``0.0.0.0`` to listen on every interface) or the port cannot be bound.
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port < 65536:
        raise EngineError(f"the port must be 0..65535, got {port!r}")
    if not isinstance(host, str) or not host.strip():
        raise EngineError(
            f"the host to listen on must be named (localhost, or 0.0.0.0 for every interface), got {host!r}"
        )
    lock = threading.Lock()
    clients = threading.BoundedSemaphore(max_clients)
    done = threading.Event()

    def say(text: str) -> None:
        if log is not None:
            print(f"bgbot: {text}", file=log, flush=True)

    class Handler(socketserver.StreamRequestHandler):
        timeout = idle_timeout  # the socket's read timeout (StreamRequestHandler applies it)

        def handle(self) -> None:
            peer = f"{self.client_address[0]}:{self.client_address[1]}"
            if not clients.acquire(blocking=False):
                with contextlib.suppress(OSError):
                    self.wfile.write(f"Error: busy, {max_clients} connections already\n".encode())
                say(f"connection from {peer} refused: {max_clients} connections already")
                return
            say(f"connection from {peer}")
            try:
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                n = serve_lines(bot, self._read, self._write, jacoby=jacoby, lock=lock)
                say(f"connection closed after {n} answers")
            except (OSError, ProtocolError) as exc:
                say(f"connection from {peer} dropped: {exc}")
            finally:
                clients.release()
                if once:
                    done.set()

        def _read(self) -> str:
            raw = self.rfile.readline(MAX_LINE + 1)
            if len(raw) > MAX_LINE:
                self._write(f"Error: a line longer than {MAX_LINE} characters")
                raise ProtocolError(f"a line longer than {MAX_LINE} characters")
            return raw.decode("utf-8", errors="replace")

        def _write(self, reply: str) -> None:
            self.wfile.write((reply + "\n").encode())

    class Server(socketserver.ThreadingTCPServer):
        allow_reuse_address = True
        daemon_threads = True
        request_queue_size = LISTEN_BACKLOG

    try:
        srv = Server((host, port), Handler)
    except OSError as exc:
        raise EngineError(f"cannot listen on {host}:{port}: {exc}") from None
    with srv:
        bound = int(srv.server_address[1])
        say(f"external player {bot.name} listening on {host}:{bound}")
        if ready is not None:
            ready(bound)
        if once:
            runner = threading.Thread(target=srv.serve_forever, daemon=True)
            runner.start()
            done.wait()
            srv.shutdown()
        else:
            srv.serve_forever()
