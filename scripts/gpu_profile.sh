#!/usr/bin/env bash
# For a lent GPU machine (e.g. the H200 device): build carb against the PyTorch install's
# CUDA LibTorch, check the NVML layer, and profile a few probe configurations into $OUT.
# Never changes GPU clocks or power settings. Not yet run on a GPU (written 2026-11-29).
# Needs there: CUDA PyTorch, cmake, ninja, and SQLite3/CLI11/nlohmann-json/XGBoost headers+libs
# (carry Debian -dev packages unpacked with dpkg -x into an ignored folder if missing).
set -euxo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
PREFIX=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
ABI=$(python3 -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
python3 -c 'import torch;print(torch.__version__,torch.version.cuda,torch.cuda.is_available())'
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.sm,clocks.mem --format=csv || true
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCARB_BUILD_BENCH=OFF \
  -DCMAKE_PREFIX_PATH="$PREFIX;$PWD/shared/deps" -DCMAKE_CXX_FLAGS="-D_GLIBCXX_USE_CXX11_ABI=$ABI" \
  -DTORCH_CUDA_ARCH_LIST=9.0 2>&1 | tee "$OUT/cmake.log"
grep -q "LibTorch has CUDA" "$OUT/cmake.log"
cmake --build build-gpu -j16 --target carb carb_tests
build-gpu/tests/carb_tests --gtest_filter='Nvml*:RaplMeter*'
cat > "$OUT/cfg.csv" <<'CSV'
family,depth,width,resolution,batch,precision
basic,18,1,224,1,fp32
basic,18,1,224,64,fp16
bottleneck,50,1,224,128,bf16
bottleneck,152,2,1024,4096,fp32
basic,18,1,224,8,fp32
CSV
# Row 4 probes out-of-memory handling: expect status oom, then row 5 ok.
build-gpu/carb profile --backend cuda --db "$OUT/h200.db" --configs "$OUT/cfg.csv" \
  --min-passes 20 --max-passes 50 --cooldown 0.5 --format json
build-gpu/carb data export --db "$OUT/h200.db" --out "$OUT/h200.csv"
