#!/usr/bin/env bash
# The public API as another project meets it: install carb into a scratch prefix, build
# examples/consumer against it with find_package(carb), train a small bundle with the installed
# CLI, and run the consumer on it (it predicts and screens); the installed Python package predicts
# the same with nothing of the build directory on its path.
#   tests/consumer_test.sh SOURCE_DIR BUILD_DIR [PYTHON]
set -euo pipefail
src=$1 build=$2 python=${3:-/usr/bin/python3}
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
# The installed Python package (when the build has one), from the prefix alone: the same answer
# as the consumer's C++ and the installed CLI's.
pydir=$(find "$work/prefix" -type d -path '*dist-packages/carb' | head -n 1)
if [[ -n $pydir ]]; then
  printf 'family,depth,width,resolution,batch,precision\nbasic,18,0.5,64,4,fp32\n' >"$work/q.csv"
  cli=$("$work/prefix/bin/carb" predict --model "$work/model" --configs "$work/q.csv" --format csv |
        "$python" -c 'import csv,sys; print(next(csv.DictReader(sys.stdin))["latency_ms"])')
  (cd "$work" && env -u PYTHONPATH PYTHONPATH="$(dirname "$pydir")" OMP_WAIT_POLICY=PASSIVE "$python" - "$work/model" "$cli" "$work/prefix/lib" <<'PY'
import sys
import carb
assert "/prefix/" in carb.__file__, carb.__file__
m = carb.Model.load(sys.argv[1])
got = float(m.predict([carb.Config("basic", 18, 0.5, 64, 4, "fp32")])["latency_ms"][0])
want = float(sys.argv[2])
assert abs(got - want) <= 1e-5 * abs(want), (got, want)
print("installed python package:", carb.__version__, "latency", got)
# It profiles too where the plugin was installed beside the library (found from there, not the build).
import os
if os.path.exists(os.path.join(sys.argv[3], "libcarb_torch.so")):
    s = carb.profile([carb.Config("basic", 10, 0.25, 32, 2, "fp32")], "py.db", check_meter=False, progress=False,
                     protocol={"threads": 1, "warmup": 0, "min_passes": 2, "max_passes": 2, "cooldown": 0})
    assert s["ok"] == 1, s
    print("installed python package profiled", s["ok"], "configuration")
PY
  )
fi
