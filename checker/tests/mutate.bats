#!/usr/bin/env bats
# mutate.bats -- make mutate's generator and judge, without a GPU: the
# mutants are the same every time, a mutant's id survives edits elsewhere in
# the solution, the rules files load, "the GPU did the same" tells a changed
# order from noise, and without a GPU the mutants are built, not run, and
# say so (exit 3). What make mutate found on a GPU is mutants.bats.

bats_require_minimum_version 1.5.0
load lib

MUTATE="$KIT_ROOT/checker/tests/mutate/mutate.py"

# py CODE...: python3 with mutate.py importable as M
py() { python3 -c "import sys; sys.path.insert(0, '$KIT_ROOT/checker/tests/mutate'); import mutate as M
$1" "${@:2}"; }

@test "the mutants of every lab are generated the same way twice" {
    local labs
    # the quick run: a lab in C and the lab in Python
    labs=$(kit_full && lab_ids || printf '04-events\n08-pytorch\n')
    run -0 python3 "$MUTATE" generate "$(echo $labs)" --out "$BATS_TEST_TMPDIR/a"
    echo "$output"
    python3 "$MUTATE" generate "$(echo $labs)" --out "$BATS_TEST_TMPDIR/b" >/dev/null
    diff -r "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b"
    # every lab has mutants, and every mutant its patch
    for id in $labs; do
        n=$(grep -c . "$BATS_TEST_TMPDIR/a/$id/mutants.tsv")
        [ "$n" -ge 20 ] || { echo "$id: only $n mutants"; return 1; }
        [ "$(ls -d "$BATS_TEST_TMPDIR/a/$id"/m-* | wc -l)" = "$n" ]
    done
}

@test "a mutant keeps its id when the solution changes elsewhere" {
    local d="$BATS_TEST_TMPDIR/sol"
    mkdir -p "$d"
    cp "$KIT_ROOT/solutions/04-events/Makefile" "$KIT_ROOT/solutions/04-events/events.cu" "$d/"
    run -0 py '
a, _ = M.generate(sys.argv[1])
text = open(sys.argv[1]).read()
open(sys.argv[1], "w").write("/* a line more */\n" + text.replace("#define", "/* moved */\n#define", 1))
b, _ = M.generate(sys.argv[1])
ida, idb = [m.id for m in a], [m.id for m in b]
print(len(ida), "mutants;", len(set(ida) ^ set(idb)), "ids differ")
sys.exit(0 if ida == idb and [m.line for m in a] != [m.line for m in b] else 1)' "$d/events.cu"
    echo "$output"
}

@test "each mutant changes one place by one rule, never inside a comment or a string" {
    run -0 py '
import re
bad = []
for lab in M.labs():
    src = "%s/solutions/%s/%s" % (M.KIT_ROOT, lab, M.src_of(lab))
    text = open(src).read()
    for m in M.generate(src)[0]:
        before, after = M.changed_lines(text, m.text)
        if not before.strip() and not after.strip():
            bad.append("%s m-%s: changes nothing" % (lab, m.id))
        # (a move swaps two statements; the comments between stay put)
        if re.search(r"^\s*(/\*|\*|//|#)", before) and not m.rule.endswith(("-earlier", "-later")):
            bad.append("%s m-%s (%s): a comment changed: %s" % (lab, m.id, m.rule, before[:60]))
print("\n".join(bad))
sys.exit(1 if bad else 0)'
    echo "$output"
}

@test "a rules file that is not rules is refused with the line" {
    printf 'define A = x\nthis is no rule\n' >"$BATS_TEST_TMPDIR/bad.rules"
    run -1 py 'M.load_rules(sys.argv[1])' "$BATS_TEST_TMPDIR/bad.rules"
    echo "$output"
    [[ "$output" == *"bad.rules:2: not a rule: this is no rule"* ]]
}

# trace_of FILE LINE...: a format 2 trace with those records after its header
trace_of() {
    local f=$1
    shift
    { printf 'streamtrace 2\nstream\t7\tcreated\t0\tblocking\nstream\t8\tcreated\t0\tblocking\n'
      printf '%s\n' "$@"; printf 'end\t%d\t0\n' "$#"; } | sed 's/ /\t/g' >"$f"
}

@test "the GPU did the same: a copy that overlapped a kernel in both right runs must overlap it in the mutant's" {
    local d="$BATS_TEST_TMPDIR" v
    for v in a b same moved; do mkdir -p "$d/$v"; echo 0 >"$d/$v/main.rc"; echo RESULT: verified >"$d/$v/main.out"; done
    # the right runs: the copy (stream 7) beside the kernel (stream 8), then an event
    trace_of "$d/a/main.trace" "api 0 1 1 1 cudaMemcpyAsync" "api 1 2 1 2 cudaLaunchKernel" "api 2 3 1 3 cudaEventRecord" \
        "copy 10 50 0 7 H2D 64 PINNED DEVICE 1 - - 1" "kernel 20 80 0 8 1,1,1 1,1,1 2 k" "event 90 0 8 1 3"
    trace_of "$d/b/main.trace" "api 0 1 1 1 cudaMemcpyAsync" "api 1 2 1 2 cudaLaunchKernel" "api 2 3 1 3 cudaEventRecord" \
        "copy 10 40 0 7 H2D 64 PINNED DEVICE 1 - - 1" "kernel 25 85 0 8 1,1,1 1,1,1 2 k" "event 95 0 8 1 3"
    # other times, other streams, the same order: the same
    trace_of "$d/same/main.trace" "api 0 1 1 1 cudaMemcpyAsync" "api 1 2 1 2 cudaLaunchKernel" "api 2 3 1 3 cudaEventRecord" \
        "copy 10 60 0 8 H2D 64 PINNED DEVICE 1 - - 1" "kernel 30 99 0 7 1,1,1 1,1,1 2 k" "event 120 0 7 1 3"
    # the kernel after the copy: not the same
    trace_of "$d/moved/main.trace" "api 0 1 1 1 cudaMemcpyAsync" "api 1 2 1 2 cudaLaunchKernel" "api 2 3 1 3 cudaEventRecord" \
        "copy 10 50 0 7 H2D 64 PINNED DEVICE 1 - - 1" "kernel 51 80 0 7 1,1,1 1,1,1 2 k" "event 90 0 7 1 3"
    run -0 py '
d = sys.argv[1]
sols = [M.kept_runs(d + "/a"), M.kept_runs(d + "/b")]
print(M.same_schedule(sols, M.kept_runs(d + "/same")))
print(M.same_schedule(sols, M.kept_runs(d + "/moved")))' "$d"
    echo "$output"
    [ "${lines[0]}" = "(True, 3)" ]
    [[ "${lines[1]}" == "(False, 'run main: copy H2D and kernel k')" ]]
}

@test "the GPU did the same: an event stamped before a kernel may be stamped up to 5 us into it; 10 us after its end it is not the same" {
    local d="$BATS_TEST_TMPDIR" v
    for v in a b near far; do mkdir -p "$d/$v"; echo 0 >"$d/$v/main.rc"; echo RESULT: verified >"$d/$v/main.out"; done
    # the right runs: the event (stream 7) stamped 20 us and 12 us before the kernel (stream 8) that waited for it began
    trace_of "$d/a/main.trace" "api 0 1 1 1 cudaEventRecord" "api 1 2 1 2 cudaLaunchKernel" \
        "event 100000 0 7 1 1" "kernel 120000 200000 0 8 1,1,1 1,1,1 2 k"
    trace_of "$d/b/main.trace" "api 0 1 1 1 cudaEventRecord" "api 1 2 1 2 cudaLaunchKernel" \
        "event 100000 0 7 1 1" "kernel 112000 190000 0 8 1,1,1 1,1,1 2 k"
    # CUPTI's stamp 1 us after the kernel began: the same
    trace_of "$d/near/main.trace" "api 0 1 1 1 cudaEventRecord" "api 1 2 1 2 cudaLaunchKernel" \
        "event 101000 0 7 1 1" "kernel 100000 200000 0 8 1,1,1 1,1,1 2 k"
    # the event 10 us after the kernel ended: not the same
    trace_of "$d/far/main.trace" "api 0 1 1 1 cudaEventRecord" "api 1 2 1 2 cudaLaunchKernel" \
        "event 210000 0 7 1 1" "kernel 100000 200000 0 8 1,1,1 1,1,1 2 k"
    run -0 py '
d = sys.argv[1]
sols = [M.kept_runs(d + "/a"), M.kept_runs(d + "/b")]
print(M.same_schedule(sols, M.kept_runs(d + "/near")))
print(M.same_schedule(sols, M.kept_runs(d + "/far")))' "$d"
    echo "$output"
    [ "${lines[0]}" = "(True, 2)" ]
    [[ "${lines[1]}" == "(False, 'run main: event 0 and kernel k')" ]]
}

@test "without a GPU, make mutate builds the mutants it makes and says they are not graded" {
    gpu_or_skip_inverse() { nvidia-smi -L >/dev/null 2>&1 && skip "a GPU is here: make mutate runs them"; return 0; }
    gpu_or_skip_inverse
    local ids
    ids=$(python3 "$MUTATE" generate 02 --out "$BATS_TEST_TMPDIR/g" >/dev/null &&
          cut -f2 "$BATS_TEST_TMPDIR/g/02-async-copy/mutants.tsv" | head -n 2 | paste -sd ' ')
    run -3 python3 "$MUTATE" run --labs 02 --only "$ids" --no-kit --out "$BATS_TEST_TMPDIR/m"
    echo "$output"
    [[ "$output" == *"| 02-async-copy | 2 |"*"| 2 | 0 | - |"* ]]
    [[ "$output" == *"not graded: no GPU here"* ]]
    [ "$(cat "$BATS_TEST_TMPDIR/m/02-async-copy/solution/build.rc")" = 0 ]
    grep -c $'\tbuilt\t' "$BATS_TEST_TMPDIR/m/report.tsv" | grep -qx 2
}

# A check kills a mutant only where it failed in every run of it (make
# mutate checks each variant three times): a mutant failed in two runs of
# three won a race in the third, and is "unstable", which fails make mutate.
@test "a mutant is killed only by a check that failed in each of its runs; one killed in some runs is unstable" {
    local o="$BATS_TEST_TMPDIR/m" d ids a b
    python3 "$MUTATE" generate 08 --out "$o" >/dev/null
    d=$o/08-pytorch
    read -r a b < <(cut -f2 "$d/mutants.tsv" | head -n 2 | paste -sd ' ')
    printf '%s\n%s\n' "$a" "$b" >"$d/only"
    echo "0 1" >"$d/counts"     # judged as on a machine with one GPU
    echo 3 >"$d/runs-each"
    for v in solution solution-2 "$a" "$a@2" "$a@3" "$b" "$b@2" "$b@3"; do
        mkdir -p "$d/$v" && echo 0 >"$d/$v/build.rc"
        printf '1..2\nok 1 one\nok 2 two\n' >"$d/$v/checks.tap"
    done
    # a: "two" failed in every run; b: "two" in runs 1 and 3, not in run 2
    for v in "$a" "$a@2" "$a@3" "$b" "$b@3"; do
        printf '1..2\nok 1 one\nnot ok 2 two\n' >"$d/$v/checks.tap"
    done
    run -1 python3 "$MUTATE" classify --labs 08 --out "$o"
    echo "$output"
    [[ "$output" == *"08-pytorch: 1 killed of 2 built"* ]]
    [[ "$output" == *"unstable: $b "* ]]
    [[ "$output" == *"killed in some runs only, by: two (2 of 3 runs)"* ]]
    grep -qP "^08-pytorch\t$a\t.*\tkilled\ttwo$" "$o/report.tsv"
    grep -qP "^08-pytorch\t$b\t.*\tunstable\ttwo \(2 of 3 runs\)$" "$o/report.tsv"
}
