"""The Celery app: Redis broker and result backend when `REDIS_URL` is set, in-process otherwise.

    celery -A workers worker --loglevel=INFO      # a worker (needs REDIS_URL)
    celery -A workers beat                        # the scheduler (one only)

Without `REDIS_URL` (the embedded default) tasks run eagerly in the calling process, the same code,
so a fresh machine needs nothing but Python. JSON is the only serializer accepted (no pickle). Tasks
acknowledge late and are redelivered if their worker dies, so the visibility timeout is set above the
longest task.
"""

from __future__ import annotations

import os
import threading

from celery import Celery

__all__ = ["app", "configure"]

app = Celery("zombie_odds", include=["workers.tasks"])


def configure(celery: Celery, redis_url: str | None = None) -> Celery:
    """Point `celery` at Redis (`redis_url` or `REDIS_URL`), or run tasks in-process without it."""
    url = redis_url if redis_url is not None else os.environ.get("REDIS_URL", "")
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
    )
    if url:
        celery.conf.update(
            broker_url=url,
            result_backend=url,
            task_always_eager=False,
            broker_transport_options={"visibility_timeout": 3600},  # above the longest task (minutes)
            result_backend_transport_options={"visibility_timeout": 3600},
            result_expires=7 * 24 * 3600,
        )
    else:
        celery.conf.update(
            broker_url="memory://",
            result_backend="cache+memory://",
            task_always_eager=True,
            task_eager_propagates=True,
            task_store_eager_result=True,  # jobs are followed by id in-process too
        )
    # Celery caches the result backend and the broker pool on first use; drop them so that a
    # reconfigured app (the tests switch between in-process and Redis) talks to the new ones.
    celery._backend_cache = None
    celery._local = threading.local()
    celery._pool = None
    return celery


configure(app)
