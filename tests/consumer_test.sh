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
# The installed CLI profiles with the plugin installed beside the library (when built with LibTorch).
if [[ -f $work/prefix/lib/libcarb_torch.so ]]; then
  printf 'family,depth,width,resolution,batch,precision\nbasic,10,0.25,32,1,fp32\n' >"$work/one.csv"
  "$work/prefix/bin/carb" profile --configs "$work/one.csv" --db "$work/one.db" --threads 1 --warmup 0 \
    --min-passes 2 --max-passes 2 --cooldown 0 --quiet
  "$work/prefix/bin/carb" data export --db "$work/one.db" --out "$work/one-measured.csv" --platform cpu-1t
  grep -q '^cpu-1t,basic,10,0.25,32,1,fp32,ok,' "$work/one-measured.csv"
fi
