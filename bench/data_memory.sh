#!/bin/sh
# Peak memory and time of the `data` commands (validate, info) on a wide dataset, for one or more
# carb binaries side by side in one run: ROWS rows of bench/many_levels.py (formulas, not
# measurements) with the 13 side columns the shipped CPU data carries (protocol_id, latency_cv, ...,
# consistent with each row's latency), less the rows `carb data validate` refuses.
#
# Usage: bench/data_memory.sh ROWS CARB [CARB ...]     e.g. bench/data_memory.sh 300000 /tmp/old/carb build/carb
# Each binary finds its libraries by LD_LIBRARY_PATH=its directory. Ratios are to the first binary.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 ROWS CARB [CARB ...]" >&2; exit 2; }
rows=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/many_levels.py" "$rows" > "$work/narrow.csv"
python3 - "$here/../data/cpu-2t.csv" "$work/narrow.csv" "$work/wide.csv" <<'EOF'
import csv, random, sys
shipped, narrow, wide = sys.argv[1:4]
src = list(csv.DictReader(open(shipped)))
rd = csv.DictReader(open(narrow))
core = rd.fieldnames
side = [k for k in src[0] if k not in core]
w = csv.writer(open(wide, "w", newline=""))
w.writerow(core + side)
rng = random.Random(1)
for r in rd:
    s = dict(rng.choice(src))
    lat = float(r["latency_ms"])
    s.update(passes="10", timed_s="%.6g" % (lat * 10 / 1000), latency_median_ms="%.6g" % lat,
             latency_std_ms="%.6g" % (lat * 0.01), latency_cv="0.01")
    w.writerow([r[c] for c in core] + [s[c] for c in side])
EOF
first=$1
LD_LIBRARY_PATH=$(dirname "$first") "$first" data validate "$work/wide.csv" 2>&1 | grep -o '^[^:]*wide.csv:[0-9]*' |
  sed 's/.*://' | sort -un > "$work/bad.txt" || true
awk 'NR==FNR{b[$1]=1;next} !(FNR in b)' "$work/bad.txt" "$work/wide.csv" > "$work/data.csv"
n=$(($(wc -l < "$work/data.csv") - 1))
echo "dataset: $n rows x $(head -1 "$work/data.csv" | tr ',' '\n' | wc -l) columns, $(($(wc -c < "$work/data.csv") / 1048576)) MiB"
base_validate=""; base_info=""
for bin in "$@"; do
  for cmd in validate info; do
    out=$(LD_LIBRARY_PATH=$(dirname "$bin") /usr/bin/time -f "%M %e" "$bin" data $cmd "$work/data.csv" 2>&1 >/dev/null | tail -1)
    kb=${out% *}; s=${out#* }
    eval "base=\${base_$cmd}"
    [ -n "$base" ] || { eval "base_$cmd=$kb"; base=$kb; }
    awk -v b="$bin" -v c="$cmd" -v kb="$kb" -v s="$s" -v n="$n" -v base="$base" 'BEGIN {
      printf "%-28s data %-8s peak %7.1f MB  %6.0f bytes/row  %6.2f s  memory x%.2f of the first\n",
             b, c, kb / 1024, kb * 1024 / n, s, kb / base }'
  done
done
