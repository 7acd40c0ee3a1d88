"""workers/celery_app.py: the Celery app: JSON only, acknowledged late; on Redis when `REDIS_URL` names one (its
messages redelivered after the visibility timeout, its calls failing fast), in-process otherwise; `using` makes an
app every thread's current one, then the process's own again."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from celery import current_app
from kombu.utils.imports import symbol_by_name

from workers.celery_app import app, create, embedded, using
from workers.tasks import ResumeLostJobs

URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1: nothing here connects


@pytest.fixture(autouse=True)
def the_process_app_after() -> Iterator[None]:
    """A new Celery app makes itself this thread's current one: the process's own is current again after each test."""
    yield
    app.set_default()
    app.set_current()


def test_json_only():
    assert app.conf.accept_content == ["json"] and app.conf.task_serializer == "json"
    assert app.conf.task_acks_late and app.conf.task_reject_on_worker_lost


def test_without_redis_tasks_run_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    here = create()
    assert here.conf.task_always_eager and here.conf.task_eager_propagates and here.conf.task_store_eager_result
    assert here.conf.broker_url == "memory://" and here.conf.result_backend == "cache+memory://"
    assert create("").conf.task_always_eager  # an empty URL is none
    monkeypatch.setenv("REDIS_URL", URL)
    assert not create().conf.task_always_eager and create().conf.broker_url == URL
    assert create("").conf.task_always_eager  # the argument wins over the environment


@pytest.mark.parametrize(("timeout", "restore"), [(None, 60), ("120", 30), ("2", 1)])
def test_on_redis_a_dead_workers_message_comes_back_after_the_visibility_timeout(
        monkeypatch: pytest.MonkeyPatch, timeout: str | None, restore: int) -> None:
    """An hour by default; kombu looks for messages to restore every quarter of it (at most a minute, at least 1 s)."""
    if timeout is None:
        monkeypatch.delenv("ZOMBIE_ODDS_VISIBILITY_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("ZOMBIE_ODDS_VISIBILITY_TIMEOUT", timeout)
    conf = create(URL).conf
    assert conf.broker_url == conf.result_backend == URL and not conf.task_always_eager
    transport = conf.broker_transport_options
    assert transport["visibility_timeout"] == int(timeout or 3600) and transport["unacked_restore_interval"] == restore
    assert transport["socket_connect_timeout"] == 2 and conf.task_publish_retry_policy["max_retries"] == 2
    assert conf.task_acks_late and conf.task_reject_on_worker_lost and conf.worker_prefetch_multiplier == 1


def test_every_app_knows_the_tasks_the_reports_and_the_sweep_for_lost_jobs() -> None:
    celery = create(URL)
    celery.loader.import_default_modules()
    assert {"workers.reports.scheduled_reports", "workers.reports.build_report"} <= set(celery.tasks)
    assert any(name.startswith("workers.tasks.") for name in celery.tasks)
    assert "workers.tasks.build_solution" in celery.tasks  # (the name workers/solutions.py sends it by)
    assert [symbol_by_name(step) for step in celery.steps["consumer"]] == [ResumeLostJobs]  # (named, not imported)
    assert "zombie-odds-reports" in celery.conf.beat_schedule


def test_using_makes_an_app_every_threads_current_one_then_the_process_own() -> None:
    seen: list[object] = []
    assert current_app._get_current_object() is app and embedded()
    with using(create(URL)) as queued:
        thread = threading.Thread(target=lambda: seen.append((current_app._get_current_object(), embedded())))
        thread.start()
        thread.join()
        assert seen == [(queued, False)] and not embedded()
    assert current_app._get_current_object() is app and embedded()
