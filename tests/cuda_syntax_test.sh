#!/usr/bin/env bash
# The cuda backend compiles only where a CUDA toolkit is, i.e. during a scarce GPU lease. This
# checks it here: a compile-only pass (-fsyntax-only, warnings as errors) of
# src/profile/cuda_backend_torch.cpp with CARB_TORCH_CUDA defined, against LibTorch's own CUDA
# headers and a few declarations standing in for the CUDA runtime's (written below; LibTorch's
# inline headers need them, carb's code calls none of them). Skipped (77) without those headers.
#   tests/cuda_syntax_test.sh SOURCE_DIR BUILD_DIR CXX TORCH_INCLUDE...
set -euo pipefail
src=$1 build=$2 cxx=$3
shift 3
[ -f /usr/include/c10/cuda/CUDACachingAllocator.h ] || { echo "no LibTorch CUDA headers: skipped"; exit 77; }
stub=$build/cuda_syntax_stub
mkdir -p "$stub/c10/cuda/impl"
echo '#pragma once' >"$stub/c10/cuda/impl/cuda_cmake_macros.h"
{
  echo '#pragma once'
  echo 'typedef struct CUstream_st* cudaStream_t;'
  echo 'typedef struct CUevent_st* cudaEvent_t;'
  echo 'typedef int cudaError_t;'
  echo 'enum { cudaSuccess = 0, cudaErrorNotReady = 600 };'
  echo 'typedef int cudaStreamCaptureStatus;'
  echo 'struct cudaDeviceProp { char name[256]; };'
  echo 'enum cudaMemcpyKind { cudaMemcpyHostToDevice };'
  echo 'inline const char* cudaGetErrorString(cudaError_t) { return ""; }'
  echo 'inline cudaError_t cudaGetLastError() { return 0; }'
  for f in cudaMemcpyAsync cudaStreamSynchronize cudaStreamQuery cudaStreamGetPriority \
    cudaDeviceGetStreamPriorityRange cudaEventQuery cudaEventSynchronize cudaEventRecord \
    cudaEventCreateWithFlags cudaEventDestroy cudaStreamWaitEvent cudaEventElapsedTime cudaGetDevice \
    cudaSetDevice cudaFree cudaMalloc; do
    echo "inline cudaError_t $f(...) { return 0; }"
  done
} >"$stub/cuda_runtime_api.h"
printf '#pragma once\n#include "cuda_runtime_api.h"\n' >"$stub/cuda_runtime.h"
printf '#pragma once\n#include "cuda_runtime_api.h"\n' >"$stub/cuda.h"
inc=()
for d in "$@"; do [ "$d" = /usr/include ] || inc+=(-isystem "$d"); done  # -isystem /usr/include breaks #include_next
"$cxx" -std=gnu++20 -fsyntax-only -Wall -Wextra -Wpedantic -Wno-maybe-uninitialized -Werror \
  -DCARB_TORCH_CUDA=1 -DCARB_WITH_TORCH=1 -D_GLIBCXX_USE_CXX11_ABI=1 \
  -I"$stub" -I"$src/src" -I"$src/include" -I"$build/include" "${inc[@]}" \
  "$src/src/profile/cuda_backend_torch.cpp"
echo "cuda backend: compiles"
