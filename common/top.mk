# common/top.mk -- the rules of a top-level Makefile: the kit's own, and the
# one a student's handout has (checker/grade/handout.mk). Each includes it
# after common/cuda.mk and its own `all` (the default goal); `make help` lists
# its targets, then this file's.

LAB_DIRS := $(patsubst %/,%,$(wildcard labs/[0-9][0-9]-*/))
# the checker's tools: every checker/*/Makefile (trace, stress, verify)
TOOL_DIRS := $(patsubst %/Makefile,%,$(wildcard checker/*/Makefile))
BATS_VENDOR := checker/vendor/node_modules/bats/bin/bats
CHECK_ARGS = $(if $(REPORT),--report $(REPORT)) $(LAB)
# what make clean cleans: the labs, the tools, the slides, and CLEAN_ALSO
# (folders the including Makefile names before it includes this one)
CLEAN_DIRS := $(addsuffix .clean,$(LAB_DIRS) $(TOOL_DIRS) $(CLEAN_ALSO) slides)

.PHONY: labs tools tools-quiet check slides trace deps bats clean help \
	$(LAB_DIRS) $(TOOL_DIRS) $(CLEAN_DIRS)

labs: $(LAB_DIRS)
$(LAB_DIRS):
	@$(MAKE) --no-print-directory -C $@

# (-s: no "Nothing to be done" when they are built already)
tools: $(TOOL_DIRS)                            ## build the checker's tools: the trace tool, the stress shim, the digest tool
$(TOOL_DIRS):
	@$(MAKE) --no-print-directory $(if $(Q),-s) -C $@

# Before the checks (and a lab's make check, make trace), the tools are
# built without a word: their build shows only when it fails, or with V=1.
tools-quiet:
	@$(if $(Q),out=$$($(MAKE) --no-print-directory tools 2>&1) || { printf '%s\n' "$$out" >&2; exit 1; },$(MAKE) --no-print-directory tools)

# run-checks exits 3 when no check failed but those that need a GPU were
# skipped ("not graded"): it says so, and make check exits 0.
check: tools-quiet bats                        ## check the labs in labs/ (LAB=01 for one, REPORT=tap|junit; CHECK_JOBS=1: checks one at a time)
	@checker/run-checks --tree labs $(CHECK_ARGS); rc=$$?; [ $$rc = 3 ] || exit $$rc

slides:                                        ## build the decks to slides/build/*.html
	@$(MAKE) --no-print-directory -C slides

trace:                                         ## timeline of a lab's run: make trace LAB=01
	@test -n "$(LAB)" || { echo "which lab? make trace LAB=01" >&2; exit 2; }
	@d=$$(ls -d labs/$(LAB)* 2>/dev/null | head -n 1); \
	 test -n "$$d" || { echo "no lab matches LAB=$(LAB)" >&2; exit 2; }; \
	 $(MAKE) --no-print-directory -C $$d trace

deps: $(BATS_VENDOR)                           ## install the pinned bats, bats-support, bats-assert (npm)
$(BATS_VENDOR): checker/vendor/package.json checker/vendor/package-lock.json
	@command -v npm >/dev/null || { echo "npm not found: install Node.js and npm, or Debian's bats bats-assert bats-support" >&2; exit 1; }
	$(Q)npm ci --prefix checker/vendor --no-audit --no-fund --loglevel=error
	@touch $@

clean: $(CLEAN_DIRS)                           ## remove what make built
	rm -rf build reports
$(CLEAN_DIRS):
	@$(MAKE) --no-print-directory -C $(basename $@) clean >/dev/null

# help: the targets with a "## " line, of the including file, then of this
# one; then HELP_MORE, the including one's lines (a define of echo lines)
help:                                          ## this list
	@echo "CUDA Stream Labs -- make targets:"
	@grep -hE '^[a-z-]+:.*## ' $(firstword $(MAKEFILE_LIST)) $(lastword $(filter %/top.mk,$(MAKEFILE_LIST))) | \
	 sed -E 's/^([a-z-]+):.*## (.*)/  make \1\t\2/' | expand -t 24
	$(HELP_MORE)
