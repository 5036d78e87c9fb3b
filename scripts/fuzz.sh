#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang + ASan/UBSan in build-fuzz/, assembles their
# seed corpora from files already in the repository, replays the saved reproducers and fuzzes
# each target. Exits non-zero on any new finding and prints where its reproducer was saved.
#
#   scripts/fuzz.sh [SECONDS]   each target for SECONDS (default 10: the CI run)
#   scripts/fuzz.sh --runs N    each target for N executions (the long run: --runs 1000000)
#   FUZZ_TARGETS="fuzz_config fuzz_store" scripts/fuzz.sh ...   only these targets
#   FUZZ_TIMEOUT=60 scripts/fuzz.sh --runs 1000000   a longer per-input limit for a long run beside
#     other work (a run at nice 19 on a busy machine was once stopped by a 13 s stall in ASan's
#     allocator; the input replayed in 0.5 s)
#
# A finding listed in fuzz/known_findings.txt (a bug reported but not fixed yet) is printed as
# KNOWN and does not fail the run; anything else does.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

limit=(-max_total_time=10)
case "${1:-}" in
  --runs) limit=(-runs="${2:?--runs needs a count}") ;;
  "") ;;
  *) limit=(-max_total_time="$1") ;;
esac

# Build (its own directory and compiler; the gcc build in build/ is untouched).
build=build-fuzz
start=$(date +%s)
if [[ ! -f $build/build.ninja ]]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCARB_FUZZ=ON -DCARB_WITH_TORCH=OFF \
    -DCARB_BUILD_TESTS=OFF -DCARB_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Fuzz >/dev/null
fi
ninja -C "$build" -j"${FUZZ_JOBS:-2}" >/dev/null
echo "fuzz: build-fuzz ready in $(($(date +%s) - start)) s"

# Seed corpora: heads of the shipped datasets (short, so executions stay fast; libFuzzer grows
# inputs itself), configuration CSVs cut from them, and stores made from them with sqlite3.
corpus=$build/corpus
rm -rf "$corpus"
mkdir -p "$corpus"/{fuzz_dataset_csv,fuzz_config,fuzz_store,fuzz_bundle}
n=0
for csv in data/*.csv data/extra/*.csv data/gpu/*.csv; do
  [[ -f $csv ]] || continue
  n=$((n + 1))
  head -n 12 "$csv" >"$corpus/fuzz_dataset_csv/data$n.csv"
  # The six configuration columns, wherever they sit in the header.
  head -n 6 "$csv" | awk -F, 'NR==1 { for (i = 1; i <= NF; i++) col[$i] = i }
    { print $col["family"] "," $col["depth"] "," $col["width"] "," $col["resolution"] "," $col["batch"] "," $col["precision"] }' \
    >"$corpus/fuzz_config/configs$n.csv"
done
printf 'basic\n' >"$corpus/fuzz_config/family"
printf 'bf16\n' >"$corpus/fuzz_config/precision"
printf '2/8\n' >"$corpus/fuzz_config/shard"
printf 'screen\n' >"$corpus/fuzz_config/preset"

# A real store: the schema as src/profile/store.cpp creates it, filled from a dataset head.
schema=$(sed -n '/R"sql(/,/)sql"/p' src/profile/store.cpp | sed '1d;$d')
for csv in data/h200.csv data/cpu-1t.csv; do
  db=$corpus/fuzz_store/$(basename "$csv" .csv).db
  head -n 8 "$csv" >"$build/seed_rows.csv"
  sqlite3 "$db" <<SQL
$schema
PRAGMA user_version=1;
.import --csv $build/seed_rows.csv seed
INSERT INTO measurements (platform, config_key, protocol_id, family, depth, width, resolution, batch,
  precision, status, latency_ms, energy_j, peak_memory_mb, avg_sm_util, avg_mem_util, extra_json)
SELECT platform, family || '-' || depth || '-w' || width || '-r' || resolution || '-b' || batch || '-' || precision,
  'seed', family, depth, width, resolution, batch, precision, status, NULLIF(latency_ms, ''), NULLIF(energy_j, ''),
  NULLIF(peak_memory_mb, ''), NULLIF(avg_sm_util, ''), NULLIF(avg_mem_util, ''), '{"passes":"100"}'
FROM seed;
DROP TABLE seed;
INSERT INTO protocols VALUES ('seed', '{"warmup":10}');
VACUUM;
SQL
  # The same rows as text for the target's row mode (byte 0x01, TAB-separated; see fuzz_store.cpp).
  { printf '\001'; sqlite3 -separator $'\t' "$db" "SELECT platform, config_key, protocol_id, family, 'i' || depth,
      'r' || width, 'i' || resolution, 'i' || batch, precision, status, 'r' || latency_ms, 'n', 'r' || peak_memory_mb,
      'n', 'n', extra_json, 'n' FROM measurements"; printf 'P\tseed\t{"warmup":10}\n'; } >"$db.rows"
done
rm -f "$build/seed_rows.csv"
# The bundle target trains its own bundle and writes its seeds from it (see fuzz_bundle.cpp).
CARB_FUZZ_BUNDLE_SEEDS=$corpus/fuzz_bundle OMP_NUM_THREADS=1 "$build/fuzz/fuzz_bundle" >/dev/null 2>&1

# ASan: leaks are findings. allocator_may_return_null: an allocation too large for ASan becomes
# std::bad_alloc as in a normal build (carb code must then fail cleanly; an escaping bad_alloc is
# still a finding) instead of an ASan abort. XGBoost's OpenMP pool is kept to one passive
# thread: spinning workers on a 2-core machine cost more than the target itself.
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE

# What known finding a log shows, if any: every ' && '-separated regex of its signature matches.
known_in() {
  local t=$1 log=$2 kt sig what re all
  while IFS='|' read -r kt sig what; do
    [[ $kt == "$t" && -n $sig ]] || continue
    all=1
    while read -r re; do grep -qE -- "$re" "$log" || all=0; done < <(sed 's/ && /\n/g' <<<"$sig")
    ((all)) && echo "$what" && return
  done < <(grep -v '^#' fuzz/known_findings.txt 2>/dev/null || true)
}

failed=0
declare -A max_len=([fuzz_dataset_csv]=65536 [fuzz_config]=4096 [fuzz_store]=32768 [fuzz_bundle]=16384)
artifacts=$build/findings
mkdir -p "$artifacts"
for t in ${FUZZ_TARGETS:-fuzz_dataset_csv fuzz_config fuzz_store fuzz_bundle}; do
  log=$build/$t.log
  # Replay the saved reproducers one by one: a fixed bug must stay fixed. They join the corpus only
  # when they pass; one that still shows its known finding stays out, so fuzzing goes on past it.
  for r in fuzz/regressions/$t/*; do
    [[ -f $r ]] || continue
    if "$build/fuzz/$t" -rss_limit_mb=2048 -timeout=10 "$r" >"$log" 2>&1; then
      cp "$r" "$corpus/$t/"
    elif known=$(known_in "$t" "$log") && [[ -n $known ]]; then
      printf 'fuzz: %-18s KNOWN     regression %s still fails: %s\n' "$t" "$r" "$known"
    else
      failed=1
      printf 'fuzz: %-18s FINDING   regression %s fails again; log: %s\n' "$t" "$r" "$log"
    fi
  done
  t0=$(date +%s)
  set +e
  "$build/fuzz/$t" "${limit[@]}" -max_len="${max_len[$t]}" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/$t-" "$corpus/$t" >"$log" 2>&1
  rc=$?
  set -e
  secs=$(($(date +%s) - t0))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  if ((rc == 0)); then
    printf 'fuzz: %-18s clean     %10s executions  %6s exec/s  %4d s\n' "$t" "${execs:-?}" "${rate:-?}" "$secs"
    continue
  fi
  reproducer=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
  known=$(known_in "$t" "$log")
  if [[ -n $known ]]; then
    printf 'fuzz: %-18s KNOWN     after %s executions (%s s): %s\n' "$t" "${execs:-?}" "$secs" "$known"
  else
    failed=1
    printf 'fuzz: %-18s FINDING   after %s executions (%s s); reproducer: %s\n' "$t" "${execs:-?}" "$secs" \
      "${reproducer:-none, see log}"
    grep -E 'ERROR|SUMMARY|carb fuzz finding|terminate called|what\(\)' "$log" | head -5 | sed 's/^/fuzz:   /'
  fi
  echo "fuzz:   log: $log; replay: $build/fuzz/$t ${reproducer:-<file>}"
done
exit $failed
