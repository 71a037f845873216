"""A header timeout for uvicorn: a client must send a request's headers within ``header_timeout`` seconds.

uvicorn closes an idle kept-alive connection after its keep-alive timeout, but a client that opens a
connection and sends nothing, or part of a request line or header and then nothing (slowloris), holds its
connection open forever: the keep-alive timer stops at the first byte.  :class:`HeaderTimeout` adds one
more timer to uvicorn's HTTP protocols, armed when the connection opens and again when each response is
complete, and disarmed in effect once a request's headers are in (the ASGI app then runs): if it fires
while the connection still waits for headers, the connection is closed.  It comes on both of uvicorn's
HTTP/1.1 implementations: :class:`HeaderTimeoutProtocol` (h11, pure Python) and
:class:`HttpToolsHeaderTimeoutProtocol` (httptools, a C parser; the serve extra installs it where a wheel
exists).  ``bgbot serve`` runs uvicorn with :func:`protocol_path` (``--header-timeout``, default
:data:`HEADER_TIMEOUT` seconds); a request body is read by the app under the server's body limit.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT = 10.0
ENV = "BGBOT_SERVE_HEADER_TIMEOUT"  # for uvicorn's worker processes, which import the protocol by name

log = logging.getLogger("bgbot.serve")


class HeaderTimeout:
    """Mixin for a uvicorn HTTP protocol: close a connection whose request headers are not complete in time.

    ``header_timeout``: seconds; None reads ``$BGBOT_SERVE_HEADER_TIMEOUT`` (set by ``bgbot serve``), else
    :data:`HEADER_TIMEOUT`.  :func:`with_header_timeout` makes a subclass with another value.  The protocol
    it is mixed into has uvicorn's ``loop``, ``transport``, ``cycle`` and ``client`` attributes.
    """

    header_timeout: float | None = None
    loop: asyncio.AbstractEventLoop
    transport: Any
    cycle: Any
    client: Any

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limit = self.header_timeout
        if limit is None:
            limit = float(os.environ.get(ENV) or HEADER_TIMEOUT)
        self._header_limit = limit
        self._header_timer: asyncio.TimerHandle | None = None

    def _arm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        self._header_timer = self.loop.call_later(self._header_limit, self._header_deadline)

    def _waiting_for_headers(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _header_deadline(self) -> None:
        self._header_timer = None
        if self.transport is None or self.transport.is_closing() or not self._waiting_for_headers():
            return  # a request is being answered: its response re-arms the timer
        log.debug("closing %s: no complete request headers within %g s", self.client, self._header_limit)
        self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:
        """Open the connection and start its clock for the first request's headers."""
        super().connection_made(transport)  # type: ignore[misc]
        self._arm_header_timer()

    def on_response_complete(self) -> None:
        """After a response, the next request's headers have the same time as the first's."""
        super().on_response_complete()  # type: ignore[misc]
        if not self.transport.is_closing():
            self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the clock with the connection."""
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().connection_lost(exc)  # type: ignore[misc]


class HeaderTimeoutProtocol(HeaderTimeout, H11Protocol):
    """uvicorn's h11 protocol with :class:`HeaderTimeout`."""


HTTPTOOLS = importlib.util.find_spec("httptools") is not None
if HTTPTOOLS:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class HttpToolsHeaderTimeoutProtocol(HeaderTimeout, HttpToolsProtocol):
        """uvicorn's httptools protocol with :class:`HeaderTimeout`."""


def protocol_path() -> str:
    """The protocol ``bgbot serve`` gives uvicorn, by import path: httptools where installed, else h11."""
    name = "HttpToolsHeaderTimeoutProtocol" if HTTPTOOLS else "HeaderTimeoutProtocol"
    return f"{__name__}:{name}"


def with_header_timeout(seconds: float, http: str = "auto") -> type[HeaderTimeout]:
    """The protocol of ``http`` ('h11', 'httptools' or 'auto': as :func:`protocol_path`) with a header timeout
    of ``seconds`` (for uvicorn's ``http=`` in-process)."""
    base: type[HeaderTimeout] = HeaderTimeoutProtocol
    if http == "httptools" or (http == "auto" and HTTPTOOLS):
        base = HttpToolsHeaderTimeoutProtocol
    return type(base.__name__, (base,), {"header_timeout": float(seconds)})
