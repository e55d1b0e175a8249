#!/usr/bin/env bash
# The demo, until the demo issue lands: everything is built; start the
# SQL Server stand-in, trace two of its scenarios with the real tracer, and
# say what each piece is.
set -euo pipefail
cd "$(dirname "$0")/.."
qr=bin/queryreplay
echo "QueryReplay demo"
echo
echo "Built:"
echo "  dist/                 Grafana app plugin queryreplay-sqlserver-app (datasource + panel nested)"
echo "  dist/datasource/gpx_queryreplay_linux_amd64  datasource backend $(dist/datasource/gpx_queryreplay_linux_amd64 -buildinfo)"
echo "  $qr     CLI"
echo

port=$((20000 + RANDOM % 20000))
log=$(mktemp)
$qr standin --listen "127.0.0.1:$port" >"$log" 2>/dev/null &
standin=$!
trap 'kill $standin 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 50); do
  [[ -s "$log" ]] && break
  sleep 0.1
done
dsn=$(head -1 "$log")
[[ -n "$dsn" ]] || { echo "demo: the stand-in did not start" >&2; exit 1; }
echo "Stand-in (a TDS server that behaves like SQL Server for our statements): ${dsn%%\?*}"
echo

for scenario in hash_join sort_spill; do
  sql=$($qr standin --list-scenarios | python3 -c "import json,sys; print(next(json.loads(l)['sql'] for l in sys.stdin if json.loads(l)['name']=='$scenario'))")
  echo "== queryreplay trace: $scenario (cold cache, read-ahead off)"
  echo "   $sql"
  $qr trace --dsn "$dsn" --sql "$sql" --clear-buffer-pool --allow-clear-buffer-pool --disable-read-ahead -o "/tmp/queryreplay-demo-$scenario.json.gz"
  echo
done

echo "CLI commands and their state:"
for cmd in "trace" "exporter" "demo" "standin" "xe decode" "plan inspect" "timeline" "symbols resolve" "symbols pdb-info"; do
  # Without arguments a built command asks for them; only unbuilt ones say
  # "not implemented".
  out=$(timeout 5 $qr $cmd 2>&1 </dev/null) || true
  if grep -q "not implemented yet" <<<"$out"; then state="not implemented yet"; else state="ready"; fi
  printf '  queryreplay %-18s %s\n' "$cmd" "$state"
done
