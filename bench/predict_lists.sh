#!/bin/sh
# Wall time of `carb predict --confidence 0.9` on lists of configurations a model was not trained on,
# for one or more carb binaries side by side in one run, and whether each answers what the first does.
# Lists, drawn from the training data's levels (seeded): `between`, N configurations at random
# resolutions and batches inside the trained ranges (mostly between trained levels: answered by
# interpolating between the trained levels around them, and held monotone over the smaller
# configurations below); `past`, N at resolutions up to 224 and batches up to 128 (mostly past the
# trained ranges); and the `paper` preset (trained levels).
#
# Usage: bench/predict_lists.sh DATA MODEL N CARB [CARB ...]
#   e.g. bench/predict_lists.sh data/cpu-2t.csv models/cpu-2t 5000 /tmp/old/carb build/carb
# Each binary finds its libraries by LD_LIBRARY_PATH=its directory. Ratios are to the first binary.
set -eu
[ $# -ge 4 ] || { echo "usage: $0 DATA MODEL N CARB [CARB ...]" >&2; exit 2; }
data=$1 model=$2 n=$3; shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$data" "$n" "$work" <<'EOF'
import csv, random, sys
data, n, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = [r for r in csv.DictReader(open(data)) if r["status"] == "ok"]
depths = {}
for r in rows:
    depths.setdefault(r["family"], set()).add(int(r["depth"]))
widths = sorted({float(r["width"]) for r in rows})
res = sorted({int(r["resolution"]) for r in rows})
bat = sorted({int(r["batch"]) for r in rows})
precs = sorted({r["precision"] for r in rows})
for name, rmax, bmax in (("between", res[-1], bat[-1]), ("past", max(224, res[-1]), max(128, bat[-1]))):
    rng = random.Random(1)
    seen = set()
    with open(f"{work}/{name}.csv", "w") as f:
        f.write("family,depth,width,resolution,batch,precision\n")
        while len(seen) < n:
            fam = rng.choice(sorted(depths))
            c = (fam, rng.choice(sorted(depths[fam])), rng.choice(widths), rng.randint(res[0], rmax),
                 rng.randint(bat[0], bmax), rng.choice(precs))
            if c not in seen:
                seen.add(c)
                f.write("%s,%d,%g,%d,%d,%s\n" % c)
EOF
echo "model: $model; lists of $n configurations drawn from $data's levels"
for list in between past paper; do
  first="" base=""
  k=0
  for bin in "$@"; do
    k=$((k + 1))
    if [ "$list" = paper ]; then what="--preset paper"; else what="--configs $work/$list.csv"; fi
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    OMP_WAIT_POLICY=PASSIVE LD_LIBRARY_PATH=$(dirname "$bin") "$bin" predict --model "$model" $what \
      --confidence 0.9 --format csv > "$work/out$k.csv" 2> "$work/err$k.txt"
    s=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { print a - b }')
    if [ -z "$first" ]; then first=$s base="$work/out$k.csv" same="-"
    elif cmp -s "$base" "$work/out$k.csv"; then same="identical"
    else same="DIFFERENT"; fi
    printf '%-8s %-28s %8.2f s  %6.2fx of the first  answers: %s\n' "$list" "$bin" "$s" \
      "$(awk -v a="$s" -v b="$first" 'BEGIN { print a / b }')" "$same"
  done
done
