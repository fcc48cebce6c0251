# junit.awk -- bats' TAP stream of one checker as a JUnit XML report.
#
#   awk -v suite=01-sync-copy -f junit.awk checks.tap >report.xml
#
# One <testsuite> per lab, one <testcase> per check: a failed check carries
# its diagnostics (expected / seen / hint) in <failure>, a skipped one its
# reason in <skipped>. A check skipped for want of a GPU (its reason starts
# with "no CUDA device", or "needs 2 GPUs" on a machine with one) is "not
# graded", and so is the report when there is one: the suite's name and a
# property say "not graded: N checks need a GPU" (or "... need 2 GPUs").
# Written here rather than by bats' junit formatter, which Debian's bats
# 1.8.2 leaves empty when it also writes TAP.

function xml(s) {
    gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s)
    gsub(/"/, "\\&quot;", s)
    return s
}
# a failed case is complete when the next case (or the end) comes
function close_case() {
    if (!open) return
    body[fail_at] = body[fail_at] sprintf("      <failure message=\"%s\">%s</failure>\n    </testcase>\n",
                                          xml(first), xml(diag))
    open = 0; diag = ""; first = ""
}

BEGIN { n = 0; nf = 0; ns = 0; gpu_skips = 0; more = 0; most = 0 }
/^(ok|not ok) [0-9]+ / {
    close_case()
    ok = ($1 == "ok")
    name = $0; sub(/^(ok|not ok) [0-9]+ /, "", name)
    n++
    if (ok && name ~ / # [sS][kK][iI][pP]/) {
        reason = name; sub(/^.* # [sS][kK][iI][pP] ?/, "", reason)
        sub(/ # [sS][kK][iI][pP].*$/, "", name)
        if (reason ~ /^no CUDA device/) {
            reason = "not graded, this check needs a GPU: " reason
            gpu_skips++
        } else if (reason ~ /^needs [0-9]+ GPUs/) {
            split(reason, w, " ")
            if (w[2] + 0 > most) most = w[2] + 0
            reason = "not graded, this check " reason
            gpu_skips++; more++
        }
        body[n] = sprintf("    <testcase classname=\"%s\" name=\"%s\">\n      <skipped message=\"%s\"/>\n    </testcase>\n",
                          xml(suite), xml(name), xml(reason))
        ns++
    } else if (ok) {
        body[n] = sprintf("    <testcase classname=\"%s\" name=\"%s\"/>\n", xml(suite), xml(name))
    } else {
        body[n] = sprintf("    <testcase classname=\"%s\" name=\"%s\">\n", xml(suite), xml(name))
        open = 1; fail_at = n; nf++
    }
    next
}
/^# / || /^#$/ {
    if (open) {
        d = $0; sub(/^# ?/, "", d)
        diag = diag d "\n"
        if (first == "" && d ~ /^(expected|seen|not checked):/) first = d
    }
    next
}
{ if (open) diag = diag $0 "\n" }
END {
    close_case()
    what = more > 0 && more == gpu_skips ? most " GPUs" : "a GPU"
    ng = gpu_skips == 1 ? "1 check needs " what : gpu_skips " checks need " what
    if (more > 0 && more < gpu_skips) ng = ng ", " more " of them " most " GPUs"
    title = suite
    if (gpu_skips > 0) title = suite " (not graded: " ng ")"
    print "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
    printf "<testsuites name=\"%s\" tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n", xml(title), n, nf, ns
    printf "  <testsuite name=\"%s\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\">\n", xml(suite), n, nf, ns
    if (gpu_skips > 0)
        printf "    <properties>\n      <property name=\"not graded\" value=\"%s\"/>\n    </properties>\n", ng
    for (i = 1; i <= n; i++) printf "%s", body[i]
    print "  </testsuite>"
    print "</testsuites>"
}
