"""The options of one request, read and validated before any work starts.

HTTP: query and form fields, a mistake is an `ApiError` 422. gRPC: the request message's option
fields, a mistake is an `InputProblem` (INVALID_ARGUMENT, error-code bad_request). Either way
unknown options, bad values and language packs not installed are refused by name.
"""

from __future__ import annotations

from pagerouter.flow.options import OptionError, RequestOptions, _Options, check_served_languages
from pagerouter.wire import proto_model
from pagerouter.wire.items import InputProblem

from .errors import ApiError


def request_options(fields: dict[str, str], model: type[_Options] = RequestOptions) -> _Options:
    """The validated options of one request's query and form fields: 422 `bad_request` naming
    an unknown field (with the accepted ones), a bad value, or a language pack not installed."""
    try:
        opts = model.from_fields(fields)
        check_served_languages(opts)
    except OptionError as exc:
        raise ApiError(422, exc.code, exc.message) from None
    return opts


def grpc_request_options(request, model: type[_Options]):
    """The validated options of a gRPC request, or the InputProblem (INVALID_ARGUMENT, error-code
    bad_request) that refuses it before any work starts."""
    name = request.filename or "-"
    try:
        opts = model.from_fields(proto_model.request_fields(request))
        check_served_languages(opts)
    except OptionError as exc:
        return InputProblem(exc.code, f"{name}: {exc.message}", name, None, exc.message)
    return opts


def grpc_wait(request) -> tuple[str | None, float | None]:
    """(wait, escalation_wait_s) of a ConvertRequest or PageRequest ("" and unset = defaults)."""
    return request.wait or None, request.escalation_wait_s if request.HasField("escalation_wait_s") else None
