#!/usr/bin/env bash
# The public API as another project meets it: install carb into a scratch prefix, build
# examples/consumer against it with find_package(carb), train a small bundle with the installed
# CLI, and run the consumer on it (it predicts and screens).
#   tests/consumer_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
work=$build/consumer_test
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/examples/consumer" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/prefix/bin/carb" --version
head -n 400 "$src/data/cpu-2t.csv" >"$work/rows.csv"
"$work/prefix/bin/carb" train --data "$work/rows.csv" --out "$work/model" --trees 20 --no-correctors >/dev/null
"$work/build/consumer" "$work/model"
