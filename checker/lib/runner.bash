# checker/lib/runner.bash -- what the runners of bats share: checker/run-checks
# (the labs' checks), checker/tests/run (the kit's own tests) and the grading
# scripts (checker/grade/lib.bash): the labs by name, bats, colour and the
# skips of a TAP stream. Functions, and whether to paint in colour; it
# sources nothing.

# kit_labs KIT: the lab ids of a kit, one a line (its checker/NN-name.bats).
kit_labs() {
    local f
    for f in "$1"/checker/[0-9][0-9]-*.bats; do
        [ -f "$f" ] || continue
        f=${f##*/}
        echo "${f%.bats}"
    done
}

# resolve_lab KIT WANT: the id of the lab WANT names, by its id or number
# (01 -> 01-sync-copy); else a line on stderr that lists the labs, status 1.
resolve_lab() {
    local id
    for id in $(kit_labs "$1"); do
        case $id in "$2"|"$2"-*) echo "$id"; return 0 ;; esac
    done
    echo "no lab matches '$2' (labs: $(kit_labs "$1" | paste -sd ' '))" >&2
    return 1
}

# find_bats KIT: set BATS to the bats to run: $BATS where set, else the copy
# the kit installed (make deps), else the machine's. Status 1 (and what to
# install, on stderr) where there is none.
find_bats() {
    BATS=${BATS:-}
    [ -z "$BATS" ] && [ -x "$1/checker/vendor/node_modules/bats/bin/bats" ] &&
        BATS="$1/checker/vendor/node_modules/bats/bin/bats"
    [ -z "$BATS" ] && BATS=$(command -v bats)
    [ -n "$BATS" ] && return 0
    echo "bats not found: run 'make deps' (installs it with npm), or 'apt-get install bats bats-assert bats-support'" >&2
    return 1
}

# Colour where the output is a terminal that wants it (not NO_COLOR, not
# TERM=dumb); paint CODE TEXT paints TEXT in SGR colour CODE, then or never.
color=0
[ -t 1 ] && [ -z "${NO_COLOR:-}" ] && [ "${TERM:-dumb}" != dumb ] && color=1
paint() { if [ "$color" = 1 ]; then printf '\033[%sm%s\033[0m' "$1" "$2"; else printf '%s' "$2"; fi; }

# gpu_skips TAP: how many checks were skipped for want of a GPU, or of GPUs:
# a check that needs one skips with a reason that starts "no CUDA device"
# (need_run); one that needs two, on a machine with one, "needs 2 GPUs" (lab
# 09). Both are not graded.
gpu_skips() { grep -cE '^ok [0-9]+ .* # [sS][kK][iI][pP] (no CUDA device|needs [0-9]+ GPUs)' "$1"; }
