"""openapi.yaml is the contract: every request is checked against it before a view runs.

`install(app)` adds two hooks. Before each routed request, the body is read strictly (JSON only,
UTF-8, no duplicate keys, no NaN, at most `max_content_length` bytes, sent chunked or not) and the
whole request is validated and unmarshalled by openapi-core; the view then reads the validated
values (defaults filled in) from `g.params` and `g.body`. The query string is read strictly first:
every parameter is one the operation declares (or `_`, the one cache-buster), given once, and
written as the spec writes its type (integers in ASCII digits, booleans `true` or `false`), where
openapi-core would ignore an unknown parameter and cast `1_0`, ` 5` or `٣` to numbers and `yes` to
true. Any violation becomes a problem naming each field at fault: 400 for a body that is not JSON,
413 for one too large, 415 for a body of another media type, 422 for values that break the schema.
After each request, when `VALIDATE_RESPONSES` is on (the default under `TESTING`), the response is
checked against the spec as well, so a test cannot pass with an answer that breaks the contract.

`check_query` is a hook of its own, installed before the response cache (api/__init__.py): the
cache's key leaves out the parameters an operation does not declare, so a request with one is
validated (and refused) before the cache could answer it as the request without it.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from flask import Flask, Response, current_app, g, request
from jsonschema.exceptions import ValidationError as SchemaError
from openapi_core import Config, OpenAPI
from openapi_core.casting.schemas.exceptions import CastError
from openapi_core.contrib.flask import FlaskOpenAPIRequest, FlaskOpenAPIResponse
from openapi_core.deserializing.media_types.util import json_loads, plain_loads
from openapi_core.validation.request.exceptions import (
    InvalidRequestBody,
    MissingParameterError,
    ParameterValidationError,
)
from openapi_core.validation.schemas.exceptions import InvalidSchemaValue
from werkzeug.datastructures import ImmutableMultiDict
from werkzeug.exceptions import NotFound, RequestEntityTooLarge

from analysis.dice import MODES
from analysis.objectives import MAX_REACH

from .errors import ApiError, FieldError, problem
from .faults import RequestUnmarshaller, RequestValidator, first_faults

__all__ = ["CACHE_BUSTER", "SPEC_PATH", "check_query", "install", "load", "objective_fault", "openapi", "resolve",
           "strict_json"]

# A symlink to the repository's openapi.yaml, so that wheels (package data `static/*`) carry the file.
SPEC_PATH = Path(__file__).parent / "static" / "openapi.yaml"
# The one query parameter every operation takes, with any value, undeclared (openapi.yaml's info says so): a
# spreadsheet varies it to refetch a cell. It is not part of the response cache's key (api.cache), so it busts
# the spreadsheet's cache, not the server's.
CACHE_BUSTER = "_"


# The one list of modes in openapi.yaml (every other mode enum is an alias of it): written from `analysis.MODES` when
# the spec is read, so that a mode added there is served like the others (tests check the file's list is theirs).
MODES_LIST = re.compile(r"(?m)^(\s*enum: &modes )\[[^\]\n]*\]$")


@cache
def load(path: Path = SPEC_PATH) -> tuple[str, dict[str, Any]]:
    """The spec's text (served as is, its list of modes written from `analysis.MODES`) and its parsed form, read
    once per process."""
    text, found = MODES_LIST.subn(lambda m: f"{m[1]}[{', '.join(MODES)}]", path.read_text(encoding="utf-8"))
    if found != 1:
        raise ValueError(f"{path} should hold one list of modes (enum: &modes [...]), not {found}")
    return text, yaml.load(text, Loader=yaml.CSafeLoader)  # (libyaml: the pure-Python SafeLoader takes a second)


@cache
def openapi() -> OpenAPI:
    """The openapi-core validator for the spec (building it checks the spec itself).

    openapi-core reads only JSON, HTML and plain text bodies as such; every other media type this
    API answers with is text too (SVG included), problem+json is JSON, and a PNG is read byte for
    character (latin-1), so that the spec's `type: string` describes it.
    """
    text = {m: plain_loads for m in ("text/csv", "text/css", "text/javascript", "application/yaml", "image/svg+xml")}
    config = Config(extra_media_type_deserializers={**text, "application/problem+json": json_loads,
                                                    "image/png": _bytes_as_text},
                    # requests: validation stops at the first faults (api.faults: an invalid request is cheap)
                    request_validator_cls=RequestValidator, request_unmarshaller_cls=RequestUnmarshaller)
    return OpenAPI.from_dict(load()[1], config=config)


def _bytes_as_text(data: bytes | str) -> str:
    return data if isinstance(data, str) else data.decode("latin-1")


def install(app: Flask) -> None:
    app.before_request(validate_request)
    app.after_request(validate_response)
    app.register_error_handler(NotFound, _not_found)


def _not_found(e: NotFound) -> Response:
    """No route for the path: when it fits one of the spec's paths but for a parameter (an id with a
    `/` in it: `/v1/jobs/..%2F..%2Fetc`), the 404 names that parameter."""
    if request.url_rule is not None:  # a view's own 404
        return problem(404, e.description or "not found")
    fields = [FieldError(name, f"no such {name}: {_short(value)}") for name, value in _path_parameters(request.path)]
    return problem(404, f"no such resource: {_cut(request.path)}", fields)


@cache
def _templates() -> list[tuple[re.Pattern[str], int]]:
    """Each templated path of the spec as a regular expression (a parameter matches anything, `/` too),
    with its count of literal characters: the most specific template that matches wins."""
    out = []
    for path in load()[1]["paths"]:
        parts = re.split(r"\{(\w+)\}", path)
        if len(parts) > 1:
            pattern = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.+)" for i, p in enumerate(parts))
            out.append((re.compile(f"^{pattern}$"), len("".join(parts[::2]))))
    return sorted(out, key=lambda t: -t[1])


def _path_parameters(path: str) -> list[tuple[str, str]]:
    for pattern, _ in _templates():
        match = pattern.match(path)
        if match:
            return list(match.groupdict().items())
    return []


# -- requests -------------------------------------------------------------------------------------


class SpecRequest(FlaskOpenAPIRequest):
    """The request as the spec sees it.

    HEAD is validated as the GET it stands for, and a GET has no body whatever a client sends. An
    array parameter with an empty value (`brains=`) is an empty list, which the spec expresses as
    the parameter's default, so it is left out rather than read as one die named "". So are the
    parameters already refused (`refused`: see `_query_faults`). Response validation needs no
    request body (`body=False`), and must not read one that was refused.
    """

    def __init__(self, flask_request: Any, arrays: frozenset[str] = frozenset(), body: bool = True,
                 refused: frozenset[str] = frozenset()):
        super().__init__(flask_request)
        query = [(k, v) for k, v in flask_request.args.items(multi=True)
                 if not (v == "" and k in arrays) and k not in refused]
        self.parameters.query = ImmutableMultiDict(query)
        self.with_body = body

    @property
    def method(self) -> str:
        method = super().method
        return "get" if method == "head" else method

    @property
    def body(self) -> bytes | None:
        return super().body if self.with_body and self.method != "get" else None


def validate_request() -> None:
    """Before every routed request: check it against the spec, or raise the problem that says why."""
    if request.url_rule is None or request.method == "OPTIONS":
        return  # 404 and 405 are the router's to answer; CORS preflights carry nothing to check
    operation = _operation()
    if operation.get("requestBody"):
        _check_body()
    parameters = _parameters(operation)
    arrays = frozenset(name for name, schema in parameters.items() if schema.get("type") == "array")
    faults = _query_faults(operation)
    refused = frozenset(name for name, _ in faults)
    if operation.get("x-validate-only"):
        _validate_only(parameters, arrays, faults)
        return
    result = openapi().unmarshal_request(SpecRequest(request, arrays, refused=refused))
    _refuse(result.errors, faults)
    g.params = {**result.parameters.path, **result.parameters.query}
    g.body = result.body


def check_query() -> None:
    """Before the response cache (api/__init__.py), whose key leaves out the parameters an operation does
    not declare: a request with such a parameter is validated now, and so refused (a misspelt parameter
    must not get the answer cached for the request without it)."""
    if request.url_rule is None or request.method == "OPTIONS" or "422" not in _operation()["responses"]:
        return  # (see `_query_faults`)
    declared = _query_parameters(request.url_rule.rule, _method())
    if any(name not in declared and name != CACHE_BUSTER for name in request.args):
        validate_request()


def _query_faults(operation: dict[str, Any]) -> list[tuple[str, FieldError]]:
    """(parameter, fault) for each query parameter the operation does not declare (naming the nearest declared
    one), each given twice, and each value not written as the spec writes its type: openapi-core would ignore
    the first, and cast the last leniently (`1_0`, ` 5` and `٣` as numbers, `yes` as true).

    Every operation of openapi.yaml documents a 422, `/healthz`, the files, the job and chart URLs too (which
    declare no query parameter: any but `_` is refused); one that did not could not refuse one, so there they
    would be ignored."""
    if "422" not in operation["responses"]:
        return []
    declared = _query_parameters(request.url_rule.rule, _method())
    faults = []
    for name in request.args:
        if name == CACHE_BUSTER:
            continue
        if name not in declared:
            faults.append((name, FieldError(_cut(name, 40), _unknown(name, list(declared)))))
        elif len(request.args.getlist(name)) > 1:
            faults.append((name, FieldError(name, "given more than once")))
        else:
            faults += [(name, e) for e in _strict(name, request.args[name], declared[name])]
    return faults


def _unknown(name: str, declared: list[str]) -> str:
    close = difflib.get_close_matches(name, [*declared, CACHE_BUSTER], n=1)
    if close:
        return f"unknown parameter `{_cut(name, 40)}`: did you mean `{close[0]}`?"
    buster = f"`{CACHE_BUSTER}`, the cache-buster, with any value"
    if not declared:
        return f"unknown parameter `{_cut(name, 40)}`: this operation takes none but {buster}"
    return f"unknown parameter `{_cut(name, 40)}`; known: {', '.join(declared)} (and {buster})"


def _strict(name: str, value: str, schema: dict[str, Any]) -> list[FieldError]:
    """The value as the spec writes its type, or why not: an integer in ASCII digits (a leading `-` only
    where the schema allows negatives), a boolean `true` or `false`, an array of such items separated by
    commas. An empty array value is the empty array (an empty pile): refused where the schema wants items."""
    kind = schema.get("type")
    if kind == "array":
        if value == "":
            least = schema.get("minItems", 0)
            return [FieldError(name, f"has 0 items; at least {least} required")] if least else []
        item = resolve(load()[1], schema.get("items", {}))
        return first_faults(e for i, v in enumerate(value.split(",")) for e in _strict(f"{name}[{i}]", v, item))
    if kind == "integer":
        negative = re.fullmatch(r"-[0-9]+", value)
        if re.fullmatch(r"[0-9]+", value) or (negative and schema.get("minimum", -1) < 0):
            return []
        if negative:  # (`-0` too: the schema takes no negative, so no minus)
            return [FieldError(name, f"{_cut(value, 40)} is below the minimum {schema['minimum']}")]
        return [FieldError(name, f"{_short(value)} is not an integer written in ASCII digits 0-9")]
    if kind == "boolean" and value not in ("true", "false"):
        return [FieldError(name, f"{_short(value)} is not a boolean: true or false")]
    return []


def _method() -> str:
    return "get" if request.method == "HEAD" else request.method.lower()


@cache
def _query_parameters(rule: str, method: str) -> dict[str, dict[str, Any]]:
    """Name -> resolved schema of the query parameters the spec declares for a Flask rule and method."""
    spec = load()[1]
    operation = spec["paths"][rule.replace("<", "{").replace(">", "}")].get(method, {})
    out = {}
    for parameter in operation.get("parameters", []):
        parameter = resolve(spec, parameter)
        if parameter["in"] == "query":
            out[parameter["name"]] = resolve(spec, parameter["schema"])
    return out


def _refuse(found: list[Exception], faults: Sequence[tuple[str, FieldError]] = ()) -> None:
    """Raise the problem naming every field of the request that breaks the spec (none: return): openapi-core's
    findings, and the query's `faults` (whose parameters openapi-core did not see: not "required" then)."""
    refused = {name for name, _ in faults}
    found = [error for error in found if getattr(error, "name", None) not in refused]
    if not found and not faults:
        return
    errors = [e for error in found for e in _field_errors(error)] + [e for _, e in faults]
    if any(getattr(error, "location", None) == "path" for error in found):
        raise ApiError(404, f"no such resource: {request.path}", errors)
    order = {name: i for i, name in enumerate(_query_parameters(request.url_rule.rule, _method()))}
    errors.sort(key=lambda e: order.get(re.split(r"[\[.]", e.field)[0], len(order)))  # the spec's order
    raise ApiError(422, "the request does not match the API's schema: "
                   + "; ".join(f"{e.field}: {e.reason}" for e in errors), errors)


def _validate_only(parameters: dict[str, dict[str, Any]], arrays: frozenset[str],
                   faults: Sequence[tuple[str, FieldError]]) -> None:
    """An operation marked `x-validate-only` (a whole game log) is validated, not unmarshalled.

    openapi-core's unmarshalling visits every node of the body: about 0.5 s for a 6 KB game log,
    15 times its validation. The view then gets the body as parsed and the query parameters as sent
    (strings, no defaults filled in: such an operation declares only string parameters without one).
    """
    refused = frozenset(name for name, _ in faults)
    _refuse(list(openapi().iter_request_errors(SpecRequest(request, arrays, refused=refused))), faults)
    g.params = {**(request.view_args or {}), **{k: request.args[k] for k in parameters if k in request.args}}
    g.body = strict_json(request.get_data(cache=True))


def _operation() -> dict[str, Any]:
    """The spec's operation for this route (the Flask rule `<x>` is the spec's `{x}`)."""
    path = request.url_rule.rule.replace("<", "{").replace(">", "}")
    method = "get" if request.method == "HEAD" else request.method.lower()
    return load()[1]["paths"][path][method]


def parameter_names(rule: str) -> list[str]:
    """The query/path parameter names the spec declares for a Flask rule's GET operation."""
    path = rule.replace("<", "{").replace(">", "}")
    return list(_parameters(load()[1]["paths"][path].get("get", {})))


def _parameters(operation: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Name -> resolved schema of the operation's parameters."""
    spec = load()[1]
    out = {}
    for parameter in operation.get("parameters", []):
        parameter = resolve(spec, parameter)
        out[parameter["name"]] = resolve(spec, parameter["schema"])
    return out


def resolve(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """Follow local `$ref`s (`#/components/...`)."""
    while "$ref" in node:
        target: Any = spec
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def _check_body() -> None:
    """Read the body strictly before the spec sees it: 415, 413 or 400, never a guess."""
    mimetype, charset = request.mimetype, request.mimetype_params.get("charset", "utf-8")
    if mimetype != "application/json" or charset.lower() not in ("utf-8", "utf8"):
        shown = request.content_type or "none"
        raise ApiError(415, f"the body must be application/json (UTF-8), not {shown}",
                       [FieldError("Content-Type", f"{_cut(shown, 60)} is not application/json (UTF-8)")])
    limit = request.max_content_length
    if limit is not None and request.content_length is None:
        # A body without Content-Length (chunked) is read up to the limit, where werkzeug stops without a word
        # (a body cut there may still parse): read one byte more, which only a body over the limit has.
        request.max_content_length = limit + 1
    try:
        data = request.get_data(cache=True)
    except RequestEntityTooLarge:
        data = None
    if data is None or (limit is not None and len(data) > limit):
        raise ApiError(413, f"the body is larger than {limit} bytes",
                       [FieldError("body", f"larger than {limit} bytes")])
    strict_json(data)


def strict_json(data: bytes) -> Any:
    """Parse JSON as RFC 8259 says and nothing more, or raise a 400/422 `ApiError`.

    Python's json module accepts NaN and Infinity, guesses UTF-16 and UTF-32, and keeps the last of
    two equal keys: each would let a malformed or ambiguous body through, silently changed.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ApiError(400, f"the body is not valid UTF-8 (byte {e.start})",
                       [FieldError("body", f"not valid UTF-8 at byte {e.start}")]) from None

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                raise ApiError(422, f"the key {_short(key)} appears twice in one object",
                               [FieldError(_cut(key, 40), "given more than once")])
            seen[key] = value
        return seen

    def no_constant(name: str) -> None:
        raise ValueError(f"{name} is not JSON")

    try:
        return json.loads(text, object_pairs_hook=no_duplicates, parse_constant=no_constant)
    except (ValueError, RecursionError) as e:  # JSONDecodeError is a ValueError; so are huge integers
        reason = f"malformed JSON: {_cut(str(e))}"
        raise ApiError(400, reason, [FieldError("body", reason)]) from None


def _field_errors(error: Exception) -> Iterator[FieldError]:
    """Turn one openapi-core error into the fields at fault, named as the client wrote them."""
    cause = error.__cause__
    if isinstance(error, ParameterValidationError):
        name = error.name
        if isinstance(error, MissingParameterError):
            yield FieldError(name, "required")
        elif isinstance(cause, CastError):
            yield FieldError(name, f"{_short(cause.value)} is not a valid {cause.type}")
        elif isinstance(cause, InvalidSchemaValue):
            for e in cause.schema_errors:
                yield from _schema_errors(name, e)
        else:
            yield FieldError(name, str(cause or error))
    elif isinstance(error, InvalidRequestBody) and isinstance(cause, InvalidSchemaValue):
        for e in cause.schema_errors:
            yield from _schema_errors("", e)
    else:
        yield FieldError("body", str(cause or error))


def _schema_errors(prefix: str, e: Exception) -> Iterator[FieldError]:
    if not isinstance(e, SchemaError):
        yield FieldError(prefix or "body", str(e))
        return
    field = prefix
    for part in e.absolute_path:
        field += f"[{part}]" if isinstance(part, int) else (f".{part}" if field else str(part))
    field = field or "body"
    value, kind = e.validator_value, e.validator
    if kind == "additionalProperties":
        known = ", ".join(e.schema.get("properties", {}))
        for name in sorted(set(e.instance) - set(e.schema.get("properties", {}))):
            yield FieldError(name if field == "body" else f"{field}.{name}", f"unknown field; known: {known}")
        return
    reasons = {
        "type": lambda: f"must be {'an' if str(value)[0] in 'aeiou' else 'a'} {value}",
        "enum": lambda: f"{_short(e.instance)} is not one of: {', '.join(map(str, value))}",
        "maxItems": lambda: f"has {len(e.instance)} items; at most {value} allowed",
        "minItems": lambda: f"has {len(e.instance)} items; at least {value} required",
        "minimum": lambda: f"{e.instance} is below the minimum {value}",
        "maximum": lambda: f"{e.instance} is above the maximum {value}",
        "pattern": lambda: (value == _objective_pattern() and objective_fault(e.instance)
                            or f"{_short(e.instance)} does not match {value}"),
    }
    yield FieldError(field, reasons.get(kind, lambda: _cut(e.message))())


def objective_fault(value: Any) -> str | None:
    """Why `value` breaks the `Objective` pattern, in words (None: it does not, or is not a string); the pattern
    itself is a regular expression no one should have to read in a 422. Ranges its pattern lets through (`rule:0,1`)
    are analysis.parse_objective's to refuse, in the same words."""
    if not isinstance(value, str) or re.search(_objective_pattern(), value):
        return None
    if re.fullmatch(r"reach:[0-9]+", value):
        return f"reach:K needs 1 <= K <= {MAX_REACH}"
    if re.fullmatch(r"rule:[0-9]+,[0-9]+", value):
        return "rule:N,S needs 1 <= N <= 100 and 1 <= S <= 3"
    return (f"{_short(value)} is not an objective: expected-brains, reach:K (1 <= K <= {MAX_REACH}), rule:N,S "
            "(1 <= N <= 100, 1 <= S <= 3), or win (with scores)")


def _objective_pattern() -> str:
    return load()[1]["components"]["schemas"]["Objective"]["pattern"]


def _short(value: Any) -> str:
    """A value quoted for a message, cut short: a reason must not echo a 16 KiB body."""
    return _cut(repr(value), 40)


def _cut(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- responses ------------------------------------------------------------------------------------


def validate_response(response: Response) -> Response:
    """After a routed request, when `VALIDATE_RESPONSES` is on: the answer must match the spec.

    A mismatch is a bug of ours, not the client's: it raises, and Flask's handling of errors in
    `after_request` turns it into a 500 (or fails the test that caused it).
    """
    if not current_app.config["VALIDATE_RESPONSES"] or request.url_rule is None or request.method in (
        "OPTIONS", "HEAD"
    ):
        return response
    if not response.is_sequence:  # a file (Swagger UI's assets): read it whole, and close it now
        file = response.response
        response.direct_passthrough = False
        response.set_data(b"".join(response.iter_encoded()))
        getattr(file, "close", lambda: None)()
    openapi().validate_response(SpecRequest(request, body=False), FlaskOpenAPIResponse(response))
    return response
