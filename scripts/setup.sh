#!/usr/bin/env bash
# Installs what the builds and tests need on a fresh Debian/Ubuntu machine
# that already has Go and Node: the Debian packages listed in
# scripts/apt-packages.txt and the npm dependencies from package-lock.json.
# It is idempotent and cheap when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
while read -r pkg; do
  [[ -z "$pkg" || "$pkg" == \#* ]] && continue
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done < scripts/apt-packages.txt

if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    sudo_cmd=(sudo)
  fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# npm ci only when the lock file changed since the last install.
stamp=node_modules/.queryreplay-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
  echo "setup: npm ci"
  # --prefer-offline: packages already in the npm cache are not re-checked
  # with the registry (a fresh clone on a machine that installed before).
  npm ci --prefer-offline --no-audit --no-fund
  echo "$want" > "$stamp"
fi
