"""Bots to pit against each other: the :class:`Bot` protocol, adapters and text specs.

A spec names a bot and its options, ``KIND[:KEY=VALUE[,KEY=VALUE...]]``:

==========================================  ======================================================
``bgbot``, ``bgbot:ply=2``                  bgbot's network; options ``checkpoint=PATH`` (default:
``bgbot:checkpoint=PATH,ply=1``             ``$BGBOT_CHECKPOINT`` or the shipped model), ``ply``
                                            (XG numbering, 1-3), ``cube_ply`` (default ``ply``),
                                            ``bearoff=0`` to answer bear-offs by the network,
                                            ``cubeful=0`` to rank plays cubeless (default: cubeful
                                            money equity or match winning chances; cubeless in
                                            a pit without the cube)
``gnubg``, ``gnubg:ply=0``                  GNU Backgammon over its external-player socket;
                                            ``ply`` (gnubg's numbering, 0-4), ``cube_ply``,
                                            ``path`` (default ``/usr/games/gnubg``), ``timeout``
``bgsage``, ``bgsage:ply=2``                Open Sage (``pip install bgsage``), in process; ``ply``
                                            1-3 (XG numbering, like bgbot), ``cube_ply`` (default
                                            ``ply``), ``cubeful=1`` for cubeful checker play
``pubeval``                                 Tesauro's pubeval (never doubles, always takes)
``random``, ``random:seed=3,double=0.1``    uniformly random moves; ``double``/``take``
                                            probabilities (default 0 and 1), ``seed``
``cmd:COMMAND LINE``                        any program speaking the external-player protocol
                                            on stdin/stdout (one FIBS board in, one line out)
``tcp:HOST:PORT``                           an engine listening there (e.g. ``bgbot serve-external``)
``ubgi:COMMAND LINE``                       any program speaking UBGI on stdin/stdout (e.g. ``bgbot ubgi``)
==========================================  ======================================================
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from bgbot.engine.api import Engine
from bgbot.errors import ConfigError, ascii_int
from bgbot.eval.bearoff import get_bearoff_db
from bgbot.play.bots.base import BaseBot, Bot
from bgbot.play.bots.bgsage import BgsageBot, check_bgsage_ply, require_bgsage
from bgbot.play.bots.fibsline import FibsLineBot, PipeEngineBot, TcpEngineBot
from bgbot.play.bots.gnubg import GnubgBot, find_gnubg
from bgbot.play.bots.local import BgbotBot, PubevalBot, RandomBot
from bgbot.rules.dice import Dice

__all__ = [
    "BaseBot",
    "BgbotBot",
    "Bot",
    "BotSpec",
    "Dice",
    "FibsLineBot",
    "PipeEngineBot",
    "PubevalBot",
    "RandomBot",
    "TcpEngineBot",
    "make_bot",
    "parse_bot_spec",
    "prepare_bot",
]

# option name -> type, per kind
_OPTIONS: dict[str, dict[str, type]] = {
    "bgbot": {"checkpoint": str, "ply": int, "cube_ply": int, "bearoff": bool, "cubeful": bool},
    "gnubg": {"ply": int, "cube_ply": int, "path": str, "timeout": float},
    "bgsage": {"ply": int, "cube_ply": int, "cubeful": bool},
    "pubeval": {},
    "random": {"seed": int, "double": float, "take": float},
}
_RAW_KINDS = ("cmd", "tcp", "ubgi")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class BotSpec:
    """A parsed bot spec: ``kind``, typed ``options`` (name, value) and the ``text`` it came from.

    For ``cmd`` and ``tcp`` the single option ``target`` holds the rest of the text.
    """

    text: str
    kind: str
    options: tuple[tuple[str, object], ...] = ()

    def get(self, key: str, default: object = None) -> object:
        """An option's value, or ``default``."""
        return dict(self.options).get(key, default)

    def __str__(self) -> str:
        return self.text


def _bad(text: str, why: str) -> ConfigError:
    return ConfigError(f"bad bot spec {text!r}: {why}")


def _convert(text: str, key: str, value: str, typ: type) -> object:
    try:
        if typ is bool:
            low = value.strip().lower()
            if low not in _TRUE | _FALSE:
                raise ValueError
            return low in _TRUE
        if typ is int:
            return ascii_int(value)
        if typ is float:
            return float(value)
    except ValueError:
        raise _bad(text, f"option {key}={value!r} is not a{'n' if typ is int else ''} {typ.__name__}") from None
    if not value:
        raise _bad(text, f"option {key} is empty")
    return value


def parse_bot_spec(text: str) -> BotSpec:
    """Parse a spec like ``bgbot:ply=2``, ``gnubg:ply=0``, ``pubeval``, ``random`` or ``cmd:./engine``.

    Raises :class:`~bgbot.errors.ConfigError` quoting the spec for an unknown
    kind, an unknown option or a value of the wrong type.
    """
    if not isinstance(text, str) or not text.strip():
        raise _bad(str(text), "empty; expected e.g. 'bgbot:ply=1', 'gnubg:ply=0', 'pubeval' or 'random'")
    t = text.strip()
    kind, _, rest = t.partition(":")
    kind = kind.strip().lower()
    if kind in _RAW_KINDS:
        if not rest.strip():
            raise _bad(text, f"'{kind}:' needs " + ("HOST:PORT" if kind == "tcp" else "a command line"))
        if kind == "tcp":
            host, _, port = rest.strip().rpartition(":")
            if not host or not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
                raise _bad(text, "expected tcp:HOST:PORT with a port 1..65535")
            return BotSpec(t, kind, (("host", host), ("port", int(port))))
        try:
            argv = shlex.split(rest)
        except ValueError as exc:
            raise _bad(text, f"cannot split the command line: {exc}") from None
        if not argv:
            raise _bad(text, f"'{kind}:' needs a command line")
        return BotSpec(t, kind, (("argv", tuple(argv)),))
    if kind not in _OPTIONS:
        raise _bad(text, f"unknown bot {kind!r}; choose one of {', '.join([*_OPTIONS, *_RAW_KINDS])}")
    known = _OPTIONS[kind]
    options: dict[str, object] = {}
    for item in (part.strip() for part in rest.split(",")) if rest.strip() else ():
        key, eq, value = item.partition("=")
        key = key.strip().lower().replace("-", "_")
        if not eq:
            raise _bad(text, f"option {item!r} is not KEY=VALUE")
        if key not in known:
            names = ", ".join(known) or "none"
            raise _bad(text, f"unknown option {key!r} for {kind} (known: {names})")
        if key in options:
            raise _bad(text, f"option {key!r} given twice")
        options[key] = _convert(text, key, value.strip(), known[key])
    return BotSpec(t, kind, tuple(options.items()))


def _as_spec(spec: BotSpec | str) -> BotSpec:
    return spec if isinstance(spec, BotSpec) else parse_bot_spec(spec)


def prepare_bot(spec: BotSpec | str) -> None:
    """Work to do once before bots are built in several processes: find gnubg, build the bear-off database.

    Raises the error a bot would raise (missing gnubg, bad checkpoint) early,
    in the calling process.
    """
    s = _as_spec(spec)
    if s.kind == "gnubg":
        find_gnubg(s.get("path"))  # type: ignore[arg-type]
    elif s.kind == "bgsage":
        check_bgsage_ply(s.get("ply", 1))
        check_bgsage_ply(s.get("cube_ply", s.get("ply", 1)), "cube_ply")
        require_bgsage()
    elif s.kind == "bgbot":
        engine = Engine.load(s.get("checkpoint"), bearoff=bool(s.get("bearoff", True)))  # type: ignore[arg-type]
        if s.get("bearoff", True):
            get_bearoff_db()
        del engine


def make_bot(
    spec: BotSpec | str, *, jacoby: bool = False, seed: int = 0, name: str | None = None, cube: bool = True
) -> Bot:
    """Build the bot a spec names.

    ``jacoby`` is passed to engines that need the money-game rule up front
    (gnubg); ``seed`` seeds a random bot unless its spec has ``seed=``;
    ``name`` defaults to the spec text.  ``cube=False`` (games without the
    cube) makes bgbot rank its plays cubeless unless its spec says ``cubeful=1``.
    """
    s = _as_spec(spec)
    label = name or s.text
    o = dict(s.options)
    if s.kind == "bgbot":
        return BgbotBot.load(
            o.get("checkpoint"),  # type: ignore[arg-type]
            ply=int(o.get("ply", 1)),  # type: ignore[call-overload]
            cube_ply=o.get("cube_ply"),  # type: ignore[arg-type]
            bearoff=bool(o.get("bearoff", True)),
            name=label,
            cubeful=bool(o.get("cubeful", cube)),
        )
    if s.kind == "gnubg":
        kwargs: dict[str, object] = {"jacoby": jacoby, "name": label}
        if "timeout" in o:
            kwargs["timeout"] = o["timeout"]
        return GnubgBot(
            int(o.get("ply", 0)),  # type: ignore[call-overload]
            o.get("cube_ply"),  # type: ignore[arg-type]
            path=o.get("path"),  # type: ignore[arg-type]
            **kwargs,  # type: ignore[arg-type]
        )
    if s.kind == "bgsage":
        return BgsageBot(
            int(o.get("ply", 1)),  # type: ignore[call-overload]
            o.get("cube_ply"),  # type: ignore[arg-type]
            cubeful=bool(o.get("cubeful", False)),
            name=label,
        )
    if s.kind == "pubeval":
        return PubevalBot(name=label)
    if s.kind == "random":
        return RandomBot(
            int(o.get("seed", seed)),  # type: ignore[call-overload]
            double=float(o.get("double", 0.0)),  # type: ignore[arg-type]
            take=float(o.get("take", 1.0)),  # type: ignore[arg-type]
            name=label,
        )
    if s.kind == "cmd":
        return PipeEngineBot(list(o["argv"]), name=label)  # type: ignore[call-overload]
    if s.kind == "ubgi":
        from bgbot.play.bots.ubgi import UbgiEngineBot

        return UbgiEngineBot(list(o["argv"]), name=label)  # type: ignore[call-overload]
    if s.kind == "tcp":
        return TcpEngineBot(str(o["host"]), int(o["port"]), name=label)  # type: ignore[call-overload]
    raise _bad(s.text, f"unknown bot {s.kind!r}")
