#!/usr/bin/env bash
# Render Mermaid diagrams for real: mermaid-cli (mmdc) from npm, in Debian's Chromium.
#
#   .ci/mermaid.sh FILE.mmd...     writes FILE.svg beside each; exits non-zero on the first file
#                                  that mmdc cannot parse or render (or that renders an error box)
#
# Installs what is missing and nothing else, so a second run goes straight to rendering:
#   - chromium (and nodejs + npm if there is no node) from Debian, with apt-get;
#   - the pinned mermaid-cli and puppeteer from the npm registry, into $AGENTASSAY_MERMAID_HOME
#     (default ~/.cache/agentassay-mermaid). Puppeteer's own browser download is skipped (its host
#     is not reachable from CI); puppeteer is pointed at /usr/bin/chromium instead.
set -euo pipefail

MMDC_VERSION=11.17.0     # node ^18.19 || >=20; 12.x needs node >= 22.13, newer than Debian's or this machine's
PUPPETEER_VERSION=24.43.1
CHROMIUM=/usr/bin/chromium
HOME_DIR="${AGENTASSAY_MERMAID_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/agentassay-mermaid}"
export DEBIAN_FRONTEND=noninteractive PUPPETEER_SKIP_DOWNLOAD=true PUPPETEER_SKIP_CHROMIUM_DOWNLOAD=true

if [ "$#" -eq 0 ]; then
    echo "usage: $0 FILE.mmd..." >&2
    exit 2
fi

log() { echo "mermaid.sh: $*" >&2; }

apt_updated=
apt_install() {
    if [ -z "$apt_updated" ]; then
        apt-get update -qq
        apt_updated=1
    fi
    log "apt-get install $*"
    apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

[ -x "$CHROMIUM" ] || apt_install chromium
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    apt_install nodejs npm
fi

stamp="mermaid-cli@$MMDC_VERSION puppeteer@$PUPPETEER_VERSION node@$(node --version)"
mmdc="$HOME_DIR/node_modules/.bin/mmdc"
if [ ! -x "$mmdc" ] || [ "$(cat "$HOME_DIR/.installed" 2>/dev/null)" != "$stamp" ]; then
    log "npm install $stamp into $HOME_DIR"
    mkdir -p "$HOME_DIR"
    rm -f "$HOME_DIR/.installed"
    cat >"$HOME_DIR/package.json" <<EOF
{"name": "agentassay-mermaid-ci", "private": true,
 "dependencies": {"@mermaid-js/mermaid-cli": "$MMDC_VERSION", "puppeteer": "$PUPPETEER_VERSION"}}
EOF
    npm install --prefix "$HOME_DIR" --no-audit --no-fund --loglevel=error >/dev/null
    echo "$stamp" >"$HOME_DIR/.installed"
fi

# As root Chromium needs --no-sandbox; the background-networking flags stop it calling out to
# Google's hosts, which this network refuses.
cat >"$HOME_DIR/puppeteer.json" <<EOF
{"executablePath": "$CHROMIUM", "headless": "shell",
 "args": ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
          "--disable-component-update", "--disable-sync", "--no-first-run"]}
EOF

status=0
for src in "$@"; do
    out="${src%.mmd}.svg"
    rm -f "$out"
    start=$(date +%s.%N)
    if ! timeout 120 "$mmdc" --quiet --puppeteerConfigFile "$HOME_DIR/puppeteer.json" --input "$src" --output "$out"; then
        log "FAILED: $src (mmdc exited non-zero)"
        status=1
        continue
    fi
    # mmdc refuses a diagram it cannot parse; this also catches an error drawn into the picture.
    if [ ! -s "$out" ] || grep -q -e 'Syntax error in text' -e 'class="error-icon"' "$out"; then
        log "FAILED: $src (no SVG, or an error diagram)"
        status=1
        continue
    fi
    log "ok: $src -> $out ($(wc -c <"$out") bytes, $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s)"
done
exit "$status"
