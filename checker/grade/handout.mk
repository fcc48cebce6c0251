# Makefile -- CUDA Stream Labs. `make help` lists the targets.
#
# Each lab folder has its own Makefile (common/lab.mk); this one builds and
# checks them all. Quiet by default: V=1 shows the commands.

.DEFAULT_GOAL := all
include common/cuda.mk
.DELETE_ON_ERROR:

all: labs tools                                ## build every lab and the checker's tools

# labs, tools, check, slides, trace, deps, clean, help (common/top.mk)
include common/top.mk

# Bats: the pinned copy (make deps), else the machine's own bats.
bats:
	@[ -x $(BATS_VENDOR) ] || command -v bats >/dev/null || $(MAKE) --no-print-directory deps

define HELP_MORE
@echo "options: V=1 (show commands), CUDA_ARCH=90, NVTX=0, LAB=NN, REPORT=tap|junit"
@echo "in a lab folder: make, make run, make check, make trace"
endef
