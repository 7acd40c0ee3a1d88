"""Orchestration over analysis/: the Celery app, its tasks, and the durable store of computed tables.

`celery -A workers worker` finds the app here.
"""

from .celery_app import app

__all__ = ["app"]
