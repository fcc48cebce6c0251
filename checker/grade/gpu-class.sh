#!/usr/bin/env bash
# gpu-class.sh -- on a GPU node: make the test class (make-test-class.sh),
# grade it with JOBS submissions at once on the one GPU, check every verdict
# against expected.tsv, and print one table.
#
#   checker/grade/gpu-class.sh [-j JOBS] [-o DIR] [--serial] [--closed] [--merge LABS]
#
# JOBS default 8. The timeouts are short, as an instructor in a hurry sets
# them (RUN_TIMEOUT 20 s, BUILD_TIMEOUT 60 s, unless set): the class has a
# build that never ends and a program that leaves children behind, and each
# must cost its job no more than those. --closed grades with a copy of the
# kit in a folder no other user may enter (DIR/closed, mode 700, as a clone
# under /root is): the sandbox users must grade it as well, or grading must
# stop before it starts. The class also has zips, which the grader unpacks
# with python3 (a GPU node often has no unzip). DIR (default build/gpu-class) gets class/ (submissions,
# expected.tsv), graded/ (gradebook, reports, every lab's checker output),
# verdicts.txt and summary.txt (the table). --serial also grades the class
# one submission at a time and compares the two gradebooks' verdicts (every
# lab's status and every check's pass/fail/skip). Run as root (the class has
# a fork bomb, a program that writes into the kit, and programs that try to
# write their own verdicts: each job's checker and programs then run as two
# uids of their own), or as an ordinary user where bubblewrap works. --merge LABS grades only those labs (09) of the class
# already in DIR into DIR/graded, keeping the rest (a class graded on one
# GPU, its lab 09 pending, then lab 09 on a node of two): every verdict is
# checked against the node that graded its lab. Exit status 0 when every
# verdict is right.
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KIT="$(cd "$HERE/../.." && pwd)"

jobs=8 dir=$KIT/build/gpu-class serial=0 closed=0 merge=""
while [ $# -gt 0 ]; do
    case $1 in
        -j) jobs=$2; shift ;;
        -o) dir=$2; shift ;;
        --serial) serial=1 ;;
        --closed) closed=1 ;;
        --merge) merge=$2; shift ;;
        *) echo "usage: gpu-class.sh [-j JOBS] [-o DIR] [--serial] [--closed] [--merge LABS]" >&2; exit 2 ;;
    esac
    shift
done
[ "$(id -u)" = 0 ] || echo "gpu-class.sh: not root: the class is graded as $(id -un), in bubblewrap (grading stops where it cannot work); the fork bomb's process limit counts every process of yours" >&2
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
[ -n "$device" ] || echo "gpu-class.sh: no GPU here: every GPU verdict will be 'not graded'" >&2
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
export RUN_TIMEOUT=${RUN_TIMEOUT:-20} BUILD_TIMEOUT=${BUILD_TIMEOUT:-60}

# the grader: this kit's, or (--closed) a copy's in a folder closed to others
grade=$HERE/grade where="this kit"
if [ "$closed" = 1 ]; then
    rm -rf "$dir/closed"
    mkdir -p "$dir/closed/kit"
    chmod 700 "$dir/closed"
    tar -C "$KIT" --exclude=./.git --exclude=./build --exclude=./reports \
        --exclude=./slides/node_modules -cf - . | tar -C "$dir/closed/kit" -xf -
    grade=$dir/closed/kit/checker/grade/grade where="a copy of the kit in $dir/closed (mode 700)"
fi

if [ -n "$merge" ]; then
    [ -f "$dir/graded/gradebook.csv" ] && [ -d "$dir/class/submissions" ] ||
        { echo "gpu-class.sh: --merge needs a class graded in $dir (gpu-class.sh -o $dir first)" >&2; exit 2; }
else
    "$HERE/make-test-class.sh" "$dir/class" || exit 1
fi
n=$(ls "$dir/class/submissions" | wc -l)

# grade_class JOBS OUT: grade the class; print its wall time in seconds.
grade_class() {
    local t0 t1
    t0=$(date +%s.%N)
    # from the grader's kit's folder, as make grade runs it
    (cd "$(dirname "$grade")/../.." && "$grade" -j "$1" -o "$2" ${merge:+--labs "$merge"} \
        "$dir/class/submissions") >"$2.log" 2>&1
    echo "$?" >"$2.rc"
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", b - a }'
}

echo "gpu-class.sh: grading $n submissions with JOBS=$jobs on ${device:-no GPU}, RUN_TIMEOUT=$RUN_TIMEOUT BUILD_TIMEOUT=$BUILD_TIMEOUT, by $where (log: $dir/graded.log)"
wall=$(grade_class "$jobs" "$dir/graded")
if [ ! -f "$dir/graded/gradebook.csv" ]; then
    echo "gpu-class.sh: grading stopped (exit status $(cat "$dir/graded.rc")):"
    tail -n 5 "$dir/graded.log"
    exit 1
fi
"$HERE/check-verdicts" "$dir/graded" "$dir/class/expected.tsv" >"$dir/verdicts.txt"
ok=$?
cat "$dir/verdicts.txt"
right=$(sed -n 's/^check-verdicts: \([0-9]*\) of \([0-9]*\) verdicts right, \([0-9]*\) wrong.*/\1 \2 \3/p' "$dir/verdicts.txt")
read -r nright _ nwrong <<<"${right:-0 0 0}"

same=""
if [ "$serial" = 1 ]; then
    echo "gpu-class.sh: grading again, one at a time (log: $dir/serial.log)"
    swall=$(grade_class 1 "$dir/serial")
    # the verdict columns: status and every check (not score's rounding or why)
    cols() { python3 -c 'import csv,sys
for r in csv.reader(open(sys.argv[1])): print(",".join(r[:3] + r[12:]))' "$1"; }
    if diff <(cols "$dir/graded/gradebook.csv") <(cols "$dir/serial/gradebook.csv") >"$dir/serial.diff"; then
        same="same verdicts as one at a time (${swall} s serial)"
    else
        same="DIFFERENT verdicts from one at a time: $(grep -c '^[<>]' "$dir/serial.diff") lines (serial.diff)"
        ok=1
    fi
fi

labs=$(($(wc -l <"$dir/graded/gradebook.csv") - 1))
graded=$(grep -vc ',missing,' <(cut -d, -f1-4 "$dir/graded/gradebook.csv"))
{
    echo
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' device JOBS submissions "labs checked" \
        "verdicts right / wrong" "wall time" "submissions per minute"
    echo "|---|---|---|---|---|---|---|"
    printf '| %s | %d | %d | %d (of %d rows) | %d / %d | %d:%02d | %s |\n' "${device:-no GPU}" "$jobs" "$n" \
        $((graded - 1)) "$labs" "$nright" "$nwrong" $((wall / 60)) $((wall % 60)) \
        "$(awk -v n="$n" -v w="$wall" 'BEGIN { printf "%.1f", (w > 0 ? 60 * n / w : 0) }')"
    echo
    echo "RUN_TIMEOUT=$RUN_TIMEOUT BUILD_TIMEOUT=$BUILD_TIMEOUT; graded by $where; grade's exit status $(cat "$dir/graded.rc")"
    [ -n "$same" ] && echo && echo "--serial: $same"
} | tee "$dir/summary.txt"
exit "$ok"
