# Makefile -- CUDA Stream Labs. `make help` lists the targets.
#
# Each lab folder has its own Makefile (common/lab.mk); this one builds and
# checks them all. Quiet by default: V=1 shows the commands.

.DEFAULT_GOAL := all
include common/cuda.mk
.DELETE_ON_ERROR:

LAB_DIRS := $(patsubst %/,%,$(wildcard labs/[0-9][0-9]-*/))
SOL_DIRS := $(patsubst %/,%,$(wildcard solutions/[0-9][0-9]-*/))
BATS_VENDOR := checker/vendor/node_modules/bats/bin/bats
CHECK_ARGS = $(if $(REPORT),--report $(REPORT)) $(LAB)

.PHONY: all labs solutions tools tools-quiet check check-solutions test test-all test-shared mutate slides slides-pdf trace \
	deps bats clean help $(LAB_DIRS) $(SOL_DIRS)

all: labs solutions tools                      ## build every starter, solution and tool

labs: $(LAB_DIRS)
solutions: $(SOL_DIRS)
$(LAB_DIRS) $(SOL_DIRS):
	@$(MAKE) --no-print-directory -C $@

# (-s: no "Nothing to be done" when they are built already)
tools:                                         ## build the trace tool, the stress shim and the digest tool
	@$(MAKE) --no-print-directory $(if $(Q),-s) -C checker/trace
	@$(MAKE) --no-print-directory $(if $(Q),-s) -C checker/stress
	@$(MAKE) --no-print-directory $(if $(Q),-s) -C checker/verify

# Before the checks, the tools are built without a word (their build shows
# only when it fails, or with V=1): a student's screen starts with results.
tools-quiet:
	@$(if $(Q),out=$$($(MAKE) --no-print-directory tools 2>&1) || { printf '%s\n' "$$out" >&2; exit 1; },$(MAKE) --no-print-directory tools)

# run-checks exits 3 when no check failed but those that need a GPU were
# skipped ("not graded"): it says so, and make check exits 0.
check: tools-quiet bats                        ## check the labs in labs/ (LAB=01 for one, REPORT=tap|junit)
	@checker/run-checks --tree labs $(CHECK_ARGS); rc=$$?; [ $$rc = 3 ] || exit $$rc

check-solutions: tools-quiet bats              ## the same checks on solutions/
	@checker/run-checks --tree solutions $(CHECK_ARGS); rc=$$?; [ $$rc = 3 ] || exit $$rc

# Without a GPU, make test is the quick run (under 2 minutes on 2 cores);
# make test-all adds the slow repeats (every mutant built and replayed, the
# whole test class graded). With a GPU, both run every test.
test: tools bats                               ## the kit's own tests (without a GPU: the quick run)
	@checker/run-checks --kit

test-all: tools bats                           ## every one of the kit's tests, also without a GPU (CI)
	@checker/run-checks --kit --all

# On a GPU node: 8 checkers at once x 3 rounds, beside a load program, and the
# mutant self-test with 3 checkers beside it. SHARED="--k 4 --alone 10" etc.
test-shared: tools bats                        ## many checkers on one GPU at once: same verdicts? (GPU node)
	@checker/tests/shared-gpu.sh $(SHARED); rc=$$?; [ $$rc = 77 ] || exit $$rc

# Mutation testing of the checkers (checker/tests/mutate/README.md): every
# mutant a rule makes of a solution, built, and on a GPU node run through its
# lab's checker JOBS at a time; a table per lab. Exit 3 without a GPU (made
# and built, not run), 1 where a mutant survived.
mutate: tools bats                             ## mutation-test the checkers: make mutate [LAB=07] [JOBS=8] (GPU node)
	@checker/tests/mutate/mutate.py run $(if $(LAB),--labs "$(LAB)") $(if $(JOBS),--jobs $(JOBS)); \
	 rc=$$?; [ $$rc = 3 ] || exit $$rc

slides:                                        ## build the decks to slides/build/*.html
	@$(MAKE) --no-print-directory -C slides

slides-pdf:                                    ## the decks as PDF, presenter notes included (needs Chromium)
	@$(MAKE) --no-print-directory -C slides pdf

trace:                                         ## timeline of a lab's run: make trace LAB=01
	@test -n "$(LAB)" || { echo "which lab? make trace LAB=01" >&2; exit 2; }
	@d=$$(ls -d labs/$(LAB)* 2>/dev/null | head -n 1); \
	 test -n "$$d" || { echo "no lab matches LAB=$(LAB)" >&2; exit 2; }; \
	 $(MAKE) --no-print-directory -C $$d trace

# Instructors (checker/grade/README.md): the kit without answers, and grading
# a class of submissions with the kit's own checker.
.PHONY: handout grade bench-grade
handout:                                       ## the kit for students, no solutions or presenter notes (NOTES=1 keeps them): build/handout/ (+ .tar.gz)
	@checker/grade/handout $(if $(filter 1,$(NOTES)),--notes)

# Into an OUT graded before, LAB= and STUDENT= regrade those and keep the
# rest; REPLACE=1 starts anew. ROSTER=class.csv (id, name, email), WEIGHTS=01=20,09=5.
grade: tools bats                              ## grade a class (folders, tarballs, zips, bundles): make grade SUBMISSIONS=DIR [JOBS=4] [LAB=02] [STUDENT=name]
	@test -n "$(SUBMISSIONS)" || { echo "which class? make grade SUBMISSIONS=DIR (a folder, tarball, zip or git bundle per student)" >&2; exit 2; }
	@checker/grade/grade $(if $(JOBS),-j $(JOBS)) $(if $(filter command line,$(origin OUT)),-o $(OUT)) \
	 $(if $(LAB),--labs $(LAB)) $(if $(STUDENT),--student "$(STUDENT)") $(if $(ROSTER),--roster "$(ROSTER)") \
	 $(if $(WEIGHTS),--weights "$(WEIGHTS)") $(if $(filter 1,$(REPLACE)),--replace) "$(SUBMISSIONS)"; \
	 rc=$$?; [ $$rc = 3 ] || exit $$rc

# How fast this node grades a class of N full, distinct submissions, and
# where the time goes (checker/grade/README.md, "How fast"). COMPARE=serial
# grades the class again one at a time and compares every check's verdict.
bench-grade: tools bats                        ## time grading a made class of N full submissions: make bench-grade [N=100] [JOBS=16] [COMPARE=serial] (GPU node)
	@checker/grade/bench-grade -n $(or $(N),100) $(if $(JOBS),-j $(JOBS)) $(if $(filter command line,$(origin OUT)),-o $(OUT)) \
	 $(if $(COMPARE),--compare $(COMPARE)) $(if $(LAB),--labs $(LAB)) $(if $(SEED),--seed $(SEED))

# Bats with bats-support and bats-assert (the kit's own tests load them): the
# pinned copies (make deps), else the machine's (Debian's packages put the
# helpers in /usr/lib/bats; BATS_LIB_PATH names other folders); else make deps
# installs them with npm. With no npm, make check goes on with bats alone (a
# lab's checks need no helpers); make test says what to install.
BATS_HELPERS := $(firstword $(foreach d,$(subst :, ,$(or $(BATS_LIB_PATH),/usr/lib/bats)),\
	$(if $(and $(wildcard $(d)/bats-support/load.bash),$(wildcard $(d)/bats-assert/load.bash)),$(d))))
BATS_MISSING := bats with bats-support and bats-assert not found: apt-get install bats bats-assert bats-support, or make deps (needs npm)
bats:
	@[ -x $(BATS_VENDOR) ] || { command -v bats >/dev/null && [ -n "$(BATS_HELPERS)" ]; } || \
	 { command -v npm >/dev/null && $(MAKE) --no-print-directory deps; } || \
	 { [ -z "$(filter test test-all,$(MAKECMDGOALS))" ] && command -v bats >/dev/null; } || \
	 { echo "$(BATS_MISSING)" >&2; exit 1; }

deps: $(BATS_VENDOR)                           ## install the pinned bats, bats-support, bats-assert (npm)
$(BATS_VENDOR): checker/vendor/package.json checker/vendor/package-lock.json
	@command -v npm >/dev/null || { echo "npm not found: install Node.js and npm, or Debian's bats bats-assert bats-support" >&2; exit 1; }
	$(Q)npm ci --prefix checker/vendor --no-audit --no-fund --loglevel=error
	@touch $@

CLEAN_DIRS := $(addsuffix .clean,$(LAB_DIRS) $(SOL_DIRS) checker/trace checker/stress checker/load checker/verify slides)
.PHONY: $(CLEAN_DIRS)
clean: $(CLEAN_DIRS)                           ## remove what make built
	rm -rf build reports
$(CLEAN_DIRS):
	@$(MAKE) --no-print-directory -C $(basename $@) clean >/dev/null

help:                                          ## this list
	@echo "CUDA Stream Labs -- make targets:"
	@grep -E '^[a-z-]+:.*## ' $(firstword $(MAKEFILE_LIST)) | \
	 sed -E 's/^([a-z-]+):.*## (.*)/  make \1\t\2/' | expand -t 24
	@echo "options: V=1 (show commands), CUDA_ARCH=90, NVTX=0, LAB=NN, REPORT=tap|junit, SHARED=\"--k 8 --rounds 3\", KIT_LABS=\"07 09\" (make test: those labs' variants only)"
	@echo "in a lab folder: make, make run, make check, make trace"
	@echo "labs: $(notdir $(LAB_DIRS))"
	@echo "  (08-pytorch: streams.py, needs a python3 with torch; 09-multi-gpu: some checks need 2 GPUs)"
