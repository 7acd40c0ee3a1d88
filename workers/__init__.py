"""Orchestration over analysis/: the Celery app, its tasks, and the durable store of computed tables.

The package imports nothing: reading the store (`store.py`, `shared.py`) loads no Celery, and a worker names the
app's own module (`celery -A workers.celery_app worker`).
"""
