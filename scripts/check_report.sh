#!/usr/bin/env bash
# Renders a carb HTML report in headless Chromium and saves a screenshot, to check that the
# self-contained file displays offline (no network: every external fetch is disabled).
# Usage: scripts/check_report.sh report.html out.png [width,height]
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 report.html out.png [width,height]" >&2
  exit 2
fi
html=$1
png=$2
size=${3:-1400,3000}
[[ -f "$html" ]] || { echo "$0: no such file: $html" >&2; exit 2; }

browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
[[ -n "$browser" ]] || { echo "$0: no chromium found (Debian: apt-get install -y chromium)" >&2; exit 2; }

# A report that references the network would not render offline: refuse it before rendering.
if grep -q "http" "$html"; then
  echo "$0: $html contains an 'http' reference; the report must be self-contained" >&2
  exit 1
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
abs=$(cd "$(dirname "$html")" && pwd)/$(basename "$html")
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
  --disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$profile" \
  --screenshot="$png" --window-size="$size" "file://$abs" 2>/dev/null
[[ -s "$png" ]] || { echo "$0: $browser wrote no screenshot" >&2; exit 1; }
echo "screenshot: $png"
