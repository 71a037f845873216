"""GNU Backgammon as an opponent, over its external-player socket.

:class:`GnubgBot` starts Debian's ``gnubg`` headless (``gnubg -t -q -r``),
feeds it commands on stdin (evaluation plies for checker play and cube,
``set jacoby``, no beavers, one thread) and finally ``external
localhost:PORT``, after which gnubg listens on that port and answers FIBS
``board:`` lines (see :mod:`bgbot.play.bots.fibsline`).  One gnubg process serves
a bot for its whole life; :meth:`GnubgBot.close` stops it.

Plies here are **gnubg's** numbering (0-ply = its network alone, which is
bgbot's 1-ply).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from bgbot.errors import ConfigError, EngineError
from bgbot.play.bots.fibsline import (
    DEFAULT_TIMEOUT,
    FibsLineBot,
    LineChannel,
    _die_with_parent,
    _stop_process,
    check_timeout,
)

GNUBG_PATH = "/usr/games/gnubg"
INSTALL_HINT = "install it with `apt-get install -y gnubg` (Debian/Ubuntu; the program lands in /usr/games/gnubg)"
MAX_GNUBG_PLY = 4


def find_gnubg(path: str | os.PathLike[str] | None = None) -> str:
    """The gnubg executable to run: ``path``, else ``/usr/games/gnubg``, else ``gnubg`` on the PATH.

    Raises :class:`~bgbot.errors.EngineError` saying how to install it when
    there is none.
    """
    if path is not None:
        p = Path(path)
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
        found = shutil.which(str(path))
        if found:
            return found
        raise EngineError(f"GNU Backgammon not found at {str(path)!r}: {INSTALL_HINT}")
    if Path(GNUBG_PATH).is_file() and os.access(GNUBG_PATH, os.X_OK):
        return GNUBG_PATH
    found = shutil.which("gnubg")
    if found:
        return found
    raise EngineError(f"GNU Backgammon (gnubg) is not installed: {INSTALL_HINT}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class GnubgBot(FibsLineBot):
    """GNU Backgammon at ``ply`` (gnubg's numbering) for checker play and ``cube_ply`` for the cube.

    ``jacoby`` sets gnubg's Jacoby rule for money games (``set jacoby``);
    ``cubeful`` False makes its checker play cubeless (as gnubg's reference
    data are); ``timeout`` bounds each answer, ``start_timeout`` the start-up.
    """

    def __init__(
        self,
        ply: int = 0,
        cube_ply: int | None = None,
        *,
        jacoby: bool = False,
        cubeful: bool = True,
        path: str | os.PathLike[str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        start_timeout: float = 30.0,
        name: str | None = None,
    ) -> None:
        for label, value in (("ply", ply), ("cube_ply", cube_ply)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or not 0 <= value <= MAX_GNUBG_PLY):
                raise ConfigError(f"gnubg {label} must be 0..{MAX_GNUBG_PLY} (gnubg's numbering), got {value!r}")
        self.exe = find_gnubg(path)
        self.ply = ply
        self.cube_ply = ply if cube_ply is None else cube_ply
        self.jacoby = bool(jacoby)
        self.cubeful = bool(cubeful)
        self.timeout = check_timeout(timeout)
        self.start_timeout = check_timeout(start_timeout)
        self.name = name or f"gnubg:ply={ply}"
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._chan: LineChannel | None = None
        self._log: tempfile._TemporaryFileWrapper[bytes] | None = None
        self._start()

    # ---- process ------------------------------------------------------
    def commands(self, port: int) -> str:
        """What gnubg is fed on stdin before it starts listening on ``port``."""
        return "\n".join([
            "set threads 1",
            "set beavers 0",
            f"set jacoby {'on' if self.jacoby else 'off'}",
            f"set evaluation chequerplay evaluation plies {self.ply}",
            f"set evaluation chequerplay evaluation cubeful {'on' if self.cubeful else 'off'}",
            f"set evaluation cubedecision evaluation plies {self.cube_ply}",
            f"external localhost:{port}",
            "",
        ])

    def _log_tail(self) -> str:
        if self._log is None:
            return ""
        with contextlib.suppress(OSError):
            self._log.seek(0)
            lines = self._log.read().decode(errors="replace").strip().splitlines()
            return " | ".join(lines[-4:])
        return ""

    def _start(self) -> None:
        last = ""
        for _attempt in range(3):  # another program may grab the free port between our probe and gnubg's bind
            port = _free_port()
            self._log = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the gnubg process
            try:
                self._proc = subprocess.Popen(
                    [self.exe, "-t", "-q", "-r"],
                    stdin=subprocess.PIPE,
                    stdout=self._log,
                    stderr=subprocess.STDOUT,
                    preexec_fn=_die_with_parent,
                )
                assert self._proc.stdin is not None  # created above
                self._proc.stdin.write(self.commands(port).encode())
                self._proc.stdin.flush()
            except OSError as exc:
                self.close()
                raise EngineError(f"cannot start GNU Backgammon {self.exe!r}: {exc}; {INSTALL_HINT}") from None
            deadline = time.monotonic() + self.start_timeout
            while time.monotonic() < deadline:
                if self._proc.poll() is not None:
                    break
                try:
                    self._sock = socket.create_connection(("127.0.0.1", port), timeout=2)
                except OSError:
                    time.sleep(0.05)
                    continue
                self._sock.settimeout(None)
                self._chan = LineChannel.from_socket(self._sock, f"gnubg (pid {self._proc.pid})")
                return
            last = self._log_tail()
            self.close()
        raise EngineError(f"GNU Backgammon {self.exe!r} did not start listening (its output: {last or 'none'})")

    def _channel(self) -> LineChannel:
        if self._proc is None or self._chan is None:
            raise EngineError("gnubg is not running (closed)")
        if self._proc.poll() is not None:
            raise EngineError(f"gnubg died (exit status {self._proc.returncode}); its output: {self._log_tail()}")
        return self._chan

    @property
    def pid(self) -> int | None:
        """The gnubg process id while it runs."""
        return self._proc.pid if self._proc is not None else None

    def reset(self) -> None:
        """Start a fresh gnubg (after a fault its answers may be out of step)."""
        self.close()
        self._start()

    def close(self) -> None:
        """Say ``exit`` to gnubg, close the socket and stop the process."""
        if self._chan is not None and self._proc is not None and self._proc.poll() is None:
            with contextlib.suppress(EngineError):
                self._chan.send("exit")
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
        _stop_process(self._proc)
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.close()
        self._proc = None
        self._sock = None
        self._chan = None
        self._log = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
