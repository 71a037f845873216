"""Rollout jobs of ``bgbot serve``: long work that outlives a request (``/v1/jobs/rollout``).

``POST /v1/jobs/rollout`` checks the request as ``/v1/rollout`` does and answers a job id at once; ``GET
/v1/jobs/{id}`` shows its status and progress and, once done, the result (the same JSON as ``/v1/rollout``
and ``bgbot rollout --json``); ``DELETE /v1/jobs/{id}`` cancels it (or forgets a finished one).

Each job is a folder under the server's jobs folder, so that every uvicorn worker process of one server
sees every job: ``request.json`` (the checked request), ``state.json`` (status, owner process, times;
written atomically), ``journal/`` (the rollout's results folder, :class:`bgbot.engine.executor.Journal`:
one file per finished task, which is the progress), ``result.json`` or ``error.json``, and ``cancel``
(a marker any worker may write).  The worker process that accepted a job runs it, one job at a time, in a
child process of its own (``python -m bgbot.serve.jobs FOLDER``, its own session): cancelling or timing
out a job ends that process group, and the server's evaluation threads never wait for a rollout.

A job whose owner process is gone (the server stopped) reads as failed.  Finished jobs are kept
``job_keep`` seconds, then removed.  Times are seconds since the epoch (UTC).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bgbot.errors import BgbotError, RequestLimitError
from bgbot.fileio import write_text_atomic

JOB_ID = re.compile(r"[0-9a-f]{32}")
UNFINISHED = ("queued", "running")
FINISHED = ("done", "failed", "cancelled")
POLL = 0.2  # seconds between the runner's looks at its running job (cancel marker, time limit, exit)
STOP_GRACE = 5.0  # seconds a job's process group has after SIGTERM before SIGKILL


class JobNotFound(BgbotError):
    """No job of that id on this server (never made, cancelled, or removed after ``job_keep`` seconds)."""


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def file_lock(path: Path, blocking: bool = True) -> Iterator[bool]:
    """Hold an exclusive lock on ``path`` (created if missing) across processes and threads; yields True.

    Not ``blocking``: yields False at once when someone else holds it (the block then runs unlocked).
    """
    with open(path, "a+b") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


class JobStore:
    """The jobs of one server in ``folder``; this process runs the jobs it accepted (one at a time).

    ``model`` is the network file the jobs' processes load (the server's own), ``limits`` the server's
    :class:`~bgbot.serve.service.ServeConfig`.
    """

    def __init__(self, folder: Path, model: Path | None, limits: Any) -> None:
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.model = model
        self.config = limits
        self.pid = os.getpid()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._runner, name="bgbot-jobs", daemon=True)
        self._thread.start()

    # ---- the folder ---------------------------------------------------------------------
    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Every worker process of the server: one at a time counts and creates jobs."""
        with file_lock(self.folder / ".lock"):
            yield

    def _dir(self, job_id: str) -> Path:
        if not isinstance(job_id, str) or not JOB_ID.fullmatch(job_id):
            raise JobNotFound(f"no job {job_id!r} on this server (a job id is 32 hex digits)")
        return self.folder / job_id

    def _state(self, d: Path) -> dict[str, Any] | None:
        return _read_json(d / "state.json")

    def _write_state(self, d: Path, state: dict[str, Any]) -> None:
        write_text_atomic(d / "state.json", json.dumps(state))

    def _effective(self, d: Path, state: dict[str, Any]) -> dict[str, Any]:
        """``state`` as it stands: an unfinished job whose owner process is gone has failed."""
        if state.get("status") in UNFINISHED and not _alive(int(state.get("owner", 0))):
            return state | {
                "status": "failed",
                "error": {"type": "JobError", "message": "the server process running this job stopped"},
            }
        return state

    def _jobs(self) -> list[tuple[Path, dict[str, Any]]]:
        out = []
        for d in sorted(self.folder.iterdir()):
            if not d.is_dir() or not JOB_ID.fullmatch(d.name) or (d / "cancel").exists():
                continue
            state = self._state(d)
            if state is not None:
                out.append((d, self._effective(d, state)))
        return sorted(out, key=lambda item: float(item[1].get("created", 0.0)))

    def _clean(self) -> None:
        """Remove finished jobs older than ``job_keep`` and cancelled jobs whose process has ended."""
        with self._locked():
            self._clean_locked()

    def _clean_locked(self) -> None:
        """:meth:`_clean`, for a caller that holds the lock: a folder is removed only while no job starts in it."""
        now = time.time()
        for d in list(self.folder.iterdir()):
            if not d.is_dir() or not JOB_ID.fullmatch(d.name):
                continue
            state = self._state(d)
            if state is None:
                if now - d.stat().st_mtime > 60:  # a folder left half-made by a killed request
                    shutil.rmtree(d, ignore_errors=True)
                continue
            state = self._effective(d, state)
            cancelled = (d / "cancel").exists()
            done_at = state.get("finished") or (state.get("created") if state["status"] in FINISHED else None)
            if (cancelled and state["status"] != "running") or (
                done_at is not None and now - float(done_at) > self.config.job_keep
            ):
                shutil.rmtree(d, ignore_errors=True)

    # ---- the routes -----------------------------------------------------------------------
    def submit(self, request: dict[str, Any], trials: int) -> dict[str, Any]:
        """Queue a checked rollout ``request`` (JSON-ready); its view, or a :class:`RequestLimitError`."""
        if self.model is None:
            raise RequestLimitError(
                "this server's network lives only in memory, so no job process can load it: start bgbot serve "
                "with a network file (--checkpoint) to run rollout jobs"
            )
        with self._locked():
            self._clean_locked()
            busy = [s for _, s in self._jobs() if s["status"] in UNFINISHED]
            if len(busy) >= self.config.max_jobs:
                raise RequestLimitError(
                    f"this server already has {len(busy)} rollout jobs queued or running (at most "
                    f"{self.config.max_jobs}; bgbot serve --max-jobs): wait for one to finish, or DELETE one"
                )
            job_id = uuid.uuid4().hex
            d = self.folder / job_id
            d.mkdir()
            write_text_atomic(d / "request.json", json.dumps(request))
            state = {
                "id": job_id,
                "kind": "rollout",
                "status": "queued",
                "owner": self.pid,
                "created": time.time(),
                "started": None,
                "finished": None,
                "trials": trials,
            }
            self._write_state(d, state)
        self._wake.set()
        return self.view(job_id)

    def view(self, job_id: str) -> dict[str, Any]:
        """What ``GET /v1/jobs/{id}`` answers: status, progress, times, and the result or the error."""
        d = self._dir(job_id)
        state = self._state(d) if d.is_dir() and not (d / "cancel").exists() else None
        if state is None:
            raise JobNotFound(
                f"no job {job_id!r} on this server (cancelled, or finished more than {self.config.job_keep:g} s ago)"
            )
        state = self._effective(d, state)
        now = time.time()
        out: dict[str, Any] = {
            "id": job_id,
            "kind": state["kind"],
            "status": state["status"],
            "url": f"/v1/jobs/{job_id}",
            "created": state["created"],
            "started": state["started"],
            "finished": state["finished"],
            "elapsed": round((state["finished"] or now) - state["started"], 3) if state["started"] else 0.0,
            "progress": self._progress(d, state),
            "request": _read_json(d / "request.json"),
            "limits": {"timeout": self.config.job_timeout, "keep": self.config.job_keep},
        }
        if state["status"] == "queued":
            queued = [s["id"] for _, s in self._jobs() if s["status"] == "queued"]
            out["queue_position"] = queued.index(job_id) + 1 if job_id in queued else None
        if state["status"] == "done":
            out["result"] = _read_json(d / "result.json")
        if state["status"] in ("failed", "cancelled"):
            out["error"] = state.get("error")
        return out

    def _progress(self, d: Path, state: dict[str, Any]) -> dict[str, Any]:
        """Tasks and trials finished: the journal's task files (a task is a block of trials of every line)."""
        trials = int(state["trials"])
        manifest = _read_json(d / "journal" / "manifest.json")
        tasks = int(manifest["tasks"]) if manifest and isinstance(manifest.get("tasks"), int) else None
        done = len(list((d / "journal").glob("task-*.json"))) if tasks else 0
        if state["status"] == "done":
            done = tasks or 0
        fraction = 1.0 if state["status"] == "done" else (done / tasks if tasks else 0.0)
        return {
            "tasks_done": done,
            "tasks": tasks,
            "trials_done": min(trials, math.floor(fraction * trials)),
            "trials": trials,
            "fraction": round(fraction, 4),
        }

    def cancel(self, job_id: str) -> dict[str, Any]:
        """``DELETE /v1/jobs/{id}``: stop a queued or running job, or forget a finished one."""
        view = self.view(job_id)
        d = self._dir(job_id)
        (d / "cancel").touch()
        self._wake.set()
        was = view["status"]
        view["status"] = "cancelled" if was in UNFINISHED else "deleted"
        if was not in UNFINISHED:
            shutil.rmtree(d, ignore_errors=True)
        return view

    def list(self) -> list[dict[str, Any]]:
        """Every job the server holds (oldest first), without results."""
        self._clean()
        out = []
        for d, _ in self._jobs():
            with contextlib.suppress(JobNotFound):
                v = self.view(d.name)
                v.pop("result", None)
                out.append(v)
        return out

    def counts(self) -> dict[str, int]:
        """Jobs by status (for ``/v1/health``)."""
        out = {"queued": 0, "running": 0, "done": 0, "failed": 0}
        for _, s in self._jobs():
            out[s["status"]] = out.get(s["status"], 0) + 1
        return out

    # ---- running ------------------------------------------------------------------------
    def close(self) -> None:
        """Stop the runner; a running job's process is ended and the job reads as failed."""
        self._stop.set()
        self._wake.set()
        self._thread.join(STOP_GRACE + 5)

    def _next(self) -> Path | None:
        mine = [
            d
            for d, s in self._jobs()
            if s["status"] == "queued" and int(s.get("owner", 0)) == self.pid and not (d / "cancel").exists()
        ]
        return mine[0] if mine else None

    def _runner(self) -> None:
        while not self._stop.is_set():
            d = self._next()
            if d is None:
                self._wake.wait(1.0)
                self._wake.clear()
                with contextlib.suppress(OSError):
                    self._clean()
                continue
            try:
                self._run(d)
            except Exception as exc:  # a bug here must not stop the runner: the job fails, the next one runs
                with contextlib.suppress(Exception):
                    self._finish(d, "failed", {"type": type(exc).__name__, "message": str(exc)})

    def _finish(self, d: Path, status: str, error: dict[str, Any] | None = None) -> None:
        state = self._state(d) or {}
        state.update(status=status, finished=time.time(), error=error)
        self._write_state(d, state)
        if status == "cancelled":
            shutil.rmtree(d, ignore_errors=True)

    def _run(self, d: Path) -> None:
        # under the lock, so that a clean-up never removes a cancelled queued job's folder between this look and
        # the write (which would make the folder again, holding a running job that no DELETE had asked for)
        with self._locked():
            state = self._state(d) if not (d / "cancel").exists() else None
            if state is None:
                return
            state.update(status="running", started=time.time())
            self._write_state(d, state)
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        cmd = [sys.executable, "-m", "bgbot.serve.jobs", str(d), str(self.model), str(self.config.job_workers)]
        with open(d / "stderr.txt", "wb") as err:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env, start_new_session=True
            )
            deadline = time.monotonic() + self.config.job_timeout
            why = None
            while proc.poll() is None:
                if (d / "cancel").exists():
                    why = "cancelled"
                elif self._stop.is_set():
                    why = "stopped"
                elif time.monotonic() > deadline:
                    why = "timeout"
                if why:
                    _stop_group(proc)
                    break
                self._wake.wait(POLL)
                self._wake.clear()
        if why == "cancelled":
            self._finish(d, "cancelled", {"type": "JobCancelled", "message": "cancelled by a DELETE"})
        elif why == "stopped":
            self._finish(d, "failed", {"type": "JobError", "message": "the server stopped before the job finished"})
        elif why == "timeout":
            self._finish(
                d,
                "failed",
                {
                    "type": "RequestLimitError",
                    "message": f"the job ran past the server's limit of {self.config.job_timeout:g} s "
                    "(bgbot serve --job-timeout); ask for fewer trials or truncate the games",
                },
            )
        elif proc.returncode == 0 and (d / "result.json").exists():
            self._finish(d, "done")
        else:
            error = _read_json(d / "error.json")
            if error is None:
                tail = (d / "stderr.txt").read_text(errors="replace").strip().splitlines()[-1:] or ["no message"]
                error = {"type": "JobError", "message": f"the job's process ended with {proc.returncode}: {tail[0]}"}
            self._finish(d, "failed", error)


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    """End a job's process and its rollout workers (its session): SIGTERM, then SIGKILL after a grace."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(STOP_GRACE)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


# ---- the job's own process ---------------------------------------------------------------------


def rollout_request(position: str, dice: tuple[int, int] | None, state: Any, settings: Any, top: int) -> dict[str, Any]:
    """The JSON a job's process reads: the position text (side on roll's view), dice, cube state, settings."""
    return {
        "position": position,
        "dice": list(dice) if dice else None,
        "cube_state": asdict(state),
        "settings": asdict(settings),
        "top": top,
    }


def run_job(folder: Path, model: Path, workers: int) -> int:
    """Run the rollout of the job in ``folder`` with the network file ``model``: ``result.json`` (exit 0) or
    ``error.json`` (exit 2).  Finished tasks go to ``folder/journal`` as they end (the job's progress)."""
    from bgbot.engine.answers import finished
    from bgbot.engine.api import Engine
    from bgbot.engine.rollout import RolloutSettings
    from bgbot.formats.parse import parse_position_and_state
    from bgbot.rules.matchstate import CubeState

    try:
        req = json.loads((folder / "request.json").read_text())
        engine = Engine.load(model)
        pos, _ = parse_position_and_state(req["position"])
        cs = req["cube_state"]
        state = CubeState(**(cs | {"score": tuple(cs["score"])}))
        dice = tuple(req["dice"]) if req["dice"] else None
        result = engine.rollout(
            pos,
            dice,
            state,
            RolloutSettings(**req["settings"]),
            top=req["top"],
            executor="local",
            workers=workers,
            resume=folder / "journal",
        )
        write_text_atomic(folder / "result.json", json.dumps(finished(result.to_dict())))
        return 0
    except BgbotError as exc:
        write_text_atomic(folder / "error.json", json.dumps({"type": type(exc).__name__, "message": str(exc)}))
        return 2


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # cancelled: let the rollout close its workers
    sys.exit(run_job(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])))
