"""Whether bgbot's kernels run compiled by numba or as plain Python, decided once per process.

The move generator, the encoding, the hand-made features, the forward
pass and the bear-off lookups are written once, in the subset of Python that
numba compiles (:mod:`bgbot.rules.movegen`, :mod:`bgbot.eval.encoding`,
:mod:`bgbot.eval.features`, :mod:`bgbot.eval.inference`,
:mod:`bgbot.eval.evaluate`, :mod:`bgbot.eval.bearoff`).  They take :func:`njit` from here instead of
numba's.

- **Compiled** (the default): :func:`njit` is ``numba.njit``; compiled code is
  cached on disk next to the sources, so only the first call after an install
  compiles.  Importing numba and loading the cached code still costs about a
  second per process, which every batch job repays many times over.
- **Interpreted**: :func:`njit` returns the function unchanged and numba is
  never imported.  A one-position question at 1-ply (``bgbot move``, ``eval``,
  ``cube``) needs a few dozen network evaluations: as plain Python and numpy
  that takes milliseconds, so the command finishes in well under a second.
  The network pass then runs as numpy matrix products
  (:meth:`bgbot.eval.inference.NumpyNet.probs_numpy`).

The mode is fixed by the first import of a kernel module: the environment
variable ``BGBOT_JIT`` (``0``/``off``: interpreted, ``1``/``on``: compiled)
wins, otherwise the CLI calls :func:`interpret` for its one-position 1-ply
commands before it imports the engine, and for its one-position 2-ply
commands while the compiled kernels are not cached yet (:func:`kernels_cached`);
everything else compiles.  Both modes give the same features bit for bit and
the same probabilities within float32 rounding (``tests/test_jit_modes.py``).

**Where compiled code is cached.**  numba writes its cache next to the
sources (``bgbot/*/__pycache__``) when that folder is writable; an install
location that is not (a system-wide or read-only install) gets
``NUMBA_CACHE_DIR`` pointed at the user's cache folder (:func:`cache_dir`:
``$XDG_CACHE_HOME/bgbot/numba``, ``~/.cache/bgbot/numba``; macOS
``~/Library/Caches/bgbot/numba``; Windows ``%LOCALAPPDATA%\\bgbot\\numba``)
before numba is imported.  A ``NUMBA_CACHE_DIR`` the user set wins.  Compiling
everything takes 20-30 s once per install (``bgbot warm-up`` does it with a
progress bar, and the commands that need the compiled kernels run it first);
:func:`mark_cached` leaves a marker there so later processes know.
"""

from __future__ import annotations

import hashlib
import os
import struct
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_ENV = "BGBOT_JIT"
_used = False  # has a kernel module been imported (taken njit) in this process? then the mode is fixed


def _from_env() -> bool | None:
    text = os.environ.get(_ENV)
    if text is None or text.strip() == "":
        return None
    value = text.strip().lower()
    if value in ("0", "off", "false", "no"):
        return False
    if value in ("1", "on", "true", "yes"):
        return True
    from bgbot.errors import ConfigError, quote_input

    raise ConfigError(f"{_ENV} must be 0/off (plain Python) or 1/on (numba), got {quote_input(text)}")


_env_choice = _from_env()
COMPILED: bool = True if _env_choice is None else _env_choice


def interpret() -> bool:
    """Run the kernels as plain Python in this process, unless ``BGBOT_JIT`` says otherwise.

    Must come before the first import of a kernel module (they read the mode
    when they are imported); afterwards it changes nothing.  Returns whether
    the kernels are now interpreted.
    """
    global COMPILED
    if _env_choice is None and not _used:
        COMPILED = False
    return not COMPILED


def board_dtype() -> type:
    """The integer type the kernels read boards in: int8 compiled; int64 interpreted.

    numba widens int8 checker counts to 64 bits in arithmetic; numpy's int8
    scalars do not (a pip count of 15 checkers on the bar overflows them), so
    interpreted kernels are handed int64 boards.
    """
    import numpy as np

    return np.int8 if COMPILED else np.int64


_PACKAGE = Path(__file__).resolve().parent
#: the packages whose modules hold numba kernels (their ``__pycache__`` is numba's in-tree cache)
KERNEL_PACKAGES = ("rules", "eval")
_CACHE_ENV = "NUMBA_CACHE_DIR"
_cache_configured = False


def writable(folder: Path) -> bool:
    """Can this process create a file in ``folder`` (made if missing)?  Tried for real, as numba does:
    permission bits say nothing of a read-only file system, and root ignores them."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


def user_cache_root(env: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """The user's cache folder for bgbot's compiled kernels (what ``platformdirs.user_cache_dir`` would say).

    Linux and the other Unixes: ``$XDG_CACHE_HOME/bgbot/numba``, else ``~/.cache/bgbot/numba``; macOS:
    ``~/Library/Caches/bgbot/numba``; Windows: ``%LOCALAPPDATA%\\bgbot\\numba``.
    """
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    home = Path(env.get("HOME") or Path.home())
    if platform.startswith("win"):
        base = Path(env["LOCALAPPDATA"]) if env.get("LOCALAPPDATA") else home / "AppData" / "Local"
    elif platform == "darwin":
        base = home / "Library" / "Caches"
    else:
        xdg = env.get("XDG_CACHE_HOME", "")
        base = Path(xdg) if os.path.isabs(xdg) else home / ".cache"  # the XDG spec ignores a relative path
    return base / "bgbot" / "numba"


def cache_dir(
    env: Mapping[str, str] | None = None,
    package: Path = _PACKAGE,
    can_write: Callable[[Path], bool] | None = None,
) -> Path | None:
    """Where numba should cache bgbot's compiled kernels: None for its default (next to the sources).

    A ``NUMBA_CACHE_DIR`` in ``env`` wins; else the sources' ``__pycache__``
    folders when they can be written (``can_write``, default :func:`writable`);
    else :func:`user_cache_root`.
    """
    env = os.environ if env is None else env
    can_write = writable if can_write is None else can_write
    if env.get(_CACHE_ENV):
        return Path(env[_CACHE_ENV])
    if all(can_write(package / sub / "__pycache__") for sub in KERNEL_PACKAGES):
        return None
    return user_cache_root(env)


def configure_cache() -> Path | None:
    """Point numba's cache at :func:`cache_dir` (once per process, before numba compiles anything).

    Sets ``NUMBA_CACHE_DIR`` when the install location is not writable (child
    processes inherit it); returns the folder, None for numba's default.
    """
    global _cache_configured
    folder = cache_dir()
    if not _cache_configured and folder is not None and not os.environ.get(_CACHE_ENV):
        os.environ[_CACHE_ENV] = str(folder)
        numba = sys.modules.get("numba")
        if numba is not None:  # imported already (by someone else): its config read the environment then
            numba.config.CACHE_DIR = str(folder)
    _cache_configured = True
    return folder


def _kernels_key() -> str:
    """What the cached machine code depends on: the kernels' sources, numba, Python and the machine."""
    import importlib.util
    import platform

    h = hashlib.sha256()
    for sub in KERNEL_PACKAGES:
        for f in sorted((_PACKAGE / sub).glob("*.py")):
            h.update(f.name.encode())
            h.update(f.read_bytes())
    # numba's version file, found without importing numba (importlib.metadata scans every installed package)
    spec = importlib.util.find_spec("numba")
    if spec is not None and spec.origin:
        version_file = Path(spec.origin).with_name("_version.py")
        h.update(version_file.read_bytes() if version_file.is_file() else spec.origin.encode())
    h.update(f"{sys.version} {platform.machine()}".encode())
    return h.hexdigest()[:16]


def _marker(folder: Path | None) -> Path:
    root = folder if folder is not None else _PACKAGE / "__pycache__"
    return root / f"bgbot-kernels-{_kernels_key()}.ready"


def kernels_cached() -> bool:
    """Have the compiled kernels of this bgbot, numba and Python been cached (:func:`mark_cached`)?

    True means a compiled process loads them in about a second instead of
    compiling them for 20-30 s.  Imports nothing heavy (not numba).
    """
    try:
        return _marker(cache_dir()).is_file()
    except OSError:
        return False


def mark_cached() -> Path | None:
    """Record that the kernels are compiled and cached (after a warm-up); returns the marker, None if unwritable."""
    marker = _marker(configure_cache())
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("bgbot's numba kernels are compiled and cached here\n")
    except OSError:
        return None
    return marker


def njit(**options: Any) -> Callable[[F], F]:
    """``numba.njit(**options)`` when compiling, else a decorator that leaves the function as it is."""
    global _used
    _used = True
    if COMPILED:
        if not _cache_configured:
            configure_cache()
        import numba

        return numba.njit(**options)  # type: ignore[no-any-return]

    def keep(fn: F) -> F:
        return fn

    return keep


def wrapping(fn: F) -> F:
    """An interpreted kernel ``fn`` whose int64 arithmetic may wrap around, run without numpy's overflow warning."""
    import functools

    import numpy as np

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(over="ignore"):
            return fn(*args, **kwargs)

    return run  # type: ignore[return-value]


def _f32_from_bits_py(bits: int) -> float:
    """The float32 whose bit pattern is the 32-bit integer ``bits``, as a Python float."""
    return float(struct.unpack("<f", struct.pack("<i", int(bits)))[0])


def f32_from_bits() -> Callable[[int], float]:
    """The function from an int32 bit pattern to its float32, for the mode in force.

    Compiled: a numba intrinsic (an LLVM bitcast, usable inside kernels);
    interpreted: :func:`struct`'s reinterpretation.  Kernel modules call this
    once, when they are imported.
    """
    if not COMPILED:
        return _f32_from_bits_py
    if not _cache_configured:
        configure_cache()
    from numba.core import types
    from numba.core.extending import intrinsic

    @intrinsic  # type: ignore[misc]
    def bitcast(typingctx: Any, bits: Any) -> Any:
        sig = types.float32(types.int32)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            return builder.bitcast(args[0], context.get_value_type(types.float32))

        return sig, codegen

    return bitcast  # type: ignore[no-any-return]
