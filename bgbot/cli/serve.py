"""``bgbot serve``: the HTTP JSON API, wildbg's routes and the web board under uvicorn (the ``serve`` extra)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import shutil
import tempfile
from collections.abc import Iterator

from bgbot.cli.options import positive_number, whole
from bgbot.errors import ConfigError

# options that are ServeConfig fields of the same name (bgbot.serve.service.ServeConfig)
CONFIG_OPTIONS = (
    "ply",
    "timeout",
    "threads",
    "queue",
    "header_timeout",
    "max_sync_trials",
    "rollout_timeout",
    "max_trials",
    "max_jobs",
    "job_timeout",
    "job_keep",
    "job_workers",
    "workers",
    "checkpoint",
)


def default_workers() -> int:
    """The worker processes of ``bgbot serve`` by default: one per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no affinity on this platform
        return max(1, os.cpu_count() or 1)


@contextlib.contextmanager
def _folder(given: str | None, prefix: str) -> Iterator[str]:
    """``given``, or a private temporary folder removed afterwards."""
    if given is not None:
        yield given
        return
    made = tempfile.mkdtemp(prefix=prefix)  # mode 0700
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


def _cmd_serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from bgbot.serve.app import CONFIG_ENV
        from bgbot.serve.guard import ENV as HEADER_ENV
        from bgbot.serve.guard import protocol_path
        from bgbot.serve.service import ServeConfig
    except ImportError as exc:
        raise ConfigError(f'bgbot serve needs the serve extra: pip install "bgbot[serve]" ({exc})') from None
    from bgbot.eval.models import load_model

    if args.workers is None:
        args.workers = default_workers()
    max_ply = args.max_ply if args.max_ply is not None else max(2, args.ply)
    # validate here, in the parent, so that a bad option or a damaged network is one line on stderr (exit 2)
    # and not a traceback of a dying worker
    config = ServeConfig(max_ply=max_ply, **{name: getattr(args, name) for name in CONFIG_OPTIONS})
    if not 0 <= args.port < 65536:
        raise ConfigError(f"--port must be 0..65535, got {args.port!r}")
    load_model(args.checkpoint)  # a missing or damaged file: CheckpointError quoting it
    with contextlib.ExitStack() as stack:
        jobs_dir = stack.enter_context(_folder(args.jobs_dir, "bgbot-jobs-"))
        # several workers share the web board's games in a private folder (bgbot.serve.board.FolderGameStore)
        board_dir = stack.enter_context(_folder(None, "bgbot-board-")) if config.workers > 1 else None
        config = dataclasses.replace(config, jobs_dir=jobs_dir, board_dir=board_dir)
        # uvicorn's worker processes build the app from these (bgbot.serve.app.app_from_env, bgbot.serve.guard)
        os.environ.update({CONFIG_ENV: config.to_json(), HEADER_ENV: str(config.header_timeout)})
        if config.workers > 1 and "BGBOT_THREADS" not in os.environ:
            os.environ["BGBOT_THREADS"] = "1"  # a worker per core already: each engine on one thread
        uvicorn.run(
            "bgbot.serve.app:app_from_env",
            factory=True,
            host=args.host,
            port=args.port,
            workers=config.workers,
            log_level=args.log_level,
            access_log=args.access_log,  # a line per request costs about as much as parsing it: opt-in
            timeout_graceful_shutdown=5,
            # httptools (or h11) with a deadline for each request's headers (bgbot.serve.guard): slow clients
            # are closed
            http=protocol_path(),
        )
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``bgbot serve``."""
    s = sub.add_parser(
        "serve",
        help="HTTP JSON API (/v1/move, /v1/cube, /v1/eval), wildbg's /move and /eval, a web board at /",
        description="Serve bgbot over HTTP: OpenAPI docs at /docs, the web board at /.  Needs the serve extra.",
    )
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    s.add_argument("--port", type=whole, default=8080, help="TCP port (default 8080)")
    s.add_argument("--ply", type=whole, default=1, help="ply of a request that names none (XG numbering; default 1)")
    s.add_argument("--max-ply", type=whole, help="deepest ply a request may ask (default: 2, or --ply if deeper)")
    s.add_argument(
        "--workers", type=whole, help="worker processes, each with its own engine (default: one per core)"
    )
    s.add_argument("--threads", type=whole, default=2, help="evaluation threads per worker (default 2)")
    s.add_argument(
        "--timeout", type=positive_number, default=10.0, help="seconds a request may wait for its answer (10)"
    )
    s.add_argument("--queue", type=whole, default=32, help="evaluations in flight per worker before 503 (32)")
    s.add_argument(
        "--header-timeout", type=positive_number, default=10.0,
        help="seconds a client has to send its request headers (10)",
    )
    s.add_argument(
        "--max-sync-trials", type=whole, default=288, help="most games per line of a synchronous /v1/rollout (288)"
    )
    s.add_argument(
        "--rollout-timeout", type=positive_number, default=300.0,
        help="seconds a synchronous /v1/rollout may take (300)",
    )
    s.add_argument("--max-trials", type=whole, default=5184, help="most games per line of a rollout job (5184)")
    s.add_argument("--max-jobs", type=whole, default=4, help="rollout jobs queued or running at once (4)")
    s.add_argument("--job-timeout", type=positive_number, default=3600.0, help="seconds a rollout job may run (3600)")
    s.add_argument(
        "--job-keep", type=positive_number, default=3600.0, help="seconds a finished job's result is kept (3600)"
    )
    s.add_argument("--job-workers", type=whole, default=1, help="worker processes of a running rollout job (1)")
    s.add_argument("--jobs-dir", help="folder of the rollout jobs (default: a temporary one, removed at exit)")
    s.add_argument("--checkpoint", help="network file (default: $BGBOT_CHECKPOINT or the shipped model)")
    s.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    s.add_argument("--access-log", action="store_true", help="log a line per request (at --log-level info)")
    s.set_defaults(func=_cmd_serve)
