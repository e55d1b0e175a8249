#!/usr/bin/env bash
# Packages the built plugin (dist/) as the zip Grafana's plugin validator
# and the plugin catalog expect (grafana/plugin-validator's archive and
# archivename analyzers): one top-level directory named after the plugin id
# holding dist/'s content — plugin.json, module.js and its .map, README.md,
# LICENSE, CHANGELOG.md, go_plugin_build_manifest, the nested datasource/
# and panel/ with the backend binaries (mode 0755).
#
#   scripts/dist.sh [DIST_DIR] [OUT_DIR]     (make dist builds dist/ first)
#
# Signing: with GRAFANA_ACCESS_POLICY_TOKEN set, the staged copy is signed
# with @grafana/sign-plugin, which writes MANIFEST.txt into it; without, the
# zip is unsigned (no MANIFEST.txt) and ready to be signed the same way.
# Prints the zip's path on the last line.
set -euo pipefail
cd "$(dirname "$0")/.."
dist=${1:-dist}
out=${2:-release}

[[ -f "$dist/plugin.json" ]] || { echo "dist: $dist/plugin.json is missing; run make build first" >&2; exit 1; }
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$dist/plugin.json")
version=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["info"]["version"])' "$dist/plugin.json")
[[ "$version" != *%* ]] || { echo "dist: $dist/plugin.json still has the placeholder version $version" >&2; exit 1; }
ls "$dist"/datasource/gpx_*_linux_amd64 >/dev/null 2>&1 ||
  { echo "dist: no linux/amd64 backend binary in $dist/datasource (Grafana requires one)" >&2; exit 1; }
grep -q "^## $version\b" CHANGELOG.md || { echo "dist: CHANGELOG.md has no '## $version' entry" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp -R "$dist" "$stage/$id"
# A previous signature does not cover this build.
rm -f "$stage/$id/MANIFEST.txt"
find "$stage/$id" -name 'gpx_*' -type f -exec chmod 0755 {} +
find "$stage/$id" -type f ! -name 'gpx_*' -exec chmod 0644 {} +
find "$stage/$id" -type d -exec chmod 0755 {} +

if [[ -n "${GRAFANA_ACCESS_POLICY_TOKEN:-}" ]]; then
  echo "dist: signing with @grafana/sign-plugin"
  npx --yes @grafana/sign-plugin@latest --distDir "$stage/$id"
else
  echo "dist: unsigned (no MANIFEST.txt); set GRAFANA_ACCESS_POLICY_TOKEN to sign, or sign the zip's directory later"
fi

mkdir -p "$out"
zip_path="$(cd "$out" && pwd)/$id-$version.zip"
rm -f "$zip_path"
# -X: no extra file attributes; -y: store symlinks as links (there are none).
(cd "$stage" && zip -q -r -X -y "$zip_path" "$id")
(cd "$out" && sha256sum "$(basename "$zip_path")" >"$(basename "$zip_path").sha256")
echo "dist: $(unzip -Z1 "$zip_path" | wc -l) files, $(du -h "$zip_path" | cut -f1)"
echo "$zip_path"
