#!/usr/bin/env python3
"""bench-report.py -- what bench-grade prints: the rate, where the time went,
how busy the GPUs and cores were, and the verdicts.

    bench-report.py --graded DIR [--samples DIR] [--expected TSV] [--class TSV] [--serial DIR]

Reads the grade output DIR (timing.txt, results/*/steps and ID.steps: the
lines "STEP<TAB>NAME<TAB>SECONDS" grade-one and the checkers write), the
samples bench-grade took (gpu.csv: nvidia-smi's timestamp, index,
utilization %, memory MiB; cpu.txt: a time and /proc/stat's first line), and
runs check-verdicts against EXPECTED. --serial: a gradebook of the same class
graded one at a time, compared with DIR's check by check (status and every
check's cell). Exit status 0 when every verdict is right and none differs.
"""
import argparse
import collections
import csv
import datetime
import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# the steps, in the order shown, and what each is
STEPS = [
    ("unpack", "unpack an archive (tar, zip) in the sandbox"),
    ("build", "build a lab's program (make, nvcc), ahead of its checks"),
    ("build-cached", "a build of the same source, kit and compiler, reused"),
    ("gpu-wait", "waiting for a slot on the GPU (GRADE_GPU_SLOTS), after the build"),
    ("run-traced", "a run under the trace tool (each named below)"),
    ("run", "a run untraced (bad option, no device, ...)"),
    ("run-stress", "lab 06: a run under the stress tool"),
    ("run-sanitizer", "lab 06: a run under compute-sanitizer"),
    ("rerun", "a re-run: second_chance / second_look"),
    ("rerun-queues", "a traced run made again with the driver's hardware queues: two streams shared one of the lab's QUEUES"),
    ("trace-query", "a check reading a trace (streamtrace query)"),
    ("checks", "the rest of the checkers' time: bats, the checks' own processes"),
    ("grader", "the grader's own: a kit copy a part of a submission, finding files, the sandbox's steps"),
]
# the runs that start a CUDA program (the untraced ones refuse their options
# before CUDA starts, or see no GPU)
STARTS = ("run-traced", "run-stress", "run-sanitizer", "rerun", "rerun-queues")
INSIDE = {"build", "run", "trace-query"} | set(STARTS)
# a lab's steps the grader takes before its checker, outside it
OUTSIDE = {"build", "build-cached", "gpu-wait"}


def read_kv(path):
    kv = {}
    try:
        with open(path, encoding="utf-8") as f:
            for l in f:
                if "=" in l:
                    k, v = l.rstrip("\n").split("=", 1)
                    kv[k] = v
    except OSError:
        pass
    return kv


def read_steps(path):
    out = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for l in f:
                p = l.rstrip("\n").split("\t")
                if len(p) == 3:
                    try:
                        out.append((p[0], p[1], float(p[2])))
                    except ValueError:
                        pass
    except OSError:
        pass
    return out


def steps_of(graded):
    """{step: [seconds...]}, {(step, run name): [...]}, {lab: seconds}, jobs' seconds."""
    by_step = collections.defaultdict(list)
    by_run = collections.defaultdict(list)
    by_lab = collections.defaultdict(float)
    busy = 0.0
    for sdir in sorted(glob.glob(os.path.join(graded, "results", "*"))):
        whole, parts = None, 0.0
        for step, name, s in read_steps(os.path.join(sdir, "steps")):
            if step == "submission":
                # (a submission graded in parts, over jobs: a line a part)
                whole = (whole or 0.0) + s
                continue
            by_step[step].append(s)
            parts += s
            busy += s
        for f in sorted(glob.glob(os.path.join(sdir, "*.steps"))):
            lab = os.path.basename(f)[:-len(".steps")]
            lines = read_steps(f)
            checker = sum(s for st, _, s in lines if st == "checker")
            inner = 0.0
            for step, name, s in lines:
                if step == "checker":
                    continue
                if step in OUTSIDE and name == lab:
                    # the grader's build, ahead of the checker (not inside
                    # it), and its wait for a GPU slot
                    by_step[step].append(s)
                    by_lab[lab] += s
                    busy += s
                    continue
                by_step[step].append(s)
                if step in INSIDE:
                    inner += s
                if step == "run" or step in STARTS:
                    base = name.split(".again")[0].split(".look")[0]
                    by_run[(step, "%s %s" % (lab[:2], base))].append(s)
            if checker:
                by_step["checks"].append(max(0.0, checker - inner))
                by_lab[lab] += checker
                busy += checker
            parts += checker + sum(s for st, n, s in lines if st in OUTSIDE and n == lab)
        if whole is not None:
            by_step["grader"].append(max(0.0, whole - parts))
            busy += max(0.0, whole - parts)
    return by_step, by_run, by_lab, busy


def gpu_busy(path, t0, t1):
    """{gpu index: (mean utilization %, share of samples above 0 %, most memory MiB)}"""
    per = collections.defaultdict(list)
    try:
        with open(path, encoding="utf-8") as f:
            for row in csv.reader(f):
                if len(row) < 4:
                    continue
                try:
                    ts = datetime.datetime.strptime(row[0].strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp()
                    idx, util, mem = row[1].strip(), float(row[2]), float(row[3])
                except ValueError:
                    continue
                if t0 - 1 <= ts <= t1 + 1:
                    per[idx].append((util, mem))
    except OSError:
        return {}
    return {i: (sum(u for u, _ in v) / len(v), 100.0 * sum(1 for u, _ in v if u > 0) / len(v),
                max(m for _, m in v)) for i, v in sorted(per.items()) if v}


def cpu_busy(path, t0, t1):
    """(mean busy %, the busiest second's %, cores) of the node's cores over [t0, t1]."""
    pts = []
    try:
        with open(path, encoding="utf-8") as f:
            for l in f:
                p = l.split()
                if len(p) < 6 or p[1] != "cpu":
                    continue
                v = [int(x) for x in p[2:]]
                idle = v[3] + (v[4] if len(v) > 4 else 0)
                ts = float(p[0])
                if t0 - 1 <= ts <= t1 + 1:
                    pts.append((ts, sum(v) - idle, sum(v)))
    except (OSError, ValueError):
        return None
    if len(pts) < 2:
        return None
    d = lambda a, b: 100.0 * (b[1] - a[1]) / max(1, b[2] - a[2])
    peaks = [d(pts[i], pts[i + 1]) for i in range(len(pts) - 1)]
    return d(pts[0], pts[-1]), max(peaks), os.cpu_count()


def verdict_cols(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    head = rows[0]
    keep = [i for i, h in enumerate(head) if i < 3 or ": " in h]
    return {(r[0], r[1]): {head[i]: r[i] for i in keep} for r in rows[1:]}


def compare(graded, serial):
    a = verdict_cols(os.path.join(graded, "gradebook.csv"))
    b = verdict_cols(os.path.join(serial, "gradebook.csv"))
    diffs = []
    for key in sorted(set(a) | set(b)):
        ra, rb = a.get(key), b.get(key)
        if ra is None or rb is None:
            diffs.append((key, "row", "present" if ra else "absent", "present" if rb else "absent"))
            continue
        for c in sorted(set(ra) | set(rb)):
            if c in ("student", "lab"):
                continue
            if ra.get(c, "") != rb.get(c, ""):
                diffs.append((key, c, ra.get(c, ""), rb.get(c, "")))
    cells = sum(len([c for c in r if c not in ("student", "lab") and r[c] != ""]) for r in a.values())
    return diffs, cells


def fmt_t(s):
    return "%d:%02d" % (s // 60, s % 60)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graded", required=True)
    ap.add_argument("--samples")
    ap.add_argument("--expected")
    ap.add_argument("--class", dest="klass")
    ap.add_argument("--serial")
    ap.add_argument("--jobs", type=int, help="JOBS, where grading did not finish (no timing.txt)")
    ap.add_argument("--only-graded", action="store_true", help="some labs graded: check those")
    a = ap.parse_args()
    only = ["--only-graded"] if a.only_graded else []
    ok = True
    t = read_kv(os.path.join(a.graded, "timing.txt"))
    if not t:
        # grading stopped before its end (a time limit): the figures of the
        # submissions graded, from the first listing to the last one done
        done = [os.path.getmtime(f) for f in glob.glob(os.path.join(a.graded, "results", "*", "done"))]
        begun = os.path.join(a.graded, "logs", "listed.tsv")
        if done and os.path.exists(begun):
            t = {"started": str(os.path.getmtime(begun)), "ended": str(max(done)),
                 "wall_seconds": str(max(done) - os.path.getmtime(begun)), "jobs": str(a.jobs or 1)}
            print("(grading did not finish: the figures are those of the %d submissions graded)" % len(done))
    wall = float(t.get("wall_seconds", "0") or 0)
    jobs = int(t.get("jobs", "1") or 1)
    t0 = float(t.get("started", "0") or 0)
    t1 = float(t.get("ended", "0") or 0) or t0 + wall
    subs = len(glob.glob(os.path.join(a.graded, "results", "*", "done")))
    meta = read_kv(sorted(glob.glob(os.path.join(a.graded, "results", "*", "meta")) or ["-"])[0])
    gpus = t.get("gpus", "").split()
    if not gpus and a.samples:
        # (grading stopped before timing.txt: the GPUs nvidia-smi sampled)
        gpus = sorted(gpu_busy(os.path.join(a.samples, "gpu.csv"), t0, t1))
    device = meta.get("gpu") or "no GPU"
    kinds = collections.Counter()
    if a.klass:
        with open(a.klass, encoding="utf-8") as f:
            for r in csv.DictReader(f, delimiter="\t"):
                kinds[r["file"].split(" ")[0]] += 1

    print()
    print("## make bench-grade: %d submissions, %s" % (subs, device))
    print()
    print("| device | GPUs | cores | JOBS | submissions | lab files (right / mutant / unfinished) | wall time | submissions a minute |")
    print("|---|---|---|---|---|---|---|---|")
    slots = os.environ.get("GRADE_GPU_SLOTS", "")
    print("| %s | %s | %d | %s | %d | %d / %d / %d | %s | %.1f |" % (
        device, len(gpus) or 0, len(os.sched_getaffinity(0)),
        "%d%s" % (jobs, " (GRADE_GPU_SLOTS=%s: at most %s checkers at once a GPU)" % (slots, slots) if slots else ""),
        subs, kinds["solution"], kinds["mutant"],
        kinds["starter"], fmt_t(wall), 60.0 * subs / wall if wall else 0))

    whole = None
    try:
        with open(os.path.join(a.graded, "command-seconds"), encoding="utf-8") as f:
            whole = int(f.read().strip())
    except (OSError, ValueError):
        pass
    if whole:
        print()
        print("The whole grade command (the kit prepared, the class graded, the reports written): %s" % fmt_t(whole))
    by_step, by_run, by_lab, busy = steps_of(a.graded)
    print()
    print("Where the time went, summed over the class (seconds of the jobs; %d jobs x %s wall = %.0f job-seconds, %.0f%% of them busy):"
          % (jobs, fmt_t(wall), jobs * wall, 100.0 * busy / (jobs * wall) if wall else 0))
    print()
    print("| step | count | seconds | mean s | share | what |")
    print("|---|---|---|---|---|---|")
    total = sum(sum(by_step.get(s, [])) for s, _ in STEPS if s not in ("trace-query",)) or 1
    for step, what in STEPS:
        v = by_step.get(step, [])
        if not v:
            continue
        share = "" if step == "trace-query" else "%.0f%%" % (100.0 * sum(v) / total)
        print("| %s | %d | %.1f | %.2f | %s | %s |" % (step, len(v), sum(v), sum(v) / len(v), share, what))
    print()
    print("(trace-query is a part of checks' time, not added to the shares; the shares are of the jobs' busy time)")
    # the node's pace: each of these runs starts a CUDA context, and the
    # driver makes one at a time for the whole node (the untraced runs refuse
    # their options before CUDA starts, or see no GPU: not counted)
    started = sum(len(by_step.get(st, [])) for st in STARTS)
    if started and subs and wall:
        print()
        print("CUDA programs started: %d (traced runs, lab 06's stress and sanitizer runs, re-runs), "
              "%.1f a submission, one every %.2f s of the wall time: a node's driver makes one "
              "program's CUDA context at a time, whatever its GPU (checker/grade/README.md, "
              "\"Choosing JOBS\")" % (started, float(started) / subs, wall / started))
    print()
    print("Each run, summed over the class (the most costly first):")
    print()
    print("| run | kind | count | seconds | mean s |")
    print("|---|---|---|---|---|")
    for (step, name), v in sorted(by_run.items(), key=lambda kv: -sum(kv[1]))[:12]:
        print("| %s | %s | %d | %.1f | %.2f |" % (name, step, len(v), sum(v), sum(v) / len(v)))
    print()
    print("Each lab (its build and its checker), summed over the class:")
    print()
    print("| lab | seconds | share |")
    print("|---|---|---|")
    lab_total = sum(by_lab.values()) or 1
    for lab, s in sorted(by_lab.items()):
        print("| %s | %.1f | %.0f%% |" % (lab, s, 100.0 * s / lab_total))

    if a.samples:
        print()
        g = gpu_busy(os.path.join(a.samples, "gpu.csv"), t0, t1)
        if g:
            print("GPUs, sampled every 0.5 s while grading (nvidia-smi: utilization is the share of time a kernel ran):")
            print()
            print("| GPU | mean utilization | samples above 0 | most memory used |")
            print("|---|---|---|---|")
            for i, (u, nz, m) in g.items():
                print("| %s | %.0f%% | %.0f%% | %.0f MiB |" % (i, u, nz, m))
        else:
            print("GPUs: no samples (no nvidia-smi here)")
        c = cpu_busy(os.path.join(a.samples, "cpu.txt"), t0, t1)
        print()
        if c:
            print("Cores: %.0f%% busy on average over the %d cores (the busiest half second: %.0f%%)"
                  % (c[0], c[2], c[1]))
        else:
            print("Cores: no samples")

    if a.expected:
        print()
        r = subprocess.run([os.path.join(HERE, "check-verdicts")] + only + [a.graded, a.expected],
                           capture_output=True, text=True)
        lines = r.stdout.strip().splitlines()
        for l in lines[:20]:
            print(l)
        if len(lines) > 21:
            print("... (%d more)" % (len(lines) - 21))
            print(lines[-1])
        ok = ok and r.returncode == 0

    if a.serial:
        print()
        st = read_kv(os.path.join(a.serial, "timing.txt"))
        diffs, cells = compare(a.graded, a.serial)
        print("Serial grading of the same class (JOBS=1, no build cache): %s wall; verdicts compared check by check: "
              "%d cells, %d differences" % (fmt_t(float(st.get("wall_seconds", "0") or 0)), cells, len(diffs)))
        for key, col, x, y in diffs[:20]:
            print("DIFFERENT  %s %s  %s: %s (parallel) / %s (serial)" % (key[0], key[1], col, x, y))
        ok = ok and not diffs
        r = subprocess.run([os.path.join(HERE, "check-verdicts")] + only + [a.serial, a.expected],
                           capture_output=True, text=True) if a.expected else None
        if r:
            print("serial: " + (r.stdout.strip().splitlines() or [""])[-1])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
