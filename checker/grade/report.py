#!/usr/bin/env python3
"""report.py -- a graded class's results as a gradebook and reports.

    report.py --kit KIT --results DIR --out OUT [--labs "ID ..."] [--submissions TSV]
              [--roster CSV] [--weights 01=20,...] [--starters DIR]

Reads DIR/<student>/ (written by grade-one: meta, submission.txt, and per lab
ID.status, ID.tap, ID.log, ID.outside, files/ID/) and the names of every
lab's checks from KIT/checker/NN-name.bats. The labs are --labs, else every
lab of the kit that some student's results have. Reads from OUT, where an
earlier run left them: roster.csv (id, name, email), weights.txt,
submission_metadata.yml (Gradescope's export). Writes to OUT:

  gradebook.csv          a row per student and lab: status, score, counts, why,
                         when and with which kit it was graded, the sha256 of
                         the file graded, then every check of every lab (pass,
                         fail, not checked, skip, pending, not graded, missing;
                         empty for another lab's checks)
  students.csv           a row per person (a group's members each their own):
                         name, id, email, points, each lab, a note (on no
                         roster entry; a roster entry no submission matched
                         where some submission matched none)
  feedback/<student>.txt what the checker said, lab by lab, to hand back
  junit/<student>.xml    JUnit XML, a testsuite per lab, a testcase per check
  gradescope/<student>/results.json   Gradescope's autograder results format
  classroom/<student>.json            GitHub Classroom's autograding result
                                      (what autograding-grading-reporter reads)
  report.md, heatmap.svg the class report: which checks the class fails most,
                         the submissions on no roster entry, the results a
                         regrade replaced (results/NAME/history/)
  similarity.md          which submissions of a lab are alike (sim_c), the
                         starter's lines left out

A lab is "not graded" when a check was skipped for want of a GPU ("no CUDA
device"), and "pending" when a check needs more GPUs than the node had
("needs 2 GPUs"): neither has a score, and no report counts it as passed;
a student's points count the labs graded, and say which are pending.
Exit status: 0, or 3 when some lab is not graded. Standard library only.
"""
import argparse
import csv
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unicodedata
from collections import Counter, OrderedDict

PASS, FAIL, SKIP, NOT_GRADED, MISSING = "pass", "fail", "skip", "not graded", "missing"
ERROR = "error"   # the grader could not run the lab's checker at all
# a failed check that could not look (the program did not build, or did not
# run to the end): a failure, said apart from the checks that looked
NOT_CHECKED = "not checked"
# A check skipped with one of these reasons needs hardware this node lacks:
# never a pass, no score. "no CUDA device" (no GPU at all): not graded;
# "needs 2 GPUs" (a lab that spans two GPUs, on a node with fewer): pending,
# until a node with enough grades that lab into the same folder.
NO_GPU_SKIP = re.compile(r"^no cuda device", re.I)
MORE_GPUS_SKIP = re.compile(r"^needs \d+ gpus", re.I)
PENDING = "pending"
GRADED = (PASS, FAIL, MISSING)      # the labs that score (a missing one 0)
WEIGHT = 10.0                        # what a lab is worth, unless --weights

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
                    verdict = (NOT_GRADED if NO_GPU_SKIP.match(reason) else
                               PENDING if MORE_GPUS_SKIP.match(reason) else SKIP)
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
            if said and said[0].startswith("not checked:"):
                verdict = NOT_CHECKED
            results[name] = (verdict, said)
    return results


def grade_lab(rdir, lab, names, weight):
    """The verdict of one lab: status, score, counts, why, per-check verdicts."""
    status_file = os.path.join(rdir, lab + ".status")
    lab_r = {"lab": lab, "checks": OrderedDict(), "outside": [], "seconds": "",
             "weight": weight, "graded_at": "", "kit": "", "sha256": "", "sandbox": ""}
    if not os.path.exists(status_file):
        if os.path.exists(os.path.join(rdir, "done")) or not os.path.isdir(rdir):
            # graded, but never this lab (a class graded lab by lab), or
            # never graded at all (a class graded student by student)
            lab_r.update(status=NOT_GRADED, why="not graded yet: grade this lab of this submission"
                         " (make grade LAB=%s STUDENT=%s)" % (lab_number(lab), os.path.basename(rdir)))
            for n in names:
                lab_r["checks"][n] = (NOT_GRADED, ["not graded yet"])
            return finish(lab_r)
        # the grading of this submission stopped (a Slurm task out of time?)
        lab_r.update(status=ERROR, why="not graded: the grading of this submission did not finish")
        for n in names:
            lab_r["checks"][n] = (ERROR, ["not graded: no result"])
        return finish(lab_r)
    with open(status_file, encoding="utf-8") as f:
        first = f.readline().strip()
    st = read_kv(status_file)
    for k in ("graded_at", "kit", "sha256", "sandbox"):
        lab_r[k] = st.get(k, "")
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
    # (the lab's own time limit, as it was graded; the submission's before)
    stopped = how_it_stopped(rc, timed_out, st if "lab_timeout" in st
                             else read_kv(os.path.join(rdir, "meta")))
    for n in names:
        if n in tap:
            lab_r["checks"][n] = tap[n]
        else:
            lab_r["checks"][n] = (NOT_CHECKED, ["not checked: " + stopped])
    for n, v in tap.items():      # a check the kit's list does not name
        lab_r["checks"].setdefault(n, v)
    verdicts = [v for v, _ in lab_r["checks"].values()]
    if NOT_GRADED in verdicts:
        lab_r["status"] = NOT_GRADED
    elif PENDING in verdicts:
        lab_r["status"] = PENDING
    elif FAIL in verdicts or NOT_CHECKED in verdicts:
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
    """Counts, score, points and the one-line why of a lab."""
    c = Counter(v for v, _ in lab_r["checks"].values())
    lab_r["passed"], lab_r["skipped"] = c[PASS], c[SKIP]
    lab_r["failed"] = c[FAIL] + c[NOT_CHECKED]
    lab_r["not_graded"] = c[NOT_GRADED] + c[PENDING]
    counted = lab_r["passed"] + lab_r["failed"]
    # what the lab is worth (its weight), and what it scored: a share of the
    # checks that looked or failed to, a missing lab none, a lab not graded
    # or pending nothing at all (no points, no maximum)
    w = lab_r["weight"]
    if lab_r["status"] in (PASS, FAIL):
        frac = c[PASS] / counted if counted else 0.0
        lab_r["score"] = str(round(100 * frac))
    elif lab_r["status"] == MISSING:
        frac = 0.0
        lab_r["score"] = "0"
    else:
        frac = None
        lab_r["score"] = lab_r["status"]
    lab_r["points"] = round(w * frac, 2) if frac is not None else None
    lab_r["max_points"] = w if frac is not None else 0
    if "why" not in lab_r:
        lab_r["why"] = why_of(lab_r)
    return lab_r


def why_of(lab_r):
    """The first failed check (or one that could not look) and what it said;
    or why the lab is not graded, or pending."""
    why = ""
    for name, (v, detail) in lab_r["checks"].items():
        if v in (FAIL, NOT_CHECKED):
            said = [d for d in detail if d.startswith(("expected:", "seen:", "not checked:"))]
            why = name + ": " + " | ".join(" ".join(d.split()) for d in (said or detail[:2]))
            break
    if lab_r["status"] in (NOT_GRADED, PENDING):
        if lab_r["status"] == NOT_GRADED:
            ng = "not graded: %d checks need a GPU" % lab_r["not_graded"]
        else:
            ng = "pending: %d checks need more GPUs than this node has" % lab_r["not_graded"]
        other = [d[0] for v, d in lab_r["checks"].values()
                 if v == PENDING and d]
        if other:
            ng += " (%s)" % other[0]
        why = ng + ("; failed already: " + why if why else "")
    return why[:400]

# -------------------------------------------------------------- one student


def grade_student(rdir, checks, weights, who):
    meta = read_kv(os.path.join(rdir, "meta"))
    labs = OrderedDict((lab, grade_lab(rdir, lab, names, weights.get(lab, WEIGHT)))
                       for lab, names in checks.items())
    st = [l["status"] for l in labs.values()]
    points = round(sum(l["points"] for l in labs.values() if l["points"] is not None), 2)
    maxp = sum(l["max_points"] for l in labs.values())
    pending = [lab for lab, l in labs.items() if l["status"] == PENDING]
    if ERROR in st:
        status = ERROR
    elif NOT_GRADED in st:
        status = NOT_GRADED
    elif FAIL in st or MISSING in st:
        status = FAIL
    elif pending:
        status = PENDING
    else:
        status = PASS
    scored = status in (PASS, FAIL, PENDING)
    score = ("%.1f" % (100.0 * points / maxp) if maxp else "") if scored else status
    notes = []
    sub = os.path.join(rdir, "submission.txt")
    if os.path.exists(sub):
        with open(sub, encoding="utf-8", errors="replace") as f:
            notes = [l.strip() for l in f if l.startswith(("ignored:", "unpack:"))]
    name = os.path.basename(rdir)
    w = who.get(name, {})
    return {"name": name, "display": w.get("name") or meta.get("display") or name,
            "sid": w.get("id", ""), "email": w.get("email", ""), "meta": meta, "labs": labs,
            "status": status, "points": points if scored else None, "max_points": maxp,
            "score": score, "pending": pending, "notes": notes,
            "history": read_history(rdir, checks, weights)}


def read_history(rdir, checks, weights):
    """[(lab, graded_at, verdict, folder)]: each result a regrade replaced
    (grade-one's keep_history: results/NAME/history/WHEN-LAB/), oldest
    first, its verdict as it was ("fail 40", "missing")."""
    out = []
    hdir = os.path.join(rdir, "history")
    if not os.path.isdir(hdir):
        return out
    for d in sorted(os.listdir(hdir)):
        for lab, names in checks.items():
            if os.path.exists(os.path.join(hdir, d, lab + ".status")):
                l = grade_lab(os.path.join(hdir, d), lab, names, weights.get(lab, WEIGHT))
                out.append((lab, l["graded_at"], lab_cell(l), "history/" + d))
    out.sort(key=lambda h: (h[1], h[0]))
    return out


def num(x):
    """A number of points as a CSV cell: 7.5, 10, or empty for none."""
    if x is None:
        return ""
    return ("%.2f" % x).rstrip("0").rstrip(".")

# -------------------------------------------------------------- who is who


def read_weights(text, labs):
    """{lab: points} from "01=20,09=5" (ids or numbers); the others WEIGHT."""
    w = {}
    for item in re.split(r"[,\s]+", text.strip()):
        if not item:
            continue
        k, sep, v = item.partition("=")
        hit = [lab for lab in labs if lab == k or lab_number(lab) == k.zfill(2)]
        try:
            val = float(v)
        except ValueError:
            val = -1
        if not sep or not hit or val < 0:
            print("report: weights: '%s' is not LAB=POINTS for a lab of %s" % (item, " ".join(labs)),
                  file=sys.stderr)
            sys.exit(2)
        w[hit[0]] = val
    return w


def fold(s):
    """A name as compared: no accents, no case, words joined by one space."""
    s = "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))
    return " ".join(re.sub(r"[^0-9a-z@.]+", " ", s.casefold()).split())


def read_roster(path):
    """[{id, name, email}] from a CSV with a header naming id, name and email
    (other columns, e.g. sis_user_id or login_id, ignored; first three
    columns in that order where the header names none of them)."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))
    if not rows:
        return []
    head = [h.strip().casefold() for h in rows[0]]

    def col(*names):
        return next((head.index(n) for n in names if n in head), None)
    ci, cn, ce = col("id", "sid", "student id", "student_id"), col("name", "student", "full name"), \
        col("email", "e-mail", "mail")
    body = rows[1:]
    if ci is None and cn is None and ce is None:
        ci, cn, ce, body = 0, 1, 2, rows
    out = []
    for r in body:
        def at(i):
            return r[i].strip() if i is not None and i < len(r) else ""
        if any(x.strip() for x in r):
            out.append({"id": at(ci), "name": at(cn), "email": at(ce)})
    return out


def read_gradescope_metadata(path):
    """{submission_<id>: [{id, name, email}, ...]} from Gradescope's
    submission_metadata.yml: every submitter of each submission (a group has
    several). PyYAML where it is installed, else the lines of that file."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    who = {}

    def person(d):
        return {"id": d.get("sid", ""), "name": d.get("name", ""), "email": d.get("email", "")}
    try:
        import yaml
        data = yaml.safe_load(text) or {}
        for key, v in data.items():
            subs = (v or {}).get(":submitters") or (v or {}).get("submitters") or []
            subs = [{k.lstrip(":"): str(x) for k, x in (s or {}).items()} for s in subs]
            if subs:
                who[str(key)] = [person(s) for s in subs]
        return who
    except ImportError:
        pass
    key, cur, subs = None, None, []

    def close():
        if key and subs:
            who[key] = [person(s) for s in subs]
    for line in text.splitlines():
        m = re.match(r"^(\S[^:]*):\s*$", line)
        if m:
            close()
            key, subs, cur = m.group(1).strip("'\""), [], None
            continue
        m = re.match(r"^\s*(-\s+)?:?(name|sid|email):\s*(.*)$", line)
        if m and key:
            if m.group(1) or cur is None:
                cur = {}
                subs.append(cur)
            v = m.group(3).strip()
            if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
                v = v[1:-1].replace("''", "'") if v[0] == "'" else json.loads(v)
            cur[m.group(2)] = v
    close()
    return who


def roster_keys(r):
    return {fold(r["id"]), fold(r["email"]), fold(r["email"].split("@")[0]), fold(r["name"])} - {""}


def match_person(p, roster):
    """The index of the roster entry that is person P (a Gradescope
    submitter): the same student id, else email, else name; None."""
    for field, key in (("id", "id"), ("email", "email"), ("name", "name")):
        v = fold(p.get(field, ""))
        if not v:
            continue
        for i, r in enumerate(roster):
            if fold(r[key]) == v:
                return i
    return None


def who_is_who(names, displays, roster, gs_meta):
    """Who made each submission, and the class list as an LMS takes it.
    Returns (who, people, unmatched, strays, shared):
    who      {student: {id, name, email}}: the submission's display (a
             group's names joined by " & "; the first member's id, email);
    people   {student: [{id, name, email, on_roster}]}: one a person who
             made it: Gradescope's submitters (every member of a group),
             else one, named after the submission; each matched to its
             roster entry where there is a roster (its id, name and email
             then the roster's);
    unmatched  the roster's entries no submission matched;
    strays     the submissions with a person on no roster entry (only where
               there is a roster);
    shared     {roster index: [students]} where two submissions matched
               one roster entry.
    A submission that is no Gradescope one is matched to the roster entry
    whose id, email, the email's part before @, or name is the submission's
    name or id (accents and case aside)."""
    who, people, used = {}, {}, {}
    for n in names:
        if n in gs_meta:
            ps = [dict(p) for p in gs_meta[n]]
            for p in ps:
                i = match_person(p, roster) if roster else None
                if i is not None:
                    p.update(roster[i])
                    used.setdefault(i, []).append(n)
                p["on_roster"] = i is not None
        else:
            p = {"id": "", "name": "", "email": "", "on_roster": False}
            if roster:
                keys = {fold(n), fold(displays.get(n, n))}
                for i, r in enumerate(roster):
                    if keys & roster_keys(r):
                        p.update(r)
                        p["on_roster"] = True
                        used.setdefault(i, []).append(n)
                        break
            ps = [p]
        people[n] = ps
        named = [p for p in ps if p["name"]]
        if named or any(p["on_roster"] for p in ps):
            who[n] = {"name": " & ".join(p["name"] for p in ps if p["name"]),
                      "id": ps[0]["id"], "email": ps[0]["email"]}
    unmatched = [r for i, r in enumerate(roster) if i not in used]
    strays = [n for n in names if roster and not all(p["on_roster"] for p in people[n])]
    shared = {i: ns for i, ns in used.items() if len(set(ns)) > 1}
    return who, people, unmatched, strays, shared

# -------------------------------------------------------------- the outputs


def write_gradebook(path, students, checks):
    cols = ["%s: %s" % (lab, n) for lab, names in checks.items() for n in names]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", "lab", "status", "score", "passed", "failed", "skipped",
                    "not_graded", "why", "graded_at", "kit", "sha256"] + cols)
        for s in students:
            for lab, l in s["labs"].items():
                cells = {"%s: %s" % (lab, n): v for n, (v, _) in l["checks"].items()}
                w.writerow([s["name"], lab, l["status"], l["score"], l["passed"], l["failed"],
                            l["skipped"], l["not_graded"], l["why"], l["graded_at"], l["kit"],
                            l["sha256"]] + [cells.get(c, "") for c in cols])


def lab_cell(l):
    return "%s %s" % (l["status"], l["score"]) if l["status"] in (PASS, FAIL) else l["status"]


def write_students(path, students, checks, unmatched, people, strays, shared, weak):
    """A row per person, for an LMS: each member of a group submission its
    own row; points only for what was graded (none at all for a student not
    graded), the labs pending named; every roster entry with no submission
    at 0, flagged where some submission matched no roster entry (note).
    WEAK: a first line that says the sandbox was weaker, or nothing."""
    total = sum(WEIGHTS_OF.get(lab, WEIGHT) for lab in checks)
    with open(path, "w", newline="", encoding="utf-8") as f:
        if weak:
            f.write("# WARNING: %s\n" % weak)
        w = csv.writer(f)
        w.writerow(["student", "name", "id", "email", "status", "score", "points", "max_points",
                    "pending"] + list(checks) + ["note"])
        for s in students:
            others = {n for i, ns in shared.items() for n in ns if s["name"] in ns} - {s["name"]}
            for p in people.get(s["name"]) or [{"name": s["display"], "id": s["sid"],
                                                 "email": s["email"], "on_roster": True}]:
                note = []
                if strays and s["name"] in strays and not p.get("on_roster"):
                    note.append("on no roster entry: find whose submission this is")
                if others:
                    note.append("its roster entry also matches %s: keep one" % ", ".join(sorted(others)))
                w.writerow([s["name"], p.get("name") or s["display"], p.get("id", ""),
                            p.get("email", ""), s["status"], s["score"], num(s["points"]),
                            num(s["max_points"]), " ".join(s["pending"])]
                           + [lab_cell(l) for l in s["labs"].values()] + ["; ".join(note)])
        for r in unmatched:       # on the roster, no submission: nothing handed in
            note = ("no submission matched; %d submission%s match%s no roster entry (%s):"
                    " one may be this student's" % (len(strays), "" if len(strays) == 1 else "s",
                                                     "es" if len(strays) == 1 else "",
                                                     ", ".join(strays[:5]))) if strays else ""
            w.writerow(["", r["name"], r["id"], r["email"], "no submission", "0.0", "0",
                        num(total), ""] + ["missing"] * len(checks) + [note])


def weak_sandbox(students):
    """One line where some lab was graded without bubblewrap (GRADE_SANDBOX
    uid or none, the instructor's choice): which, and what it let through;
    empty otherwise."""
    kinds = Counter(l["sandbox"] for s in students for l in s["labs"].values()
                    if l["sandbox"] in ("uid", "none"))
    if not kinds:
        return ""
    said = {"uid": "a uid of its own (GRADE_SANDBOX=uid: a program could read what every user "
                   "may, and reach the network)",
            "none": "no sandbox (GRADE_SANDBOX=none: a program ran as the grading user, beside "
                    "its checker, and could have written its own verdict)"}
    return "graded with a weaker sandbox: %s" % "; ".join(
        "%d labs with %s" % (n, said[k]) for k, n in sorted(kinds.items()))


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
    elif s["status"] == PENDING or s["pending"]:
        title += " (pending: %s)" % ", ".join(s["pending"])
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
            elif v in (FAIL, NOT_CHECKED, MISSING):
                msg = detail[0] if detail else v
                lines.append(tc + '><failure message="%s">%s</failure></testcase>'
                             % (xml_attr(msg), html.escape(text, quote=False)))
            else:
                why = ("not graded: needs a GPU (%s)" % text if v == NOT_GRADED else
                       "pending: needs more GPUs (%s)" % text if v == PENDING else text)
                lines.append(tc + '><skipped message="%s"/></testcase>' % xml_attr(why))
        lines.append("  </testsuite>")
    lines.append("</testsuites>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def summary_text(s):
    head = "CUDA Stream Labs: %s" % s["display"]
    if s["display"] != s["name"]:
        head += " (%s)" % s["name"]
    out = [head]
    if s["status"] == NOT_GRADED:
        n = sum(l["not_graded"] for l in s["labs"].values())
        out.append("NOT GRADED: %d checks need a GPU, or were not graded yet; these results are"
                   " not a grade." % n)
    elif s["status"] == ERROR:
        why = next(l["why"] for l in s["labs"].values() if l["status"] == ERROR)
        out.append("NOT GRADED: the grader could not check some lab (its error, not a grade): %s"
                   % re.sub(r"^error: ", "", why))
    else:
        out.append("Score: %s of %s points (%s%%), for the labs graded." %
                   (num(s["points"]), num(s["max_points"]), s["score"] or "0"))
        if s["pending"]:
            out.append("Pending: %s (its checks need more GPUs than the node that graded it;"
                       " graded later, and added to this score)." % ", ".join(s["pending"]))
    for lab, l in s["labs"].items():
        line = "  %-18s %s" % (lab, l["status"])
        if l["status"] in (PASS, FAIL):
            line += " %s%% (%d of %d checks), %s of %s points" % (
                l["score"], l["passed"], l["passed"] + l["failed"], num(l["points"]),
                num(l["max_points"]))
        if l["why"]:
            line += " -- " + l["why"]
        out.append(line)
    return "\n".join(out)


def check_shares(l):
    """[(verdict, detail, score, max_score)] of a lab's checks: the lab's
    weight shared among the checks that count (a skip that does not apply
    here counts nothing; a lab pending or not graded, nothing at all)."""
    counted = [v for v, _ in l["checks"].values() if v in (PASS, FAIL, NOT_CHECKED, MISSING)]
    share = l["weight"] / len(counted) if counted and l["status"] in GRADED else 0.0
    out = []
    for v, detail in l["checks"].values():
        m = share if v in (PASS, FAIL, NOT_CHECKED, MISSING) else 0.0
        out.append((v, detail, round(m if v == PASS else 0.0, 4), round(m, 4)))
    return out


def write_gradescope(path, s):
    """Gradescope's results.json: a test per check, the lab's weight shared
    among its checks; the score the student's points (the labs graded)."""
    tests = []
    for lab, l in s["labs"].items():
        for i, (name, (v, detail, sc, mx)) in enumerate(zip(l["checks"], check_shares(l)), 1):
            t = {"name": "%s: %s" % (lab, name), "number": "%d.%d" % (int(lab_number(lab)), i),
                 "max_score": mx, "score": sc, "output": "\n".join(detail)}
            if v == PASS:
                t["status"] = "passed"
            elif v in (FAIL, NOT_CHECKED, MISSING, ERROR):
                t["status"] = "failed"
            elif v == SKIP:                    # did not apply here: worth nothing
                t.update(status="passed", output="skipped: " + "\n".join(detail))
            elif v == PENDING:                 # no status, no points yet
                t["output"] = "pending: this check needs more GPUs (" + "\n".join(detail) + ")"
            else:                              # not graded: no status, no points
                t["output"] = "not graded: this check needs a GPU (" + "\n".join(detail) + ")"
            tests.append(t)
    graded = s["status"] in (PASS, FAIL, PENDING)
    r = {"score": s["points"] if graded else 0,
         "output": summary_text(s), "tests": tests,
         "extra_data": {"graded": graded, "status": s["status"], "pending": s["pending"],
                        "max_points": s["max_points"], "name": s["display"]}}
    if not graded:
        r["visibility"] = "hidden"            # not a grade: do not show it to the student
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(r, f, indent=1, ensure_ascii=False)
        f.write("\n")


def write_classroom(path, s):
    """GitHub Classroom: the result object of a runner of the autograding
    actions (version 1), which autograding-grading-reporter reads from
    <RUNNER>_RESULTS, base64-encoded."""
    tests = []
    for lab, l in s["labs"].items():
        for name, (v, detail, sc, mx) in zip(l["checks"], check_shares(l)):
            st = {PASS: "pass", SKIP: "pass", FAIL: "fail", NOT_CHECKED: "fail",
                  MISSING: "fail"}.get(v, "error")
            msg = "\n".join(detail)
            if v == NOT_GRADED:
                msg = "not graded: this check needs a GPU (%s)" % msg
            elif v == PENDING:
                msg = "pending: this check needs more GPUs (%s)" % msg
            tests.append({"name": "%s: %s" % (lab, name), "status": st,
                          "score": sc, "message": msg, "line_no": 0, "execution_time": ""})
    status = {PASS: "pass", FAIL: "fail"}.get(s["status"], "error")
    r = {"version": 1, "status": status, "max_score": s["max_points"], "tests": tests}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(r, f, indent=1, ensure_ascii=False)
        f.write("\n")


def write_feedback(path, s, rdir):
    """What to hand back to a student: the summary, then what the checker
    said for each lab, as make check shows it."""
    weak = weak_sandbox([s])
    o = (["WARNING: " + weak] if weak else []) + [summary_text(s), ""]
    for lab, l in s["labs"].items():
        o.append("=" * 72)
        o.append("%s: %s" % (lab, lab_cell(l)))
        o.append("=" * 72)
        log = os.path.join(rdir, lab + ".log")
        if l["status"] not in (PASS, FAIL):
            o.append(l["why"] or l["status"])
        if l["status"] != MISSING and os.path.exists(log):
            with open(log, encoding="utf-8", errors="replace") as f:
                o.append(f.read().rstrip("\n"))
        o.append("")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(o) + "\n")

# -------------------------------------------------------------- the class report


COLORS = {PASS: "#2e7d32", FAIL: "#c62828", NOT_CHECKED: "#f4b4b4", SKIP: "#9e9e9e",
          PENDING: "#64b5f6", NOT_GRADED: "#f9a825", MISSING: "#eeeeee", ERROR: "#6a1b9a"}


def check_ids(checks):
    """[(lab, index, name, id like 03.7)] for every check of every lab."""
    return [(lab, i, n, "%s.%d" % (lab_number(lab), i))
            for lab, names in checks.items() for i, n in enumerate(names, 1)]


def write_heatmap(path, students, checks):
    """Students x checks, a cell per check coloured by its verdict (a check
    that failed apart from one that could not look: "not checked"), a gap
    between labs, and above each column a bar: how many graded submissions
    failed that check (not counting those not checked)."""
    cols = check_ids(checks)
    cell, gap, lab_gap = 14, 1, 8
    left = 12 + 7 * max([len(s["display"]) for s in students] + [18])
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
        f, g = sum(v == FAIL for v in vs), sum(v in (PASS, FAIL, NOT_CHECKED) for v in vs)
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
                 % (left - 6, y + cell - 3, xml_attr(s["display"])))
        for k, (lab, i, n, cid) in enumerate(cols):
            v = s["labs"][lab]["checks"].get(n, (MISSING, []))[0]
            o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s">'
                     '<title>%s, %s %s: %s</title></rect>'
                     % (xs[k], y, cell, cell, COLORS[v], xml_attr(s["name"]), cid, xml_attr(n), v))
    y = top + len(students) * (cell + gap) + 20
    x = left
    for v in (PASS, FAIL, NOT_CHECKED, SKIP, PENDING, NOT_GRADED, MISSING, ERROR):
        o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#999"/>'
                 '<text x="%d" y="%d">%s</text>' % (x, y, cell, cell, COLORS[v],
                                                    x + cell + 4, y + cell - 3, v))
        x += cell + 14 + 6 * len(v)
    o.append("</svg>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(o) + "\n")


def md(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def write_report(path, students, checks, results_dir, unmatched, sim_note, strays=(),
                 shared=None, roster=()):
    labs = list(checks)
    weak = weak_sandbox(students)
    count = Counter(l["status"] for s in students for l in s["labs"].values())
    stamps = [(l["graded_at"], s["meta"]) for s in students for l in s["labs"].values()
              if l["graded_at"]]
    dates = sorted(d[:10] for d, _ in stamps)
    hosts = sorted({"%s (%s)" % (m.get("host", "?"), m.get("gpu") or "no GPU") for _, m in stamps})
    sandboxes = sorted({m.get("sandbox", "") for _, m in stamps} - {""})
    total = sum(WEIGHTS_OF.get(lab, WEIGHT) for lab in labs)
    o = (["> **WARNING: %s.** Grade untrusted code with bubblewrap (README.md, \"The sandbox\")."
          % weak, ""] if weak else []) + ["# Class report", "",
         "%d submissions, %d labs each, graded on %s, %s%s." %
         (len(students), len(labs), ", ".join(hosts) or "?",
          dates[0] if dates else "?", " to " + dates[-1] if dates and dates[-1] != dates[0] else ""),
         "Labs: %s." % ", ".join("%d %s" % (count[k], k) for k in
                                 (PASS, FAIL, PENDING, NOT_GRADED, MISSING, ERROR) if count[k]),
         "Sandbox: %s." % (", ".join(sandboxes) or "?"),
         "Points: %s; %s in all (set the Gradescope assignment's total points to %s)."
         % (", ".join("%s %s" % (lab_number(l), num(WEIGHTS_OF.get(l, WEIGHT))) for l in labs),
            num(total), num(total)), ""]
    if count[PENDING]:
        o += ["> **Pending:** %d labs have checks that need more GPUs than the node that graded "
              "them (%s). Their students' points count the other labs. Grade those labs on a "
              "node with enough GPUs into this folder (README.md, \"Lab 09\")."
              % (count[PENDING], ", ".join(sorted({lab for s in students for lab in s["pending"]}))), ""]
    if count[NOT_GRADED]:
        o += ["> **Not graded:** %d labs had checks that need a GPU, and there was none, or were "
              "not graded yet. They have no score here; grade them on a GPU node." % count[NOT_GRADED], ""]
    if count[ERROR]:
        o += ["> **Grader error:** %d labs could not be checked; they have no score here:"
              % count[ERROR], ">"]
        o += ["> - %s, %s: %s" % (md(s["name"]), lab, md(l["why"]))
              for s in students for lab, l in s["labs"].items() if l["status"] == ERROR]
        o += [""]
    if strays:
        o += ["> **On no roster entry:** %d submissions match no entry of the roster: their rows "
              "in students.csv say so (note), and so does each roster entry with no submission; "
              "find whose each is before you upload:" % len(strays), ">"]
        o += ["> - %s (%s)" % (md(n), md(next((s["display"] for s in students if s["name"] == n), n)))
              for n in strays]
        o += [""]
    for i, ns in sorted((shared or {}).items()):
        r = roster[i]
        o += ["> **One roster entry, %d submissions:** %s (%s) is matched by %s: keep one."
              % (len(set(ns)), md(r["name"] or r["id"]), md(r["email"] or r["id"]),
                 ", ".join(md(n) for n in sorted(set(ns)))), ""]
    o += ["## Students", "",
          "| student | name | points | score | " + " | ".join(labs) + " |",
          "|---|---|---|---|" + "---|" * len(labs)]
    for s in students:
        cells = []
        for l in s["labs"].values():
            cells.append("%s %s%%" % (l["status"], l["score"]) if l["status"] in (PASS, FAIL)
                         else l["status"])
        if s["status"] in (PASS, FAIL, PENDING):
            pts, sc = "%s of %s" % (num(s["points"]), num(s["max_points"])), (s["score"] or "0") + "%"
        else:
            pts, sc = "", "**%s**" % s["status"]
        o.append("| %s | %s | %s | %s | %s |" % (md(s["name"]), md(s["display"]), pts, sc,
                                                 " | ".join(cells)))
    # the builds that failed: each once, not as every check it left unchecked
    nobuild = [(s, lab) for s in students for lab, l in s["labs"].items()
               if l["checks"] and next(iter(l["checks"].values()))[0] == FAIL
               and next(iter(l["checks"])) .startswith("the program builds")
               and any(v == NOT_CHECKED for v, _ in l["checks"].values())]
    # the checks the class fails most
    rows = []
    for lab, i, n, cid in check_ids(checks):
        vs = [s["labs"][lab]["checks"].get(n, (MISSING, [])) for s in students]
        failed = [d for v, d in vs if v == FAIL]
        nc = sum(v == NOT_CHECKED for v, _ in vs)
        graded = sum(v in (PASS, FAIL, NOT_CHECKED) for v, _ in vs)
        ng = sum(v in (NOT_GRADED, PENDING) for v, _ in vs)
        seen = Counter(next((x for x in d if x.startswith(("seen:", "not checked:"))), "")
                       for d in failed)
        top = seen.most_common(1)[0][0] if failed else ""
        rows.append((len(failed), nc, graded, ng, cid, n, top, (lab, i)))
    rows.sort(key=lambda r: (-r[0], r[7]))
    o += ["", "## The checks the class fails most", "",
          "A check that could not look (the program did not build, or did not run to the end) "
          "is counted apart, as not checked: a build that failed counts once, on the build check.",
          ""]
    if nobuild:
        o += ["Did not build: %d labs (%s)." % (len(nobuild), ", ".join(
            "%s %s" % (md(s["name"]), lab_number(lab)) for s, lab in nobuild[:12])
            + (", ..." if len(nobuild) > 12 else "")), ""]
    o += ["| check | what it checks | failed | not checked | of graded | not graded or pending "
          "| what most failures saw |", "|---|---|---|---|---|---|---|"]
    for f, nc, g, ng, cid, n, top, _ in rows:
        if f == 0:
            continue
        o.append("| %s | %s | %d | %d | %d | %d | %s |" % (cid, md(n), f, nc, g, ng, md(top[:160])))
    if not any(r[0] for r in rows):
        o.append("| | no check failed | | | | | |")
    o += ["", "## Heat map", "",
          "Rows are students, columns are checks (numbered as below); the bars on top "
          "are how many graded submissions failed each check. A check that failed is red, one "
          "that could not look (not checked) pink, a pending one blue, one not graded yellow.", "",
          "![students x checks](heatmap.svg)", "", "## Alike", "", sim_note, "",
          "## The checks", ""]
    for lab, names in checks.items():
        o.append("- **%s**: " % lab + "; ".join("%s.%d %s" % (lab_number(lab), i, md(n))
                                                 for i, n in enumerate(names, 1)))
    regraded = [(s, h) for s in students for h in s["history"]]
    if regraded:
        o += ["", "## Regraded", "",
              "Each result a later grading replaced, kept as it was (its status, log, TAP and the "
              "file it graded) in the folder linked:", "",
              "| student | lab | graded | verdict then | now | kept in |", "|---|---|---|---|---|---|"]
        for s, (lab, when, verdict, rel) in regraded:
            where = "results/%s/%s" % (s["name"], rel)
            o.append("| %s | %s | %s | %s | %s | [%s](%s/) |" % (
                md(s["name"]), lab, md(when or "?"), md(verdict),
                md(lab_cell(s["labs"][lab]) if lab in s["labs"] else "?"), md(where), where))
    notes = []
    for s in students:
        for n in s["notes"]:
            notes.append("%s: %s" % (s["name"], n))
        for lab, l in s["labs"].items():
            if l["outside"]:
                notes.append("%s, %s: left files outside its folder (removed): %s"
                             % (s["name"], lab, ", ".join(l["outside"][:5])))
    for r in unmatched:
        notes.append("on the roster, no submission: %s%s" % (r["name"] or r["id"],
                                                            " <%s>" % r["email"] if r["email"] else ""))
    ignored = os.path.join(os.path.dirname(results_dir.rstrip("/")), "ignored.txt")
    if os.path.exists(ignored):
        with open(ignored, encoding="utf-8", errors="replace") as f:
            notes += [l.strip() for l in f if l.strip()]
    if notes:
        o += ["", "## Notes", ""] + ["- " + md(n) for n in notes]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(o) + "\n")

# -------------------------------------------------------------- alike


def code_lines(path):
    """A file's lines as compared with the starter's: no blanks around, no
    whitespace inside."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return []


def write_similarity(path, students, checks, results_dir, starters, threshold):
    """For each lab, the pairs of the class's files for it that sim_c (sim_text
    for a lab not in C) finds alike, the starter's lines left out of every
    file first: "A consists for x % of B material". Returns a line for the
    class report."""
    sim_c, sim_text = shutil.which("sim_c"), shutil.which("sim_text")
    o = ["# Alike: the class's submissions of each lab", ""]
    if not sim_c:
        note = ("Not made: sim_c (Debian's similarity-tester) is not installed here "
                "(apt-get install similarity-tester).")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(o + [note]) + "\n")
        return note
    o += ["For each lab, the files of two students whose code is alike, as Debian's "
          "similarity-tester (sim_c, sim_text for Python) measures it: layout, comments and "
          "names aside, \"A consists for x %% of B material\". Every line of the lab's starter "
          "was taken out of each file first, so what is compared is what the students wrote. "
          "Only pairs of %d %% and more are listed (GRADE_SIMILAR). Alike is no proof of "
          "copying: a short TODO has few right answers; read the two files (results/NAME/files/)."
          % threshold, ""]
    found = 0
    tmp = tempfile.mkdtemp(prefix="cuda-stream-labs-alike.")
    try:
        for lab in checks:
            files = []
            for s in students:
                d = os.path.join(results_dir, s["name"], "files", lab)
                if not os.path.isdir(d):
                    continue
                for fn in sorted(os.listdir(d)):
                    files.append((s["name"], fn, os.path.join(d, fn)))
            if len(files) < 2:
                continue
            src = files[0][1]
            given = {l.strip() for l in code_lines(os.path.join(starters, lab, src))} - {""}
            os.makedirs(os.path.join(tmp, lab))
            names = []
            for who, fn, p in files:
                kept = [l for l in code_lines(p) if l.strip() not in given]
                q = os.path.join(tmp, lab, who + os.path.splitext(fn)[1])
                with open(q, "w", encoding="utf-8") as f:
                    f.write("\n".join(kept) + "\n")
                names.append(q)
            tool = sim_c if src.endswith((".cu", ".c", ".h")) or not sim_text else sim_text
            try:
                r = subprocess.run([tool, "-p", "-e", "-s", "-T", "-t", str(threshold)] + names,
                                   capture_output=True, text=True, timeout=600)
                out = r.stdout
            except (OSError, subprocess.TimeoutExpired) as e:
                o += ["## %s" % lab, "", "sim failed: %s" % e, ""]
                continue
            pairs = []
            for line in out.splitlines():
                m = re.match(r"^(\S+) consists for (\d+) % of (\S+) material", line)
                if m:
                    a = os.path.splitext(os.path.basename(m.group(1)))[0]
                    b = os.path.splitext(os.path.basename(m.group(3)))[0]
                    pairs.append((int(m.group(2)), a, b))
            pairs.sort(key=lambda p: (-p[0], p[1], p[2]))
            o += ["## %s" % lab, ""]
            if pairs:
                o += ["| student | consists for | of student's |", "|---|---|---|"]
                o += ["| %s | %d %% | %s |" % (md(a), x, md(b)) for x, a, b in pairs]
                found += len(pairs)
            else:
                o.append("No two of the %d files alike at %d %% or more." % (len(files), threshold))
            o.append("")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(o) + "\n")
    return ("[similarity.md](similarity.md): %d pairs of files alike at %d %% or more "
            "(sim_c, the starter's lines left out)." % (found, threshold))

# -------------------------------------------------------------- main


WEIGHTS_OF = {}


def main():
    global WEIGHTS_OF
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="a graded class's gradebook and reports")
    ap.add_argument("--kit", required=True)
    ap.add_argument("--results")
    ap.add_argument("--out")
    ap.add_argument("--check-weights", action="store_true",
                    help="only say whether --weights names labs of the kit and points (exit 0, or 2)")
    ap.add_argument("--labs", default="")
    ap.add_argument("--submissions", help="the class list (ID<TAB>KIND<TAB>PATH<TAB>NAME); "
                    "default: every folder in --results")
    ap.add_argument("--roster", help="the class (CSV: id, name, email); default OUT/roster.csv")
    ap.add_argument("--weights", help="what each lab is worth (01=20,09=5); default "
                    "OUT/weights.txt, else %g points each" % WEIGHT)
    ap.add_argument("--starters", default=os.path.join(here, "..", "..", "labs"),
                    help="the labs' starters, whose lines similarity.md leaves out")
    a = ap.parse_args()
    all_labs = sorted(f[:-5] for f in os.listdir(os.path.join(a.kit, "checker"))
                      if re.match(r"^\d\d-.*\.bats$", f))
    if a.check_weights:
        read_weights(a.weights or "", all_labs)
        return 0
    if not a.results or not a.out:
        ap.error("--results and --out are needed")
    if a.labs.split():
        labs = a.labs.split()
    else:
        # every lab some student's results have (a class graded lab by lab)
        have = set()
        for d in os.listdir(a.results):
            if os.path.isdir(os.path.join(a.results, d)):
                have |= {f[:-7] for f in os.listdir(os.path.join(a.results, d))
                         if f.endswith(".status")}
        labs = [l for l in all_labs if l in have] or all_labs
    checks = kit_checks(a.kit, labs)
    displays = {}
    if a.submissions:
        with open(a.submissions, encoding="utf-8") as f:
            rows = [l.rstrip("\n").split("\t") for l in f if l.strip()]
        names = sorted(r[0] for r in rows)
        displays = {r[0]: r[3] for r in rows if len(r) > 3}
    else:
        names = sorted(d for d in os.listdir(a.results)
                       if os.path.isdir(os.path.join(a.results, d)))
    roster_path = a.roster or os.path.join(a.out, "roster.csv")
    roster = read_roster(roster_path) if os.path.exists(roster_path) else []
    gs_path = os.path.join(a.out, "submission_metadata.yml")
    gs_meta = read_gradescope_metadata(gs_path) if os.path.exists(gs_path) else {}
    wtext = a.weights
    if wtext is None and os.path.exists(os.path.join(a.out, "weights.txt")):
        with open(os.path.join(a.out, "weights.txt"), encoding="utf-8") as f:
            wtext = f.read()
    WEIGHTS_OF = read_weights(wtext or "", all_labs)
    who, people, unmatched, strays, shared = who_is_who(names, displays, roster, gs_meta)
    students = [grade_student(os.path.join(a.results, d), checks, WEIGHTS_OF, who) for d in names]
    weak = weak_sandbox(students)
    os.makedirs(a.out, exist_ok=True)
    for sub in ("junit", "gradescope", "classroom", "feedback"):
        os.makedirs(os.path.join(a.out, sub), exist_ok=True)
    write_gradebook(os.path.join(a.out, "gradebook.csv"), students, checks)
    write_students(os.path.join(a.out, "students.csv"), students, checks, unmatched, people,
                   strays, shared, weak)
    for s in students:
        write_junit(os.path.join(a.out, "junit", s["name"] + ".xml"), s)
        write_gradescope(os.path.join(a.out, "gradescope", s["name"], "results.json"), s)
        write_classroom(os.path.join(a.out, "classroom", s["name"] + ".json"), s)
        write_feedback(os.path.join(a.out, "feedback", s["name"] + ".txt"), s,
                       os.path.join(a.results, s["name"]))
    # Gradescope's autograder for results made here (README.md, "Gradescope")
    for f in ("run_autograder", "setup.sh"):
        shutil.copy(os.path.join(here, "gradescope", f), os.path.join(a.out, "gradescope", f))
    write_heatmap(os.path.join(a.out, "heatmap.svg"), students, checks)
    sim_note = write_similarity(os.path.join(a.out, "similarity.md"), students, checks,
                                a.results, a.starters, int(os.environ.get("GRADE_SIMILAR", "60")))
    write_report(os.path.join(a.out, "report.md"), students, checks, a.results, unmatched, sim_note,
                 strays, shared, roster)

    count = Counter(l["status"] for s in students for l in s["labs"].values())
    if weak:
        print("grade: WARNING: %s" % weak)
    if strays:
        print("grade: %d submissions match no roster entry (%s): see report.md before you upload"
              % (len(strays), ", ".join(strays[:8])))
    print("grade: %d students; labs: %s" % (len(students), ", ".join(
        "%d %s" % (count[k], k) for k in (PASS, FAIL, PENDING, NOT_GRADED, MISSING, ERROR)
        if count[k])))
    if count[PENDING]:
        print("grade: pending: %d labs have checks that need more GPUs than this node has; the"
              " students' points count the other labs (grade those labs on a node with enough"
              " GPUs into this folder)" % count[PENDING])
    if count[NOT_GRADED]:
        ng = sum(l["not_graded"] for s in students for l in s["labs"].values()
                 if l["status"] == NOT_GRADED)
        print("grade: not graded: %d checks need a GPU, or were not graded yet (%d labs);"
              " no score for those labs" % (ng, count[NOT_GRADED]))
    if count[ERROR]:
        print("grade: %d labs could not be graded (error: the grader could not open or check them):"
              " see report.md" % count[ERROR])
    total = sum(WEIGHTS_OF.get(lab, WEIGHT) for lab in labs)
    print("grade: points: %s in all (the Gradescope assignment's total)" % num(total))
    print("grade: wrote %s/gradebook.csv, students.csv, report.md, heatmap.svg, similarity.md, "
          "feedback/, junit/, gradescope/, classroom/" % a.out)
    return 3 if count[NOT_GRADED] or count[ERROR] else 0


if __name__ == "__main__":
    sys.exit(main())
