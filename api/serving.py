"""How `zombie-odds serve` runs gunicorn: its worker class, its settings and its hooks.

- **Workers** are gunicorn's threaded workers (`gthread`, `--threads`, default 2) with two changes
  (`Worker`): `/healthz` is answered by the worker's own main thread, the one that accepts
  connections and tells the master it is alive, so a health check is answered in milliseconds even
  while every request thread of every worker computes; and gunicorn's own error answers (a request
  line over 8,190 bytes: 414, a header field too large or too many of them: 431, a request that is
  not HTTP: 400) are RFC 9457 problems with `nosniff`, as every answer of the application, instead of
  gunicorn's HTML page. A request's time is bounded inside the application (api.deadline,
  `REQUEST_DEADLINE`); gunicorn's worker `timeout` is set above it (a threaded worker's heartbeat
  does not stop while a request computes anyway), and its `graceful_timeout` too, so that a worker
  stopping or recycled lets its requests finish.
- **Recycling**: a worker is replaced after `max_requests` requests (with `max_requests_jitter`, so
  that workers are not replaced together), and after any request that leaves it above
  `--max-worker-memory` MB of its own memory (the mapped solutions it shares not counted:
  `recycle_when_large`): it stops accepting, finishes the requests it has and exits, and the master
  starts a fresh one. A worker never keeps gigabytes idle after a large request. Each worker fixes glibc's
  mmap and trim thresholds (`return_freed_memory`), so that the tens of MB a score distribution's flow
  allocates go back to the system when it ends instead of staying in the heap, and what its arenas still hold
  freed goes back when an answer's job ends and before a worker is measured for recycling (api/memory.py).
- **Control socket**: gunicorn 23+ opens a control socket, by default the same path for every server
  of a user (`~/.gunicorn/gunicorn.ctl`), so that stopping one server removed another's. `serve` opens
  none unless `--control-socket PATH` asks for one.
- **Request limits**: the request line up to 8,190 bytes (gunicorn's most; its default is 4,094), 100
  header fields of up to 8,190 bytes each.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import socket
import time
from concurrent.futures import Future
from functools import partial
from http import HTTPStatus
from typing import Any

from gunicorn import util
from gunicorn.workers.gthread import ThreadWorker

from workers import jobs

from .deadline import DEFAULT_DEADLINE
from .memory import give_back, private_mb, return_freed_memory

__all__ = ["Worker", "options", "recycle_when_large", "request_deadline", "write_problem"]

LIMIT_REQUEST_LINE = 8190  # gunicorn's maximum (0 would mean "up to 1 MB")
LIMIT_REQUEST_FIELDS = 100
LIMIT_REQUEST_FIELD_SIZE = 8190
# A health check the main thread may answer: `GET /healthz` (or HEAD, with a query string), whole in the bytes
# already received, without a body. Anything else (a request cut in two packets, TLS, HTTP/2) goes to a thread.
HEALTH = re.compile(rb"(GET|HEAD) /healthz(\?[^ \r\n]*)? HTTP/1\.[01]\r\n")
BODY_HEADER = re.compile(rb"\r\n(content-length|transfer-encoding)[ \t]*:", re.IGNORECASE)


class Worker(ThreadWorker):
    """gunicorn's threaded worker; `/healthz` in the main thread, errors as problem+json (module docstring)."""

    def init_process(self) -> None:
        util.write_error = write_problem  # gunicorn's own error answers, in this worker process
        return_freed_memory()
        super().init_process()

    def enqueue_req(self, conn: Any) -> None:
        if not self._health_here(conn):
            super().enqueue_req(conn)

    def _health_here(self, conn: Any) -> bool:
        """Answer a health check now, in this (the main) thread; or wait for a new connection's first bytes in the
        poller, not in a request thread. False: the connection goes to the request threads as usual."""
        if self.cfg.is_ssl or conn.is_http2 or (conn.parser is not None and conn.parser.unreader.buf.getvalue()):
            return False
        try:
            data = conn.sock.recv(4096, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            if conn.initialized or conn.data_ready:
                return False
            self._wait_for_data(conn)  # a new connection, nothing sent yet
            return True
        except OSError:
            return False
        if not HEALTH.match(data) or b"\r\n\r\n" not in data or BODY_HEADER.search(data.split(b"\r\n\r\n")[0]):
            return False
        conn.data_ready = True
        done: Future = Future()
        try:
            done.set_result(self.handle(conn))
        except Exception as e:  # (handle() answers errors itself; this is its own failure)
            done.set_exception(e)
        self.finish_request(conn, done)
        return True

    def _wait_for_data(self, conn: Any) -> None:
        """As gunicorn does with a connection whose data has not come within 5 s: the poller waits for it."""
        conn.sock.setblocking(False)
        conn.timeout = time.monotonic() + self.cfg.keepalive
        self.pending_conns.append(conn)
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self.on_pending_socket_readable, conn))


def write_problem(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's error answer (`gunicorn.util.write_error`) as an RFC 9457 problem, `nosniff`, connection closed."""
    try:
        title = HTTPStatus(status_int).phrase
    except ValueError:
        title = reason
    detail = mesg or ("internal error; it has been logged" if status_int >= 500 else title)
    body = json.dumps({"type": "about:blank", "title": title, "status": status_int,
                       "detail": detail if len(detail) <= 200 else detail[:197] + "..."}).encode()
    head = (f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\nContent-Type: application/problem+json\r\n"
            f"Content-Length: {len(body)}\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n\r\n")
    util.write_nonblock(sock, head.encode("latin-1") + body)


def recycle_when_large(limit_mb: float) -> Any:
    """gunicorn's `post_request` hook: a worker left above `limit_mb` MB of its own memory (`private_mb`) by a
    request stops accepting, finishes its requests and exits (the master starts a fresh one). Not while it runs a
    job (`workers.jobs.running`): an answer's, or a table's or a report's (the embedded default); the job's memory
    is the job's, and a worker recycled would kill it, to start again, as large, when the question is asked again;
    the first request after the job ends recycles it."""

    def post_request(worker: Any, req: Any, environ: Any, resp: Any) -> None:
        own = private_mb()
        if own > limit_mb:  # (freed memory the heap still holds is not the worker's: given back, it is not counted)
            give_back()
            own = private_mb()
        if own > limit_mb and worker.alive and not jobs.running():
            worker.log.info("worker %s holds %.0f MB (over %.0f MB) after %s %s: recycling it", worker.pid, own,
                            limit_mb, getattr(req, "method", "?"), getattr(req, "path", "?"))
            worker.alive = False
            queue = getattr(worker, "method_queue", None)
            if queue is not None:  # wake the threaded worker's loop now
                queue.defer(lambda: None)

    return post_request


def request_deadline() -> float:
    """The application's deadline per request as configured for `create_app()` in this environment
    (`ZOMBIE_ODDS_REQUEST_DEADLINE`, JSON, else `DEFAULT_DEADLINE`); 0 when turned off."""
    raw = os.environ.get("ZOMBIE_ODDS_REQUEST_DEADLINE")
    try:
        value = json.loads(raw) if raw is not None else DEFAULT_DEADLINE
    except ValueError:
        value = raw
    return float(value or 0)


def options(host: str, port: int, workers: int, threads: int, timeout: int | None, max_requests: int,
            max_requests_jitter: int, max_worker_memory: float, control_socket: str | None) -> dict[str, Any]:
    """gunicorn's settings for `zombie-odds serve` (module docstring)."""
    deadline = request_deadline()
    if timeout is None:
        timeout = int(deadline) + 30 if deadline else 900
    if deadline and timeout <= deadline:
        raise ValueError(f"--timeout {timeout} must be above the request deadline ({deadline:g} s, "
                         "ZOMBIE_ODDS_REQUEST_DEADLINE): gunicorn would kill a worker before the application answers")
    settings: dict[str, Any] = {
        "bind": f"{host}:{port}", "workers": workers, "worker_class": "api.serving.Worker", "threads": threads,
        "timeout": timeout, "graceful_timeout": max(30, int(deadline) + 10), "preload_app": True,
        "max_requests": max_requests, "max_requests_jitter": max_requests_jitter,
        "post_request": recycle_when_large(max_worker_memory),
        "limit_request_line": LIMIT_REQUEST_LINE, "limit_request_fields": LIMIT_REQUEST_FIELDS,
        "limit_request_field_size": LIMIT_REQUEST_FIELD_SIZE,
    }
    if control_socket:
        settings["control_socket"] = control_socket
    else:
        settings["control_socket_disable"] = True
    return settings
