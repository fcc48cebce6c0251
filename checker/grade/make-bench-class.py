#!/usr/bin/env python3
"""make-bench-class.py -- a class of N full, distinct submissions (make bench-grade).

    checker/grade/make-bench-class.py DIR N [--seed S] [--wrong P] [--unfinished P]

Writes DIR/submissions/ (student-001 ... student-N), DIR/expected.tsv (the
verdict each lab must get, as make-test-class.sh's: check-verdicts reads it)
and DIR/class.tsv (what each lab's file is: solution, mutant NAME or starter).

Every submission hands in every lab. Each lab's file is the kit's solution,
or, with probability P (--wrong, default 0.15), the solution with one of the
lab's mutants applied (checker/tests/mutants, or checker/mutants: the mistake
a student makes; the lab fails the check the patch names), or, with
probability --unfinished (default 0.02), the lab's starter (it fails). Each
file ends with a comment of its student's (a line or two, the student's name
in it): the same program, but no two files of the class alike, so no cache of
identical files decides a figure. The layouts alternate: a folder with
labs/ID/FILE, a tarball with the files flat in one folder, a zip with
labs/ID/FILE. The same N and seed make the same class, byte for byte.
"""
import argparse
import gzip
import io
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
KIT = os.path.dirname(os.path.dirname(HERE))
NOTES = ["done", "done, took a while", "works on my GPU", "finally",
         "see README", "thanks for the hints", "late night", "ok"]


def labs_and_sources():
    """[(lab id, the file a student writes)], from the kit (lib.bash's kit_src)."""
    out = subprocess.run(
        ["bash", "-c", '. "$1/lib.bash"; for id in $(kit_labs "$2"); do '
         'printf "%s\\t%s\\n" "$id" "$(kit_src "$2" "$id")"; done', "_", HERE, KIT],
        check=True, capture_output=True, text=True).stdout
    return [tuple(l.split("\t")) for l in out.splitlines() if l]


def mutants_dir():
    for d in ("checker/tests/mutants", "checker/mutants"):
        if os.path.isdir(os.path.join(KIT, d)):
            return os.path.join(KIT, d)
    sys.exit("make-bench-class.py: no mutants in the kit (checker/tests/mutants)")


def expected_check(patch):
    with open(patch, encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i >= 5:
                break
            if line.startswith("# expect: "):
                return line[len("# expect: "):].rstrip("\n")
    return "-"


def needs_two(lab):
    with open(os.path.join(KIT, "checker", lab + ".bats"), encoding="utf-8") as f:
        return re.search(r"need_gpus [2-9]", f.read()) is not None


def mutated(lab, src, patch):
    """The solution of LAB with PATCH applied (patch -F0 -p1), as bytes."""
    with tempfile.TemporaryDirectory() as t:
        shutil.copy(os.path.join(KIT, "solutions", lab, src), t)
        with open(patch, "rb") as p:
            r = subprocess.run(["patch", "-s", "-F0", "-p1", "-d", t], stdin=p, capture_output=True)
        if r.returncode != 0:
            sys.exit("make-bench-class.py: %s does not apply" % patch)
        with open(os.path.join(t, src), "rb") as f:
            return f.read()


def remark(student, lab, src, rnd):
    """A student's comment at the end of a file: harmless text, the name in it."""
    text = "%s, lab %s: %s" % (student, lab[:2], rnd.choice(NOTES))
    blank = b"\n" * rnd.randint(0, 2)
    if src.endswith(".py"):
        return blank + ("# %s\n" % text).encode()
    return blank + ("/* %s */\n" % text).encode()


def write_tar(path, folder, files):
    """A .tar.gz of FILES ({name: bytes}) in FOLDER/, the same bytes every time."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name in sorted(files):
            info = tarfile.TarInfo("%s/%s" % (folder, name))
            info.size, info.mtime, info.mode = len(files[name]), 1700000000, 0o644
            info.uname = info.gname = "student"
            tar.addfile(info, io.BytesIO(files[name]))
    with open(path, "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as g:
        g.write(raw.getvalue())


def write_zip(path, files):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=(2026, 11, 20, 12, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, files[name])


def main():
    ap = argparse.ArgumentParser(description="a class of N full, distinct submissions")
    ap.add_argument("dir")
    ap.add_argument("n", type=int)
    ap.add_argument("--seed", type=int, default=33)
    ap.add_argument("--wrong", type=float, default=0.15)
    ap.add_argument("--unfinished", type=float, default=0.02)
    a = ap.parse_args()
    if a.n < 1:
        sys.exit("make-bench-class.py: N must be 1 or more")
    rnd = random.Random(a.seed)
    labs = labs_and_sources()
    mdir = mutants_dir()
    patches = {lab: sorted(os.path.join(mdir, lab, p) for p in os.listdir(os.path.join(mdir, lab))
                           if p.endswith(".patch"))
               if os.path.isdir(os.path.join(mdir, lab)) else [] for lab, _ in labs}
    two = {lab: needs_two(lab) for lab, _ in labs}
    subs = os.path.join(a.dir, "submissions")
    shutil.rmtree(subs, ignore_errors=True)
    os.makedirs(subs)
    exp = ["student\tlab\tverdict\tcheck\tverdict_without_gpu\tverdict_one_gpu"]
    what = ["student\tlab\tfile"]
    for i in range(1, a.n + 1):
        student = "student-%03d" % i
        files = {}
        for lab, src in labs:
            roll = rnd.random()
            if roll < a.wrong and patches[lab]:
                p = rnd.choice(patches[lab])
                body, kind = mutated(lab, src, p), "mutant " + os.path.basename(p)[:-len(".patch")]
                verdict, check, one = "fail", expected_check(p), "pending" if two[lab] else "fail"
            elif roll < a.wrong + a.unfinished:
                with open(os.path.join(KIT, "labs", lab, src), "rb") as f:
                    body = f.read()
                kind, verdict, check, one = "starter", "fail", "-", "fail"    # it stops at TODO(1)
            else:
                with open(os.path.join(KIT, "solutions", lab, src), "rb") as f:
                    body = f.read()
                kind, verdict, check, one = "solution", "pass", "-", "pending" if two[lab] else "pass"
            files[(lab, src)] = body + remark(student, lab, src, rnd)
            exp.append("\t".join((student, lab, verdict, check, "not graded", one)))
            what.append("\t".join((student, lab, kind)))
        layout = i % 3
        if layout == 1:
            for (lab, src), body in files.items():
                os.makedirs(os.path.join(subs, student, "labs", lab))
                with open(os.path.join(subs, student, "labs", lab, src), "wb") as f:
                    f.write(body)
        elif layout == 2:
            write_tar(os.path.join(subs, student + ".tar.gz"), "my-labs",
                      {src: body for (lab, src), body in files.items()})
        else:
            write_zip(os.path.join(subs, student + ".zip"),
                      {"labs/%s/%s" % (lab, src): body for (lab, src), body in files.items()})
    for name, rows in (("expected.tsv", exp), ("class.tsv", what)):
        with open(os.path.join(a.dir, name), "w", encoding="utf-8") as f:
            f.write("\n".join(rows) + "\n")
    kinds = [r.split("\t")[2].split(" ")[0] for r in what[1:]]
    print("make-bench-class.py: %d submissions of %d labs in %s: %d lab files right, %d with a mutant, "
          "%d unfinished (starters); expected verdicts in %s"
          % (a.n, len(labs), subs, kinds.count("solution"), kinds.count("mutant"),
             kinds.count("starter"), os.path.join(a.dir, "expected.tsv")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
