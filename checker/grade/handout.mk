# Makefile -- CUDA Stream Labs. `make help` lists the targets.
#
# Each lab folder has its own Makefile (common/lab.mk); this one builds and
# checks them all. Quiet by default: V=1 shows the commands.

.DEFAULT_GOAL := all
include common/cuda.mk
.DELETE_ON_ERROR:

LAB_DIRS := $(patsubst %/,%,$(wildcard labs/[0-9][0-9]-*/))
BATS_VENDOR := checker/vendor/node_modules/bats/bin/bats
CHECK_ARGS = $(if $(REPORT),--report $(REPORT)) $(LAB)
TOOL_DIRS := $(patsubst %/Makefile,%,$(wildcard checker/*/Makefile))

.PHONY: all labs tools tools-quiet check slides trace deps bats clean help $(LAB_DIRS) $(TOOL_DIRS)

all: labs tools                                ## build every lab and the checker's tools

labs: $(LAB_DIRS)
$(LAB_DIRS):
	@$(MAKE) --no-print-directory -C $@

tools: $(TOOL_DIRS)                            ## build the checker's tools (the trace tool, ...)
$(TOOL_DIRS):
	@$(MAKE) --no-print-directory -C $@

# Before the checks (and a lab's make check, make trace), the tools are built
# without a word: their build shows only when it fails, or with V=1.
tools-quiet:
	@$(if $(Q),out=$$($(MAKE) --no-print-directory tools 2>&1) || { printf '%s\n' "$$out" >&2; exit 1; },$(MAKE) --no-print-directory tools)

# run-checks exits 3 when the checks that need a GPU were skipped ("not
# graded"): it says so, and make check exits 0.
check: tools-quiet bats                        ## check your labs (LAB=01 for one)
	@checker/run-checks --tree labs $(CHECK_ARGS); rc=$$?; [ $$rc = 3 ] || exit $$rc

slides:                                        ## build the decks to slides/build/*.html
	@$(MAKE) --no-print-directory -C slides

trace:                                         ## timeline of a lab's run: make trace LAB=01
	@test -n "$(LAB)" || { echo "which lab? make trace LAB=01" >&2; exit 2; }
	@d=$$(ls -d labs/$(LAB)* 2>/dev/null | head -n 1); \
	 test -n "$$d" || { echo "no lab matches LAB=$(LAB)" >&2; exit 2; }; \
	 $(MAKE) --no-print-directory -C $$d trace

# Bats: the pinned copy (make deps), else the machine's own bats.
bats:
	@[ -x $(BATS_VENDOR) ] || command -v bats >/dev/null || $(MAKE) --no-print-directory deps

deps: $(BATS_VENDOR)                           ## install the pinned bats (npm)
$(BATS_VENDOR): checker/vendor/package.json checker/vendor/package-lock.json
	@command -v npm >/dev/null || { echo "npm not found: install Node.js and npm, or Debian's bats" >&2; exit 1; }
	$(Q)npm ci --prefix checker/vendor --no-audit --no-fund --loglevel=error
	@touch $@

CLEAN_DIRS := $(addsuffix .clean,$(LAB_DIRS) $(TOOL_DIRS) slides)
.PHONY: $(CLEAN_DIRS)
clean: $(CLEAN_DIRS)                           ## remove what make built
	rm -rf build reports
$(CLEAN_DIRS):
	@$(MAKE) --no-print-directory -C $(basename $@) clean >/dev/null

help:                                          ## this list
	@echo "CUDA Stream Labs -- make targets:"
	@grep -E '^[a-z-]+:.*## ' $(firstword $(MAKEFILE_LIST)) | \
	 sed -E 's/^([a-z-]+):.*## (.*)/  make \1\t\2/' | expand -t 24
	@echo "options: V=1 (show commands), CUDA_ARCH=90, NVTX=0, LAB=NN, REPORT=tap|junit"
	@echo "in a lab folder: make, make run, make check, make trace"
