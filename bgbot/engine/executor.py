"""Heavy work split into seeded tasks, run on local processes or on a Ray cluster, with a resumable journal.

A :class:`Task` is idempotent and seeded: ``(kind, model hash, payload, seed) -> result``.  ``kind`` names
the function that does the work (``"bgbot.engine.rollout:rollout_task"``); it is called on a worker as
``fn(evaluator, payload, seed)`` with the network the hash names, and returns a JSON-ready dict.  Nothing
else reaches the worker, so the result of a task depends on the task alone: the same tasks give the same
results whatever runs them and however many workers share them.  (How the work is cut into tasks is the
caller's business and must not depend on the number of workers; rollouts cut by trial numbers.)

Executors (:func:`parse_executor`):

* ``local`` (the default): a pool of ``workers`` spawned processes (default: every core), one BLAS
  thread each.  The model reaches each process once, at its start.  (Only a caller's in-memory
  evaluator, with no model to ship, runs in this process.)
* ``ray``: the same tasks as Ray tasks (``pip install "bgbot[ray]"``), on the cluster ``ray.init()`` finds
  (``$RAY_ADDRESS``, or a new local one), or on the one already initialised in this process;
  ``ray://HOST:PORT`` (Ray Client) or ``HOST:PORT`` (a cluster's GCS address) names one.  The model goes
  into the object store once (``ray.put``) and every task carries only its reference; a worker loads it
  once and keeps it by hash.  A ``ray://`` address with a Ray auth token on this machine
  (``$RAY_AUTH_TOKEN``, ``$RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token``) and no ``$RAY_AUTH_MODE``
  connects with token authentication, as ``ray.init`` does by itself for a cluster's GCS address.

Further networks may travel with a run (``run_tasks(models=...)``: a pit's two bots): each reaches a
worker once, as the tasks' own model does, and a task looks one up by hash with :func:`shipped_model`.
With ``inline=True`` one local worker is this process itself (no process to start; a pit of one worker).

A :class:`Journal` (a results folder) makes a run resumable: every finished task is written there at once,
atomically (temporary file + rename), as JSON; a run given the same folder again takes the finished tasks
from it and runs only the others.  The folder's ``manifest.json`` names the run (a hash of every task), so
a folder holding another run is refused rather than mixed in.

The engine layer owns this module; it imports nothing above it (the evaluator comes from :mod:`bgbot.eval`).
"""

from __future__ import annotations

import atexit
import concurrent.futures as cf
import contextlib
import hashlib
import importlib
import json
import multiprocessing as mp
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bgbot.errors import ExecutorError, JournalError, quote_input
from bgbot.fileio import write_text_atomic

if TYPE_CHECKING:
    from bgbot.eval.evaluate import Evaluator
    from bgbot.eval.inference import NumpyNet

__all__ = [
    "ExecutorSpec",
    "Journal",
    "ModelBlob",
    "Task",
    "default_workers",
    "parse_executor",
    "prepare_executor",
    "run_tasks",
    "shipped_model",
]

JOURNAL_FORMAT = "bgbot-journal-1"
NO_MODEL = "no-model"  # the model hash of tasks that load no network (their evaluator is None)
_KIND_PREFIXES = ("bgbot.", "training.")  # task functions live in this project only


def default_workers() -> int:
    """Every core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


# ---------------------------------------------------------------------------
# the model, shipped by hash
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelBlob:
    """A network as the bytes of an ``.npz`` model file (:mod:`bgbot.eval.inference`), named by its hash.

    ``hash`` is the SHA-256 of the network's description and weights (not of the file, whose zip headers
    carry times), so the same weights have the same hash wherever they were saved.  ``bearoff``: answer
    bear-off positions from the exact database, as :class:`~bgbot.engine.search.BearoffEvaluator`.
    """

    data: bytes = field(repr=False)
    hash: str
    bearoff: bool = True

    @classmethod
    def from_net(cls, net: NumpyNet, *, bearoff: bool = True) -> ModelBlob:
        """The blob of an in-memory numpy network."""
        from bgbot.eval.inference import save_npz

        with tempfile.TemporaryDirectory(prefix="bgbot-model-") as tmp:
            path = save_npz(Path(tmp) / "model.npz", net)
            data = path.read_bytes()
        return cls(data, net_hash(net), bearoff)

    def evaluator(self) -> Evaluator:
        """The evaluator this blob describes (the network, with the bear-off database if ``bearoff``)."""
        return _cached_evaluator(self.hash, self.data, self.bearoff)


def net_hash(net: NumpyNet) -> str:
    """SHA-256 (hex) of a numpy network's spec and weights, its class networks' included."""
    h = hashlib.sha256()
    for name, one in [("", net), *sorted(net.by_class.items())]:
        h.update(name.encode())
        h.update(json.dumps([one.spec.encoding_version, list(one.spec.hidden), one.spec.activation]).encode())
        for w, b in one.layers:
            for a in (w, b):
                arr = np.ascontiguousarray(a, dtype=np.float32)
                h.update(str(arr.shape).encode())
                h.update(arr.tobytes())
    return h.hexdigest()


_EVALUATORS: dict[tuple[str, bool], Evaluator] = {}


def _cached_evaluator(model_hash: str, data: bytes, bearoff: bool) -> Evaluator:
    """Load a blob once per process (a worker keeps what it loaded, by hash)."""
    key = (model_hash, bearoff)
    ev = _EVALUATORS.get(key)
    if ev is None:
        from bgbot.engine.search import BearoffEvaluator
        from bgbot.eval.evaluate import NetEvaluator
        from bgbot.eval.inference import read_npz

        with tempfile.TemporaryDirectory(prefix="bgbot-model-") as tmp:
            path = Path(tmp) / "model.npz"
            path.write_bytes(data)
            net, _ = read_npz(path)  # allow_pickle=False: a blob is never unpickled
        if net_hash(net) != model_hash:
            raise ExecutorError(f"the model shipped as {model_hash[:12]!r} does not have that hash")
        base = NetEvaluator(net)
        ev = BearoffEvaluator(base) if bearoff else base
        _EVALUATORS[key] = ev
    return ev


# networks shipped with a run besides the tasks' own model (a pit's bots), kept here by hash
_SHIPPED: dict[str, ModelBlob] = {}


def _register(models: Sequence[ModelBlob]) -> None:
    for m in models:
        _SHIPPED.setdefault(m.hash, m)


def shipped_model(model_hash: str) -> ModelBlob:
    """A network shipped with the running tasks (``run_tasks(models=...)``), by its hash, where the task runs."""
    blob = _SHIPPED.get(model_hash)
    if blob is None:
        raise ExecutorError(f"no model {model_hash[:12]!r} was shipped with these tasks")
    return blob


# ---------------------------------------------------------------------------
# tasks
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """One seeded unit of work: ``kind(evaluator, payload, seed) -> dict`` on the network ``model_hash``.

    ``kind`` is ``"module:function"`` inside bgbot (or training); ``payload`` is JSON-ready (lists, dicts,
    numbers, text).  ``key`` is a hash of all four, the task's name in a journal.
    """

    kind: str
    model_hash: str
    payload: dict[str, Any]
    seed: int

    def __post_init__(self) -> None:
        module, _, name = self.kind.partition(":")
        if not name or not module.startswith(_KIND_PREFIXES):
            raise ExecutorError(f"a task kind is 'bgbot.module:function', got {quote_input(self.kind)}")

    @property
    def key(self) -> str:
        """SHA-256 (hex) of the task's kind, model hash, payload and seed."""
        text = json.dumps([self.kind, self.model_hash, self.payload, self.seed], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()


def _task_function(kind: str) -> Callable[[Evaluator, dict[str, Any], int], dict[str, Any]]:
    module, _, name = kind.partition(":")
    fn = getattr(importlib.import_module(module), name, None)
    if not callable(fn):
        raise ExecutorError(f"task kind {kind!r} names no function")
    return fn  # type: ignore[no-any-return]


def run_task(task: Task, evaluator: Evaluator) -> dict[str, Any]:
    """Run one task here, on ``evaluator`` (which must be the network ``task.model_hash`` names)."""
    return _task_function(task.kind)(evaluator, task.payload, task.seed)


# worker side of the local pool: the blob arrives once, with the process
_WORKER_BLOB: ModelBlob | None = None


_PARENT_POLL_S = 1.0  # how often a pool worker looks whether the process that started it is still there


def _exit_with_parent(parent: int) -> None:
    """Leave this worker process once its parent ``parent`` (a pid) is gone: SIGKILL of the parent, a crash.

    A pool's workers wait for work on a pipe, and a parent killed outright
    (``kill -9``, the OOM killer) never tells them to stop: without this they
    would wait forever, each holding its memory.  A daemon thread polls the
    parent's pid (handed over by the parent: a worker still starting when
    its parent dies already has another); ``os._exit`` because nothing of a
    pool worker needs saving.
    """
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_PARENT_POLL_S)
        os._exit(1)

    threading.Thread(target=watch, name="bgbot-parent-watch", daemon=True).start()


def _pool_init(blob: ModelBlob | None, models: Sequence[ModelBlob] = (), parent: int | None = None) -> None:
    global _WORKER_BLOB
    if parent is not None:
        _exit_with_parent(parent)
    _WORKER_BLOB = blob
    _register(models)


def _pool_ready() -> None:
    """A no-op submitted once per worker when a pool starts (the workers start then, with one BLAS thread)."""


def _pool_run(task: Task) -> dict[str, Any]:
    blob = _WORKER_BLOB
    if blob is None and task.model_hash == NO_MODEL:
        return run_task(task, None)
    if blob is None or blob.hash != task.model_hash:
        raise ExecutorError(f"worker has no model {task.model_hash[:12]!r}")
    return run_task(task, blob.evaluator())


def _ray_run(
    task: Task, data: bytes | None, bearoff: bool, shipped: Sequence[tuple[str, bool]] = (), *shipped_data: bytes
) -> dict[str, Any]:
    """A Ray task's body: ``data`` is the model blob's bytes, resolved from the object store by Ray.

    ``shipped`` names (hash, bear-off) the further networks of the run, whose bytes are ``shipped_data``.
    """
    for (model_hash, b), blob_data in zip(shipped, shipped_data, strict=True):
        if model_hash not in _SHIPPED:
            _SHIPPED[model_hash] = ModelBlob(blob_data, model_hash, b)
    if data is None:
        return run_task(task, None)
    return run_task(task, _cached_evaluator(task.model_hash, data, bearoff))


# ---------------------------------------------------------------------------
# executors
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ExecutorSpec:
    """Where tasks run: ``kind`` ``'local'`` or ``'ray'``; ``address`` for Ray (None: ``ray.init()``'s default)."""

    kind: str = "local"
    address: str | None = None

    def describe(self) -> str:
        """``local`` or ``ray`` / ``ray (ADDRESS)``."""
        return self.kind if self.address is None else f"{self.kind} ({self.address})"


def parse_executor(text: str | ExecutorSpec | None) -> ExecutorSpec:
    """``local``, ``ray``, ``ray://HOST:PORT``, ``HOST:PORT`` (a Ray cluster) or ``auto`` (Ray's own lookup)."""
    if isinstance(text, ExecutorSpec):
        return text
    if text is None or text == "local":
        return ExecutorSpec()
    if not isinstance(text, str) or not text.strip():
        raise ExecutorError(f"executor must be local, ray, ray://HOST:PORT or HOST:PORT, got {quote_input(text)}")
    t = text.strip()
    if t == "ray":
        return ExecutorSpec("ray")
    if t == "auto" or t.startswith("ray://"):
        if t.startswith("ray://") and not t[6:]:
            raise ExecutorError(f"ray:// needs HOST:PORT, got {quote_input(text)}")
        return ExecutorSpec("ray", t)
    host, sep, port = t.rpartition(":")
    if sep and host and "/" not in host and port.isascii() and port.isdigit() and 0 < int(port) < 65536:
        return ExecutorSpec("ray", t)
    raise ExecutorError(f"executor must be local, ray, ray://HOST:PORT or HOST:PORT, got {quote_input(text)}")


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ExecutorError(
            "the Ray executor needs Ray: pip install \"bgbot[ray]\" (or run with --executor local)"
        ) from None
    return ray


def _check_reachable(address: str, timeout: float = 10.0) -> None:
    """Fail at once on a cluster address nobody answers at (Ray itself retries for minutes)."""
    import socket

    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except (OSError, ValueError) as exc:
        raise ExecutorError(f"cannot reach the Ray cluster {address!r}: {exc}") from None


def _ray_token_available() -> bool:
    """Whether Ray would find an auth token here (the places Ray's own token loader reads)."""
    if os.environ.get("RAY_AUTH_TOKEN"):
        return True
    path = os.environ.get("RAY_AUTH_TOKEN_PATH")
    return Path(path).expanduser().is_file() if path else (Path.home() / ".ray" / "auth_token").is_file()


def _enable_ray_token_auth() -> None:
    """Token authentication for this process's Ray connections (the variable alone is read when Ray loads)."""
    os.environ["RAY_AUTH_MODE"] = "token"
    try:  # what ray.init does for itself: set the variable and refresh Ray's cached configuration
        from ray._private.authentication.authentication_token_setup import _enable_token_auth
    except ImportError:  # another Ray release: refresh the configuration directly
        with contextlib.suppress(Exception):
            from ray._raylet import Config

            Config.initialize("")
        return
    _enable_token_auth()


def _ray_ready(spec: ExecutorSpec) -> Any:
    ray = _import_ray()
    if not ray.is_initialized():
        if spec.address is not None and spec.address != "auto":
            _check_reachable(spec.address)
        if (
            spec.address is not None
            and spec.address.startswith("ray://")
            and "RAY_AUTH_MODE" not in os.environ
            and _ray_token_available()
        ):
            # Ray's client sends no token unless told to (ray.init does this itself for a GCS address): a
            # cluster started with token authentication (the default of `ray start`) would time out otherwise
            _enable_ray_token_auth()
        try:
            ray.init(address=spec.address, include_dashboard=False, log_to_driver=False, configure_logging=False)
        except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError...
            raise ExecutorError(f"cannot reach the Ray cluster {spec.address or '(default)'!r}: {exc}") from None
    return ray


def prepare_executor(executor: str | ExecutorSpec | None) -> ExecutorSpec:
    """Parse ``executor`` and, for Ray, connect now (a bad address fails before any work is done)."""
    spec = parse_executor(executor)
    if spec.kind == "ray":
        _ray_ready(spec)
    return spec


# ---------------------------------------------------------------------------
# the journal
# ---------------------------------------------------------------------------




class Journal:
    """A results folder: ``manifest.json`` (the run) and one ``task-NNNNNN.json`` per finished task.

    ``Journal(folder, tasks, about)`` opens or starts the journal of the run ``tasks``; a folder that holds
    another run raises :class:`~bgbot.errors.JournalError`.  ``about`` (JSON-ready) is stored in the
    manifest for people reading it.  Left-over temporary files of a killed write are removed.
    """

    def __init__(self, folder: str | os.PathLike[str], tasks: Sequence[Task], about: dict[str, Any] | None = None):
        self.folder = Path(folder)
        self.keys = [t.key for t in tasks]
        run = hashlib.sha256("".join(self.keys).encode()).hexdigest()
        manifest = self.folder / "manifest.json"
        if self.folder.exists() and not self.folder.is_dir():
            raise JournalError(f"results folder {str(self.folder)!r} is a file")
        self.folder.mkdir(parents=True, exist_ok=True)
        if manifest.exists():
            try:
                old = json.loads(manifest.read_text())
            except (OSError, ValueError) as exc:
                raise JournalError(f"results folder {str(self.folder)!r}: unreadable manifest.json: {exc}") from None
            if not isinstance(old, dict) or old.get("format") != JOURNAL_FORMAT or old.get("run") != run:
                raise JournalError(
                    f"results folder {str(self.folder)!r} holds another run (other position, settings, seed or "
                    "model): use a new folder"
                )
        else:
            if any(self.folder.glob("task-*.json")):
                raise JournalError(f"results folder {str(self.folder)!r} holds task files but no manifest.json")
            write_text_atomic(
                manifest,
                json.dumps(
                    {"format": JOURNAL_FORMAT, "run": run, "tasks": len(self.keys), "about": about or {}}, indent=1
                ),
            )
        for tmp in self.folder.glob("*.tmp"):
            tmp.unlink(missing_ok=True)

    def _path(self, index: int) -> Path:
        return self.folder / f"task-{index:06d}.json"

    def get(self, index: int) -> dict[str, Any] | None:
        """The stored result of task ``index``, or None (not finished, or a file of another task)."""
        path = self._path(index)
        if not path.exists():
            return None
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return None  # a damaged file: run the task again
        if not isinstance(data, dict) or data.get("key") != self.keys[index]:
            return None
        result = data.get("result")
        return result if isinstance(result, dict) else None

    def put(self, index: int, result: dict[str, Any]) -> None:
        """Store the result of task ``index`` (atomically)."""
        write_text_atomic(self._path(index), json.dumps({"key": self.keys[index], "result": result}))


# ---------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------


@dataclass
class RunStats:
    """What a :func:`run_tasks` call did: tasks run, tasks taken from the journal, bytes sent per task."""

    executed: int = 0
    resumed: int = 0
    task_bytes: list[int] = field(default_factory=list)
    cpu_seconds: float = 0.0  # summed by callers whose tasks report it


def run_tasks(
    tasks: Sequence[Task],
    blob: ModelBlob | None,
    *,
    executor: str | ExecutorSpec | None = "local",
    workers: int | None = None,
    journal: Journal | None = None,
    evaluator: Evaluator | None = None,
    stats: RunStats | None = None,
    models: Sequence[ModelBlob] = (),
    inline: bool = False,
    keep: Callable[[dict[str, Any]], bool] | None = None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Run ``tasks``, yielding ``(index, result)`` as each finishes (journal hits first, then in any order).

    Tasks that need no network (a pit's games, whose bots load their own) name :data:`NO_MODEL` and run
    with neither ``blob`` nor ``evaluator``: their function gets ``None``.  ``models`` are further
    networks that travel with the run, once per worker, found there by :func:`shipped_model`.
    ``inline``: with the local executor and one worker, run the tasks in this process (nothing to start).
    ``keep``: results it refuses are yielded but not written to the journal (a task that stopped
    part-way, to be run again by a resumed run).

    ``blob`` is the network every task names (all tasks share one model), run by worker processes;
    without one, ``evaluator`` runs the tasks in this process (one local worker only).  Closing the
    iterator early (a caller that has enough) cancels the tasks not started.  Errors inside a task
    propagate.  Ray gives each one-CPU task one BLAS thread (``OMP_NUM_THREADS=1``), as the pool does.
    """
    spec = parse_executor(executor)
    n_workers = default_workers() if workers is None else workers
    if isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1:
        raise ExecutorError(f"workers must be a whole number >= 1, got {quote_input(workers)}")
    st = stats if stats is not None else RunStats()
    todo: list[int] = []
    for i in range(len(tasks)):
        done = journal.get(i) if journal is not None else None
        if done is None:
            todo.append(i)
        else:
            st.resumed += 1
            yield i, done
    if not todo:
        return
    if blob is None and evaluator is not None and (spec.kind != "local" or n_workers > 1):
        raise ExecutorError("only an in-memory network given: it runs in this process (one local worker)")
    want = blob.hash if blob is not None else NO_MODEL if evaluator is None else None
    if want is not None and any(tasks[i].model_hash != want for i in todo):
        raise ExecutorError("every task must name the model shipped with it")

    def finished(i: int, result: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if journal is not None and (keep is None or keep(result)):
            journal.put(i, result)
        st.executed += 1
        return i, result

    here = blob is None and evaluator is not None  # an in-memory evaluator: here, one task after the other
    if here or (inline and spec.kind == "local" and n_workers == 1):
        _register(models)
        ev = evaluator if here else blob.evaluator() if blob is not None else None
        for i in todo:
            yield finished(i, run_task(tasks[i], ev))  # type: ignore[arg-type]
        return
    batch = _Batch(tasks, todo, blob, models, n_workers, st)
    results = _run_pool(batch) if spec.kind == "local" else _run_ray(spec, batch)
    yield from (finished(i, r) for i, r in results)


@dataclass
class _Batch:
    """The tasks of a run left to do (``todo``: indices into ``tasks``, in order), the networks that travel
    with them, the local workers and the run's statistics; :meth:`hand_out` gives the next ones to start."""

    tasks: Sequence[Task]
    todo: list[int]
    blob: ModelBlob | None
    models: Sequence[ModelBlob]
    n_workers: int
    stats: RunStats
    started: int = 0  # how many of todo have been handed out

    def left(self) -> bool:
        """Whether some tasks have not been handed out yet."""
        return self.started < len(self.todo)

    def hand_out(self, room: int) -> list[tuple[int, Task]]:
        """The next ``room`` tasks (fewer at the end) as ``(index, task)``; their pickled sizes go to the stats."""
        first, self.started = self.started, min(len(self.todo), self.started + max(room, 0))
        out = [(i, self.tasks[i]) for i in self.todo[first : self.started]]
        self.stats.task_bytes.extend(_task_size(t) for _, t in out)
        return out


def _task_size(task: Task) -> int:
    import pickle

    return len(pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL))


# BGBOT_THREADS: an engine a worker loads (a pit's bots) splits no batch across threads either
_BLAS_THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BGBOT_THREADS")


@contextlib.contextmanager
def one_thread_each() -> Iterator[None]:
    """Spawned workers get one BLAS thread each (as Ray gives its one-CPU tasks), and engines of one thread.

    One thread per worker is the fastest use of the cores, and a matrix product's rounding can depend on
    how many threads share it: with one thread everywhere the figures do not depend on the executor.
    """
    old = {k: os.environ.get(k) for k in _BLAS_THREADS}
    os.environ.update(dict.fromkeys(_BLAS_THREADS, "1"))
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# one pool per (model, workers), kept for the next run in this process (tests, benchmarks, an API user)
_PoolKey = tuple[str, bool, int, tuple[str, ...]]
_POOLS: dict[_PoolKey, cf.ProcessPoolExecutor] = {}


def _pool_key(blob: ModelBlob | None, models: Sequence[ModelBlob], n_workers: int) -> _PoolKey:
    shipped = tuple(sorted(m.hash for m in models))
    return (blob.hash, blob.bearoff, n_workers, shipped) if blob is not None else (NO_MODEL, False, n_workers, shipped)


def _pool(blob: ModelBlob | None, models: Sequence[ModelBlob], n_workers: int) -> cf.ProcessPoolExecutor:
    key = _pool_key(blob, models, n_workers)
    pool = _POOLS.get(key)
    if pool is None:
        for old in list(_POOLS):  # one model at a time: a pool of another one goes
            _POOLS.pop(old).shutdown(wait=False, cancel_futures=True)
        ctx = mp.get_context("spawn")  # numba and BLAS threads do not survive fork() well
        pool = cf.ProcessPoolExecutor(
            max_workers=n_workers, mp_context=ctx, initializer=_pool_init, initargs=(blob, tuple(models), os.getpid())
        )
        with one_thread_each():  # every worker starts now (one per submission while below the count)
            for _ in range(n_workers):
                pool.submit(_pool_ready)
        if not _POOLS:  # (registering twice is harmless: shutdown_pools empties _POOLS)
            atexit.register(shutdown_pools)  # before the interpreter tears the modules down
        _POOLS[key] = pool
    return pool


def _terminate(pool: cf.ProcessPoolExecutor) -> None:
    """Stop a pool now, its running tasks too (an interrupt): the workers get SIGTERM."""
    procs = list((getattr(pool, "_processes", None) or {}).values())  # (3.14 has terminate_workers)
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        with contextlib.suppress(Exception):
            if p.is_alive():
                p.terminate()


def shutdown_pools(kill: bool = False) -> None:
    """Stop the worker processes kept for later runs (``kill``: now, their running tasks too)."""
    while _POOLS:
        pool = _POOLS.popitem()[1]
        if kill:
            _terminate(pool)
        else:
            pool.shutdown(wait=True, cancel_futures=True)


def _run_pool(batch: _Batch) -> Iterator[tuple[int, dict[str, Any]]]:
    pool = _pool(batch.blob, batch.models, batch.n_workers)
    window = max(2 * batch.n_workers, 2)  # tasks handed out at once: the workers stay busy, an early stop wastes little
    pending: dict[cf.Future[dict[str, Any]], int] = {}
    ok = interrupted = False
    try:
        while batch.left() or pending:
            for i, task in batch.hand_out(window - len(pending)):
                pending[pool.submit(_pool_run, task)] = i
            done, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for fut in sorted(done, key=pending.__getitem__):
                yield pending.pop(fut), fut.result()
        ok = True
    except GeneratorExit:
        ok = True  # the caller has enough (early stop): the pool stays for the next run
        raise
    except BaseException as exc:
        interrupted = not isinstance(exc, Exception)  # Ctrl-C, SIGTERM, or thrown in by the caller (.throw)
        raise
    finally:
        for fut in pending:
            fut.cancel()
        if not ok:  # an error or Ctrl-C: do not keep workers that may still be busy
            _POOLS.pop(_pool_key(batch.blob, batch.models, batch.n_workers), None)
            if interrupted:
                _terminate(pool)
            else:
                pool.shutdown(wait=False, cancel_futures=True)


def _run_ray(spec: ExecutorSpec, batch: _Batch) -> Iterator[tuple[int, dict[str, Any]]]:
    ray = _ray_ready(spec)
    remote = ray.remote(num_cpus=1, max_retries=3)(_ray_run)
    blob = batch.blob
    data_ref = ray.put(blob.data) if blob is not None else None  # once: every task carries the reference only
    bearoff = blob.bearoff if blob is not None else False
    shipped = tuple((m.hash, m.bearoff) for m in batch.models)
    shipped_refs = [ray.put(m.data) for m in batch.models]
    cpus = int(ray.cluster_resources().get("CPU", batch.n_workers))
    window = max(2 * cpus, 2)  # tasks in flight: enough to keep the cluster busy, few to waste on an early stop
    pending: dict[Any, int] = {}
    try:
        while batch.left() or pending:
            for i, task in batch.hand_out(window - len(pending)):
                pending[remote.remote(task, data_ref, bearoff, shipped, *shipped_refs)] = i
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                i = pending.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:
                    cause = exc.cause if getattr(exc, "cause", None) is not None else exc
                    raise cause from None
                yield i, result
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)


def echo_task(evaluator: Evaluator | None, payload: dict[str, Any], seed: int) -> dict[str, Any]:
    """A task that does no work (``benchmarks/rollout_speed.py`` times how fast a driver hands tasks out).

    With ``payload['models']`` (hashes) it loads each network shipped with the run (which checks its
    hash) and gives the hashes back as ``shipped``.
    """
    out: dict[str, Any] = {"seed": seed, "n": len(payload)}
    if "models" in payload:
        nets = [_cached_evaluator(h, shipped_model(h).data, False) for h in payload["models"]]
        out["shipped"] = [net_hash(ev.net) for ev in nets]  # type: ignore[attr-defined]
    return out
