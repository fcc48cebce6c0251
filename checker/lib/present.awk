# present.awk -- turn bats' TAP stream into the lines a student reads.
#
#   ok    the program builds without warnings
#   FAIL  every element of the result is right
#           expected: ...   seen: ...   hint: ...
#   skip  the copies overlap -- no CUDA device: ...
#   9 passed, 1 failed, 1 skipped
#
# Of a failed check's diagnostics it shows only the checker's own lines
# (expected/seen/hint/not checked and their indented continuations, and the
# timeline of the part of the run it judged: "timeline:", then the drawing's
# lines, each starting "| "); where a check printed none of those, it shows
# everything bats printed, so a fault in the checker itself is never hidden.
# Variables: color=1 for ANSI colours (the drawing's kinds coloured as
# streamtrace colours them); indent=N, the columns before a drawing (12).
# The counts are also written to the file named by -v counts=FILE.

function flush(   i, shown) {
    if (!failing) return
    shown = 0
    for (i = 1; i <= ndiag; i++)
        if (diag[i] ~ /^(expected|seen|hint|not checked|note|timeline):/ || diag[i] ~ /^          /) {
            print "          " diag[i]; shown++
        } else if (diag[i] ~ /^\| /) {
            print sprintf("%" (indent == "" ? 12 : indent) "s", "") drawn(substr(diag[i], 3)); shown++
        }
    if (!shown)
        for (i = 1; i <= ndiag; i++) print "          " diag[i]
    failing = 0; ndiag = 0
}
function paint(code, text) { return color ? "\033[" code "m" text "\033[0m" : text }

# drawn LINE: a line of a timeline, its kinds coloured on a terminal (the
# lanes of streams glyph by glyph, the host's lanes grey, the legend's glyphs)
function drawn(l,   p, q, label, cells, out, i, c, code, cur) {
    if (!color) return l
    if (l ~ /^legend:/) {
        out = ""
        for (i = 1; i <= length(l); i++) {
            c = substr(l, i, 1)
            out = out ((c in glyph) && substr(l, i - 2, 2) == "  " ? paint(glyph[c], c) : c)
        }
        return out
    }
    p = index(l, "|")
    q = length(l)
    if (p == 0 || substr(l, q, 1) != "|" || q <= p) return l
    label = substr(l, 1, p - 1); sub(/^ +/, "", label); sub(/ +$/, "", label)
    cells = substr(l, p + 1, q - p - 1)
    if (label ~ /^thread [0-9]+$/ || label ~ /calls$/)
        return substr(l, 1, p) paint(label ~ /calls$/ ? "37" : "90", cells) "|"
    # a run of one kind is painted once
    out = ""; cur = ""
    for (i = 1; i <= length(cells); i++) {
        c = substr(cells, i, 1)
        code = (c in glyph) ? glyph[c] : ""
        if (code != cur) { out = out (cur != "" ? "\033[0m" : "") (code != "" ? "\033[" code "m" : ""); cur = code }
        out = out c
    }
    return substr(l, 1, p) out (cur != "" ? "\033[0m" : "") "|"
}

# "@note: ..." comes (on bats' fd 3) from a check while it runs, before its
# own ok line: it is kept and shown under that line.
function notes(   i) {
    for (i = 1; i <= nnote; i++) print "          note: " note[i]
    nnote = 0
}

BEGIN {
    passed = failed = skipped = 0
    # streamtrace's colours for H2D, D2H, kernel, other copy, memset
    glyph[">"] = "32"; glyph["<"] = "35"; glyph["#"] = "34"; glyph["="] = "36"; glyph["~"] = "33"
}
/^@note: / { n = $0; sub(/^@note: /, "", n); note[++nnote] = n; next }
/^1\.\.[0-9]+/ { next }
/^ok [0-9]+ / {
    flush()
    line = $0; sub(/^ok [0-9]+ /, "", line)
    if (line ~ / # [sS][kK][iI][pP]/) {
        reason = line; sub(/^.* # [sS][kK][iI][pP] ?/, "", reason)
        sub(/ # [sS][kK][iI][pP].*$/, "", line)
        # a reason shared by a run of skips is shown once
        print "  " paint("33", "skip") "  " line (reason != "" && reason != lastreason ? " -- " reason : "")
        lastreason = reason
        skipped++
    } else {
        print "  " paint("32", "ok  ") "  " line
        passed++
    }
    notes()
    next
}
/^not ok [0-9]+ / {
    flush()
    line = $0; sub(/^not ok [0-9]+ /, "", line)
    print "  " paint("31", "FAIL") "  " line
    nnote = 0   # a failed check says it all in its own lines
    failed++; failing = 1; ndiag = 0
    next
}
/^# / || /^#$/ {
    if (failing) { d = $0; sub(/^# ?/, "", d); diag[++ndiag] = d }
    next
}
{ if (failing) diag[++ndiag] = $0 }
END {
    flush()
    print "  " passed " passed, " failed " failed, " skipped " skipped"
    if (counts != "") print passed, failed, skipped > counts
}
