"""How every load generator reaches the server: the API key, and which loopback source address
each user's connection comes from.

- The API key: `PAGEROUTER_API_KEY`, or the first line of the file named by
  `PAGEROUTER_API_KEY_FILE` (pagerouter/service/api_key.py, the server's own rules; no Ray import), sent as
  `Authorization: Bearer KEY` (gRPC metadata `authorization`). Without either variable nothing
  is sent; against a keyed server every request is then a 401 / UNAUTHENTICATED, counted as an
  `unauthorized` error (records.is_unauthorized) and shouted at the top of the report.
- Source addresses (`--source-addresses 127.0.0.2,127.0.0.3` or `127.0.0.2-127.0.0.9`): user i
  binds its connection to address i mod n, so the server's per-client limit
  (`limits.max_requests_per_client`, keyed by the caller's address) applies per address and 16
  users spread over 8 addresses are not mostly 429s. Linux answers on all of 127.0.0.0/8
  without any setup. gRPC (grpcio) cannot bind a channel's source address, so the gRPC
  generator connects through `SourceRelay`: a local TCP relay per address that opens its
  upstream connection from that address (a little CPU of the generator's own per byte).
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket

SOURCES_ENV = "PAGEROUTER_LOAD_SOURCE_ADDRESSES"
UNAUTHORIZED_KINDS = ("401", "UNAUTHENTICATED")


def api_key():
    """The key from the environment (a `pagerouter.service.api_key.ApiKey`, hiding its secret), or None."""
    from pagerouter.service.api_key import ApiKeyError, load_api_key

    try:
        return load_api_key()
    except ApiKeyError as exc:
        raise SystemExit(f"load_tests: {exc}") from None


def auth_headers() -> dict[str, str]:
    """{"authorization": "Bearer KEY"} when a key is set, else {}."""
    key = api_key()
    return {"authorization": key.header_value()} if key is not None else {}


def parse_source_addresses(text: str | None, allow_remote: bool = False) -> list[str]:
    """`127.0.0.2,127.0.0.3` or `127.0.0.2-127.0.0.9` (or both, comma-separated) -> the list;
    loopback addresses only unless `allow_remote`. Empty or None -> [] (the OS picks)."""
    out: list[str] = []
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        lo, sep, hi = part.partition("-")
        try:
            first = ipaddress.ip_address(lo.strip())
            last = ipaddress.ip_address(hi.strip()) if sep else first
        except ValueError:
            raise SystemExit(f"load_tests: bad source address {part!r}: expected an IP or FIRST-LAST") from None
        if int(last) < int(first) or int(last) - int(first) > 255:
            raise SystemExit(f"load_tests: bad source address range {part!r}")
        for n in range(int(first), int(last) + 1):
            addr = ipaddress.ip_address(n) if first.version == 4 else ipaddress.IPv6Address(n)
            if not (addr.is_loopback or allow_remote):
                raise SystemExit(f"load_tests: refusing source address {addr}: loopback only (127.0.0.0/8, ::1)")
            out.append(str(addr))
    return out


def source_for(user: int, sources: list[str]) -> str | None:
    """The source address of user `user` (0-based): round robin; None when none are given."""
    return sources[user % len(sources)] if sources else None


def bound_socket(source: str | None, family: int = socket.AF_INET) -> socket.socket:
    """A TCP socket bound to `source` (any port) when given."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    if source:
        sock.bind((source, 0))
    return sock


class SourceRelay:
    """A TCP relay on 127.0.0.1 (an ephemeral port) whose every connection goes on to `target`
    from `source`: a gRPC channel pointed at `relay.target` reaches the server from `source`.
    Runs in the caller's asyncio loop; `close()` ends it and every connection it relays."""

    def __init__(self, target: str, source: str):
        host, _, port = target.rpartition(":")
        self.host, self.port, self.source = host.strip("[]"), int(port), source
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task] = set()
        self.target = ""

    async def start(self) -> SourceRelay:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        self.target = "127.0.0.1:%d" % self._server.sockets[0].getsockname()[1]
        return self

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        family = socket.AF_INET6 if ":" in self.source else socket.AF_INET
        sock = bound_socket(self.source, family)
        sock.setblocking(False)
        try:
            await asyncio.get_running_loop().sock_connect(sock, (self.host, self.port))
            up_r, up_w = await asyncio.open_connection(sock=sock)
        except OSError:
            sock.close()
            writer.close()
            return

        async def pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            try:
                while data := await r.read(1 << 16):
                    w.write(data)
                    await w.drain()
            except (OSError, asyncio.CancelledError):
                pass
            finally:
                w.close()

        tasks = [asyncio.ensure_future(pipe(reader, up_w)), asyncio.ensure_future(pipe(up_r, writer))]
        self._tasks.update(tasks)
        try:
            await asyncio.gather(*tasks)
        finally:
            self._tasks.difference_update(tasks)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for t in list(self._tasks):
                t.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self._server.wait_closed()
            self._server = None


def sources_from_env(allow_remote: bool = False) -> list[str]:
    return parse_source_addresses(os.environ.get(SOURCES_ENV), allow_remote)
