"""Rollouts over HTTP: a default ``/v1/rollout`` answers, and long rollouts run as jobs (``/v1/jobs/rollout``).

A job answers its id at once, shows its progress task by task, then the same result as ``/v1/rollout``;
``DELETE`` cancels it (its processes end); the limits (jobs at once, trials, time) are stated in
``/v1/health`` and in each refusal.  Jobs here are truncated rollouts, so that they take seconds.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from bgbot.engine.api import Engine
from bgbot.serve.app import create_app
from bgbot.serve.service import ServeConfig

START = "4HPwATDgc/ABMA"
FIGURES = ("lines", "trials", "cube_action", "settings", "cube", "position", "dice", "ranked_by")


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load()


@pytest.fixture(scope="module")
def client(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    jobs = tmp_path_factory.mktemp("jobs")
    with TestClient(create_app(ServeConfig(jobs_dir=str(jobs), max_jobs=2), engine=engine)) as c:
        yield c


def wait_for(client: TestClient, job_id: str, until: tuple[str, ...] = ("done", "failed"), limit: float = 300) -> list:
    """Every view of the job until its status is one of ``until``."""
    views = []
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        r = client.get(f"/v1/jobs/{job_id}")
        assert r.status_code == 200, r.json()
        views.append(r.json())
        if views[-1]["status"] in until:
            return views
        time.sleep(0.1)
    pytest.fail(f"job {job_id} still {views[-1]['status']} after {limit} s")


def processes_of(job_id: str) -> list[int]:
    """Live processes whose command line names the job's folder (the job's own process)."""
    pids = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if job_id in (p / "cmdline").read_bytes().decode(errors="replace"):
                    pids.append(int(p.name))
            except OSError:
                continue
    return pids


def test_a_default_rollout_request_answers_200(client: TestClient) -> None:
    # 144 trials, cubeful, played to the end: longer than the 10 s of an evaluation, within the rollout limit
    r = client.post("/v1/rollout", json={"position": START})
    assert r.status_code == 200, r.json()
    body = r.json()
    assert body["trials"] == 144 and body["settings"]["cubeful"] is True and body["settings"]["truncate"] == 0
    assert [line["label"] for line in body["lines"]] == ["no double", "double, take"]
    assert body["cube_action"].startswith("No double")


def test_a_job_shows_its_progress_then_the_result_of_v1_rollout(client: TestClient) -> None:
    body = {"position": START, "trials": 216, "truncate": 2, "seed": 3}
    t0 = time.monotonic()
    r = client.post("/v1/jobs/rollout", json=body)
    assert r.status_code == 202 and time.monotonic() - t0 < 5  # at once, before any game is played
    job = r.json()
    assert job["status"] in ("queued", "running") and job["url"] == f"/v1/jobs/{job['id']}"
    assert job["progress"]["trials"] == 216 and job["request"]["settings"]["seed"] == 3
    views = wait_for(client, job["id"])
    final = views[-1]
    assert final["status"] == "done", final.get("error")
    done = [v["progress"]["tasks_done"] for v in views]
    assert done == sorted(done) and done[-1] == 3 and final["progress"]["fraction"] == 1.0
    assert any(0 < v["progress"]["tasks_done"] < 3 for v in views) or len(views) < 3  # seen part-way when polled
    assert final["elapsed"] > 0 and final["finished"] >= final["started"] >= final["created"]
    want = client.post("/v1/rollout", json=body).json()
    assert {k: final["result"][k] for k in FIGURES} == {k: want[k] for k in FIGURES}
    assert any(j["id"] == job["id"] and "result" not in j for j in client.get("/v1/jobs").json()["jobs"])


def test_a_1296_trial_job_reports_progress_task_by_task(client: TestClient) -> None:
    r = client.post("/v1/jobs/rollout", json={"position": START, "dice": "31", "trials": 1296, "truncate": 1, "top": 2})
    assert r.status_code == 202
    views = wait_for(client, r.json()["id"])
    assert views[-1]["status"] == "done", views[-1].get("error")
    fractions = sorted({v["progress"]["fraction"] for v in views})
    assert views[-1]["progress"]["tasks"] == 18 and views[-1]["result"]["trials"] == 1296
    assert len([f for f in fractions if 0 < f < 1]) >= 3  # progress seen at several points on the way
    assert [line["move"] if "move" in line else line["label"] for line in views[-1]["result"]["lines"]] != []


def test_delete_cancels_a_running_job_and_ends_its_process(client: TestClient) -> None:
    r = client.post("/v1/jobs/rollout", json={"position": START, "trials": 1296})  # minutes: to the end, cubeful
    job_id = r.json()["id"]
    wait_for(client, job_id, until=("running",))
    deadline = time.monotonic() + 30
    while not processes_of(job_id) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_of(job_id)
    d = client.delete(f"/v1/jobs/{job_id}")
    assert d.status_code == 200 and d.json()["status"] == "cancelled"
    gone = client.get(f"/v1/jobs/{job_id}")
    assert gone.status_code == 404 and job_id in gone.json()["error"]["message"]
    deadline = time.monotonic() + 20
    while processes_of(job_id) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_of(job_id) == []
    assert client.delete(f"/v1/jobs/{job_id}").status_code == 404


def test_delete_forgets_a_finished_job(client: TestClient) -> None:
    job_id = client.post("/v1/jobs/rollout", json={"position": START, "trials": 36, "truncate": 1}).json()["id"]
    assert wait_for(client, job_id)[-1]["status"] == "done"
    d = client.delete(f"/v1/jobs/{job_id}")
    assert d.status_code == 200 and d.json()["status"] == "deleted"
    assert client.get(f"/v1/jobs/{job_id}").status_code == 404


@pytest.mark.parametrize("job_id", ["0" * 32, "nope", "A" * 32, "0" * 31 + "g", "0" * 33])
def test_an_unknown_job_is_a_404_quoting_it(client: TestClient, job_id: str) -> None:
    r = client.get(f"/v1/jobs/{job_id}")
    assert r.status_code == 404 and repr(job_id) in r.json()["error"]["message"]


def test_the_limits_are_in_health_and_in_each_refusal(engine: Engine, tmp_path: Path) -> None:
    cfg = ServeConfig(jobs_dir=str(tmp_path), max_jobs=1, max_trials=432, max_sync_trials=72, job_timeout=600)
    with TestClient(create_app(cfg, engine=engine)) as c:
        limits = c.get("/v1/health").json()["limits"]
        assert limits["rollout"]["max_trials"] == 72 and limits["rollout"]["timeout"] == cfg.rollout_timeout
        assert limits["jobs"] == {"max_jobs": 1, "max_trials": 432, "timeout": 600, "keep": 3600, "workers": 1}
        sync = c.post("/v1/rollout", json={"position": START, "trials": 144})
        assert sync.status_code == 400 and sync.json()["error"]["field"] == "trials"
        assert "at most 72" in sync.json()["error"]["message"] and "/v1/jobs/rollout" in sync.json()["error"]["message"]
        big = c.post("/v1/jobs/rollout", json={"position": START, "trials": 864})
        assert big.status_code == 400 and "at most 432" in big.json()["error"]["message"]
        first = c.post("/v1/jobs/rollout", json={"position": START, "trials": 432})
        assert first.status_code == 202
        second = c.post("/v1/jobs/rollout", json={"position": START, "trials": 36})
        assert second.status_code == 503
        assert "at most 1" in second.json()["error"]["message"] and "--max-jobs" in second.json()["error"]["message"]
        jobs = c.get("/v1/health").json()["jobs"]  # one reading: the job may start between two
        assert jobs["queued"] + jobs["running"] == 1
        assert c.delete(f"/v1/jobs/{first.json()['id']}").status_code == 200
        assert c.post("/v1/jobs/rollout", json={"position": START, "trials": 36, "truncate": 1}).status_code == 202


def test_bad_input_to_a_job_is_refused_at_once(client: TestClient) -> None:
    r = client.post("/v1/jobs/rollout", json={"position": "4HPwATDgc/ABM", "trials": 36})
    assert r.status_code == 400 and r.json()["error"]["field"] == "position"
    r = client.post("/v1/jobs/rollout", json={"position": START, "trials": 36, "ply": 3})  # beyond --max-ply
    assert r.status_code == 400 and r.json()["error"]["field"] == "ply"
    r = client.post("/v1/jobs/rollout", json={"position": START, "match": 1, "score": "0-0", "crawford": True})
    assert r.status_code == 400 and "1-point" in r.json()["error"]["message"]
    r = client.post("/v1/jobs/rollout", json={"position": START, "dice": "77"})
    assert r.status_code == 400 and "'77'" in r.json()["error"]["message"]


def test_a_job_past_its_time_limit_fails_saying_so(engine: Engine, tmp_path: Path) -> None:
    with TestClient(create_app(ServeConfig(jobs_dir=str(tmp_path), job_timeout=1.0), engine=engine)) as c:
        job_id = c.post("/v1/jobs/rollout", json={"position": START, "trials": 1296}).json()["id"]
        final: dict[str, Any] = wait_for(c, job_id, limit=60)[-1]
        assert final["status"] == "failed" and "limit of 1 s" in final["error"]["message"]
        assert "--job-timeout" in final["error"]["message"]
        assert processes_of(job_id) == []


def test_a_job_of_a_stopped_server_reads_as_failed(engine: Engine, tmp_path: Path) -> None:
    with TestClient(create_app(ServeConfig(jobs_dir=str(tmp_path)), engine=engine)) as c:
        job_id = c.post("/v1/jobs/rollout", json={"position": START, "trials": 1296}).json()["id"]
        wait_for(c, job_id, until=("running",))
    assert processes_of(job_id) == []  # the server's end ends its jobs' processes
    with TestClient(create_app(ServeConfig(jobs_dir=str(tmp_path)), engine=engine)) as c:
        final = c.get(f"/v1/jobs/{job_id}").json()
        assert final["status"] == "failed" and "stopped" in final["error"]["message"]
    assert os.listdir(tmp_path)  # a jobs folder given by the user stays


def test_a_synchronous_rollout_past_its_limit_names_the_job_route(engine: Engine, tmp_path: Path) -> None:
    with TestClient(create_app(ServeConfig(jobs_dir=str(tmp_path), rollout_timeout=0.2), engine=engine)) as c:
        r = c.post("/v1/rollout", json={"position": START, "trials": 72})
        assert r.status_code == 503
        message = r.json()["error"]["message"]
        assert "limit of 0.2 s" in message and "/v1/jobs/rollout" in message


def test_a_job_cancelled_before_it_starts_never_starts(tmp_path: Path) -> None:
    """The runner starts a queued job only if no DELETE came first, and never makes a removed job's folder again: a
    job cancelled while queued stays cancelled, and its place is free for the next one."""
    from bgbot.serve.jobs import JobStore

    model = Path(__file__).resolve().parents[1] / "bgbot" / "data" / "models" / "bgbot-default.npz"
    store = JobStore(tmp_path, model, ServeConfig(jobs_dir=str(tmp_path), max_jobs=1))
    store.close()  # no runner thread: the test plays its part
    job = store.submit({"position": START, "trials": 36, "truncate": 1}, 36)
    store.cancel(job["id"])
    folder = tmp_path / job["id"]
    store._run(folder)  # the runner had picked the job before the DELETE
    assert not (folder / "stderr.txt").exists(), "a cancelled job's process was started"
    assert store._state(folder)["status"] == "queued"
    store._clean()
    assert not folder.exists() and store.counts()["queued"] == store.counts()["running"] == 0
    assert store.submit({"position": START, "trials": 36, "truncate": 1}, 36)["status"] == "queued"
