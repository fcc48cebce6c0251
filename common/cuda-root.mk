# common/cuda-root.mk -- where nvcc and its toolkit are. Included by
# common/cuda.mk, and by checker/trace/Makefile (whose CLI builds without CUDA).
#
#   NVCC         nvcc from PATH, else $(CUDA_HOME)/bin/nvcc; empty when none
#   CUDA_TOP     the toolkit's folder as nvcc itself reports it (TOP in its
#                dry run), so that an nvcc on PATH that is a wrapper script
#                (/usr/local/bin/nvcc running /usr/local/cuda-13.0/bin/nvcc)
#                still leads to the toolkit; else the folder above nvcc's bin/
#   CUDA_TARGETS its targets/ folders for this machine (x86_64 or sbsa)
#   CUDA_INCDIR  the folder that holds cuda.h (empty when none is found)
#   CUDA_LIBDIR  the folder that holds libcudart.so (empty when none is found)
#
# Worked out once and exported, so the recursive makes do not ask nvcc again.

CUDA_HOME ?= /usr/local/cuda
ifeq ($(origin NVCC),undefined)
NVCC := $(or $(shell command -v nvcc 2>/dev/null),$(wildcard $(CUDA_HOME)/bin/nvcc))
endif

ifeq ($(origin CUDA_TOP),undefined)
CUDA_TOP := $(if $(NVCC),$(realpath $(shell $(NVCC) -dryrun -x cu -c /dev/null -o /dev/null \
	2>&1 | sed -n 's/^#\$$ TOP=//p' | head -n 1)))
CUDA_TOP := $(or $(CUDA_TOP),$(if $(NVCC),$(patsubst %/bin/nvcc,%,$(realpath $(NVCC)))))
export CUDA_TOP
endif

# cuda_dir_of FILE,DIRS: the first of DIRS that holds FILE (none without a toolkit)
cuda_dir_of = $(if $(CUDA_TOP),$(patsubst %/,%,$(dir $(firstword $(wildcard $(addsuffix /$(1),$(2)))))))
CUDA_TARGETS := $(addprefix $(CUDA_TOP)/targets/,$(shell uname -m)-linux sbsa-linux)
CUDA_INCDIR := $(call cuda_dir_of,cuda.h,$(CUDA_TOP)/include $(addsuffix /include,$(CUDA_TARGETS)))
CUDA_LIBDIR := $(call cuda_dir_of,libcudart.so,$(CUDA_TOP)/lib64 $(CUDA_TOP)/lib \
	$(addsuffix /lib,$(CUDA_TARGETS)))
