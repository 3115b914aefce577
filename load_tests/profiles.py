"""Load profiles (how many concurrent users at second t) and the caps every generator obeys.

Pure: the Locust shape (locustfile.py), the gRPC generator (load_grpc.py) and the runner
(run_profile.py) all read the same `Profile`, passed as JSON in PAGEROUTER_LOAD_PROFILE.
"""

from __future__ import annotations

import ipaddress
import json
import os
from dataclasses import asdict, dataclass
from urllib.parse import urlparse

MAX_REQUESTS, MAX_DURATION_S, MAX_USERS = 5000, 600.0, 64
PROFILE_ENV = "PAGEROUTER_LOAD_PROFILE"
RECORDS_ENV = "PAGEROUTER_LOAD_RECORDS"
KINDS = ("steady", "ramp", "burst")


@dataclass(frozen=True)
class Profile:
    """`steady`: `users` for `duration_s`. `ramp`: from 1 to `users` evenly over `duration_s`.
    `burst`: `base_users` throughout, `users` from `burst_at_s` for `burst_for_s`, then back.
    Every generator also stops after `max_requests` requests."""

    kind: str = "steady"
    users: int = 4
    duration_s: float = 30.0
    base_users: int = 1
    burst_at_s: float = 10.0
    burst_for_s: float = 10.0
    max_requests: int = 500
    spawn_rate: float = 50.0
    seed: int = 12

    def bounded(self) -> Profile:
        """The same profile within the hard caps (a test tool, not a traffic cannon)."""
        if self.kind not in KINDS:
            raise SystemExit(f"load_tests: unknown profile {self.kind!r}: expected one of {', '.join(KINDS)}")
        return Profile(
            kind=self.kind, users=max(1, min(self.users, MAX_USERS)),
            duration_s=max(1.0, min(self.duration_s, MAX_DURATION_S)),
            base_users=max(0, min(self.base_users, MAX_USERS)), burst_at_s=max(0.0, self.burst_at_s),
            burst_for_s=max(0.0, self.burst_for_s), max_requests=max(1, min(self.max_requests, MAX_REQUESTS)),
            spawn_rate=max(0.1, self.spawn_rate), seed=self.seed,
        )

    def users_at(self, t: float) -> int | None:
        """Concurrent users wanted at second `t` of the run; None once it is over."""
        if t >= self.duration_s:
            return None
        if self.kind == "steady":
            return self.users
        if self.kind == "ramp":
            return max(1, min(self.users, 1 + int((self.users - 1) * t / self.duration_s + 0.5)))
        in_burst = self.burst_at_s <= t < self.burst_at_s + self.burst_for_s
        return self.users if in_burst else self.base_users

    def peak(self) -> int:
        return self.users if self.kind != "burst" else max(self.users, self.base_users)

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @staticmethod
    def from_env(default: Profile | None = None) -> Profile | None:
        raw = os.environ.get(PROFILE_ENV)
        if not raw:
            return default
        return Profile(**json.loads(raw)).bounded()


def add_profile_args(ap) -> None:
    """The options every generator and the runner share: the profile, its users and bounds, the mix."""
    ap.add_argument("--profile", choices=KINDS, default="steady")
    ap.add_argument("--users", type=int, default=4, help="concurrent users (burst: during the burst)")
    ap.add_argument("--base-users", type=int, default=1, help="burst: users before and after the burst")
    ap.add_argument("--burst-at", type=float, default=10.0, help="burst: seconds before it starts")
    ap.add_argument("--burst-for", type=float, default=10.0, help="burst: seconds it lasts")
    ap.add_argument("--duration", type=float, default=30.0, help="seconds of load")
    ap.add_argument("--requests", type=int, default=500, help="at most this many requests per client")
    ap.add_argument("--weights", help="input weights, e.g. scanned_page=4,bad_page=0 (load_tests/inputs.py)")
    ap.add_argument("--stream-share", type=float, default=0.5, help="gRPC: share of documents sent as StreamDocument")
    ap.add_argument("--source-addresses", metavar="ADDRS",
                    help="loopback source addresses, e.g. 127.0.0.2-127.0.0.9 or 127.0.0.2,127.0.0.3: user i "
                         "connects from address i mod n, so per-client limits apply per address (README)")


def is_loopback_host(host: str) -> bool:
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_target(target: str, allow_remote: bool = False, what: str = "load_tests") -> str:
    """`target` (a URL or host:port) unchanged if it is loopback (or remote targets are allowed);
    otherwise exit with one line saying why."""
    host = urlparse(target).hostname if "://" in target else target.rsplit(":", 1)[0]
    if not allow_remote and not is_loopback_host(host or ""):
        raise SystemExit(f"{what}: refusing {target}: only loopback targets (127.0.0.0/8, ::1, localhost) "
                         "unless --allow-remote")
    return target.rstrip("/")
