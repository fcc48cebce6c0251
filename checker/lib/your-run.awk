# your-run.awk -- "Your run": the figures that answer a lab's "Predict, then
# measure" questions, beside the student's predictions. Never graded.
#
#   awk -v preds=labs/01-sync-copy/predictions.txt -f your-run.awk FIGURES
#
# FIGURES is what the lab's checker wrote (your_fig in checks.bash): one
# figure a line, "NAME<TAB>VALUE<TAB>UNIT<TAB>WHAT" (VALUE "-": not measured
# in this run), or "# not measured: WHY". preds, where the file exists, holds
# the student's answers, read leniently:
#
#   # comments, blank lines and unanswered questions are fine
#   launch_ratio = 50
#   copy_share = 60 %        (the unit, if given, must be the question's)
#
# A line that cannot be read is named and skipped, never an error. A
# prediction is set against the figure as a factor ("2.1 times too high"),
# or, for a share in % or a count, as a difference ("12 points too low").
# Prints nothing when nothing was measured and there are no predictions.
#
# ref, where the file exists, holds the kit's reference runs of the lab
# (checker/reference/LAB.tsv, made by checker/tests/reference-runs): each
# run ("run<TAB>LABEL<TAB>GPU<TAB>CUDA<TAB>DAY<TAB>COMMAND") is named under
# the title, and its figures ("fig<TAB>LABEL<TAB>NAME<TAB>VALUE<TAB>UNIT")
# stand in a column of their own between this run's figure and the
# prediction, so a student reads three numbers a line.

function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t\r]+$/, "", s); return s }
# a number as a student reads it: 3 significant digits, no exponent
function num(x,   a) {
    a = x < 0 ? -x : x
    return a >= 1000 ? sprintf("%.0f", x) : sprintf("%.3g", x)
}
function with_unit(x, u) { return num(x) (u == "" ? "" : u == "%" ? " %" : " " u) }
# compared by difference: shares in %, counts
function by_difference(u) { return u == "%" || u == "" || u ~ /^of / }
function how_far(v, p, u,   d, r) {
    if (by_difference(u) || p <= 0 || v <= 0) {
        d = p - v
        if (d == 0) return "right"
        if (u == "%" && (d < 0 ? -d : d) < 2.5) return "about right"
        return num(d < 0 ? -d : d) (u == "%" ? " points" : "") (d < 0 ? " too low" : " too high")
    }
    r = p / v
    if (r >= 0.9 && r <= 1.1) return "about right (within 10%)"
    return r > 1 ? num(r) " times too high" : num(1 / r) " times too low"
}

BEGIN {
    FS = "\t"; n = 0; why = ""; nref = 0
    if (ref != "") {
        while ((getline l < ref) > 0) {
            split(l, f, "\t")
            if (f[1] == "run") { rl[++nref] = f[2]; rw[nref] = f[3] "; " f[4] "; `" f[6] "`, recorded " f[5] }
            else if (f[1] == "fig") { rv[f[2], f[3]] = f[4]; ru[f[2], f[3]] = f[5] }
        }
        close(ref)
    }
}
/^# not measured: / { why = substr($0, 17); next }
/^#/ || NF < 4 { next }
{ n++; name[n] = $1; value[n] = $2; unit[n] = $3; what[n] = $4; idx[$1] = n
  names = names (names == "" ? "" : ", ") $1 }
END {
    have = 0; nbad = 0; line = 0
    if (preds != "" && (getline l < preds) >= 0) {
        close(preds)
        while ((getline l < preds) > 0) {
            line++
            s = l; sub(/#.*/, "", s); s = trim(s)
            if (s == "") continue
            have = 1
            if (!match(s, /^[A-Za-z_][A-Za-z0-9_]*[ \t]*=/)) {
                bad[++nbad] = "line " line ": \"" trim(l) "\" is not \"name = number\""; continue
            }
            k = trim(substr(s, 1, index(s, "=") - 1)); val = trim(substr(s, index(s, "=") + 1))
            if (n > 0 && !(k in idx)) {
                bad[++nbad] = "line " line ": no question named \"" k "\" (this lab's: " names ")"; continue
            }
            if (val == "") continue        # not answered yet
            if (!match(val, /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?/)) {
                bad[++nbad] = "line " line ": \"" val "\" is not a number"; continue
            }
            u = trim(substr(val, RLENGTH + 1)); x = substr(val, 1, RLENGTH) + 0
            if (n > 0 && u != "" && tolower(u) != tolower(unit[idx[k]]) &&
                !(unit[idx[k]] == "x" && (u == "times" || u == "X"))) {
                bad[++nbad] = "line " line ": \"" val "\": the answer to " k " is in " \
                    (unit[idx[k]] == "" ? "plain numbers" : unit[idx[k]]); continue
            }
            pred[k] = x
        }
    }
    if (n == 0 && !have) exit
    if (n == 0) {
        print "  Your run: not measured" (why == "" ? "" : " (" why ")") \
              "; your predictions wait for a run that gets there"
    } else {
        print "  Your run (never graded): what the GPU did in the run checked above" \
              (nref ? ", beside the kit's reference runs" : "")
        w = 0
        for (i = 1; i <= n; i++) if (length(name[i]) > w) w = length(name[i])
        fmt = "    %-" w "s  %9s %-5s  %s\n"
        refs = ""
        if (nref) {
            for (j = 1; j <= nref; j++) print "    reference " rl[j] ": " rw[j]
            for (j = 1; j <= nref; j++) refs = refs sprintf("%9s %-5s  ", "ref " rl[j], "")
            hd = sprintf("    %-" w "s  %9s %-5s  %s", "", "yours", "", refs); sub(/ +$/, "", hd); print hd
        }
        for (i = 1; i <= n; i++) {
            v = value[i]
            shown = v == "-" ? "-" : num(v + 0)
            refs = ""
            for (j = 1; j <= nref; j++)
                refs = refs ((rl[j], name[i]) in rv ? sprintf("%9s %-5s  ", num(rv[rl[j], name[i]] + 0), unit[i]) \
                                                    : sprintf("%9s %-5s  ", "-", ""))
            if (name[i] in pred) {
                p = pred[name[i]]
                said = "you said " with_unit(p, unit[i])
                tail = v == "-" ? said ": not measured in this run" : said ": " how_far(v + 0, p, unit[i])
            } else {
                tail = what[i]
            }
            printf fmt, name[i], shown, (v == "-" ? "" : unit[i]), refs tail
        }
    }
    for (i = 1; i <= nbad; i++) print "    predictions.txt " bad[i] ": skipped"
    if (!have && n > 0)
        print "    Predict before you run: the lab's README.md, \"Predict, then measure\" (predictions.txt)."
}
