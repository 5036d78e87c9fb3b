#!/usr/bin/env python3
"""Fails (exit 1) when a carb module includes a module that comes later in the pipeline.

The modules, in pipeline order, and the public headers each owns, are stated once here and in
docs/ARCHITECTURE.md. A source file belongs to the module of its folder (src/<module>/); a public
header to the module listed below. An include of "carb/X.hpp" or of a private "<module>/X.hpp"
from an earlier module is a backward edge: the build stops (CMake runs this before compiling
libcarb_core) and names the file, the line and the two modules.

    scripts/check_layers.py [ROOT]      (ROOT: the repository, default: this script's parent's parent)
"""
import pathlib
import re
import sys

ORDER = ["util", "stats", "arch", "space", "data", "features", "profile", "learn", "analysis", "screen", "plan",
         "report"]
HEADERS = {
    "util": ["error", "text_table", "matrix", "version", "warning", "interrupt"],
    "stats": ["metrics"],
    "arch": ["config", "network_spec", "arch"],
    "space": ["space"],
    "data": ["dataset", "extra_columns", "data_ops", "combine", "drift"],
    "features": ["features"],
    "profile": ["profiler", "meter", "plugin", "store", "store_export", "store_info"],
    "learn": ["learner", "model", "analytic_estimate", "envelope", "bundle_destination", "training", "training_record",
              "prediction_io", "prediction_notes"],
    "analysis": ["evaluate", "characterize", "characterization", "transfer"],
    "screen": ["screen", "recommend"],
    "plan": ["plan"],
    "report": ["report"],
}
UMBRELLA = "carb"  # carb/carb.hpp includes everything, for users; no module may include it
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([A-Za-z0-9_]+)\.hpp"')


def main(root):
    owner = {h: m for m, hs in HEADERS.items() for h in hs}
    problems = []
    for h in sorted((root / "include" / "carb").glob("*.hpp")):
        if h.stem not in owner and h.stem != UMBRELLA:
            problems.append(f"{h.relative_to(root)}: public header not assigned to a module in scripts/check_layers.py")
    files = [(h, owner[h.stem]) for h in (root / "include" / "carb").glob("*.hpp") if h.stem in owner]
    for d in sorted(p for p in (root / "src").iterdir() if p.is_dir()):
        if d.name not in ORDER:
            problems.append(f"src/{d.name}/: a folder that is not a module in scripts/check_layers.py")
            continue
        files += [(f, d.name) for f in d.rglob("*") if f.suffix in (".cpp", ".hpp")]
    for f, mod in sorted(files):
        for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            folder, stem = m.groups()
            if folder == "carb" and stem == UMBRELLA:
                problems.append(f"{f.relative_to(root)}:{n}: includes the umbrella carb/carb.hpp; include what it uses")
                continue
            dep = owner.get(stem) if folder == "carb" else folder
            if dep in ORDER and ORDER.index(dep) > ORDER.index(mod):
                problems.append(f"{f.relative_to(root)}:{n}: module {mod} includes {folder}/{stem}.hpp of {dep}, "
                                f"which comes after it ({' -> '.join(ORDER)})")
    for p in problems:
        print("layering: " + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[1]))
