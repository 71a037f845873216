"""Load test of ``bgbot serve``: requests per second, p50/p99 latency and errors of 1-ply ``POST /v1/move``.

Starts the server as the README does (``bgbot serve --port PORT``, every other option at its default
unless ``--serve-args`` adds some) on 127.0.0.1, then, ``--runs`` times (default 3), sends
``--requests`` checker-play questions (the positions and dice of ``tests/data/benchmark/checker.jsonl``,
in order, ``"ply": 1``) from ``--clients`` concurrent clients (default 16), each on its own keep-alive
connection.  The clients are one asyncio loop (uvloop where installed) in this process writing raw
HTTP/1.1 (under a tenth of a millisecond of CPU a request, so that the client takes little of the cores
it shares with the server; its CPU a request is printed).  The load is bounded: every client stops when
the run's requests are all sent or when the run has lasted ``--run-limit`` seconds, whichever comes
first; each request has a 10 s deadline (then it is an error).  Every answer is checked (HTTP 200, a
JSON body with a non-empty ``moves`` list).

In the same run, between the load runs, this process measures the **pure compute** of the same
decisions: ``Engine.best_move(position, dice, ply=1, cube)`` of each request's position without HTTP
(the shipped model, loaded here): the median wall time, and the mean CPU time (which the machine's
other processes do not inflate), and the CPU time of building the answer's dict from it
(``move_answer``, the same JSON-ready dict the server sends).  The server's CPU time (its process and
its worker processes, from ``/proc``) over a run, divided by the requests, is its CPU per request; that
minus the mean decision and answer dict is the **overhead per request** (HTTP parsing, validation,
parsing the position, JSON encoding, the event loop).  The figures printed are medians over the runs.

Usage::

    python benchmarks/serve_load.py                              # 3 runs of 3000 requests, 16 clients
    python benchmarks/serve_load.py --serve-args "--workers 1"   # the same against one worker process
    python benchmarks/serve_load.py --out serve_load.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import REFDATA, ROOT

HOST = "127.0.0.1"  # the load goes to loopback only
REQUEST_DEADLINE = 10.0  # seconds a request may take before it counts as an error


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by linear interpolation."""
    s = sorted(values)
    if len(s) == 1:
        return s[0]
    k = (len(s) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def free_port() -> int:
    """A free loopback port taken from the kernel."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def http_get(port: int, path: str) -> tuple[int, bytes]:
    """A one-off ``GET`` on loopback: (status, body); (0, b'') when nothing answers."""
    try:
        with socket.create_connection((HOST, port), timeout=2) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nhost: {HOST}\r\nconnection: close\r\n\r\n".encode())
            data = b""
            while chunk := s.recv(65536):
                data += chunk
    except OSError:
        return 0, b""
    head, _, body = data.partition(b"\r\n\r\n")
    parts = head.split(b" ", 2)
    return (int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0), body


def start_server(port: int, extra: list[str]) -> subprocess.Popen[bytes]:
    """``bgbot serve --port PORT [extra]`` (as the README starts it); returns once ``/v1/health`` answers."""
    cmd = [sys.executable, "-m", "bgbot.cli", "serve", "--port", str(port), *extra]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        status, _ = http_get(port, "/v1/health")
        if status == 200:
            return proc
        if proc.poll() is not None:
            break
        time.sleep(0.3)
    proc.kill()
    raise SystemExit(f"{shlex.join(cmd)} did not start (is the serve extra installed?)")


def tree_cpu_seconds(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of process ``pid`` and every descendant now alive (Linux ``/proc``)."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    stats: dict[int, tuple[float, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        ppid = int(fields[1])
        children.setdefault(ppid, []).append(int(entry.name))
        stats[int(entry.name)] = (int(fields[11]) / tick, int(fields[12]) / tick)
    user = system = 0.0
    todo = [pid]
    while todo:
        p = todo.pop()
        u, k = stats.get(p, (0.0, 0.0))
        user, system = user + u, system + k
        todo.extend(children.get(p, []))
    return user, system


def request_bytes(body: dict) -> bytes:
    """One keep-alive ``POST /v1/move`` with ``body`` as JSON."""
    data = json.dumps(body).encode()
    head = (
        f"POST /v1/move HTTP/1.1\r\nhost: {HOST}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(data)}\r\n\r\n"
    )
    return head.encode() + data


async def _one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: bytes) -> tuple[int, bytes]:
    writer.write(raw)
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ", 2)[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return status, await reader.readexactly(length)


async def load(port: int, raws: list[bytes], clients: int, limit_s: float) -> dict:
    """Send each of ``raws`` once from ``clients`` connections; stop early after ``limit_s`` seconds."""
    latencies: list[float] = []
    errors: list[str] = []
    next_index = 0
    t_start = time.perf_counter()
    stop_at = t_start + limit_s

    async def client() -> None:
        nonlocal next_index
        reader, writer = await asyncio.open_connection(HOST, port)
        try:
            while next_index < len(raws) and time.perf_counter() < stop_at:
                raw = raws[next_index]
                next_index += 1
                t0 = time.perf_counter()
                try:
                    async with asyncio.timeout(REQUEST_DEADLINE):  # no task a request, unlike wait_for
                        status, body = await _one(reader, writer, raw)
                except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError) as exc:
                    errors.append(f"{type(exc).__name__}: {exc}")
                    writer.close()
                    reader, writer = await asyncio.open_connection(HOST, port)
                    continue
                latencies.append(1000 * (time.perf_counter() - t0))
                if status != 200 or b'"moves":[{' not in body.replace(b" ", b""):
                    errors.append(f"{status} {body[:120]!r}")
        finally:
            writer.close()

    await asyncio.gather(*(client() for _ in range(clients)))
    wall = time.perf_counter() - t_start
    done = len(latencies)
    return {
        "requests": done,
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "wall_s": wall,
        "rps": done / wall,
        "p50_ms": percentile(latencies, 0.5) if latencies else float("nan"),
        "p99_ms": percentile(latencies, 0.99) if latencies else float("nan"),
    }


def pure_compute(engine: object, questions: list[tuple]) -> dict[str, float]:
    """Milliseconds of ``engine.best_move(pos, dice, 1, cube)`` over ``questions``, in-process: the median
    wall time, and the mean CPU time of this thread (what a loaded machine's other processes do not inflate,
    comparable with the server's CPU time); and the mean CPU time of building its JSON-ready answer
    (``move_answer``, the dict the server sends)."""
    from bgbot.engine.answers import move_answer

    walls, decisions, answers = [], [], []
    for pos, dice, cs in questions:
        w0, t0 = time.perf_counter(), time.thread_time()
        analysis = engine.best_move(pos, dice, 1, cs)  # type: ignore[attr-defined]
        w1, t1 = time.perf_counter(), time.thread_time()
        move_answer(engine, analysis)  # type: ignore[arg-type]
        t2 = time.thread_time()
        walls.append(1000 * (w1 - w0))
        decisions.append(1000 * (t1 - t0))
        answers.append(1000 * (t2 - t1))
    return {
        "decision_median_ms": statistics.median(walls),
        "decision_cpu_ms": statistics.fmean(decisions),
        "answer_cpu_ms": statistics.fmean(answers),
    }


def run_loop(coro: object) -> dict:
    """Run the load on uvloop where it is installed (the client's CPU is taken from the server's cores)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)  # type: ignore[arg-type]
    return uvloop.run(coro)  # type: ignore[arg-type]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=3000, help="requests per run (default 3000)")
    ap.add_argument("--runs", type=int, default=3, help="load runs; figures are their medians (default 3)")
    ap.add_argument("--clients", type=int, default=16, help="concurrent clients (default 16)")
    ap.add_argument("--run-limit", type=float, default=60.0, help="seconds after which a run stops (default 60)")
    ap.add_argument("--serve-args", default="", help="options added to `bgbot serve --port PORT` (default none)")
    ap.add_argument("--out", type=Path, help="also write the figures as JSON")
    args = ap.parse_args()
    if args.runs < 1 or args.requests < 1 or args.clients < 1:
        raise SystemExit("--runs, --requests and --clients must be at least 1")

    from bgbot.engine.api import Engine
    from bgbot.formats.parse import parse_position_and_state
    from bgbot.rules.dice import parse_dice
    from bgbot.rules.matchstate import CubeState

    rows = [json.loads(x) for x in (REFDATA / "checker.jsonl").read_text().splitlines() if x.strip()]
    bodies = [{"position": r["position"], "dice": r["dice"], "ply": 1} for r in rows]
    raws = [request_bytes(b) for b in bodies]
    raws = (raws * (args.requests // len(raws) + 1))[: args.requests]
    engine = Engine.load()
    questions = []
    for r in rows:
        pos, state = parse_position_and_state(r["position"])
        questions.append((pos, parse_dice(r["dice"]), CubeState.of(state) if state else CubeState()))
    pure_compute(engine, questions)  # compile and fill caches, as the server's warm-up does

    port = free_port()
    extra = shlex.split(args.serve_args)
    proc = start_server(port, extra)
    runs, computes = [], []
    try:
        _, health = http_get(port, "/v1/health")
        run_loop(load(port, raws[:200], args.clients, args.run_limit))  # warm up every worker
        for _ in range(args.runs):
            computes.append(pure_compute(engine, questions))
            (user0, sys0), client0 = tree_cpu_seconds(proc.pid), time.process_time()
            run = run_loop(load(port, raws, args.clients, args.run_limit))
            user1, sys1 = tree_cpu_seconds(proc.pid)
            n = max(run["requests"], 1)
            run["server_cpu_ms"] = 1000 * (user1 - user0 + sys1 - sys0) / n
            run["server_system_ms"] = 1000 * (sys1 - sys0) / n
            run["client_cpu_ms"] = 1000 * (time.process_time() - client0) / max(run["requests"], 1)
            runs.append(run)
        computes.append(pure_compute(engine, questions))
    finally:
        proc.terminate()
        proc.wait(30)

    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    compute = {k: statistics.median(c[k] for c in computes) for k in computes[0]}
    summary = {
        "command": shlex.join(["bgbot", "serve", "--port", "PORT", *extra]),
        "clients": args.clients,
        "requests_per_run": args.requests,
        "runs": runs,
        "rps": med("rps"),
        "p50_ms": med("p50_ms"),
        "p99_ms": med("p99_ms"),
        "errors": sum(r["errors"] for r in runs),
        "server_cpu_ms": med("server_cpu_ms"),
        "server_system_ms": med("server_system_ms"),
        "client_cpu_ms": med("client_cpu_ms"),
        # requests a second the two sides' CPU allows on this many idle cores (nothing else running)
        "cpu_bound_rps": (os.cpu_count() or 1) * 1000 / (med("server_cpu_ms") + med("client_cpu_ms")),
        **compute,
        "overhead_ms": med("server_cpu_ms") - compute["decision_cpu_ms"] - compute["answer_cpu_ms"],
        "load_average": os.getloadavg()[0],
        "cpus": os.cpu_count(),
        "health": json.loads(health or b"{}"),
    }
    workers = summary["health"].get("workers", "?")
    print(
        f"{summary['command']} ({workers} worker process(es)); {args.clients} clients, 1-ply POST /v1/move, "
        f"{args.runs} runs of {args.requests} requests; load average {summary['load_average']:.2f}, "
        f"{summary['cpus']} CPUs"
    )
    print(f"{'run':>4} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7} {'server CPU ms/req':>18} {'client':>7}")
    for i, r in enumerate(runs, 1):
        print(
            f"{i:>4} {r['rps']:>8.0f} {r['p50_ms']:>8.1f} {r['p99_ms']:>8.1f} {r['errors']:>7} "
            f"{r['server_cpu_ms']:>18.3f} {r['client_cpu_ms']:>7.3f}"
        )
    print(
        f"median: {summary['rps']:.0f} req/s, p50 {summary['p50_ms']:.1f} ms, p99 {summary['p99_ms']:.1f} ms, "
        f"{summary['errors']} errors"
    )
    print(
        f"pure compute of the same decisions, same run: Engine.best_move median {compute['decision_median_ms']:.3f} "
        f"ms (wall), mean {compute['decision_cpu_ms']:.3f} ms CPU; its answer dict (move_answer) mean "
        f"{compute['answer_cpu_ms']:.3f} ms CPU"
    )
    print(
        f"server CPU {summary['server_cpu_ms']:.3f} ms a request = decision {compute['decision_cpu_ms']:.3f} + "
        f"answer dict {compute['answer_cpu_ms']:.3f} + overhead {summary['overhead_ms']:.3f} ms (HTTP, "
        f"validation, parsing the position, JSON, event loop; the kernel's part of the server's CPU, sockets "
        f"included: {summary['server_system_ms']:.3f} ms)"
    )
    print(
        f"the client's CPU {summary['client_cpu_ms']:.3f} ms a request; {summary['cpus']} idle cores would answer "
        f"at most {summary['cpu_bound_rps']:.0f} req/s (CPU-bound, server and client together)"
    )
    for r in runs:
        if r["first_error"]:
            print(f"first error: {r['first_error']}")
    if args.out:
        tmp = args.out.with_name(args.out.name + ".tmp")
        tmp.write_text(json.dumps(summary, indent=1) + "\n")
        os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
