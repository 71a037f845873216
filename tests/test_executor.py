"""The executor layer: executor specs, tasks named by hash, the model shipped by hash, the journal."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bgbot.engine.executor import (
    NO_MODEL,
    ExecutorSpec,
    Journal,
    ModelBlob,
    RunStats,
    Task,
    net_hash,
    parse_executor,
    run_tasks,
)
from bgbot.errors import ExecutorError, JournalError
from bgbot.eval.evaluate import NetEvaluator
from bgbot.eval.models import load_model
from bgbot.rules.position import Position

KIND = "bgbot.engine.rollout:rollout_task"


@pytest.mark.parametrize(
    "text,spec",
    [
        (None, ExecutorSpec()),
        ("local", ExecutorSpec()),
        ("ray", ExecutorSpec("ray")),
        ("auto", ExecutorSpec("ray", "auto")),
        ("ray://head:10001", ExecutorSpec("ray", "ray://head:10001")),
        ("10.0.0.5:6379", ExecutorSpec("ray", "10.0.0.5:6379")),
    ],
)
def test_executor_specs(text: str | None, spec: ExecutorSpec) -> None:
    assert parse_executor(text) == spec


@pytest.mark.parametrize("text", ["", "spark", "ray://", "host:port", "host:70000", "dask://x:1"])
def test_bad_executor_specs_quote_the_input(text: str) -> None:
    with pytest.raises(ExecutorError, match=r"executor must be|ray:// needs") as info:
        parse_executor(text)
    assert repr(text) in str(info.value)


def test_a_task_is_named_by_everything_it_depends_on() -> None:
    t = Task(KIND, "abc", {"x": [1, 2]}, 7)
    assert t.key == Task(KIND, "abc", {"x": [1, 2]}, 7).key
    others = [
        Task(KIND, "abd", {"x": [1, 2]}, 7),
        Task(KIND, "abc", {"x": [1, 3]}, 7),
        Task(KIND, "abc", {"x": [1, 2]}, 8),
    ]
    assert len({t.key, *(o.key for o in others)}) == 4
    with pytest.raises(ExecutorError, match="os:system"):
        Task("os:system", "abc", {}, 0)


def test_the_model_travels_by_hash_and_answers_as_the_original() -> None:
    net = load_model().net
    blob = ModelBlob.from_net(net)
    assert blob.hash == net_hash(net) == ModelBlob.from_net(net).hash
    boards = np.stack([Position.start().array(), Position.from_points({6: 2}, {6: 3}).array()])
    assert np.array_equal(blob.evaluator()(boards[:1]), NetEvaluator(net)(boards[:1]))
    forged = ModelBlob(blob.data, "0" * 64, bearoff=False)
    with pytest.raises(ExecutorError, match="does not have that hash"):
        forged.evaluator()


def test_journal_writes_atomically_and_refuses_another_run(tmp_path: Path) -> None:
    tasks = [Task(KIND, "m", {"i": i}, 0) for i in range(3)]
    j = Journal(tmp_path / "run", tasks, {"what": "test"})
    assert j.get(0) is None
    j.put(1, {"value": 0.1 + 0.2})
    (tmp_path / "run" / "task-000002.json.abc.tmp").write_text("half a write")
    again = Journal(tmp_path / "run", tasks)
    assert again.get(1) == {"value": 0.1 + 0.2}  # floats come back exactly
    assert not list((tmp_path / "run").glob("*.tmp"))  # a killed write's left-over is removed
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["tasks"] == 3 and manifest["about"] == {"what": "test"}
    # a result file of another task (copied in by hand) is not taken
    (tmp_path / "run" / "task-000000.json").write_text(json.dumps({"key": "other", "result": {}}))
    assert again.get(0) is None
    with pytest.raises(JournalError, match="another run"):
        Journal(tmp_path / "run", [Task(KIND, "m", {"i": 9}, 0)])
    (tmp_path / "file").write_text("x")
    with pytest.raises(JournalError, match="is a file"):
        Journal(tmp_path / "file", tasks)


def test_run_tasks_checks_workers_and_the_model() -> None:
    tasks = [Task(KIND, "m", {}, 0)]
    with pytest.raises(ExecutorError, match="workers"):
        list(run_tasks(tasks, None, workers=0))
    with pytest.raises(ExecutorError, match="in-memory"):
        list(run_tasks(tasks, None, executor="ray", evaluator=NetEvaluator(load_model().net)))
    with pytest.raises(ExecutorError, match="every task"):  # no model given: the tasks must say they need none
        list(run_tasks(tasks, None, workers=2))
    blob = ModelBlob.from_net(load_model().net)
    with pytest.raises(ExecutorError, match="every task"):
        list(run_tasks(tasks, blob, workers=1))


def test_tasks_without_a_model_run_on_worker_processes_and_resume(tmp_path: Path) -> None:
    # a pit's or a generator's tasks that load no network: the same executor, the same journal
    tasks = [Task("bgbot.engine.executor:echo_task", NO_MODEL, {"i": i, "pad": "x" * i}, 100 + i) for i in range(6)]
    journal = Journal(tmp_path / "j", tasks)
    stats = RunStats()
    got = dict(run_tasks(tasks, None, workers=2, journal=journal, stats=stats))
    assert got == {i: {"seed": 100 + i, "n": 2} for i in range(6)} and stats.executed == 6
    again = RunStats()
    assert dict(run_tasks(tasks, None, workers=2, journal=Journal(tmp_path / "j", tasks), stats=again)) == got
    assert again.resumed == 6 and again.executed == 0


ECHO = "bgbot.engine.executor:echo_task"


def test_further_models_travel_by_hash_to_workers_and_to_an_inline_run() -> None:
    # a pit ships its bots' networks this way: once per worker, found there by hash
    blob = ModelBlob.from_net(load_model().net, bearoff=False)
    tasks = [Task(ECHO, NO_MODEL, {"models": [blob.hash]}, i) for i in range(3)]
    on_workers = dict(run_tasks(tasks, None, workers=2, models=[blob]))
    inline = dict(run_tasks(tasks, None, workers=1, models=[blob], inline=True))
    assert on_workers == inline == {i: {"seed": i, "n": 1, "shipped": [blob.hash]} for i in range(3)}
    with pytest.raises(ExecutorError, match="no model '0000"):
        list(run_tasks([Task(ECHO, NO_MODEL, {"models": ["0" * 64]}, 0)], None, workers=1, inline=True))


def test_results_the_caller_refuses_are_not_journaled(tmp_path: Path) -> None:
    # a task that stopped part-way (a pit's bot that could not be restarted) is played again on resume
    tasks = [Task(ECHO, NO_MODEL, {"i": i}, i) for i in range(5)]
    got = dict(
        run_tasks(
            tasks,
            None,
            workers=1,
            inline=True,
            journal=Journal(tmp_path / "j", tasks),
            keep=lambda r: r["seed"] % 2 == 0,
        )
    )
    assert sorted(got) == list(range(5))
    assert sorted(p.name for p in (tmp_path / "j").glob("task-*.json")) == [
        "task-000000.json",
        "task-000002.json",
        "task-000004.json",
    ]
    stats = RunStats()
    assert (
        dict(run_tasks(tasks, None, workers=1, inline=True, journal=Journal(tmp_path / "j", tasks), stats=stats)) == got
    )
    assert (stats.resumed, stats.executed) == (3, 2)


def test_many_tasks_go_out_a_window_at_a_time_and_an_early_stop_keeps_the_pool() -> None:
    tasks = [Task(ECHO, NO_MODEL, {"i": i}, i) for i in range(40)]
    stats = RunStats()
    it = run_tasks(tasks, None, workers=2, stats=stats)
    first = [next(it) for _ in range(3)]
    it.close()
    assert len(stats.task_bytes) <= 3 + 4  # at most 2 per worker in flight beyond the ones received
    assert all(r == {"seed": i, "n": 1} for i, r in first)
    assert dict(run_tasks(tasks, None, workers=2)) == {i: {"seed": i, "n": 1} for i in range(40)}


_KILLED_PARENT = """
import sys
from bgbot.engine.executor import NO_MODEL, Task, run_tasks, _POOLS
tasks = [Task("bgbot.engine.executor:echo_task", NO_MODEL, {"i": i}, i) for i in range(4)]
assert len(dict(run_tasks(tasks, None, workers=2))) == 4
pool = next(iter(_POOLS.values()))  # kept for a next run: its workers wait on their pipe
print(" ".join(str(p) for p in pool._processes), flush=True)
sys.stdin.read()  # until killed
"""


def test_pool_workers_leave_when_their_parent_is_killed_outright() -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-c", _KILLED_PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]  # type: ignore[union-attr]
        assert len(pids) == 2

        def alive(pid: int) -> bool:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return False
            # a zombie (exited, not yet reaped by its new parent) counts as gone
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] != "Z"

        assert all(alive(p) for p in pids)
        # killed outright (no atexit, no pool shutdown), maybe while a worker is still starting up
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 60
        while any(alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = [p for p in pids if alive(p)]
        assert not left, [Path(f"/proc/{p}/status").read_text().splitlines()[6] for p in left]  # PPid lines
    finally:
        if proc.poll() is None:
            proc.kill()
