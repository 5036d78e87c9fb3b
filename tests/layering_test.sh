#!/usr/bin/env bash
# The layering check passes on the tree as it is, and stops a copy of it with one backward include
# planted (space including learn's model.hpp), naming the file and both modules.
#   tests/layering_test.sh SOURCE_DIR SCRATCH_DIR
set -euo pipefail
src=$1 work=$2/layering_test
python3 "$src/scripts/check_layers.py" "$src"
rm -rf "$work" && mkdir -p "$work"
cp -r "$src/src" "$src/include" "$work/"
echo '#include "carb/model.hpp"' >>"$work/src/space/presets.cpp"
if python3 "$src/scripts/check_layers.py" "$work" 2>"$work/err"; then
  echo "a backward include passed the check" >&2
  exit 1
fi
grep -q "src/space/presets.cpp:.*module space includes carb/model.hpp of learn" "$work/err"
mkdir "$work/src/extras" && touch "$work/src/extras/x.cpp"  # a folder no module owns would not be built
python3 "$src/scripts/check_layers.py" "$work" 2>"$work/err" && exit 1
grep -q "src/extras/: a folder that is not a module" "$work/err"
echo "layering check: ok"
