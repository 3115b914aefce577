"""Error codes and their statuses: an input problem or a refusal as an HTTP error (`ApiError`)
or as a gRPC call's status (code, details, and trailing metadata `error-code`, `retry-after`)."""

from __future__ import annotations

import grpc

from pagerouter.wire.items import InputProblem

from .admission import Refused
from .errors import ApiError

PROBLEM_STATUS = {"bad_input": 422, "bad_pages": 422, "bad_request": 422, "too_many_pages": 413, "timeout": 504}
PROBLEM_GRPC = {"too_many_pages": grpc.StatusCode.RESOURCE_EXHAUSTED, "timeout": grpc.StatusCode.DEADLINE_EXCEEDED}
"""gRPC codes other than INVALID_ARGUMENT, by error code."""


def problem_error(problem: InputProblem) -> ApiError:
    """An input problem as an HTTP error (422, 413 for too many pages, 504 for a timeout)."""
    return ApiError(PROBLEM_STATUS.get(problem.code, 400), problem.code, problem.message)


def refused_error(refused: Refused) -> ApiError:
    """A refused admission as an HTTP error (503 or 429) with Retry-After."""
    return ApiError(refused.status, refused.code, refused.message, {"Retry-After": str(refused.retry_after_s)})


def set_grpc_status(grpc_context, code: grpc.StatusCode, details: str, error_code: str,
                    retry_after: str | None = None) -> None:
    """The call's status, its details, and the error code (and Retry-After) as trailing metadata."""
    if grpc_context is None:
        return
    grpc_context.set_code(code)
    grpc_context.set_details(details)
    trailers = [("error-code", error_code)] + ([("retry-after", retry_after)] if retry_after else [])
    grpc_context.set_trailing_metadata(trailers)


def grpc_problem(grpc_context, problem: InputProblem) -> None:
    """Bad input over gRPC: INVALID_ARGUMENT (or the limit's code), the message as details, the code in metadata."""
    code = PROBLEM_GRPC.get(problem.code, grpc.StatusCode.INVALID_ARGUMENT)
    set_grpc_status(grpc_context, code, problem.message, problem.code)


def grpc_refused(grpc_context, refused: Refused) -> None:
    """A refused admission over gRPC: UNAVAILABLE or RESOURCE_EXHAUSTED, with retry-after."""
    set_grpc_status(grpc_context, refused.grpc_code, refused.message, refused.code, str(refused.retry_after_s))
