"""Every request has a deadline: past `REQUEST_DEADLINE` seconds (default 20) the client gets a 503.

A request that would compute for minutes (a far `reach:K` objective solved for one request, a
position no stored solution covers) must not hold a worker for minutes and gigabytes: at its
deadline it is stopped and answered with a 503 problem and `Retry-After`, through the same hooks as
any answer (CORS, nosniff), never gunicorn's HTML page. (`zombie-odds serve` sets gunicorn's own
worker timeout above the deadline, and its threaded workers keep their heartbeat while a request
computes: gunicorn never kills a worker for a slow request.)

The mechanism is cheap: one watchdog thread per process, which wakes at most four times a second
while a request is in flight, and at a request's deadline raises `DeadlineExceeded` in the thread
serving it (`PyThreadState_SetAsyncExc`; the main thread or any other, so Flask's test client gets
it too). It is raised between two Python bytecodes, like KeyboardInterrupt: a long call into C
finishes first (the engine's numpy steps take milliseconds). It derives from BaseException so that
no `except Exception` on the way swallows it, and it is raised again every second until the request
has unwound (a bare `except:` cannot swallow it either). Clean-up code (`finally`, `with`) runs as
for any exception; nothing half-computed is stored.

`REQUEST_DEADLINE` of 0 (or None) turns it off (the default under TESTING); `/healthz` has none. Config:
`REQUEST_DEADLINE` (seconds), `DEADLINE_RETRY_AFTER` (the 503's `Retry-After`, seconds, default 60). A request
waiting for a free thread of its worker does not count that wait: it is timed from when the application starts on
it.
"""

from __future__ import annotations

import ctypes
import math
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from flask import Flask, Response, current_app, request

from .errors import problem

__all__ = ["DEFAULT_DEADLINE", "DeadlineExceeded", "EXEMPT_PATHS", "install"]

DEFAULT_DEADLINE = 20.0
EXEMPT_PATHS = frozenset({"/healthz"})
TICK = 0.25  # the watchdog's resolution, seconds
AGAIN = 1.0  # seconds between two raises while a request unwinds


class DeadlineExceeded(BaseException):  # noqa: N818 (like KeyboardInterrupt: raised into a thread, not an error)
    """Raised in a request's thread at its deadline."""


class _Watchdog:
    """The requests in flight in this process (thread id -> deadline), and the thread that enforces them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.wake = threading.Condition(self.lock)
        self.due: dict[int, float] = {}  # thread id -> monotonic deadline (pushed back by AGAIN after each raise)
        self.fired: set[int] = set()  # threads raised into since they were armed
        self.pid = 0

    def arm(self, seconds: float) -> int:
        ident = threading.get_ident()
        with self.lock:
            if self.pid != os.getpid():  # first request of this process (a gunicorn worker forks after loading)
                self.pid, self.due, self.fired = os.getpid(), {}, set()
                threading.Thread(target=self._run, name="request-deadlines", daemon=True).start()
            if not self.due:
                self.wake.notify()  # the watchdog sleeps long while nothing is in flight
            self.due[ident] = time.monotonic() + seconds
            self.fired.discard(ident)
        return ident

    def disarm(self, ident: int) -> None:
        """No more raises for this thread; one raised but not yet delivered is withdrawn."""
        with self.lock:
            self.due.pop(ident, None)
            if ident in self.fired:
                self.fired.discard(ident)
                _raise_in(ident, None)

    def _run(self) -> None:
        with self.lock:
            while True:
                now = time.monotonic()
                for ident, due in list(self.due.items()):
                    if due <= now:
                        self.fired.add(ident)
                        self.due[ident] = now + AGAIN
                        _raise_in(ident, DeadlineExceeded)
                self.wake.wait(TICK if self.due else 5.0)


def _raise_in(ident: int, exception: type[BaseException] | None) -> None:
    """Have `exception` raised in thread `ident` at its next bytecode (None: withdraw one pending)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(exception)
                                               if exception is not None else ctypes.c_void_p(0))


_watchdog = _Watchdog()


def install(app: Flask) -> None:
    """Give every request of `app` its deadline (wraps `full_dispatch_request`: hooks, view and error handlers)."""
    # Off under TESTING unless turned on, as the rate limits: tests solve whole turns through the test client.
    app.config.setdefault("REQUEST_DEADLINE", None if app.testing else DEFAULT_DEADLINE)
    app.config.setdefault("DEADLINE_RETRY_AFTER", 60)
    dispatch: Callable[[], Response] = app.full_dispatch_request

    def full_dispatch_request() -> Response:
        seconds = app.config["REQUEST_DEADLINE"]
        if not seconds or request.path in EXEMPT_PATHS:
            return dispatch()
        ident = None
        try:
            ident = _watchdog.arm(float(seconds))
            try:
                return dispatch()
            finally:
                _watchdog.disarm(ident)
        except DeadlineExceeded:
            _settle(ident)
            return app.finalize_request(too_late(), from_error_handler=True)

    app.full_dispatch_request = full_dispatch_request  # type: ignore[method-assign]


def _settle(ident: int | None) -> None:
    """Disarm, even if a second raise lands meanwhile (one a second: at most once more)."""
    while ident is not None:
        try:
            _watchdog.disarm(ident)
            return
        except DeadlineExceeded:
            continue


def too_late() -> Response:
    seconds = current_app.config["REQUEST_DEADLINE"]
    retry = str(max(1, math.ceil(float(current_app.config["DEADLINE_RETRY_AFTER"]))))
    return problem(503, f"this request took longer than the server's limit of {seconds:g} s per request and was "
                        "stopped; nothing of it was kept. Ask again after Retry-After seconds; an answer that takes "
                        "this long to compute is not computed by a request (a turn start: `zombie-odds answers warm` "
                        "stores it)", headers={"Retry-After": retry})


def in_flight() -> dict[str, Any]:
    """(For tests and diagnostics) the threads with a deadline in this process."""
    with _watchdog.lock:
        return {"due": dict(_watchdog.due), "fired": set(_watchdog.fired)}
