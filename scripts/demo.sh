#!/usr/bin/env bash
# make demo: runs `queryreplay demo` (built by make build-cli, with the
# viewer's page embedded by make build-viewer). It starts the SQL
# Server stand-in, the exporter on it and the local viewer, traces the demo
# scenarios with the real tracer, prints their replay and where to look;
# Ctrl-C stops everything. Arguments go to the command (e.g. --once).
set -euo pipefail
cd "$(dirname "$0")/.."
exec bin/queryreplay demo "$@"
