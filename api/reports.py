"""/v1/reports: the scheduled reports (workers/reports.py), listed, served as HTML, CSV or JSON, and made now.

A report is stored once and never changes (its id is derived from its inputs), but the list and
"latest" change with every period, and a stored file is checked against its checksum on every read:
so every view here is `uncached` by api/cache.py, and a report carries a strong ETag instead. The
HTML page is self-contained; its Content-Security-Policy lets it load nothing at all (styles are
inline, charts are `data:` images).

Each view imports workers/reports.py when it runs: a server that is never asked for a report loads none of it (the
report's content and rendering).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flask import Blueprint, Response, g, jsonify, request

from analysis import FieldError
from workers import render
from workers.tables import QUEUE_ERRORS

from .cache import uncached
from .errors import ApiError

if TYPE_CHECKING:
    from workers.reports import ReportJob

__all__ = ["bp", "CSP", "job_answer"]

bp = Blueprint("reports", __name__)

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def job_url(job: str) -> str:
    return f"/v1/reports/jobs/{job}"


def job_answer(job: ReportJob) -> dict[str, Any]:
    """The documented job (openapi.yaml, schema `ReportJob`)."""
    from workers import reports

    made = reports.describe(reports.key_of(job.id))
    out: dict[str, Any] = {"id": job.id, "url": job_url(job.id), "state": job.state, "mode": made["mode"],
                           "variant": made["variant"], "period": made["period"]}
    if job.report is not None:
        out["report"] = f"/v1/reports/{job.report}"
    if job.error is not None:
        out["error"] = job.error
    return out


def _no_store(response: Response) -> Response:
    response.headers["Cache-Control"] = "no-store"
    return response


def _queue_down(e: Exception) -> ApiError:
    return ApiError(503, f"the job queue cannot be reached ({type(e).__name__}); ask again later")


def _serve(doc: dict[str, Any], params: dict[str, Any]) -> Response:
    """A stored report as HTML (default), CSV (every table, or `table`) or JSON (the data)."""
    fmt, name = params.get("format", "html"), params.get("table")
    if name is not None and fmt != "csv":
        raise ApiError(422, "table: only with format=csv", [FieldError("table", "only with format=csv")])
    if fmt == "csv":
        if name is None:
            body = render.all_csv(doc)
        elif name in doc["csv"]:
            body = doc["csv"][name]
        else:
            known = ", ".join(doc["csv"]) or "none"
            raise ApiError(422, f"table: no table {name!r} in this report; known: {known}",
                           [FieldError("table", f"no table {name!r} in this report; known: {known}")])
        response = Response(body, mimetype="text/csv")
    elif fmt == "json":
        response = jsonify({k: v for k, v in doc.items() if k not in ("html", "csv", "charts")})
    else:
        response = Response(doc["html"], mimetype="text/html")
        response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.set_etag(f"{doc['id']}-{fmt}-{name or 'all'}")
    response.headers["Cache-Control"] = "no-cache"
    return response.make_conditional(request)


@bp.get("/v1/reports")
@uncached
def list_reports() -> Response:
    from workers import reports

    return _no_store(jsonify({"reports": reports.reports(g.params.get("mode"))}))


@bp.get("/v1/reports/latest")
@uncached
def latest_report() -> Response:
    from workers import reports

    mode, variant = g.params["mode"], g.params["variant"]
    doc = reports.latest(mode, variant)
    if doc is None:
        raise ApiError(404, f"no report for mode {mode} ({variant}) yet: POST {{\"mode\": \"{mode}\"}} to "
                            "/v1/reports to make one now")
    response = _serve(doc, g.params)
    response.headers["Content-Location"] = f"/v1/reports/{doc['id']}"
    return response


@bp.get("/v1/reports/<id>")
@uncached
def get_report(id: str) -> Response:
    from workers import reports

    doc = reports.load(id)
    if doc is None:
        raise ApiError(404, f"no such report: {id}")
    return _serve(doc, g.params)


def _chart(id: str, name: str, fmt: str, mimetype: str) -> Response:
    from workers import reports

    doc = reports.load(id)
    if doc is None:
        raise ApiError(404, f"no such report: {id}")
    body = render.chart(doc, name, fmt)
    if body is None:
        drawn = ", ".join(doc.get("charts", {})) or "none"
        raise ApiError(404, f"report {id} has no chart {name!r} (its charts: {drawn}; a chart whose table is "
                            "missing is not drawn)")
    response = Response(body, mimetype=mimetype)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Content-Security-Policy"] = CSP  # an SVG opened alone runs nothing either
    response.set_etag(f"{doc['id']}-{name}-{fmt}")
    response.headers["Cache-Control"] = "no-cache"
    return response.make_conditional(request)


@bp.get("/v1/reports/<id>/charts/<chart>.png")
@uncached
def get_report_chart_png(id: str, chart: str) -> Response:
    return _chart(id, chart, "png", "image/png")


@bp.get("/v1/reports/<id>/charts/<chart>.svg")
@uncached
def get_report_chart_svg(id: str, chart: str) -> Response:
    return _chart(id, chart, "svg", "image/svg+xml")


@bp.post("/v1/reports")
def post_report() -> Response:
    from workers import reports

    body = g.body or {}
    try:
        job = reports.submit(body["mode"], body.get("variant", "before-draw"))
    except QUEUE_ERRORS as e:
        raise _queue_down(e) from None
    response = jsonify(job_answer(job))
    if job.state != "succeeded":
        response.status_code = 202
        response.headers["Location"] = job_url(job.id)
    return _no_store(response)


@bp.get("/v1/reports/jobs/<id>")
@uncached
def get_report_job(id: str) -> Response:
    from workers import reports

    try:
        job = reports.status(id)
    except QUEUE_ERRORS as e:
        raise _queue_down(e) from None
    if job is None:
        raise ApiError(404, f"no such report job: {id}")
    return _no_store(jsonify(job_answer(job)))
