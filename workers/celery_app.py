"""The Celery app: Redis broker and result backend when `REDIS_URL` is set, in-process otherwise.

    celery -A workers.celery_app worker --loglevel=INFO      # a worker (needs REDIS_URL)
    celery -A workers.celery_app beat                        # the scheduler (one only)

Without `REDIS_URL` (the embedded default) tasks run eagerly in the calling process, the same code,
so a fresh machine needs nothing but Python. JSON is the only serializer accepted (no pickle). Tasks
acknowledge late and are redelivered if their worker dies: after the visibility timeout
(`ZOMBIE_ODDS_VISIBILITY_TIMEOUT`, default 3600 s, far above the longest task), Redis hands an
unacknowledged message to another worker. That is too late for a table job, so every worker also
sweeps for lost jobs (`tasks.ResumeLostJobs`) when it connects to the broker, again after each
reconnection, and every `tasks.SWEEP_EVERY` seconds whatever the visibility timeout: a job whose worker
died (its heartbeat stopped) resumes from its last finished layer within about a minute
(workers/tasks.py). Calls to Redis fail fast (a few retries within about a second) so that an API
request never hangs on it.

The app names its tasks' module (tasks.py) and that step rather than importing them, and the job modules (tables.py,
solutions.py, reports.py, and jobs.py, which submits by name) import this module only where they submit or follow a
job, or take a job's lock with `REDIS_URL`: a process that only reads the store loads no Celery.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from celery import Celery, current_app
from celery.backends.redis import RedisBackend
from redis import Redis

from .schedule import beat_schedule

__all__ = ["app", "create", "using", "embedded", "redis_client", "visibility_timeout"]

FAIL_FAST = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}


def visibility_timeout() -> int:
    """Seconds before Redis redelivers a message no worker acknowledged (its worker died)."""
    return int(os.environ.get("ZOMBIE_ODDS_VISIBILITY_TIMEOUT", "3600"))


def create(redis_url: str | None = None) -> Celery:
    """The Celery app on Redis (`redis_url`, else `REDIS_URL`), or running tasks in-process without it. The code
    that submits jobs uses Celery's current app (`using` makes one current), never a module's copy of one."""
    url = redis_url if redis_url is not None else os.environ.get("REDIS_URL", "")
    celery = Celery("zombie_odds", include=["workers.tasks"])
    celery.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        result_accept_content=["json"],
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_track_started=True,
        result_extended=True,
        broker_connection_retry_on_startup=True,
        beat_schedule=beat_schedule(),  # the reports (workers/schedule.py: ZOMBIE_ODDS_REPORT_SCHEDULE)
    )
    if url:
        timeout = visibility_timeout()
        transport = {
            "visibility_timeout": timeout,
            # look for messages to redeliver every quarter of the timeout (kombu's default: 100 s)
            "unacked_restore_interval": max(1, min(60, timeout // 4)),
            "unacked_restore_throttle": 1,
            "socket_connect_timeout": 2,
        }
        celery.conf.update(
            broker_url=url,
            result_backend=url,
            task_always_eager=False,
            broker_transport_options=transport,
            result_backend_transport_options={"retry_policy": FAIL_FAST},
            redis_socket_connect_timeout=2,
            task_publish_retry_policy=FAIL_FAST,
            result_expires=7 * 24 * 3600,
            worker_cancel_long_running_tasks_on_connection_loss=False,  # they finish; their result may be lost
        )
    else:
        celery.conf.update(
            broker_url="memory://",
            result_backend="cache+memory://",
            task_always_eager=True,
            task_eager_propagates=True,
            task_store_eager_result=True,  # jobs are followed by id in-process too
        )
    celery.steps["consumer"].add("workers.tasks:ResumeLostJobs")
    return celery


@contextmanager
def using(celery: Celery) -> Iterator[Celery]:
    """`celery` as every thread's current app while the block runs (the tests switch between in-process and Redis);
    then the process's own (`app`) again, and `celery`'s connections closed."""
    celery.set_default()
    celery.set_current()
    try:
        yield celery
    finally:
        app.set_default()
        app.set_current()
        celery.close()


def embedded() -> bool:
    """Whether jobs run in this process (the embedded default: no `REDIS_URL`), not on Celery workers."""
    return bool(current_app.conf.task_always_eager)


def redis_client() -> Redis | None:
    """The Redis client of the current app's result backend (the jobs' locks and heartbeats are kept there); None
    in-process."""
    backend = current_app.backend
    return backend.client if isinstance(backend, RedisBackend) else None


app = create()
app.set_default()  # (every thread's current app: a thread Celery did not start gets the default)
