"""Server replies parsed the forward-compatible way: unknown fields are ignored.

The document model (pagerouter/model.py) forbids unknown fields, so the server, its config and
its tests catch a misspelt or stale field at once. A client must not: the schema grows by adding
fields (the rule in pagerouter/model.py), and a client built before a field was added has to read
the newer server's reply all the same. pydantic's validation-time `extra="ignore"` applies to the
whole tree (document, page, block, ...), so the models stay one set of classes, strict by default.
What protobuf carries needs nothing of the kind: proto3 parsers skip fields they do not know.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


def parse_json(model: type[M], data: str | bytes) -> M:
    """`model` from a reply body, ignoring fields this client does not know (at any depth)."""
    return model.model_validate_json(data, extra="ignore")


def parse_obj(model: type[M], obj: Any) -> M:
    """`model` from an already decoded reply (a stream line's object), ignoring unknown fields."""
    return model.model_validate(obj, extra="ignore")
