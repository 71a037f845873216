"""Bots to pit against each other: the :class:`Bot` protocol, adapters and text specs.

A spec names a bot and its options, ``KIND[:KEY=VALUE[,KEY=VALUE...]]``:

==========================================  ======================================================
``bgbot``, ``bgbot:ply=2``                  bgbot's network; options ``checkpoint=PATH`` (default:
``bgbot:checkpoint=PATH,ply=1``             ``$BGBOT_CHECKPOINT`` or the shipped model), ``ply``
                                            (XG numbering, 1-3), ``cube_ply`` (default ``ply``),
                                            ``bearoff=0`` to answer bear-offs by the network,
                                            ``cubeful=0`` to rank plays cubeless (default: cubeful
                                            money equity or match winning chances; cubeless in
                                            a pit without the cube), ``filter`` (the move filter
                                            of 2-/3-ply: ``tiny``, ``narrow``, ``normal``,
                                            ``large``, ``huge`` or ``KEEP:MARGIN``)
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
``cmd:timeout=5:COMMAND``,                  the seconds each answer of a ``cmd:``/``tcp:`` engine
``tcp:timeout=5:HOST:PORT``                 may take (default 60), in front of the command or address
==========================================  ======================================================

Every value is checked when the spec is read (a ply out of range, a probability
that is not one, a negative seed, a timeout that is not a positive number of
seconds): a bad spec is a :class:`~bgbot.errors.ConfigError` before any game.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from bgbot.config import check_seed
from bgbot.engine.api import Engine
from bgbot.engine.search import check_ply, parse_filters
from bgbot.errors import ConfigError, ascii_int, quote_input
from bgbot.eval.bearoff import get_bearoff_db
from bgbot.play.bots.base import BaseBot, Bot
from bgbot.play.bots.bgsage import BgsageBot, check_bgsage_ply, require_bgsage
from bgbot.play.bots.fibsline import DEFAULT_TIMEOUT, FibsLineBot, PipeEngineBot, TcpEngineBot, check_timeout
from bgbot.play.bots.gnubg import MAX_GNUBG_PLY, GnubgBot, find_gnubg
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
    "bgbot": {"checkpoint": str, "ply": int, "cube_ply": int, "bearoff": bool, "cubeful": bool, "filter": str},
    "gnubg": {"ply": int, "cube_ply": int, "path": str, "timeout": float},
    "bgsage": {"ply": int, "cube_ply": int, "cubeful": bool},
    "pubeval": {},
    "random": {"seed": int, "double": float, "take": float},
}
_RAW_KINDS = ("cmd", "tcp", "ubgi")
_RAW_OPTION = re.compile(r"\s*(timeout)\s*=\s*([^:]*):", re.IGNORECASE)  # cmd:timeout=5:COMMAND
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _gnubg_ply(label: str) -> Callable[[object], object]:
    def check(value: object) -> object:
        if not isinstance(value, int) or not 0 <= value <= MAX_GNUBG_PLY:
            raise ConfigError(f"gnubg {label} must be 0..{MAX_GNUBG_PLY} (gnubg's numbering), got {value!r}")
        return value

    return check


def _probability(label: str) -> Callable[[object], object]:
    def check(value: object) -> object:
        if not isinstance(value, float) or not math.isfinite(value) or not 0.0 <= value <= 1.0:
            raise ConfigError(f"{label} must be a probability 0..1, got {value!r}")
        return value

    return check


# (kind, option) -> the check of its value (raises ConfigError saying what is wrong)
_CHECKS: dict[tuple[str, str], Callable[[object], object]] = {
    ("bgbot", "ply"): check_ply,
    ("bgbot", "cube_ply"): check_ply,
    ("bgbot", "filter"): lambda v: parse_filters(v) and v,
    ("gnubg", "ply"): _gnubg_ply("ply"),
    ("gnubg", "cube_ply"): _gnubg_ply("cube_ply"),
    ("gnubg", "timeout"): check_timeout,
    ("bgsage", "ply"): lambda v: check_bgsage_ply(v),
    ("bgsage", "cube_ply"): lambda v: check_bgsage_ply(v, "cube_ply"),
    ("random", "seed"): lambda v: check_seed(v, "seed"),
    ("random", "double"): _probability("double"),
    ("random", "take"): _probability("take"),
    ("cmd", "timeout"): check_timeout,
    ("tcp", "timeout"): check_timeout,
}


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
    return ConfigError(f"bad bot spec {quote_input(text)}: {why}")


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


def _checked(text: str, kind: str, key: str, value: object) -> object:
    """``value`` if it is a possible value of option ``key`` of ``kind`` (``ConfigError`` quoting the spec)."""
    check = _CHECKS.get((kind, key))
    if check is None:
        return value
    try:
        return check(value)
    except ConfigError as exc:
        raise _bad(text, str(exc)) from None


def _raw_options(text: str, kind: str, rest: str) -> tuple[dict[str, object], str]:
    """The ``KEY=VALUE:`` options in front of a ``cmd:``/``tcp:`` target, and the target."""
    options: dict[str, object] = {}
    while (m := _RAW_OPTION.match(rest)) is not None:
        key = m.group(1).lower()
        if key in options:
            raise _bad(text, f"option {key!r} given twice")
        options[key] = _checked(text, kind, key, _convert(text, key, m.group(2).strip(), float))
        rest = rest[m.end() :]
    return options, rest


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
        raw, rest = _raw_options(text, kind, rest) if kind in ("cmd", "tcp") else ({}, rest)
        if not rest.strip():
            raise _bad(text, f"'{kind}:' needs " + ("HOST:PORT" if kind == "tcp" else "a command line"))
        if kind == "tcp":
            host, _, port = rest.strip().rpartition(":")
            if not host or not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
                raise _bad(text, "expected tcp:HOST:PORT with a port 1..65535")
            return BotSpec(t, kind, (("host", host), ("port", int(port)), *raw.items()))
        try:
            argv = shlex.split(rest)
        except ValueError as exc:
            raise _bad(text, f"cannot split the command line: {exc}") from None
        if not argv:
            raise _bad(text, f"'{kind}:' needs a command line")
        return BotSpec(t, kind, (("argv", tuple(argv)), *raw.items()))
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
        options[key] = _checked(text, kind, key, _convert(text, key, value.strip(), known[key]))
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
            filters=parse_filters(o.get("filter", "normal")),
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
    timeout = float(o.get("timeout", DEFAULT_TIMEOUT))  # type: ignore[arg-type]
    if s.kind == "cmd":
        return PipeEngineBot(list(o["argv"]), timeout=timeout, name=label)  # type: ignore[call-overload]
    if s.kind == "ubgi":
        from bgbot.play.bots.ubgi import UbgiEngineBot

        return UbgiEngineBot(list(o["argv"]), name=label)  # type: ignore[call-overload]
    if s.kind == "tcp":
        host, port = str(o["host"]), int(o["port"])  # type: ignore[call-overload]
        return TcpEngineBot(host, port, timeout=timeout, name=label)
    raise _bad(s.text, f"unknown bot {s.kind!r}")
