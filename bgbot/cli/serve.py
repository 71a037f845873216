"""``bgbot serve``: the HTTP JSON API, wildbg's routes and the web board under uvicorn (the ``serve`` extra)."""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

from bgbot.errors import ConfigError, ascii_int


def _whole(text: str) -> int:
    try:
        return ascii_int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"the timeout must be positive, got {text!r}")
    return value


def _cmd_serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from bgbot.serve.service import ServeConfig
    except ImportError as exc:
        raise ConfigError(f'bgbot serve needs the serve extra: pip install "bgbot[serve]" ({exc})') from None
    from bgbot.eval.models import load_model

    max_ply = args.max_ply if args.max_ply is not None else max(2, args.ply)
    # validate here, in the parent, so that a bad option or a damaged network is one line on stderr (exit 2)
    # and not a traceback of a dying worker
    config = ServeConfig(
        ply=args.ply,
        max_ply=max_ply,
        timeout=args.timeout,
        threads=args.threads,
        queue=args.queue,
        header_timeout=args.header_timeout,
        max_sync_trials=args.max_sync_trials,
        rollout_timeout=args.rollout_timeout,
        max_trials=args.max_trials,
        max_jobs=args.max_jobs,
        job_timeout=args.job_timeout,
        job_keep=args.job_keep,
        job_workers=args.job_workers,
    )
    if args.workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {args.workers!r}")
    if not 0 <= args.port < 65536:
        raise ConfigError(f"--port must be 0..65535, got {args.port!r}")
    load_model(args.checkpoint)  # a missing or damaged file: CheckpointError quoting it
    own_jobs = args.jobs_dir is None
    jobs_dir = Path(tempfile.mkdtemp(prefix="bgbot-jobs-")) if own_jobs else Path(args.jobs_dir)
    env = {
        "BGBOT_SERVE_PLY": str(args.ply),
        "BGBOT_SERVE_MAX_PLY": str(max_ply),
        "BGBOT_SERVE_TIMEOUT": str(args.timeout),
        "BGBOT_SERVE_THREADS": str(args.threads),
        "BGBOT_SERVE_QUEUE": str(args.queue),
        "BGBOT_SERVE_HEADER_TIMEOUT": str(config.header_timeout),
        "BGBOT_SERVE_MAX_SYNC_TRIALS": str(config.max_sync_trials),
        "BGBOT_SERVE_ROLLOUT_TIMEOUT": str(config.rollout_timeout),
        "BGBOT_SERVE_MAX_TRIALS": str(config.max_trials),
        "BGBOT_SERVE_MAX_JOBS": str(config.max_jobs),
        "BGBOT_SERVE_JOB_TIMEOUT": str(config.job_timeout),
        "BGBOT_SERVE_JOB_KEEP": str(config.job_keep),
        "BGBOT_SERVE_JOB_WORKERS": str(config.job_workers),
        "BGBOT_SERVE_JOBS": str(jobs_dir),
        "BGBOT_SERVE_CHECKPOINT": args.checkpoint or "",
    }
    os.environ.update(env)  # uvicorn's worker processes build the app from these (bgbot.serve.app.app_from_env)
    try:
        uvicorn.run(
            "bgbot.serve.app:app_from_env",
            factory=True,
            host=args.host,
            port=args.port,
            workers=args.workers,
            log_level=args.log_level,
            timeout_graceful_shutdown=5,
            # h11 with a deadline for each request's headers (bgbot.serve.guard): slow clients are closed
            http="bgbot.serve.guard:HeaderTimeoutProtocol",
        )
    finally:
        if own_jobs:
            shutil.rmtree(jobs_dir, ignore_errors=True)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``bgbot serve``."""
    s = sub.add_parser(
        "serve",
        help="HTTP JSON API (/v1/move, /v1/cube, /v1/eval), wildbg's /move and /eval, a web board at /",
        description="Serve bgbot over HTTP: OpenAPI docs at /docs, the web board at /.  Needs the serve extra.",
    )
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    s.add_argument("--port", type=_whole, default=8080, help="TCP port (default 8080)")
    s.add_argument("--ply", type=_whole, default=1, help="ply of a request that names none (XG numbering; default 1)")
    s.add_argument("--max-ply", type=_whole, help="deepest ply a request may ask (default: 2, or --ply if deeper)")
    s.add_argument("--workers", type=_whole, default=1, help="worker processes, each with its own engine (default 1)")
    s.add_argument("--threads", type=_whole, default=2, help="evaluation threads per worker (default 2)")
    s.add_argument("--timeout", type=_seconds, default=10.0, help="seconds a request may wait for its answer (10)")
    s.add_argument("--queue", type=_whole, default=32, help="evaluations in flight per worker before 503 (32)")
    s.add_argument(
        "--header-timeout", type=_seconds, default=10.0, help="seconds a client has to send its request headers (10)"
    )
    s.add_argument(
        "--max-sync-trials", type=_whole, default=288, help="most games per line of a synchronous /v1/rollout (288)"
    )
    s.add_argument(
        "--rollout-timeout", type=_seconds, default=300.0, help="seconds a synchronous /v1/rollout may take (300)"
    )
    s.add_argument("--max-trials", type=_whole, default=5184, help="most games per line of a rollout job (5184)")
    s.add_argument("--max-jobs", type=_whole, default=4, help="rollout jobs queued or running at once (4)")
    s.add_argument("--job-timeout", type=_seconds, default=3600.0, help="seconds a rollout job may run (3600)")
    s.add_argument("--job-keep", type=_seconds, default=3600.0, help="seconds a finished job's result is kept (3600)")
    s.add_argument("--job-workers", type=_whole, default=1, help="worker processes of a running rollout job (1)")
    s.add_argument("--jobs-dir", help="folder of the rollout jobs (default: a temporary one, removed at exit)")
    s.add_argument("--checkpoint", help="network file (default: $BGBOT_CHECKPOINT or the shipped model)")
    s.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    s.set_defaults(func=_cmd_serve)
