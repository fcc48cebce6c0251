#!/usr/bin/env bats
# mutants.bats -- what make mutate found, proven without a GPU on the runs it
# recorded (checker/tests/fixtures/mutate/LAB/VARIANT: each run's exit
# status, output and trace, gzip'd, as the checker kept them on a GPU):
#   - every mutant listed as equivalent (checker/tests/mutate/equivalent/
#     LAB.tsv) is so: PROOF `schedule`, its runs show the GPU did the same as
#     the solution's two runs (mutate.py's same_schedule); any other PROOF
#     names a test below that proves its reason on its runs;
#   - each check added or tightened to kill a survivor fails that survivor's
#     recorded run and passes the recorded solution's.

bats_require_minimum_version 1.5.0
load ../lib/kit

MUTATE="$KIT_ROOT/checker/tests/mutate/mutate.py"
FIX="$KIT_ROOT/checker/tests/fixtures/mutate"

@test "every mutant listed as equivalent by its schedule shows the GPU did the same in its recorded runs" {
    run -0 python3 - "$MUTATE" "$FIX" <<'PY'
import os, sys
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import mutate as M
fix, bad, n = sys.argv[2], [], 0
for (lab, mid), (proof, reason) in sorted(M.load_equivalents().items()):
    if proof != 'schedule':
        continue
    n += 1
    sols = [M.kept_runs(os.path.join(fix, lab, v)) for v in ('solution', 'solution-2')]
    ok, why = M.same_schedule(sols, M.kept_runs(os.path.join(fix, lab, mid)))
    if ok is not True:
        bad.append('%s %s: %s' % (lab, mid, why))
print('%d listed by their schedule' % n)
print('\n'.join(bad))
sys.exit(1 if bad else 0)
PY
    echo "$output"
}

@test "every other equivalent names a test of this file that proves its reason" {
    local lab mid proof reason bad=""
    while IFS=$'\t' read -r mid proof reason; do
        [ -n "$mid" ] && [ "${mid:0:1}" != "#" ] && [ "$proof" != schedule ] || continue
        grep -qF "@test \"$proof\"" "$BATS_TEST_FILENAME" || bad+=" $mid($proof)"
    done < <(cat "$KIT_ROOT"/checker/tests/mutate/equivalent/*.tsv 2>/dev/null)
    echo "no such test:${bad:- none}"
    [ -z "$bad" ]
}

# ---------------------------------------------------------------- 01-sync-copy

# ---------------------------------------------------------------- 02-async-copy

# ---------------------------------------------------------------- 03-pinned-memory

# ---------------------------------------------------------------- 04-events

# ---------------------------------------------------------------- 05-overlap

# ---------------------------------------------------------------- 06-lifetime

# ---------------------------------------------------------------- 07-default-streams

# ---------------------------------------------------------------- 08-pytorch

# ---------------------------------------------------------------- 09-multi-gpu
