"""``bgbot serve``: the HTTP JSON API, wildbg's routes and the web board under uvicorn (the ``serve`` extra)."""

from __future__ import annotations

import argparse
import os

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
    max_ply = args.max_ply if args.max_ply is not None else max(2, args.ply)
    # validate here, in the parent, so that a bad option is one line on stderr and not a dying worker
    ServeConfig(
        ply=args.ply,
        max_ply=max_ply,
        timeout=args.timeout,
        threads=args.threads,
        queue=args.queue,
        max_trials=args.max_trials,
    )
    if args.workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {args.workers!r}")
    if not 0 <= args.port < 65536:
        raise ConfigError(f"--port must be 0..65535, got {args.port!r}")
    env = {
        "BGBOT_SERVE_PLY": str(args.ply),
        "BGBOT_SERVE_MAX_PLY": str(max_ply),
        "BGBOT_SERVE_TIMEOUT": str(args.timeout),
        "BGBOT_SERVE_THREADS": str(args.threads),
        "BGBOT_SERVE_QUEUE": str(args.queue),
        "BGBOT_SERVE_MAX_TRIALS": str(args.max_trials),
        "BGBOT_SERVE_CHECKPOINT": args.checkpoint or "",
    }
    os.environ.update(env)  # uvicorn's worker processes build the app from these (bgbot.serve.app.app_from_env)
    uvicorn.run(
        "bgbot.serve.app:app_from_env",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level=args.log_level,
        timeout_graceful_shutdown=5,
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
    s.add_argument("--port", type=_whole, default=8080, help="TCP port (default 8080)")
    s.add_argument("--ply", type=_whole, default=1, help="ply of a request that names none (XG numbering; default 1)")
    s.add_argument("--max-ply", type=_whole, help="deepest ply a request may ask (default: 2, or --ply if deeper)")
    s.add_argument("--workers", type=_whole, default=1, help="worker processes, each with its own engine (default 1)")
    s.add_argument("--threads", type=_whole, default=2, help="evaluation threads per worker (default 2)")
    s.add_argument("--timeout", type=_seconds, default=10.0, help="seconds a request may wait for its answer (10)")
    s.add_argument("--queue", type=_whole, default=32, help="evaluations in flight per worker before 503 (32)")
    s.add_argument("--max-trials", type=_whole, default=1296, help="most games per line of a /v1/rollout (1296)")
    s.add_argument("--checkpoint", help="network file (default: $BGBOT_CHECKPOINT or the shipped model)")
    s.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    s.set_defaults(func=_cmd_serve)
