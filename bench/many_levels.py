#!/usr/bin/env python3
"""A synthetic dataset with many trained levels, for the monotone hold's whole-command figures.

Usage: python3 bench/many_levels.py ROWS [SEED] > many.csv

Rows of basic fp32 networks over 26 depths (10-60) and 151 widths (0.25-1.75), at resolutions
32-288 in steps of 2 and batches 1-64 (129 x 64 levels once enough rows are drawn): about five rows
per network at 20,000 rows, as a hostile tester's file had. Costs are formulas, not measurements
(latency grows with FLOPs, with 5% noise; memory with the activations and the weights, inside the
band `carb data validate` accepts), so nothing here is a measured figure: it exercises carb's
own work on many levels. Widths that build the same channels count as one network (validate
refuses such repeats).
"""
import math
import random
import sys


def channels(width):
    return tuple(max(8, math.floor(base * width / 8 + 0.5) * 8) for base in (64, 64, 128, 256, 512))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: many_levels.py ROWS [SEED]")
    n = int(sys.argv[1])
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) == 3 else 1)
    print("platform,family,depth,width,resolution,batch,precision,status,latency_ms,energy_j,"
          "peak_memory_mb,avg_sm_util,avg_mem_util")
    seen = set()
    while len(seen) < n:
        d = rng.randrange(10, 62, 2)
        w = round(rng.randrange(25, 176) / 100, 2)
        r = rng.randrange(32, 290, 2)
        b = rng.randint(1, 64)
        key = (d, channels(w), r, b)
        if key in seen:
            continue
        seen.add(key)
        flops = d * w * w * r * r * b
        latency = 1e-5 * flops * rng.uniform(0.95, 1.05) + 0.2
        memory = 1.6e-4 * w * r * r * b + 12 * d * w * w + 30
        print(f"cpu-x,basic,{d},{w},{r},{b},fp32,ok,{latency:.6g},,{memory:.6g},,")


if __name__ == "__main__":
    main()
