# timing.bash -- what overhead.sh and overhead-probe.sh share (sourced).

# us CMD...: run CMD with its output thrown away; print its wall time in µs.
us() { local t0; t0=$(date +%s%N); "$@" >/dev/null 2>&1; echo $(( ($(date +%s%N) - t0) / 1000 )); }

# median: the median of the numbers on stdin, one per line.
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
