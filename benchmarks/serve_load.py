"""Load test of ``bgbot serve``: requests per second and latency of 1-ply ``POST /v1/move`` on loopback.

Starts ``bgbot serve`` as a child process on 127.0.0.1 (one worker process by default), then sends
``--requests`` checker-play questions (positions and dice of ``tests/data/benchmark/checker.jsonl``, in
order) with 1, 8 and 32 concurrent clients (threads, each with its own keep-alive connection), and
prints requests per second and the median and 99th-percentile latency per level.  For contrast it runs
``bgbot move POSITION DICE --json`` as a fresh process per request ``--cli`` times (what a program pays
without a server: interpreter start, imports, loading the model).  Every answer is checked (HTTP 200 and
the CLI's move list).  The client shares the machine with the server: on 2 cores the figures at 8 and 32
clients include the client's own CPU time.

Usage::

    python benchmarks/serve_load.py                       # 300 requests per level, 10 CLI calls
    python benchmarks/serve_load.py --requests 600 --workers 2 --out serve_load.json
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
from _common import REFDATA, ROOT


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
    """A free loopback port (the test suite's range is 18500-18599; benchmarks take one from the kernel)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(port: int, workers: int, threads: int) -> subprocess.Popen[bytes]:
    """``bgbot serve`` on 127.0.0.1:``port``; returns once ``/v1/health`` answers."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bgbot.cli",
            "serve",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--threads",
            str(threads),
            "--queue",
            "256",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.2)
        if proc.poll() is not None:
            break
    proc.kill()
    raise SystemExit("bgbot serve did not start (is the serve extra installed?)")


def run_level(base: str, bodies: list[dict], clients: int) -> dict:
    """Send every body once with ``clients`` threads; latencies in ms and the wall time."""
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    it = iter(bodies)

    def client() -> None:
        with httpx.Client(base_url=base, timeout=120) as c:
            while True:
                with lock:
                    body = next(it, None)
                if body is None:
                    return
                t0 = time.perf_counter()
                r = c.post("/v1/move", json=body)
                dt = 1000 * (time.perf_counter() - t0)
                with lock:
                    latencies.append(dt)
                    if r.status_code != 200 or not r.json().get("moves"):
                        errors.append(f"{r.status_code} {r.text[:100]}")

    threads = [threading.Thread(target=client) for _ in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    if errors:
        raise SystemExit(f"{len(errors)} bad answers at {clients} clients, e.g. {errors[0]}")
    return {
        "clients": clients,
        "requests": len(bodies),
        "wall_s": wall,
        "rps": len(bodies) / wall,
        "p50_ms": percentile(latencies, 0.5),
        "p99_ms": percentile(latencies, 0.99),
        "mean_ms": statistics.fmean(latencies),
    }


def run_cli(rows: list[dict], n: int) -> dict:
    """``bgbot move ... --json`` as a fresh process per request, one after another."""
    latencies = []
    for row in rows[:n]:
        dice = f"{row['dice'][0]}{row['dice'][1]}"
        t0 = time.perf_counter()
        r = subprocess.run(
            [sys.executable, "-m", "bgbot.cli", "move", row["position"], dice, "--json"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        latencies.append(1000 * (time.perf_counter() - t0))
        if r.returncode != 0 or not json.loads(r.stdout)["moves"]:
            raise SystemExit(f"bgbot move failed: {r.stderr[-300:]}")
    wall = sum(latencies) / 1000
    return {
        "clients": 1,
        "requests": n,
        "wall_s": wall,
        "rps": n / wall,
        "p50_ms": percentile(latencies, 0.5),
        "p99_ms": percentile(latencies, 0.99),
        "mean_ms": statistics.fmean(latencies),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=300, help="requests per concurrency level (default 300)")
    ap.add_argument("--levels", default="1,8,32", help="concurrent clients per level (default 1,8,32)")
    ap.add_argument("--cli", type=int, default=10, help="bgbot move processes for contrast (default 10; 0 = none)")
    ap.add_argument("--workers", type=int, default=1, help="server worker processes (default 1)")
    ap.add_argument("--threads", type=int, default=2, help="evaluation threads per worker (default 2)")
    ap.add_argument("--out", type=Path, help="also write the figures as JSON")
    args = ap.parse_args()

    rows = [json.loads(x) for x in (REFDATA / "checker.jsonl").read_text().splitlines() if x.strip()]
    bodies = [{"position": r["position"], "dice": r["dice"], "ply": 1} for r in rows]
    bodies = (bodies * (args.requests // len(bodies) + 1))[: args.requests]
    port = free_port()
    proc = start_server(port, args.workers, args.threads)
    base = f"http://127.0.0.1:{port}"
    try:
        run_level(base, bodies[:20], 1)  # warm up: first calls compile and fill caches
        results = [run_level(base, bodies, int(c)) for c in args.levels.split(",")]
    finally:
        proc.terminate()
        proc.wait(30)
    cli = run_cli(rows, args.cli) if args.cli else None

    load = os.getloadavg()[0]
    print(
        f"bgbot serve, 1-ply POST /v1/move on loopback: {args.workers} worker(s) x {args.threads} threads, "
        f"{args.requests} requests per level; load average {load:.2f}, {os.cpu_count()} CPUs"
    )
    print(f"{'clients':>8} {'requests':>9} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8}")
    for r in results:
        print(
            f"{r['clients']:>8} {r['requests']:>9} {r['rps']:>8.1f} {r['p50_ms']:>8.1f} {r['p99_ms']:>8.1f} "
            f"{r['mean_ms']:>8.1f}"
        )
    if cli:
        print(
            f"{'CLI':>8} {cli['requests']:>9} {cli['rps']:>8.2f} {cli['p50_ms']:>8.0f} {cli['p99_ms']:>8.0f} "
            f"{cli['mean_ms']:>8.0f}   (bgbot move --json, a process per request)"
        )
        print(f"server at 1 client answers {results[0]['rps'] / cli['rps']:.0f}x as many requests per second")
    if args.out:
        tmp = args.out.with_name(args.out.name + ".tmp")
        tmp.write_text(
            json.dumps(
                {"levels": results, "cli": cli, "workers": args.workers, "threads": args.threads, "load": load},
                indent=1,
            )
            + "\n"
        )
        os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
