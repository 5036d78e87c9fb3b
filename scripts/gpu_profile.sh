#!/usr/bin/env bash
# For a lent GPU machine (an H200 or H100): build carb against the PyTorch install's CUDA
# LibTorch, check the energy meter (carb meter), run or continue the window study that decides the
# energy window, check the cuda backend on a few probe configurations, then profile the paper
# preset one architecture at a time in a seeded random order until the time budget is spent, and
# export the dataset into $OUT. Never changes GPU clocks, power limits or any other setting: it
# records them.
#
# That machine has no package registry: the Debian -dev packages carb's core needs (XGBoost,
# SQLite, CLI11, nlohmann-json) travel unpacked in .deps/root (see scripts/gpu_deps.sh).
# Usage there: OUT=... CARB_GPU_BUDGET_S=450 scripts/gpu_profile.sh
# PLATFORM is h200 on an H200, h100 on an H100 (read from nvidia-smi; CARB_GPU_PLATFORM overrides): every
# file below is that platform's, and a lease on another GPU starts that GPU's own campaign.
# CARB_GPU_ENERGY_TICKS=N pins --energy-ticks (keep it the same across the leases of one campaign:
# it is part of the protocol id, and rows of another id are measured again instead of resumed).
# CARB_GPU_STUDY_S=S (default 200; 0 skips it) spends at most S seconds on the window study
# (data/gpu/window-study-configs.csv, 5 s traces, 3 repeats, repeat-major): a study already in
# data/gpu/PLATFORM-window-study.csv is continued, not repeated, and a complete one costs nothing.
# Its result sets --energy-ticks: the shortest tick-aligned window whose p90 deviation from the
# 5 s reference is <= 3% (scripts/window_study.py); without one, 1 s worth of counter periods.
# CARB_GPU_DEPLOY_S=S first spends S seconds on the `deploy` preset (resolutions 160-256, what
# people run) into $OUT/PLATFORM-deploy.csv: rows that test how the model, trained on the paper
# preset, holds past its grid (README, "Predicting past the grid").
# CARB_GPU_REPEAT_N=N (with CARB_GPU_REPEAT_S, default 60 s, kept back from the campaign) measures
# N ok configurations of the campaign, drawn at random, again into $OUT/PLATFORM-repeat.csv, for the energy
# repeatability R^2 (scripts/repeatability.py).
# CARB_GPU_PER_ARCH=K (default 6) measures K configurations of each architecture per visit, in rounds.
# CARB_GPU_PLAN=plan.csv (from `carb plan --model models/PLATFORM --preset paper --exclude data/PLATFORM.csv
# --backend cuda --warmup 5 --min-passes 10 --max-passes 100 --max-timed-s 0.5 --min-energy-window 1
# --util-window 0.5 --util sample:0.2 --cooldown 0 --build-s 2.8 --budget-s ...`, priced about as
# this script measures: 10 ticks of the 100 ms counter are a 1 s window, the pause comes only above
# 65 C, and each architecture's network is built once)
# measures that plan instead of the architecture order, the rows the model knows least first, grouped
# by architecture (--group-architectures: the best-ranked architecture first, each network built
# once; a build costs about 2.8 s on the H200, more than a row).
# The budget counts from the script's start; profiling stops (cleanly, after the configuration in
# flight) early enough that the export fits inside it. Everything done so far stays in the store.
# $OUT/lease.md is the line for data/gpu/README.md: date, seconds, rows, configurations/s, compute
# share, and the GPU state read.
set -uo pipefail
T0=$(date +%s)
BUDGET=${CARB_GPU_BUDGET_S:-450}
OUT=${OUT:-out}
W=${CARB_GPU_WORK:-/tmp/carb-gpu}  # stores and scratch; only the dataset and its log go to $OUT
mkdir -p "$OUT" "$W"
exec > >(tee -a "$OUT/log.txt") 2>&1
step() { echo "== [$(($(date +%s) - T0)) s] $*"; }
die() { echo "gpu_profile: $*"; exit 1; }

DEPS=$PWD/.deps/root/usr
LIB=$DEPS/lib/x86_64-linux-gnu
[ -f "$LIB/libxgboost.so" ] || die "missing $LIB/libxgboost.so: run scripts/gpu_deps.sh here and carry .deps/root"
export LD_LIBRARY_PATH=$LIB:${LD_LIBRARY_PATH:-}
# Settings checked before anything costs lease time.
PER_ARCH=${CARB_GPU_PER_ARCH:-6}
# Whole seconds and counts, or bash's arithmetic fails minutes in, after the build (a review).
for v in CARB_GPU_BUDGET_S CARB_GPU_PER_ARCH CARB_GPU_STUDY_S CARB_GPU_DEPLOY_S CARB_GPU_REPEAT_N CARB_GPU_REPEAT_S CARB_GPU_ENERGY_TICKS; do
  [ -z "${!v:-}" ] || [[ "${!v}" =~ ^[0-9]+$ ]] || die "$v '${!v}' is not a whole number"
done

step "machine (read only; nothing is set)"
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")'
nvidia-smi --query-gpu=name,driver_version,power.limit,power.default_limit,power.draw,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,persistence_mode,compute_mode,mig.mode.current --format=csv
# The platform is named after the GPU read here, so that an H100's rows never join the H200's
# campaign (its store, its data/PLATFORM.csv, its window study); carb profile refuses a store whose
# protocol record names another GPU anyway. CARB_GPU_PLATFORM=name overrides.
# Exact names only: an H200 NVL, a GH200 or an H100 PCIe is another device, with a name of its own.
GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) || GPU_NAME=
[[ "$GPU_NAME" == NVIDIA\ * ]] || die "nvidia-smi read no NVIDIA GPU name (it said '$GPU_NAME')"
case "$GPU_NAME" in
  "NVIDIA H200") PLAT=h200 ;;
  "NVIDIA H100 80GB HBM3") PLAT=h100 ;;
  *) PLAT=$(echo "$GPU_NAME" | tr 'A-Z' 'a-z' | sed -E 's/^nvidia //; s/[^a-z0-9]+/-/g; s/^-+|-+$//g') ;;
esac
PLAT=${CARB_GPU_PLATFORM:-$PLAT}
[[ "$PLAT" =~ ^[a-z0-9][a-z0-9._-]*$ ]] || die "no platform name from the GPU name '$GPU_NAME': set CARB_GPU_PLATFORM"
echo "platform: $PLAT (GPU '$GPU_NAME'); files: data/$PLAT.csv, data/gpu/$PLAT-*"
# The device's memory as the driver reports it (read, never set): scripts/main_job.sh trains the
# platform's model with it (--device-memory-mb) when no probe's out-of-memory error states one.
nvidia-smi --query-gpu=name,memory.total,power.limit,driver_version --format=csv | tee "$OUT/${PLAT}-gpu.csv"
# A store from an earlier lease (same protocol) resumes: its configurations are skipped. The shipped
# one (data/gpu/PLATFORM-campaign.db) by default, unless this machine's own store is already there (a
# second call of one lease).
RESUME=${CARB_GPU_RESUME_DB:-data/gpu/${PLAT}-campaign.db}
# Before the build costs a minute: every file this lease would continue was measured on this GPU, and
# the plan was made for this platform; the energy window the campaign's store was measured with.
STORE_TICKS=$(python3 scripts/gpu_preflight.py --platform "$PLAT" --gpu-name "$GPU_NAME" --store "$RESUME" \
  --store "data/gpu/${PLAT}-deploy.db" --study "data/gpu/${PLAT}-window-study.csv" ${CARB_GPU_PLAN:+--plan "$CARB_GPU_PLAN"}) ||
  die "preflight refused this lease's files (above)"
g++ --version | head -1; cmake --version | head -1
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
CUDA_ROOT=$(dirname "$(dirname "$NVCC")")
"$NVCC" --version | tail -1
nproc; free -g | head -2

step configure
PREFIX=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCARB_BUILD_BENCH=OFF -DCARB_BUILD_TESTS=OFF -DCARB_WERROR=OFF -DCARB_PYTHON=OFF \
  -DCMAKE_PREFIX_PATH="$PREFIX;$DEPS" \
  -DXGBOOST_INCLUDE_DIR="$DEPS/include" -DXGBOOST_LIBRARY="$LIB/libxgboost.so" \
  -DSQLite3_INCLUDE_DIR="$DEPS/include" -DSQLite3_LIBRARY="$LIB/libsqlite3.so" \
  -DCLI11_DIR="$DEPS/share/cmake/CLI11" -Dnlohmann_json_DIR="$DEPS/share/cmake/nlohmann_json" \
  -DCMAKE_POLICY_VERSION_MINIMUM=3.5 -DCUDAToolkit_ROOT="$CUDA_ROOT" -DCUDA_TOOLKIT_ROOT_DIR="$CUDA_ROOT" -DTORCH_CUDA_ARCH_LIST=9.0 \
  >"$W/cmake.log" 2>&1 || { tail -40 "$W/cmake.log"; die "cmake failed"; }
grep "carb: LibTorch" "$W/cmake.log"
grep -q "LibTorch has CUDA" "$W/cmake.log" || die "this LibTorch has no CUDA"

step build
cmake --build build-gpu -j"$(nproc)" --target carb carb_torch >"$W/build.log" 2>&1 ||
  { grep -E -A3 "error" "$W/build.log" | head -60; die "build failed"; }
B=build-gpu/carb

step "meter check (idle GPU)"
$B meter --backend cuda --seconds 3 --format json | tee "$OUT/${PLAT}-meter.json" || die "meter check failed"
PERIOD_MS=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("period_ms") or "")' "$OUT/${PLAT}-meter.json")

STUDY=data/gpu/${PLAT}-window-study.csv
# A study already shipped has its verdict: later leases add its repeats in 100 s slices.
STUDY_S=${CARB_GPU_STUDY_S:-200}
[ -z "${CARB_GPU_STUDY_S:-}" ] && [ -f "$STUDY" ] && STUDY_S=100
# Leave the campaign and the export at least 150 s of the budget.
LEFT_FOR_STUDY=$((BUDGET - ($(date +%s) - T0) - 150))
[ "$STUDY_S" -gt "$LEFT_FOR_STUDY" ] && STUDY_S=$LEFT_FOR_STUDY
# The shipped study, unless this machine's own is already there (a second call of one lease went
# back to the shipped one and measured its traces again).
[ -f "$STUDY" ] && [ ! -f "$W/${PLAT}-window-study.csv" ] && cp "$STUDY" "$W/${PLAT}-window-study.csv" &&
  cp "$STUDY.json" "$W/${PLAT}-window-study.csv.json" 2>/dev/null
if [ "$STUDY_S" -gt 10 ]; then
  step "window study (at most $STUDY_S s; resumes $STUDY when present)"
  timeout -k 10 "$STUDY_S" $B meter --backend cuda --study data/gpu/window-study-configs.csv \
    --out "$W/${PLAT}-window-study.csv" --trace-s 5 --windows 0.1,0.25,0.5,1,2 --repeats 3 --warmup 5
  echo "window study exit status $?"
else
  step "window study skipped (CARB_GPU_STUDY_S or the budget)"
fi
if [ -f "$W/${PLAT}-window-study.csv" ]; then
  cp "$W/${PLAT}-window-study.csv" "$OUT/"
  cp "$W/${PLAT}-window-study.csv.json" "$OUT/" 2>/dev/null
  python3 scripts/window_study.py "$OUT/${PLAT}-window-study.csv" | tee "$OUT/${PLAT}-window-study.txt"
fi
TICKS=${CARB_GPU_ENERGY_TICKS:-}
# A campaign keeps its protocol across leases: the --energy-ticks its store's rows were measured with,
# from the store's protocol record (the protocol id includes it; rows of another id would be measured
# again, not resumed). A row's energy_ticks column is what its window counted, not the setting.
[ -z "$TICKS" ] && TICKS=$STORE_TICKS
[ -z "$TICKS" ] && [ -f "$OUT/${PLAT}-window-study.csv" ] &&
  TICKS=$(python3 scripts/window_study.py --json "$OUT/${PLAT}-window-study.csv" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("energy_ticks") or "")')
if [ -z "$TICKS" ] && [ -n "$PERIOD_MS" ]; then  # no study verdict yet: 1 s worth of counter periods
  TICKS=$(python3 -c 'import math,sys; print(max(1, math.ceil(1000 / float(sys.argv[1]) - 0.05)))' "$PERIOD_MS")
fi
if [ -z "$TICKS" ]; then
  # The meter check saw no update period: waiting for ticks could cost 30 s per configuration.
  ENERGY="--energy-ticks 0 --min-energy-window 0.5"
  echo "energy window: no counter period measured; 0.5 s windows with plain reads (the earlier protocol)"
else
  [[ "$TICKS" =~ ^[1-9][0-9]*$ ]] || die "energy ticks '$TICKS' is not a positive integer"
  ENERGY="--energy-ticks $TICKS --min-energy-window 0"
  echo "energy window: --energy-ticks $TICKS (counter period ${PERIOD_MS:-unknown} ms)"
fi

# GPU protocol: latency and energy from one window of passes aligned to the counter's updates;
# utilization sampled on a fifth of the configurations (a stable hash picks them); a pause only
# when the GPU is warmer than 65 C; one network per architecture.
P="--warmup 5 --min-passes 10 --max-passes 100 --target-ci 0.01 --max-timed-s 0.5 $ENERGY --util-window 0.5 --cooldown 2 --cooldown-above 65"
UTIL="--util sample:0.2"

if [ -n "${CARB_GPU_SKIP_PROBE:-}" ]; then step "probe skipped"; else
step "probe: cuda backend, NVML, out-of-memory handling"
cat >"$W/probe.csv" <<'CSV'
family,depth,width,resolution,batch,precision
basic,18,1,224,1,fp32
basic,18,1,224,4,fp32
basic,18,1,224,64,fp16
bottleneck,50,1,224,128,bf16
bottleneck,50,1,1024,2048,fp32
basic,18,1,224,8,fp32
CSV
# Row 2 reuses row 1's network (net_reused 1); row 5 asks for far more than the GPU holds: expect
# status oom, then row 6 ok again. Utilization on every row, so that path runs before the campaign.
$B profile --backend cuda --platform ${PLAT} --db "$W/probe.db" --configs "$W/probe.csv" $P --util all --format json ||
  die "probe profiling failed"
$B data export --db "$W/probe.db" --out "$OUT/${PLAT}-probe.csv" || die "probe export failed"
cat "$OUT/${PLAT}-probe.csv"
head -c 4000 "$OUT/${PLAT}-probe.json"; echo
fi

# Architectures in a seeded random order, visited in rounds of CARB_GPU_PER_ARCH (default 6)
# configurations each, spread over the resolutions and batches: a campaign stopped anywhere is a
# uniform sample of architectures with a few configurations of each. bench/arch_spread.py: at equal
# GPU seconds, 6 per visit predicts unmeasured networks better than whole architectures (memory
# MAPE 2.2% against 4.0%, latency 7.8% against 11.2% at 400 s); 0 measures each whole, as before.
SEED=20261130

if [ -n "${CARB_GPU_DEPLOY_S:-}" ]; then
  [ -f data/gpu/${PLAT}-deploy.db ] && [ ! -f "$W/${PLAT}-deploy.db" ] && cp data/gpu/${PLAT}-deploy.db "$W/${PLAT}-deploy.db"
  step "profile the deploy preset in architecture order for $CARB_GPU_DEPLOY_S s"
  timeout -k 25 "$CARB_GPU_DEPLOY_S" $B profile --backend cuda --platform ${PLAT} --db "$W/${PLAT}-deploy.db" \
    --preset deploy --arch-order $SEED --per-arch "$PER_ARCH" $P $UTIL
  echo "deploy profile exit status $?"
  [ -f "$W/${PLAT}-deploy.db" ] && cp "$W/${PLAT}-deploy.db" "$OUT/${PLAT}-deploy.db"
  # Not fatal: a slice too short for one row (a new GPU's store starts empty) must not end the lease.
  $B data export --db "$W/${PLAT}-deploy.db" --out "$OUT/${PLAT}-deploy.csv" --platform ${PLAT} ||
    echo "deploy export failed (the campaign goes on)"
fi

if [ -n "${CARB_GPU_PLAN:-}" ]; then
  step "profile the plan $CARB_GPU_PLAN in its order, grouped by architecture, until the budget"
  ORDER=(--plan "$CARB_GPU_PLAN" --group-architectures)
else
  step "profile the paper preset in architecture order ($PER_ARCH per visit; 0 = whole) until the budget"
  ORDER=(--preset paper --arch-order $SEED --per-arch "$PER_ARCH")
fi
# A copied store must not meet the -wal/-shm of the one it replaces.
[ -f "$RESUME" ] && { [ -n "${CARB_GPU_RESUME_DB:-}" ] || [ ! -f "$W/${PLAT}.db" ]; } &&
  rm -f "$W/${PLAT}.db-wal" "$W/${PLAT}.db-shm" && cp "$RESUME" "$W/${PLAT}.db"
REPEAT_N=${CARB_GPU_REPEAT_N:-0}
REPEAT_S=0; [ "$REPEAT_N" -gt 0 ] && REPEAT_S=${CARB_GPU_REPEAT_S:-60}
LEFT=$((BUDGET - ($(date +%s) - T0) - 40 - REPEAT_S))
[ "$LEFT" -gt 20 ] || die "no time left to profile"
echo "profiling for at most $LEFT s"
timeout -k 25 "$LEFT" $B profile --backend cuda --platform ${PLAT} --db "$W/${PLAT}.db" "${ORDER[@]}" $P $UTIL --format json |
  tee "$W/summary.json"
echo "profile exit status ${PIPESTATUS[0]}"
step export
cp "$W/${PLAT}.db" "$OUT/${PLAT}.db"  # first: an export that refuses must not lose the lease's rows
$B data export --db "$W/${PLAT}.db" --out "$OUT/${PLAT}.csv" --platform ${PLAT} || die "export failed"
$B data info "$OUT/${PLAT}.csv" 2>&1 | head -60 || true
if [ "$REPEAT_N" -gt 0 ]; then
  # Repeatability: REPEAT_N ok configurations drawn at random (seeded; the first N of an
  # architecture-ordered campaign would be one or two architectures) measured again, in a store of
  # their own (so nothing is resumed), same protocol, no utilization windows.
  step "measure $REPEAT_N configurations again for repeatability (at most $REPEAT_S s)"
  # Only rows measured in this lease (not in the shipped data/${PLAT}.csv): a repeat minutes later, not
  # a lease-to-lease comparison.
  python3 - "$OUT/${PLAT}.csv" "$REPEAT_N" data/${PLAT}.csv >"$W/repeat.csv" <<'PY'
import csv, os, random, sys
keys = ["family", "depth", "width", "resolution", "batch", "precision"]
shipped = set()
if os.path.exists(sys.argv[3]):
    shipped = {tuple(r[k] for k in keys) for r in csv.DictReader(open(sys.argv[3]))}
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "ok" and tuple(r[k] for k in keys) not in shipped]
rows = random.Random(20261204).sample(rows, min(int(sys.argv[2]), len(rows)))
print(",".join(keys))
for r in rows:
    print(",".join(r[k] for k in keys))
PY
  rm -f "$W/${PLAT}-repeat.db" "$W/${PLAT}-repeat.db-wal" "$W/${PLAT}-repeat.db-shm"  # nothing resumed
  timeout -k 10 "$REPEAT_S" $B profile --backend cuda --platform ${PLAT} --db "$W/${PLAT}-repeat.db" \
    --configs "$W/repeat.csv" $P --util none
  echo "repeat profile exit status $?"
  if $B data export --db "$W/${PLAT}-repeat.db" --out "$OUT/${PLAT}-repeat.csv" --platform ${PLAT}; then
    python3 scripts/repeatability.py "$OUT/${PLAT}.csv" "$OUT/${PLAT}-repeat.csv" || echo "repeatability.py failed"
  else
    echo "repeat export failed"
  fi
fi
nvidia-smi --query-gpu=power.limit,clocks.sm,clocks.mem,temperature.gpu --format=csv
python3 - "$W/summary.json" "$OUT/${PLAT}.csv" "$(($(date +%s) - T0))" "$TICKS" >"$OUT/lease.md" <<'PY'
import csv, datetime, json, subprocess, sys
try:
    s = json.load(open(sys.argv[1]))
except (OSError, ValueError):  # no summary: the profiler was killed before it printed one
    s = {}
ok = [r for r in csv.DictReader(open(sys.argv[2])) if r["status"] == "ok"]
rows = len(ok)
archs = len({(r["family"], r["depth"], r["width"], r["precision"]) for r in ok})
try:
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=power.limit,clocks.sm,clocks.mem,temperature.gpu",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
except OSError as e:
    gpu = f"unread ({e})"
print(f"- {datetime.date.today()}: {sys.argv[3]} s in the script, {rows} ok rows of {archs} architectures in {sys.argv[2].rsplit('/', 1)[-1]}, "
      f"{s.get('configs_per_s', 0):.2f} configurations/s, compute share {100 * s.get('compute_share', 0):.0f}%, "
      f"--energy-ticks {sys.argv[4]}; GPU read (never set): {gpu}")
PY
echo "protocol: $P $UTIL" >>"$OUT/lease.md"
cat "$OUT/lease.md"
step done
