# common/quiet.mk -- one line a build step, or with V=1 the commands.
# Included by common/cuda.mk (labs, tools, tests) and checker/trace/Makefile.
#
#   $(call say,NVCC,labs/01-sync-copy/sync_copy)$(NVCC) ...
#
# prints "  NVCC    labs/01-sync-copy/sync_copy" and runs the command quietly;
# with V=1 it prints nothing itself and make shows the command. Q is "@"
# (or "" with V=1) for a recipe line that only runs.
Q := $(if $(filter 1,$(V)),,@)
say = $(if $(Q),@printf '  %-7s %s\n' '$(strip $(1))' '$(strip $(2))';)
