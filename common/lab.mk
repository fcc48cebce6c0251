# common/lab.mk -- builds, runs, checks and traces one lab program.
#
# Each lab folder (labs/NN-x, solutions/NN-x) has a three-line Makefile that
# sets LAB and PROG and includes this file. The source is PROG.cu, or SRC
# where the Makefile names one: a Python lab (SRC := streams.py) "builds"
# ./PROG, a launcher that runs the source with a python3 that has torch
# (common/pylab.sh), after Python has compiled the source once (its syntax
# errors and warnings are the build's). KIT_ROOT may be overridden when a
# copy of the folder is built elsewhere (the kit's self-test does that).
#
#   make            build ./$(PROG)             make V=1    show the commands
#   make run        build and run it            make ARGS="--n 1000" run
#   make check      run the lab's checks        make trace  timeline of a run
#   make NVTX=0     build with NVTX ranges compiled out
#   make CUDA_ARCH=90   build for one compute capability (default: this GPU's)

KIT_ROOT ?= ../..
.DEFAULT_GOAL := all
include $(KIT_ROOT)/common/cuda.mk

.DELETE_ON_ERROR:
.PHONY: all run check trace clean help tools

SRC ?= $(PROG).cu

all: $(PROG)

ifeq ($(suffix $(SRC)),.py)
PYTHON3 ?= python3
$(PROG): $(SRC) $(KIT_ROOT)/common/pylab.sh
	$(call say,PY,$(notdir $(CURDIR))/$@)$(PYTHON3) -c 'import sys; f = sys.argv[1]; compile(open(f).read(), f, "exec")' $<
	$(Q)sed 's/@SRC@/$(SRC)/g' $(KIT_ROOT)/common/pylab.sh >$@ && chmod +x $@
else
# -lpthread: lab 07's host threads (in glibc's libc since 2.34, in
# libpthread before; naming it costs nothing where it is in libc).
$(PROG): $(SRC) $(wildcard $(KIT_ROOT)/common/*.h) | nvcc-present
	$(call say,NVCC,$(notdir $(CURDIR))/$@)$(NVCC) $(NVCCFLAGS) -I$(KIT_ROOT)/common -o $@ $< -lpthread
endif

run: $(PROG)
	./$(PROG) $(ARGS)

# The checker's tools (trace, stress, digests): built without a word unless
# their build fails, so that make check starts with the results.
tools:
	@$(MAKE) --no-print-directory -C $(KIT_ROOT) tools-quiet

# run-checks exits 3 when the checks that need a GPU were skipped (it says
# so): not an error of the student's build, so make exits 0.
check: tools
	@$(KIT_ROOT)/checker/run-checks --dir $(CURDIR) $(LAB); rc=$$?; [ $$rc = 3 ] || exit $$rc

# The timeline and summary show TRACE_WINDOW, the part of the run that
# teaches the lab (its Makefile sets it; streamtrace help says how);
# `make trace TRACE_WINDOW=` shows the whole run, and so does a run without
# the window's NVTX ranges. $(PROG).json is always the whole run.
ST_CLI := $(KIT_ROOT)/checker/trace/streamtrace
trace: $(PROG) tools
	@$(ST_CLI) run -o $(PROG).trace -- ./$(PROG) $(ARGS); \
	 [ -f $(PROG).trace ] || exit 1; \
	 { $(ST_CLI) timeline $(TRACE_WINDOW) $(PROG).trace && \
	   $(ST_CLI) summary $(TRACE_WINDOW) $(PROG).trace; } || \
	 { echo "(the whole run instead)"; $(ST_CLI) timeline $(PROG).trace && \
	   $(ST_CLI) summary $(PROG).trace; } && \
	 $(ST_CLI) json $(PROG).trace -o $(PROG).json && \
	 echo "wrote $(PROG).trace and $(PROG).json (open it in ui.perfetto.dev)"

clean:
	rm -f $(PROG) $(PROG).trace $(PROG).json

help:
	@echo "make            build ./$(PROG)"
	@echo "make run        build and run it (ARGS=\"...\" passes options)"
	@echo "make check      check it: results and what the GPU actually did"
	@echo "make trace      run it under the trace tool: timeline, $(PROG).json"
	@echo "                (TRACE_WINDOW=\"...\" picks the part shown; empty: all)"
	@echo "make clean      remove what make built"
	@echo "options: V=1 (show commands), NVTX=0, CUDA_ARCH=90"
