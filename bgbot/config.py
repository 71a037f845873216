"""Frozen-dataclass configs read from TOML presets with ``key=value`` overrides, and the outputs runs write.

Unknown keys, wrong types and unreadable files raise :class:`ConfigError`
quoting the offending key, value or path.  An output file or folder that
cannot be written raises :class:`~bgbot.errors.OutputError`, checked before
the work starts (:func:`check_output_file`, :func:`check_output_dir`) and
again when it is written (:func:`write_text_atomic`).
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import tomllib
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

from bgbot import fileio
from bgbot.errors import ConfigError, OutputError, ascii_int, quote_input

T = TypeVar("T")


def _coerce(name: str, value: Any, typ: Any) -> Any:
    origin = typing.get_origin(typ)
    if origin in (typing.Union, types.UnionType):
        errors = []
        for arg in typing.get_args(typ):
            if arg is type(None):
                if value is None or (isinstance(value, str) and value.lower() in ("none", "")):
                    return None
                continue
            try:
                return _coerce(name, value, arg)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(f"config key {name!r}: value {value!r} does not fit {typ}")
    if origin in (tuple, list):
        if isinstance(value, str):
            value = [v for v in value.replace("[", "").replace("]", "").replace("(", "").replace(")", "")
                     .split(",") if v.strip()]
        if not isinstance(value, list | tuple):
            raise ConfigError(f"config key {name!r} needs a list, got {value!r}")
        (item,) = {a for a in typing.get_args(typ) if a is not Ellipsis} or {Any}
        seq = [_coerce(name, v, item) for v in value]
        return tuple(seq) if origin is tuple else seq
    if typ is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
            return value.lower() in ("true", "1", "yes")
        raise ConfigError(f"config key {name!r} needs true or false, got {value!r}")
    if typ is int:
        if isinstance(value, bool):
            raise ConfigError(f"config key {name!r} needs an integer, got {value!r}")
        if isinstance(value, int):
            return value
        if isinstance(value, str):
            try:
                return ascii_int(value.replace("_", ""))
            except ValueError:
                pass
        raise ConfigError(f"config key {name!r} needs an integer, got {value!r}")
    if typ is float:
        if isinstance(value, bool):
            raise ConfigError(f"config key {name!r} needs a number, got {value!r}")
        if isinstance(value, int | float):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        raise ConfigError(f"config key {name!r} needs a number, got {value!r}")
    if typ is str:
        if isinstance(value, str):
            return value
        raise ConfigError(f"config key {name!r} needs text, got {value!r}")
    return value


MAX_SEED = 2**63 - 1  # seeds are whole numbers 0..MAX_SEED (numpy's generators refuse negative ones)


def check_seed(seed: object, what: str = "seed") -> int:
    """``seed`` if it is a whole number 0..:data:`MAX_SEED` (``ConfigError`` naming ``what`` otherwise)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ConfigError(f"{what} must be a whole number 0..{MAX_SEED}, got {quote_input(seed)}")
    return seed


def check_whole_fields(obj: object, what: str, minimums: dict[str, int]) -> None:
    """Each field of ``obj`` named in ``minimums`` is a whole number at least its minimum.

    Otherwise a ``ConfigError`` naming ``what`` and the field, quoting its value (a settings
    dataclass's ``__post_init__``: ``check_whole_fields(self, "rollout", {"trials": 1})``).
    """
    for name, lo in minimums.items():
        value = getattr(obj, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < lo:
            raise ConfigError(f"{what} {name} must be a whole number >= {lo}, got {quote_input(value)}")


def build_config(cls: type[T], values: dict[str, Any], *, source: str = "config") -> T:
    """Make ``cls`` from a dict, checking every key and type."""
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    kwargs = {}
    for key, value in values.items():
        if key not in names:
            raise ConfigError(f"unknown key {key!r} in {source}; known keys: {', '.join(sorted(names))}")
        kwargs[key] = _coerce(key, value, hints[key])
    try:
        return cls(**kwargs)
    except ConfigError:
        raise
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"bad {source}: {exc}") from None


def parse_overrides(items: list[str] | None) -> dict[str, str]:
    """``["lr=0.01", "hidden=128,128"]`` -> ``{"lr": "0.01", "hidden": "128,128"}``."""
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"override {item!r} is not of the form key=value")
        out[key.strip()] = value.strip()
    return out


def read_toml(path: str | Path, what: str = "config file") -> dict[str, Any]:
    """The tables of the TOML file ``path``; a missing, unreadable or invalid file is a :class:`ConfigError`."""
    p = Path(path)
    try:
        return tomllib.loads(p.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{what} {str(p)!r} does not exist") from None
    except OSError as exc:  # a folder, no permission, an I/O error
        raise ConfigError(f"cannot read {what} {str(p)!r}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{what} {str(p)!r} is not valid TOML: {exc}") from None


def load_config(cls: type[T], path: str | Path | None = None, overrides: list[str] | None = None) -> T:
    """Defaults of ``cls``, updated by a TOML file, updated by ``key=value`` overrides."""
    values: dict[str, Any] = read_toml(path) if path is not None else {}
    base = build_config(cls, values, source=f"config file {str(path)!r}" if path else "config")
    over = parse_overrides(overrides)
    if over:
        merged = {**dataclasses.asdict(base), **over}  # type: ignore[call-overload]
        base = build_config(cls, merged, source="--set overrides")
    return base


def config_to_dict(cfg: Any) -> dict[str, Any]:
    """A plain dict of a config dataclass (tuples as lists), for checkpoints and logs."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(cfg).items()}


# ---- outputs ----------------------------------------------------------------


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _unwritable(folder: Path) -> str | None:
    """Why files cannot be written into ``folder`` (made if missing), or None when they can."""
    if folder.exists() and not folder.is_dir():
        return f"{quote_input(str(folder))} is not a folder"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".bgbot-write-test.", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        return f"{quote_input(str(folder))}: {_why(exc)}"
    return None


def check_output_dir(path: str | os.PathLike[str], what: str = "output folder") -> Path:
    """Make ``path`` a folder files can be written into (created if missing); :class:`OutputError` otherwise.

    Done before the work, so a typing mistake or a read-only disk is found
    before hours of games rather than after.
    """
    p = Path(path)
    why = _unwritable(p)
    if why is not None:
        raise OutputError(f"cannot write into the {what} {quote_input(str(p))}: {why}")
    return p


def check_output_file(path: str | os.PathLike[str], what: str = "output file") -> Path:
    """Make sure ``path`` can be written (a regular file or none yet, in a writable folder); ``OutputError``."""
    p = Path(path)
    q = quote_input(str(p))
    if p.exists() and not p.is_file():
        raise OutputError(f"cannot write the {what} {q}: it exists and is not a regular file")
    why = _unwritable(p.parent)
    if why is not None:
        raise OutputError(f"cannot write the {what} {q}: {why}")
    return p


def write_text_atomic(path: str | os.PathLike[str], text: str, what: str = "output file") -> Path:
    """Write ``text`` to ``path`` atomically (temporary file in the same folder, then rename); ``OutputError``.

    A reader (or a kill at any moment) sees the old file or the new one, never
    half of one; a full disk leaves the old file and no temporary file behind.
    """
    p = check_output_file(path, what)
    try:
        fileio.write_text_atomic(p, text)
    except OSError as exc:
        raise OutputError(f"cannot write the {what} {quote_input(str(p))}: {_why(exc)}") from None
    return p
