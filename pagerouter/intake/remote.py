"""URL-like sources of the Python API: `pagerouter.convert("s3://bucket/report.pdf")`.

A source string with a scheme (`s3://`, `gs://`, `https://`, `file://`, `memory://`, ...) is
read whole through fsspec, the filesystem layer the data ecosystem (pandas, Dask, Ray Data)
already speaks, so credentials come the way those tools find them (environment, config files). A
scheme whose fsspec backend is not installed (s3fs, gcsfs, ...) is an `InputError` that names
the package, from fsspec's own message. Local paths keep the plain read of `inputs.read_input`:
a Windows drive (`C:\\x.pdf`) or a file literally named with a colon is not a URL.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from .inputs import InputError

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+://")


def is_url(source: object) -> bool:
    """True for a string that starts with a scheme and `://` (two letters at least: `C:` is a drive)."""
    return isinstance(source, str) and bool(_URL.match(source))


def read_url(url: str, name: str | None = None) -> bytes:
    """The bytes behind `url`, or an InputError naming it as `name` (default the URL): no such
    file, a directory, a scheme fsspec cannot open (with the package to install), or a read error."""
    shown = name or url
    if url[:7].lower() == "file://":  # a file URI is percent-encoded (RFC 8089, `Path.as_uri()`); fsspec reads it raw
        url = "file://" + unquote(url[7:])
    try:
        import fsspec
    except ImportError:
        raise InputError(shown, "URL sources need fsspec (pip install fsspec)") from None
    try:
        with fsspec.open(url, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise InputError(shown, "no such file") from None
    except IsADirectoryError:
        raise InputError(shown, "is a directory, not a file") from None
    except ImportError as exc:  # fsspec: "Install s3fs to access S3"
        raise InputError(shown, f"cannot open this URL: {exc}") from None
    except ValueError as exc:  # fsspec: "Protocol not known: nosuch"
        raise InputError(shown, f"cannot open this URL: {exc}") from None
    except OSError as exc:
        raise InputError(shown, f"cannot read: {exc.strerror or exc}") from None
    except Exception as exc:  # noqa: BLE001 - a backend's own error (HTTP status, auth): one line, not a traceback
        raise InputError(shown, f"cannot read: {type(exc).__name__}: {exc}") from None
    if not isinstance(data, (bytes, bytearray)):
        raise InputError(shown, "the URL did not give bytes")
    return bytes(data)


__all__ = ["is_url", "read_url"]
