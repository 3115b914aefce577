"""Give freed heap back to the OS after heavy work (called after each OCR page or batch).

MuPDF keeps decoded images in its resource store (up to 256 MB by default): a scanned
document's pages are never needed again once read, so the store is emptied too (measured on a
40-page scan: RSS 580 MB -> 390-440 MB, flat).

OCR of one page allocates and frees hundreds of MB of image buffers and tensors in several
threads; glibc keeps the freed pages in per-thread arenas, so a long scanned document's RSS
creeps up (measured: 880 MB -> 1.1 GB over 40 pages) although nothing is live. `malloc_trim`
returns them (the same run stayed at 500-620 MB). A no-op where glibc is not the allocator.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools


@functools.lru_cache(maxsize=1)
def _trim():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        fn = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


def release_free_memory() -> None:
    try:
        import pymupdf

        from .pagetext import MUPDF_LOCK

        with MUPDF_LOCK:
            pymupdf.TOOLS.store_shrink(100)
    except Exception:  # noqa: BLE001 - an optimisation, never a failure
        pass
    fn = _trim()
    if fn is not None:
        fn(0)


# A request whose upload is at least this large leaves that many bytes (several copies: the
# HTTP body, the bytes, Ray's argument buffers) in freed heap that glibc keeps: trim after it.
LARGE_INPUT_BYTES = 16 * 1024 * 1024


def release_after(nbytes: int, delay_s: float = 1.0) -> None:
    """After a request over a large input: give its freed buffers back to the OS shortly (once
    the request's last references, held by the caller's frames and Ray, are gone). From a
    running event loop it is scheduled, never blocking it; elsewhere it runs now."""
    if nbytes < LARGE_INPUT_BYTES:
        return
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        release_free_memory()
        return
    # malloc_trim walks the heap (tens of ms on a big one) and takes MUPDF_LOCK: never on the loop
    loop.call_later(delay_s, lambda: loop.run_in_executor(None, release_free_memory))
