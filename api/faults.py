"""openapi-core's request validation, stopped at the first `MAX_FAULTS` faults, its parameters memoised.

openapi-core collects every error jsonschema finds (`tuple(iter_errors(...))`): a 16 KiB body of
8,000 wrong items made 16,000 errors, a second and a half of work and a 2 MB answer. jsonschema finds
them lazily, so taking the first `MAX_FAULTS` stops the walk there: an invalid request then costs no
more than a valid one. The problem lists the first `MAX_ERRORS` of them and counts the rest
(api.errors.problem). `install(config)` wires these classes into an openapi-core `Config`.

The spec's path and operation of a request are memoised by its route, and a parameter's unmarshalling by the
parameter and its raw values (`RequestUnmarshaller`): openapi-core finds the path among the spec's, resolves the
spec's references and builds a schema validator for every parameter of every request, about 3 ms a parameter, so more
than the answer itself for a position's dozen parameters, while a parameter's raw values repeat (modes, die lists,
small numbers). The outcome is a function of the two (the spec is read once per process), so the memo changes no
answer; a value that fails is not kept: it fails the same way again.
"""

from __future__ import annotations

import copy
from itertools import chain, islice
from typing import Any

from jsonschema_path import SchemaPath
from openapi_core.datatypes import Parameters, RequestParameters
from openapi_core.protocols import Request
from openapi_core.templating.paths.datatypes import PathOperationServer
from openapi_core.unmarshalling.request.unmarshallers import V31RequestUnmarshaller
from openapi_core.validation.request.exceptions import MissingParameter, ParametersError, ParameterValidationError
from openapi_core.validation.request.validators import V31RequestValidator
from openapi_core.validation.schemas import oas31_schema_validators_factory
from openapi_core.validation.schemas.exceptions import InvalidSchemaValue
from openapi_core.validation.schemas.factories import DialectSchemaValidatorsFactory
from openapi_core.validation.schemas.validators import SchemaValidator

from .errors import MAX_FAULTS

__all__ = ["RequestUnmarshaller", "RequestValidator", "first_faults"]


def first_faults(errors: Any) -> list[Any]:
    """The first `MAX_FAULTS` of a (lazy) iterable of faults; the rest are never computed."""
    return list(islice(errors, MAX_FAULTS))


class _FirstFaults(SchemaValidator):
    def validate(self, value: Any) -> None:
        errors = tuple(islice(self.validator.iter_errors(value), MAX_FAULTS))
        if errors:
            raise InvalidSchemaValue(value, (self.schema / "type").read_str_or_list("any"), schema_errors=errors)


class _Factory(DialectSchemaValidatorsFactory):
    def create(self, *args: Any, **kwargs: Any) -> SchemaValidator:
        made = super().create(*args, **kwargs)
        return _FirstFaults(made.schema, made.validator)


# openapi-core's OpenAPI 3.1 factory, its settings kept (dialect, format checker), stopping early.
_factory = copy.copy(oas31_schema_validators_factory)
_factory.__class__ = _Factory


class RequestValidator(V31RequestValidator):
    schema_validators_factory = _factory


MEMO_SIZE = 50_000  # parameters' outcomes kept per process (each a few hundred bytes); full, it starts again
_ABSENT = object()  # the memo's outcome of a parameter that is not there (openapi-core's MissingParameter)


class RequestUnmarshaller(V31RequestUnmarshaller):
    """openapi-core's, its memos its own (one per spec read: `api.spec.openapi` keeps one)."""

    schema_validators_factory = _factory

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._memo: dict[tuple, Any] = {}
        self._declared: dict[tuple, list[tuple[str, str, SchemaPath, bool]]] = {}
        self._paths: dict[tuple, PathOperationServer] = {}

    def _find_path(self, request: Request) -> PathOperationServer:
        """openapi-core's, memoised by the method and the path's template (Flask's rule, which every routed request
        has): the spec's path and operation for it do not change."""
        key = (request.method, request.host_url, request.path_pattern)
        found = self._paths.get(key)
        if found is None:
            found = super()._find_path(request)
            if len(self._paths) >= MEMO_SIZE:
                self._paths.clear()
            self._paths[key] = found
        return found

    def _get_parameters(self, parameters: RequestParameters, operation: SchemaPath, path: SchemaPath) -> Parameters:
        """openapi-core's, memoised by each parameter and its raw values (module docstring). The operation's list
        of parameters is read from the spec once (`_declared`)."""
        place = (operation.parts, path.parts)
        declared = self._declared.get(place)
        if declared is None:
            declared = self._declared[place] = _declared(operation, path)
        errors, validated = [], Parameters()
        for name, location, param, simple in declared:
            values = parameters[location]
            raw = tuple(values.getlist(name)) if hasattr(values, "getlist") else (values.get(name, _ABSENT),)
            key = (param.parts, location, name, raw) if simple else None
            outcome = self._memo.get(key)
            if outcome is None:
                try:
                    outcome = self._get_parameter(parameters, param)
                except MissingParameter:
                    outcome = _ABSENT
                except ParameterValidationError as exc:
                    errors.append(exc)
                    continue
                if len(self._memo) >= MEMO_SIZE:
                    self._memo.clear()
                if simple:
                    self._memo[key] = outcome
            if outcome is not _ABSENT:
                getattr(validated, location)[name] = copy.deepcopy(outcome)
        if errors:
            raise ParametersError(errors=errors, parameters=validated)
        return validated


def _declared(operation: SchemaPath, path: SchemaPath) -> list[tuple[str, str, SchemaPath, bool]]:
    """``(name, place, parameter, simple)`` for the operation's parameters then its path's, each (name, place) once
    (the operation's wins), as openapi-core reads them; `simple` where the value is read from the parameter's own
    name alone (a schema, style form or simple), the only kind memoised."""
    out, seen = [], set()
    for param in chain(operation.get("parameters", []), path.get("parameters", [])):
        name, location = (param / "name").read_str(), (param / "in").read_str()
        if (name, location) not in seen:
            seen.add((name, location))
            simple = "content" not in param and (param / "style").read_str(default="form") in ("form", "simple")
            out.append((name, location, param, simple))
    return out
