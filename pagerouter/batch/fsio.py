"""Inputs and outputs of `pagerouter batch`, local or through pyarrow filesystems, in every mode.

An INPUT is a local path, folder, glob or `@LIST` (planned by `inputs.plan`), or a filesystem
URI that pyarrow resolves (`s3://bucket/prefix/`, `gs://...`, `file:///abs/dir/`, globs allowed
after the prefix). A local file is read as `pagerouter convert` reads it, a URI's file through
its filesystem, by path (with `--ray` in the Ray tasks: the driver never reads an input's
bytes). pyarrow is needed only when a URI is given.

OUTDIR is a local path or a URI. A local one (a plain path or `file://`) gets the journal, the
staged pages and the summary too, and outputs are written atomically (temp file, fsync,
rename). A remote one (an object store) gets outputs and the manifest by one PUT each (an
object appears whole or not at all); the journal, which must be appended to and fsynced,
then lives in a local `--journal-dir`.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from pagerouter.intake.inputs import InputError
from pagerouter.intake.inputs import read_input as read_local_input

from .inputs import SUFFIXES, BatchItem, BatchUsageError, plan

_GLOB_CHARS = set("*?[")


def is_uri(arg: str) -> bool:
    return "://" in arg


def split_uri(uri: str) -> tuple[str, str]:
    """(scheme, filesystem path) of a URI, by pyarrow's own parsing (s3://b/k -> ("s3", "b/k"))."""
    try:
        import pyarrow.fs as pafs
    except ImportError:
        raise BatchUsageError(f"{uri}: filesystem URIs need pyarrow (pip install 'pagerouter[serve]')") from None

    scheme = uri.split("://", 1)[0]
    try:
        _, path = pafs.FileSystem.from_uri(_quoted(uri))
    except Exception as exc:  # noqa: BLE001 - pyarrow raises ArrowInvalid, OSError, ...; one line for the user
        raise BatchUsageError(f"{uri}: not a filesystem URI pyarrow can open: {exc}") from None
    return scheme, path


def _quoted(uri: str) -> str:
    scheme, rest = uri.split("://", 1)
    return f"{scheme}://{quote(rest, safe='/:@?=&%')}"


_FILESYSTEMS: dict[tuple[str, str], object] = {}


def filesystem(scheme: str, path: str):
    """The pyarrow filesystem of a scheme (one per bucket, cached per process)."""
    import pyarrow.fs as pafs

    if not scheme:
        return pafs.LocalFileSystem()
    bucket = "" if scheme == "file" else path.split("/", 1)[0]
    key = (scheme, bucket)
    if key not in _FILESYSTEMS:
        _FILESYSTEMS[key] = pafs.FileSystem.from_uri(_quoted(f"{scheme}://{path}"))[0]
    return _FILESYSTEMS[key]


def read_bytes(scheme: str, path: str) -> bytes:
    """A file's bytes; FileNotFoundError / OSError as for a local read."""
    fs = filesystem(scheme, path)
    with fs.open_input_file(path) as f:
        return f.readall()


def read_input(scheme: str, path: str, shown: str) -> bytes:
    """An input's bytes, or the `InputError` `pagerouter convert` gives for a file it cannot read
    ("no such file", "is a directory, not a file", "cannot read: ..."), naming it as `shown`:
    the one wording of a read error, whichever mode and filesystem."""
    if not scheme:
        return read_local_input(path, shown)
    try:
        return read_bytes(scheme, path)
    except FileNotFoundError:
        raise InputError(shown, "no such file") from None
    except IsADirectoryError:
        raise InputError(shown, "is a directory, not a file") from None
    except OSError as exc:
        raise InputError(shown, f"cannot read: {exc.strerror or exc}") from None


def glob_regex(pattern: str) -> re.Pattern:
    """A URI glob as a local INPUT's glob reads (`glob.glob(recursive=True)`): `**/` is any
    number of folders, none included (`pdfs/**/*.pdf` holds `pdfs/a.pdf`), `*` and `?` stay
    within one folder, `[...]` is a class. fsspec's backport of Python 3.13's `glob.translate`
    (fnmatch lets `*` cross folders and makes `**/` need one)."""
    from fsspec.utils import glob_translate

    return re.compile(glob_translate(pattern))


def _list_uri(arg: str) -> tuple[str, list[str], list[str]]:
    """(scheme, file paths, folder anchors) of one URI argument; a missing file stays listed."""
    import pyarrow.fs as pafs

    scheme, path = split_uri(arg)
    fs = filesystem(scheme, path)
    info = fs.get_file_info(path)
    if info.type == pafs.FileType.Directory:
        found = fs.get_file_info(pafs.FileSelector(path, recursive=True))
        files = sorted(i.path for i in found if i.type == pafs.FileType.File and PurePosixPath(i.path).suffix.lower() in SUFFIXES)
        return scheme, files, [path.rstrip("/")]
    if info.type == pafs.FileType.NotFound and _GLOB_CHARS & set(path):
        base = path[: min(path.index(c) for c in _GLOB_CHARS if c in path)].rsplit("/", 1)[0]
        found = fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
        match = glob_regex(path).fullmatch
        hits = sorted(i.path for i in found if i.type == pafs.FileType.File and match(i.path))
        if hits:
            return scheme, hits, []
    return scheme, [path], []


def plan_items(args: list[str]) -> list[BatchItem]:
    """Every input of `args`: local ones as `inputs.plan` plans them, URIs listed through their
    filesystem, mirrored under their common folder; one kind per run (a mix has no common folder)."""
    uris = [a for a in args if is_uri(a)]
    if not uris:
        return plan(args)
    if len(uris) != len(args):
        raise BatchUsageError("give either local paths or filesystem URIs as inputs, not both")
    found: dict[tuple[str, str], str] = {}
    anchors: list[str] = []
    for arg in uris:
        scheme, files, folders = _list_uri(arg)
        anchors += folders
        for f in files:
            found.setdefault((scheme, f), f"{scheme}://{f}")
    if len({s for s, _ in found}) > 1:
        raise BatchUsageError("all input URIs must use one filesystem scheme")
    if not found:
        return []
    base = posixpath.commonpath([posixpath.dirname(p) or "/" for _, p in found] + anchors) if len(found) > 1 or anchors \
        else posixpath.dirname(next(iter(found))[1])
    items, seen = [], {}
    for (scheme, path), shown in found.items():
        rel = PurePosixPath(posixpath.relpath(path, base)).with_suffix("")
        if rel in seen:
            raise BatchUsageError(f"{seen[rel]} and {shown} would both write {rel}.md/.json; convert them separately")
        seen[rel] = shown
        items.append(BatchItem(shown, scheme, path, rel, shown))
    return sorted(items, key=lambda i: str(i.rel))


class Output:
    """OUTDIR: `local` is its Path when it is on this machine (a plain path or file://), else None."""

    def __init__(self, arg: str):
        self.arg = arg
        if is_uri(arg):
            self.scheme, self.path = split_uri(arg)
            self.local = Path(self.path) if self.scheme == "file" else None
        else:
            self.scheme, self.path, self.local = "", str(Path(arg).resolve()), Path(arg).resolve()
        self.fs = filesystem(self.scheme, self.path) if self.local is None else None

    def default_journal_dir(self) -> Path:
        """Where a remote OUTDIR's journal lives unless --journal-dir says otherwise."""
        key = hashlib.sha256(self.arg.encode()).hexdigest()[:16]
        return Path.home() / ".cache" / "pagerouter" / "batch" / key

    def target(self, rel: str) -> str:
        return posixpath.join(self.path, rel)

    def exists(self, rel: str) -> bool:
        if self.local is not None:
            return (self.local / rel).exists()
        import pyarrow.fs as pafs

        return self.fs.get_file_info(self.target(rel)).type == pafs.FileType.File

    @staticmethod
    def outputs(item: BatchItem) -> list[str]:
        """A document's outputs, relative to OUTDIR: `<rel>.md` and `<rel>.json`."""
        return [f"{item.rel}.md", f"{item.rel}.json"]

    def write_document(self, item: BatchItem, md: str, js: str, tag: str) -> list[str]:
        """The one writer of a converted document's outputs, in every mode (before its journal
        record, the commit point); returns their paths relative to OUTDIR, for that record."""
        outs = self.outputs(item)
        self.write(list(zip(outs, (md, js))), tag)
        return outs

    def write(self, files: list[tuple[str, str | bytes]], tag: str) -> None:
        """Write each (relative path, content); locally all-or-nothing per call (journal.write_atomically)."""
        if self.local is not None:
            from .journal import write_atomically

            write_atomically([(self.local / rel, content) for rel, content in files], tag)
            return
        for rel, content in files:  # an object store's PUT is atomic per object
            data = content.encode("utf-8") if isinstance(content, str) else content
            self.fs.create_dir(posixpath.dirname(self.target(rel)), recursive=True)
            with self.fs.open_output_stream(self.target(rel)) as f:
                f.write(data)
