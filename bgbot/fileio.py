"""Atomic file writes: every file bgbot writes goes through here.

A file is written to a temporary file in the target's own folder, flushed to
the disk, made readable (``0644``: ``mkstemp`` creates private files) and
renamed over the target.  A reader, or a kill at any moment, sees the old
file or the new one, never half of one; a failure part-way (a full disk, an
exception in the caller's writing code, Ctrl-C) removes the temporary file
and leaves the old file as it was.

The standard library has the pieces (``tempfile.mkstemp``, ``os.replace``)
but no one call that puts them together, and none of the small PyPI packages
that do is worth a dependency for these twenty lines.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Literal

__all__ = ["atomic_open", "write_text_atomic"]


@contextmanager
def atomic_open(path: str | os.PathLike[str], mode: Literal["w", "wb"] = "wb") -> Iterator[IO[Any]]:
    """A file object whose contents replace ``path`` when the ``with`` block ends without an exception.

    ``mode`` ``"wb"`` (bytes) or ``"w"`` (UTF-8 text, ``\\n`` line ends).  The
    folder must exist; an ``OSError`` (or anything the block raises) propagates
    after the temporary file is removed.
    """
    p = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        text = {"encoding": "utf-8", "newline": "\n"} if mode == "w" else {}
        with os.fdopen(fd, mode, **text) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str, *, parents: bool = False) -> Path:
    """Replace ``path`` by ``text`` (UTF-8) atomically (:func:`atomic_open`); returns the path.

    With ``parents`` the missing folders above ``path`` are made first.
    """
    p = Path(path)
    if parents:
        p.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(p, "w") as f:
        f.write(text)
    return p

