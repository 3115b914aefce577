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
PYTHONPATH=. exec python load_tests/run_profile.py --out "$OUT" --cluster "${HEAD_CPUS}+${WORKER_CPUS}" \
  --replicas auto --config "$OUT/cluster-config.yaml" --profile burst --users "$USERS" --base-users 1 \
  --burst-at "$BURST_AT" --burst-for "$BURST_FOR" --duration "$DURATION" --requests 5000 \
  --weights scanned_page=6,digital_page=2,digital_doc=1,bad_not_pdf=1,bad_page=1 --sample-interval 2 "$@"
