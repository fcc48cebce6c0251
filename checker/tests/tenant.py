#!/usr/bin/env python3
"""tenant.py -- model another program taking the GPU for a while in a recorded run.

    tenant.py IN_DIR OUT_DIR --match REGEX [--nth N] [--edge start|end]
              --delay MS [--figure NAME=+MS]... [--sed EXPR]...

Copies a recorded run (IN_DIR/r.{out,err,rc,trace}, checker/tests/fixtures/replays/)
to OUT_DIR as it would have come out had another tenant held the GPU for
MS milliseconds right after the anchor: the Nth trace line (counted in time
order) that REGEX matches, at its start or end. From that moment T:

  - every GPU record (copy, kernel, memset, CUDA event) that starts after T
    happens MS later; one running at T ends MS later (it was preempted);
  - the host goes on until it first waits for the GPU after T (the first
    `sync` record still running at or after T): that wait ends MS later,
    and so does everything the host did after it; a host record spanning
    that moment (an API call, an NVTX range) ends MS later.

The program's printout follows: --figure NAME=+MS adds to a `NAME = value`
line, --sed applies a sed-like s/OLD/NEW/ (Python regex) to the output
wherever it matches. What
the figures must become is the caller's to say (which interval held T).
This is a model of sharing, for testing the checkers without a GPU; the
proof on a real shared GPU is `make test-shared`.
"""
import argparse
import os
import re
import shutil
import sys

GPU = ("copy", "kernel", "memset", "event")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--match", required=True)
    p.add_argument("--nth", type=int, default=1)
    p.add_argument("--edge", choices=("start", "end"), default="start")
    p.add_argument("--delay", type=float, required=True)
    p.add_argument("--figure", action="append", default=[])
    p.add_argument("--sed", action="append", default=[])
    return p.parse_args()


def times(f):
    """(start, end) of a split trace line; an event is (t, t)."""
    if f[0] == "event":
        return int(f[1]), int(f[1])
    return int(f[1]), int(f[2])


def set_times(f, a, b):
    f[1] = str(a)
    if f[0] != "event":
        f[2] = str(b)


def shift_trace(lines, regex, nth, edge, delay_ns):
    """Return the trace lines with the tenant's delay put in."""
    recs = [i for i, l in enumerate(lines)
            if l.split("\t")[0] in GPU + ("sync", "api", "nvtx")]
    order = sorted(recs, key=lambda i: times(lines[i].split("\t")))
    hits = [i for i in order if re.search(regex, lines[i])]
    if len(hits) < nth:
        sys.exit("tenant.py: only %d lines match %r" % (len(hits), regex))
    a, b = times(lines[hits[nth - 1]].split("\t"))
    t = (a if edge == "start" else b) + 1
    waits = [times(lines[i].split("\t"))[1] for i in order
             if lines[i].startswith("sync\t") and times(lines[i].split("\t"))[1] >= t]
    h = min(waits) if waits else None
    out = list(lines)
    for i in recs:
        f = lines[i].split("\t")
        s, e = times(f)
        at = t if f[0] in GPU else h
        if at is None:
            continue
        if s >= at:
            s, e = s + delay_ns, e + delay_ns
        elif e >= at:
            e += delay_ns
        set_times(f, s, e)
        out[i] = "\t".join(f)
    return out


def fix_output(text, figures, seds):
    """The printout as the program would have printed it (lab_figure's format)."""
    for fig in figures:
        name, add = fig.split("=", 1)
        pat = re.compile(r"^\s*%s\s*=\s*(-?[0-9.]+)" % re.escape(name), re.M)
        m = pat.search(text)
        if not m:
            sys.exit("tenant.py: no figure %s in the output" % name)
        line = "  %-18s = %12.4f" % (name, float(m.group(1)) + float(add))
        text = text[:m.start()] + line + text[m.end():]
    for expr in seds:
        sep = expr[1]
        _, old, new, _ = expr.split(sep)
        text = re.sub(old, new, text)   # where it matches: a mutant prints other figures
    return text


def main():
    o = parse_args()
    os.makedirs(o.dst, exist_ok=True)
    for name in os.listdir(o.src):
        shutil.copy(os.path.join(o.src, name), os.path.join(o.dst, name))
    path = os.path.join(o.dst, "r.trace")
    with open(path) as f:
        lines = f.read().split("\n")
    with open(path, "w") as f:
        f.write("\n".join(shift_trace(lines, o.match, o.nth, o.edge,
                                      int(round(o.delay * 1e6)))))
    path = os.path.join(o.dst, "r.out")
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(fix_output(text, o.figure, o.sed))


if __name__ == "__main__":
    main()
