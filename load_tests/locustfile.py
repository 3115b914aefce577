"""Locust load test of the pagerouter HTTP API: per-page (POST /v1/pages) and whole-document
(POST /v1/convert) requests from a weighted mix of born-digital, scanned and bad inputs.

    locust -f load_tests/locustfile.py --headless --host http://127.0.0.1:8000 -u 4 -r 4 -t 30s
    python load_tests/run_profile.py --client http ...     # the runner sets everything below

Bad inputs that get their expected 4xx (e.g. 422 bad_input) are successes in Locust's stats and
`expected` in the records; anything else unexpected is a failure named by its kind. A 200 must
carry the routes its input must take (a scanned page: `ocr`), or it is a `wrong_answer`.
Bounds: loopback hosts only (env PAGEROUTER_LOAD_ALLOW_REMOTE=1 lifts it), and with
PAGEROUTER_LOAD_PROFILE set (the runner does) its shape, duration and request cap
(load_tests/profiles.py); PAGEROUTER_LOAD_RECORDS names the JSONL file of per-request records.
The API key (PAGEROUTER_API_KEY, or the first line of PAGEROUTER_API_KEY_FILE) goes in every
request as `Authorization: Bearer KEY`; a 401 is an `unauthorized` error. With
PAGEROUTER_LOAD_SOURCE_ADDRESSES (e.g. 127.0.0.2-127.0.0.9; the runner's --source-addresses)
user i connects from address i mod n, so the server's per-client limit applies per address.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from itertools import count
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo: pagerouter, load_tests

import gevent  # noqa: E402 - comes with locust
import gevent.local  # noqa: E402
from locust import LoadTestShape, constant, events, task  # noqa: E402
from locust.contrib.fasthttp import FastHttpUser  # noqa: E402

from load_tests.access import auth_headers, source_for, sources_from_env  # noqa: E402
from load_tests.inputs import Picker, default_mix, parse_weights  # noqa: E402
from load_tests.profiles import MAX_REQUESTS, RECORDS_ENV, Profile, is_loopback_host  # noqa: E402
from load_tests.records import RecordWriter, judge  # noqa: E402

PROFILE = Profile.from_env()
MIX = default_mix(parse_weights(os.environ.get("PAGEROUTER_LOAD_WEIGHTS")))
RECORDS = RecordWriter(os.environ.get(RECORDS_ENV))
CAP = PROFILE.max_requests if PROFILE else MAX_REQUESTS
_sent = count(1)
PICKER = Picker(MIX, seed=PROFILE.seed if PROFILE else 12)  # shared: every round of the mix is sent whole
SENT = {"n": 0, "in_flight": 0, "start": None, "capped_at_s": None}
MAX_BACKOFF_S = 5.0
HEADERS = {"content-type": "application/octet-stream", **auth_headers()}
SOURCES = sources_from_env(os.environ.get("PAGEROUTER_LOAD_ALLOW_REMOTE") == "1")
_users = count(0)
_SOURCE = gevent.local.local()  # per user greenlet: the address its connections are bound to


def _bind_sources() -> None:
    """Binds each new connection of a user to that user's source address (geventhttpclient, which
    FastHttpUser uses, has no option for it): a connection is made in its user's greenlet."""
    from geventhttpclient.connectionpool import ConnectionPool

    plain = ConnectionPool._create_tcp_socket

    def bound(self, family, socktype, protocol):
        sock = plain(self, family, socktype, protocol)
        source = getattr(_SOURCE, "address", None)
        if source and family == (socket.AF_INET6 if ":" in source else socket.AF_INET):
            sock.bind((source, 0))
        return sock

    ConnectionPool._create_tcp_socket = bound


if SOURCES:
    _bind_sources()


@events.init.add_listener
def _loopback_only(environment, **_kw) -> None:
    from urllib.parse import urlparse

    host = urlparse(environment.host or "").hostname or ""
    if os.environ.get("PAGEROUTER_LOAD_ALLOW_REMOTE") != "1" and not is_loopback_host(host):
        print(f"locustfile: refusing host {environment.host!r}: loopback only "
              "(set PAGEROUTER_LOAD_ALLOW_REMOTE=1 for another host)", file=sys.stderr, flush=True)
        os._exit(2)


@events.test_start.add_listener
def _watch_cap(environment, **_kw) -> None:
    """Ends the run once the request cap is reached and the last answers are in.

    With the runner's profile (a shape) the shape ends it: its `tick` returns None, and Locust
    stops the users once, from the shape's greenlet. Quitting from here instead raced Locust's
    own quit: `runner.quit()` kills the shape greenlet, Locust's main greenlet (joined on it)
    wakes and quits too while the first stop is still waiting for users in mid-request (the
    runner's state is "cleanup", not "stopped", so the second stop is not skipped), every such
    user got `stop()` twice and the second raised "Tried to stop User in an unexpected state:
    stopping. This should never happen." once per user. Without a shape (plain `locust -f`),
    nothing else joins the run, so this greenlet quits it (from a greenlet of its own:
    quitting from a user's task would stop that user twice)."""
    SENT["start"] = time.monotonic()
    if environment.shape_class is not None:
        return

    def watch() -> None:
        while not cap_done():
            gevent.sleep(0.2)
        environment.runner.quit()

    gevent.spawn(watch)


def cap_done() -> bool:
    """The cap is reached and every request sent is answered."""
    return SENT["n"] >= CAP and SENT["in_flight"] <= 0


@events.quitting.add_listener
def _close(**_kw) -> None:
    RECORDS.close()
    capped = f" capped_at_s {SENT['capped_at_s']:.3f}" if SENT.get("capped_at_s") is not None else ""
    print(f"locustfile: sent {SENT['n']} recorded {RECORDS.count}{capped}", file=sys.stderr, flush=True)


def _routes(body: dict, endpoint: str) -> list[str]:
    pages = [body] if endpoint == "pages" else body.get("pages", [])
    return [p.get("route") or "none" for p in pages]


class PagerouterUser(FastHttpUser):
    wait_time = constant(0)  # closed loop: each user sends its next request when the last is answered
    network_timeout = 300.0
    connection_timeout = 10.0

    def on_start(self) -> None:
        self.source = source_for(next(_users), SOURCES)
        _SOURCE.address = self.source

    @task
    def convert(self) -> None:
        n = next(_sent)
        if n > CAP:  # the cap is reached: idle until the watcher ends the run
            gevent.sleep(0.2)
            return
        SENT["n"] = n
        if n == CAP:  # the last request the cap allows: the run ends when it is answered
            SENT["capped_at_s"] = time.monotonic() - (SENT["start"] or time.monotonic())
        SENT["in_flight"] += 1
        try:
            self._send(self._users())
        finally:
            SENT["in_flight"] -= 1

    def _users(self) -> int:
        """The users the profile asks for now (the step this request belongs to); without a
        profile, the users running."""
        shape = self.environment.shape_class
        if PROFILE is not None and shape is not None:
            return PROFILE.users_at(shape.get_run_time()) or PROFILE.peak()
        return self.environment.runner.user_count if self.environment.runner else 0

    def _send(self, users: int) -> None:
        item = PICKER.next()
        path = "/v1/pages" if item.endpoint == "pages" else "/v1/convert"
        params = f"?filename={item.filename}" + (f"&page={item.page}" if item.endpoint == "pages" else "")
        t0 = time.perf_counter()
        with self.client.post(path + params, data=item.data, name=f"{item.endpoint}:{item.name}",
                              headers=HEADERS,
                              catch_response=True) as r:
            latency = (time.perf_counter() - t0) * 1000
            status = int(r.status_code or 0)
            code, routes = "", []
            try:
                body = r.json() if r.content else {}
            except Exception:  # noqa: BLE001 - a non-JSON body is judged by its status alone
                body = {}
            if status == 200:
                routes = _routes(body, item.endpoint)
            elif isinstance(body, dict):
                code = str((body.get("error") or {}).get("code") or "")
            if status == 0:  # no answer at all: the exception names it
                outcome, kind = "error", type(r.error).__name__ if r.error else "no_answer"
            else:
                outcome, kind = judge(item.expect_status, item.expect_code, status, code, routes, item.routes)
            if outcome == "error":
                r.failure(kind)
            else:
                r.success()
            RECORDS.write(client="http", input=item.name, op=item.endpoint, latency_ms=round(latency, 2),
                          outcome=outcome, kind=kind, pages=len(routes), routes=routes,
                          source=self.source or "", users=users)
            retry = r.headers.get("retry-after") if status in (429, 503) else None
        if retry:  # refused (per-client limit, full queue): back off as told, as a polite client does
            gevent.sleep(min(float(retry) if retry.isdecimal() else 1.0, MAX_BACKOFF_S))


if PROFILE is not None:
    class ProfileShape(LoadTestShape):
        """The runner's profile (steady, ramp, burst) as a Locust shape."""

        def tick(self):
            if cap_done():  # the request cap ended the run early (the report says so)
                return None
            users = PROFILE.users_at(self.get_run_time())
            return None if users is None else (users, PROFILE.spawn_rate)
