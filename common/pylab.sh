#!/bin/sh
# Made by `make` from @SRC@ (common/lab.mk, common/pylab.sh): runs @SRC@
# with the first python3 that has torch -- LAB_PYTHON if set, python3 on
# PATH, /usr/bin/python3 -- so that `./PROG`, make check and make trace run
# it the way the C labs run their programs. Where no python3 has torch,
# @SRC@ itself says "no usable CUDA device: import torch failed" (exit 77).
here=$(dirname "$0")
# LAB_PYCACHE: a folder of torch's modules compiled ahead of the run (the
# kit's grader makes one where torch is installed without them).
[ -n "${LAB_PYCACHE:-}" ] && [ -d "$LAB_PYCACHE" ] && export PYTHONPYCACHEPREFIX="$LAB_PYCACHE"
has_torch='import importlib.util as u, sys; sys.exit(u.find_spec("torch") is None)'
for py in ${LAB_PYTHON:-} python3 /usr/bin/python3; do
    command -v "$py" >/dev/null 2>&1 && "$py" -c "$has_torch" 2>/dev/null &&
        exec "$py" "$here/@SRC@" "$@"
done
command -v python3 >/dev/null 2>&1 && exec python3 "$here/@SRC@" "$@"
echo "no usable CUDA device: no python3 found to run @SRC@" >&2
exit 77
