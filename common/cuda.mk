# common/cuda.mk -- where nvcc is, which GPU to build for, and the flags.
# Included by the top-level Makefile and by common/lab.mk.

include $(dir $(lastword $(MAKEFILE_LIST)))quiet.mk
include $(dir $(lastword $(MAKEFILE_LIST)))cuda-root.mk

# The GPU that is present (compute capability from the driver) keeps a
# student's build fast; with no GPU, a list that covers recent GPUs, so that
# CI and laptops still compile everything. CUDA_ARCH=90 overrides both.
ifeq ($(origin CUDA_ARCH),undefined)
CUDA_ARCH := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null \
	| head -n 1 | grep -E '^[0-9]+\.[0-9]+$$' | tr -d .)
export CUDA_ARCH
endif
FALLBACK_ARCHS := 75 80 86 89 90 100 120
ifneq ($(strip $(CUDA_ARCH)),)
ARCH_FLAGS := -arch=sm_$(CUDA_ARCH)
else
ARCH_FLAGS := $(foreach a,$(FALLBACK_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
	-gencode arch=compute_120,code=compute_120
endif

NVCCFLAGS ?= -O2 -lineinfo $(ARCH_FLAGS) -Xcompiler -Wall,-Wextra

# Programs link the shared CUDA runtime, so that checker/stress can stand
# between a program and the runtime (LD_PRELOAD); the rpath to the runtime's
# folder (CUDA_LIBDIR, from cuda-root.mk) lets them run without LD_LIBRARY_PATH.
NVCCFLAGS += -cudart shared $(if $(CUDA_LIBDIR),-Xlinker -rpath=$(CUDA_LIBDIR))
ifeq ($(NVTX),0)
NVCCFLAGS += -DLAB_NVTX=0
endif

.PHONY: nvcc-present
nvcc-present:
	@$(if $(NVCC),true,echo "nvcc not found: put it on PATH, or set CUDA_HOME (tried $(CUDA_HOME)/bin/nvcc)" >&2; exit 1)
