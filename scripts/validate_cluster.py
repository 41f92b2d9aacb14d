"""validate-model --cluster: does hop's choice win on a network whose
links, not the CPU, set the time?

On emulated hosts (scripts/hop-cluster: namespaces joined by tbf-shaped
links) it measures, for each placement H hosts x L ranks, each collective
and each size, every algorithm the collective has (the flat ones and the
hierarchical form, whose phase algorithms the model picks) with hop-bench
--algo, and the library's own choice (hop-bench --plan: the same
hop_coll_plan() the collective calls). A point is within 10 % when the
measured time of the algorithm hop picks is at most 1.1 x the fastest
measured one. The model's links come from hop-probe run on the same
cluster (its two-class HOP_PROFILE: intra-host shm, inter-host tcp), and
every rank loads that profile, as a user would.

Measured size-major inside one cluster per placement (each algorithm over
all sizes in one hop-run, the algorithms in turn), with hop-bench's
--budget-ms so that large sizes run once or twice and small ones many
times. Needs root (scripts/hop-cluster makes namespaces).
"""
import argparse
import os
import re
import subprocess
import sys
import time

COLLS = ["allreduce", "broadcast", "reduce", "allgather", "reducescatter"]
DEFAULT_SIZES = [8 * 8 ** i for i in range(8)] + [64 << 20]  # 8 B .. 64 MiB
LARGE = 2 << 20     # from here the links set the time (docs/results)
ROW = re.compile(r"^\s*(?:\[\d+\]\s*)?(\d+)\s+(\d+)\s+\S+\s+\S+\s+-?\d+\s+"
                 r"([\d.]+)\s+[\d.]+\s+[\d.]+\s+(-?\d+)\s*$")
PLAN = re.compile(r"# plan (\d+) algo (\S+) intra (\S+) inter (\S+) chunk "
                  r"(\d+) depth (\d+) predicted_us ([\d.e+-]+|nan|inf)")


def run(cmd, env=None, timeout=3600):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=env, timeout=timeout)
    if p.returncode != 0:
        sys.exit("validate-model --cluster: failed (%d): %s\n%s" % (
            p.returncode, " ".join(cmd), p.stdout[-3000:]))
    return p.stdout


def placements(spec):
    """'2x2,4x2' -> [(2, 2), (4, 2)]"""
    out = []
    for item in spec.split(","):
        h, _, l = item.partition("x")
        out.append((int(h), int(l or 1)))
    return out


def flat_algos(a, coll, n):
    """The collective's flat algorithms, from the model's own table."""
    out = run([a.model, "predict", "--csv", "--collective", coll,
               "--nranks", str(n), "--sizes", "8", "--provider", "tcp"])
    return [line.split(",")[3] for line in out.splitlines()[1:]]


def has_hier(a, coll, hosts, ppn, profile):
    out = run([a.model, "predict", "--csv", "--collective", coll,
               "--hosts", str(hosts), "--ppn", str(ppn), "--sizes", "65536"]
              + (["--profile", profile] if profile else []))
    f = out.splitlines()[1].split(",")
    return f[9] != "nan"            # hier_seconds: the form applies


def geometric_runs(sizes):
    """[8, 64, 512, 64M] -> [(8, 512, 8), (64M, 64M, 2)]: hop-bench's
    -b/-e/-f ranges that cover @sizes, fewest first."""
    runs, i = [], 0
    while i < len(sizes):
        j, f = i + 1, 2
        if j < len(sizes) and sizes[j] % sizes[i] == 0 and sizes[j] > sizes[i]:
            f = sizes[j] // sizes[i]
            while j < len(sizes) and sizes[j] == sizes[j - 1] * f:
                j += 1
        runs.append((sizes[i], sizes[j - 1], f))
        i = j
    return runs


def bench(a, coll, algo, n, ppn, env):
    """{bytes: (us, wrong)} and {bytes: plan fields} of hop-bench runs."""
    times, plans = {}, {}
    for lo, hi, f in geometric_runs(a.sizes):
        t, p = bench_range(a, coll, algo, n, ppn, env, lo, hi, f)
        times.update(t)
        plans.update(p)
    return times, plans


def bench_range(a, coll, algo, n, ppn, env, lo, hi, f):
    cmd = [a.hoprun, "--hosts", env["CLUSTER_HOSTS_N"], "--host-pids",
           env["CLUSTER_PIDS"], "--ppn", str(ppn), "-n", str(n),
           "--timeout", str(a.run_timeout), "--", a.bench, coll,
           "-b", str(lo), "-e", str(hi), "-f", str(f),
           "--budget-ms", str(a.budget_ms), "--iters", str(a.max_iters),
           "--warmup", "3", "--plan", "--check"]
    if algo != "auto":
        cmd += ["--algo", algo]
    times, plans = {}, {}
    for line in run(cmd, env=env, timeout=a.run_timeout + 60).splitlines():
        m = PLAN.search(line)
        if m:
            plans[int(m.group(1))] = m.groups()[1:]
            continue
        m = ROW.match(line)
        if m:
            times[int(m.group(1))] = (float(m.group(3)), int(m.group(4)))
    return times, plans


def inner(a):
    """Inside hop-cluster --exec: measure one placement, write its CSV."""
    hosts, ppn = a.inner_place
    n = hosts * ppn
    env = dict(os.environ)
    env["CLUSTER_HOSTS_N"] = str(hosts)
    env["HOP_TRANSPORT"] = "auto"
    env.pop("HOP_PROFILE", None)
    if a.profile:
        env["HOP_PROFILE"] = os.path.abspath(a.profile)
    env.pop("HOP_ALGO", None)
    path = os.path.join(a.out, "measured-%dx%d.csv" % (hosts, ppn))
    with open(path, "w") as raw:
        raw.write("hosts,ppn,collective,algo,bytes,us,wrong,plan_algo,"
                  "plan_intra,plan_inter,plan_predicted_us\n")
        for coll in a.colls:
            algos = flat_algos(a, coll, n)
            if hosts > 1 and has_hier(a, coll, hosts, ppn, a.profile):
                algos.append("hier")
            for algo in ["auto"] + algos:
                times, plans = bench(a, coll, algo, n, ppn, env)
                for size, (us, wrong) in sorted(times.items()):
                    p = plans.get(size, ("?",) * 6)
                    raw.write("%d,%d,%s,%s,%d,%.3f,%d,%s,%s,%s,%s\n" % (
                        hosts, ppn, coll, algo, size, us, wrong, p[0], p[1],
                        p[2], p[5]))
                raw.flush()
                print("  %dx%d %s %s: %d sizes" % (hosts, ppn, coll, algo,
                                                   len(times)), flush=True)
    return 0


def model_picks(a, rows):
    """{(hosts, ppn, coll, bytes): (pick, intra, inter, predicted us,
    {algo: predicted us})}: what the model of this build picks with
    --profile and what it prices each algorithm at, so that --from-csv
    scores a changed model on measurements it did not take."""
    keys = sorted({(r["hosts"], r["ppn"], r["collective"]) for r in rows})
    picks = {}
    for h, l, coll in keys:
        # hop-bench counts the whole vector of allgather and
        # reducescatter, the model one rank's block
        per = h * l if coll in ("allgather", "reducescatter") else 1
        sizes = sorted({r["bytes"] // per for r in rows
                        if (r["hosts"], r["ppn"], r["collective"]) ==
                        (h, l, coll) and r["bytes"] >= per})
        out = run([a.model, "predict", "--csv", "--collective", coll,
                   "--hosts", str(h), "--ppn", str(l), "--profile",
                   a.profile, "--sizes", ",".join(map(str, sizes))])
        for line in out.splitlines()[1:]:
            f = line.split(",")
            prices = {a: float(t) * 1e6 for a, t in
                      (x.split("=") for x in f[12].split())}
            prices["hier"] = float(f[9]) * 1e6
            picks[(h, l, coll, int(f[4]) * per)] = (
                f[10], f[7], f[8], "%.3f" % (float(f[11]) * 1e6), prices)
    return picks


def repick(rows, picks):
    """@rows with each 'auto' row's plan replaced by @picks'. A hierarchical
    pick whose phases differ from those the measured 'hier' row ran has
    no measurement: its row is dropped from the point (scored as missing)."""
    hier = {(r["hosts"], r["ppn"], r["collective"], r["bytes"]):
            (r["plan_intra"], r["plan_inter"]) for r in rows
            if r["algo"] == "hier"}
    out = []
    for r in rows:
        key = (r["hosts"], r["ppn"], r["collective"], r["bytes"])
        if r["algo"] == "auto" and key in picks:
            r = dict(r)
            (r["plan_algo"], r["plan_intra"], r["plan_inter"],
             r["plan_predicted_us"], r["prices"]) = picks[key]
            if r["plan_algo"] == "hier" and \
                    hier.get(key) != (r["plan_intra"], r["plan_inter"]):
                r["plan_algo"] = "hier?"
        out.append(r)
    return out


def score(rows, colls):
    """Per collective: points within 10 %; prints the table. A pick without
    a measurement of its own (a re-picked hierarchical form with other
    phases, 'hier?') counts as a miss."""
    pts = {}
    for r in rows:
        pts.setdefault((r["hosts"], r["ppn"], r["collective"], r["bytes"]),
                       {})[r["algo"]] = r
    # within, points; within, points from LARGE; within by single runs
    per = {c: [0, 0, 0, 0, 0] for c in colls}
    wrong = 0
    print("%-6s %-14s %10s  %-24s %10s %10s  %-14s %10s %7s  %-10s %s" % (
        "place", "collective", "bytes", "hop's pick", "predicted",
        "pick us", "best", "best us", "pick/b", "within 10%",
        "best priced"))
    for key in sorted(pts):
        h, l, coll, size = key
        byalgo = pts[key]
        wrong += sum(r["wrong"] for r in byalgo.values())
        single = {al: r["us"] for al, r in byalgo.items() if al != "auto"}
        auto = byalgo.get("auto")
        if not single or not auto or size == 0:
            continue                # 0 B: fewer elements than ranks
        # the 'auto' run measured the schedule of the forced run whose plan
        # it ran once more: each schedule counts at its fastest run
        forced = {al: min(us, auto["us"]) if byalgo[al]["ran"] ==
                  auto["ran"] else us for al, us in single.items()}
        pick = auto["plan_algo"]
        ok = within(pick, forced, auto)
        per[coll][0] += ok
        per[coll][1] += 1
        per[coll][4] += within(pick, single, auto)
        if size >= LARGE:
            per[coll][2] += ok
            per[coll][3] += 1
        pick_us = forced.get(pick, auto["us"])
        best = min(forced, key=forced.get)
        ratio = pick_us / forced[best] if pick != "hier?" else float("inf")
        name = pick if not pick.startswith("hier") else "%s (%s+%s)" % (
            pick, auto["plan_intra"], auto["plan_inter"])
        # a miss the model priced within 10 % of its pick is a tie to
        # the model: the measurement, not the price, parted them
        bp = auto.get("prices", {}).get(best)
        print("%-6s %-14s %10d  %-24s %10s %10.1f  %-14s %10.1f %7.3f  %-10s "
              "%s" % ("%dx%d" % (h, l), coll, size, name,
                      auto["plan_predicted_us"], pick_us, best, forced[best],
                      ratio, "yes" if ok else "no", "" if bp is None else
                      "%.1f%s" % (bp, " (tie)" if not ok and bp <= 1.1 *
                                  float(auto["plan_predicted_us"]) else "")))
    tot = [sum(v[i] for v in per.values()) for i in range(5)]
    print("\n# score per collective (points whose pick is within 10 %% of "
          "the measured best; all sizes, and from %d KiB, where the links "
          "rather than the scheduler set the time):" % (LARGE >> 10))
    for c in colls:
        w, t, wl, tl = per[c][:4]
        if t:
            print("#   %-14s %3d of %3d  %5.1f %%   %3d of %3d" % (
                c, w, t, 100.0 * w / t, wl, tl))
    if tot[1]:
        print("# SCORE: %d of %d points within 10 %%: %.1f %%; from %d KiB "
              "%d of %d" % (tot[0], tot[1], 100.0 * tot[0] / tot[1],
                            LARGE >> 10, tot[2], tot[3]))
        print("# counting each algorithm's forced run only (not the "
              "'auto' run of the same schedule): %d of %d" % (tot[4],
                                                               tot[1]))
    print("# wrong elements over every run: %d" % wrong)
    return wrong


def within(pick, times, auto):
    """1 when @pick's time in @times (the 'auto' run's when it was not
    forced) is within 10 % of the fastest."""
    if pick == "hier?":
        return 0
    return times.get(pick, auto["us"]) <= 1.10 * min(times.values())


def load(paths):
    rows = []
    for p in paths:
        lines = open(p).read().splitlines()
        head = lines[0].split(",")
        for line in lines[1:]:
            r = dict(zip(head, line.split(",")))
            for k in ("hosts", "ppn", "bytes", "wrong"):
                r[k] = int(r[k])
            r["us"] = float(r["us"])
            # the schedule this row ran (the run's plan)
            r["ran"] = (r["plan_algo"], r["plan_intra"], r["plan_inter"],
                        r["plan_predicted_us"])
            rows.append(r)
    return rows


def main(a, argv0):
    t = lambda p: os.path.join(a.build, "tools", p)
    a.hoprun, a.bench, a.model = t("hop-run"), t("hop-bench"), t("hop-model")
    a.colls = a.colls.split(",")
    a.sizes = [int(x) for x in a.sizes.split(",")] if a.sizes \
        else DEFAULT_SIZES
    if a.inner_place:
        a.inner_place = placements(a.inner_place)[0]
        return inner(a)
    if a.from_csv:
        rows = load(a.from_csv.split(","))
        if a.profile:       # this build's model picks, not the run's
            print("# picks: this build's model with %s" % a.profile)
            rows = repick(rows, model_picks(a, rows))
        return 1 if score(rows, a.colls) else 0
    if os.geteuid() != 0:
        sys.exit("validate-model --cluster: needs root (scripts/hop-cluster "
                 "makes network namespaces)")
    os.makedirs(a.out, exist_ok=True)
    top = os.path.dirname(os.path.abspath(argv0))
    cluster = os.path.join(top, "hop-cluster")
    t0 = time.time()
    profile = a.profile
    if not profile and not a.no_probe:
        profile = os.path.join(a.out, "cluster.prof")
        print("# probing the links: 2 hosts, %s" % a.link, flush=True)
        run([cluster, "--hosts", "2", "--link", a.link, "--probe",
             "--save-profile", profile, "--", "--quiet", "-n", "50",
             "-w", "3", "-b", "48"])
    print("# validate-model --cluster: %s, links %s, placements %s, "
          "profile %s" % (",".join(a.colls), a.link, a.place,
                           profile or "none (built-in links)"))
    print("# command: %s" % " ".join(sys.argv))
    print("# load average at start: %s" % open("/proc/loadavg").read().strip())
    csvs = []
    for hosts, ppn in placements(a.place):
        print("# measuring %d hosts x %d ranks" % (hosts, ppn), flush=True)
        cmd = [cluster, "--hosts", str(hosts), "--link", a.link, "--exec",
               "--", sys.executable, os.path.abspath(argv0), "--cluster",
               "--inner-place", "%dx%d" % (hosts, ppn), "--build", a.build,
               "--out", a.out, "--colls", ",".join(a.colls), "--sizes",
               ",".join(map(str, a.sizes)), "--budget-ms", str(a.budget_ms),
               "--max-iters", str(a.max_iters)]
        cmd += ["--profile", os.path.abspath(profile)] if profile \
            else ["--no-probe"]
        sys.stdout.write(run(cmd, timeout=4 * 3600))
        csvs.append(os.path.join(a.out, "measured-%dx%d.csv" % (hosts, ppn)))
    print()
    wrong = score(load(csvs), a.colls)
    print("# load average at end: %s; wall %.0f s" % (
        open("/proc/loadavg").read().strip(), time.time() - t0))
    return 1 if wrong else 0


def add_args(ap):
    g = ap.add_argument_group("--cluster (emulated hosts, as root)")
    g.add_argument("--cluster", action="store_true",
                   help="measure on emulated hosts with shaped links")
    g.add_argument("--place", default="2x2,4x2",
                   help="placements HxL, comma separated (default 2x2,4x2)")
    g.add_argument("--link", default="200mbit",
                   help="each host's link rate (default 200mbit: the wire, "
                   "not 2 cores, limits 8 ranks; docs/cluster.md)")
    g.add_argument("--colls", default=",".join(COLLS))
    g.add_argument("--run-timeout", type=int, default=1800)
    g.add_argument("--inner-place", help=argparse.SUPPRESS)

