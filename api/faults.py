"""openapi-core's request validation, stopped at the first `MAX_FAULTS` faults.

openapi-core collects every error jsonschema finds (`tuple(iter_errors(...))`): a 16 KiB body of
8,000 wrong items made 16,000 errors, a second and a half of work and a 2 MB answer. jsonschema finds
them lazily, so taking the first `MAX_FAULTS` stops the walk there: an invalid request then costs no
more than a valid one. The problem lists the first `MAX_ERRORS` of them and counts the rest
(api.errors.problem). `install(config)` wires these classes into an openapi-core `Config`.
"""

from __future__ import annotations

import copy
from itertools import islice
from typing import Any

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


class RequestUnmarshaller(V31RequestUnmarshaller):
    schema_validators_factory = _factory
