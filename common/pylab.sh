#!/bin/sh
# Made by `make` from @SRC@ (common/lab.mk, common/pylab.sh): runs @SRC@
# with the first python3 that has torch -- LAB_PYTHON if set, python3 on
# PATH, /usr/bin/python3 -- so that `./PROG`, make check and make trace run
# it the way the C labs run their programs. Where no python3 has torch,
# @SRC@ itself says "no usable CUDA device: import torch failed" (exit 77).
here=$(dirname "$0")
# LAB_PYCACHE: a folder of torch's modules compiled ahead of the run (the
# kit's grader makes one where torch is installed without them). Without it,
# where torch has no compiled modules beside it (installed with pip
# --no-compile, or under PYTHONDONTWRITEBYTECODE=1), every run would compile
# them again (import torch 3.7 s, 1.8 s compiled, on an H200 node): the
# first run compiles them into the user's cache folder, the next read them.
# The probe: 0 torch with its compiled modules, 3 torch without, 1 no torch.
[ -n "${LAB_PYCACHE:-}" ] && [ -d "$LAB_PYCACHE" ] && export PYTHONPYCACHEPREFIX="$LAB_PYCACHE"
has_torch='import importlib.util as u, os, sys
s = u.find_spec("torch")
sys.exit(1 if s is None else 0 if not s.origin or os.path.exists(u.cache_from_source(s.origin)) else 3)'
for py in ${LAB_PYTHON:-} python3 /usr/bin/python3; do
    command -v "$py" >/dev/null 2>&1 || continue
    env -u PYTHONPYCACHEPREFIX "$py" -c "$has_torch" 2>/dev/null
    case $? in
        0) exec "$py" "$here/@SRC@" "$@" ;;
        3) if [ -z "${PYTHONPYCACHEPREFIX:-}" ]; then
               c=${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/cuda-stream-labs/pycache
               if mkdir -p "$c" 2>/dev/null && [ -w "$c" ]; then
                   export PYTHONPYCACHEPREFIX="$c"
                   unset PYTHONDONTWRITEBYTECODE
               fi
           fi
           exec "$py" "$here/@SRC@" "$@" ;;
    esac
done
command -v python3 >/dev/null 2>&1 && exec python3 "$here/@SRC@" "$@"
echo "no usable CUDA device: no python3 found to run @SRC@" >&2
exit 77
