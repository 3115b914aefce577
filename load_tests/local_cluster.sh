#!/usr/bin/env bash
# Autoscaling under a burst on a local two-node Ray cluster, end to end:
#   a head node with HEAD_CPUS logical CPUs + a worker node with WORKER_CPUS (ray.cluster_utils,
#   both processes of the runner, in a temp dir of their own under /tmp), `pagerouter serve
#   --address <head> --replicas auto` with short autoscaling delays, a burst profile through
#   Locust, and the report (replicas per deployment over time, p99, 503s, replica memory).
# Tears down only what it started: the runner shuts its own cluster down and removes its temp
# dir; it never runs `ray stop`. Extra args go to load_tests/run_profile.py.
#
#   bash load_tests/local_cluster.sh                 # report in $OUT (default /tmp/pagerouter-load-cluster)
#   USERS=16 BURST_FOR=90 bash load_tests/local_cluster.sh --client both
#   MODE=ray-start bash load_tests/local_cluster.sh  # the same with `ray start --head` + `ray start --address`
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/pagerouter-load-cluster}
HEAD_CPUS=${HEAD_CPUS:-2}
WORKER_CPUS=${WORKER_CPUS:-4}
USERS=${USERS:-12}
BURST_AT=${BURST_AT:-20}
BURST_FOR=${BURST_FOR:-60}
DURATION=${DURATION:-140}
mkdir -p "$OUT"
# Short delays so a two-minute run shows replicas come and go; a SmallReader target of 1 page in
# flight per replica so a burst of scanned pages asks for more of them at once.
cat > "$OUT/cluster-config.yaml" <<YAML
limits: {max_requests_per_client: $((USERS * 4))}
serve:
  triage: {target_ongoing_requests: 2, upscale_delay_s: 2, downscale_delay_s: 20, look_back_period_s: 4, metrics_interval_s: 1}
  layout: {target_ongoing_requests: 1, upscale_delay_s: 2, downscale_delay_s: 20, look_back_period_s: 4, metrics_interval_s: 1}
  small_reader: {target_ongoing_requests: 1, upscale_delay_s: 2, downscale_delay_s: 20, look_back_period_s: 4, metrics_interval_s: 1}
YAML
PROFILE_ARGS=(--replicas auto --config "$OUT/cluster-config.yaml" --profile burst --users "$USERS" --base-users 1
  --burst-at "$BURST_AT" --burst-for "$BURST_FOR" --duration "$DURATION" --requests 5000
  --weights scanned_page=6,digital_page=2,digital_doc=1,bad_not_pdf=1,bad_page=1 --sample-interval 2)

if [ "${MODE:-utils}" = "utils" ]; then
  PYTHONPATH=. exec python load_tests/run_profile.py --out "$OUT" --cluster "${HEAD_CPUS}+${WORKER_CPUS}" \
    "${PROFILE_ARGS[@]}" "$@"
fi

# MODE=ray-start: the same with the `ray start` CLI. Two `ray start --block` processes of this
# script (head, worker), loopback addresses, every port chosen free, one temp dir per node under
# a fresh /tmp dir. Teardown: SIGTERM to exactly those two processes (a blocking `ray start`
# stops its node's processes when it ends), then the temp dir goes. Never `ray stop`.
TMP=$(mktemp -d /tmp/prrs.XXXXXX)
read -r GCS M1 M2 A1 A2 C1 R1 R2 <<<"$(python - <<'PY'
import socket
socks = [socket.socket() for _ in range(8)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
)"
export RAY_AUTH_MODE=disabled RAY_TMPDIR="$TMP"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
COMMON=(--node-ip-address 127.0.0.1 --disable-usage-stats --block)
ray start --head --port "$GCS" --num-cpus "$HEAD_CPUS" --temp-dir "$TMP/head" --include-dashboard false \
  --metrics-export-port "$M1" --dashboard-agent-listen-port "$A1" --ray-client-server-port "$C1" \
  --runtime-env-agent-port "$R1" "${COMMON[@]}" >"$OUT/ray-head.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 60); do (echo >/dev/tcp/127.0.0.1/"$GCS") 2>/dev/null && break; sleep 1; done
ray start --address "127.0.0.1:$GCS" --num-cpus "$WORKER_CPUS" --temp-dir "$TMP/worker" \
  --metrics-export-port "$M2" --dashboard-agent-listen-port "$A2" --runtime-env-agent-port "$R2" \
  "${COMMON[@]}" >"$OUT/ray-worker.log" 2>&1 &
PIDS+=($!)
sleep 10
PYTHONPATH=. python load_tests/run_profile.py --out "$OUT" --address "127.0.0.1:$GCS" --ray-temp-dir "$TMP" \
  --metrics-url "http://127.0.0.1:$M1/metrics" --metrics-url "http://127.0.0.1:$M2/metrics" \
  "${PROFILE_ARGS[@]}" "$@"
