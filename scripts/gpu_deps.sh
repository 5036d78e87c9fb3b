#!/usr/bin/env bash
# Run here (Debian 12), before a device run: fetches the Debian packages carb's core needs to
# build (XGBoost, dmlc, SQLite, CLI11, nlohmann-json) and unpacks them into .deps/root, which git
# ignores (.git/info/exclude) and the device call carries. The GPU machine has no package registry.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.deps/' "$(git rev-parse --git-common-dir)/info/exclude" 2>/dev/null ||
  { mkdir -p "$(git rev-parse --git-common-dir)/info"; echo '/.deps/' >>"$(git rev-parse --git-common-dir)/info/exclude"; }
rm -rf .deps && mkdir -p .deps/debs
(cd .deps/debs && apt-get download libxgboost0 libxgboost-dev libdmlc0 libsqlite3-dev libsqlite3-0 libcli11-dev nlohmann-json3-dev)
for f in .deps/debs/*.deb; do dpkg -x "$f" .deps/root; done
du -sh .deps/root
