#!/usr/bin/env python3
"""Checks, before a GPU lease spends anything on building, that the files it would continue were
measured on this GPU, and says which energy window the campaign's store was measured with.

    scripts/gpu_preflight.py --platform h100 --gpu-name "NVIDIA H100 80GB HBM3"
        [--store data/gpu/h100-campaign.db ...] [--study data/gpu/h100-window-study.csv] [--plan plan.csv]

Exit 1 with one line when a store's protocol record, the window study's sidecar or the plan's
sidecar names another GPU (or, for a plan, another platform); otherwise prints the --energy-ticks
the first store's rows of this platform were measured with (nothing when it records none), so that
a lease resumes its campaign under the same protocol id. Stores are opened read-only and immutable:
nothing, not even a -wal or -shm file, is written beside them. (scripts/gpu_profile.sh; a review of
it found each of these discovered only minutes into a lease, or not at all.)
"""
import argparse
import json
import os
import sqlite3
import sys


def fail(msg):
    print(f"gpu_preflight: {msg}", file=sys.stderr)
    sys.exit(1)


def gpu_of(record):
    """The GPU a record (protocol settings, a study's sidecar or one of its runs) names, or None."""
    if not isinstance(record, dict):
        return None
    info = record.get("platform_info")
    name = info.get("gpu_name") if isinstance(info, dict) else None
    return name if isinstance(name, str) and name else None


def check_store(path, platform, gpu):
    """The energy ticks of this platform's most measured protocol in the store (None when unknown)."""
    try:
        con = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
        settings = {pid: json.loads(text) for pid, text in con.execute("SELECT id, settings FROM protocols")}
        settings = {pid: s if isinstance(s, dict) else {} for pid, s in settings.items()}
        counts = con.execute("SELECT protocol_id, count(*) FROM measurements WHERE platform = ? GROUP BY protocol_id "
                             "ORDER BY 2 DESC", (platform,)).fetchall()
        con.close()
    except (sqlite3.Error, ValueError) as e:
        fail(f"{path}: not a readable carb store ({e})")
    for pid, s in settings.items():
        if gpu_of(s) not in (None, gpu):
            fail(f"{path} records protocol {pid} as measured on '{gpu_of(s)}', and this GPU is '{gpu}': "
                 "it is another GPU's campaign (set CARB_GPU_PLATFORM, or CARB_GPU_RESUME_DB to another store)")
    if not counts:
        return None
    ticks = settings.get(counts[0][0], {}).get("energy_ticks")
    return ticks if isinstance(ticks, int) and ticks > 0 else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--platform", required=True)
    ap.add_argument("--gpu-name", required=True)
    ap.add_argument("--store", action="append", default=[])
    ap.add_argument("--study")
    ap.add_argument("--plan")
    a = ap.parse_args()
    ticks = None
    for i, store in enumerate(a.store):
        if os.path.exists(store):
            t = check_store(store, a.platform, a.gpu_name)
            ticks = t if i == 0 else ticks
    if a.study and os.path.exists(a.study + ".json"):
        try:
            side = json.load(open(a.study + ".json"))
        except ValueError as e:
            fail(f"{a.study}.json: not JSON ({e})")
        resumed = side.get("resumed", []) if isinstance(side, dict) else []
        runs = [side] + (resumed if isinstance(resumed, list) else [])
        for run in runs:
            if gpu_of(run) not in (None, a.gpu_name):
                fail(f"{a.study} holds traces measured on '{gpu_of(run)}', and this GPU is '{a.gpu_name}': "
                     "its window study is another GPU's")
    if a.plan:
        side = os.path.splitext(a.plan)[0] + ".json"
        try:
            planned = json.load(open(side)).get("planned_for", {})
        except (OSError, ValueError, AttributeError):
            planned = {}
        platform = planned.get("platform") if isinstance(planned, dict) else None
        if platform and platform != a.platform:
            fail(f"{a.plan} was planned for platform '{platform}' (its sidecar {side}), and this lease measures "
                 f"'{a.platform}': plan with models/{a.platform} and --exclude data/{a.platform}.csv")
    if ticks:
        print(ticks)


if __name__ == "__main__":
    main()
