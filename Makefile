# Makefile -- CUDA Stream Labs. `make help` lists the targets.
#
# Each lab folder has its own Makefile (common/lab.mk); this one builds and
# checks them all. Quiet by default: V=1 shows the commands.

.DEFAULT_GOAL := all
include common/cuda.mk
.DELETE_ON_ERROR:

SOL_DIRS := $(patsubst %/,%,$(wildcard solutions/[0-9][0-9]-*/))
CLEAN_ALSO := $(SOL_DIRS) checker/tests/load

.PHONY: all solutions check-solutions test test-all test-shared mutate slides-pdf $(SOL_DIRS)

all: labs solutions tools                      ## build every starter, solution and tool

solutions: $(SOL_DIRS)
$(SOL_DIRS):
	@$(MAKE) --no-print-directory -C $@

# labs, tools, check, slides, trace, deps, clean, help: as in the handout's
# Makefile (checker/grade/handout.mk), from one file both include
include common/top.mk

# (exit 3 from run-checks: not graded, for want of a GPU; make exits 0)
check-solutions: tools-quiet bats              ## make check's checks, on solutions/
	@checker/run-checks --tree solutions $(CHECK_ARGS); rc=$$?; [ $$rc = 3 ] || exit $$rc

# Without a GPU, make test is the quick run (minutes on 2 cores: README.md);
# make test-all adds the slow repeats (every mutant built and replayed, the
# whole test class graded). With a GPU, both run every test.
test: tools bats                               ## the kit's own tests (without a GPU: the quick run)
	@checker/tests/run

test-all: tools bats                           ## every one of the kit's tests, also without a GPU (CI)
	@checker/tests/run --all

# On a GPU node: 8 checkers at once x 3 rounds, beside a load program, and the
# mutant self-test with 3 checkers beside it. SHARED="--k 4 --alone 10" etc.
test-shared: tools bats                        ## many checkers on one GPU at once: same verdicts? (GPU node)
	@checker/tests/shared-gpu.sh $(SHARED); rc=$$?; [ $$rc = 77 ] || exit $$rc

# Mutation testing of the checkers (checker/tests/mutate/README.md): every
# mutant a rule makes of a solution, built, and on a GPU node run through its
# lab's checker JOBS at a time, RUNS times each (a kill counts where the same
# check failed in every run); a table per lab. Exit 3 without a GPU (made and
# built, not run), 1 where a mutant survived or was killed in some runs only.
mutate: tools bats                             ## mutation-test the checkers: make mutate [LAB=07] [JOBS=8] [RUNS=3] (GPU node)
	@checker/tests/mutate/mutate.py run $(if $(LAB),--labs "$(LAB)") $(if $(JOBS),--jobs $(JOBS)) $(if $(RUNS),--runs $(RUNS)); \
	 rc=$$?; [ $$rc = 3 ] || exit $$rc

slides-pdf:                                    ## the decks as PDF, presenter notes included (needs Chromium)
	@$(MAKE) --no-print-directory -C slides pdf

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
# (checker/tests/lib.bash's kit_helpers finds them, for make and the tests)
BATS_HELPERS = $(shell bash -c '. checker/tests/lib.bash && kit_helpers' 2>/dev/null)
BATS_MISSING := bats with bats-support and bats-assert not found: apt-get install bats bats-assert bats-support, or make deps (needs npm)
bats:
	@[ -x $(BATS_VENDOR) ] || { command -v bats >/dev/null && [ -n "$(BATS_HELPERS)" ]; } || \
	 { command -v npm >/dev/null && $(MAKE) --no-print-directory deps; } || \
	 { [ -z "$(filter test test-all,$(MAKECMDGOALS))" ] && command -v bats >/dev/null; } || \
	 { echo "$(BATS_MISSING)" >&2; exit 1; }

define HELP_MORE
@echo "options: V=1 (show commands), CUDA_ARCH=90, NVTX=0, LAB=NN, REPORT=tap|junit, SHARED=\"--k 8 --rounds 3\", KIT_LABS=\"07 09\" (make test: those labs' variants only)"
@echo "in a lab folder: make, make run, make check, make trace"
@echo "labs: $(notdir $(LAB_DIRS))"
@echo "  (08-pytorch: streams.py, needs a python3 with torch; 09-multi-gpu: some checks need 2 GPUs)"
endef

