#!/usr/bin/env bats
# bench.bats -- make bench-grade without a GPU: its class (make-bench-class.py)
# is the same for the same size and seed, every submission full and no two
# files alike, with the verdicts each must get; the node's JOBS and the GPU
# each job sees; a build reused only for the same source, kit and compiler,
# with the same verdicts; and (make test-all) the bench itself, its table,
# its steps and its serial comparison, on lab 01 of a class of three. The
# GPU half: make bench-grade N=100 on a GPU node (checker/grade/README.md).

bats_require_minimum_version 1.5.0
load lib

GRADE="$KIT_ROOT/checker/grade"
B="$KIT_BUILD/bench"
# No GPU here, even on a GPU node: these are the verdicts without one.
export CUDA_VISIBLE_DEVICES=

setup_file() {
    export CUDA_ARCH=${CUDA_ARCH:-75} RUN_TIMEOUT=5 GRADE_FSIZE=$((16 << 20))
    rm -rf "$B"
    mkdir -p "$B"
}

@test "the bench's class is the same, byte for byte, for the same size and seed, and another for another seed" {
    "$GRADE/make-bench-class.py" "$B/a" 12 >/dev/null
    "$GRADE/make-bench-class.py" "$B/b" 12 >/dev/null
    "$GRADE/make-bench-class.py" "$B/c" 12 --seed 7 >/dev/null
    diff -r "$B/a" "$B/b"
    ! diff -rq "$B/a" "$B/c" >/dev/null
}

@test "each submission of the bench's class hands in every lab, no two files alike, each a solution, mutant or starter with a comment after it" {
    local d="$B/full" s lab src what body want t n=0
    "$GRADE/make-bench-class.py" "$d" 9 --wrong 0.4 --unfinished 0.1
    mkdir -p "$d/open"
    # the three layouts, opened as the grader finds them
    for s in "$d"/submissions/*; do
        case $s in
            *.tar.gz) mkdir -p "$d/open/$(basename "$s" .tar.gz)"; tar -xzf "$s" -C "$d/open/$(basename "$s" .tar.gz)" ;;
            *.zip) python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
                       "$s" "$d/open/$(basename "$s" .zip)" ;;
            *) cp -r "$s" "$d/open/" ;;
        esac
    done
    [ "$(ls "$d/open" | wc -l)" = 9 ]
    . "$GRADE/lib.bash"
    t=$BATS_TEST_TMPDIR
    while IFS=$'\t' read -r s lab what; do
        [ "$s" = student ] && continue
        src=$(kit_src "$KIT_ROOT" "$lab")
        body=$(best_file "$d/open/$s" "$lab" "$src")
        [ -n "$body" ] || { echo "$s has no $src"; return 1; }
        # its last line is the student's comment, with the student's name
        tail -n 1 "$body" | grep -Eq "^(/\* |# )$s, lab ${lab:0:2}: "
        # the rest, blank lines aside, is the kit's file
        case $what in
            solution) want="$KIT_ROOT/solutions/$lab/$src" ;;
            starter) want="$KIT_ROOT/labs/$lab/$src" ;;
            mutant*) cp "$KIT_ROOT/solutions/$lab/$src" "$t/$src"
                     patch -s -F0 -p1 -d "$t" <"$(ls "$KIT_ROOT"/checker/tests/mutants/"$lab"/"${what#mutant }".patch \
                         "$KIT_ROOT"/checker/mutants/"$lab"/"${what#mutant }".patch 2>/dev/null | head -n 1)"
                     want="$t/$src"
                     ! cmp -s "$want" "$KIT_ROOT/solutions/$lab/$src" ;;
            *) echo "what is $what?"; return 1 ;;
        esac
        diff <(head -n -1 "$body" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}') "$want"
        sha256sum <"$body" >>"$t/sums"
        n=$((n + 1))
    done <"$d/class.tsv"
    [ "$n" = $((9 * $(ls "$KIT_ROOT"/checker/[0-9][0-9]-*.bats | wc -l))) ]
    # no two files alike
    [ "$(sort -u "$t/sums" | wc -l)" = "$n" ]
    # some of each kind
    grep -q 'mutant ' "$d/class.tsv"
    grep -q 'starter$' "$d/class.tsv"
}

@test "the bench's expected verdicts: a pass for a solution, a fail on its patch's check for a mutant, lab 09 pending on one GPU" {
    local d="$B/exp"
    "$GRADE/make-bench-class.py" "$d" 20 >/dev/null
    [ "$(wc -l <"$d/expected.tsv")" = "$(wc -l <"$d/class.tsv")" ]
    paste "$d/class.tsv" "$d/expected.tsv" | awk -F'\t' 'NR > 1 {
        if ($1 != $4 || $2 != $5) { print "rows apart: " $0; bad = 1 }
        if ($3 == "solution" && ($6 != "pass" || $7 != "-")) { print "solution: " $0; bad = 1 }
        if ($3 ~ /^mutant / && ($6 != "fail" || $7 == "-" || $7 == "")) { print "mutant: " $0; bad = 1 }
        if ($3 == "starter" && ($6 != "fail" || $9 != "fail")) { print "starter: " $0; bad = 1 }
        if ($8 != "not graded") { print "without a GPU: " $0; bad = 1 }
        if ($2 ~ /^09-/ && $3 != "starter" && $9 != "pending") { print "lab 09 on one GPU: " $0; bad = 1 }
        if ($2 !~ /^09-/ && $9 != $6) { print "one GPU: " $0; bad = 1 }
    } END { exit bad }'
    # the share of wrong files is about the default 15% (+ 2% unfinished)
    run awk -F'\t' 'NR > 1 && $3 != "solution" { w++ } NR > 1 { n++ } END { printf "%d", 100 * w / n }' "$d/class.tsv"
    [ "$output" -ge 8 ] && [ "$output" -le 28 ]
}

@test "JOBS from the node: 16 a GPU, at most one per core and per 4 GiB of memory, at least 1" {
    . "$GRADE/lib.bash"
    local gib=1048576
    [ "$(node_jobs 2 32 $((256 * gib)))" = 32 ]     # two H100s, 32 cores
    [ "$(node_jobs 1 16 $((128 * gib)))" = 16 ]     # one H100, 16 cores
    [ "$(node_jobs 2 8 $((128 * gib)))" = 8 ]       # few cores
    [ "$(node_jobs 4 64 $((24 * gib)))" = 6 ]       # little memory
    [ "$(node_jobs 8 128 $((560 * gib)))" = 128 ]   # eight GPUs, 128 cores
    [ "$(node_jobs 0 2 $((8 * gib)))" = 1 ]         # no GPU, two cores
    [ "$(node_jobs 1 1 $((1 * gib)))" = 1 ]
    [ "$(GRADE_JOBS_PER_GPU=8 node_jobs 2 32 $((256 * gib)))" = 16 ]
    [ "$(cpu_count 0-3,8)" = 5 ]
}

@test "the jobs' cores: every core a job's, one or more each, none shared" {
    . "$GRADE/lib.bash"
    nproc() { echo 32; }
    [ "$(cpus_for 1 16)" = 0-1 ]
    [ "$(cpus_for 16 16)" = 30-31 ]
    [ "$(cpus_for 1 32)" = 0 ]
    [ "$(cpus_for 32 32)" = 31 ]
    run bash -c '. "$1/lib.bash"; nproc() { echo 32; }; for s in $(seq 1 24); do cpus_for $s 24; done' _ "$GRADE"
    [ "$(printf '%s\n' "${lines[@]}" | tr ',' '\n' | awk -F- '{ n += (NF == 2 ? $2 - $1 + 1 : 1) } END { print n }')" = 32 ]
    [ "${lines[0]}" = 0 ] && [ "${lines[23]}" = 30-31 ]
    [ -z "$(cpus_for 1 33)" ]
    [ -z "$(GRADE_PIN=0 cpus_for 1 16)" ]
}

@test "the jobs take the GPUs in turn, and a lab that needs two GPUs sees every GPU, its job's first" {
    . "$GRADE/lib.bash"
    [ "$(job_gpus 1 0 1)" = "0 0,1" ]
    [ "$(job_gpus 2 0 1)" = "1 1,0" ]
    [ "$(job_gpus 3 0 1)" = "0 0,1" ]
    [ "$(job_gpus 6 2 5 7)" = "7 7,2,5" ]
    [ "$(job_gpus 4 0)" = "0 0" ]
    # the GPUs handed out: nvidia-smi's, or CUDA_VISIBLE_DEVICES's entries
    mkdir -p "$BATS_TEST_TMPDIR/bin"
    printf '#!/bin/sh\necho "NVIDIA H100 80GB HBM3"\necho "NVIDIA H100 80GB HBM3"\n' >"$BATS_TEST_TMPDIR/bin/nvidia-smi"
    chmod +x "$BATS_TEST_TMPDIR/bin/nvidia-smi"
    PATH="$BATS_TEST_TMPDIR/bin:$PATH"
    [ "$(unset CUDA_VISIBLE_DEVICES; gpu_list | paste -sd ' ')" = "0 1" ]
    [ "$(CUDA_VISIBLE_DEVICES=1 gpu_list | paste -sd ' ')" = "1" ]
    [ "$(CUDA_VISIBLE_DEVICES=GPU-aa,GPU-bb gpu_list | paste -sd ' ')" = "GPU-aa GPU-bb" ]
    [ -z "$(CUDA_VISIBLE_DEVICES= gpu_list)" ]
    # a lab's checker names the GPUs it needs: lab 09's two, no other's
    run grep -l 'need_gpus [2-9]' "$KIT_ROOT"/checker/[0-9][0-9]-*.bats
    [ "$output" = "$KIT_ROOT/checker/09-multi-gpu.bats" ]
}

@test "a build of the same source, kit and compiler is reused, with the same verdicts and log; another source is built" {
    local d="$B/cache" o="$B/cache/out" s
    "$GRADE/make-bench-class.py" "$d" 2 --wrong 0 >/dev/null
    # the first student twice (the same file), and the second once
    cp -r "$d/submissions/student-001" "$d/submissions/student-001-again"
    # (exit status 3: without a GPU, not graded)
    (cd "$KIT_ROOT" && without_bats_env "$GRADE/grade" -j 1 --labs 01 -o "$o" "$d/submissions") >"$d/grade.log" 2>&1 ||
        [ $? = 3 ] || { cat "$d/grade.log"; return 1; }
    cat "$o"/results/*/01-sync-copy.steps
    grep -q '^build	01-sync-copy' "$o/results/student-001/01-sync-copy.steps"
    grep -q '^build-cached	01-sync-copy' "$o/results/student-001-again/01-sync-copy.steps"
    grep -q '^build	01-sync-copy' "$o/results/student-002/01-sync-copy.steps"
    # the cached build's verdicts and log are the build's
    diff "$o/results/student-001/01-sync-copy.log" "$o/results/student-001-again/01-sync-copy.log"
    diff <(cut -d, -f3- "$o/gradebook.csv" | sed -n 2p | cut -d, -f1-7) \
         <(cut -d, -f3- "$o/gradebook.csv" | sed -n 3p | cut -d, -f1-7)
    # for another GPU architecture (the compiler's flags): built again
    ls "$o/build-cache"/*/* >/dev/null
    (cd "$KIT_ROOT" && CUDA_ARCH=80 without_bats_env "$GRADE/grade" \
        -j 1 --labs 01 --student student-001 -o "$o" "$d/submissions") >"$d/grade2.log" 2>&1 || [ $? = 3 ]
    grep -q '^build	01-sync-copy' "$o/results/student-001/01-sync-copy.steps"
    # GRADE_CACHE=off: no cache at all
    (cd "$KIT_ROOT" && GRADE_CACHE=off without_bats_env "$GRADE/grade" \
        -j 1 --labs 01 --student student-001-again -o "$o" "$d/submissions") >"$d/grade3.log" 2>&1 || [ $? = 3 ]
    grep -q '^build	01-sync-copy' "$o/results/student-001-again/01-sync-copy.steps"
}

@test "make bench-grade without a GPU: its table, its steps, every verdict right and none apart from a serial grading" {
    skip_full "it grades lab 01 of a class of three twice"
    local o="$B/run"
    run -0 env JOBS=2 "$GRADE/bench-grade" -n 3 --labs 01 -o "$o" --compare serial
    echo "$output"
    [[ $output == *"| no GPU | 0 | "*" | 2 | 3 | "* ]]
    [[ $output == *"| build | 3 | "* ]]
    [[ $output == *"| run-traced | 3 | "* ]]
    [[ $output == *"| checks | 3 | "* ]]
    [[ $output == *"| 01 main | run-traced | 3 | "* ]]
    [[ $output == *"check-verdicts: 3 of 3 verdicts right, 0 wrong (graded without a GPU)"* ]]
    [[ $output == *"verdicts compared check by check: "*" cells, 0 differences"* ]]
    [ -f "$o/bench.txt" ]
}

@test "a grade stopped before its end: the report counts the submissions done, the GPUs and cores it had, and the CUDA programs it started" {
    local g=$BATS_TEST_TMPDIR/g s=$BATS_TEST_TMPDIR/s now
    mkdir -p "$g/results/student-001" "$g/logs" "$s"
    touch -d '-60 seconds' "$g/logs/listed.tsv"
    echo "gpu=NVIDIA H100 80GB HBM3" >"$g/results/student-001/meta"
    touch "$g/results/student-001/done"
    # (nvidia-smi's samples: two GPUs, no timing.txt to name them)
    now=$(date +'%Y/%m/%d %H:%M:%S.000')
    printf '%s, 0, 10, 100\n%s, 1, 20, 200\n' "$now" "$now" >"$s/gpu.csv"
    # a lab's steps: 3 runs that start CUDA, 1 that refuses its options;
    # another's: a traced run and the same made again with the driver's queues
    printf 'checker\t06-lifetime\t9\nrun-traced\tmain\t2\nrun-stress\tstress\t2\nrerun\tmain.again1\t2\nrun\tbadopt\t0.1\n' \
        >"$g/results/student-001/06-lifetime.steps"
    printf 'checker\t02-async-copy\t5\nrun-traced\tmain\t2\nrerun-queues\tmain\t2\n' \
        >"$g/results/student-001/02-async-copy.steps"
    run -0 python3 "$GRADE/bench-report.py" --graded "$g" --samples "$s" --jobs 8
    echo "$output"
    assert_line --index 0 "(grading did not finish: the figures are those of the 1 submissions graded)"
    assert_output --partial "| NVIDIA H100 80GB HBM3 | 2 | $(nproc) | 8 | 1 | "
    assert_output --regexp "CUDA programs started: 5 \(traced runs, lab 06's stress and sanitizer runs, re-runs\), 5.0 a submission, one every (11|12|13)\.[0-9]+ s of the wall time"
    assert_output --partial "| rerun-queues | 1 | 2.0 | 2.00 |"
}
