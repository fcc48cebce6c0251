#!/usr/bin/env bats
# trace.bats -- the trace tool without a GPU: parser, queries and renderers
# on fixtures in fixtures/trace/ (hand-written ones, and captures made on the
# H200 of a GPU node). Every expected number is worked out from the fixture's lines in
# the comment above its test, not by running the tool.
#
# Times in basic.trace are ns; 1000000 ns = 1 ms. Its GPU intervals, in ms:
#   memset  [0.5, 1]   default (7)      H2D PAGEABLE [1, 3]    default (7)
#   kernel  [3, 7]     stream 13        H2D PINNED   [4, 5]    stream 14
#   H2D PINNED [5, 6.5] stream 14       empty kernel [6, 6]    stream 14
#   D2H PINNED [7.5, 8.5] stream 13     D2H PAGEABLE [8, 9]    stream 14
# host: nvtx outer [2.5, 9.5] > inner [3, 4], mark [4, 4]; 5 api calls.
# windows.trace (the windows) and columns.trace (glyphs sharing a column)
# say their own intervals in their comments; fixtures/replays/ are the labs' own
# solutions captured on the H200.

bats_require_minimum_version 1.5.0

setup_file() {
	KIT_ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
	make -C "$KIT_ROOT/checker/trace" >/dev/null
}

setup() {
	KIT_ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
	ST="$KIT_ROOT/checker/trace/streamtrace"
	FX="$BATS_TEST_DIRNAME/fixtures/trace"
	B="$FX/basic.trace"
	W="$FX/windows.trace"
	RP="$BATS_TEST_DIRNAME/fixtures/replays"
}

# expect WANT: compare $output with WANT, saying both on a mismatch.
expect() {
	if [ "$output" != "$1" ]; then
		echo "expected: $1"
		echo "got:      $output"
		return 1
	fi
}

# fits COLS ROWS: $output has at most ROWS lines, none wider than COLS.
fits() {
	local rows widest
	rows=$(printf '%s\n' "$output" | wc -l)
	widest=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' <<<"$output")
	echo "$rows lines, widest $widest"
	[ "$rows" -le "$2" ] && [ "$widest" -le "$1" ]
}

# traces: every fixture that loads, then every replay.
traces() {
	local f
	for f in "$FX"/*.trace; do
		case ${f##*/} in backwards.* | badheader.* | garbage.* | newer.*) continue ;; esac
		echo "$f"
	done
	ls "$RP"/*/solution/*.trace
}

# lesson LAB: the TRACE_WINDOW of solutions/LAB/Makefile, one word a line.
lesson() {
	local line
	line=$(sed -n 's/^TRACE_WINDOW := //p' "$KIT_ROOT/solutions/$1/Makefile" | sed 's/\\#/#/g')
	eval "set -- $line"
	[ $# -eq 0 ] || printf '%s\n' "$@"
}

# ---------------------------------------------------------------- counting

@test "count finds every kind of record in the hand-written trace" {
	# 3 H2D + 2 D2H = 5 copies; 2 kernels; 1 memset: gpu = 8
	run -0 "$ST" query "$B" count h2d;    echo "$output"; expect 3
	run -0 "$ST" query "$B" count d2h;    echo "$output"; expect 2
	run -0 "$ST" query "$B" count copy;   echo "$output"; expect 5
	run -0 "$ST" query "$B" count kernel; echo "$output"; expect 2
	run -0 "$ST" query "$B" count memset; echo "$output"; expect 1
	run -0 "$ST" query "$B" count gpu;    echo "$output"; expect 8
	run -0 "$ST" query "$B" count event;  echo "$output"; expect 1
	run -0 "$ST" query "$B" count d2d;    echo "$output"; expect 0
}

@test "selectors match kernel names, sync types, runtime calls and NVTX ranges" {
	run -0 "$ST" query "$B" count kernel:add;          echo "$output"; expect 1
	run -0 "$ST" query "$B" count kernel:kernel;       echo "$output"; expect 2
	run -0 "$ST" query "$B" count sync;                echo "$output"; expect 2
	run -0 "$ST" query "$B" count sync:context;        echo "$output"; expect 1
	run -0 "$ST" query "$B" count sync:stream;         echo "$output"; expect 1
	run -0 "$ST" query "$B" count sync:wait;           echo "$output"; expect 0
	run -0 "$ST" query "$B" count api:cudaMemcpyAsync; echo "$output"; expect 2
	run -0 "$ST" query "$B" count 'api:cudaMemcpy*';   echo "$output"; expect 3
	run -0 "$ST" query "$B" count api:cudaMemcpy;      echo "$output"; expect 1
	run -0 "$ST" query "$B" count nvtx:outer;          echo "$output"; expect 1
	run -0 "$ST" query "$B" count nvtx:out;            echo "$output"; expect 0
}

@test "the stream and memory filters pick the host side of each copy" {
	# default stream: H2D [1,3] + memset = 2; stream 14: 2 H2D, empty kernel, D2H = 4
	run -0 "$ST" query "$B" count gpu --stream default; echo "$output"; expect 2
	run -0 "$ST" query "$B" count gpu --stream 14;      echo "$output"; expect 4
	run -0 "$ST" query "$B" count gpu --stream 13;      echo "$output"; expect 2
	run -0 "$ST" query "$B" count kernel --stream default; echo "$output"; expect 0
	# H2D: src is the host side; D2H: dst is
	run -0 "$ST" query "$B" count h2d --mem PAGEABLE;   echo "$output"; expect 1
	run -0 "$ST" query "$B" count h2d --mem PINNED;     echo "$output"; expect 2
	run -0 "$ST" query "$B" count d2h --mem PAGEABLE;   echo "$output"; expect 1
	run -0 "$ST" query "$B" count d2h --mem PINNED;     echo "$output"; expect 1
	run -0 "$ST" query "$B" count h2d --stream default --mem PINNED; echo "$output"; expect 0
}

# ---------------------------------------------------------------- durations

@test "total, union and span add up intervals the way the arithmetic says" {
	# total h2d = 2 + 1 + 1.5 = 4.5; union: [1,3] + [4,6.5] (touching copies merge) = 4.5
	run -0 "$ST" query "$B" total h2d; echo "$output"; expect 4.500000
	run -0 "$ST" query "$B" union h2d; echo "$output"; expect 4.500000
	# gpu union: [0.5,7] + [7.5,9] = 6.5 + 1.5 = 8; span 9 - 0.5 = 8.5
	run -0 "$ST" query "$B" union gpu; echo "$output"; expect 8.000000
	run -0 "$ST" query "$B" span gpu;  echo "$output"; expect 8.500000
	# nested ranges: total 7 + 1 + 0 = 8, union just outer's 7
	run -0 "$ST" query "$B" total nvtx; echo "$output"; expect 8.000000
	run -0 "$ST" query "$B" union nvtx; echo "$output"; expect 7.000000
	# runtime calls: two cudaMemcpyAsync of 0.1 ms each
	run -0 "$ST" query "$B" total api:cudaMemcpyAsync; echo "$output"; expect 0.200000
}

@test "zero-length records count but cover no time" {
	# empty_kernel [6,6]: 1 record, 0 ms; kernels total 4 + 0; mark [4,4]
	run -0 "$ST" query "$B" count kernel:empty; echo "$output"; expect 1
	run -0 "$ST" query "$B" total kernel;       echo "$output"; expect 4.000000
	run -0 "$ST" query "$B" union kernel:empty; echo "$output"; expect 0.000000
	run -0 "$ST" query "$B" span nvtx:mark;     echo "$output"; expect 0.000000
	run -0 "$ST" query "$B" durations kernel;   echo "$output"
	expect "$(printf '4.000000\n0.000000')"
}

@test "bytes and bandwidth come out by direction and memory kind" {
	# h2d bytes 2e6 + 1e6 + 3e6 = 6e6 over 4.5e6 ns = 1.333 GB/s
	run -0 "$ST" query "$B" bytes h2d;     echo "$output"; expect 6000000
	run -0 "$ST" query "$B" bytes copy;    echo "$output"; expect 11000000
	run -0 "$ST" query "$B" bandwidth h2d; echo "$output"; expect 1.333
	# pinned H2D: 4e6 bytes / 2.5e6 ns = 1.600; d2h: 5e6 / 2e6 = 2.500
	run -0 "$ST" query "$B" bandwidth h2d --mem PINNED; echo "$output"; expect 1.600
	run -0 "$ST" query "$B" bandwidth d2h; echo "$output"; expect 2.500
	run -0 "$ST" query "$B" bandwidth d2d; echo "$output"; expect 0.000
}

# ---------------------------------------------------------------- structure

@test "streams says which streams carried the work and what they are" {
	run -0 "$ST" query "$B" streams gpu; echo "$output"
	expect "$(printf '7 default 0 -\n13 created 0 -\n14 created 0 -')"
	run -0 "$ST" query "$B" streams h2d --mem PINNED; echo "$output"; expect "14 created 0 -"
	# the context sync has no stream; the stream sync is on 14
	run -0 "$ST" query "$B" streams sync; echo "$output"; expect "14 created 0 -"
}

@test "overlap measures the intersection of two unions and its fractions" {
	# h2d [1,3]+[4,6.5] vs kernel [3,7] (+ empty): [4,6.5] = 2.5; 2.5/4.5, 2.5/4
	run -0 "$ST" query "$B" overlap h2d kernel; echo "$output"; expect "2.500000 0.5556 0.6250"
	run -0 "$ST" query "$B" overlap h2d d2h;    echo "$output"; expect "0.000000 0.0000 0.0000"
	# d2h [7.5,8.5] and [8,9] overlap each other: union 1.5, all of it
	run -0 "$ST" query "$B" overlap d2h d2h;    echo "$output"; expect "1.500000 1.0000 1.0000"
	# outer [2.5,9.5] vs gpu [0.5,7]+[7.5,9]: 4.5 + 1.5 = 6; 6/7, 6/8
	run -0 "$ST" query "$B" overlap nvtx:outer gpu; echo "$output"; expect "6.000000 0.8571 0.7500"
	# an empty side gives zeros, not a division by zero
	run -0 "$ST" query "$B" overlap memset kernel:nosuch; echo "$output"; expect "0.000000 0.0000 0.0000"
}

@test "query FILE - answers each question of stdin as alone, from one parse, a bad one in the middle too" {
	local q want="" got
	for q in "count	h2d" "list	kernel" "bogus" "order	h2d	kernel" "count	kernel	--window	nvtx:outer" "count	gpu	--window	nvtx:nosuch"; do
		want+=$("$ST" query "$B" $q 2>/dev/null; printf '\036%d' $?)$'\n'
	done
	got=$(printf 'count\th2d\nlist\tkernel\nbogus\norder\th2d\tkernel\ncount\tkernel\t--window\tnvtx:outer\ncount\tgpu\t--window\tnvtx:nosuch\n' |
		"$ST" query "$B" - 2>"$BATS_TEST_TMPDIR/err")$'\n'
	diff <(cat -A <<<"$want") <(cat -A <<<"$got")
	grep -q 'unknown question "bogus"' "$BATS_TEST_TMPDIR/err"
	[ "$(grep -c "^$(printf '\036')0\$" <<<"$got")" = 4 ]
	# (a file it cannot read: its status, as alone)
	run -3 "$ST" query "$BATS_TEST_TMPDIR/none" - </dev/null
}

@test "order compares the first match of each selector" {
	# first h2d [1,3] ends at 3 = first kernel's start: before
	run -0 "$ST" query "$B" order h2d kernel;    echo "$output"; expect before
	run -0 "$ST" query "$B" order kernel h2d;    echo "$output"; expect after
	run -0 "$ST" query "$B" order h2d memset;    echo "$output"; expect after
	run -0 "$ST" query "$B" order kernel:add nvtx:outer; echo "$output"; expect overlap
	run -0 "$ST" query "$B" order kernel:nosuch h2d;     echo "$output"; expect missing
}

@test "order counts a record ending up to 5 us after the other began as before it (CUPTI's stamps of a wait), no more" {
	# the first kernel of basic.trace moved to start 4.9 us, then 5.1 us,
	# before the first h2d copy ends (its length kept)
	local us t
	for us in 4.9 5.1; do
		t="$BATS_TEST_TMPDIR/slack-$us.trace"
		python3 - "$B" "$t" "$us" <<'PY'
import sys
src, dst, us = sys.argv[1], sys.argv[2], float(sys.argv[3])
f = [l.split('\t') for l in open(src).read().split('\n')]
h = next(i for i, x in enumerate(f) if x[0] == 'copy' and 'H2D' in x)
k = next(i for i, x in enumerate(f) if x[0] == 'kernel')
n = int(f[k][2]) - int(f[k][1])
f[k][1] = str(int(f[h][2]) - round(us * 1000))
f[k][2] = str(int(f[k][1]) + n)
open(dst, 'w').write('\n'.join('\t'.join(x) for x in f))
PY
		run -0 "$ST" query "$t" order h2d kernel; echo "$us: $output"
		if [ "$us" = 4.9 ]; then expect before; else expect overlap; fi
	done
}

@test "list prints one tab-separated line per record, times from the first record" {
	# the first record is the cudaMemcpy call at 0 ns
	run -0 "$ST" query "$B" list h2d; echo "$output"
	expect "$(printf '1.000000\t3.000000\t2.000000\tcopy\t7\tH2D\t2000000\tPAGEABLE\t0\t100\n4.000000\t5.000000\t1.000000\tcopy\t14\tH2D\t1000000\tPINNED\t0\t100\n5.000000\t6.500000\t1.500000\tcopy\t14\tH2D\t3000000\tPINNED\t0\t100')"
	run -0 "$ST" query "$B" list kernel:empty; echo "$output"
	expect "$(printf '6.000000\t6.000000\t0.000000\tkernel\t14\tempty_kernel()\t-\t-\t0\t100')"
}

@test "corr adds to each list line the call that queued it and whether a copy was async" {
	# the H2D [1,3] was queued by call 1 (cudaMemcpy, not async); the two
	# PINNED ones by 3 and 4, async; an api record's own id, no ASYNC
	run -0 "$ST" query "$B" corr h2d; echo "$output"
	expect "$(printf '1.000000\t3.000000\t2.000000\tcopy\t7\tH2D\t2000000\tPAGEABLE\t0\t100\t1\t0\n4.000000\t5.000000\t1.000000\tcopy\t14\tH2D\t1000000\tPINNED\t0\t100\t3\t1\n5.000000\t6.500000\t1.500000\tcopy\t14\tH2D\t3000000\tPINNED\t0\t100\t4\t1')"
	run -0 "$ST" query "$B" corr api:cudaLaunchKernel; echo "$output"
	expect "$(printf '3.100000\t3.200000\t0.100000\tapi\t-\tcudaLaunchKernel\t-\t-\t-\t100\t2\t-')"
	# the event record (corr 11) and the context sync (corr 9, no stream)
	run -0 "$ST" query "$B" corr event; echo "$output"
	expect "$(printf '7.000000\t7.000000\t0.000000\tevent\t13\trecord\t-\t-\t0\t-\t11\t-')"
	run -0 "$ST" query "$B" corr sync:context; echo "$output"
	expect "$(printf '2.000000\t9.000000\t7.000000\tsync\t-\tcontext\t-\t-\t0\t-\t9\t-')"
}

@test "streams without a selector lists every stream the trace declares" {
	# devices2.trace declares 19 (internal, device 1), which ran nothing
	run -0 "$ST" query "$FX/devices2.trace" streams; echo "$output"
	expect "$(printf '7 default 0 -\n13 created 0 blocking\n14 created 0 non-blocking\n15 per-thread 0 blocking\n16 per-thread 0 blocking\n17 default 1 -\n19 internal 1 -\n25 created 1 blocking')"
}

# pipeline.trace, in ms: sequential #1 [0,10]: device 0 H2D [1,3], kernel
# [3,7], D2H [7,8]; device 1 H2D [1,2], kernel [2,4], D2H [4,6]. pipelined
# #1 [10,20]: device 0 two chunks, H2D [11,12] [12,13], kernels [12,14]
# [14,16], D2H [14,14.5] [16,16.5]; device 1 one chunk, H2D [11,12], kernel
# [12,14], D2H [14,16]. sequential #2 [20,30]: device 0 H2D [21,22], kernels
# [22,26] and [23,25] at once, D2H [26,27]. pipelined #2 [30,40]: device 0
# H2D [31,31.5] [31.5,32], kernels [31.5,33.5] [33.5,35.5], D2H [33.5,34]
# [35.5,39]. sequential #3 [40,42]: no GPU work.
@test "stages gives each range's busy time per stage and device, its kernels and its span" {
	F="$FX/pipeline.trace"
	# #1: spans 1 -> 8 = 7 over both devices; #2: the kernels' union
	# [22,26] is 4 (their sum would be 6), span 21 -> 27; #3: nothing
	run -0 "$ST" query "$F" stages nvtx:sequential; echo "$output"
	expect "$(printf '1 0 2.000000 4.000000 1.000000 1 7.000000\n1 1 1.000000 2.000000 2.000000 1 7.000000\n2 0 1.000000 4.000000 1.000000 2 6.000000\n3 - 0.000000 0.000000 0.000000 0 0.000000')"
	# pipelined #1 spans 11 -> 16.5; #2 31 -> 39; D2H [33.5,34]+[35.5,39] = 4
	run -0 "$ST" query "$F" stages nvtx:pipelined; echo "$output"
	expect "$(printf '1 0 2.000000 4.000000 1.000000 2 5.500000\n1 1 1.000000 2.000000 2.000000 1 5.500000\n2 0 1.000000 4.000000 4.000000 2 8.000000')"
	run -0 "$ST" query "$F" stages nvtx:pipelined --device 1; echo "$output"
	expect "$(printf '1 1 1.000000 2.000000 2.000000 1 5.000000\n2 - 0.000000 0.000000 0.000000 0 0.000000')"
}

@test "bound holds each pipelined range against the fill and drain bound of the sequential range before it" {
	F="$FX/pipeline.trace"
	# pair 1: device 0 (2 engines) H 2 K 4 D 1, C 2: h 1 k 2 d 0.5,
	# max(2+2+0.5, 1+4+0.5, 1+2+1) = 5.5; device 1 (1 engine) H 1 K 2 D 2,
	# C 1: max(1+2, 1+2+2) = 5; bound 5.5 over the span 5.5: 1.
	# pair 2: device 0 H 1 K 4 D 1, C 2: max(1+2+0.5, 0.5+4+0.5, 0.5+2+1) =
	# 5 over 8: 0.625. The median of two is the lower: pair 2, its 2 chunks.
	run -0 "$ST" query "$F" bound nvtx:sequential nvtx:pipelined; echo "$output"
	expect "0.6250 5.000000 8.000000 2 2"
	# no pipelined range: no pair, no line
	run -0 "$ST" query "$F" bound nvtx:sequential nvtx:nosuch; echo "$output"
	expect ""
}

@test "meta and dropped read the trace's own facts" {
	run -0 "$ST" query "$B" meta device;       echo "$output"; expect "Test GPU"
	run -0 "$ST" query "$B" meta copy_engines; echo "$output"; expect 2
	run -0 "$ST" query "$B" dropped;           echo "$output"; expect 0
	run -0 "$ST" query "$FX/streams16.trace" dropped; echo "$output"; expect 3
	run -1 "$ST" query "$B" meta no_such_key;  echo "$output"
}

@test "sixteen streams each get their own line and lane" {
	# kernel i on stream 100+i over [i, i+1.5] ms: union [1, 17.5] = 16.5, total 24
	F="$FX/streams16.trace"
	run -0 "$ST" query "$F" union kernel; echo "$output"; expect 16.500000
	run -0 "$ST" query "$F" total kernel; echo "$output"; expect 24.000000
	run -0 "$ST" query "$F" streams kernel; echo "$output"
	[ "${#lines[@]}" -eq 16 ] && [ "${lines[0]}" = "101 created" ] && [ "${lines[15]}" = "116 created" ]
	run -0 "$ST" timeline --color never --width 80 "$F"; echo "$output"
	[ "$(grep -c '^ *stream 1[01][0-9] |' <<<"$output")" -eq 16 ]
}

# ---------------------------------------------------------------- bad input

# ---------------------------------------------------------------- format 2
#
# devices2.trace (format 2), in ms: device 0: work on per-thread 15 [1,4]
# (thread 200), per-thread 16 [2,5] (thread 300), legacy 7 [6,8],
# non-blocking 14 [6.5,7.5], blocking 13 [8,9] and a direct P2P 0->1 on 13
# [9,9.5] (1e6 bytes); device 1: legacy 17 [1,3], created 25: H2D [0.5,1],
# kernel [3,4], a P2P 1->0 staged through the host [10,12] (2e6 bytes), an
# event at 12. Thread 100 queued all but the first two kernels.

@test "format 2: every record names its device, and devices are declared" {
	F="$FX/devices2.trace"
	run -0 "$ST" query "$F" devices; echo "$output"
	expect "$(printf '0 2 8 Test GPU\n1 2 8 Test GPU')"
	# device 0: 5 kernels and the direct P2P; device 1: a kernel on 17, one
	# on 25, the H2D and the staged P2P (its source is device 1)
	run -0 "$ST" query "$F" count gpu --device 0; echo "$output"; expect 6
	run -0 "$ST" query "$F" count gpu --device 1; echo "$output"; expect 4
	run -0 "$ST" query "$F" count event --device 1; echo "$output"; expect 1
	run -0 "$ST" query "$F" list h2d; echo "$output"
	expect "$(printf '0.500000\t1.000000\t0.500000\tcopy\t25\tH2D\t500000\tPINNED\t1\t100')"
	# format 1 is read as one device, 0
	run -0 "$ST" query "$B" devices; echo "$output"; expect "0 2 -1 Test GPU"
	run -0 "$ST" query "$B" count gpu --device 0; echo "$output"; expect 8
	run -2 "$ST" query "$F" count gpu --device one; echo "$output"
	[[ $output == *"--device takes a device number"* ]]
}

@test "format 2: streams are legacy, per-thread, created blocking or not, or internal" {
	F="$FX/devices2.trace"
	run -0 "$ST" query "$F" streams gpu; echo "$output"
	expect "$(printf '7 default 0 -\n13 created 0 blocking\n14 created 0 non-blocking\n15 per-thread 0 blocking\n16 per-thread 0 blocking\n17 default 1 -\n25 created 1 blocking')"
	run -0 "$ST" query "$F" count kernel --stream per-thread; echo "$output"; expect 2
	run -0 "$ST" query "$F" count kernel --stream default; echo "$output"; expect 2
	run -0 "$ST" query "$F" count kernel --stream created; echo "$output"; expect 3
	run -0 "$ST" query "$F" count kernel --stream non-blocking; echo "$output"; expect 1
	# blocking: 13, 15, 16 and 25 (the legacy streams are neither)
	run -0 "$ST" query "$F" count kernel --stream blocking; echo "$output"; expect 4
	run -0 "$ST" query "$F" count kernel --stream per-thread --device 1; echo "$output"; expect 0
	# the legacy kernel [6,8] and the non-blocking one [6.5,7.5] overlap
	run -0 "$ST" query "$F" overlap kernel:spin kernel:spin --stream non-blocking; echo "$output"
	expect "1.000000 1.0000 1.0000"
	run -2 "$ST" query "$F" count gpu --stream sideways; echo "$output"
	[[ $output == *"per-thread, created"* ]]
}

@test "format 2: each GPU record names the host thread that queued it" {
	F="$FX/devices2.trace"
	run -0 "$ST" query "$F" list kernel --stream per-thread; echo "$output"
	expect "$(printf '1.000000\t4.000000\t3.000000\tkernel\t15\twork(unsigned int*)\t-\t-\t0\t200\n2.000000\t5.000000\t3.000000\tkernel\t16\twork(unsigned int*)\t-\t-\t0\t300')"
	run -0 "$ST" query "$F" count kernel --thread 100; echo "$output"; expect 5
	# a thread's own calls and ranges count too
	run -0 "$ST" query "$F" count api --thread 200; echo "$output"; expect 1
	run -0 "$ST" query "$F" count nvtx:worker --thread 300; echo "$output"; expect 1
	# the two threads' kernels overlap [2, 4]: 2 ms
	run -0 "$ST" query "$F" union kernel --thread 200; echo "$output"; expect 3.000000
}

@test "format 2: peer copies say whether they went directly or through the host" {
	F="$FX/devices2.trace"
	run -0 "$ST" query "$F" count p2p; echo "$output"; expect 2
	run -0 "$ST" query "$F" count p2p:direct; echo "$output"; expect 1
	run -0 "$ST" query "$F" bytes p2p:host; echo "$output"; expect 2000000
	# 2e6 bytes in 2 ms = 1 GB/s
	run -0 "$ST" query "$F" bandwidth p2p:host; echo "$output"; expect 1.000
	run -0 "$ST" query "$F" events p2p:host; echo "$output"
	expect "$(printf '10.000000\t12.000000\t2.000000\tcopy\t25\tP2P\t2000000\tDEVICE\t1\t100\t-\t12.000000\t-\t-')"
	run -0 "$ST" summary "$F"; echo "$output"
	grep -Eq '^P2P direct +1 +1000000 +0\.500000 +2\.000$' <<<"$output"
	grep -Eq '^P2P via host +1 +2000000 +2\.000000 +1\.000$' <<<"$output"
	run -2 "$ST" query "$F" count p2p:nvlink
}

@test "format 2: lanes are grouped by device and named by their kind" {
	F="$FX/devices2.trace"
	run -0 "$ST" timeline --width 100 --color never "$F"; echo "$output"
	# device 0's lanes, then device 1's; the per-thread streams by their
	# threads' numbers (100 is thread 1: its range starts first)
	local labels
	labels=$(awk -F'|' 'NF > 2 { gsub(/^ +| +$/, "", $1); if ($1 != "") print $1 }' <<<"$output" | head -n 7 | paste -sd, -)
	echo "$labels"
	[ "$labels" = "dev 0 default,dev 0 thread 2 default,dev 0 thread 3 default,dev 0 stream 14 nb,dev 0 stream 13,dev 1 default,dev 1 stream 25" ]
	[[ ${lines[0]} == *"2 x Test GPU, 2 copy engines each"* ]]
	run -0 "$ST" summary "$F"; echo "$output"
	grep -Eq '^dev 0 thread 2 default +0 +1 +0 +3\.000000 1\.0000$' <<<"$output"
	# the threads, numbered as the lanes name them
	run -0 "$ST" query "$F" threads; echo "$output"
	expect "$(printf '100\t1\n200\t2\n300\t3')"
	run -2 "$ST" query "$F" threads kernel
	# one device: no "dev N"
	run -0 "$ST" timeline --width 100 "$B"
	[[ $output != *"dev 0"* ]]
}

# basic.trace: outer [2.5, 9.5] holds calls 2-5 and inner [3, 4] calls
# 2-4; the mark at 4 ms none. The copy of call 1 (made at 0 ms) still ran
# when outer began; at the mark, the work of calls 2-4 did.
@test "queued: what each NVTX range's calls queued, and the work from before it still running" {
	run -0 "$ST" query "$B" queued; echo "$output"
	expect "$(printf '%s\n' \
		'outer	1	A	3.100000	9.100000	4' \
		'outer	1	C	4.000000	5.000000	H2D	PINNED	14	3' \
		'outer	1	C	5.000000	6.500000	H2D	PINNED	14	4' \
		'outer	1	K	3.000000	7.000000	13	2' \
		'outer	1	K	6.000000	6.000000	14	5' \
		'outer	1	P	3.000000	0.500000' \
		'outer	1	R	2.500000	9.500000' \
		'inner	1	A	3.100000	3.400000	3' \
		'inner	1	C	4.000000	5.000000	H2D	PINNED	14	3' \
		'inner	1	C	5.000000	6.500000	H2D	PINNED	14	4' \
		'inner	1	K	3.000000	7.000000	13	2' \
		'inner	1	R	3.000000	4.000000' \
		'mark	1	P	5.000000	1.000000' \
		'mark	1	P	6.500000	2.500000' \
		'mark	1	P	7.000000	3.000000' \
		'mark	1	R	4.000000	4.000000')"
	# a range's number among those of its name, by start
	run -0 "$ST" query "$FX/pipeline.trace" queued
	grep -q '^sequential	3	R	40.000000	42.000000$' <<<"$output"
	run -2 "$ST" query "$B" queued kernel
}

@test "format 2: the JSON has a GPU process per device, its streams named by kind" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	J="$BATS_TEST_TMPDIR/devices2.json"
	run -0 "$ST" json "$FX/devices2.trace" -o "$J"
	run -0 python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
print(procs)
assert procs[1] == "GPU 0: Test GPU" and procs[11] == "GPU 1: Test GPU" and procs[2] == "Host"
names = {(e["pid"], e["args"]["name"]) for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
for want in [(1, "per-thread stream 15"), (1, "created non-blocking stream 14"),
             (1, "default stream 7"), (11, "default stream 17"), (11, "created stream 25")]:
    assert want in names, (want, names)
x = [e for e in ev if e["ph"] == "X" and e["cat"] == "copy"]
assert sorted(e["name"] for e in x) == ["H2D PINNED", "P2P 0 to 1 direct", "P2P 1 to 0 host"], x
' "$J"
	echo "$output"
	run -0 json_ok "$J"
}

@test "format 2: a malformed line names what is wrong" {
	local bad="$BATS_TEST_TMPDIR/bad.trace"
	printf 'streamtrace 2\ncopy\t1\t2\t0\t7\tP2P\t10\tDEVICE\tDEVICE\t1\t1\t-\t3\n' >"$bad"
	run -3 "$ST" query "$bad" count gpu; echo "$output"
	[[ $output == *"bad.trace:2: not a streamtrace record"*"P2P copy needs VIA"* ]]
	printf 'streamtrace 2\nkernel\t1\t2\t7\t1,1,1\t1,1,1\t3\tk\n' >"$bad"
	run -3 "$ST" query "$bad" count gpu; echo "$output"
	[[ $output == *"wrong number of fields"* ]]
	printf 'streamtrace 2\nstream\t7\tdefault\n' >"$bad"
	run -3 "$ST" query "$bad" count gpu; echo "$output"
	[[ $output == *"bad stream line"* ]]
	printf 'streamtrace 2\ndevice\tzero\t3\t132\tX\n' >"$bad"
	run -3 "$ST" query "$bad" count gpu; echo "$output"
	[[ $output == *"bad device line"* ]]
}

# kinds-h100.trace: kinds.cu (fixtures/trace-progs/) captured on an H100. Kernels, in ms
# from the first one's start (ns in the file less 1795493204687135157):
#   thread 2's  [0, 10.001287]         stream 13 per-thread (thread 4039843840)
#   thread 3's  [1.647361, 11.648552]  stream 14 per-thread (thread 4048236544)
#   legacy      [11.939982, 31.941402] stream 7 default
#   blocking    [31.942458, 41.943585] stream 15 created blocking
#   non-blocking [11.973966, 21.975124] stream 16 created non-blocking
# so the two per-thread kernels overlap 8.353926 ms; the blocking kernel
# starts 0.001056 ms after the legacy one ends; the non-blocking one lies
# inside it (0.033984 after its start, 9.966278 before its end). NVTX: two
# "worker" ranges, one "kinds" range over the rest.
@test "format 2, captured on an H100: per-thread, blocking and non-blocking streams" {
	F="$FX/kinds-h100.trace"
	run -0 "$ST" query "$F" streams kernel; echo "$output"
	expect "$(printf '%s\n' '7 default 0 -' '13 per-thread 0 blocking' '14 per-thread 0 blocking' \
		'15 created 0 blocking' '16 created 0 non-blocking')"
	run -0 "$ST" query "$F" streams kernel --window nvtx:worker; echo "$output"
	expect "$(printf '%s\n' '13 per-thread 0 blocking' '14 per-thread 0 blocking')"
	# each per-thread kernel queued by its own host thread
	run -0 "$ST" query "$F" list kernel --stream per-thread; echo "$output"
	[ "${#lines[@]}" -eq 2 ]
	[ "$(cut -f 5,10 <<<"${lines[0]}")" = "$(printf '13\t4039843840')" ]
	[ "$(cut -f 5,10 <<<"${lines[1]}")" = "$(printf '14\t4048236544')" ]
	# they overlap: the union of the two is shorter than their sum by 8.353926
	run -0 "$ST" query "$F" union kernel --stream per-thread; echo "$output"
	expect 11.648552
	# the blocking kernel starts after the legacy one ends, the non-blocking one inside it
	local legacy blocking nb
	legacy=$("$ST" query "$F" list kernel --stream default | cut -f 1,2)
	blocking=$("$ST" query "$F" list kernel --stream blocking --window nvtx:kinds | cut -f 1,2)
	nb=$("$ST" query "$F" list kernel --stream non-blocking | cut -f 1,2)
	echo "legacy $legacy; blocking $blocking; non-blocking $nb"
	run -0 awk -F'\t' -v l="$legacy" -v b="$blocking" -v n="$nb" 'BEGIN {
		split(l, L); split(b, B); split(n, N)
		printf "%.6f %.6f %.6f\n", B[1] - L[2], N[1] - L[1], L[2] - N[2] }'
	expect "0.001056 0.033984 9.966278"
	run -0 "$ST" timeline --color never --width 100 "$F"; echo "$output"
	[[ $output == *"thread 2 default |"* && $output == *"thread 3 default |"* &&
		$output == *"stream 16 nb |"* && $output == *"      stream 15 |"* ]]
}

# ---------------------------------------------------------------- format 3
#
# current3.trace (format 3), in ms: thread 100, device 0 current (calls
# 1-4): kernel "right" on 13 (device 0) [1,2], kernel "elsewhere" on 25
# (device 1) [1.5,3], an H2D copy on 25 [3,4]; device 1 current (calls 5-8,
# 10): kernel "right" on 25 [4,5], a direct P2P 0 -> 1 on 25 [5,5.5] (its
# DEVICE is its source, 0), an event on 25 at 5.5, a stream sync of 25
# [1.9,8]. Thread 200: kernel "unknown" on 7 (device 0) [6,7], its call
# with no current line. NVTX: "main" [0,8.5], "part" [1,3.5].

@test "format 3: each runtime call, and what it queued, says which device was current" {
	F="$FX/current3.trace"
	# the list line of each kernel, then the device current at its launch
	run -0 "$ST" query "$F" current kernel; echo "$output"
	expect "$(printf '%s\n' \
		"$(printf '1.000000\t2.000000\t1.000000\tkernel\t13\tright(int*)\t-\t-\t0\t100\t0')" \
		"$(printf '1.500000\t3.000000\t1.500000\tkernel\t25\telsewhere(int*)\t-\t-\t1\t100\t0')" \
		"$(printf '4.000000\t5.000000\t1.000000\tkernel\t25\tright(int*)\t-\t-\t1\t100\t1')" \
		"$(printf '6.000000\t7.000000\t1.000000\tkernel\t7\tunknown(int*)\t-\t-\t0\t200\t-')")"
	# calls 1-4 with device 0 current; 5-8 and 10 with device 1; 9 not known
	run -0 "$ST" query "$F" count api --current 0; echo "$output"; expect 4
	run -0 "$ST" query "$F" count api --current 1; echo "$output"; expect 5
	run -0 "$ST" query "$F" count kernel --current 0; echo "$output"; expect 2
	run -0 "$ST" query "$F" count sync --current 1; echo "$output"; expect 1
	run -0 "$ST" query "$F" current api:cudaSetDevice; echo "$output"
	[ "$(cut -f 11 <<<"$output" | paste -sd, -)" = "0,1" ]
	run -2 "$ST" query "$F" count gpu --current one; echo "$output"
	[[ $output == *'--current takes a device number or "other", not "one"'* ]]
}

@test "format 3: --current other finds the work queued into a stream of a device that was not current" {
	F="$FX/current3.trace"
	# the kernel "elsewhere" and the H2D copy went into device 1's stream 25
	# while device 0 was current; the P2P copy in 25 (DEVICE 0, its source)
	# was queued with device 1, its stream's, current: not other
	run -0 "$ST" query "$F" list gpu --current other; echo "$output"
	expect "$(printf '%s\n' \
		"$(printf '1.500000\t3.000000\t1.500000\tkernel\t25\telsewhere(int*)\t-\t-\t1\t100')" \
		"$(printf '3.000000\t4.000000\t1.000000\tcopy\t25\tH2D\t1000000\tPINNED\t1\t100')")"
	run -0 "$ST" query "$F" count kernel --current other; echo "$output"; expect 1
	run -0 "$ST" query "$F" count p2p --current other; echo "$output"; expect 0
	run -0 "$ST" query "$F" count event --current other; echo "$output"; expect 0
	# a kernel whose call's current device is not known is never "other"
	run -0 "$ST" query "$F" count kernel --current other --thread 200; echo "$output"; expect 0
	# windows keep it: "part" [1,3.5] holds "right" on device 0 and "elsewhere"
	run -0 "$ST" query "$F" count kernel --current other --window nvtx:part; echo "$output"; expect 1
	run -0 "$ST" query "$F" count kernel --current 0 --window nvtx:part; echo "$output"; expect 2
}

@test "formats 1 and 2 say nothing of the current device: - and nothing selected" {
	F="$FX/devices2.trace"
	run -0 "$ST" query "$F" current kernel; echo "$output"
	[ "${#lines[@]}" -eq 7 ] && [ "$(cut -f 11 <<<"$output" | sort -u)" = - ]
	run -0 "$ST" query "$F" count gpu --current other; echo "$output"; expect 0
	run -0 "$ST" query "$F" count api --current 0; echo "$output"; expect 0
	run -0 "$ST" query "$B" current h2d; echo "$output"
	[ "$(cut -f 11 <<<"$output" | sort -u)" = - ]
	# list keeps its ten fields: only the question current adds one
	run -0 "$ST" query "$F" list kernel; echo "$output"
	[ "$(awk -F'\t' '{ print NF }' <<<"$output" | sort -u)" = 10 ]
}

@test "format 3: a malformed current line names what is wrong, and formats 1 and 2 have none" {
	local bad="$BATS_TEST_TMPDIR/bad.trace"
	printf 'streamtrace 3\ncurrent\t5\n' >"$bad"
	run -3 "$ST" query "$bad" count gpu; echo "$output"
	[[ $output == *"bad.trace:2: not a streamtrace record"*"bad current line"* ]]
	printf 'streamtrace 3\ncurrent\t5\tzero\n' >"$bad"
	run -3 "$ST" query "$bad" count gpu; echo "$output"
	[[ $output == *"bad current line"* ]]
	printf 'streamtrace 2\ncurrent\t5\t0\n' >"$bad"
	run -3 "$ST" query "$bad" count gpu; echo "$output"
	[[ $output == *"unknown record type"* ]]
}

# ---------------------------------------------------------------- format 4
#
# graph4.trace (format 4), in ms from the first record: a capture (calls
# 1-3, its launch made no kernel), an instantiate (4), two cudaGraphLaunch
# (5, 6), each running step (node 11) and a memset (node 12) of graph 7; a
# cudaStreamSynchronize that returned 900 (7); a plain launch (8).

@test "format 4: each record a graph launched says its graph and node, with the launch's correlation id" {
	F="$FX/graph4.trace"
	run -0 "$ST" query "$F" graph gpu; echo "$output"
	[ "$(cut -f 11- <<<"$output" | paste -sd, -)" = "$(printf '7\t11\t5,7\t12\t5,7\t11\t6,7\t12\t6,-\t-\t8')" ]
	# the list line comes first, as list prints it
	[ "$(cut -f 1-10 <<<"$output")" = "$("$ST" query "$F" list gpu)" ]
	run -0 "$ST" query "$F" graph kernel --from 1 --to 1.95; echo "$output"
	[ "$(cut -f 11-13 <<<"$output")" = "$(printf '7\t11\t5')" ]
}

@test "format 4: each runtime call says what it returned, 0 for cudaSuccess" {
	F="$FX/graph4.trace"
	run -0 "$ST" query "$F" returned api; echo "$output"
	[ "$(cut -f 11,12 <<<"$output" | tr '\t' : | paste -sd, -)" = "1:0,2:0,3:0,4:0,5:0,6:0,7:900,8:0" ]
	run -0 "$ST" query "$F" returned api:cudaStreamSynchronize; echo "$output"
	[ "$(cut -f 12 <<<"$output")" = 900 ]
}

# --captured: what started between a cudaStreamBeginCapture call and the
# next cudaStreamEndCapture (lab 10: the calls a capture recorded or refused)
@test "--captured: what started while a stream capture was open, its begin and end calls not" {
	run -0 "$ST" query "$FX/graph4.trace" returned api --captured; echo "$output"
	[ "$(cut -f 6,11,12 <<<"$output")" = "$(printf 'cudaLaunchKernel\t2\t0')" ]
	run -0 "$ST" query "$FX/graph4.trace" count gpu --captured; echo "$output"
	[ "$output" = 0 ]
	# an end with none open and a begin while one is open change nothing; one
	# never ended is open to the end; asked in a window, the whole trace's
	local t="$BATS_TEST_TMPDIR/cap.trace"
	printf 'streamtrace 4\napi\t100\t200\t100\t1\tcudaStreamEndCapture\napi\t300\t400\t100\t2\tcudaStreamBeginCapture\napi\t500\t600\t100\t3\tcudaStreamBeginCapture\napi\t700\t800\t100\t4\tcudaLaunchKernel\n' >"$t"
	run -0 --separate-stderr "$ST" query "$t" list api --captured; echo "$output"
	[ "$(cut -f 6 <<<"$output" | paste -sd, -)" = cudaStreamBeginCapture,cudaLaunchKernel ]
	run -0 --separate-stderr "$ST" query "$t" list api --captured --from 0.0005 --whole; echo "$output"
	[ "$(cut -f 6 <<<"$output")" = cudaLaunchKernel ]
}

# caller, next, launches, and --stream not-created (lab 10: work off the
# program's streams with its call; a copy's next call; each replay's nodes)
@test "caller, next and launches: each record's call, a call's next on its thread, per launch its graph nodes" {
	F="$FX/graph4.trace"
	run -0 "$ST" query "$F" caller gpu; echo "$output"
	[ "$(cut -f 11,12 <<<"$output" | tr '\t' : | paste -sd, -)" = \
		5:cudaGraphLaunch,5:cudaGraphLaunch,6:cudaGraphLaunch,6:cudaGraphLaunch,8:cudaLaunchKernel ]
	[ "$(cut -f 1-10 <<<"$output")" = "$("$ST" query "$F" list gpu)" ]
	# per graph launch: records, graphs, nodes, names, node ids sorted
	run -0 "$ST" query "$F" launches gpu; echo "$output"
	[ "$output" = "$(printf '5 2 7 2 2 11,12\n6 2 7 2 2 11,12\n8 1 - 1 1 -')" ]
	run -0 "$ST" query "$F" next kernel; echo "$output"
	[ "$(cut -f 6,11- <<<"$output" | tr '\t' : | paste -sd, -)" = \
		"cudaGraphLaunch:5:6:cudaGraphLaunch,cudaGraphLaunch:6:7:cudaStreamSynchronize,cudaLaunchKernel:8:-:-" ]
	# next: the same thread's, an error query skipped; a record with no
	# call (corr 6 here) has no line; not-created: the default stream 7
	# and the undeclared 9, not the created 13
	local t="$BATS_TEST_TMPDIR/next.trace"
	printf 'streamtrace 4\nstream\t13\tcreated\t0\tblocking\nstream\t7\tdefault\t0\tblocking\napi\t100\t200\t100\t1\tcudaLaunchKernel\napi\t250\t260\t200\t2\tcudaLaunchKernel\napi\t300\t310\t100\t3\tcudaGetLastError\napi\t400\t500\t200\t4\tcudaStreamSynchronize\napi\t600\t700\t100\t5\tcudaStreamSynchronize\nkernel\t210\t900\t0\t13\t1,1,1\t1,1,1\t1\ta(int*)\nkernel\t270\t950\t0\t7\t1,1,1\t1,1,1\t2\tb(int*)\nkernel\t960\t990\t0\t9\t1,1,1\t1,1,1\t6\tc(int*)\nend\t3\t0\n' >"$t"
	run -0 --separate-stderr "$ST" query "$t" next kernel; echo "$output"
	[ "$(cut -f 11- <<<"$output" | tr '\t' : | paste -sd, -)" = "1:5:cudaStreamSynchronize,2:4:cudaStreamSynchronize" ]
	run -0 --separate-stderr "$ST" query "$t" caller kernel --stream not-created; echo "$output"
	[ "$(cut -f 5,11,12 <<<"$output" | tr '\t' : | paste -sd, -)" = "7:2:cudaLaunchKernel,9:-:-" ]
	run -2 --separate-stderr "$ST" query "$t" count kernel --stream made; echo "$stderr"
	[[ $stderr == *"not-created"* ]]
}

@test "formats 1 to 3 say nothing of graphs or returns: - for each" {
	run -0 "$ST" query "$FX/current3.trace" graph kernel; echo "$output"
	[ "$(cut -f 11,12 <<<"$output" | sort -u)" = "$(printf -- '-\t-')" ]
	run -0 "$ST" query "$FX/current3.trace" returned api:cudaSetDevice; echo "$output"
	[ "$(cut -f 12 <<<"$output" | sort -u)" = - ]
	run -0 "$ST" query "$B" graph h2d; echo "$output"
	[ "$(cut -f 11 <<<"$output" | sort -u)" = - ]
}

@test "format 4: a graph or error line out of place, or malformed, names what is wrong" {
	local bad="$BATS_TEST_TMPDIR/bad.trace"
	printf 'streamtrace 4\napi\t1\t2\t100\t5\tcudaGraphLaunch\ngraph\t7\t11\n' >"$bad"
	run -3 "$ST" query "$bad" count gpu; echo "$output"
	[[ $output == *"bad.trace:3: not a streamtrace record"*"a graph line belongs right after a kernel, copy or memset"* ]]
	printf 'streamtrace 4\nkernel\t1\t2\t0\t13\t1,1,1\t1,1,1\t5\tk\ngraph\t0\t11\n' >"$bad"
	run -3 "$ST" query "$bad" count gpu; echo "$output"
	[[ $output == *"bad graph line"* ]]
	printf 'streamtrace 4\napi\t1\t2\t100\t5\tcudaGraphLaunch\nerror\t6\t900\n' >"$bad"
	run -3 "$ST" query "$bad" count gpu; echo "$output"
	[[ $output == *"an error line belongs right after its api line"* ]]
	printf 'streamtrace 4\napi\t1\t2\t100\t5\tcudaGraphLaunch\nerror\t5\t0\n' >"$bad"
	run -3 "$ST" query "$bad" count gpu; echo "$output"
	[[ $output == *"bad error line"* ]]
	printf 'streamtrace 3\nkernel\t1\t2\t0\t13\t1,1,1\t1,1,1\t5\tk\ngraph\t7\t11\n' >"$bad"
	run -3 "$ST" query "$bad" count gpu; echo "$output"
	[[ $output == *"unknown record type"* ]]
}

@test "a garbage line is reported once, with its file and line" {
	run -3 --separate-stderr "$ST" query "$FX/garbage.trace" count gpu
	echo "stderr: $stderr"
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	[[ "$stderr" == *"garbage.trace:5: not a streamtrace record: "* ]]
	[ -z "$output" ]
}

@test "a file with a bad header is not a streamtrace file" {
	run -3 "$ST" query "$FX/badheader.trace" count gpu; echo "$output"
	expect "$FX/badheader.trace: not a streamtrace file"
	run -3 "$ST" summary /dev/null; echo "$output"
	run -3 "$ST" timeline "$FX/newer.trace"; echo "$output"
	[[ "$output" == *"format 7; this tool reads formats 1 to 6"* ]]
	run -3 "$ST" summary "$FX/no-such-file.trace"; echo "$output"
}

@test "a record that ends before it starts is malformed" {
	run -3 "$ST" query "$FX/backwards.trace" count gpu; echo "$output"
	[[ "$output" == *"backwards.trace:2: not a streamtrace record:"*"ends before it starts"* ]]
}

@test "a truncated trace warns once and still answers from what is there" {
	run -0 --separate-stderr "$ST" query "$FX/truncated.trace" count gpu
	echo "stdout: $output"; echo "stderr: $stderr"
	expect 2
	[[ "$stderr" == *"trace ends early: the program may have crashed"* ]]
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	run -0 "$ST" summary "$FX/truncated.trace"; echo "$output"
	[[ "$output" == *"ENDS EARLY"* ]]
}

@test "bad command lines exit 2 with usage" {
	run -2 "$ST";                               echo "$output"
	run -2 "$ST" frobnicate;                    echo "$output"
	run -2 "$ST" query "$B" count;              echo "$output"
	run -2 "$ST" query "$B" count nonsense;     echo "$output"
	run -2 "$ST" query "$B" overlap h2d;        echo "$output"
	run -2 "$ST" query "$B" wibble h2d;         echo "$output"
	run -2 "$ST" query "$B" count h2d --mem SQUISHY; echo "$output"
	run -2 "$ST" timeline --width 5 "$B";       echo "$output"
	run -2 "$ST" timeline --color sometimes "$B"; echo "$output"
	run -2 "$ST" run;                           echo "$output"
	[[ "$output" == *usage:* ]]
}

@test "a bad word is named, with the command's usage in one line" {
	run -2 --separate-stderr "$ST" query "$B" count nonsense; echo "$stderr"
	[[ "$stderr" == *'unknown selector "nonsense"'* ]]
	[[ "$stderr" == *'usage: streamtrace query FILE QUESTION'* ]]
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 3 ]
	run -2 --separate-stderr "$ST" query "$B" wibble h2d; echo "$stderr"
	[[ "$stderr" == *'unknown question "wibble"'* ]]
	run -2 --separate-stderr "$ST" timeline --frob "$B"; echo "$stderr"
	[[ "$stderr" == *'unknown option "--frob"'* ]]
	[[ "$stderr" == *'usage: streamtrace timeline [--width N]'* ]]
	run -2 --separate-stderr "$ST" summary --width 5 "$B"; echo "$stderr"
	[[ "$stderr" == *'--width takes 20..1000, not "5"'* ]]
	run -2 --separate-stderr "$ST" svg "$B" "$W"; echo "$stderr"
	[[ "$stderr" == *"not also \"$W\""* ]]
	# help says it all, windows and the happens-before questions too, in 90
	# columns
	run -0 "$ST" help; echo "$output"
	[[ "$output" == *"--window nvtx:NAME#K+gpu"* && "$output" == *"--from MS --to MS"* ]]
	fits 90 59
}

# ---------------------------------------------------------------- renderers

@test "the timeline has a lane per stream and thread, an axis and a legend" {
	run -0 "$ST" timeline --color never --width 100 "$B"; echo "$output"
	grep -q '^ *default |' <<<"$output"
	grep -q '^ *stream 13 |' <<<"$output"
	grep -q '^ *stream 14 |' <<<"$output"
	grep -q '^ *thread 1 |' <<<"$output"
	grep -q 'legend:' <<<"$output"
	grep -q '^ *ms ' <<<"$output"
	# each kind has its own glyph, with no colour needed
	local lane13 lane14 def
	def=$(grep '^ *default |' <<<"$output")
	lane13=$(grep '^ *stream 13 |' <<<"$output")
	lane14=$(grep '^ *stream 14 |' <<<"$output")
	[[ "$def" == *'>'* && "$def" == *'~'* ]]
	[[ "$lane13" == *'#'* && "$lane13" == *'<'* ]]
	[[ "$lane14" == *'>'* ]]
	[[ "$output" != *$'\033'* ]]
}

@test "the timeline fits the width it is given, and COLUMNS otherwise" {
	for w in 40 60 100 157; do
		run -0 "$ST" timeline --color never --width $w "$FX/known-h200.trace"
		echo "$output"
		longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m }' <<<"$output")
		echo "width $w: longest line $longest"
		[ "$longest" -le "$w" ]
	done
	COLUMNS=72 run -0 "$ST" timeline --color never "$B"
	longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m }' <<<"$output")
	echo "$output"; [ "$longest" -le 72 ] && [ "$longest" -ge 60 ]
}

@test "colour is on only when asked for or on a terminal, and NO_COLOR wins auto" {
	run -0 "$ST" timeline --color always "$B"; echo "$output"
	[[ "$output" == *$'\033['* ]]
	run -0 "$ST" timeline "$B"; echo "$output"   # not a tty under bats
	[[ "$output" != *$'\033'* ]]
	NO_COLOR=1 run -0 "$ST" timeline --color auto "$B"
	[[ "$output" != *$'\033'* ]]
}

@test "the JSON export is valid Chrome trace-event JSON with named tracks" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	J="$BATS_TEST_TMPDIR/known-h200.json"
	run -0 "$ST" json "$FX/known-h200.trace" -o "$J"
	run -0 python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
print(sorted(names))
assert "default stream 7" in names and "created stream 13" in names and "created stream 14" in names
assert any(n.endswith(": NVTX") for n in names) and any(n.endswith(": CUDA API") for n in names)
x = [e for e in ev if e["ph"] == "X"]
assert any(e["name"] == "host_work" for e in x)
assert sum(1 for e in x if e["cat"] == "kernel") == 2
assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in x)
' "$J"
	echo "$output"
}

# json_ok FILE...: each is Chrome trace-event JSON: known phases and fields,
# every track named, the streams' tracks in the timeline's order (default
# first, then by id), slices on every track nested (none overlaps another
# without lying inside it), NVTX only on host NVTX tracks; and a window's
# JSON has nothing outside its window, whose edges a "window" slice marks.
json_ok() {
	python3 - "$@" <<'PY'
import json, re, sys
for path in sys.argv[1:]:
    d = json.load(open(path))
    assert isinstance(d, dict) and d["displayTimeUnit"] == "ns", path
    ev, other = d["traceEvents"], d["otherData"]
    names, sort, used, tracks = {}, {}, set(), {}
    ns = lambda us: round(us * 1000)
    for e in ev:
        # pid 1 device 0's GPU (or the one device), 2 the host, 10 + d device d
        assert e["ph"] in ("M", "X", "i") and (e["pid"] in (1, 2) or e["pid"] > 10), e
        assert isinstance(e["tid"], int) and isinstance(e["name"], str), e
        k = (e["pid"], e["tid"])
        if e["ph"] == "M":
            assert e["name"] in ("process_name", "process_sort_index",
                                 "thread_name", "thread_sort_index"), e
            if e["name"] == "thread_name":
                assert k not in names, ("two names", e)
                names[k] = e["args"]["name"]
            if e["name"] == "thread_sort_index":
                sort[k] = e["args"]["sort_index"]
            continue
        assert isinstance(e["cat"], str) and e["ts"] >= 0, e
        assert e["dur"] >= 0 if e["ph"] == "X" else e["s"] == "t", e
        used.add(k)
        if e["ph"] == "X":
            tracks.setdefault(k, []).append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]))
        if e["cat"] == "nvtx":
            assert e["pid"] == 2 and names[k].endswith(": NVTX"), e
    assert not used - set(names), (path, "tracks without a name", used - set(names))
    for pid in {k[0] for k in names if k[0] != 2}:
        gpu = [n for _, n in sorted((sort[k], names[k]) for k in names if k[0] == pid)]
        # (a job's tracks: "p1 default stream 7", by process first)
        job = [re.match(r"p([0-9]+) (.*)", n) for n in gpu]
        key = [(int(m[1]), not m[2].startswith("default"), int(n.split()[-1])) if m else
               (0, not n.startswith("default"), int(n.split()[-1])) for n, m in zip(gpu, job)]
        assert key == sorted(key), (path, gpu)
    for k, v in tracks.items():
        v.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for a, b, n in v:
            while stack and stack[-1][1] <= a:
                stack.pop()
            assert not stack or b <= stack[-1][1], (path, names[k], stack[-1], (a, b, n))
            stack.append((a, b, n))
    if "window_ms" in other:
        lo, hi = ns(other["window_ms"][0][0] * 1000), ns(other["window_ms"][-1][1] * 1000)
        for e in ev:
            if e["ph"] != "M":
                a = ns(e["ts"])
                assert lo <= a and a + ns(e.get("dur", 0)) <= hi, (path, "outside", e)
        w = sorted(t for k, v in tracks.items() if names[k] == "window" for t in v)
        assert w[0][0] == lo and w[-1][1] == hi, (path, w, lo, hi)
    print("ok", path, len(ev), "events", len(names), "tracks")
PY
}

@test "every fixture's and replay's JSON, whole and windowed, is well formed and nests" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	local f n=0 files=()
	for f in $(traces); do
		n=$((n + 1))
		"$ST" json "$f" -o "$BATS_TEST_TMPDIR/$n.json" 2>/dev/null
		files+=("$BATS_TEST_TMPDIR/$n.json")
		# a window: its first NVTX range, else its first millisecond
		local r w
		r=$("$ST" query "$f" list nvtx 2>/dev/null | awk -F'\t' 'NR == 1 { print $6 }')
		w="--from 0 --to 1"
		[ -z "$r" ] || w="--window nvtx:$r#1"
		"$ST" json "$f" $w -o "$BATS_TEST_TMPDIR/$n-w.json" 2>/dev/null
		files+=("$BATS_TEST_TMPDIR/$n-w.json")
	done
	run -0 json_ok "${files[@]}"
	echo "$output"
	[ "$(grep -c '^ok ' <<<"$output")" -eq "${#files[@]}" ]
}

@test "the JSON of a window holds only the window, so Perfetto opens at it" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	# windows.trace, step#2 = [4, 6] ms: long_kernel cut to [4, 5.1], the
	# event at 5.1, the range itself and other's piece [4, 5]
	run -0 "$ST" json "$W" --window 'nvtx:step#2' -o "$BATS_TEST_TMPDIR/w.json"
	run -0 python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
o, ev = d["otherData"], d["traceEvents"]
print(o)
assert o["window"] == "nvtx:step#2" and o["window_ms"] == [[4.0, 6.0]] and o["records"] == 4
k = [e for e in ev if e.get("cat") == "kernel"]
assert [(e["ts"], e["dur"]) for e in k] == [(4000.0, 1100.0)], k
w = [e for e in ev if e.get("cat") == "window"]
assert [(e["ts"], e["dur"]) for e in w] == [(4000.0, 2000.0)], w
' "$BATS_TEST_TMPDIR/w.json"
	echo "$output"
}

@test "the SVG export is one well-formed svg element" {
	run -0 "$ST" svg "$FX/known-h200.trace" -o "$BATS_TEST_TMPDIR/k.svg"
	run -0 head -c 4 "$BATS_TEST_TMPDIR/k.svg"; expect "<svg"
	run -0 tail -n 1 "$BATS_TEST_TMPDIR/k.svg"; expect "</svg>"
	if command -v python3 >/dev/null; then
		run -0 python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' \
			"$BATS_TEST_TMPDIR/k.svg"
	fi
	run -0 "$ST" svg "$B"; echo "$output" | head -3
	grep -q 'stream 13' <<<"$output" && grep -q 'thread 1' <<<"$output"
}

@test "the summary gives counts, busy time, bandwidth, streams and overlap" {
	run -0 "$ST" summary "$B"; echo "$output"
	grep -Eq '^h2d +3 +4\.500000 +4\.500000$' <<<"$output"
	grep -Eq '^H2D PINNED +2 +4000000 +2\.500000 +1\.600$' <<<"$output"
	# stream 13 busy [3,7] + [7.5,8.5] = 5, others alongside [4,6.5] + [8,8.5]: 3/5
	grep -Eq '^default +1 +0 +1 +2\.500000 0\.0000$' <<<"$output"
	grep -Eq '^stream 13 +1 +1 +0 +5\.000000 0\.6000$' <<<"$output"
	# copy union [1,3]+[4,6.5]+[7.5,9] = 6 vs kernel [3,7]: 2.5; 2.5/6, 2.5/4
	grep -Eq '^overlap +copy/kernel +2\.500000 ms: 0\.4167 of copy time, 0\.6250 of kernel time$' <<<"$output"
	grep -Eq '^ +H2D/D2H +0\.000000 ms' <<<"$output"
}

@test "the summary of a window gives its overlap figures, wrapped at the width" {
	cd "$FX"
	# basic.trace in [3, 6.5]: kernel [3,7] cut to [3,6.5] (3.5) on 13; H2D
	# [4,5] + [5,6.5] (2.5) and the empty kernel on 14. H2D inside the
	# kernel: 2.5 = 1 of H2D time, 2.5/3.5 of kernel time. Stream 13 has 14
	# alongside for 2.5 of 3.5; 14 all of it; (3.5 + 2.5) / 3.5 = 1.71 busy
	# on average, 2 at most.
	run -0 "$ST" summary --from 3 --to 6.5 --width 60 basic.trace; echo "$output"
	fits 60 100
	grep -q '^window     3 to 6.5 ms: 3.000000 to 6.500000 ms' <<<"$output"
	grep -Eq '^kernel +2 +3\.500000 +3\.500000$' <<<"$output"
	grep -Eq '^stream 13 +0 +1 +0 +3\.500000 0\.7143$' <<<"$output"
	grep -Eq '^stream 14 +2 +1 +0 +2\.500000 1\.0000$' <<<"$output"
	# wrapped under their label, the words all there
	grep -Eq '^overlap +copy/kernel +2\.500000 ms: 1\.0000 of copy time,$' <<<"$output"
	grep -Eq '^ {11}0\.7143 of kernel time$' <<<"$output"
	local flat
	flat=$(tr -s ' \n' '  ' <<<"$output")
	[[ "$flat" == *"H2D/kernel 2.500000 ms: 1.0000 of H2D time, 0.7143 of kernel time"* ]]
	[[ "$flat" == *"streams at most 2 busy at once; 1.71 on average while any is busy"* ]]
}

# ---------------------------------------------------------------- windows

@test "a window keeps only the records inside it, cut at its edges" {
	# step#2 = [4, 6]: long_kernel [2.1, 5.1] cut to [4, 5.1]; the event at
	# 5.1; no runtime call starts or runs in it
	run -0 "$ST" query "$W" list kernel --window 'nvtx:step#2'; echo "$output"
	expect "$(printf '4.000000\t5.100000\t1.100000\tkernel\t13\tlong_kernel()\t-\t-\t0\t100')"
	run -0 "$ST" query "$W" count event --window 'nvtx:step#2'; echo "$output"; expect 1
	run -0 "$ST" query "$W" count api --window 'nvtx:step#2'; echo "$output"; expect 0
	# other = [2, 5], on thread 200: the H2D [1.1, 2.1] cut to [2, 2.1],
	# long_kernel to [2.1, 5]; ranges: other, step#1's [2, 3], step#2's [4, 5]
	run -0 "$ST" query "$W" total kernel --window nvtx:other; echo "$output"; expect 2.900000
	run -0 "$ST" query "$W" total h2d --window nvtx:other; echo "$output"; expect 0.100000
	run -0 "$ST" query "$W" count nvtx --window nvtx:other; echo "$output"; expect 3
	# a cut copy keeps its share of the bytes, 1000000 * 0.1 / 1, so its
	# bandwidth stays the whole copy's: 100000 B / 100000 ns
	run -0 "$ST" query "$W" bytes h2d --window nvtx:other; echo "$output"; expect 100000
	run -0 "$ST" query "$W" bandwidth h2d --window nvtx:other; echo "$output"; expect 1.000
	# the CUDA events around a record, from what is in the window: none
	# before [4, 5.1] on stream 13, the one at 5.1 after it
	run -0 "$ST" query "$W" events kernel --window 'nvtx:step#2'; echo "$output"
	expect "$(printf '4.000000\t5.100000\t1.100000\tkernel\t13\tlong_kernel()\t-\t-\t0\t100\t-\t5.100000\t-\t-')"
}

@test "a name alone is every range so named, and a record across two is cut in two" {
	# step = [1,3] [4,6] [8,9]: long_kernel [2.1, 5.1] is [2.1, 3] and [4, 5.1]
	run -0 "$ST" query "$W" list kernel --window nvtx:step; echo "$output"
	expect "$(printf '2.100000\t3.000000\t0.900000\tkernel\t13\tlong_kernel()\t-\t-\t0\t100\n4.000000\t5.100000\t1.100000\tkernel\t13\tlong_kernel()\t-\t-\t0\t100')"
	run -0 "$ST" query "$W" total kernel --window nvtx:step; echo "$output"; expect 2.000000
	# calls [1, 1.1] [1.1, 1.2] [8.1, 8.2] [8.3, 8.35] and the wait [8.4,
	# 11.6] cut to [8.4, 9]; cudaMalloc [0, 1] only touches the first step
	run -0 "$ST" query "$W" count api --window nvtx:step; echo "$output"; expect 5
	# NAME* is every range whose name starts so: the same three steps
	run -0 "$ST" query "$W" count kernel --window 'nvtx:st*'; echo "$output"; expect 2
	# windows that overlap merge: step#1 [1, 3] and other [2, 5] are [1, 5]
	run -0 "$ST" query "$W" list kernel --window 'nvtx:step#1' --window nvtx:other
	echo "$output"
	expect "$(printf '2.100000\t5.000000\t2.900000\tkernel\t13\tlong_kernel()\t-\t-\t0\t100')"
}

@test "#K picks one range, #last the last, and +gpu waits for the work it queued" {
	# step#1 [1, 3]: the H2D and long_kernel's first piece
	run -0 "$ST" query "$W" count gpu --window 'nvtx:step#1'; echo "$output"; expect 2
	run -0 "$ST" query "$W" count gpu --window 'nvtx:step#last'; echo "$output"; expect 0
	# the calls at 8.1 (correlation 5) and 8.3 (6) in step#3 queued
	# late_kernel [9.5, 11] and the D2H [11, 11.5]: the window is [8, 11.5]
	run -0 "$ST" query "$W" span gpu --window 'nvtx:step#last+gpu'; echo "$output"; expect 2.000000
	run -0 "$ST" query "$W" list d2h --window 'nvtx:step#3+gpu'; echo "$output"
	expect "$(printf '11.000000\t11.500000\t0.500000\tcopy\t14\tD2H\t2000000\tPINNED\t0\t100')"
	# the wait [8.4, 11.6] is cut where the work ends
	run -0 "$ST" query "$W" total api:cudaStreamSynchronize --window 'nvtx:step#3+gpu'
	echo "$output"; expect 3.100000
}

@test "--from and --to cut at times in ms from the first record" {
	# basic.trace [5, 8]: kernel [3,7] -> [5,7]; H2D [5,6.5]; the empty
	# kernel at 6; D2H [7.5,8.5] -> [7.5,8]. H2D [4,5] and D2H [8,9] only
	# touch it.
	run -0 "$ST" query "$B" count gpu --from 5 --to 8; echo "$output"; expect 4
	run -0 "$ST" query "$B" overlap h2d kernel --from 5 --to 8; echo "$output"
	expect "1.500000 1.0000 0.7500"
	run -0 "$ST" query "$B" bytes d2h --from 5 --to 8; echo "$output"; expect 2000000
	# alone, --from runs to the end and --to from the start (windows.trace):
	# late_kernel [9.5, 11] -> [10, 11] and the D2H; the H2D [1.1, 2.1] -> [1.1, 2]
	run -0 "$ST" query "$W" count gpu --from 10; echo "$output"; expect 2
	run -0 "$ST" query "$W" total kernel --from 10; echo "$output"; expect 1.000000
	run -0 "$ST" query "$W" total h2d --to 2; echo "$output"; expect 0.900000
	# the axis reads the same times: ticks from 5 ms on, nothing before
	run -0 "$ST" timeline --color never --width 80 --from 5 --to 8 "$B"; echo "$output"
	grep -Eq '^ +ms +5 ' <<<"$output"
}

@test "--whole keeps the records that start in a window, each whole, edges included; alone it is refused" {
	# step#1 [1, 3]: the H2D [1.1, 2.1] and long_kernel [2.1, 5.1] start in
	# it, and are kept whole
	run -0 "$ST" query "$W" list kernel --window 'nvtx:step#1' --whole; echo "$output"
	expect "$(printf '2.100000\t5.100000\t3.000000\tkernel\t13\tlong_kernel()\t-\t-\t0\t100')"
	run -0 "$ST" query "$W" count gpu --window 'nvtx:step#1' --whole; echo "$output"; expect 2
	# step#2 [4, 6]: long_kernel began before it; the event at 5.1 is there
	run -0 "$ST" query "$W" count kernel --window 'nvtx:step#2' --whole; echo "$output"; expect 0
	run -0 "$ST" query "$W" count event --window 'nvtx:step#2' --whole; echo "$output"; expect 1
	# the calls step#3 [8, 9] made, the wait [8.4, 11.6] whole
	run -0 "$ST" query "$W" total api --window 'nvtx:step#3' --whole; echo "$output"; expect 3.350000
	# --from, --to: a record that starts on the edge is in (long_kernel at 2.1)
	run -0 "$ST" query "$W" count gpu --from 2.1 --whole; echo "$output"; expect 3
	run -0 "$ST" query "$W" count gpu --to 2.1 --whole; echo "$output"; expect 2
	run -0 "$ST" query "$W" list gpu --from 10 --whole; echo "$output"
	expect "$(printf '11.000000\t11.500000\t0.500000\tcopy\t14\tD2H\t2000000\tPINNED\t0\t100')"
	run -2 --separate-stderr "$ST" query "$W" count gpu --whole; echo "$stderr"
	[[ "$stderr" == *'--whole: needs a window: --window or --from/--to'* ]]
}

@test "a window names what is wrong: an unknown range, #K out of range, a bad number" {
	local cmd
	for cmd in timeline summary svg json; do
		run -2 --separate-stderr "$ST" $cmd "$W" --window nvtx:stepp; echo "$stderr"
		[[ "$stderr" == *'nvtx:stepp: no NVTX range named "stepp" in '*'(its ranges: "step", "other", "queue")'* ]]
		[[ "$stderr" == *$'\n''usage: --window nvtx:NAME'* ]]
		[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 2 ] && [ -z "$output" ]
	done
	run -2 --separate-stderr "$ST" query "$W" count gpu --window 'nvtx:step#4'; echo "$stderr"
	[[ "$stderr" == *'nvtx:step#4: there are only 3 ranges named "step"'* ]]
	run -2 --separate-stderr "$ST" timeline "$W" --window 'nvtx:step#0'; echo "$stderr"
	[[ "$stderr" == *'nvtx:step#0: #K counts the ranges from #1; or #last'* ]]
	run -2 --separate-stderr "$ST" timeline "$W" --window 'nvtx:step#x'; echo "$stderr"
	[[ "$stderr" == *'nvtx:step#x: #K counts'* ]]
	run -2 --separate-stderr "$ST" timeline "$W" --window 'nvtx:st*#9'; echo "$stderr"
	[[ "$stderr" == *'there are only 3 ranges starting with "st"'* ]]
	run -2 --separate-stderr "$ST" timeline "$W" --window kernel:long; echo "$stderr"
	[[ "$stderr" == *'kernel:long: a window is an NVTX range'* ]]
	run -2 --separate-stderr "$ST" timeline "$B" --window nvtx:nosuch; echo "$stderr"
	[[ "$stderr" == *'(its ranges: "outer", "inner", "mark")'* ]]
	run -2 --separate-stderr "$ST" timeline "$FX/streams16.trace" --window nvtx:x; echo "$stderr"
	[[ "$stderr" == *'(it has no NVTX ranges)'* ]]
	run -2 --separate-stderr "$ST" summary "$B" --from 12x; echo "$stderr"
	[[ "$stderr" == *'--from: "12x" is not a time in ms'* ]]
	run -2 --separate-stderr "$ST" summary "$B" --to -1; echo "$stderr"
	[[ "$stderr" == *'--to: "-1" is not a time in ms'* ]]
	run -2 --separate-stderr "$ST" summary "$B" --from 5 --to 3; echo "$stderr"
	[[ "$stderr" == *'--to: "3" is not after --from'* ]]
	run -2 --separate-stderr "$ST" summary "$B" --from 9.5; echo "$stderr"
	[[ "$stderr" == *'--from: "9.5" is at or after the trace'* ]]
	run -2 --separate-stderr "$ST" summary "$B" --window nvtx:outer --from 3; echo "$stderr"
	[[ "$stderr" == *'not both'* ]]
	run -2 --separate-stderr "$ST" query "$B" count gpu --window; echo "$stderr"
	[[ "$stderr" == *'--window: needs a value'* ]]
}

@test "--window works on every NVTX range of every fixture and replay, in every command" {
	# plain calls, not `run`: a hundred of them must stay quick
	local f r cmd n=0 first
	for f in $(traces); do
		first=1
		while IFS= read -r r; do
			"$ST" timeline --width 100 "$f" --window "nvtx:$r#last" >/dev/null ||
				{ echo "timeline $f --window nvtx:$r#last failed"; return 1; }
			"$ST" query "$f" count gpu --window "nvtx:$r" >/dev/null ||
				{ echo "query $f --window nvtx:$r failed"; return 1; }
			n=$((n + 1))
			[ "$first" ] || continue
			first=
			for cmd in summary svg json; do
				"$ST" $cmd "$f" --window "nvtx:$r#1" >/dev/null ||
					{ echo "$cmd $f --window nvtx:$r#1 failed"; return 1; }
			done
		done < <("$ST" query "$f" list nvtx 2>/dev/null | cut -f6 | sort -u)
		"$ST" timeline --width 100 "$f" --from 0 --to 1 >/dev/null 2>&1 ||
			{ echo "timeline $f --from 0 --to 1 failed"; return 1; }
	done
	echo "$n ranges drawn as windows"
	[ "$n" -ge 20 ]
}

@test "where kinds share a column the busier one shows, and a kernel is never hidden" {
	# columns.trace at 30 columns is one ms a column: see its comment
	run -0 "$ST" timeline --color never --width 30 "$FX/columns.trace"; echo "$output"
	grep -qx 'stream 13 |>< #             >|' <<<"$output"
	# lab 05's whole run: each of the 16 streams' kernels shows, though a
	# column of the pipelined runs also holds both copies of a chunk
	run -0 "$ST" timeline --color never --width 100 "$RP/05-overlap/solution/r.trace"
	echo "$output"
	[ "$(grep -Ec '^ *stream [0-9]+ \|.*#' <<<"$output")" -eq 16 ]
}

@test "streams that do not fit the height fold into shared rows" {
	# streams16.trace at 12 lines: header, axis (2), legend, scale leave 7
	# rows for 16 streams: 3 a row, the last alone
	F="$FX/streams16.trace"
	run -0 "$ST" timeline --color never --width 60 --height 12 "$F"; echo "$output"
	fits 60 12
	grep -q '^streams 101-103 |' <<<"$output"
	grep -q '^streams 113-115 |' <<<"$output"
	grep -q '^     stream 116 |' <<<"$output"
	grep -q '"streams A-B": drawn as one row' <<<"$output"
	# 30 streams that drew the very same row share it, with a count
	awk 'BEGIN { print "streamtrace 1"
		for (i = 1; i <= 30; i++) printf "kernel\t0\t1000000\t%d\t1,1,1\t32,1,1\t%d\tk\n", 100 + i, i
		print "end\t30\t0" }' >"$BATS_TEST_TMPDIR/same.trace"
	run -0 "$ST" timeline --color never --width 60 --height 12 "$BATS_TEST_TMPDIR/same.trace"
	echo "$output"
	grep -q '^stream 101 x30 |#*|$' <<<"$output"
	grep -q '"xN": N streams drew the same row' <<<"$output"
	# with room for all, no row is shared
	run -0 "$ST" timeline --color never --width 60 --height 40 "$F"; echo "$output"
	[ "$(grep -c '^ *stream 1[01][0-9] |' <<<"$output")" -eq 16 ]
}

@test "the SVG of two windows draws them side by side, one dashed gap between" {
	F="$RP/03-pinned-memory/solution/r.trace"
	run -0 "$ST" svg "$F" --window nvtx:async_pageable --window nvtx:async_pinned \
		-o "$BATS_TEST_TMPDIR/w.svg"
	if command -v python3 >/dev/null; then
		run -0 python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' \
			"$BATS_TEST_TMPDIR/w.svg"
	fi
	run -0 cat "$BATS_TEST_TMPDIR/w.svg"
	[ "$(grep -c 'stroke-dasharray' <<<"$output")" -eq 1 ]
	grep -q 'nvtx:async_pageable, nvtx:async_pinned' <<<"$output"
	grep -q '>cudaMemcpyAsync<' <<<"$output"
	grep -q '>calls<' <<<"$output"
}

# ---------------------------------------------------------------- the labs' lessons

@test "each lab's lesson, and its whole run, fit 120 columns and 40 lines" {
	local f lab args
	for f in "$RP"/*/solution/*.trace; do
		lab=${f#"$RP"/}
		lab=${lab%%/*}
		mapfile -t args < <(lesson "$lab")
		echo "$lab: ${args[*]:-the whole run}"
		COLUMNS=120 run -0 "$ST" timeline --color never "${args[@]}" "$f"; echo "$output"
		fits 120 40
		COLUMNS=120 run -0 "$ST" timeline --color never "$f"
		fits 120 40
	done
}

@test "lab 05's lesson: the last sequential run and the last run of each order side by side at one scale" {
	# read off r.trace: the last "depth_first" range holds 16 H2D, 16 kernels
	# and 16 D2H on 16 streams, none across its edges, and so does the last
	# "breadth_first"; the last "sequential" one H2D, kernel and D2H on the
	# default stream
	F="$RP/05-overlap/solution/r.trace"
	mapfile -t args < <(lesson 05-overlap)
	[ "${args[*]}" = "--window nvtx:sequential#last --window nvtx:depth_first#last --window nvtx:breadth_first#last" ]
	local o
	for o in depth_first breadth_first; do
		run -0 "$ST" query "$F" count kernel --window "nvtx:$o#last"; echo "$output"; expect 16
		run -0 "$ST" query "$F" count copy --window "nvtx:$o#last"; echo "$output"; expect 32
		run -0 "$ST" query "$F" streams kernel --window "nvtx:$o#last"; echo "$output"
		[ "${#lines[@]}" -eq 16 ]
	done
	run -0 "$ST" query "$F" streams gpu --window 'nvtx:sequential#last'; echo "$output"
	expect "7 default 0 -"
	COLUMNS=120 run -0 "$ST" timeline --color never "${args[@]}" "$F"; echo "$output"
	# every stream shows its copies and its kernel
	[ "$(grep -Ec '^ *stream [0-9]+ \|.*>.*#.*<' <<<"$output")" -eq 16 ]
	grep -Eq '^ *default \|>+#+<+[ :]+\|$' <<<"$output"
	# the speedup as width: the two ranges' widths as their lengths in the
	# trace (2.08 in the recorded run), within a column each
	local row seq pipe ts tp
	row=$(grep '^ *thread 1 |' <<<"$output")
	seq=$(grep -o '\[sequential-*' <<<"$row" | awk '{ print length($0) }')
	pipe=$(grep -oE '\[depth_first-*\]?' <<<"$row" | awk '{ print length($0) }')
	ts=$("$ST" query "$F" list nvtx:sequential | tail -n 1 | cut -f 3)
	tp=$("$ST" query "$F" list nvtx:depth_first | tail -n 1 | cut -f 3)
	echo "sequential $seq columns, depth-first $pipe; traced $ts ms and $tp ms"
	awk -v s="$seq" -v p="$pipe" -v a="$ts" -v b="$tp" 'BEGIN { exit !(a / b > 1.5 && (s - 1) / (p + 1) <= a / b && a / b <= (s + 1) / (p - 1)) }'
}

@test "lab 03's lesson: the pageable call blocks for its copy, the pinned one returns at once" {
	# read off r.trace (format 5, H100): cudaMemcpyAsync in async_pageable
	# lasted 27505967 ns, in async_pinned 3430 ns; each range holds its one
	# 256 MiB H2D
	F="$RP/03-pinned-memory/solution/r.trace"
	mapfile -t args < <(lesson 03-pinned-memory)
	run -0 "$ST" query "$F" durations api:cudaMemcpyAsync "${args[@]}"; echo "$output"
	expect "$(printf '27.505967\n0.003430')"
	run -0 "$ST" query "$F" list copy "${args[@]}"; echo "$output"
	[[ "${lines[0]}" == *$'\tH2D\t268435456\tPAGEABLE\t'* && "${lines[1]}" == *$'\tH2D\t268435456\tPINNED\t'* ]]
	COLUMNS=120 run -0 "$ST" timeline --color never "${args[@]}" "$F"; echo "$output"
	grep -Eq '^ *calls \|\[cudaMemcpyAsync\.+:\[cudaStrea' <<<"$output"
	grep -Eq '^ *stream 13 \|>+:>+\|$' <<<"$output"
}

@test "lab 04's lesson: the consumer on one stream runs after the producer on the other" {
	# read off r.trace (format 5, H100): "dependency" [..481388542,
	# ..481442069] queues producer_kernel on 13 [..481408415, ..488829088]
	# and consumer_kernel on 14 [..488831488, ..488835201]: only +gpu
	# reaches the consumer; both streams created non-blocking
	F="$RP/04-events/solution/r.trace"
	mapfile -t args < <(lesson 04-events)
	[ "${args[*]}" = "--window nvtx:dependency+gpu" ]
	run -0 "$ST" query "$F" count kernel --window nvtx:dependency; echo "$output"; expect 1
	run -0 "$ST" query "$F" streams kernel "${args[@]}"; echo "$output"
	expect "$(printf '13 created 0 non-blocking\n14 created 0 non-blocking')"
	run -0 "$ST" query "$F" order kernel:producer kernel:consumer "${args[@]}"; echo "$output"
	expect before
	run -0 "$ST" query "$F" span kernel "${args[@]}"; echo "$output"; expect 7.426786
	# and what the program guaranteed: the event's record and the wait
	run -0 "$ST" ask "$F" "order kernel:producer kernel:consumer"; echo "$output"
	[[ $output == "guaranteed	kernel:782 "*"(an event wait) wait:"*"kernel:787" ]]
}

@test "labs 01 and 02: the host's calls against the GPU's work" {
	F="$RP/01-sync-copy/solution/r.trace"
	[ -z "$(lesson 01-sync-copy)" ]
	COLUMNS=120 run -0 "$ST" timeline --color never "$F"; echo "$output"
	grep -Eq '^thread 1 calls \|\[cudaMemcpy\.' <<<"$output"
	F="$RP/02-async-copy/solution/r.trace"
	mapfile -t args < <(lesson 02-async-copy)
	COLUMNS=120 run -0 "$ST" timeline --color never "${args[@]}" "$F"; echo "$output"
	grep -Eq '^ *thread 1 \|.*\[cpu_work-+\[wait-+' <<<"$output"
	grep -Eq '^ *calls \|.*\[cudaStreamSynchronize' <<<"$output"
	grep -Eq '^ *stream 13 \|>+#+<+\|$' <<<"$output"
}

# ---------------------------------------------------------------- real traces

@test "the H200 capture of known.cu has the structure the program made" {
	# read off known-h200.trace: 8388608 B pageable H2D on stream 7, then
	# 4 + 4 pinned 4 MiB H2D on streams 14 and 13, each batch inside the
	# other stream's 20 ms kernel; pinned durations 78400 77920 78559 77984
	# + 78144 79328 79423 78016 = 627774 ns, all inside a kernel
	F="$FX/known-h200.trace"
	run -0 "$ST" query "$F" count h2d --stream default --mem PAGEABLE; echo "$output"; expect 1
	run -0 "$ST" query "$F" count h2d --mem PINNED; echo "$output"; expect 8
	run -0 "$ST" query "$F" streams h2d --mem PINNED; echo "$output"
	expect "$(printf '13 created 0 -\n14 created 0 -')"
	run -0 "$ST" query "$F" total h2d --mem PINNED; echo "$output"; expect 0.627774
	# h2d union = 1113116 (pageable) + 627774; kernels 20001279 + 20000990
	run -0 "$ST" query "$F" overlap h2d kernel; echo "$output"; expect "0.627774 0.3606 0.0157"
	# 33554432 B / 627774 ns = 53.450 GB/s
	run -0 "$ST" query "$F" bandwidth h2d --mem PINNED; echo "$output"; expect 53.450
	run -0 "$ST" query "$F" order h2d kernel; echo "$output"; expect before
	run -0 "$ST" query "$F" count nvtx:host_work; echo "$output"; expect 1
	run -0 "$ST" query "$F" total nvtx:host_work; echo "$output"; expect 0.011645
	run -0 "$ST" query "$F" count api:cudaMemcpyAsync; echo "$output"; expect 10
	run -0 "$ST" query "$F" dropped; echo "$output"; expect 0
	run -0 "$ST" query "$F" meta copy_engines; echo "$output"; expect 3
}

@test "the H200 capture of extras.cu shows syncs, nesting and the reset" {
	# sync lines: wait on 14, event (no stream), stream 14, context
	F="$FX/extras-h200.trace"
	run -0 "$ST" query "$F" count sync:wait;    echo "$output"; expect 1
	run -0 "$ST" query "$F" count sync:event;   echo "$output"; expect 1
	run -0 "$ST" query "$F" count sync:context; echo "$output"; expect 1
	run -0 "$ST" query "$F" count memset;       echo "$output"; expect 1
	run -0 "$ST" query "$F" count d2d;          echo "$output"; expect 1
	# two contexts, two default streams (7 before the reset, 16 after)
	run -0 "$ST" query "$F" streams gpu; echo "$output"
	expect "$(printf '7 default 0 -\n13 created 0 -\n14 created 0 -\n16 default 0 -')"
	# inner [915770696, 915780899] (10203 ns) lies inside outer
	# [902367144, 915788581] (13421437 ns): 10203 / 13421437 = 0.0008
	run -0 "$ST" query "$F" overlap nvtx:inner nvtx:outer; echo "$output"
	expect "0.010203 1.0000 0.0008"
	# the event in stream 13 completes at 915751679, after the kernel before
	# it there ended (915736223)
	run -0 "$ST" query "$F" count event; echo "$output"; expect 1
	run -0 "$ST" query "$F" order kernel event; echo "$output"; expect before
}

@test "the H200 capture of lab 01 shows H2D, kernels, D2H in order on the default stream" {
	F="$FX/lab01-h200.trace"
	run -0 "$ST" query "$F" streams gpu; echo "$output"; expect "7 default 0 -"
	run -0 "$ST" query "$F" order h2d kernel; echo "$output"; expect before
	run -0 "$ST" query "$F" order kernel d2h; echo "$output"; expect before
	# 3 kernels, one after the other: no two GPU records overlap
	run -0 "$ST" query "$F" count kernel; echo "$output"; expect 3
	# the program times each step with a pair of events: 3 pairs
	run -0 "$ST" query "$F" count event; echo "$output"; expect 6
	run -0 "$ST" query "$F" overlap copy kernel; echo "$output"; expect "0.000000 0.0000 0.0000"
}

@test "the capture of lab 09 on two H100s names each GPU, and each copy between them is one P2P record that says how it went" {
	# the solution's replay, recorded on two H100s joined by NVLink: part 2
	# copies 16 MiB from GPU 0 to GPU 1 before peer access is on; part 3
	# swaps 64 MiB each way at once, staged then direct, each one exchange
	# to warm up and 3 timed ones in NVTX ranges "staged" and "direct"
	# (staged records of about 2.3 ms, direct of 0.27-0.28 ms cold and
	# 0.174 ms warm); format 4, recorded 2026-11-26.
	# Replays recorded again: read these numbers off the new r.trace.
	F="$RP/09-multi-gpu/solution/r.trace"
	run -0 "$ST" query "$F" devices; echo "$output"
	expect "$(printf '0 3 132 NVIDIA H100 80GB HBM3\n1 3 132 NVIDIA H100 80GB HBM3')"
	run -0 "$ST" query "$F" count p2p:host; echo "$output"; expect 9
	run -0 "$ST" query "$F" count p2p:direct; echo "$output"; expect 8
	run -0 "$ST" query "$F" count p2p --window nvtx:staged; echo "$output"; expect 6
	run -0 "$ST" query "$F" total p2p:host --window nvtx:staged; echo "$output"; expect 13.510586
	run -0 "$ST" query "$F" total p2p:direct; echo "$output"; expect 1.594143
	run -0 "$ST" query "$F" order p2p:host p2p:direct; echo "$output"; expect before
	# a P2P record sits on the stream it was queued on, of either GPU
	run -0 "$ST" query "$F" streams p2p; echo "$output"
	expect "$(printf '31 created 1 blocking\n32 created 0 blocking\n33 created 1 blocking')"
	# part 1 splits the pipeline evenly: as many kernels on each GPU
	run -0 "$ST" query "$F" count kernel --device 0; echo "$output"; expect 28
	run -0 "$ST" query "$F" count kernel --device 1; echo "$output"; expect 28
}

# ---------------------------------------------------------------- run

@test "run passes the program's exit status through and says when no trace appeared" {
	[ -f "$KIT_ROOT/checker/trace/libstreamtrace.so" ] || skip "built without CUPTI"
	cd "$BATS_TEST_TMPDIR"
	run -7 --separate-stderr "$ST" run -o t.trace -- sh -c 'exit 7'
	echo "stderr: $stderr"
	[[ "$stderr" == *"no trace written"* ]]
	[ ! -e t.trace ]
	run -127 "$ST" run -- ./no-such-program; echo "$output"
	run -137 "$ST" run -- sh -c 'kill -9 $$'; echo "$output"
}

# ------------------------------------------------ what was guaranteed (ask)

# hb5.trace (format 5, its comments): copy 10 on non-blocking stream 14,
# event 4 recorded after it (11), stream 15 told to wait for it (12), kernel
# 13 on 15; kernel 14 on blocking 13; memset 15 on the legacy stream; kernel
# 16 on 13; an untimed record of event 5 on 13 (17), 14 waits (18), D2H 19 on
# 14; cudaStreamSynchronize(14) (20) inside the range "loop"; kernel 21 on 15;
# a graph launch on 13 (22, two nodes); kernel 23 on 13; a wait on 15 for a
# record of event 5 the trace lost (24: a sync id no record carries);
# kernel 25 on 15; cudaDeviceSynchronize (26).
@test "ask order: an event wait, the legacy stream, an untimed record and a host wait are chains" {
	F="$FX/hb5.trace"
	run -0 "$ST" ask "$F" "order copy:10 kernel:13" "order kernel:14 memset:15" \
		"order memset:15 kernel:16" "order kernel:16 copy:19" "order copy:19 kernel:21"
	echo "$output"
	expect "$(printf '%s\n' \
		"guaranteed	copy:10 (stream order) record:11 (an event wait) wait:12 (stream order) kernel:13" \
		"guaranteed	kernel:14 (the legacy default stream) memset:15" \
		"guaranteed	memset:15 (the legacy default stream) kernel:16" \
		"guaranteed	kernel:16 (stream order) record:17 (an event wait) wait:18 (stream order) copy:19" \
		"guaranteed	copy:19 (a host wait) cudaStreamSynchronize:20 (queued after the thread's earlier calls) kernel:21")"
}

@test "ask order: in order by luck is observed-only; a non-blocking stream is not ordered with the legacy one" {
	F="$FX/hb5.trace"
	# kernel 13 (3-4 ms) after kernel 14 (1.5-2.5): two streams, no wait;
	# memset 15 (4.2) after copy 10 (ends 3): 14 is non-blocking
	run -0 "$ST" ask "$F" "order kernel:14 kernel:13" "order copy:10 memset:15" "order copy:10 kernel:14"
	echo "$output"
	expect "$(printf '%s\n' \
		"observed-only	nothing orders kernel:13 after kernel:14; in this run it started 0.500000 ms after the other ended" \
		"observed-only	nothing orders memset:15 after copy:10; in this run it started 1.200000 ms after the other ended" \
		"not-ordered	nothing orders kernel:14 after copy:10")"
}

@test "ask order: a graph launch's nodes come after what came before, the next work after both; between them unknown" {
	F="$FX/hb5.trace"
	run -0 "$ST" ask "$F" "order kernel:22.1 kernel:22.2" "order kernel:22.2 kernel:23" "order kernel:16 kernel:22.2"
	echo "$output"
	expect "$(printf '%s\n' \
		"unknown	both are nodes of one graph launch (call 22): the graph's own edges are not in the trace" \
		"guaranteed	kernel:22.2 (a graph launch) launch:22 (stream order) kernel:23" \
		"guaranteed	kernel:16 (stream order) record:17 (a graph launch) kernel:22.2")"
}

@test "ask order: a graph node CUPTI puts on an internal stream is still the launch's: the next work in the launch stream comes after it" {
	# hb5's node2 on the driver's internal stream 30 (a branch of the
	# graph, as CUDA 13 runs lab 10's fork)
	sed -e 's/^\(kernel\t7100000\t7600000\t0\t\)13\t/\130\t/' \
		-e 's/^stream\t15\tcreated\t0\tnon-blocking$/&\nstream\t30\tinternal\t0\t-/' \
		"$FX/hb5.trace" >"$BATS_TEST_TMPDIR/g.trace"
	run -0 "$ST" ask "$BATS_TEST_TMPDIR/g.trace" "order kernel:22.1 kernel:22.2" "order kernel:22.2 kernel:23" "order kernel:16 kernel:22.2"
	echo "$output"
	expect "$(printf '%s\n' \
		"unknown	both are nodes of one graph launch (call 22): the graph's own edges are not in the trace" \
		"guaranteed	kernel:22.2 (a graph launch) launch:22 (stream order) kernel:23" \
		"guaranteed	kernel:16 (stream order) record:17 (a graph launch) kernel:22.2")"
}

@test "ask order: a wait for a record the trace lost makes a no unknown, never a yes" {
	F="$FX/hb5.trace"
	run -0 "$ST" ask "$F" "order kernel:23 kernel:25" "order kernel:21 kernel:25"
	echo "$output"
	expect "$(printf '%s\n' \
		"unknown	wait:24 waited for an event record the trace does not have" \
		"guaranteed	kernel:21 (stream order) kernel:25")"
	# a trace older than format 5 links no wait: lab 09's solution (format
	# 4), its consumer after the cross-GPU event's wait
	run -0 "$ST" ask "$RP/09-multi-gpu/solution/r.trace" "order kernel:produce_kernel kernel:consume_kernel"
	[[ "$output" == "unknown	wait:645 "*"older than format 5"* ]]
}

@test "ask order: a wait for an event never recorded before it waits for nothing, unless the trace dropped records" {
	# hb5's wait 24 made a wait for event 6, which no call recorded: CUDA
	# returns at once (CUPTI still gives the wait a sync id: lab 06's
	# first cudaEventSynchronize of each staging buffer's event, on an H100)
	sed 's/^link\t5\t999$/link\t6\t999/' "$FX/hb5.trace" >"$BATS_TEST_TMPDIR/n.trace"
	run -0 "$ST" ask "$BATS_TEST_TMPDIR/n.trace" "order kernel:23 kernel:25" "order kernel:21 kernel:25"
	echo "$output"
	expect "$(printf '%s\n' \
		"observed-only	nothing orders kernel:25 after kernel:23; in this run it started 0.100000 ms after the other ended" \
		"guaranteed	kernel:21 (stream order) kernel:25")"
	# a trace that dropped records may have lost that event's record
	sed 's/^end\t35\t0$/end\t35\t2/' "$BATS_TEST_TMPDIR/n.trace" >"$BATS_TEST_TMPDIR/d.trace"
	run -0 "$ST" ask "$BATS_TEST_TMPDIR/d.trace" "order kernel:23 kernel:25"
	echo "$output"
	[[ "$output" == "unknown	wait:24 waited for an event record the trace does not have"* ]]
}

@test "ask waits, unordered, and the batch from stdin in one parse" {
	F="$FX/hb5.trace"
	run -0 "$ST" ask "$F" - <<<"waits nvtx:loop
unordered copy:10

unordered kernel:22.1"
	echo "$output"
	expect "$(printf '%s\n' \
		"2	cudaStreamSynchronize:20 cudaDeviceSynchronize:26" \
		"3	kernel:14 memset:15 kernel:16" \
		"4	kernel:13 kernel:21 kernel:22.2 kernel:25")"
}

@test "ask: a bad question is answered error and exit status 2, the rest still answered; help lists the questions" {
	F="$FX/hb5.trace"
	run -2 "$ST" ask "$F" "order copy:10" "frob" "order copy:x#0 kernel:13" "order copy:10 kernel:13"
	echo "$output"
	[ "${lines[0]}" = "error	usage: order A B" ]
	[ "${lines[1]}" = "error	no such question: frob" ]
	[[ "${lines[2]}" == "error	not a reference: copy:x#0"* ]]
	[[ "${lines[3]}" == "guaranteed	"* ]]
	run -0 "$ST" ask "$F" "order copy:99 kernel:13"
	[ "$output" = "none	no such record: copy:99" ]
	run -2 "$ST" ask "$F"
	[[ "$output" == *"usage: streamtrace ask"* ]]
	run -0 "$ST" help
	for q in "order A B" "waits nvtx:NAME[#K]" "unordered A" "settled nvtx:RANGE" "idle nvtx:RANGE" "done nvtx:RANGE"; do
		[[ "$output" == *"  $q "* ]]
	done
}

@test "ask: a record by name, KIND:NAME[#K], is the Kth of that kind whose name holds NAME, in the order of the calls" {
	F="$FX/hb5.trace"
	run -0 "$ST" ask "$F" "order copy:H2D kernel:k#2" "order copy:D2H kernel:k#4" "order copy:D2H kernel:k#9"
	echo "$output"
	# the second k() queued (call 13, stream 15), not the second to start
	[ "${lines[0]}" = "not-ordered	nothing orders kernel:k#2 after copy:H2D" ]
	[[ "${lines[1]}" == "guaranteed	copy:19 "*" kernel:21" ]]
	[ "${lines[2]}" = "none	no such record: kernel:k#9" ]
	run -0 "$ST" ask "$F" "order kernel:node1 kernel:node2"
	[[ "$output" == "unknown	both are nodes of one graph launch"* ]]
}

# settled.trace (its comments): k1 waited for before the range "part"; in
# it k2 and a copy back waited for, then k3 on the legacy stream that
# nothing waits for; the range "next" after it.
@test "ask settled, idle and done: the work queued before a range done when it began, the work in it when it ended, by a host wait; else the last record that was not" {
	F="$FX/settled.trace"
	run -2 "$ST" ask "$F" "settled nvtx:part" "idle nvtx:part" "settled nvtx:next" "idle nvtx:*" \
		"settled nvtx:part#2" "settled nvtx:part#0" "settled part" "done nvtx:part" "done nvtx:next"
	echo "$output"
	expect "$(printf '%s\n' \
		"not-settled	part#1	after	0.800000	kernel:15	k3	7	default	-	0	0.410000	0.780000	1	none" \
		"idle	1" \
		"not-settled	next#1	before	0.900000	kernel:15	k3	7	default	-	0	0.410000	0.780000	1	none" \
		"not-idle	next#1	before	0.900000	kernel:15	k3	7	default	-	0	0.410000	0.780000	1	none" \
		"none	no such range: nvtx:part#2" \
		"error	not a range: nvtx:part#0 (#K counts from 1)" \
		"error	not a range: part (nvtx:NAME, nvtx:NAME#K or nvtx:NAME*)" \
		"not-done	part#1	after	0.800000	kernel:15	k3	7	default	-	0	0.410000	0.780000	1	none" \
		"done	1")"
	# a cudaDeviceSynchronize in "part" after k3's launch settles both
	sed 's/^end\t15\t0$/api\t600000\t890000\t1\t16\tcudaDeviceSynchronize\nsync\t600000\t890000\t0\t-\tcontext\t16\nend\t17\t0/' \
		"$F" >"$BATS_TEST_TMPDIR/s.trace"
	run -0 "$ST" ask "$BATS_TEST_TMPDIR/s.trace" "settled nvtx:*" "settled nvtx:part" "done nvtx:part"
	expect "$(printf '%s\n' "settled	2" "settled	1" "done	1")"
	# the waits after the record's call, by then, are named: one for
	# stream 13 after k3's launch waits for other work
	sed 's/^end\t15\t0$/api\t600000\t700000\t1\t16\tcudaStreamSynchronize\nsync\t600000\t700000\t0\t13\tstream\t16\nend\t17\t0/' \
		"$F" >"$BATS_TEST_TMPDIR/s.trace"
	run -0 "$ST" ask "$BATS_TEST_TMPDIR/s.trace" "settled nvtx:part"
	[ "$output" = "not-settled	part#1	after	0.800000	kernel:15	k3	7	default	-	0	0.410000	0.780000	1	cudaStreamSynchronize (stream 13)" ]
	# hb5's D2H copy before "loop": its cudaStreamSynchronize came inside it
	run -0 "$ST" ask "$FX/hb5.trace" "settled nvtx:loop"
	[ "$output" = "not-settled	loop#1	before	4.800000	copy:19	D2H copy	14	created	non-blocking	0	0.090000	5.900000	1	none" ]
	# a trace older than format 5 cannot say what a wait for an event
	# covered: lab 09's solution (format 4), part 2's producer
	run -0 "$ST" ask "$RP/09-multi-gpu/solution/r.trace" "settled nvtx:sequential" "settled nvtx:part2_event"
	[ "${lines[0]}" = "settled	3" ]
	[[ "${lines[1]}" == "unknown	wait:645 "*"older than format 5"* ]]
}

@test "ask elapsed: each cudaEventElapsedTime, its events ordered with the work its thread queued between them, the stop waited for; else why not" {
	run -0 "$ST" ask "$RP/04-events/solution/r.trace" elapsed
	[ "$output" = "2	ok	ok	ok	ok" ]
	# lab 04's mutants: the time read with no wait after the stop record;
	# the events on the legacy stream, the kernel on a non-blocking one
	run -0 "$ST" ask "$RP/04-events/mut-elapsed-without-sync/r.trace" elapsed
	[ "$output" = "2	ok	ok	ok	no wait between the stop event's record and cudaEventElapsedTime" ]
	run -0 "$ST" ask "$RP/04-events/mut-timing-events-on-default-stream/r.trace" elapsed
	[ "$output" = "2	ok	ok	busy_kernel ran on stream 13 (created, non-blocking), the start event on stream 0 (the legacy default stream): the GPU does not order the two	ok" ]
	# a trace older than format 5 has no node of an event record
	run -0 "$ST" ask "$RP/09-multi-gpu/solution/r.trace" elapsed
	[ "$output" = "unknown	a trace older than format 5 has no node of an event record" ]
	run -2 "$ST" ask "$RP/04-events/solution/r.trace" "elapsed 1"
	[ "$output" = "error	usage: elapsed" ]
}

# elapsed6 X [KEEP] [WAIT]: a format-6 trace of three timed events on stream 13
# (e0, kernel step_a on 13, e1, kernel step_b on the non-blocking stream 14,
# e2, cudaEventSynchronize of e2), then cudaEventElapsedTime of (e0, e1) and of
# (e1, e2), and two whose start the trace lacks: never recorded (-), and a
# record it does not show (call 99). KEEP=0: without the elapsed lines.
# WAIT: how the host waits for e2: sync (cudaEventSynchronize), query (one
# cudaEventQuery that found it done), poll (one that found it not ready,
# then one that found it done).
elapsed6() {
	printf 'streamtrace 6\nmeta\tdefault_stream\t7\n'
	printf 'stream\t13\tcreated\t0\tblocking\nstream\t14\tcreated\t0\tnon-blocking\n'
	printf 'api\t100\t110\t1\t1\tcudaEventRecord\nevent\t120\t0\t13\t1\t1\nlink\t1\t-\n'
	printf 'api\t130\t140\t1\t2\tcudaLaunchKernel\n'
	printf 'kernel\t150\t250\t0\t13\t1,1,1\t32,1,1\t2\tstep_a\n'
	printf 'api\t260\t270\t1\t3\tcudaEventRecord\nevent\t280\t0\t13\t2\t3\nlink\t2\t-\n'
	printf 'api\t290\t300\t1\t4\tcudaLaunchKernel\n'
	printf 'kernel\t310\t400\t0\t14\t1,1,1\t32,1,1\t4\tstep_b\n'
	printf 'api\t410\t420\t1\t5\tcudaEventRecord\nevent\t430\t0\t13\t3\t5\nlink\t3\t-\n'
	case ${3:-sync} in
		sync) printf 'api\t440\t600\t1\t6\tcudaEventSynchronize\nsync\t440\t590\t0\t-\tevent\t6\nlink\t3\t-\n' ;;
		query) printf 'api\t440\t600\t1\t6\tcudaEventQuery\nsync\t440\t590\t0\t-\tevent\t6\nlink\t3\t-\n' ;;
		poll) printf 'sync\t421\t424\t0\t-\tevent\t6\nlink\t3\t-\napi\t421\t425\t1\t6\tcudaEventQuery\nerror\t6\t600\n'
			printf 'api\t440\t600\t1\t7\tcudaEventQuery\nsync\t440\t590\t0\t-\tevent\t7\nlink\t3\t-\n' ;;
	esac
	local c pair
	for c in 17:1:3 18:3:5 19:-:5 20:99:5; do
		pair=${c#*:}
		printf 'api\t%d0\t%d5\t1\t%d\tcudaEventElapsedTime\n' "${c%%:*}" "${c%%:*}" "${c%%:*}"
		[ "${2:-1}" = 0 ] || printf 'elapsed\t%d\t%s\t%s\n' "${c%%:*}" "${pair%:*}" "${pair#*:}"
	done
	printf 'end\t16\t0\n'
}

@test "format 6: ask elapsed reads the two records each cudaEventElapsedTime names, not its thread's last two" {
	F="$BATS_TEST_TMPDIR/e6.trace"
	elapsed6 >"$F"
	local why="step_b ran on stream 14 (created, non-blocking), the start event on stream 13 (created, blocking): the GPU does not order the two"
	run -0 "$ST" ask "$F" elapsed; echo "$output"
	[ "$output" = "4	ok	ok	$why	ok	its start event was not recorded before it	-	its start event has a record the trace does not show	-" ]
	# a call with no elapsed line (a tracer that lost it, a format-5 trace)
	# is read as its thread's last two records: e1 and e2 for every call
	elapsed6 x 0 >"$F"
	run -0 "$ST" ask "$F" elapsed; echo "$output"
	[ "$output" = "4	$why	ok	$why	ok	$why	ok	$why	ok" ]
	# an elapsed line belongs right after its cudaEventElapsedTime
	printf 'streamtrace 6\napi\t1\t2\t1\t5\tcudaFree\nelapsed\t5\t1\t2\nend\t1\t0\n' >"$F"
	run -3 "$ST" ask "$F" elapsed; echo "$output"
	[[ "$output" == *":3: not a streamtrace record"*"an elapsed line belongs right after its cudaEventElapsedTime api line"* ]]
	printf 'streamtrace 6\napi\t1\t2\t1\t5\tcudaEventElapsedTime\nelapsed\t5\t0\t2\nend\t1\t0\n' >"$F"
	run -3 "$ST" ask "$F" elapsed; echo "$output"
	[[ "$output" == *"bad elapsed line"* ]]
	printf 'streamtrace 5\napi\t1\t2\t1\t5\tcudaEventElapsedTime\nelapsed\t5\t1\t2\nend\t1\t0\n' >"$F"
	run -3 "$ST" ask "$F" elapsed; echo "$output"
	[[ "$output" == *"not a streamtrace record"* ]]
}

@test "ask elapsed: a stop event one query found done was not waited for (the GPU won a race); a poll, or a wait, was" {
	F="$BATS_TEST_TMPDIR/e6.trace"
	local why="step_b ran on stream 14 (created, non-blocking), the start event on stream 13 (created, blocking): the GPU does not order the two"
	local rest="its start event was not recorded before it	-	its start event has a record the trace does not show	-"
	# one cudaEventQuery of e2 that returned cudaSuccess (as PyTorch's
	# Event.elapsed_time makes before it reads): the GPU happened to be done
	elapsed6 x 1 query >"$F"
	run -0 "$ST" ask "$F" elapsed; echo "$output"
	local q="no wait between the stop event's record and cudaEventElapsedTime: only a query (cudaEventQuery) found it done, as the GPU happened to be; where the GPU is slower the event is not ready and the time cannot be read"
	[ "$output" = "4	ok	$q	$why	$q	$rest" ]
	# a poll: e2 queried twice, the first time not ready
	elapsed6 x 1 poll >"$F"
	run -0 "$ST" ask "$F" elapsed; echo "$output"
	[ "$output" = "4	ok	ok	$why	ok	$rest" ]
	elapsed6 x 1 sync >"$F"
	run -0 "$ST" ask "$F" elapsed
	[ "$output" = "4	ok	ok	$why	ok	$rest" ]
}

@test "ask timings: each cudaEventElapsedTime's two records, their stamps, the work between them by kind and the range it was queued in" {
	F="$BATS_TEST_TMPDIR/e6.trace"
	elapsed6 >"$F"
	run -0 "$ST" ask "$F" timings; echo "$output"
	[ "$output" = "4	0.000020 0.000180 kernel:1 -	0.000180 0.000330 kernel:1 -	- - - -	- - - -" ]
	# lab 05's solution: a sequential run's H2D copy, kernel, D2H copy and
	# all three, then a pipelined run in each order, five times
	run -0 "$ST" ask "$RP/05-overlap/solution/r.trace" timings
	IFS=$'\t' read -r -a f <<<"$output"
	[ "${f[0]}" = 30 ]
	local i want=("" "H2D:1 sequential" "kernel:1 sequential" "D2H:1 sequential" "H2D:1,kernel:1,D2H:1 sequential"
		"H2D:16,kernel:16,D2H:16 depth_first" "H2D:16,kernel:16,D2H:16 breadth_first")
	for i in 1 2 3 4 5 6; do [ "$(cut -d ' ' -f 3,4 <<<"${f[i]}")" = "${want[i]}" ]; done
	# the stop of the first timing is the start of the second: one record
	[ "$(cut -d ' ' -f 2 <<<"${f[1]}")" = "$(cut -d ' ' -f 1 <<<"${f[2]}")" ]
	# a trace older than format 5: no records known
	run -0 "$ST" ask "$RP/09-multi-gpu/solution/r.trace" timings
	[[ "$output" != *[0-9].[0-9]* ]]
}

@test "ask elapsed: a stream whose kind the trace does not know (it ran no copy or kernel) is not said to be unordered: the trace cannot tell" {
	F="$BATS_TEST_TMPDIR/e6.trace"
	elapsed6 | grep -v '^stream.14' >"$F"
	run -0 "$ST" ask "$F" elapsed; echo "$output"
	[[ "$output" == "4	ok	ok	step_b ran on stream 14 (it ran no copy or kernel), the start event on stream 13 (created, blocking): the trace cannot tell whether the GPU orders the two (it does not say what kind of stream ran no copy or kernel)	ok	"* ]]
}

@test "format 5: a link line belongs after an event, a record or a wait" {
	F="$BATS_TEST_TMPDIR/bad.trace"
	printf 'streamtrace 5\napi\t1\t2\t1\t5\tcudaFree\nlink\t3\t7\nend\t1\t0\n' >"$F"
	run -3 "$ST" ask "$F" "waits nvtx:x"; echo "$output"
	[[ "$output" == *":3: not a streamtrace record"*"a link line belongs right after"* ]]
	printf 'streamtrace 4\nrecord\t0\t13\t5\t17\nend\t0\t0\n' >"$F"
	run -3 "$ST" query "$F" count gpu; echo "$output"
	[[ "$output" == *"not a streamtrace record"* ]]
}

# ---------------------------------------------------------------- a job

# job.trace (its comments): two processes on device 0, each with streams 7,
# 13 and 14 and calls 10-14 (process 1 also 15); process 1's calls are
# moved past process 0's: its 10 is 24.
@test "a job: each process's streams, calls and events are its own, named p0 and p1; queries say P:ID" {
	F="$FX/job.trace"
	run -0 "$ST" query "$F" processes; echo "$output"
	expect "$(printf '0\t100\t0\tpython3 job.py\n1\t101\t1\tpython3 job.py')"
	run -0 "$ST" query "$F" streams; echo "$output"
	expect "$(printf '%s\n' "0:7 default 0 -" "0:13 created 0 blocking" "0:14 created 0 non-blocking" \
		"1:7 default 0 -" "1:13 created 0 blocking" "1:14 created 0 non-blocking")"
	run -0 "$ST" query "$F" count kernel; expect 4
	run -0 "$ST" query "$F" count kernel --stream 1:14; expect 1
	run -0 "$ST" query "$F" count kernel --stream 14; expect 1 # process 0's, as written
	run -0 "$ST" query "$F" list kernel:nccl; echo "$output"
	[ "$(cut -f5,10 <<<"$output")" = "$(printf '0:14\t100\n1:14\t101')" ]
	run -2 "$ST" query "$F" count kernel --stream 1:x; echo "$output"
	# one device, declared by both: one device
	run -0 "$ST" query "$F" devices; expect "0 3 132 NVIDIA H100 80GB HBM3"
	run -0 "$ST" summary --width 100 "$F"; echo "$output"
	[[ "$output" == *"processes  p0: pid 100, rank 0, python3 job.py"* ]]
	[[ "$output" == *"           p1: pid 101, rank 1, python3 job.py"* ]]
	[[ "$output" == *"p1 default "*"p1 stream 13 "*"p1 stream 14 nb "* ]]
	run -0 "$ST" timeline --width 100 --color never "$F"; echo "$output"
	[[ "$output" == *"p0 stream 14 nb |"*"p1 default |"* ]]
	[[ "$output" == *"p0 thread 1 calls |"*"p1 thread 2 calls |"* ]]
	run -0 "$ST" json "$F"; echo "$output"
	[[ "$output" == *'"p1 created non-blocking stream 14"'* && "$output" == *'"p1 thread 2 (101): CUDA API"'* ]]
}

@test "a job: nothing orders one process's work after another's; a device synchronize, the legacy stream and a thread are the process's own" {
	F="$FX/job.trace"
	run -0 "$ST" ask "$F" "order kernel:10 kernel:13" "order kernel:24 kernel:27" \
		"order kernel:10 kernel:27" "order kernel:13 api:28" "order kernel:27 api:28" \
		"order kernel:10 memset:29" "order kernel:24 memset:29"
	echo "$output"
	expect "$(printf '%s\n' \
		"guaranteed	kernel:10 (stream order) record:11 (an event wait) wait:12 (stream order) kernel:13" \
		"guaranteed	kernel:24 (stream order) record:25 (an event wait) wait:26 (stream order) kernel:27" \
		"observed-only	nothing orders kernel:27 after kernel:10; in this run it started 0.600000 ms after the other ended" \
		"not-ordered	nothing orders api:28 after kernel:13" \
		"guaranteed	kernel:27 (a host wait) cudaDeviceSynchronize:28" \
		"observed-only	nothing orders memset:29 after kernel:10; in this run it started 2.300000 ms after the other ended" \
		"guaranteed	kernel:24 (stream order) record:25 (a host wait) cudaDeviceSynchronize:28 (queued after the thread's earlier calls) memset:29")"
	# two processes whose threads have one id (CUPTI numbers each process's
	# own): two threads, not one whose calls come one after the other
	sed 's/^\(api\t[0-9]*\t[0-9]*\t\)101\t/\1100\t/' "$F" >"$BATS_TEST_TMPDIR/t.trace"
	run -0 "$ST" ask "$BATS_TEST_TMPDIR/t.trace" "order kernel:13 api:28"; echo "$output"
	expect "not-ordered	nothing orders api:28 after kernel:13"
	run -0 "$ST" query "$BATS_TEST_TMPDIR/t.trace" list api; echo "$output"
	[ "$(cut -f10 <<<"$output" | sort -u | wc -l)" -eq 2 ]
}

@test "a job: a process cut short is said once, by its number; processes of two formats, or a bad header line, are refused" {
	F="$BATS_TEST_TMPDIR/j.trace"
	sed '/^end\t8\t0$/d' "$FX/job.trace" >"$F"
	run -0 --separate-stderr "$ST" query "$F" count kernel; echo "$stderr"
	expect 4
	[ "$stderr" = "$F: warning: process 0's trace ends early: it may have crashed (figures cover what was recorded)" ]
	run -0 "$ST" summary "$F"; [[ "$output" == *"(ENDS EARLY"* ]]
	sed '$d' "$FX/job.trace" >"$F"
	run -0 --separate-stderr "$ST" query "$F" count kernel; echo "$stderr"
	[[ "$stderr" == *"process 1's trace ends early"* ]]
	sed '34s/^streamtrace 6$/streamtrace 5/' "$FX/job.trace" >"$F"
	run -3 "$ST" query "$F" count kernel; echo "$output"
	[[ "$output" == *":34: not a streamtrace record"*"a job's processes are traces of one format"* ]]
	sed '34s/^streamtrace 6$/streamtrace 6 x/' "$FX/job.trace" >"$F"
	run -3 "$ST" query "$F" count kernel; echo "$output"
}

@test "run: the processes a program starts write beside its trace, and run joins them into it, by rank; stale ones go first, other files stay" {
	[ -f "$KIT_ROOT/checker/trace/libstreamtrace.so" ] || skip "built without CUPTI"
	cd "$BATS_TEST_TMPDIR"
	# no GPU here: the program writes what the tracer would, in each process
	cat >job.sh <<'SH'
[ "$STREAMTRACE_LEADER" = "$$" ] || { echo "leader $STREAMTRACE_LEADER, not $$"; exit 9; }
part() { printf 'streamtrace 6\nmeta\tpid\t%s\nmeta\trank\t%s\nstream\t7\tdefault\t0\t-\napi\t%s\t%s\t%s\t1\tcudaFree\nend\t1\t0\n' "$1" "$2" "$3" "$(($3 + 5))" "$1"; }
part 4243 2 300 >"$STREAMTRACE_OUT.4243"
part 4242 0 100 >"$STREAMTRACE_OUT.4242"
part "$$" 1 200 >"$STREAMTRACE_OUT"
SH
	printf 'streamtrace 6\nmeta\tpid\t999\n' >t.trace.999
	echo "a file of mine" >t.trace.1
	run -0 "$ST" run -o t.trace -- sh job.sh; echo "$output"
	ls t.trace*
	[ "$(ls t.trace*)" = "$(printf 't.trace\nt.trace.1')" ]
	run -0 "$ST" query t.trace processes; echo "$output"
	[ "$(cut -f1-3 <<<"$output")" = "$(printf '0\t4242\t0\n1\t%s\t1\n2\t4243\t2' "$(sed -n 2p <<<"$output" | cut -f2)")" ]
	run -0 "$ST" query t.trace list api; echo "$output"
	[ "$(cut -f1 <<<"$output" | tr '\n' ' ')" = "0.000000 0.000100 0.000200 " ]
	# one process: its file as it wrote it
	run -0 "$ST" run -o one.trace -- sh -c 'printf "streamtrace 6\nend\t0\t0\n" >"$STREAMTRACE_OUT"'
	[ "$(cat one.trace)" = "$(printf 'streamtrace 6\nend\t0\t0')" ]
}

# ---------------------------------------------------------------- speed

@test "a 100k-record trace is drawn and summarised in well under a second each" {
	F="$BATS_TEST_TMPDIR/big.trace"
	awk 'BEGIN {
		print "streamtrace 1"; print "meta\tdefault_stream\t7"
		for (i = 0; i < 100000; i++) {
			s = i * 1000; st = 7 + i % 4
			if (i % 3 == 0) printf "kernel\t%d\t%d\t%d\t1,1,1\t32,1,1\t%d\tk%d\n", s, s + 2500, st, i, i % 7
			else if (i % 3 == 1) printf "copy\t%d\t%d\t%d\tH2D\t4096\tPINNED\tDEVICE\t1\t%d\n", s, s + 900, st, i
			else printf "api\t%d\t%d\t1\t%d\tcudaMemcpyAsync\n", s, s + 300, i
		}
		print "end\t100000\t0"
	}' >"$F"
	for cmd in "timeline --color never --width 120" summary "query $F overlap copy kernel"; do
		t0=$(date +%s%N)
		if [[ $cmd == query* ]]; then run -0 "$ST" $cmd; else run -0 "$ST" $cmd "$F"; fi
		t1=$(date +%s%N)
		ms=$(( (t1 - t0) / 1000000 ))
		echo "$cmd: $ms ms"
		[ "$ms" -lt 1000 ]
	done
}
