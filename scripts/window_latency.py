#!/usr/bin/python3
"""Two latencies one GPU row holds: `latency_ms`, the mean of the timing loop's passes (stopped at a
1% confidence interval, so as few as 10 passes, tens of milliseconds), and the mean pass time of the
whole energy window the loop opens (`energy_window_s` / `energy_passes`, about 1 s, every pass
synchronized alike). Energy per pass comes from the window, so `energy_j / latency_ms` is the
device's power only where the two agree.

Prints, for a dataset, how far the loop's latency sits from the window's (the ratio's quantiles), how
many rows' energy over loop latency falls below the idle power the meter check recorded (a power no
running GPU draws), and, with --repeat, how well each latency agrees with a second measurement of the
same configurations (R^2 and median |deviation|).

--write-window OUT.csv writes the dataset with latency_ms taken from the window (passes and timed_s
the window's too, the loop's spread columns emptied), to train and score a model on that latency: a
derived file, kept out of data/.

Usage: /usr/bin/python3 scripts/window_latency.py data/h200.csv [--repeat data/gpu/h200-repeat.csv]
       [--write-window /tmp/h200-window.csv]
"""
import argparse
import csv
import json
import math
import os
import sys
import tempfile

KEY = ["family", "depth", "width", "resolution", "batch", "precision"]


def read_csv(path):
    """(header, rows) of a CSV read once; a one-line error for what cannot be read as one."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            rows = list(reader)
            header = reader.fieldnames or []
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        sys.exit(f"error: {path}: {e}")
    for i, r in enumerate(rows):
        if None in r:
            sys.exit(f"error: {path}: line {i + 2} has more fields than the header's {len(header)}")
    return header, rows


def positive(text):
    """The value of a cell holding a positive finite number, else None."""
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0 else None


def measures(r):
    """(loop latency ms, window mean pass ms, energy J, protocol id) of an ok row, None where any is
    missing, not a number, not finite or not above zero."""
    if r.get("status") != "ok":
        return None
    loop, window_s, passes, energy = (positive(r.get(c)) for c in ("latency_ms", "energy_window_s", "energy_passes",
                                                                   "energy_j"))
    if loop is None or window_s is None or passes is None or energy is None or passes != int(passes):
        return None
    return loop, window_s * 1000 / passes, energy, r.get("protocol_id", "")


def rows_of(path, rows):
    """Configuration -> measures over the usable ok rows, and how many ok rows were not usable.
    A configuration twice is refused: which of the two to compare would be a guess."""
    out, where, unusable = {}, {}, 0
    for i, r in enumerate(rows):
        m = measures(r)
        if m is None:
            unusable += r.get("status") == "ok"
            continue
        key = tuple(r.get(k, "") for k in KEY)
        if key in out:
            sys.exit(f"error: {path}: line {i + 2} measures {'-'.join(key)} again (line {where[key] + 2}); "
                     "one row per configuration")
        out[key], where[key] = m, i
    return out, unusable


def idle_power(path):
    """The idle power of each protocol's meter check, from the CSV's provenance sidecar; a sidecar
    that is not one is said and left out."""
    side = os.path.splitext(path)[0] + ".json"
    if not os.path.lexists(side):
        return {}
    try:
        with open(side, encoding="utf-8") as f:
            protocols = json.load(f).get("protocols")
        if not isinstance(protocols, dict):
            raise ValueError("no protocols object")
    except (OSError, ValueError, UnicodeDecodeError, AttributeError) as e:
        print(f"warning: {side} is no provenance sidecar ({e}): idle power not compared", file=sys.stderr)
        return {}
    out = {}
    for k, v in protocols.items():
        idle = v.get("meter_check", {}).get("idle_power_w") if isinstance(v, dict) and isinstance(
            v.get("meter_check"), dict) else None
        if idle is None:
            continue
        if isinstance(idle, bool) or not isinstance(idle, (int, float)) or not math.isfinite(idle) or idle <= 0:
            print(f"warning: {side}: protocol {k}'s idle_power_w {idle!r} is no power: left out", file=sys.stderr)
            continue
        out[k] = float(idle)
    return out


def quantile(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def r2(xs, ys):
    m = sum(ys) / len(ys)
    ss = sum((y - m) ** 2 for y in ys)
    return 1 - sum((x - y) ** 2 for x, y in zip(xs, ys)) / ss if ss > 0 else float("nan")


def check_output(path):
    """Refuses an output that is no new file in an existing folder, before any work."""
    if not path:
        sys.exit("error: --write-window needs a file name")
    if os.path.lexists(path):
        sys.exit(f"error: {path} exists; give a new file")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        sys.exit(f"error: {folder} is no folder to write {os.path.basename(path)} in")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data")
    ap.add_argument("--repeat", help="a second measurement of some of the same configurations")
    ap.add_argument("--write-window", metavar="OUT", help="write the dataset with the window's latency to OUT")
    a = ap.parse_args()
    if a.write_window is not None:
        check_output(a.write_window)
    header, data = read_csv(a.data)
    rows, unusable = rows_of(a.data, data)
    if not rows:
        sys.exit(f"error: {a.data} has no ok row with latency_ms, energy_j, energy_window_s and energy_passes "
                 "all above zero")
    ratios = [loop / window for loop, window, _, _ in rows.values()]
    print(f"{a.data}: {len(rows)} rows with an energy window")
    if unusable:
        print(f"{unusable} other ok row{'s' if unusable > 1 else ''} left out: a latency, energy or window missing, "
              "not a number or not above zero")
    print("loop latency / window mean pass time: " +
          ", ".join(f"p{int(q * 100)} {quantile(ratios, q):.3f}" for q in (0.1, 0.5, 0.9)) +
          f", max {max(ratios):.3f}, min {min(ratios):.3f}")
    off = sum(abs(r - 1) > 0.1 for r in ratios)
    print(f"rows whose two latencies differ by more than 10%: {off} of {len(rows)}")
    idle = idle_power(a.data)
    if idle:
        below_loop = sum(e / loop * 1000 < idle.get(p, 0) for loop, _, e, p in rows.values())
        below_window = sum(e / window * 1000 < idle.get(p, 0) for _, window, e, p in rows.values())
        print("idle power recorded by the meter check: " + ", ".join(f"{v:.1f} W" for v in sorted(idle.values())))
        print(f"rows whose energy over latency is below it: {below_loop} with the loop's latency, "
              f"{below_window} with the window's")
    if a.repeat:
        if os.path.exists(a.repeat) and os.path.exists(a.data) and os.path.samefile(a.repeat, a.data):
            print(f"warning: --repeat {a.repeat} is the data file itself: it agrees with itself", file=sys.stderr)
        again, _ = rows_of(a.repeat, read_csv(a.repeat)[1])
        keys = [k for k in again if k in rows]
        if len(keys) < 2:
            sys.exit(f"error: {a.repeat} shares fewer than 2 configurations with {a.data}")
        print(f"agreement with {a.repeat} ({len(keys)} configurations measured again):")
        for name, i in (("loop latency", 0), ("window mean", 1)):
            # The repeat scored against the dataset's row, as data/gpu/README.md scores it.
            xs = [again[k][i] for k in keys]
            ys = [rows[k][i] for k in keys]
            dev = [abs(x / y - 1) for x, y in zip(xs, ys)]
            print(f"  {name:13s} R2 {r2(xs, ys):.3f}  log R2 {r2([math.log(x) for x in xs], [math.log(y) for y in ys]):.3f}"
                  f"  median |dev| {100 * quantile(dev, 0.5):.1f}%  p90 {100 * quantile(dev, 0.9):.1f}%")
    if a.write_window is not None:
        write_window(a.write_window, header, data)


def write_window(dst, header, rows):
    """The rows with each usable window's latency, written to a temporary file beside dst and linked
    into place: dst appears whole or not at all, and never replaces a file."""
    n = kept = 0
    for r in rows:
        m = measures(r)
        if m is None:
            kept += r.get("status") == "ok"
            continue
        r["latency_ms"] = repr(m[1])
        for c, v in (("passes", r["energy_passes"]), ("timed_s", r["energy_window_s"]), ("latency_median_ms", ""),
                     ("latency_std_ms", ""), ("latency_cv", ""), ("latency_rel_ci95", "")):
            if c in header:
                r[c] = v
        n += 1
    folder = os.path.dirname(os.path.abspath(dst))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".window-latency-", suffix=".csv")
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.chmod(tmp, 0o666 & ~umask)  # as a file the user creates, not mkstemp's 0600
        with os.fdopen(fd, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=header)
            w.writeheader()
            w.writerows(rows)
        os.link(tmp, dst)
    except OSError as e:
        sys.exit(f"error: {dst}: {e}")
    finally:
        os.unlink(tmp)
    print(f"wrote {dst}: {n} of {len(rows)} rows with the window's latency" +
          (f"; {kept} ok row{'s' if kept > 1 else ''} without a usable window keep{'' if kept > 1 else 's'} the "
           "loop's" if kept else ""))


if __name__ == "__main__":
    main()
