#!/usr/bin/env bats
# trace.bats -- the trace tool without a GPU: parser, queries and renderers
# on fixtures in trace-fixtures/ (hand-written ones, and captures made on the
# lent H200). Every expected number is worked out from the fixture's lines in
# the comment above its test, not by running the tool.
#
# Times in basic.trace are ns; 1000000 ns = 1 ms. Its GPU intervals, in ms:
#   memset  [0.5, 1]   default (7)      H2D PAGEABLE [1, 3]    default (7)
#   kernel  [3, 7]     stream 13        H2D PINNED   [4, 5]    stream 14
#   H2D PINNED [5, 6.5] stream 14       empty kernel [6, 6]    stream 14
#   D2H PINNED [7.5, 8.5] stream 13     D2H PAGEABLE [8, 9]    stream 14
# host: nvtx outer [2.5, 9.5] > inner [3, 4], mark [4, 4]; 5 api calls.

bats_require_minimum_version 1.5.0

setup_file() {
	KIT_ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
	make -C "$KIT_ROOT/checker/trace" >/dev/null
}

setup() {
	KIT_ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
	ST="$KIT_ROOT/checker/trace/streamtrace"
	FX="$BATS_TEST_DIRNAME/trace-fixtures"
	B="$FX/basic.trace"
}

# expect WANT: compare $output with WANT, saying both on a mismatch.
expect() {
	if [ "$output" != "$1" ]; then
		echo "expected: $1"
		echo "got:      $output"
		return 1
	fi
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
	expect "$(printf '7 default\n13 created\n14 created')"
	run -0 "$ST" query "$B" streams h2d --mem PINNED; echo "$output"; expect "14 created"
	# the context sync has no stream; the stream sync is on 14
	run -0 "$ST" query "$B" streams sync; echo "$output"; expect "14 created"
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

@test "order compares the first match of each selector" {
	# first h2d [1,3] ends at 3 = first kernel's start: before
	run -0 "$ST" query "$B" order h2d kernel;    echo "$output"; expect before
	run -0 "$ST" query "$B" order kernel h2d;    echo "$output"; expect after
	run -0 "$ST" query "$B" order h2d memset;    echo "$output"; expect after
	run -0 "$ST" query "$B" order kernel:add nvtx:outer; echo "$output"; expect overlap
	run -0 "$ST" query "$B" order kernel:nosuch h2d;     echo "$output"; expect missing
}

@test "list prints one tab-separated line per record, times from the first record" {
	# the first record is the cudaMemcpy call at 0 ns
	run -0 "$ST" query "$B" list h2d; echo "$output"
	expect "$(printf '1.000000\t3.000000\t2.000000\tcopy\t7\tH2D\t2000000\tPAGEABLE\n4.000000\t5.000000\t1.000000\tcopy\t14\tH2D\t1000000\tPINNED\n5.000000\t6.500000\t1.500000\tcopy\t14\tH2D\t3000000\tPINNED')"
	run -0 "$ST" query "$B" list kernel:empty; echo "$output"
	expect "$(printf '6.000000\t6.000000\t0.000000\tkernel\t14\tempty_kernel()\t-\t-')"
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
	[[ "$output" == *"format 2"* ]]
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
	for f in basic known-h200 extras-h200 lab01-h200 streams16 truncated; do
		run -0 --separate-stderr "$ST" json "$FX/$f.trace" -o "$BATS_TEST_TMPDIR/$f.json"
		run -0 python3 -m json.tool "$BATS_TEST_TMPDIR/$f.json"
	done
	J="$BATS_TEST_TMPDIR/known-h200.json"
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
	grep -Eq '^default +1 +0 +1 +2\.500000 0\.0000$' <<<"$output"
	grep -q 'copy/kernel' <<<"$output"
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
	expect "$(printf '13 created\n14 created')"
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
	expect "$(printf '7 default\n13 created\n14 created\n16 default')"
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
	run -0 "$ST" query "$F" streams gpu; echo "$output"; expect "7 default"
	run -0 "$ST" query "$F" order h2d kernel; echo "$output"; expect before
	run -0 "$ST" query "$F" order kernel d2h; echo "$output"; expect before
	# 3 kernels, one after the other: no two GPU records overlap
	run -0 "$ST" query "$F" count kernel; echo "$output"; expect 3
	# the program times each step with a pair of events: 3 pairs
	run -0 "$ST" query "$F" count event; echo "$output"; expect 6
	run -0 "$ST" query "$F" overlap copy kernel; echo "$output"; expect "0.000000 0.0000 0.0000"
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
