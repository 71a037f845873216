"""The label bank: rollout labels kept as ``.npz`` shards with a ``manifest.json`` of their provenance.

A bank is a folder (the repository's is ``training/labels/``)::

    manifest.json          {"format": ..., "shards": [{"file", "sha256", "count", "kind", "settings",
                            "model_sha256", "seed", "command", "created", ...}, ...]}
    shard-SSSSSSSS-KKKKK.npz   one shard: seed S, shard number K of that seed

Every shard holds, row by row (one position before its side on roll rolls):

* ``position_id`` (N,) str: the gnubg Position ID, side on roll first, as :class:`bgbot.Position`;
* ``board`` (N, 26) int8: the same position in :class:`bgbot.Position`'s layout (fast to load);
* ``probs`` (N, 5) float32: win, win gammon, win backgammon, lose gammon, lose backgammon of the side
  on roll (cumulative, gnubg's order), the rollout's means;
* ``se`` (N,) float32: the standard error of the rollout's cubeless equity;
* ``trials`` (N,) int32, ``cls`` (N,) int8 (:class:`~bgbot.rules.position.PositionClass`), ``source``
  (N,) int8 (:data:`SOURCES`: how the position was found);
* ``meta``: the shard's manifest entry as JSON text, so a shard written but not yet listed (a run killed
  between the two writes) is adopted by the next writer.

Shards are written once (atomically: temporary file and rename) and never changed; the manifest is
rewritten atomically under a lock after each shard, its entries in the order their shards were written (so
the manifest's first N shards stay the same labels as the bank grows).  Reading checks every shard's SHA-256
against the manifest and names a missing or damaged shard; nothing is ever unpickled (``allow_pickle=False``).
A position labelled more than once is combined (:func:`load_bank`: the mean weighted by the inverse of
each label's variance), never counted twice.

This module knows files and arrays only; :mod:`bgbot.labels.generate` makes the labels.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from bgbot.errors import LabelBankError, quote_input
from bgbot.fileio import atomic_open, write_text_atomic

__all__ = [
    "FORMAT",
    "MANIFEST",
    "MAX_SHARD_BYTES",
    "SOURCES",
    "LabelSet",
    "adopt_orphans",
    "check_bank",
    "label_truncation",
    "load_bank",
    "read_manifest",
    "read_shard",
    "shard_name",
    "write_shard",
]

FORMAT = "bgbot-labels-1"
MANIFEST = "manifest.json"
MAX_SHARD_BYTES = 20 * 1024 * 1024  # a shard stays small enough for a git repository
MAX_BANK_BYTES = 300 * 1024 * 1024
#: how a row's position was found (the ``source`` column)
SOURCES = ("selfplay", "pubeval", "disputed")
ENTRY_KEYS = ("file", "sha256", "count", "kind", "settings", "model_sha256", "seed", "command", "created")
_SHARD_RE = re.compile(r"shard-(\d{8})-(\d{5})\.npz")
_ID_RE = re.compile(r"[A-Za-z0-9+/]{14}")
_FIELDS: dict[str, tuple[str, int]] = {  # name -> (dtype kind, dimensions)
    "position_id": ("U", 1),
    "board": ("i", 2),
    "probs": ("f", 2),
    "se": ("f", 1),
    "trials": ("i", 1),
    "cls": ("i", 1),
    "source": ("i", 1),
}


def shard_name(seed: int, shard: int) -> str:
    """The file name of shard ``shard`` of seed ``seed`` (both whole numbers, as the generator numbers them)."""
    return f"shard-{seed:08d}-{shard:05d}.npz"


def sha256_file(path: Path) -> str:
    """SHA-256 (hex) of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# ---------------------------------------------------------------------------
# manifest
# ---------------------------------------------------------------------------


def read_manifest(bank: str | os.PathLike[str]) -> dict[str, Any]:
    """The bank's manifest (an empty one where the folder has none yet); a bad one is a LabelBankError."""
    path = Path(bank) / MANIFEST
    if not path.exists():
        return {"format": FORMAT, "shards": []}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LabelBankError(f"label bank manifest {str(path)!r} is not readable JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("shards"), list):
        raise LabelBankError(f"label bank manifest {str(path)!r} has no list of shards")
    if data.get("format", FORMAT) != FORMAT:
        raise LabelBankError(f"label bank manifest {str(path)!r} is format {data.get('format')!r}, not {FORMAT!r}")
    for i, entry in enumerate(data["shards"]):
        if not isinstance(entry, dict) or any(k not in entry for k in ENTRY_KEYS):
            raise LabelBankError(f"label bank manifest {str(path)!r}: shard entry {i} lacks one of {ENTRY_KEYS}")
        if not isinstance(entry["file"], str) or not _SHARD_RE.fullmatch(entry["file"]):
            raise LabelBankError(f"label bank manifest {str(path)!r}: shard entry {i} names {entry['file']!r}, "
                                 "not a shard file")
    return data


@contextlib.contextmanager
def _locked(bank: Path) -> Iterator[None]:
    """Hold the bank's writer lock (two generators on one bank take turns at the manifest)."""
    bank.mkdir(parents=True, exist_ok=True)
    with open(bank / ".lock", "a+") as f:
        try:
            import fcntl
        except ImportError:  # not POSIX: one writer at a time is the user's business
            yield
            return
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _write_manifest(bank: Path, data: dict[str, Any]) -> None:
    # entries stay in the order their shards were written, so that "the first N shards" (a training config's
    # ``shards = N``) names the same labels however the bank grows afterwards
    data = {"format": FORMAT, "shards": list(data["shards"])}
    write_text_atomic(bank / MANIFEST, json.dumps(data, indent=1, sort_keys=True) + "\n")


# ---------------------------------------------------------------------------
# shards
# ---------------------------------------------------------------------------


def _check_arrays(arrays: dict[str, NDArray[Any]], where: str) -> int:
    """Check a shard's columns (names, kinds, shapes, values); returns its row count."""
    missing = [k for k in _FIELDS if k not in arrays]
    if missing:
        raise LabelBankError(f"label shard {where}: missing {missing}")
    n = len(arrays["position_id"])
    for name, (kind, dims) in _FIELDS.items():
        a = arrays[name]
        if a.dtype.kind != kind or a.ndim != dims or len(a) != n:
            raise LabelBankError(f"label shard {where}: column {name!r} is {a.dtype} of shape {a.shape}, "
                                 f"not {dims}-d {kind!r} of {n} rows")
    if arrays["board"].shape[1:] != (26,) or arrays["probs"].shape[1:] != (5,):
        raise LabelBankError(f"label shard {where}: board or probs has the wrong width")
    p, se = arrays["probs"], arrays["se"]
    if not (np.isfinite(p).all() and np.isfinite(se).all()):
        raise LabelBankError(f"label shard {where}: probabilities or standard errors that are not finite")
    eps = 1e-5
    ok = (p >= -eps).all() and (p <= 1 + eps).all() and (se >= 0).all()
    ok = ok and bool((p[:, 1] <= p[:, 0] + eps).all() and (p[:, 2] <= p[:, 1] + eps).all())
    ok = ok and bool((p[:, 3] <= 1 - p[:, 0] + eps).all() and (p[:, 4] <= p[:, 3] + eps).all())
    if not ok:
        raise LabelBankError(f"label shard {where}: probabilities that are not consistent (0 <= wbg <= wg <= w, "
                             "lbg <= lg <= 1 - w)")
    bad = [s for s in arrays["position_id"][:n] if not _ID_RE.fullmatch(str(s))]
    if bad:
        raise LabelBankError(f"label shard {where}: {bad[0]!r} is not a gnubg Position ID")
    return n


def read_shard(path: str | os.PathLike[str], sha256: str | None = None) -> dict[str, NDArray[Any]]:
    """A shard's columns (see the module doc), checked; ``sha256``: what the manifest says its bytes hash to.

    A missing file, another hash, a file that is not a shard or holds inconsistent labels is a
    :class:`~bgbot.errors.LabelBankError` naming the file.  Never unpickles.
    """
    p = Path(path)
    if not p.is_file():
        raise LabelBankError(f"label shard {str(p)!r} is missing")
    if p.stat().st_size > MAX_SHARD_BYTES:
        raise LabelBankError(f"label shard {str(p)!r} is {p.stat().st_size} bytes, over the {MAX_SHARD_BYTES} limit")
    if sha256 is not None:
        got = sha256_file(p)
        if got != sha256:
            raise LabelBankError(f"label shard {str(p)!r} is damaged: its sha256 is {got[:16]}..., "
                                 f"the manifest says {sha256[:16]}...")
    try:
        with np.load(p, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except Exception as exc:  # zipfile, zlib, numpy format errors: all mean a file that is not a shard
        raise LabelBankError(f"label shard {str(p)!r} is not a readable .npz: {exc}") from None
    _check_arrays(arrays, repr(str(p)))
    return arrays


def shard_meta(arrays: dict[str, NDArray[Any]], where: str) -> dict[str, Any]:
    """The manifest entry a shard carries in its ``meta`` column (without ``sha256``)."""
    if "meta" not in arrays:
        raise LabelBankError(f"label shard {where} carries no meta")
    try:
        meta = json.loads(str(arrays["meta"]))
    except json.JSONDecodeError:
        raise LabelBankError(f"label shard {where}: its meta is not JSON") from None
    if not isinstance(meta, dict):
        raise LabelBankError(f"label shard {where}: its meta is not an object")
    return meta


def write_shard(bank: str | os.PathLike[str], arrays: dict[str, NDArray[Any]], entry: dict[str, Any]) -> dict[str, Any]:
    """Write one shard and list it in the manifest; returns its manifest entry (with ``sha256`` and ``count``).

    ``entry`` holds the provenance (:data:`ENTRY_KEYS` but ``sha256`` and ``count``; ``file`` names it).
    The shard is written atomically and never overwritten: a file of that name already there is a
    LabelBankError.  The manifest is rewritten atomically under the bank's lock.
    """
    b = Path(bank)
    n = _check_arrays(arrays, repr(entry.get("file")))
    entry = {**entry, "count": n}
    name = str(entry["file"])
    if not _SHARD_RE.fullmatch(name):
        raise LabelBankError(f"{name!r} is not a shard file name")
    with _locked(b):
        path = b / name
        if path.exists():
            raise LabelBankError(f"label shard {str(path)!r} exists already: shards are written once")
        with atomic_open(path) as f:
            np.savez_compressed(f, meta=np.array(json.dumps(entry, sort_keys=True)),
                                **{k: arrays[k] for k in _FIELDS})
        if path.stat().st_size > MAX_SHARD_BYTES:
            path.unlink()
            raise LabelBankError(f"label shard {name!r} would be over {MAX_SHARD_BYTES} bytes: write fewer rows")
        entry["sha256"] = sha256_file(path)
        data = read_manifest(b)
        data["shards"].append(entry)
        _write_manifest(b, data)
    return entry


def adopt_orphans(bank: str | os.PathLike[str]) -> list[str]:
    """List in the manifest the whole shards on disk that it lacks (a writer killed between its two writes).

    A file that is not a readable shard is left alone (and never read by :func:`load_bank`); leftover
    temporary files of an interrupted write are removed.  Returns the adopted file names.
    """
    b = Path(bank)
    if not b.is_dir():
        return []
    adopted: list[str] = []
    with _locked(b):
        for tmp in b.glob(".shard-*.tmp"):
            tmp.unlink(missing_ok=True)
        data = read_manifest(b)
        listed = {e["file"] for e in data["shards"]}
        for path in sorted(b.glob("shard-*.npz")):
            if path.name in listed or not _SHARD_RE.fullmatch(path.name):
                continue
            try:
                arrays = read_shard(path)
                meta = shard_meta(arrays, repr(str(path)))
            except LabelBankError:
                continue
            if meta.get("file") != path.name:
                continue
            data["shards"].append({**meta, "count": len(arrays["position_id"]), "sha256": sha256_file(path)})
            adopted.append(path.name)
        if adopted:
            _write_manifest(b, data)
    return adopted


def check_bank(bank: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Check every listed shard (present, its SHA-256, its columns); returns the manifest's entries.

    The first missing or damaged shard is a LabelBankError naming it.
    """
    b = Path(bank)
    entries = read_manifest(b)["shards"]
    for e in entries:
        arrays = read_shard(b / e["file"], e["sha256"])
        if len(arrays["position_id"]) != e["count"]:
            raise LabelBankError(f"label shard {str(b / e['file'])!r} holds {len(arrays['position_id'])} rows, "
                                 f"the manifest says {e['count']}")
    return entries


# ---------------------------------------------------------------------------
# reading the whole bank
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelSet:
    """The bank's distinct positions and their combined labels, row by row.

    ``board`` (N, 26) int8 and ``position_id`` (N,) are each position before its side on roll rolls;
    ``probs`` (N, 5) that side's five probabilities; ``se`` (N,) the combined standard error of its
    cubeless equity; ``labels`` (N,) how many labels were combined into the row; ``cls``, ``source`` as in
    a shard (the first label's source); ``truncate`` (N,) the plies its rollout ran before the network valued
    the leaf, from its shard's settings (0: to the end; of a combined row, the largest of its labels', so 0
    only where every label ran to the end).
    """

    position_id: NDArray[np.str_]
    board: NDArray[np.int8]
    probs: NDArray[np.float32]
    se: NDArray[np.float32]
    labels: NDArray[np.int32]
    cls: NDArray[np.int8]
    source: NDArray[np.int8]
    truncate: NDArray[np.int16]

    def __len__(self) -> int:
        return len(self.position_id)


#: a standard error below this is taken as this when weighting (an exact label must not take all the weight)
SE_FLOOR = 1e-3


class Combined(NamedTuple):
    """The labels of equal positions combined: one entry per distinct Position ID, in sorted ID order."""

    first: NDArray[np.int64]  # each position's first row in the input
    probs: NDArray[np.float32]  # the SE-weighted mean of its labels, from the side on roll
    se: NDArray[np.float32]  # the standard error of that mean
    counts: NDArray[np.int32]  # how many labels it had
    inverse: NDArray[np.int64]  # each input row's position (an index into the above)


def combine(ids: NDArray[np.str_], probs: NDArray[np.float32], se: NDArray[np.float32]) -> Combined:
    """Combine the labels of equal positions (probabilities from the side on roll, as stored).

    Each position's probabilities are the mean of its labels weighted by ``1 / se**2`` (with
    :data:`SE_FLOOR`), its standard error ``1 / sqrt(sum of weights)``.
    """
    if len(ids) == 0:
        return Combined(np.zeros(0, np.int64), np.zeros((0, 5), np.float32), np.zeros(0, np.float32),
                        np.zeros(0, np.int32), np.zeros(0, np.int64))
    _, first, inverse, counts = np.unique(ids, return_index=True, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)  # numpy 2.0-2.1 shape it as the input; keep it one-dimensional
    w = 1.0 / np.maximum(se.astype(np.float64), SE_FLOOR) ** 2
    wsum = np.bincount(inverse, weights=w, minlength=len(first))
    mean = np.stack([np.bincount(inverse, weights=w * probs[:, j], minlength=len(first)) for j in range(5)],
                    axis=1) / wsum[:, None]
    return Combined(first.astype(np.int64), mean.astype(np.float32), (1.0 / np.sqrt(wsum)).astype(np.float32),
                    counts.astype(np.int32), inverse.astype(np.int64))


def label_truncation(settings: Any, cls: NDArray[Any], where: str = "label settings") -> NDArray[np.int64]:
    """Each row's rollout truncation (plies before the network values the leaf; 0: to the end) by its class.

    ``settings`` is a shard's recorded settings: ``truncate``, and ``crashed_truncate`` and ``race_truncate``
    for those classes (a shard made before either existed truncated them as the rest); ``cls`` the rows'
    :class:`~bgbot.rules.position.PositionClass` codes.  A bad value is a LabelBankError naming ``where``.
    """
    from bgbot.rules.position import PositionClass

    if not isinstance(settings, dict):
        raise LabelBankError(f"{where}: settings {quote_input(settings)} are not a table")
    values = {}
    for name in ("truncate", "crashed_truncate", "race_truncate"):
        v = settings.get(name, settings.get("truncate", 7))
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise LabelBankError(f"{where}: {name} {quote_input(v)} is not a whole number of plies")
        values[name] = v
    t = np.full(len(cls), values["truncate"], dtype=np.int64)
    t[cls == PositionClass.CRASHED] = values["crashed_truncate"]
    t[cls == PositionClass.RACE] = values["race_truncate"]
    return t


def load_bank(bank: str | os.PathLike[str], *, verify: bool = True, first: int = 0) -> LabelSet:
    """Every listed shard of ``bank`` (``first`` > 0: the manifest's first ``first`` shards), checked
    (``verify``: their SHA-256) and combined by position.

    A missing or damaged shard is a LabelBankError naming it; a bank with no shards gives an empty set.
    """
    b = Path(bank)
    cols: dict[str, list[NDArray[Any]]] = {k: [] for k in (*_FIELDS, "truncate")}
    entries = read_manifest(b)["shards"]
    for e in entries[:first] if first else entries:
        arrays = read_shard(b / e["file"], e["sha256"] if verify else None)
        for k in _FIELDS:
            cols[k].append(arrays[k])
        cols["truncate"].append(label_truncation(e.get("settings"), arrays["cls"], f"label shard {e['file']!r}"))
    if not cols["position_id"]:
        return LabelSet(np.zeros(0, "<U14"), np.zeros((0, 26), np.int8), np.zeros((0, 5), np.float32),
                        np.zeros(0, np.float32), np.zeros(0, np.int32), np.zeros(0, np.int8), np.zeros(0, np.int8),
                        np.zeros(0, np.int16))
    a = {k: np.concatenate(v) for k, v in cols.items()}
    c = combine(a["position_id"], a["probs"], a["se"])
    longest = np.zeros(len(c.first), dtype=np.int64)
    np.maximum.at(longest, c.inverse, a["truncate"])
    return LabelSet(a["position_id"][c.first], a["board"][c.first].astype(np.int8), c.probs, c.se, c.counts,
                    a["cls"][c.first].astype(np.int8), a["source"][c.first].astype(np.int8),
                    longest.astype(np.int16))


def bank_ids(bank: str | os.PathLike[str]) -> set[str]:
    """The Position IDs the bank holds (no hash check: for skipping positions already labelled)."""
    b = Path(bank)
    got: set[str] = set()
    for e in read_manifest(b)["shards"]:
        got.update(str(s) for s in read_shard(b / e["file"])["position_id"])
    return got
