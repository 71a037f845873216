"""The ASGI app of ``bgbot serve``: the ``/v1`` JSON API, wildbg's ``/move`` and ``/eval``, and the web board at ``/``.

Build it with :func:`create_app` (tests pass an engine they already hold);
``bgbot serve`` runs it under uvicorn.  OpenAPI docs are at ``/docs`` (Swagger
UI) and ``/redoc``, both served from the package with no request leaving the
server, and ``/openapi.json``; the schema of the answers is ``docs/api.md``.

Every error is JSON: ``{"error": {"type", "field", "message"}}`` with HTTP 400
for bad values (the message quotes the value), 422 for a malformed body (wrong
JSON types, unknown or missing fields), 413 for a body over the limit, 503 when
the server is busy or an evaluation runs past its time limit, 500 for a bug
(the server goes on), 404 for an unknown route or job.  wildbg's routes answer errors as wildbg does:
HTTP 400 with ``{"message": "..."}``.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException as StarletteHTTPException

from bgbot import __version__
from bgbot.engine.api import Engine
from bgbot.errors import BgbotError, RequestLimitError, quote_input
from bgbot.serve.board import board_router
from bgbot.serve.jobs import JobNotFound, rollout_request
from bgbot.serve.schema import (
    SCHEMA_VERSION,
    AnalyseBody,
    BotBody,
    CubeBody,
    EvalBody,
    MoveBody,
    MovesBody,
    RolloutBody,
    ShowBody,
    TakeBody,
)
from bgbot.serve.service import FieldError, ServeConfig, Service
from bgbot.serve.wildbg import wildbg_eval, wildbg_move

log = logging.getLogger("bgbot.serve")

WILDBG_PATHS = ("/move", "/eval")
CONFIG_ENV = "BGBOT_SERVE_CONFIG"  # the ServeConfig as JSON, for uvicorn's worker processes (app_from_env)
STATIC = resources.files("bgbot.serve") / "static"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def _error(status: int, kind: str, message: str, field: str | None = None, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": {"type": kind, "field": field, "message": message, **extra}}, status_code=status)


def _wildbg_error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"message": message}, status_code=status)


class BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes is answered 413 before the app reads it all."""

    def __init__(self, app: ASGIApp, limit: int, paths: dict[str, int] | None = None) -> None:
        self.app = app
        self.default = limit
        self.paths = paths or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.paths.get(scope.get("path", ""), self.default)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        too_big = f"the request body is over the server's limit of {limit} bytes"
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                size = -1
            if size < 0 or size > limit:
                response = _error(413, "RequestLimitError", too_big, "body", content_length=declared.decode("latin-1"))
                await response(scope, receive, send)
                return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise _TooLarge(too_big)
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLarge as exc:
            await _error(413, "RequestLimitError", str(exc), "body")(scope, receive, send)


class _TooLarge(Exception):
    pass


def _validation_message(err: dict[str, Any]) -> tuple[str, str]:
    loc = [str(p) for p in err.get("loc", ()) if p not in ("body", "query")]
    name = loc[0] if loc else "body"  # the request field; deeper parts name union members and list items
    msg = str(err.get("msg", "invalid"))
    if err.get("type") == "json_invalid":
        ctx = err.get("ctx") or {}
        return (
            "body",
            f"the request body is not valid JSON ({ctx.get('error', 'decode error')}"
            f" at character {loc[-1] if loc else '?'})",
        )
    if err.get("type") == "missing":
        return name, f"field {name!r} is required"
    if err.get("type") == "extra_forbidden":
        return name, f"unknown field {name!r} (given {quote_input(err.get('input'))})"
    return name, f"field {name!r}: {msg}, got {quote_input(err.get('input'))}"


def _pip_parameters() -> list[dict[str, Any]]:
    """OpenAPI entries of wildbg's ``p0``..``p25`` (read from the query string by :mod:`bgbot.serve.wildbg`)."""
    start = {24: 2, 13: 5, 8: 3, 6: 5, 1: -2, 12: -5, 17: -3, 19: -5}
    out = []
    for i in range(26):
        lo, hi = (-15, 0) if i == 0 else (0, 15) if i == 25 else (-15, 15)
        what = "bar of the opponent o" if i == 0 else "bar of the player x" if i == 25 else f"point {i} of x"
        entry: dict[str, Any] = {
            "name": f"p{i}",
            "in": "query",
            "required": False,
            "description": what,
            "schema": {"type": "integer", "minimum": lo, "maximum": hi},
        }
        if i in start:
            entry["example"] = start[i]
        out.append(entry)
    return out


def create_app(config: ServeConfig | None = None, engine: Engine | None = None) -> FastAPI:
    """The app: an engine loaded once (``config.checkpoint``, default the shipped model) shared by every request."""
    cfg = config or ServeConfig()
    holder: dict[str, Service] = {}

    def service() -> Service:
        if "s" not in holder:
            holder["s"] = Service(engine if engine is not None else Engine.load(cfg.checkpoint), cfg)
        return holder["s"]

    @asynccontextmanager
    async def lifespan(app: FastAPI):  # type: ignore[no-untyped-def]
        service()
        yield
        holder["s"].close()

    # Swagger UI and ReDoc from fastapi-offline's copies (under /static-offline-docs), not from a CDN: /docs
    # works on a machine without internet
    app = FastAPIOffline(
        title="bgbot",
        version=__version__,
        description=(
            "Backgammon engine: ranked checker plays, cube decisions and evaluations (JSON schema version "
            f"{SCHEMA_VERSION}, the same as `bgbot move|cube|eval --json`), wildbg-compatible `/move` and `/eval`, "
            "and a web board at `/`. Positions are seen from the side on roll; plies in XG numbering."
        ),
        lifespan=lifespan,
    )

    # ---- errors -------------------------------------------------------
    @app.exception_handler(FieldError)
    async def _field_error(request: Request, exc: FieldError) -> JSONResponse:
        if request.url.path in WILDBG_PATHS:
            return _wildbg_error(400, str(exc))
        return _error(400, exc.kind, str(exc), exc.field)

    @app.exception_handler(RequestLimitError)
    async def _limit_error(request: Request, exc: RequestLimitError) -> JSONResponse:
        if request.url.path in WILDBG_PATHS:
            return _wildbg_error(503, str(exc))
        return _error(503, "RequestLimitError", str(exc))

    @app.exception_handler(JobNotFound)
    async def _no_job(request: Request, exc: JobNotFound) -> JSONResponse:
        return _error(404, "JobNotFound", str(exc), "job_id")

    @app.exception_handler(BgbotError)
    async def _bgbot_error(request: Request, exc: BgbotError) -> JSONResponse:
        if request.url.path in WILDBG_PATHS:
            return _wildbg_error(400, str(exc))
        return _error(400, type(exc).__name__, str(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = list(exc.errors())
        name, message = _validation_message(errors[0]) if errors else ("body", "malformed request")
        if request.url.path in WILDBG_PATHS:
            return _wildbg_error(400, message)
        details = [dict(zip(("field", "message"), _validation_message(e), strict=True)) for e in errors[:10]]
        return _error(422, "ValidationError", message, name, details=details)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = f"{exc.detail} ({request.method} {quote_input(request.url.path)})"
        return _error(exc.status_code, "HTTPError", message)

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:
        log.exception("internal error on %s %s", request.method, request.url.path)
        return _error(500, "InternalError", f"internal error ({type(exc).__name__}); the server goes on")

    # ---- the /v1 API --------------------------------------------------
    @app.post("/v1/move", tags=["v1"], summary="Rank every legal play of a roll (as `bgbot move --json`)")
    async def v1_move(body: MoveBody) -> dict[str, Any]:
        s = service()
        pos, state = s.position(body.position)
        dice = s.dice(body.dice, state, body.position)
        ply = s.ply(body.ply)
        cs = s.check_match(s.cube_state(state, body))
        return await s.run(lambda: s.move(pos, dice, ply, cs, body.cubeless), ply=ply)

    @app.post("/v1/cube", tags=["v1"], summary="The cube decision of the side on roll (as `bgbot cube --json`)")
    async def v1_cube(body: CubeBody) -> dict[str, Any]:
        s = service()
        pos, state = s.position(body.position)
        ply = s.ply(body.ply)
        cs = s.check_match(s.cube_state(state, body))
        return await s.run(lambda: s.cube(pos, cs, ply), ply=ply)

    @app.post("/v1/eval", tags=["v1"], summary="Cubeless probabilities of the side on roll (as `bgbot eval --json`)")
    async def v1_eval(body: EvalBody) -> dict[str, Any]:
        s = service()
        pos, _ = s.position(body.position)
        ply = s.ply(body.ply)
        return await s.run(lambda: s.eval(pos, ply), ply=ply)

    @app.post(
        "/v1/analyse", tags=["v1"], summary="Grade every decision of a .mat/.sgf match (as `bgbot analyse --json`)"
    )
    async def v1_analyse(body: AnalyseBody) -> dict[str, Any]:
        s = service()
        ply = s.ply(body.ply)
        return await s.run(lambda: s.analyse(body.record, body.format, ply, body.mistakes, body.luck))

    @app.post(
        "/v1/rollout", tags=["v1"], summary="Roll out a position or the top plays of a roll (as `bgbot rollout --json`)"
    )
    async def v1_rollout(body: RolloutBody) -> dict[str, Any]:
        s = service()
        pos, state = s.position(body.position)
        dice = None if body.dice is None else s.dice(body.dice)
        ply = s.ply(body.ply)
        s.trials(body.trials)
        cs = s.check_match(s.cube_state(state, body))
        return await s.run(
            lambda: s.rollout(pos, dice, cs, body, ply),
            timeout=s.config.rollout_timeout,
            too_slow=" for a synchronous /v1/rollout: POST the same body to /v1/jobs/rollout to run it as a job",
        )

    # ---- rollout jobs (bgbot.serve.jobs) ---------------------------------
    @app.post(
        "/v1/jobs/rollout",
        tags=["jobs"],
        status_code=202,
        summary="Start a rollout job (the body of /v1/rollout): its id at once, the result by GET /v1/jobs/{id}",
    )
    async def v1_job_rollout(body: RolloutBody) -> dict[str, Any]:
        s = service()
        pos, state = s.position(body.position)
        dice = None if body.dice is None else s.dice(body.dice)
        ply = s.ply(body.ply)
        s.trials(body.trials, job=True)
        cs = s.check_match(s.cube_state(state, body))
        settings = s.rollout_settings(body, ply)
        request = rollout_request(pos.gnubg_id(), dice, cs, settings, body.top)
        return await asyncio.to_thread(s.jobs().submit, request, body.trials)

    @app.get("/v1/jobs", tags=["jobs"], summary="Every job of this server, oldest first (without results)")
    async def v1_jobs() -> dict[str, Any]:
        s = service()
        return {"jobs": await asyncio.to_thread(s.jobs().list)}

    @app.get("/v1/jobs/{job_id}", tags=["jobs"], summary="A job's status and progress, then its result")
    async def v1_job(job_id: str) -> dict[str, Any]:
        s = service()
        return await asyncio.to_thread(s.jobs().view, job_id)

    @app.delete("/v1/jobs/{job_id}", tags=["jobs"], summary="Cancel a queued or running job, or forget a finished one")
    async def v1_job_cancel(job_id: str) -> dict[str, Any]:
        s = service()
        return await asyncio.to_thread(s.jobs().cancel, job_id)

    @app.post("/v1/show", tags=["board"], summary="A position's board, IDs, pips and state (for drawing)")
    async def v1_show(body: ShowBody) -> dict[str, Any]:
        s = service()
        if body.position is None and body.board is None:
            raise FieldError("position", "give a position (text) or a board (26 counts)")
        if body.position is not None and body.board is not None:
            raise FieldError("position", f"give a position or a board, not both (position {body.position!r})")
        if body.board is not None:
            return s.show(s.board(body.board), None)
        pos, state = s.position(body.position)
        return s.show(pos, state)

    @app.post("/v1/moves", tags=["board"], summary="Every legal play of a roll with the board after it")
    async def v1_moves(body: MovesBody) -> dict[str, Any]:
        s = service()
        pos, _ = s.position(body.position)
        dice = s.dice(body.dice)
        return await s.run(lambda: s.moves(pos, dice))

    @app.post("/v1/play/bot", tags=["board"], summary="bgbot's turn in a game: it rolls (or takes dice) and moves")
    async def v1_bot(body: BotBody) -> dict[str, Any]:
        s = service()
        pos, _ = s.position(body.position)
        dice = None if body.dice is None else s.dice(body.dice)
        ply = s.ply(body.ply)
        cs = s.game_cube(body.cube, body.owner)
        return await s.run(lambda: s.bot_move(pos, dice, ply, body.seed, cs, body.may_double))

    @app.post("/v1/play/take", tags=["board"], summary="The side on roll doubles bgbot: take or pass")
    async def v1_take(body: TakeBody) -> dict[str, Any]:
        s = service()
        pos, _ = s.position(body.position)
        ply = s.ply(body.ply)
        cs = s.game_cube(body.cube, body.owner)
        return await s.run(lambda: s.take(pos, cs, ply))

    @app.get("/v1/health", tags=["v1"], summary="Liveness, the engine and the server's limits")
    async def v1_health() -> dict[str, Any]:
        s = service()
        c = s.config
        return {
            "status": "ok",
            "schema": SCHEMA_VERSION,
            "version": __version__,
            "engine": s.engine.describe(),
            "ply": c.ply,
            "max_ply": c.max_ply,
            "timeout": c.timeout,
            "limits": c.limits(),
            "jobs": await asyncio.to_thread(s.jobs().counts),
            "workers": c.workers,
            # the threads this worker's engine splits a big batch across (1 a worker when there are several)
            "threads": s.engine.threads,
            "pid": os.getpid(),
        }

    # ---- wildbg -------------------------------------------------------
    pips_doc = {"parameters": _pip_parameters()}

    async def wildbg(request: Request, answer: Callable[[Service, dict[str, str]], dict[str, Any]]) -> dict[str, Any]:
        """``answer`` of the request's query parameters (read by name in :mod:`bgbot.serve.wildbg`)."""
        s = service()
        params = dict(request.query_params)
        return await s.run(lambda: answer(s, params), ply=s.config.ply)

    @app.get(
        "/move", tags=["wildbg"], summary="wildbg-compatible: every legal play, best first", openapi_extra=pips_doc
    )
    async def wildbg_move_route(
        request: Request,
        die1: int = Query(..., ge=1, le=6, examples=[3]),
        die2: int = Query(..., ge=1, le=6, examples=[1]),
        x_away: int | None = Query(None, ge=0),
        o_away: int | None = Query(None, ge=0),
    ) -> dict[str, Any]:
        """p0..p25 as in wildbg: x's points positive, o's negative, p25 x's bar, p0 o's bar."""
        return await wildbg(request, wildbg_move)

    @app.get(
        "/eval", tags=["wildbg"], summary="wildbg-compatible: probabilities and cube decision", openapi_extra=pips_doc
    )
    async def wildbg_eval_route(
        request: Request,
        x_away: int | None = Query(None, ge=0),
        o_away: int | None = Query(None, ge=0),
    ) -> dict[str, Any]:
        """p0..p25 as in wildbg (see ``GET /move``)."""
        return await wildbg(request, wildbg_eval)

    # ---- the web board ------------------------------------------------
    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(str(STATIC / "index.html"), media_type="text/html")

    app.include_router(board_router(service, cfg.board_dir))
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    app.add_middleware(BodyLimit, limit=cfg.max_body, paths={"/v1/analyse": cfg.max_record_body})
    return app


def app_from_env() -> FastAPI:
    """The app for uvicorn's worker processes: the config ``bgbot serve`` put in ``$BGBOT_SERVE_CONFIG``."""
    text = os.environ.get(CONFIG_ENV)
    return create_app(ServeConfig.from_json(text) if text else ServeConfig())
