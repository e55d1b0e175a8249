#!/usr/bin/env bash
# The demo, until the demo issue lands: everything is built; say what is
# ready and what each piece does.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "QueryReplay demo"
echo
echo "Built:"
echo "  dist/                                   Grafana app plugin queryreplay-sqlserver-app (datasource + panel nested)"
echo "  dist/datasource/gpx_queryreplay_linux_amd64  datasource backend ($(dist/datasource/gpx_queryreplay_linux_amd64 -buildinfo))"
echo "  bin/queryreplay                         CLI"
echo
echo "CLI commands and their state:"
for cmd in "trace" "exporter" "standin" "xe decode" "plan inspect" "timeline" "symbols resolve" "symbols pdb-info"; do
  # Without arguments a built command either asks for them or (a server)
  # keeps running until the timeout; only unbuilt ones say "not implemented".
  out=$(timeout 5 bin/queryreplay $cmd 2>&1 </dev/null) || true
  if grep -q "not implemented yet" <<<"$out"; then state="not implemented yet"; else state="ready"; fi
  printf '  queryreplay %-18s %s\n' "$cmd" "$state"
done
