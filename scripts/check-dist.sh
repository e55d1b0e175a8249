#!/usr/bin/env bash
# Checks that dist/ has the layout Grafana loads: the app, its nested
# datasource with the backend binary, and the nested panel.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
for f in plugin.json module.js img/logo.svg \
         datasource/plugin.json datasource/module.js datasource/img/logo.svg datasource/gpx_queryreplay_linux_amd64 \
         panel/plugin.json panel/module.js panel/img/logo.svg; do
  [[ -s "dist/$f" ]] || { echo "check-dist: missing dist/$f" >&2; fail=1; }
done
((fail)) && exit 1
for pair in "plugin.json queryreplay-sqlserver-app" "datasource/plugin.json queryreplay-sqlserver-datasource" "panel/plugin.json queryreplay-replay-panel"; do
  set -- $pair
  grep -q "\"id\": \"$2\"" "dist/$1" || { echo "check-dist: dist/$1 does not have id $2" >&2; exit 1; }
  grep -q '%VERSION%' "dist/$1" && { echo "check-dist: dist/$1 still has %VERSION%" >&2; exit 1; }
done
info=$(dist/datasource/gpx_queryreplay_linux_amd64 -buildinfo)
echo "$info" | grep -q '"version"' || { echo "check-dist: -buildinfo gave $info" >&2; exit 1; }
echo "check-dist: dist/ layout ok ($info)"
