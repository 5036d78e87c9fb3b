#!/usr/bin/env bash
# carb's main job on the shipped data: train the CARB models of both measured CPU platforms
# (2 threads = source, 1 thread = target) unless trained since the data last changed, then screen the 3,072-configuration
# `screen` preset in two stages against latency and memory budgets, with a Pareto set that trades
# the predicted costs against capacity (GFLOPs per image), validated against the measurements of
# the target platform that its model did not train on (carb leaves the trained ones out).
# Then the same for energy on the measured H200 GPU: the paper preset (4,320) screened by the
# H200 model (memory -> energy -> latency cascade) against energy and latency budgets.
set -euo pipefail
cd "$(dirname "$0")/.."
carb=build/carb
mkdir -p models out
for p in cpu-2t cpu-1t h200 h100; do
  [[ -f data/$p.csv ]] || continue  # h100: once a lease on one has measured it (scripts/gpu_profile.sh)
  # An independent re-measurement of the platform under the same protocol (data/P-repeat.csv), where
  # there is one: its spread from the data is added to the intervals (README, "Intervals that hold a
  # new measurement").
  again=()
  [[ -f data/$p-repeat.csv ]] && again=(--remeasured "data/$p-repeat.csv")
  # The device's memory, where it was read on the device: the capacity the CUDA out-of-memory error
  # of the lease's probe states (data/gpu/h200-probe.csv: "a total capacity of 139.80 GiB", 150,109
  # MB). Predictions needing more are said not to fit, and recommend and screen never pass them.
  device=()
  gib=$(grep -o -m1 'total capacity of [0-9.]* GiB' "data/gpu/$p-probe.csv" 2>/dev/null | grep -o '[0-9][0-9.]*' || true)
  [[ -n $gib ]] && device=(--device-memory-mb "$(awk -v g="$gib" 'BEGIN { printf "%d", g * 1073.741824 + 0.5 }')")
  # Else the driver's figure, read by scripts/gpu_profile.sh (data/gpu/PLATFORM-gpu.csv, "81559 MiB").
  mib=$(awk -F', ' 'NR == 2 { print $2 + 0 }' "data/gpu/$p-gpu.csv" 2>/dev/null || true)
  [[ -z $gib && -n $mib && $mib != 0 ]] &&
    device=(--device-memory-mb "$(awk -v m="$mib" 'BEGIN { printf "%d", m * 1.048576 + 0.5 }')")
  # A CPU's device is its machine. Profiles since 2026-12-07 record its memory in their provenance,
  # which `carb train` reads by itself; the shipped CPU data predates that, and its sidecar records
  # the memory of the machine that exported it from the profiler's local store (one value across
  # its rounds; MiB, despite the name "memory_total_mb": 24,105 MiB, 25,276 MB). Without it a CPU
  # model recommended a batch of 4.4 TB.
  if [[ ${#device[@]} -eq 0 ]] && grep -q '"backend": "cpu"' "data/$p.json" 2>/dev/null &&
    ! grep -q '"backend": "cuda"' "data/$p.json" && ! grep -q '"device_memory_mb"' "data/$p.json"; then
    host=$(grep -o '"memory_total_mb": [0-9.]*' "data/$p.json" | sort -u || true)
    [[ -n $host && $(wc -l <<<"$host") -eq 1 ]] &&
      device=(--device-memory-mb "$(awk -v m="${host##* }" 'BEGIN { printf "%d", m * 1.048576 + 0.5 }')")
  fi
  # Retrain when the data changed since, when this carb cannot load the bundle (an older schema),
  # when the bundle predates calibrated extrapolation rates (it would widen past the grid at rate 1),
  # or when it lacks the re-measurement's spread there is one for, or its interval widths per
  # predicted size (the default since 2026-12-06), or its memory floor (2026-12-07).
  if [[ ! -f models/$p/manifest.json || data/$p.csv -nt models/$p/manifest.json ]] ||
    ! grep -q '"extrapolation_rate"' models/$p/manifest.json ||
    ! grep -q '"size_bins"' models/$p/manifest.json ||
    ! grep -q '"floor_outputs_alive"' models/$p/manifest.json ||
    { [[ ${#device[@]} -gt 0 ]] && ! grep -q '"memory_mb"' models/$p/manifest.json; } ||
    { [[ ${#again[@]} -gt 0 ]] && { ! grep -q '"remeasured"' models/$p/manifest.json ||
      [[ data/$p-repeat.csv -nt models/$p/manifest.json ]]; }; } ||
    ! $carb predict --model models/$p --family basic --depth 18 --width 1 --resolution 64 --batch 1 \
      --precision fp32 >/dev/null 2>&1; then
    echo "== training models/$p on data/$p.csv${again[1]:+ (re-measured: ${again[1]})}"
    $carb train --data data/$p.csv "${again[@]}" "${device[@]}" --out models/$p --seed 42 --test-fraction 0.2
  fi
done
echo "== two-stage screening of the 3,072-configuration space"
$carb screen --preset screen --source-model models/cpu-2t --target-model models/cpu-1t \
  --rank-by latency --top-k 100 --latency-max 50 --memory-max 100 --capacity gflops \
  --validate data/cpu-1t.csv "$@"
echo "== energy screening of the paper preset (4,320 configurations) on the H200 model"
$carb screen --preset paper --source-model models/h200 --rank-by energy --energy-max 2 --latency-max 10 \
  --capacity gflops --validate data/h200.csv "$@"
