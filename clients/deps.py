"""The clients' optional dependencies, checked once at start with an error that names the extra.

`pagerouter client` and `pagerouter batch --endpoint/--grpc` import a client only when they run.
Without this check a missing package surfaced per file, as "cannot reach the server:
ModuleNotFoundError" or a failed journal record; here it is one line before any work, naming the
package and the pip command that installs it.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Literal

from .errors import PagerouterClientError

INSTALL_HINT = 'pip install "pagerouter[client]"'
_MODULES = {"http": "pagerouter.clients.http_client", "grpc": "pagerouter.clients.grpc_client"}
_OURS = ("pagerouter",)  # a missing module of ours is a bug, not an extra


class MissingDependency(PagerouterClientError):
    """A client's package is not installed (status `local`, code `missing_dependency`)."""

    def __init__(self, transport: str, package: str):
        super().__init__("local", "missing_dependency",
                         f"the {transport.upper()} client needs the {package!r} package, which is not installed: "
                         f"{INSTALL_HINT}")
        self.transport, self.package = transport, package


def load_client(transport: Literal["http", "grpc"]) -> ModuleType:
    """pagerouter.clients.http_client or pagerouter.clients.grpc_client, or MissingDependency naming the package and the extra."""
    try:
        return importlib.import_module(_MODULES[transport])
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        if not top or top in _OURS:
            raise
        raise MissingDependency(transport, top) from None
