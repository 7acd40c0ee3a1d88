"""openapi-core's request validation, stopped at the first `MAX_FAULTS` faults, its parameters memoised.

openapi-core collects every error jsonschema finds (`tuple(iter_errors(...))`): a 16 KiB body of
8,000 wrong items made 16,000 errors, a second and a half of work and a 2 MB answer. jsonschema finds
them lazily, so taking the first `MAX_FAULTS` stops the walk there: an invalid request then costs no
more than a valid one. The problem lists the first `MAX_ERRORS` of them and counts the rest
(api.errors.problem). `install(config)` wires these classes into an openapi-core `Config`.

A parameter's unmarshalling is memoised by the parameter and its raw values (`RequestUnmarshaller`): openapi-core
resolves the spec's references and builds a schema validator for every parameter of every request, about 3 ms a
parameter, so more than the answer itself for a position's dozen parameters (bench/README.md), while a parameter's
raw values repeat (modes, die lists, small numbers). The outcome is a function of the two (the spec is read once per
process), so the memo changes no answer; a value that fails is not kept: it fails the same way again.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from itertools import islice
from typing import Any

from jsonschema_path import SchemaPath
from openapi_core.unmarshalling.request.unmarshallers import V31RequestUnmarshaller
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
_ABSENT = object()  # the memo's outcome of a parameter that is not there and has no default (openapi-core's KeyError)


class RequestUnmarshaller(V31RequestUnmarshaller):
    schema_validators_factory = _factory
    _memo: dict[tuple, Any] = {}
    _names: dict[tuple, str | None] = {}  # a parameter's place in the spec -> its name, None if not memoised

    def _get_param_or_header_and_schema(self, param_or_header: SchemaPath, location: Mapping[str, Any],
                                        name: str | None = None) -> tuple[Any, SchemaPath | None]:
        """openapi-core's, memoised by the parameter and its raw values (module docstring) for a parameter of the
        simple kind (a schema, style form or simple: its value is read from its own name alone)."""
        place = (id(self.spec), param_or_header.parts, name)
        own = self._names.get(place, _ABSENT)
        if own is _ABSENT:
            style = (param_or_header / "style").read_str(default="form")
            simple = "content" not in param_or_header and style in ("form", "simple")
            own = self._names[place] = (name or (param_or_header / "name").read_str()) if simple else None
        if own is None:
            return super()._get_param_or_header_and_schema(param_or_header, location, name)
        raw = tuple(location.getlist(own)) if hasattr(location, "getlist") else (location.get(own, _ABSENT),)
        key = (place, raw)
        outcome = self._memo.get(key)
        if outcome is None:
            try:
                outcome = super()._get_param_or_header_and_schema(param_or_header, location, name)
            except KeyError:
                outcome = _ABSENT
            if len(self._memo) >= MEMO_SIZE:
                self._memo.clear()
            self._memo[key] = outcome
        if outcome is _ABSENT:
            raise KeyError(own)
        value, schema = outcome
        return copy.deepcopy(value), schema
