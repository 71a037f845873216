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
commands before it imports the engine; everything else compiles.  Both modes
give the same features bit for bit and the same probabilities within float32
rounding (``tests/test_jit_modes.py``).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
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


def njit(**options: Any) -> Callable[[F], F]:
    """``numba.njit(**options)`` when compiling, else a decorator that leaves the function as it is."""
    global _used
    _used = True
    if COMPILED:
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
    from numba.core import types
    from numba.core.extending import intrinsic

    @intrinsic  # type: ignore[misc]
    def bitcast(typingctx: Any, bits: Any) -> Any:
        sig = types.float32(types.int32)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            return builder.bitcast(args[0], context.get_value_type(types.float32))

        return sig, codegen

    return bitcast  # type: ignore[no-any-return]
