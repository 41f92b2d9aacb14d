#!/usr/bin/env python3
"""Tables and charts for scripts/compare.

Reads DIR/<transport>-n<N>-<coll>-<lib>-r<round>.json (hop-bench and its MPI
peers, same format) and DIR/p2p-<transport>.json (hop-p2p-bench); prints one
table per collective with the median time of the rounds per library (of an
even count, the lower of the middle two; #wrong the most of any round), the
ratios, and the performance targets; writes DIR/<transport>-n<N>-<coll>.svg.
"""
import glob
import json
import math
import os
import re
import sys

LIBS = [("hop", "hop"), ("hopflat", "hop flat"), ("hopcyc", "hop cyclic"), ("ompi", "Open MPI"),
        ("ompihan", "OMPI HAN"), ("mpich", "MPICH")]
COLORS = {"hop": "#d62728", "hopflat": "#ff7f0e", "hopcyc": "#8c564b", "ompi": "#1f77b4", "ompihan": "#9467bd", "mpich": "#2ca02c"}


def load(out):
    runs = {}
    pat = re.compile(r"(\w+)-n(\d+)-(\w+)-(hopflat|hopcyc|hop|ompihan|ompi|mpich)-r(\d+)(?:-\w+)?\.json$")
    for path in glob.glob(os.path.join(out, "*.json")):
        m = pat.search(os.path.basename(path))
        if not m:
            continue
        t, n, c, lib, _ = m.groups()
        try:
            with open(path) as f:
                res = json.load(f)["results"]
        except (OSError, ValueError, KeyError) as e:
            print(f"compare: skipping {path}: {e}")
            continue
        per = runs.setdefault((t, int(n), c), {}).setdefault(lib, {})
        for row in res:
            per.setdefault(row["size"], []).append(row)
    # one round's luck must not decide a ratio: the median round
    for libs in runs.values():
        for lib, per in libs.items():
            for size, rows in per.items():
                rows.sort(key=lambda r: r["time_us"])
                mid = dict(rows[(len(rows) - 1) // 2])
                mid["wrong"] = max(r["wrong"] for r in rows)
                per[size] = mid
    return runs


def p2p_bw(out, t):
    """Largest streaming bandwidth (GB/s) reported by hop-p2p-bench."""
    try:
        with open(os.path.join(out, f"p2p-{t}.json")) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    best = None

    def walk(x):
        nonlocal best
        if isinstance(x, dict):
            for k, v in x.items():
                kl = k.lower()
                if isinstance(v, (int, float)) and "bw" in kl and ("gb" in kl or "mbps" in kl):
                    # hop-p2p-bench writes bw_MBps (1e6 B/s)
                    v = v / 1000 if "mbps" in kl else v
                    best = v if best is None else max(best, v)
                else:
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(doc)
    return best


def fmt_size(b):
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= div and b % div == 0:
            return f"{b // div}{unit}"
    return str(b)


def table(key, libs):
    t, n, c = key
    print(f"\n== {c}, {t}, {n} ranks: time (us), ratio = peer time / hop time (> 1: hop faster) ==")
    present = [(k, name) for k, name in LIBS if k in libs]
    hdr = f"{'size':>8} " + " ".join(f"{name + '(us)':>13}" for _, name in present)
    hdr += " " + " ".join(f"{name + '/hop':>12}" for k, name in present if k != "hop")
    hdr += f" {'hop busbw':>10} {'wrong':>6}"
    print(hdr)
    sizes = sorted(set().union(*(libs[k].keys() for k, _ in present)))
    for s in sizes:
        cells = []
        for k, _ in present:
            row = libs[k].get(s)
            cells.append(f"{row['time_us']:13.2f}" if row else f"{'-':>13}")
        hop = libs.get("hop", {}).get(s)
        for k, _ in present:
            if k == "hop":
                continue
            peer = libs[k].get(s)
            cells.append(f"{peer['time_us'] / hop['time_us']:12.2f}" if hop and peer and hop["time_us"] > 0 else f"{'-':>12}")
        bus = f"{hop['busbw']:10.3f}" if hop else f"{'-':>10}"
        wrong = max((libs[k][s]["wrong"] for k, _ in present if s in libs[k]), default=0)
        print(f"{fmt_size(s):>8} " + " ".join(cells) + f" {bus} {wrong:6d}")


def ratios(libs, lo=0, hi=math.inf):
    hop, ompi = libs.get("hop", {}), libs.get("ompi", {})
    return [(s, ompi[s]["time_us"] / hop[s]["time_us"]) for s in sorted(hop)
            if s in ompi and lo <= s <= hi and hop[s]["time_us"] > 0]


def targets(runs, out):
    print("\n== targets (ratios measured in this run) ==")
    for t in sorted({k[0] for k in runs}):
        two = runs.get((t, 2, "allreduce"), {})
        r = ratios(two, lo=64 << 10)
        if r:
            worst = min(r, key=lambda x: x[1])
            print(f"{t}: AllReduce 2 ranks >= 64K: hop busbw / Open MPI busbw min {worst[1]:.2f} "
                  f"at {fmt_size(worst[0])} (target >= 1.20): {'MET' if worst[1] >= 1.2 else 'MISSED'}")
        four = runs.get((t, 4, "allreduce"), {})
        r = ratios(four, lo=64 << 10)
        if r:
            worst = min(r, key=lambda x: x[1])
            print(f"{t}: AllReduce 4 ranks >= 64K: min ratio {worst[1]:.2f} at {fmt_size(worst[0])} "
                  f"(target >= 1.00): {'MET' if worst[1] >= 1.0 else 'MISSED'}")
        r = ratios(two, hi=8)
        if r:
            print(f"{t}: AllReduce 8 B, 2 ranks: Open MPI {two['ompi'][8]['time_us']:.2f} us, "
                  f"hop {two['hop'][8]['time_us']:.2f} us, ratio {r[-1][1]:.2f} (target >= 1.00): "
                  f"{'MET' if r[-1][1] >= 1.0 else 'MISSED'}")
        bw = p2p_bw(out, t)
        big = [row for s, row in two.get("hop", {}).items() if s >= 16 << 20]
        if bw and big:
            best = max(row["busbw"] for row in big)
            print(f"{t}: AllReduce busbw >= 16M {best:.3f} GB/s vs streaming P2P {bw:.3f} GB/s: "
                  f"{best / bw:.2f} (target >= 0.90): {'MET' if best / bw >= 0.9 else 'MISSED'}")


def cluster_lines(runs, out):
    """Emulated clusters (transport hHxR): the largest AllReduce's busbw per
    library beside the streaming bandwidth between two hosts."""
    for (t, n, c), libs in sorted(runs.items()):
        if c != "allreduce" or not re.fullmatch(r"h\d+x\d+", t):
            continue
        bw = p2p_bw(out, t)
        top = max(libs.get("hop", {}) or [0])
        cells = [f"{name} {libs[k][top]['busbw']:.3f}" for k, name in LIBS
                 if top in libs.get(k, {})]
        print(f"{t}: AllReduce {fmt_size(top)} busbw (GB/s): {', '.join(cells)}; "
              f"streaming P2P between two hosts {bw:.3f} GB/s" if bw else
              f"{t}: AllReduce {fmt_size(top)} busbw (GB/s): {', '.join(cells)}")


def link_rate():
    """HOP_COMPARE_LINK (tc rate: 1gbit, 800mbit) in bytes per second."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmg]?)bit", os.environ.get("HOP_COMPARE_LINK", ""))
    if not m:
        return None
    return float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)] / 8


def cluster_targets(runs):
    """Issue targets on an emulated cluster, per AllReduce size: hop against
    the link bound 2(H-1)/H * m / rate, cyclic against block, hop against
    Open MPI and HAN, and the flat ring beside it."""
    rate, hosts = link_rate(), int(os.environ.get("HOP_COMPARE_HOSTS", "0"))
    for (t, n, c), libs in sorted(runs.items()):
        if c != "allreduce" or not re.fullmatch(r"h\d+x\d+", t) or "hop" not in libs:
            continue
        print(f"\n== {t} AllReduce float sum: targets per size ==")
        print(f"{'size':>8} {'hop us':>10} {'bound %':>8} {'cyc/blk':>8} {'OMPI/hop':>9} "
              f"{'HAN/hop':>8} {'flat/hop':>9}")
        for s in sorted(libs["hop"]):
            hop = libs["hop"][s]["time_us"]

            def ratio(k, s=s, hop=hop):
                row = libs.get(k, {}).get(s)
                return f"{row['time_us'] / hop:.2f}" if row and hop > 0 else "-"
            bound = "-"
            if rate and hosts > 1 and s > 0 and hop > 0:
                bound = f"{100 * 2 * (hosts - 1) / hosts * s / rate * 1e6 / hop:.0f}"
            cyc = libs.get("hopcyc", {}).get(s)
            cb = f"{cyc['time_us'] / hop:.2f}" if cyc and hop > 0 else "-"
            print(f"{fmt_size(s):>8} {hop:10.1f} {bound:>8} {cb:>8} {ratio('ompi'):>9} "
                  f"{ratio('ompihan'):>8} {ratio('hopflat'):>9}")
        print("targets: bound % >= 90 from 4M; cyc/blk <= 1.10; OMPI/hop >= 1.2 and "
              "HAN/hop >= 1.0 from 64K to 64M; 8 B OMPI/hop >= 1.0")


def chart(key, libs, path):
    w, h, m = 640, 400, 60
    pts = {k: sorted((s, row["busbw"]) for s, row in v.items() if s > 0) for k, v in libs.items()}
    allp = [p for v in pts.values() for p in v]
    if not allp:
        return
    xs = [math.log2(s) for s, _ in allp]
    ymax = max(b for _, b in allp) * 1.1 or 1
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1

    def X(s):
        return m + (math.log2(s) - x0) / (x1 - x0) * (w - 2 * m)

    def Y(b):
        return h - m - b / ymax * (h - 2 * m)
    t, n, c = key
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
         '<rect width="100%" height="100%" fill="white"/>',
         f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="14">{c} busbw, {t}, {n} ranks</text>',
         f'<line x1="{m}" y1="{h - m}" x2="{w - m}" y2="{h - m}" stroke="black"/>',
         f'<line x1="{m}" y1="{m}" x2="{m}" y2="{h - m}" stroke="black"/>',
         f'<text x="{w / 2}" y="{h - 15}" text-anchor="middle">message size (bytes, log scale)</text>',
         f'<text x="15" y="{h / 2}" transform="rotate(-90 15 {h / 2})" text-anchor="middle">busbw (GB/s)</text>']
    for e in range(int(x0), int(x1) + 1, 2):
        o.append(f'<text x="{X(2 ** e):.1f}" y="{h - m + 15}" text-anchor="middle">{fmt_size(2 ** e)}</text>')
    for i in range(5):
        b = ymax * i / 4
        o.append(f'<text x="{m - 5}" y="{Y(b) + 4:.1f}" text-anchor="end">{b:.2f}</text>')
    for i, (k, name) in enumerate(LIBS):
        if k not in pts or not pts[k]:
            continue
        line = " ".join(f"{X(s):.1f},{Y(b):.1f}" for s, b in pts[k])
        o.append(f'<polyline fill="none" stroke="{COLORS[k]}" stroke-width="2" points="{line}"/>')
        o.append(f'<text x="{m + 10}" y="{m + 15 * i}" fill="{COLORS[k]}">{name}</text>')
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def main():
    out = sys.argv[1]
    runs = load(out)
    if not runs:
        print(f"compare: no results in {out}")
        return 1
    for key in sorted(runs):
        table(key, runs[key])
        chart(key, runs[key], os.path.join(out, "%s-n%d-%s.svg" % key))
    targets(runs, out)
    cluster_lines(runs, out)
    cluster_targets(runs)
    print(f"\ncharts: {out}/*.svg")
    return 0


if __name__ == "__main__":
    sys.exit(main())
