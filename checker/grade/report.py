#!/usr/bin/env python3
"""report.py -- a graded class's results as a gradebook and reports.

    report.py --kit KIT --results DIR --out OUT [--labs "ID ..."]

Reads DIR/<student>/ (written by grade-one: meta, submission.txt, and per lab
ID.status, ID.tap, ID.log, ID.outside) and the names of every lab's checks
from KIT/checker/NN-name.bats. Writes to OUT:

  gradebook.csv          a row per student and lab: status, score, counts, why,
                         then every check of every lab (pass, fail, skip,
                         not graded, missing; empty for another lab's checks)
  students.csv           a row per student: total score and each lab's status
  junit/<student>.xml    JUnit XML, a testsuite per lab, a testcase per check
  gradescope/<student>/results.json   Gradescope's autograder results format
  classroom/<student>.json            GitHub Classroom's autograding result
                                      (what autograding-grading-reporter reads)
  report.md, heatmap.svg the class report: which checks the class fails most

A lab is "not graded" when any of its checks was skipped for want of a GPU
(a reason that starts "no CUDA device", or "needs 2 GPUs" on a node with one):
it has no score, and no report counts it as passed. Exit status: 0, or 3
when some lab is not graded. Standard library only.
"""
import argparse
import csv
import html
import json
import os
import re
import shutil
import sys
from collections import Counter, OrderedDict

PASS, FAIL, SKIP, NOT_GRADED, MISSING = "pass", "fail", "skip", "not graded", "missing"
ERROR = "error"   # the grader could not run the lab's checker at all
# A check skipped with one of these reasons needs hardware this node lacks:
# "not graded" (no score), never a pass. "no CUDA device" (no GPU at all);
# "needs 2 GPUs" (a lab that spans two GPUs, on a node with one).
NOT_GRADED_SKIP = re.compile(r"^(no cuda device|needs \d+ gpus)", re.I)

# -------------------------------------------------------------- the kit


def kit_checks(kit, labs):
    """{lab: [check name, ...]} from each lab's checker, in file order."""
    checks = OrderedDict()
    for lab in labs:
        names = []
        with open(os.path.join(kit, "checker", lab + ".bats"), encoding="utf-8") as f:
            for line in f:
                m = re.match(r'^@test "(.*)" \{\s*$', line)
                if m:
                    names.append(m.group(1))
        checks[lab] = names
    return checks


def lab_number(lab):
    return lab.split("-", 1)[0]

# -------------------------------------------------------------- one lab


def read_kv(path):
    kv = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                k, sep, v = line.rstrip("\n").partition("=")
                if sep:
                    kv[k] = v
    return kv


SAY = re.compile(r"^(expected|seen|hint|not checked|note):")


def parse_tap(path):
    """{check name: (verdict, detail lines)} from bats' TAP output."""
    results = OrderedDict()
    if not os.path.exists(path):
        return results
    current = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"^(not ok|ok) \d+ (.*)$", line)
            if m:
                ok, rest = m.group(1) == "ok", m.group(2)
                reason = ""
                s = re.search(r" # [sS][kK][iI][pP]\b ?(.*)$", rest)
                if ok and s:
                    reason = s.group(1).strip()
                    rest = rest[:s.start()]
                    verdict = NOT_GRADED if NOT_GRADED_SKIP.match(reason) else SKIP
                    results[rest] = (verdict, [reason] if reason else [])
                    current = None
                elif ok:
                    results[rest] = (PASS, [])
                    current = None
                else:
                    results[rest] = (FAIL, [])
                    current = rest
                continue
            if current is not None and line.startswith("# "):
                results[current][1].append(line[2:])
    # of a failure's diagnostics keep the checker's own lines, as run-checks shows them
    for name, (verdict, diag) in results.items():
        if verdict == FAIL:
            said = [d.strip() for d in diag if SAY.match(d) or d.startswith("          ")]
            if not said:
                said = [d.strip() for d in diag if not d.startswith("(in test file")][:3]
            results[name] = (verdict, said)
    return results


def grade_lab(rdir, lab, names):
    """The verdict of one lab: status, score, counts, why, per-check verdicts."""
    status_file = os.path.join(rdir, lab + ".status")
    lab_r = {"lab": lab, "checks": OrderedDict(), "outside": [], "seconds": ""}
    if not os.path.exists(status_file):
        # the grading of this submission stopped (a Slurm task out of time?)
        lab_r.update(status=ERROR, why="not graded: the grading of this submission did not finish")
        for n in names:
            lab_r["checks"][n] = (ERROR, ["not graded: no result"])
        return finish(lab_r)
    with open(status_file, encoding="utf-8") as f:
        first = f.readline().strip()
    if first.startswith("error:"):
        # the grader could not get at the lab's file (an archive it could not
        # open): its error, never "missing"
        why = first[len("error:"):].strip()
        lab_r.update(status=ERROR, why="error: " + why)
        for n in names:
            lab_r["checks"][n] = (ERROR, ["not graded: " + why])
        return finish(lab_r)
    if first == "missing":
        lab_r.update(status=MISSING, why="not submitted: no file for this lab in the submission")
        for n in names:
            lab_r["checks"][n] = (MISSING, ["not submitted"])
        return finish(lab_r)
    st = read_kv(status_file)
    lab_r["seconds"] = st.get("seconds", "")
    rc = st.get("rc", "")
    timed_out = st.get("timed_out") == "1"
    tap = parse_tap(os.path.join(rdir, lab + ".tap"))
    outside = os.path.join(rdir, lab + ".outside")
    if os.path.exists(outside):
        with open(outside, encoding="utf-8", errors="replace") as f:
            lab_r["outside"] = [l.strip() for l in f if l.strip()]
    if not tap and not timed_out and rc in ("2", "126", "127"):
        # run-checks refused to run (no bats, a missing tool) or could not be
        # started: the grader's fault. (A checker killed by the student's
        # program has another status, and its checks fail.)
        log = tail(os.path.join(rdir, lab + ".log"), 3)
        lab_r.update(status=ERROR, why="the checker did not run here: " + " ".join(log))
        for n in names:
            lab_r["checks"][n] = (ERROR, ["the checker did not run"])
        return finish(lab_r)
    stopped = how_it_stopped(rc, timed_out, read_kv(os.path.join(rdir, "meta")))
    for n in names:
        if n in tap:
            lab_r["checks"][n] = tap[n]
        else:
            lab_r["checks"][n] = (FAIL, ["not checked: " + stopped])
    for n, v in tap.items():      # a check the kit's list does not name
        lab_r["checks"].setdefault(n, v)
    verdicts = [v for v, _ in lab_r["checks"].values()]
    if NOT_GRADED in verdicts:
        lab_r["status"] = NOT_GRADED
    elif FAIL in verdicts:
        lab_r["status"] = FAIL
    else:
        lab_r["status"] = PASS
    return finish(lab_r)


def how_it_stopped(rc, timed_out, meta):
    """Why the checker made no more checks, in words: each kind of end its own."""
    if timed_out:
        t = meta.get("lab_timeout", "")
        return ("the lab's checks did not finish in %s s (LAB_TIMEOUT) and were stopped"
                % t if t else "the lab's checks did not finish in time and were stopped")
    try:
        code = int(rc)
    except ValueError:
        return "the checker stopped before this check"
    if code > 128:
        name = SIGNALS.get(code - 128, "signal %d" % (code - 128))
        return "the checker was killed (%s) before this check: did the program kill it?" % name
    return "the checker stopped before this check (exit status %d; its log says why)" % code


SIGNALS = {1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS",
           8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 14: "SIGALRM",
           15: "SIGTERM", 24: "SIGXCPU", 25: "SIGXFSZ"}


def tail(path, n):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return [l.strip() for l in f.readlines()[-n:]]
    except OSError:
        return []


def finish(lab_r):
    """Counts, score and the one-line why of a lab."""
    c = Counter(v for v, _ in lab_r["checks"].values())
    lab_r["passed"], lab_r["failed"], lab_r["skipped"] = c[PASS], c[FAIL], c[SKIP]
    lab_r["not_graded"] = c[NOT_GRADED]
    counted = c[PASS] + c[FAIL]
    lab_r["points"] = c[PASS] if lab_r["status"] in (PASS, FAIL) else 0
    # what the lab is worth: every check but the ones that did not apply here
    lab_r["max_points"] = len(lab_r["checks"]) - c[SKIP]
    if lab_r["status"] in (PASS, FAIL):
        lab_r["score"] = str(round(100 * c[PASS] / counted)) if counted else "0"
    elif lab_r["status"] == MISSING:
        lab_r["score"] = "0"
    else:
        lab_r["score"] = lab_r["status"]
    if "why" not in lab_r:
        lab_r["why"] = why_of(lab_r)
    return lab_r


def why_of(lab_r):
    """The first failed check and what it said; or why the lab is not graded."""
    why = ""
    for name, (v, detail) in lab_r["checks"].items():
        if v == FAIL:
            said = [d for d in detail if d.startswith(("expected:", "seen:", "not checked:"))]
            why = name + ": " + " | ".join(" ".join(d.split()) for d in (said or detail[:2]))
            break
    if lab_r["status"] == NOT_GRADED:
        ng = "not graded: %d checks need a GPU" % lab_r["not_graded"]
        other = [d[0] for v, d in lab_r["checks"].values()
                 if v == NOT_GRADED and d and not d[0].lower().startswith("no cuda device")]
        if other:
            ng += " (%s)" % other[0]
        why = ng + ("; failed already: " + why if why else "")
    return why[:400]

# -------------------------------------------------------------- one student


def grade_student(rdir, checks):
    meta = read_kv(os.path.join(rdir, "meta"))
    labs = OrderedDict((lab, grade_lab(rdir, lab, names)) for lab, names in checks.items())
    st = [l["status"] for l in labs.values()]
    points = sum(l["points"] for l in labs.values())
    maxp = sum(l["max_points"] for l in labs.values())
    if ERROR in st:
        status = ERROR
    elif NOT_GRADED in st:
        status = NOT_GRADED
    elif all(s == PASS for s in st):
        status = PASS
    else:
        status = FAIL
    score = ("%.1f" % (100.0 * points / maxp) if maxp else "0") if status in (PASS, FAIL) else status
    notes = []
    sub = os.path.join(rdir, "submission.txt")
    if os.path.exists(sub):
        with open(sub, encoding="utf-8", errors="replace") as f:
            notes = [l.strip() for l in f if l.startswith(("ignored:", "unpack:"))]
    return {"name": os.path.basename(rdir), "meta": meta, "labs": labs, "status": status,
            "points": points, "max_points": maxp, "score": score, "notes": notes}

# -------------------------------------------------------------- the outputs


def write_gradebook(path, students, checks):
    cols = ["%s: %s" % (lab, n) for lab, names in checks.items() for n in names]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", "lab", "status", "score", "passed", "failed", "skipped",
                    "not_graded", "why"] + cols)
        for s in students:
            for lab, l in s["labs"].items():
                cells = {"%s: %s" % (lab, n): v for n, (v, _) in l["checks"].items()}
                w.writerow([s["name"], lab, l["status"], l["score"], l["passed"], l["failed"],
                            l["skipped"], l["not_graded"], l["why"]]
                           + [cells.get(c, "") for c in cols])


def write_students(path, students, checks):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", "status", "score", "points", "max_points"] + list(checks))
        for s in students:
            w.writerow([s["name"], s["status"], s["score"], s["points"], s["max_points"]]
                       + ["%s %s" % (l["status"], l["score"]) if l["status"] in (PASS, FAIL)
                          else l["status"] for l in s["labs"].values()])


def xml_attr(s):
    return html.escape(str(s), quote=True)


def write_junit(path, s):
    lines = ['<?xml version="1.0" encoding="UTF-8"?>']
    t = sum(len(l["checks"]) for l in s["labs"].values())
    fl = sum(l["failed"] + (len(l["checks"]) if l["status"] == MISSING else 0)
             for l in s["labs"].values())
    sk = sum(l["skipped"] + l["not_graded"] for l in s["labs"].values())
    title = "cuda-stream-labs: %s" % s["name"]
    if s["status"] == NOT_GRADED:
        title += " (not graded: some checks need a GPU)"
    er = sum(v == ERROR for l in s["labs"].values() for v, _ in l["checks"].values())
    if s["status"] == ERROR:
        title += " (not graded: the grader could not check some lab)"
    lines.append('<testsuites name="%s" tests="%d" failures="%d" skipped="%d" errors="%d">'
                 % (xml_attr(title), t, fl, sk, er))
    for lab, l in s["labs"].items():
        lf = l["failed"] + (len(l["checks"]) if l["status"] == MISSING else 0)
        le = sum(v == ERROR for v, _ in l["checks"].values())
        lines.append('  <testsuite name="%s" tests="%d" failures="%d" skipped="%d" errors="%d" time="%s">'
                     % (xml_attr(lab), len(l["checks"]), lf, l["skipped"] + l["not_graded"], le,
                        l["seconds"] or 0))
        lines.append('    <properties><property name="status" value="%s"/>'
                     '<property name="score" value="%s"/></properties>'
                     % (xml_attr(l["status"]), xml_attr(l["score"])))
        for name, (v, detail) in l["checks"].items():
            tc = '    <testcase classname="%s" name="%s"' % (xml_attr(lab), xml_attr(name))
            text = "\n".join(detail)
            if v == PASS:
                lines.append(tc + "/>")
            elif v == ERROR:
                msg = detail[0] if detail else v
                lines.append(tc + '><error message="%s">%s</error></testcase>'
                             % (xml_attr(msg), html.escape(text, quote=False)))
            elif v in (FAIL, MISSING):
                msg = detail[0] if detail else v
                lines.append(tc + '><failure message="%s">%s</failure></testcase>'
                             % (xml_attr(msg), html.escape(text, quote=False)))
            else:
                why = ("not graded: needs a GPU (%s)" % text) if v == NOT_GRADED else text
                lines.append(tc + '><skipped message="%s"/></testcase>' % xml_attr(why))
        lines.append("  </testsuite>")
    lines.append("</testsuites>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def summary_text(s):
    out = ["CUDA Stream Labs: %s" % s["name"]]
    if s["status"] == NOT_GRADED:
        n = sum(l["not_graded"] for l in s["labs"].values())
        out.append("NOT GRADED: %d checks need a GPU; these results are not a grade." % n)
    elif s["status"] == ERROR:
        why = next(l["why"] for l in s["labs"].values() if l["status"] == ERROR)
        out.append("NOT GRADED: the grader could not check some lab (its error, not a grade): %s"
                   % re.sub(r"^error: ", "", why))
    else:
        out.append("Score: %d of %d checks pass (%s%%)." % (s["points"], s["max_points"], s["score"]))
    for lab, l in s["labs"].items():
        line = "  %-18s %s" % (lab, l["status"])
        if l["status"] in (PASS, FAIL):
            line += " %s%% (%d of %d)" % (l["score"], l["passed"], l["passed"] + l["failed"])
        if l["why"]:
            line += " -- " + l["why"]
        out.append(line)
    return "\n".join(out)


def write_gradescope(path, s):
    """Gradescope's results.json: a test per check, worth 1 point."""
    tests = []
    for lab, l in s["labs"].items():
        for i, (name, (v, detail)) in enumerate(l["checks"].items(), 1):
            t = {"name": "%s: %s" % (lab, name), "number": "%d.%d" % (int(lab_number(lab)), i),
                 "max_score": 1, "score": 1 if v == PASS else 0, "output": "\n".join(detail)}
            if v == PASS:
                t["status"] = "passed"
            elif v in (FAIL, MISSING, ERROR):
                t["status"] = "failed"
            elif v == SKIP:                    # did not apply here: worth nothing
                t.update(max_score=0, status="passed", output="skipped: " + "\n".join(detail))
            else:                              # not graded: no status, no points
                t["output"] = "not graded: this check needs a GPU (" + "\n".join(detail) + ")"
            tests.append(t)
    r = {"score": s["points"] if s["status"] in (PASS, FAIL) else 0,
         "output": summary_text(s), "tests": tests,
         "extra_data": {"graded": s["status"] in (PASS, FAIL), "status": s["status"]}}
    if s["status"] not in (PASS, FAIL):
        r["visibility"] = "hidden"            # not a grade: do not show it to the student
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(r, f, indent=1)
        f.write("\n")


def write_classroom(path, s):
    """GitHub Classroom: the result object of a runner of the autograding
    actions (version 1), which autograding-grading-reporter reads from
    <RUNNER>_RESULTS, base64-encoded."""
    tests = []
    for lab, l in s["labs"].items():
        for name, (v, detail) in l["checks"].items():
            st = {PASS: "pass", SKIP: "pass", FAIL: "fail", MISSING: "fail"}.get(v, "error")
            msg = "\n".join(detail)
            if v == NOT_GRADED:
                msg = "not graded: this check needs a GPU (%s)" % msg
            tests.append({"name": "%s: %s" % (lab, name), "status": st,
                          "score": 1 if v == PASS else 0, "message": msg,
                          "line_no": 0, "execution_time": ""})
    status = {PASS: "pass", FAIL: "fail"}.get(s["status"], "error")
    r = {"version": 1, "status": status, "max_score": s["max_points"], "tests": tests}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(r, f, indent=1)
        f.write("\n")

# -------------------------------------------------------------- the class report


COLORS = {PASS: "#2e7d32", FAIL: "#c62828", SKIP: "#9e9e9e", NOT_GRADED: "#f9a825",
          MISSING: "#eeeeee", ERROR: "#6a1b9a"}


def check_ids(checks):
    """[(lab, index, name, id like 03.7)] for every check of every lab."""
    return [(lab, i, n, "%s.%d" % (lab_number(lab), i))
            for lab, names in checks.items() for i, n in enumerate(names, 1)]


def write_heatmap(path, students, checks):
    """Students x checks, a cell per check coloured by its verdict, a gap
    between labs, and above each column a bar: how many graded submissions
    failed that check."""
    cols = check_ids(checks)
    cell, gap, lab_gap = 14, 1, 8
    left = 12 + 7 * max([len(s["name"]) for s in students] + [18])
    bar_top, bars = 28, 40
    lab_y, num_y, top = bar_top + bars + 16, bar_top + bars + 30, bar_top + bars + 36
    xs, x, prev = [], left, None
    for lab, i, n, cid in cols:
        if prev is not None and lab != prev:
            x += lab_gap
        xs.append(x)
        x += cell + gap
        prev = lab
    width = x + 20
    height = top + len(students) * (cell + gap) + 50
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
         'font-family="sans-serif" font-size="10">' % (width, height),
         '<title>students x checks: which checks the class fails</title>',
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="4" y="16" font-size="12" font-weight="bold">Students x checks</text>',
         '<text x="%d" y="%d" text-anchor="end" fill="#555">failed, of graded</text>'
         % (left - 6, bar_top + bars - 2),
         '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>'
         % (left, bar_top + bars + 0.5, x, bar_top + bars + 0.5)]
    lab_x = OrderedDict()
    for k, (lab, i, n, cid) in enumerate(cols):
        lab_x.setdefault(lab, xs[k])
        vs = [s["labs"][lab]["checks"].get(n, (MISSING, []))[0] for s in students]
        f, g = sum(v == FAIL for v in vs), sum(v in (PASS, FAIL) for v in vs)
        h = round(bars * f / g) if g else 0
        if h:
            o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s">'
                     '<title>%s %s: failed by %d of %d graded</title></rect>'
                     % (xs[k], bar_top + bars - h, cell, h, COLORS[FAIL], cid, xml_attr(n), f, g))
        o.append('<text x="%d" y="%d" font-size="8" text-anchor="middle">%d</text>'
                 % (xs[k] + cell // 2, num_y, i))
    for lab, lx in lab_x.items():
        o.append('<text x="%d" y="%d" font-weight="bold">%s</text>' % (lx, lab_y, lab))
    for r, s in enumerate(students):
        y = top + r * (cell + gap)
        o.append('<text x="%d" y="%d" text-anchor="end">%s</text>'
                 % (left - 6, y + cell - 3, xml_attr(s["name"])))
        for k, (lab, i, n, cid) in enumerate(cols):
            v = s["labs"][lab]["checks"].get(n, (MISSING, []))[0]
            o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s">'
                     '<title>%s, %s %s: %s</title></rect>'
                     % (xs[k], y, cell, cell, COLORS[v], xml_attr(s["name"]), cid, xml_attr(n), v))
    y = top + len(students) * (cell + gap) + 20
    x = left
    for v in (PASS, FAIL, SKIP, NOT_GRADED, MISSING, ERROR):
        o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#999"/>'
                 '<text x="%d" y="%d">%s</text>' % (x, y, cell, cell, COLORS[v],
                                                    x + cell + 4, y + cell - 3, v))
        x += cell + 14 + 6 * len(v)
    o.append("</svg>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(o) + "\n")


def md(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def write_report(path, students, checks, results_dir):
    meta = students[0]["meta"] if students else {}
    labs = list(checks)
    count = Counter(l["status"] for s in students for l in s["labs"].values())
    gpu = meta.get("gpu") or "no GPU"
    o = ["# Class report", "",
         "%d submissions, %d labs each, graded on %s (%s), %s." %
         (len(students), len(labs), meta.get("host", "?"), gpu, meta.get("graded_at", "?")[:10]),
         "Labs: %s." % ", ".join("%d %s" % (count[k], k) for k in
                                 (PASS, FAIL, NOT_GRADED, MISSING, ERROR) if count[k]), ""]
    if count[NOT_GRADED]:
        o += ["> **Not graded:** %d labs had checks that need a GPU, and there was none. "
              "They have no score here; grade the class again on a GPU node." % count[NOT_GRADED], ""]
    if count[ERROR]:
        o += ["> **Grader error:** %d labs could not be checked; they have no score here:"
              % count[ERROR], ">"]
        o += ["> - %s, %s: %s" % (md(s["name"]), lab, md(l["why"]))
              for s in students for lab, l in s["labs"].items() if l["status"] == ERROR]
        o += [""]
    o += ["## Students", "",
          "| student | score | " + " | ".join(labs) + " |",
          "|---|---|" + "---|" * len(labs)]
    for s in students:
        cells = []
        for l in s["labs"].values():
            cells.append("%s %s%%" % (l["status"], l["score"]) if l["status"] in (PASS, FAIL)
                         else l["status"])
        sc = s["score"] + "%" if s["status"] in (PASS, FAIL) else "**%s**" % s["status"]
        o.append("| %s | %s | %s |" % (md(s["name"]), sc, " | ".join(cells)))
    # the checks the class fails most
    rows = []
    for lab, i, n, cid in check_ids(checks):
        vs = [s["labs"][lab]["checks"].get(n, (MISSING, [])) for s in students]
        failed = [d for v, d in vs if v == FAIL]
        graded = sum(v in (PASS, FAIL) for v, _ in vs)
        ng = sum(v == NOT_GRADED for v, _ in vs)
        seen = Counter(next((x for x in d if x.startswith(("seen:", "not checked:"))), "")
                       for d in failed)
        top = seen.most_common(1)[0][0] if failed else ""
        rows.append((len(failed), graded, ng, cid, n, top, (lab, i)))
    rows.sort(key=lambda r: (-r[0], r[6]))
    o += ["", "## The checks the class fails most", "",
          "| check | what it checks | failed | of graded | not graded | what most failures saw |",
          "|---|---|---|---|---|---|"]
    for f, g, ng, cid, n, top, _ in rows:
        if f == 0:
            continue
        o.append("| %s | %s | %d | %d | %d | %s |" % (cid, md(n), f, g, ng, md(top[:160])))
    if not any(r[0] for r in rows):
        o.append("| | no check failed | | | | |")
    o += ["", "## Heat map", "",
          "Rows are students, columns are checks (numbered as below); the bars on top "
          "are how many graded submissions failed each check.", "",
          "![students x checks](heatmap.svg)", "", "## The checks", ""]
    for lab, names in checks.items():
        o.append("- **%s**: " % lab + "; ".join("%s.%d %s" % (lab_number(lab), i, md(n))
                                                 for i, n in enumerate(names, 1)))
    notes = []
    for s in students:
        for n in s["notes"]:
            notes.append("%s: %s" % (s["name"], n))
        for lab, l in s["labs"].items():
            if l["outside"]:
                notes.append("%s, %s: left files outside its folder (removed): %s"
                             % (s["name"], lab, ", ".join(l["outside"][:5])))
    ignored = os.path.join(os.path.dirname(results_dir.rstrip("/")), "ignored.txt")
    if os.path.exists(ignored):
        with open(ignored, encoding="utf-8", errors="replace") as f:
            notes += [l.strip() for l in f if l.strip()]
    if notes:
        o += ["", "## Notes", ""] + ["- " + md(n) for n in notes]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(o) + "\n")

# -------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description="a graded class's gradebook and reports")
    ap.add_argument("--kit", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--labs", default="")
    ap.add_argument("--submissions", help="the class list (NAME<TAB>KIND<TAB>PATH); "
                    "default: every folder in --results")
    a = ap.parse_args()
    labs = a.labs.split() or sorted(f[:-5] for f in os.listdir(os.path.join(a.kit, "checker"))
                                    if re.match(r"^\d\d-.*\.bats$", f))
    checks = kit_checks(a.kit, labs)
    if a.submissions:
        with open(a.submissions, encoding="utf-8") as f:
            names = sorted(l.split("\t", 1)[0] for l in f if l.strip())
    else:
        names = sorted(d for d in os.listdir(a.results)
                       if os.path.isdir(os.path.join(a.results, d)))
    students = [grade_student(os.path.join(a.results, d), checks) for d in names]
    os.makedirs(a.out, exist_ok=True)
    for sub in ("junit", "gradescope", "classroom"):
        os.makedirs(os.path.join(a.out, sub), exist_ok=True)
    write_gradebook(os.path.join(a.out, "gradebook.csv"), students, checks)
    write_students(os.path.join(a.out, "students.csv"), students, checks)
    for s in students:
        write_junit(os.path.join(a.out, "junit", s["name"] + ".xml"), s)
        write_gradescope(os.path.join(a.out, "gradescope", s["name"], "results.json"), s)
        write_classroom(os.path.join(a.out, "classroom", s["name"] + ".json"), s)
    # Gradescope's autograder for results made here (README.md, "Gradescope")
    here = os.path.dirname(os.path.abspath(__file__))
    for f in ("run_autograder", "setup.sh"):
        shutil.copy(os.path.join(here, "gradescope", f), os.path.join(a.out, "gradescope", f))
    write_heatmap(os.path.join(a.out, "heatmap.svg"), students, checks)
    write_report(os.path.join(a.out, "report.md"), students, checks, a.results)

    count = Counter(l["status"] for s in students for l in s["labs"].values())
    print("grade: %d students; labs: %s" % (len(students), ", ".join(
        "%d %s" % (count[k], k) for k in (PASS, FAIL, NOT_GRADED, MISSING, ERROR) if count[k])))
    if count[NOT_GRADED]:
        ng = sum(l["not_graded"] for s in students for l in s["labs"].values())
        print("grade: not graded: %d checks need a GPU, or more GPUs than this node has (%d labs);"
              " no score for those labs" % (ng, count[NOT_GRADED]))
    if count[ERROR]:
        print("grade: %d labs could not be graded (error: the grader could not open or check them):"
              " see report.md" % count[ERROR])
    print("grade: wrote %s/gradebook.csv, students.csv, report.md, heatmap.svg, "
          "junit/, gradescope/, classroom/" % a.out)
    return 3 if count[NOT_GRADED] or count[ERROR] else 0


if __name__ == "__main__":
    sys.exit(main())
