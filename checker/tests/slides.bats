#!/usr/bin/env bats
# slides.bats -- the decks as a room sees them: every slide has presenter notes,
# no slide overflows when Chromium renders it, every deck shows its timeline.
# Reads the decks `make slides` built (slides/build/); skips, with the reason,
# where they or the browser are missing. No GPU needed.

bats_require_minimum_version 1.5.0
load lib

SLIDES="$KIT_ROOT/slides"
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"

decks() { (cd "$SLIDES" && ls [0-9][0-9]-*.md | sed 's/\.md$//'); }

# Why the decks cannot be checked here, or nothing when they can.
not_built() {
    command -v node >/dev/null || { echo "node not found (the decks are built with Node.js)"; return; }
    [ -x "$SLIDES/node_modules/.bin/marp" ] || { echo "slides not built: run make slides"; return; }
    local d
    for d in $(decks); do
        [ -f "$SLIDES/build/$d.html" ] || { echo "slides/build/$d.html missing: run make slides"; return; }
        [ "$SLIDES/build/$d.html" -nt "$SLIDES/$d.md" ] ||
            { echo "slides/build/$d.html is older than $d.md: run make slides"; return; }
    done
}

no_browser() {
    [ -x "$CHROMIUM" ] || echo "no browser at $CHROMIUM (install Debian's chromium to render the decks)"
}

# One browser for the whole file: it renders every deck, and a deck built here
# with two known faults (a table over the footer, one cut off at the right),
# which proves the check sees what it is there to see.
setup_file() {
    export RENDER="$BATS_FILE_TMPDIR/render"
    [ -z "$(not_built)" ] && [ -z "$(no_browser)" ] || return 0
    local t="$BATS_FILE_TMPDIR/deck"
    mkdir -p "$t"
    cp "$SLIDES/theme.css" "$t/"
    {
        printf -- '---\nmarp: true\ntheme: labs\nfooter: "a footer"\n---\n\n# Too long\n\n'
        printf '| a | b |\n|---|---|\n'
        for i in $(seq 1 14); do printf '| row %s | more |\n' "$i"; done
        printf '\n<!-- Note. -->\n\n---\n\n# Too wide\n\n| a | b |\n|---|---|\n| `%s` | b |\n\n<!-- Note. -->\n' \
            "$(printf 'x%.0s' $(seq 1 160))"
    } >"$t/faulty.md"
    "$SLIDES/node_modules/.bin/marp" --no-config-file --theme-set "$t/theme.css" \
        -o "$t/faulty.html" "$t/faulty.md" >"$RENDER.marp" 2>&1 || true
    local rc=0
    node "$SLIDES/check.mjs" render "$SLIDES"/build/[0-9][0-9]-*.html "$t/faulty.html" \
        >"$RENDER" 2>&1 || rc=$?
    echo "$rc" >"$RENDER.rc"
}

@test "every slide of every deck has presenter notes, a paragraph to a line" {
    why=$(not_built); [ -z "$why" ] || skip "$why"
    run node "$SLIDES/check.mjs" notes "$SLIDES"/build/[0-9][0-9]-*.html
    echo "$output"
    [ "$status" -eq 0 ]
}

# Each SVG is streamtrace's drawing of a recorded run (make -C slides
# timelines), except lab 06's, a sketch that says so.
@test "every deck shows its lab's timeline, as streamtrace drew it" {
    why=$(not_built); [ -z "$why" ] || skip "$why"
    local d svg bad=0
    for d in $(decks); do
        svg=$(grep -o '(timelines/[^)]*\.svg)' "$SLIDES/$d.md" | tr -d '()' | head -n 1)
        if [ -z "$svg" ]; then
            echo "$d.md shows no timelines/*.svg"; bad=1; continue
        fi
        [ -f "$SLIDES/$svg" ] || { echo "$d.md: $svg is missing"; bad=1; }
        [ -f "$SLIDES/build/$svg" ] || { echo "$d.md: build/$svg is missing (make slides copies it)"; bad=1; }
        grep -q '^<svg ' "$SLIDES/$svg" || { echo "$svg is not an SVG"; bad=1; }
        grep -q '>\[FILL IN' "$SLIDES/$svg" && { echo "$svg is a placeholder"; bad=1; }
        { grep -q 'A sketch' "$SLIDES/$svg" && [ "$d" != 06-lifetime ]; } &&
            { echo "$svg is a sketch, not a drawing of a run"; bad=1; }
    done
    [ "$bad" = 0 ]
}

@test "no element of any slide is past its slide's content area (headless Chromium)" {
    why=$(not_built); [ -z "$why" ] || skip "$why"
    why=$(no_browser); [ -z "$why" ] || skip "$why"
    cat "$RENDER"
    # Every line of the report names faulty.html, and the browser ran (rc 1).
    run grep -v '^faulty\.html' "$RENDER"
    [ "$status" -eq 1 ]
    [ "$(cat "$RENDER.rc")" = 1 ]
}

@test "the overflow check finds a table that covers the footer, and one cut off at the right" {
    why=$(not_built); [ -z "$why" ] || skip "$why"
    why=$(no_browser); [ -z "$why" ] || skip "$why"
    cat "$RENDER.marp" "$RENDER"
    grep -q '^faulty\.html slide 1: <table> .*covers the footer' "$RENDER"
    grep -q '^faulty\.html slide 2: <table> .*cuts off .* at the right' "$RENDER"
}
