#!/usr/bin/env bats
# trace-gpu.bats -- the trace tool on a real GPU: capture fixtures/trace-progs/known.cu,
# kinds.cu, peers.cu, current.cu, graphs.cu, waits.cu, elapsed.cu and job.cu, whose structure is known, and lab 01's
# solution; the tool must report exactly that structure. Skipped, with the
# reason, where there is no nvcc, no CUPTI or no CUDA device (known.cu exits
# 77 then); the tests of peers.cu and current.cu need two GPUs.

bats_require_minimum_version 1.5.0
load lib

COPIES=4 # pinned H2D copies per created stream: COPIES in known.cu

setup_file() {
	KIT_ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
	local d="$BATS_FILE_TMPDIR" why=""
	make -C "$KIT_ROOT/checker/trace" >/dev/null
	# (no GPU, as kit_has_gpu tells: the build of known.cu would only be
	# thrown away)
	if ! kit_has_gpu; then
		why="no CUDA device: nvidia-smi lists no GPU"
	elif ! command -v nvcc >/dev/null; then
		why="nvcc is not on PATH"
	elif [ ! -f "$KIT_ROOT/checker/trace/libstreamtrace.so" ]; then
		why="CUPTI not found: libstreamtrace.so was not built"
	elif ! nvcc -O2 -lineinfo -o "$d/known" "$BATS_TEST_DIRNAME/fixtures/trace-progs/known.cu" \
		2>"$d/nvcc.err"; then
		why="known.cu did not compile: $(head -n 1 "$d/nvcc.err")"
	else
		local rc=0
		timeout 60 "$d/known" >/dev/null 2>"$d/known.err" || rc=$?
		case $rc in
		0) ;;
		77) why="no CUDA device: $(head -n 1 "$d/known.err")" ;;
		*) why="known.cu failed on its own: $(head -n 1 "$d/known.err")" ;;
		esac
	fi
	if [ -z "$why" ]; then
		local rrc=0 p
		timeout 60 "$KIT_ROOT/checker/trace/streamtrace" run -o "$d/known.trace" \
			-- "$d/known" >"$d/run.out" 2>&1 || rrc=$?
		echo "$rrc" >"$d/run.rc"
		for p in kinds peers current graphs waits elapsed job; do
			rrc=0
			nvcc -O2 -lineinfo -o "$d/$p" "$BATS_TEST_DIRNAME/fixtures/trace-progs/$p.cu" \
				>"$d/$p.out" 2>&1 &&
				timeout 60 "$KIT_ROOT/checker/trace/streamtrace" run -o "$d/$p.trace" \
					-- "$d/$p" >"$d/$p.out" 2>&1 || rrc=$?
			echo "$rrc" >"$d/$p.rc"
		done
		# with fewer hardware queues (the grader's QUEUES): one for two
		# streams, four for two and the legacy one; a graph's work
		for p in known:1 known:4 graphs:4; do
			CUDA_DEVICE_MAX_CONNECTIONS=${p#*:} timeout 60 "$KIT_ROOT/checker/trace/streamtrace" \
				run -o "$d/${p%:*}-q${p#*:}.trace" -- "$d/${p%:*}" >/dev/null 2>&1
		done
	fi
	printf '%s' "$why" >"$d/skip"
}

setup() {
	KIT_ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
	ST="$KIT_ROOT/checker/trace/streamtrace"
	T="$BATS_FILE_TMPDIR/known.trace"
	local why
	why=$(cat "$BATS_FILE_TMPDIR/skip")
	[ -z "$why" ] || skip "$why"
}

# q ARGS: run a query on the known.cu trace, expecting exit 0.
q() {
	run -0 "$ST" query "$T" "$@"
	echo "query $*: $output"
}

@test "known.cu runs under capture, exits 0 and leaves a complete trace" {
	cat "$BATS_FILE_TMPDIR/run.out"
	[ "$(cat "$BATS_FILE_TMPDIR/run.rc")" -eq 0 ]
	run -0 tail -n 1 "$T"
	echo "last line: $output"
	[[ "$output" == end$'\t'* ]]
}

@test "exactly one H2D copy came from pageable memory, on the default stream" {
	q count h2d --mem PAGEABLE;                  [ "$output" = 1 ]
	q count h2d --mem PAGEABLE --stream default; [ "$output" = 1 ]
	q streams h2d --mem PAGEABLE
	[[ "$output" =~ ^[0-9]+\ default\ 0\ -$ ]]
}

@test "the pinned H2D copies ran on the two streams the program created" {
	q count h2d --mem PINNED
	[ "$output" = $((2 * COPIES)) ] || { echo "expected $((2 * COPIES))"; false; }
	q streams h2d --mem PINNED
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == *" created 0 blocking" && "${lines[1]}" == *" created 0 blocking" ]]
	q count h2d --mem PINNED --stream default; [ "$output" = 0 ]
}

@test "the pinned copies overlapped the kernels of the other stream" {
	q count kernel; [ "$output" = 2 ]
	q overlap h2d kernel
	read -r ov f1 f2 <<<"$output"
	awk -v x="$ov" 'BEGIN { exit !(x > 0) }' || { echo "expected overlap > 0"; false; }
}

@test "the NVTX range host_work was recorded on the host thread" {
	q count nvtx:host_work; [ "$output" = 1 ]
	q total nvtx:host_work
	awk -v x="$output" 'BEGIN { exit !(x > 0) }'
}

@test "the first H2D ended before the first kernel started, and nothing was dropped" {
	q order h2d kernel; [ "$output" = before ]
	q order kernel d2h; [ "$output" = before ]
	q dropped;          [ "$output" = 0 ]
	q meta copy_engines
	[[ "$output" =~ ^[0-9]+$ ]]
}

@test "on one GPU, every copy and kernel, and every call made with a context, say device 0 was current" {
	run -0 head -n 1 "$T"; [ "$output" = "streamtrace 6" ]
	q current gpu
	[ -n "$output" ] && [ "$(cut -f 11 <<<"$output" | sort -u)" = 0 ]
	q count gpu --current other; [ "$output" = 0 ]
	# a call made before any context is current (cudaGetDeviceCount) says
	# none (-); every other one, device 0
	q count api --current 0
	awk -v n="$output" 'BEGIN { exit !(n > 0) }'
	q current api
	[ -z "$(cut -f 11 <<<"$output" | grep -vx -e - -e 0)" ]
}

@test "the terminal timeline shows a copy in one stream under a kernel in the other" {
	run -0 "$ST" timeline --color never --width 120 "$T"
	echo "$output"
	# a column where one created-stream lane draws '>' and another '#'
	run -0 awk -F'|' '/^ *stream [0-9]+ \|/ { lanes[n++] = $2 }
		END { for (c = 1; c <= length(lanes[0]); c++) {
			h = k = 0
			for (i = 0; i < n; i++) {
				ch = substr(lanes[i], c, 1)
				if (ch == ">") h = 1; if (ch == "#") k = 1
			}
			if (h && k) { print c; exit 0 }
		} exit 1 }' <<<"$output"
	echo "overlap at column $output"
}

@test "the JSON has a named track per stream and copies overlapping kernels" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	run -0 "$ST" json "$T" -o "$BATS_FILE_TMPDIR/known.json"
	run -0 python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in ev
         if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == 1}
print(names)
assert sum(1 for n in names.values() if n.startswith("created stream")) == 2
assert sum(1 for n in names.values() if n.startswith("default stream")) == 1
x = [e for e in ev if e["ph"] == "X" and e["pid"] == 1]
ks = [e for e in x if e["cat"] == "kernel"]
cs = [e for e in x if e["cat"] == "copy" and e["name"].startswith("H2D PINNED")]
hit = [(c["tid"], k["tid"]) for c in cs for k in ks if c["tid"] != k["tid"]
       and c["ts"] < k["ts"] + k["dur"] and k["ts"] < c["ts"] + c["dur"]]
print(len(hit), "copy/kernel overlaps across streams")
assert hit
' "$BATS_FILE_TMPDIR/known.json"
	echo "$output"
}

@test "lab 01's solution shows H2D, kernel, D2H in order, all on the default stream" {
	local lab="$KIT_ROOT/solutions/01-sync-copy"
	[ -f "$lab/Makefile" ] || skip "no solutions/01-sync-copy"
	make -C "$lab" >/dev/null
	cd "$BATS_FILE_TMPDIR"
	run -0 timeout 120 "$ST" run -o lab01.trace -- "$lab/sync_copy"
	echo "$output"
	run -0 "$ST" query lab01.trace streams gpu; echo "$output"
	[[ "$output" =~ ^[0-9]+\ default\ 0\ -$ ]]
	run -0 "$ST" query lab01.trace order h2d kernel; echo "$output"; [ "$output" = before ]
	run -0 "$ST" query lab01.trace order kernel d2h; echo "$output"; [ "$output" = before ]
	run -0 "$ST" query lab01.trace overlap copy kernel; echo "$output"
	[ "$output" = "0.000000 0.0000 0.0000" ]
	run -0 "$ST" query lab01.trace dropped; echo "$output"; [ "$output" = 0 ]
}

# ---------------------------------------------------------------- kinds.cu, peers.cu

# ran NAME: NAME's capture exited 0 (its output shown), or skip with its own
# reason when it exited 77 (peers.cu on one GPU).
ran() {
	local rc
	rc=$(cat "$BATS_FILE_TMPDIR/$1.rc")
	cat "$BATS_FILE_TMPDIR/$1.out"
	[ "$rc" != 77 ] || skip "needs 2 GPUs: $(tail -n 1 "$BATS_FILE_TMPDIR/$1.out")"
	[ "$rc" = 0 ]
	K="$BATS_FILE_TMPDIR/$1.trace"
}

# overlap_ms A B: the overlap in ms of two "START END" intervals.
overlap_ms() {
	awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " ")
		lo = x[1] > y[1] ? x[1] : y[1]; hi = x[2] < y[2] ? x[2] : y[2]
		printf "%.6f\n", (hi > lo ? hi - lo : 0) }'
}

@test "kinds.cu: two host threads' kernels ran on their own per-thread default streams, at once" {
	ran kinds
	run -0 "$ST" query "$K" streams kernel --window nvtx:worker; echo "$output"
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[0]} == *" per-thread 0 blocking" && ${lines[1]} == *" per-thread 0 blocking" ]]
	# each kernel on its stream was queued by its own thread
	run -0 "$ST" query "$K" list kernel --stream per-thread; echo "$output"
	[ "${#lines[@]}" -eq 2 ]
	local s1 s2 t1 t2
	s1=$(cut -f 5 <<<"${lines[0]}") s2=$(cut -f 5 <<<"${lines[1]}")
	t1=$(cut -f 10 <<<"${lines[0]}") t2=$(cut -f 10 <<<"${lines[1]}")
	[ "$s1" != "$s2" ] && [ "$t1" != "$t2" ] && [ "$t1" != - ] && [ "$t2" != - ]
	run -0 overlap_ms "$(cut -f 1,2 <<<"${lines[0]}" | tr '\t' ' ')" "$(cut -f 1,2 <<<"${lines[1]}" | tr '\t' ' ')"
	echo "overlap $output ms"
	awk -v x="$output" 'BEGIN { exit !(x > 0) }'
	run -0 "$ST" timeline --color never --width 120 "$K"; echo "$output"
	[[ $output == *"thread 2 default"* && $output == *"thread 3 default"* ]]
}

@test "kinds.cu: the blocking stream waited for the legacy kernel, the non-blocking one did not" {
	ran kinds
	local legacy blocking nb
	legacy=$("$ST" query "$K" list kernel --stream default | cut -f 1,2 | tr '\t' ' ')
	run -0 "$ST" query "$K" streams kernel --window nvtx:kinds; echo "$output"
	[[ $output == *" default 0 -"* && $output == *" created 0 blocking"* &&
		$output == *" created 0 non-blocking"* ]]
	blocking=$("$ST" query "$K" list kernel --stream blocking --window nvtx:kinds | cut -f 1,2 | tr '\t' ' ')
	nb=$("$ST" query "$K" list kernel --stream non-blocking | cut -f 1,2 | tr '\t' ' ')
	echo "legacy $legacy; blocking $blocking; non-blocking $nb"
	[ "$(overlap_ms "$legacy" "$blocking")" = 0.000000 ]
	awk -v x="$(overlap_ms "$legacy" "$nb")" 'BEGIN { exit !(x > 0) }'
}

@test "peers.cu: a peer copy staged through the host is one record, as long as its events say" {
	ran peers
	run -0 "$ST" query "$K" devices; echo "$output"
	[ "${#lines[@]}" -eq 2 ]
	run -0 "$ST" query "$K" count p2p:host; echo "$output"; [ "$output" = 1 ]
	# no leg of it is left as a D2H or H2D between device memories
	run -0 "$ST" query "$K" count copy --mem DEVICE; echo "$output"; [ "$output" = 2 ]
	run -0 "$ST" query "$K" events p2p:host; echo "$output"
	local dur w inside printed
	dur=$(cut -f 3 <<<"$output") w=$(cut -f 13 <<<"$output") inside=$(cut -f 14 <<<"$output")
	printed=$(awk '$1 == "staged_ms" { print $3 }' "$BATS_FILE_TMPDIR/peers.out")
	echo "traced $dur ms, events $w ms apart around $inside records, printed $printed"
	[ "$inside" = 1 ]
	[ "$(cut -f 9 <<<"$output")" = 0 ]
	# the events bracket the copy alone: the copy is most of that time
	awk -v d="$dur" -v w="$w" -v p="$printed" 'BEGIN { exit !(d >= 0.9 * w && d <= w + 0.001 &&
		p >= w - (0.005 * w + 0.1) && p <= w + 0.005 * w + 0.1) }'
}

@test "peers.cu: with peer access on the copy goes device to device" {
	ran peers
	run -0 "$ST" query "$K" count p2p:direct; echo "$output"; [ "$output" = 1 ]
	run -0 "$ST" query "$K" events p2p:direct; echo "$output"
	local dur w
	dur=$(cut -f 3 <<<"$output") w=$(cut -f 13 <<<"$output")
	awk -v d="$dur" -v w="$w" 'BEGIN { exit !(d > 0 && d <= w + 0.001) }'
	run -0 "$ST" timeline --color never --width 120 "$K"; echo "$output"
	[[ $output == *"dev 0 "* && $output == *"dev 1 "* ]]
	run -0 "$ST" summary "$K"; echo "$output"
	grep -Eq '^P2P direct +1 ' <<<"$output" && grep -Eq '^P2P via host +1 ' <<<"$output"
}

# current.cu: with device 0 current, a kernel and a copy into s1, a stream of
# device 1. The Programming Guide says the launch fails and the copy
# succeeds; what this GPU did is printed (elsewhere_launch, elsewhere_ran)
# and echoed here. Either way the trace says which device was current.
@test "current.cu: a kernel queued into a stream of device 1 while device 0 was current is found by --current other" {
	ran current
	local launched ran_ok
	launched=$(awk '$1 == "elsewhere_launch" { print $3 }' "$BATS_FILE_TMPDIR/current.out")
	ran_ok=$(awk '$1 == "elsewhere_ran" { print $3 }' "$BATS_FILE_TMPDIR/current.out")
	echo "this GPU: the launch into a stream of device 1 with device 0 current: $launched; it ran: $ran_ok"
	run -0 head -n 1 "$K"; [ "$output" = "streamtrace 6" ]
	# the two right_kernels: device 0 with 0 current, device 1 with 1 current
	run -0 "$ST" query "$K" current kernel:right_kernel; echo "$output"
	[ "${#lines[@]}" -eq 2 ]
	[ "$(cut -f 9,11 <<<"${lines[0]}")" = "$(printf '0\t0')" ]
	[ "$(cut -f 9,11 <<<"${lines[1]}")" = "$(printf '1\t1')" ]
	# the H2D copy into s1 with device 0 current (the Guide: it succeeds)
	run -0 "$ST" query "$K" current h2d --current other; echo "$output"
	[ "${#lines[@]}" -eq 1 ] && [ "$(cut -f 9,11 <<<"$output")" = "$(printf '1\t0')" ]
	# the second launch's call was made with device 0 current
	run -0 "$ST" query "$K" current api:cudaLaunchKernel; echo "$output"
	[ "${#lines[@]}" -eq 3 ] && [ "$(cut -f 11 <<<"$output" | paste -sd, -)" = "0,0,1" ]
	run -0 "$ST" query "$K" list kernel --current other; echo "$output"
	if [ "$launched" = ok ]; then
		# it ran on its stream's device, 1: the one kernel queued elsewhere
		[ "${#lines[@]}" -eq 1 ] && [[ $output == *elsewhere_kernel* ]]
		[ "$(cut -f 9 <<<"$output")" = 1 ]
	else
		# it failed, as the Guide says: no kernel ran
		[ -z "$output" ]
		run -0 "$ST" query "$K" count kernel:elsewhere_kernel; [ "$output" = 0 ]
	fi
}

# graphs.cu: a graph of add, twice, add captured from s and launched twice;
# add launched on its own; then cudaStreamSynchronize inside a capture, and
# its end. Format 4 says which graph and node ran each kernel, and what the
# refused calls returned.
@test "graphs.cu: each replayed kernel names its graph and node, and the calls a capture refused say what they returned" {
	ran graphs
	run -0 head -n 1 "$K"; [ "$output" = "streamtrace 6" ]
	run -0 "$ST" query "$K" graph kernel; echo "$output"
	[ "${#lines[@]}" -eq 7 ]
	# six kernels of one graph, three nodes, two launches (the two
	# cudaGraphLaunch calls' correlation ids); the last kernel no graph's
	local graphs launches
	graphs=$(head -n 6 <<<"$output" | cut -f 11 | sort -u)
	[[ $graphs =~ ^[0-9]+$ ]] && [ "$graphs" != 0 ]
	[ "$(head -n 6 <<<"$output" | cut -f 12 | sort -u | wc -l)" = 3 ]
	launches=$("$ST" query "$K" returned api:cudaGraphLaunch | cut -f 11 | paste -sd, -)
	[ "$(head -n 6 <<<"$output" | cut -f 13 | sort -nu | paste -sd, -)" = "$launches" ]
	[ "$(head -n 6 <<<"$output" | cut -f 6 | sed 's/(.*//' | paste -sd, -)" = \
		add_kernel,twice_kernel,add_kernel,add_kernel,twice_kernel,add_kernel ]
	[ "$(tail -n 1 <<<"$output" | cut -f 6,11,12 | sed 's/(unsigned int\*)//')" = "$(printf 'add_kernel\t-\t-')" ]
	# the refused calls: what the program printed is what the trace holds
	local sync end
	sync=$(awk '$1 == "sync_in_capture" { print $3 }' "$BATS_FILE_TMPDIR/graphs.out")
	end=$(awk '$1 == "end_capture" { print $3 }' "$BATS_FILE_TMPDIR/graphs.out")
	echo "this GPU: cudaStreamSynchronize during the capture returned $sync, its end $end"
	[ "$sync" != 0 ] && [ "$end" != 0 ]
	run -0 "$ST" query "$K" returned api:cudaStreamSynchronize; echo "$output"
	[ "$(cut -f 12 <<<"$output" | paste -sd, -)" = "0,0,$sync" ]
	run -0 "$ST" query "$K" returned api:cudaStreamEndCapture; echo "$output"
	[ "$(cut -f 12 <<<"$output" | paste -sd, -)" = "0,$end" ]
}

@test "queues: with one hardware queue known.cu's two streams share it; with four, or unset, no queue is shared; a graph's work cannot tell" {
	local d=$BATS_FILE_TMPDIR
	run grep $'^meta\tmax_connections\t' "$d/known-q1.trace"
	[ "$output" = $'meta\tmax_connections\t1' ]
	run grep $'^meta\tqueues_shared\t' "$d/known-q1.trace"
	echo "$output"
	[[ $output =~ (compute|copy)\ channel\ [0-9]+,\ streams\ [0-9]+\ and\ [0-9]+$ ]]
	run grep $'^meta\tqueues_shared\t' "$d/known-q4.trace"
	echo "$output"
	[ -z "$output" ]
	grep -q $'^meta\tmax_connections\t4$' "$d/known-q4.trace"
	# unset: the kit's own runs say nothing of queues
	! grep -q -e $'^meta\tmax_connections' -e $'^meta\tqueues_shared' "$T"
	run grep $'^meta\tqueues_shared\t' "$d/graphs-q4.trace"
	echo "$output"
	[[ $output == *"launched by a graph"* ]]
}

# ---------------------------------------------------------------- what was guaranteed (ask)

# corr_of NAME: the correlation id of the first kernel NAME of waits.cu.
corr_of() { "$ST" query "$K" corr "kernel:$1" | awk -F'\t' 'NR == 1 { print $11 }'; }

@test "waits.cu (format 5 and later): every wait and event synchronize names its event and the record it waited for" {
	ran waits
	run -0 head -n 1 "$K"; [ "$output" = "streamtrace 6" ]
	# each sync of an event (two stream waits, one event synchronize) is
	# followed by its link, a number: CUPTI tied it
	run -0 awk -F'\t' 'w { print ($1 == "link" && $3 ~ /^[0-9]+$/) ? "linked" : "UNLINKED: " $0 }
		{ w = $1 == "sync" && ($6 == "wait" || $6 == "event") }' "$K"
	echo "$output"
	[ "$(sort -u <<<"$output")" = linked ] && [ "${#lines[@]}" -eq 3 ]
	# every cudaEventRecord, of the timed event and twice of the one made with
	# cudaEventDisableTiming, has its record: an `event` line (CUPTI stamps
	# an untimed event too) or a `record` line, with the call's correlation id
	run -0 awk -F'\t' '$1 == "api" && $6 == "cudaEventRecord" { c[$5] = 1 }
		$1 == "event" { e[$6] = 1 } $1 == "record" { e[$5] = 1 }
		END { for (k in c) { n++; if (!(k in e)) print "no record of call " k } print n " calls" }' "$K"
	echo "$output"
	[ "$output" = "3 calls" ]
}

@test "waits.cu: ask finds each chain the program made, and none where it made none" {
	ran waits
	local c at su au sr rr sh ah sb ol
	c=$("$ST" query "$K" corr h2d --window nvtx:timed | awk -F'\t' 'NR == 1 { print $11 }')
	at=$(corr_of after_timed) su=$(corr_of spin_untimed) au=$(corr_of after_untimed)
	sr=$(corr_of spin_race) rr=$(corr_of racer) sh=$(corr_of spin_host) ah=$(corr_of after_host)
	sb=$(corr_of spin_blocking) ol=$(corr_of on_legacy)
	run -0 "$ST" ask "$K" "order copy:$c kernel:$at" "order kernel:$su kernel:$au" \
		"order kernel:$sr kernel:$rr" "order kernel:$sh kernel:$ah" "order kernel:$sb kernel:$ol" \
		"waits nvtx:host" "waits nvtx:race"
	echo "$output"
	[[ ${lines[0]} == "guaranteed	copy:$c (stream order) record:"*" (an event wait) wait:"*" (stream order) kernel:$at" ]]
	[[ ${lines[1]} == "guaranteed	kernel:$su (stream order) record:"*" (an event wait) wait:"* ]]
	[[ ${lines[2]} == not-ordered* || ${lines[2]} == observed-only* ]]
	[[ ${lines[3]} == "guaranteed	kernel:$sh (stream order) record:"*" (a host wait) cudaEventSynchronize:"* ]]
	[[ ${lines[4]} == "guaranteed	kernel:$sb (the legacy default stream) kernel:$ol" ]]
	[[ ${lines[5]} == "1	cudaEventSynchronize:"* ]]
	[ "${lines[6]}" = "0	" ]
}

@test "elapsed.cu (format 6): each cudaEventElapsedTime names the records its two events had; ask elapsed judges those" {
	ran elapsed
	run -0 head -n 1 "$K"; [ "$output" = "streamtrace 6" ]
	# the calls' correlation ids in order: records r0 (e0) r1 (e1) r2 (e2)
	# r3 r4 (e0 made again, recorded twice) r5 (e2); the five timings
	local r e
	r=($(awk -F'\t' '$1 == "api" && $6 == "cudaEventRecord" { print $5 }' "$K" | sort -n))
	e=($(awk -F'\t' '$1 == "api" && $6 == "cudaEventElapsedTime" { print $5 }' "$K" | sort -n))
	echo "records ${r[*]}; timings ${e[*]}"
	[ "${#r[@]}" -eq 6 ] && [ "${#e[@]}" -eq 5 ]
	# each timing's elapsed line, right after its api line (its current and
	# error lines between): (e1, e2) (e0, e1) (e0, e2), then e0 never
	# recorded, then e0's second record
	run -0 awk -F'\t' '$1 == "api" { a = $5; n = $6 } $1 == "elapsed" { print ($2 == a && n == "cudaEventElapsedTime") ? $2 " " $3 " " $4 : "MISPLACED " $0 }' "$K"
	echo "$output"
	[ "$output" = "${e[0]} ${r[1]} ${r[2]}
${e[1]} ${r[0]} ${r[1]}
${e[2]} ${r[0]} ${r[2]}
${e[3]} - ${r[2]}
${e[4]} ${r[4]} ${r[5]}" ]
	run -0 "$ST" ask "$K" elapsed; echo "$output"
	[ "$output" = "5	ok	ok	ok	ok	ok	ok	its start event was not recorded before it	-	no GPU work was queued between the start and the stop record	ok" ]
}

@test "kinds.cu and graphs.cu: ask knows the stream kinds and a graph launch" {
	ran kinds
	local w1 w2 lg bl nb
	read -r w1 w2 <<<"$("$ST" query "$K" corr kernel --window nvtx:worker | awk -F'\t' '{ printf "%s ", $11 }')"
	lg=$("$ST" query "$K" corr kernel --stream default | awk -F'\t' 'NR == 1 { print $11 }')
	bl=$("$ST" query "$K" corr kernel --stream blocking --window nvtx:kinds | awk -F'\t' 'NR == 1 { print $11 }')
	nb=$("$ST" query "$K" corr kernel --stream non-blocking | awk -F'\t' 'NR == 1 { print $11 }')
	run -0 "$ST" ask "$K" "order kernel:$w1 kernel:$w2" "order kernel:$lg kernel:$bl" "order kernel:$lg kernel:$nb"
	echo "$output"
	[[ ${lines[0]} == not-ordered* || ${lines[0]} == observed-only* ]]
	[[ ${lines[1]} == "guaranteed	kernel:$lg (the legacy default stream) kernel:$bl" ]]
	[[ ${lines[2]} == not-ordered* || ${lines[2]} == observed-only* ]]
	ran graphs
	local l1 l2 one
	read -r l1 l2 <<<"$("$ST" query "$K" graph kernel | awk -F'\t' '$11 != "-" && !s[$13]++ { printf "%s ", $13 }')"
	one=$("$ST" query "$K" graph kernel | awk -F'\t' '$11 == "-" { print $13; exit }')
	run -0 "$ST" ask "$K" "order kernel:$l1.1 kernel:$l1.2" "order kernel:$l1.3 kernel:$l2.1" "order kernel:$l2.2 kernel:$one"
	echo "$output"
	[[ ${lines[0]} == unknown*"one graph launch"* ]]
	[[ ${lines[1]} == "guaranteed	kernel:$l1.3 (a graph launch) launch:$l1 (a graph launch) kernel:$l2.1" ]]
	[[ ${lines[2]} == "guaranteed	kernel:$l2.2 (a graph launch) launch:$l2 (stream order) kernel:$one" ]]
}

@test "job.cu: a job's three processes in one trace, by rank, on one clock, and nothing left beside it" {
	ran job
	ls "$BATS_FILE_TMPDIR"/job.trace*
	[ "$(ls "$BATS_FILE_TMPDIR"/job.trace*)" = "$K" ]
	run -0 tail -n 1 "$K"; [[ "$output" == end$'\t'* ]]
	# the program (rank 0) first, then its two children, each its own pid
	run -0 "$ST" query "$K" processes; echo "$output"
	[ "$(cut -f1,3 <<<"$output" | tr '\t\n' ': ')" = "0:0 1:1 2:2 " ]
	[ "$(cut -f2 <<<"$output" | sort -u | wc -l)" -eq 3 ]
	[[ ${lines[1]} == *"child 1" && ${lines[2]} == *"child 2" ]]
	# a kernel each, on a stream of each process's own; a D2H copy each child
	run -0 "$ST" query "$K" list kernel; echo "$output"
	[ "$(cut -f5 <<<"$output" | cut -d: -f1 | sort | tr '\n' ' ')" = "0 1 2 " ]
	run -0 "$ST" query "$K" count d2h; [ "$output" = 2 ]
	# one clock: the program waited for its kernel before it started the
	# children, so both children's kernels start after it ended
	run -0 awk -F'\t' '{ split($5, s, ":"); st[s[1]] = $1; en[s[1]] = $2 }
		END { print (st[1] > en[0] && st[2] > en[0]) ? "after" : "NOT AFTER " en[0] " " st[1] " " st[2] }' \
		<<<"$("$ST" query "$K" list kernel)"
	echo "$output"; [ "$output" = after ]
	# and nothing the trace knows orders one process's kernel after
	# another's: the wait for the child's exit is not a CUDA call
	local c
	# (kernel:spin#2: the second in the order of the calls, process 1's;
	# its copy, on its stream)
	c=$("$ST" query "$K" corr d2h | awk -F'\t' '$5 ~ /^1:/ { print $11; exit }')
	run -0 "$ST" ask "$K" "order kernel:spin#1 kernel:spin#2" "order kernel:spin#2 copy:$c"; echo "$output"
	[[ ${lines[0]} == observed-only* ]]
	[[ ${lines[1]} == "guaranteed	kernel:"*" (stream order) copy:$c" ]]
	run -0 "$ST" summary "$K"; echo "$output"
	[[ "$output" == *"processes  p0: pid "*", rank 0, "*"p1: pid "*", rank 1, "*"child 1"* ]]
}
