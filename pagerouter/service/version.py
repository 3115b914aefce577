"""The version the API reports (/livez, /healthz, the OpenAPI document): the installed package's."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def package_version() -> str:
    try:
        return version("pagerouter")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


PAGEROUTER_VERSION = package_version()
