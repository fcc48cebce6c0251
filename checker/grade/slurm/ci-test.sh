#!/usr/bin/env bash
# ci-test.sh -- the Slurm path, for real, on this machine: install Debian's
# slurm-wlm and munge (if missing), start a one-node cluster
# (local-cluster.sh), grade a few submissions with the job array, and compare
# its merged gradebook with the one `make grade` writes for the same
# submissions (the time each lab was graded aside). Root only. CI runs it (.ci/run); no GPU needed: the GPU checks
# are "not graded" on both sides, and the node is asked for no GPU gres.
#
#   checker/grade/slurm/ci-test.sh [WORKDIR]      (default /tmp/cuda-stream-labs-slurm-ci)
#
# Then a job array grades lab 02 again into make grade's folder: lab 01's
# rows must stay byte for byte (a class's lab 09 joins the same way).
# Exit status 0 when the two gradebooks are the same, every verdict is the
# one expected without a GPU, and the merge kept what it must; 1 otherwise,
# with what differed.
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KIT="$(cd "$HERE/../../.." && pwd)"
work=${1:-/tmp/cuda-stream-labs-slurm-ci}
LABS=01,02
export CUDA_ARCH=${CUDA_ARCH:-75}  # one GPU architecture: the builds are the slow part
export RUN_TIMEOUT=${RUN_TIMEOUT:-15}
export PATH="$PATH:/usr/sbin"

say() { echo "slurm test: $*"; }
fail() { echo "slurm test: FAILED: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "needs root (it installs packages and starts daemons)"
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    say "installing slurm-wlm and munge"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends slurm-wlm munge; } >"$work.apt.log" 2>&1 ||
        fail "apt-get could not install slurm-wlm and munge (log: $work.apt.log)"
fi

rm -rf "$work"
mkdir -p "$work/submissions"
"$HERE/../make-test-class.sh" "$work/class" "$LABS" >/dev/null || fail "the test class was not made"
for s in solution-flat.tar.gz solution-git.bundle starter no-compile fork-bomb nothing; do
    [ -e "$work/class/submissions/$s" ] && cp -a "$work/class/submissions/$s" "$work/submissions/"
done
say "$(ls "$work/submissions" | wc -l) submissions, labs $LABS, CUDA_ARCH=$CUDA_ARCH"

cluster="$work/cluster"
trap '"$HERE/local-cluster.sh" stop "$cluster"' EXIT
eval "$("$HERE/local-cluster.sh" start "$cluster")" || fail "the local cluster did not start"
say "a one-node cluster is up ($SLURM_CONF)"

t0=$(date +%s)
timeout 1800 make --no-print-directory -C "$KIT" grade SUBMISSIONS="$work/submissions" \
    OUT="$work/local" LAB="$LABS" JOBS=2 >"$work/local.log" 2>&1
rc=$?
case $rc in 0|3) ;; 124) fail "make grade did not finish in 30 min (log: $work/local.log)" ;;
    *) tail -n 20 "$work/local.log" >&2; fail "make grade exited $rc (log: $work/local.log)" ;; esac
t1=$(date +%s)
say "make grade: $((t1 - t0)) s"

GRADE_GRES='' GRADE_CPUS=1 timeout 1800 "$HERE/submit" -o "$work/slurm" --labs "$LABS" --wait \
    "$work/submissions" >"$work/slurm.log" 2>&1
rc=$?
case $rc in 0|3) ;; 124) squeue >&2; fail "the job array did not finish in 30 min (logs: $work/slurm/slurm/)" ;;
    *) tail -n 20 "$work/slurm.log" >&2; fail "submit exited $rc (log: $work/slurm.log)" ;; esac
say "job array and merge: $(($(date +%s) - t1)) s"

# the same verdicts, whys, kit and files graded; not the same time
verdicts() {
    python3 -c 'import csv, sys
for r in csv.DictReader(open(sys.argv[1], encoding="utf-8")):
    r.pop("graded_at")
    print(",".join(r.values()))' "$1"
}
if ! diff -u <(verdicts "$work/local/gradebook.csv") <(verdicts "$work/slurm/gradebook.csv") >"$work/gradebook.diff"; then
    head -n 40 "$work/gradebook.diff" >&2
    fail "the merged gradebook differs from make grade's (diff: $work/gradebook.diff)"
fi
"$HERE/../check-verdicts" --no-gpu --only-graded "$work/slurm" "$work/class/expected.tsv" ||
    fail "verdicts of the job array are not the ones expected without a GPU"
say "ok: the merged gradebook is make grade's ($(($(wc -l <"$work/slurm/gradebook.csv") - 1)) rows)"

# A job array into make grade's folder, lab 02 only (as lab 09 from a job of
# two GPUs a task): lab 01's rows stay byte for byte, lab 02's are new.
cp "$work/local/gradebook.csv" "$work/local-before.csv"
sleep 1
GRADE_GRES='' GRADE_CPUS=1 timeout 1800 "$HERE/submit" -o "$work/local" --labs 02 --wait \
    "$work/submissions" >"$work/merge.log" 2>&1
rc=$?
case $rc in 0|3) ;; *) tail -n 20 "$work/merge.log" >&2; fail "submit --labs 02 into make grade's folder exited $rc" ;; esac
diff <(grep ',01-' "$work/local-before.csv") <(grep ',01-' "$work/local/gradebook.csv") >&2 ||
    fail "lab 01's rows changed when a job array graded lab 02 into the same folder"
python3 - "$work/local-before.csv" "$work/local/gradebook.csv" <<'EOF' || fail "lab 02's rows were not graded anew"
import csv, sys
old = {(r["student"], r["lab"]): r for r in csv.DictReader(open(sys.argv[1], encoding="utf-8"))}
new = {(r["student"], r["lab"]): r for r in csv.DictReader(open(sys.argv[2], encoding="utf-8"))}
assert old.keys() == new.keys()
for k, r in new.items():
    if k[1].startswith("02-") and r["status"] != "missing":
        assert r["graded_at"] > old[k]["graded_at"] and r["status"] == old[k]["status"], (k, r)
EOF
say "ok: a job array of lab 02 into make grade's folder kept lab 01's rows, byte for byte"
