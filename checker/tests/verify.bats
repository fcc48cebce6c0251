#!/usr/bin/env bats
# verify.bats -- the verdict "every element of the result is right" rests on
# kit code, not on the program's verify(): the checker gives each run a seed,
# the program prints the digest of each result it checked, and the kit's own
# tool (checker/verify/digests) computes the digest of the right result for
# that seed. No GPU needed.

bats_require_minimum_version 1.5.0
load lib

VERIFY="$KIT_ROOT/checker/verify"

setup_file() {
    make --no-print-directory -C "$KIT_ROOT/checker/verify" V=1 digests >"$BATS_FILE_TMPDIR/build.log" 2>&1
}

@test "the digest tool builds as C11 without warnings, and its reference code passes its self-test" {
    run cat "$BATS_FILE_TMPDIR/build.log"
    echo "$output"
    [ -x "$VERIFY/digests" ]
    refute_output --partial warning
    run -0 make --no-print-directory -s -C "$VERIFY" selftest
    echo "$output"
    assert_line ok
}

@test "the digest tool prints one digest line per result, and refuses what the lab refuses" {
    run -0 "$VERIFY/digests" 01 --n 1000 --seed 7
    assert_output --regexp '^  digest_out = [0-9a-f]{16}$'
    run -0 "$VERIFY/digests" 05-overlap --streams=4 --size-mib 1
    [ "${#lines[@]}" -eq 5 ]
    run -2 "$VERIFY/digests" 05-overlap --order breadth
    run -0 "$VERIFY/digests" 06 --scenario 3 --n 1024 --chunks 2
    assert_output --regexp '^  digest_scenario3 = [0-9a-f]{16}$'
    run -2 "$VERIFY/digests" 01 --frobnicate
    run -2 "$VERIFY/digests" 01 --seed 4294967296
    run -2 "$VERIFY/digests" 99
}

@test "a different seed gives different digests, the same seed the same" {
    local a b c
    a=$("$VERIFY/digests" 03 --max-mib 1 --seed 1)
    b=$("$VERIFY/digests" 03 --max-mib 1 --seed 2)
    c=$("$VERIFY/digests" 03 --max-mib 1 --seed 1)
    echo "$a"; echo "$b"
    [ "$a" = "$c" ] && [ "$a" != "$b" ]
}

# The tool reads the options with each lab's own table, written again in
# digests.c: the names, defaults and ranges must be those of the lab's
# opts[] in its starter and its solution (the variables' initial values), or
# for labs 01 and 02 those of lab_parse_n_steps_seed in common/options.h.
@test "the digest tool knows every lab's options as the lab programs take them" {
    local id prog f files=() n=0 bad="" o="$BATS_TEST_TMPDIR/options"
    for id in $(lab_ids); do
        prog=$(src_of "$id")
        files+=("$KIT_ROOT/labs/$id/$prog" "$KIT_ROOT/solutions/$id/$prog")
    done
    mkdir -p "$o"
    options_of_source "$o" "${files[@]}"
    for f in "${files[@]}"; do
        n=$((n + 1)) id=${f%/*} id=${id##*/}
        diff "$o/$n" <("$VERIFY/digests" --options "$id") >"$o/$n.diff" ||
            bad+=$'\n'"$f:"$'\n'"$(cat "$o/$n.diff")"
    done
    echo "${bad:-the options agree in ${#files[@]} files}"
    [ -z "$bad" ] && [ ${#files[@]} -gt 0 ]
}

# options_of_source DIR FILE...: the options table of each lab .cu (or .py) file as
# the tool's --options prints it ("NAME DEFAULT LO HI", or "NAME DEFAULT
# WORD,WORD"), the Kth file's in DIR/K: one python for all of them.
options_of_source() {
    python3 - "$@" <<'EOF'
import ast, os, re, sys
def table_of(src, path):
    if 'OPTIONS = [' in src:            # a Python lab: its OPTIONS table
        table = src[src.index('OPTIONS = [') + 10:]
        for name, default, lo, hi in ast.literal_eval(table[:table.index(']') + 1]):
            print(name, default, lo, hi)
        return
    consts = {'LAB_SEED_MAX': 4294967295, 'MAX_STREAMS': 32, 'KEY_N': 1024}
    for m in re.finditer(r'enum\s+\w*\s*\{([^}]*)\}', src):
        for i, name in enumerate(n.strip() for n in m.group(1).split(',')):
            consts[name] = i
    for m in re.finditer(r'#define\s+(\w+)\s+(\d+)\b', src):
        consts[m.group(1)] = int(m.group(2))       # the file's own #define
    def value(x):
        x = x.strip()
        x = re.sub(r'(\d+)U?L*L?\b', r'\1', x)
        return eval(x, {}, dict(consts))
    defaults = {}
    decl = re.search(r'unsigned long long ([^;]*);\s*/\* the defaults \*/', src)
    for part in decl.group(1).split(','):
        name, init = part.split('=')
        defaults[name.strip()] = value(init)
    words = {m.group(1): [w.strip().strip('"') for w in m.group(2).split(',') if 'NULL' not in w]
             for m in re.finditer(r'static const char \*const (\w+)\[\] = \{([^}]*)\}', src)}
    m = re.search(r'lab_parse_n_steps_seed\(argc, argv, usage_text, &n, &steps, ([^,]+), &seed\)', src)
    if m:                               # labs 01, 02: the table in common/options.h
        consts['steps_max'] = value(m.group(1))
        src = open(os.path.join(os.path.dirname(path), '../../common/options.h')).read()
        src = src[src.index('lab_parse_n_steps_seed('):]
    table = re.search(r'const struct lab_option opts\[\] = \{(.*?)\n    \};', src, re.S).group(1)
    for m in re.finditer(r'\{ "(--[\w-]+)", &?(\w+), ([^,]+), ([^,]+), (\w+) \}', table):
        name, var, lo, hi, w = m.groups()
        if w == 'NULL':
            print(name, defaults[var], value(lo), value(hi))
        else:
            print(name, defaults[var], ','.join(words[w]))
for k, path in enumerate(sys.argv[2:], 1):
    sys.stdout = open("%s/%d" % (sys.argv[1], k), "w")
    table_of(open(path).read(), path)
    sys.stdout.close()
EOF
}

# The checker on one run of the lab 01 solution, recorded on a GPU and
# replayed (fixtures/progs/replay-prog), whose output is rewritten: its digest line
# right, wrong, or gone. Prints the lines of "every element of the result is right".
digest_verdict() {
    local d="$BATS_TEST_TMPDIR/$1" rec="$KIT_ROOT/checker/tests/fixtures/replays/01-sync-copy/solution"
    mkdir -p "$d/prog" "$d/rec"
    cp "$rec"/* "$d/rec/"
    echo 5 >"$d/rec/seed"
    case $1 in
        right) line=$("$VERIFY/digests" 01 --seed 5) ;;
        wrong) line="  digest_out = 0123456789abcdef" ;;
        gone) line="" ;;
    esac
    grep -v '^  digest_' "$rec/r.out" | awk -v d="$line" '/^RESULT: verified/ && d != "" { print d } { print }' >"$d/rec/r.out"
    printf 'sync_copy:\n\t@true\n' >"$d/prog/Makefile"
    ln -s "$KIT_ROOT/checker/tests/fixtures/progs/replay-prog" "$d/prog/sync_copy"
    LAB_SEED=5 LAB_DIR="$d/prog" REPLAY="$d/rec" without_bats_env "${BATS:-bats}" --tap \
        --filter '^every element of the result is right$' "$KIT_ROOT/checker/01-sync-copy.bats" 2>&1
}

@test "the checker passes a right digest, and fails a wrong or missing one saying why" {
    BATS=$(command -v "$BATS_ROOT/bin/bats" || command -v bats)
    run digest_verdict right
    echo "$output"
    assert_line --regexp '^ok 1 every element of the result is right'
    run digest_verdict wrong
    echo "$output"
    assert_line --regexp '^not ok 1 every element of the result is right'
    assert_output --partial "seen:     digest_out = 0123456789abcdef"
    assert_output --partial "the printed digest is not the digest of the right result: was verify() or the RESULT line edited?"
    run digest_verdict gone
    echo "$output"
    assert_line --regexp '^not ok 1 every element of the result is right'
    assert_output --partial 'seen:     no line "digest_out = ..."'
}

@test "every checker run is given a seed: LAB_SEED, else a new one each time" {
    local runs="$BATS_TEST_TMPDIR/runs" a b
    # lab_seed from checks.bash, as a lab's checker loads it (its runs in
    # BATS_FILE_TMPDIR/runs)
    a=$(BATS_FILE_TMPDIR="$runs/a" BATS_TEST_DIRNAME="$KIT_ROOT/checker" LAB_ID=01-sync-copy \
        bash -c 'source "$BATS_TEST_DIRNAME/lib/checks.bash"; lab_seed; lab_seed')
    b=$(BATS_FILE_TMPDIR="$runs/b" BATS_TEST_DIRNAME="$KIT_ROOT/checker" LAB_ID=01-sync-copy \
        bash -c 'source "$BATS_TEST_DIRNAME/lib/checks.bash"; lab_seed')
    echo "$a / $b"
    [ "$(echo "$a" | sort -u | wc -l)" = 1 ]    # one seed per checker run
    [[ "$b" =~ ^[0-9]+$ ]] && [ "$b" -le 4294967295 ]
    [ "$(echo "$a" | head -n 1)" != "$b" ]       # (1 chance in 2^32 to be equal)
    run -0 env BATS_FILE_TMPDIR="$runs/c" LAB_SEED=42 BATS_TEST_DIRNAME="$KIT_ROOT/checker" LAB_ID=01-sync-copy \
        bash -c 'source "$BATS_TEST_DIRNAME/lib/checks.bash"; lab_seed'
    assert_output 42
}
