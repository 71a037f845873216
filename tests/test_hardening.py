"""Issue 11, each defect reproduced: bad engines, bad sizes, unwritable outputs, a crowded server, kill -9.

Every test here failed on the code before the fix it names (see the commit
messages); the fuzz suites (tests/test_fuzz_cli.py, tests/test_fuzz_api.py)
cover the same ground at random.  Timing bounds are generous: the machine is
a loaded 2-core one.
"""

from __future__ import annotations

import contextlib
import io
import json
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from bgbot.cli.main import main
from bgbot.config import check_output_dir, check_output_file, load_config, write_text_atomic
from bgbot.errors import CheckpointError, ConfigError, InvalidIdError, OutputError
from bgbot.eval.inference import ModelSpec
from bgbot.play.bots import make_bot, parse_bot_spec
from bgbot.play.bots.fibsline import MAX_REPLY, engine_board
from bgbot.play.pit import PitConfig, PitReport, run_pit
from bgbot.play.table import Rules
from bgbot.rules.matchstate import MatchState
from bgbot.rules.position import Position, parse_gnubg_position_id

REPO = Path(__file__).resolve().parents[1]


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines and "error:" in lines[-1] and sum("error:" in line for line in lines) == 1, err
    return lines[-1]


def engine_script(tmp_path: Path, body: str) -> str:
    """A ``cmd:`` spec running ``body`` for every line read (``line`` is the board)."""
    script = tmp_path / "engine.py"
    script.write_text("import sys, time\nfor line in sys.stdin:\n" + textwrap.indent(textwrap.dedent(body), "    "))
    return f"{sys.executable} {script}"


# ---- 6: bot specs, engine replies, the engine timeout ---------------------------------------


@pytest.mark.parametrize(
    "spec",
    [
        "bgbot:ply=9",
        "bgbot:cube_ply=0",
        "random:double=nan",
        "random:take=2",
        "random:seed=-1",
        "gnubg:ply=7",
        "gnubg:timeout=inf",
        "bgsage:ply=4",
        "cmd:timeout=0:x",
        "cmd:timeout=nan:x",
        "tcp:timeout=-1:localhost:9",
    ],
)
def test_bad_bot_spec_values_exit_2_at_once(spec: str) -> None:
    with pytest.raises(ConfigError, match="bad bot spec"):
        parse_bot_spec(spec)
    code, out, err = run_cli(["pit", spec, "random", "--games", "2", "--quiet"])
    assert code == 2 and out == ""  # no report: no game was played
    assert spec[:12] in one_error_line(err)


def test_the_engine_timeout_is_a_spec_option(tmp_path: Path) -> None:
    silent = engine_script(tmp_path, "time.sleep(600)\n")
    spec = parse_bot_spec(f"cmd:timeout=0.5:{silent}")
    assert spec.get("timeout") == 0.5 and spec.get("argv")[0] == sys.executable  # type: ignore[index]
    bot = make_bot(spec)
    try:
        assert bot.timeout == 0.5  # type: ignore[attr-defined]
    finally:
        bot.close()
    t0 = time.perf_counter()
    report = run_pit(spec, "random", PitConfig(games=2, rules=Rules(cube=False)))
    assert time.perf_counter() - t0 < 45  # the default (60 s an answer) would take two minutes
    assert report.forfeits["A"] == 2 and "within 0.5 s" in report.faults[0]


@pytest.mark.parametrize("size", [1_000, 100_000])  # a long "move"; a line beyond MAX_REPLY (the engine restarts)
def test_a_huge_engine_reply_is_quoted_as_a_bounded_excerpt(tmp_path: Path, size: int) -> None:
    engine = engine_script(
        tmp_path,
        f"""
        sys.stdout.write("x" * {size} + " 24/18\\n")
        sys.stdout.flush()
    """,
    )
    out = tmp_path / "r.json"
    code, _, _ = run_cli(["pit", f"cmd:{engine}", "random", "--games", "4", "--no-cube", "--quiet", "--out", str(out)])
    assert code == 0
    report = json.loads(out.read_text())
    assert report["forfeits"]["A"] == 4
    assert out.stat().st_size < 20_000  # was twice the replies' size
    assert all(len(f) < 600 for f in report["faults"]) and all("characters" in f for f in report["faults"])
    assert size < MAX_REPLY or f"longer than {MAX_REPLY}" in report["faults"][0]


def test_a_position_without_checkers_is_rejected_where_a_position_is_read() -> None:
    with pytest.raises(InvalidIdError, match="no checkers"):
        parse_gnubg_position_id("AAAAAAAAAAAAAA")
    for argv in (["show", "AAAAAAAAAAAAAA"], ["eval", "AAAAAAAAAAAAAA"], ["moves", "AAAAAAAAAAAAAA", "31"]):
        code, _, err = run_cli(argv)
        assert code == 2 and "AAAAAAAAAAAAAA" in one_error_line(err)


# ---- 5: sizes, configs -------------------------------------------------------------------


@pytest.mark.parametrize(
    "override",
    [
        "hidden=100000000",
        "hidden=4097",
        "hidden=8,8,8,8,8,8,8,8,8",
        "max_turns=10000000000",
        "parallel_games=1000000000000",
        "parallel_games=0",
        "seed=-5",
        "encoding_version=9",
        "activation=x",
    ],
)
def test_huge_or_impossible_training_sizes_are_config_errors(override: str) -> None:
    from training.config import TrainConfig

    with pytest.raises(ConfigError, match=override.split("=")[0]):
        load_config(TrainConfig, None, [override])


def test_model_sizes_are_bounded() -> None:
    for hidden in ((10**9,), (0,), (), (8,) * 9, ("8",), (True,)):
        with pytest.raises(CheckpointError, match="hidden"):
            ModelSpec(hidden=hidden)  # type: ignore[arg-type]


def test_a_folder_or_unreadable_path_as_config_is_one_line(tmp_path: Path) -> None:
    for path in (tmp_path, tmp_path / "file" / "below"):
        (tmp_path / "file").write_text("x")
        code, _, err = run_cli(["train", "--config", str(path), "--out", str(tmp_path / "run"), "--games", "1"])
        assert code == 2 and str(path) in one_error_line(err)


# ---- 5: outputs that cannot be written ---------------------------------------------------


def _unwritable_commands(tmp_path: Path) -> list[list[str]]:
    blocker = tmp_path / "regular"
    blocker.write_text("nothing can be written below a regular file (tests run as root: chmod would not stop us)")
    bad = str(blocker / "x")
    return [
        ["pit", "random", "pubeval", "--games", "2", "--no-cube", "--quiet", "--out", bad + ".json"],
        ["pit", "random", "pubeval", "--games", "2", "--no-cube", "--quiet", "--save-games", bad],
        ["pit", "random", "pubeval", "--games", "2", "--no-cube", "--quiet", "--out", str(tmp_path)],
        ["yardstick", "--games", "2", "--opponent", "random", "--out", bad + ".json"],
        ["build-bearoff", bad + ".npz"],
        ["train", "--config", str(REPO / "configs" / "smoke.toml"), "--quiet", "--out", bad],
    ]


@pytest.mark.parametrize("index", range(6))
def test_unwritable_outputs_fail_before_any_work(tmp_path: Path, index: int) -> None:
    argv = _unwritable_commands(tmp_path)[index]
    t0 = time.perf_counter()
    code, out, err = run_cli(argv)
    assert code == 2 and "points per game" not in out and "ppg" not in out  # nothing was played first
    line = one_error_line(err)
    assert "cannot write" in line and str(tmp_path) in line
    assert time.perf_counter() - t0 < 60


def test_output_checks_and_atomic_writes(tmp_path: Path) -> None:
    assert check_output_dir(tmp_path / "new" / "deeper").is_dir()
    assert check_output_file(tmp_path / "a" / "b.json").parent.is_dir()
    with pytest.raises(OutputError, match="not a regular file"):
        check_output_file(tmp_path)
    target = write_text_atomic(tmp_path / "r.json", "first\n")
    assert target.read_text() == "first\n" and oct(target.stat().st_mode & 0o777) == "0o644"


def test_a_full_disk_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    # RLIMIT_FSIZE makes any write beyond 100 bytes fail (EFBIG), as a full disk would (ENOSPC)
    target = tmp_path / "r.json"
    target.write_text("old\n")
    code = textwrap.dedent(f"""
        import resource, signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))
        from bgbot.config import write_text_atomic
        from bgbot.errors import OutputError
        try:
            write_text_atomic({str(target)!r}, "x" * 100_000)
        except OutputError as exc:
            print("OutputError:", exc)
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert res.stdout.startswith("OutputError: cannot write") and str(target) in res.stdout, res.stderr
    assert target.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


# ---- 4: no lost work in a pit --------------------------------------------------------------


def test_the_pit_reports_as_legs_finish() -> None:
    seen: list[PitReport] = []
    final = run_pit("pubeval", "random", PitConfig(games=8, rules=Rules(cube=False)), on_report=seen.append)
    assert seen and [r.games for r in seen] == sorted(r.games for r in seen)
    assert all(r.stopped and r.stopped.startswith("running") for r in seen)
    assert seen[-1].games <= final.games == 8 and final.stopped is None


def _wait_for(cond: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():  # type: ignore[operator]
            return True
        time.sleep(0.2)
    return False


def _games_in(path: Path) -> int:
    try:
        return int(json.loads(path.read_text())["games"])
    except (OSError, ValueError, KeyError):
        return 0


def test_kill_9_of_a_pit_keeps_its_finished_games(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bgbot.cli",
            "pit",
            "pubeval",
            "random",
            "--games",
            "1000000",
            "--no-cube",
            "--quiet",
            "--out",
            str(out),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=REPO,
    )
    try:
        assert _wait_for(lambda: _games_in(out) >= 6, 120), "no report written while the pit ran"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    report = json.loads(out.read_text())  # whole JSON: written atomically
    assert report["games"] >= 6 and report["stopped"].startswith("running")
    assert report["ppg_se"] is not None and report["pairs"] >= 3
    # A kill -9 can land while a report is being written: its temporary file
    # may stay behind, but only under a hidden name that no reader takes for
    # the report.
    others = {f.name for f in tmp_path.iterdir()} - {"r.json"}
    assert all(n.startswith(".r.json.") and n.endswith(".tmp") for n in others), others


def test_kill_9_of_training_never_corrupts_the_checkpoint_and_resume_works(tmp_path: Path) -> None:
    from bgbot.eval.nets import read_checkpoint

    out = tmp_path / "run"
    ckpt = out / "checkpoint.pt"
    base = [
        sys.executable,
        "-m",
        "bgbot.cli",
        "train",
        "--config",
        str(REPO / "configs" / "smoke.toml"),
        "--out",
        str(out),
        "--quiet",
        "--set",
        "eval_every=0",
        "--set",
        "checkpoint_every=16",
    ]
    done = 0
    for attempt in range(2):  # kill while saving checkpoints every few steps, twice
        extra = ["--set", "games=1000000"] if attempt == 0 else ["--resume", str(ckpt), "--games", "1000000"]
        before = ckpt.stat().st_mtime_ns if ckpt.exists() else 0
        proc = subprocess.Popen([*base, *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
        try:
            assert _wait_for(lambda b=before: ckpt.exists() and ckpt.stat().st_mtime_ns != b, 180)
            time.sleep(1.5 + attempt)  # somewhere in the next saves
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        games = read_checkpoint(ckpt)["games_trained"]  # a whole checkpoint, never half of one
        assert games >= done
        done = games
    res = subprocess.run(
        [*base, "--resume", str(ckpt), "--games", str(done + 32)], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert read_checkpoint(ckpt)["games_trained"] >= done + 32
    assert not list(out.glob("*.tmp"))


# ---- 3: serve-external under load --------------------------------------------------------


def _rss_kb(pid: int, field: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


@contextlib.contextmanager
def external_server(bot: str = "pubeval") -> object:
    proc = subprocess.Popen(
        [sys.executable, "-m", "bgbot.cli", "serve-external", "--port", "0", "--bot", bot],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        assert proc.stderr is not None
        port = 0
        deadline = time.monotonic() + 120
        while not port and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if "listening on" in line:
                port = int(line.rsplit(":", 1)[1])
            elif not line and proc.poll() is not None:
                break
        assert port, "the server did not start"
        threading.Thread(target=proc.stderr.read, daemon=True).start()  # keep its log flowing
        yield proc, port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


BOARD = engine_board(Position.start(), MatchState(dice=(3, 1)), dice=(3, 1)) + "\n"


def load_test(port: int, clients: int = 50, misbehaving: int = 5, questions: int = 4) -> list[float]:
    """``clients`` at once, ``misbehaving`` of them idle or sending half a line; every answer's latency (s)."""
    bad = []
    for i in range(misbehaving):
        s = socket.create_connection(("localhost", port), timeout=30)
        if i % 2:
            s.sendall(b"board:bgbot:opponent:1:0:0:")  # half a line, then silence
        bad.append(s)
    latencies: list[float] = []
    failures: list[str] = []
    start = threading.Barrier(clients - misbehaving)

    def good() -> None:
        try:
            with socket.create_connection(("localhost", port), timeout=30) as s, s.makefile("rw") as f:
                start.wait(timeout=60)
                for _ in range(questions):
                    t0 = time.perf_counter()
                    f.write(BOARD)
                    f.flush()
                    reply = f.readline().strip()
                    latencies.append(time.perf_counter() - t0)
                    if reply != "8/5 6/5":
                        failures.append(reply)
        except Exception as exc:  # reported below: a timeout, a refusal
            failures.append(repr(exc))

    threads = [threading.Thread(target=good) for _ in range(clients - misbehaving)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    for s in bad:
        s.close()
    assert not failures, failures[:3]
    assert len(latencies) == (clients - misbehaving) * questions
    return latencies


def send_huge_line(port: int, megabytes: int = 256) -> int:
    """Stream a ``megabytes`` MiB line without a newline (one 1 MiB chunk reused); bytes the server took."""
    chunk = b"x" * (1 << 20)
    sent = 0
    with socket.create_connection(("localhost", port), timeout=30) as s:
        s.sendall(b"board:")
        try:
            for _ in range(megabytes):
                s.sendall(chunk)
                sent += len(chunk)
        except OSError:  # the server refused the line and closed the connection
            pass
    return sent


def test_serve_external_serves_50_clients_and_refuses_a_256_mb_line() -> None:
    with external_server() as (proc, port):
        load_test(port, clients=1, misbehaving=0, questions=1)  # a cold numba cache compiles on the first answer
        latencies = load_test(port)
        worst = max(latencies)
        print(f"serve-external load: 45 clients x 4 answers, 5 idle/partial; max {worst:.3f} s")
        assert worst <= 5.0  # generous on a loaded machine; BENCHMARKS.md has the measured figure
        before = _rss_kb(proc.pid)
        sent = send_huge_line(port)
        after = _rss_kb(proc.pid)
        print(f"256 MB line: {sent >> 20} MiB accepted before the close; RSS {before} -> {after} kB")
        assert after - before < 64 * 1024  # was +800 MB
        assert max(load_test(port, clients=6, misbehaving=1, questions=1)) <= 5.0  # still serving


def test_an_interrupt_wrapped_by_compiled_code_is_still_an_interrupt() -> None:
    """numba's dispatcher turns a KeyboardInterrupt raised inside it into a SystemError caused by it."""
    from bgbot.errors import is_interrupt

    def wrapped() -> BaseException:
        try:
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt as inner:
                raise SystemError("CPUDispatcher(<function _batch>) returned a result with an exception set") from inner
        except SystemError as exc:
            return exc

    assert is_interrupt(KeyboardInterrupt()) and is_interrupt(wrapped())
    assert not is_interrupt(SystemError("a real bug")) and not is_interrupt(ValueError("x")) and not is_interrupt(None)
