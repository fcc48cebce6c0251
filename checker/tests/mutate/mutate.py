#!/usr/bin/env python3
"""mutate.py -- mutation testing of the labs' checkers (make mutate).

Generates mutants mechanically from each lab's solution with the operators of
cuda.rules / python.rules (one mutant per rule and place), builds them, and
on a GPU runs each through its lab's checker, several at once, as the grader
does. Then, per lab: generated, built, killed (by which check), set aside
(did not build; changed no line of output and no record of the trace),
equivalent (listed in equivalent.txt with the reason), survived. Each
variant is checked three times (--runs): a check kills a mutant only where
it failed in all three; one killed in some runs only is "unstable".

  mutate.py run [--labs "01 07"] [--jobs N] [--runs N] [--out DIR] [--only "m-ID ..."]
                                      the whole thing (make mutate [LAB=..] [JOBS=..] [RUNS=..])
  mutate.py generate [LABS] [--out DIR]   the mutants, counted by rule; no build
  mutate.py classify [--labs ...] [--out DIR]   judge again what a run left in DIR
  mutate.py normalize FILE.trace          what "changed nothing" compares of a run

Exit status of run: 0 every mutant killed or set aside or listed as
equivalent; 1 a mutant survived or was unstable (or a listed equivalent was killed: the list
is stale); 2 a bad command line; 3 not graded (no GPU: generated and built,
not run). Standard library only.
"""

import argparse
import concurrent.futures
import difflib
import gzip
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KIT_ROOT = os.path.abspath(os.path.join(HERE, '..', '..', '..'))
EQUIVALENT = os.path.join(HERE, 'equivalent')   # a LAB.tsv each
SEED = '20261126'          # every run of a lab gets the same input: digests compare

# ---------------------------------------------------------------- rules

BAL0 = r'[^()]*'
BAL1 = r'(?:[^()]|\(' + BAL0 + r'\))*'
BAL2 = r'(?:[^()]|\(' + BAL1 + r'\))*'
BAL3 = r'(?:[^()]|\(' + BAL2 + r'\))*'
BUILTIN = {
    # one argument: no top-level comma, semicolon or >>>, parentheses balanced
    'ARG': r'(?:[^(),;<>]|->|<(?!<<)|>(?!>>)|\(' + BAL2 + r'\))+',
    'ARGS': BAL3,
}
SPECIAL_STREAMS = {'0', 'NULL', 'cudaStreamPerThread', 'cudaStreamLegacy'}


class Rule:
    def __init__(self, name, pattern, replacement, lineno):
        self.name, self.pattern, self.replacement = name, pattern, replacement
        self.lineno = lineno


def expand(text, macros):
    """Replace each {NAME} of macros in text (macros may use earlier ones)."""
    def one(m):
        return macros[m.group(1)] if m.group(1) in macros else m.group(0)
    for _ in range(4):
        text = re.sub(r'\{([A-Z_]+)\}', one, text)
    return text


def load_rules(path):
    """Parse a rules file: (stream patterns, rules, calls whose arguments
    are not mutated), patterns macro-expanded but {STREAMS} left for later
    (it depends on the program)."""
    macros = dict(BUILTIN)
    streams, rules, skip = [], [], set()
    with open(path, encoding='utf-8') as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip('\n')
            if not line.strip() or line.lstrip().startswith('#'):
                continue
            m = re.match(r'define\s+([A-Z_]+)\s*=\s*(.*)$', line)
            if m:
                macros[m.group(1)] = expand(m.group(2).strip(), macros)
                continue
            m = re.match(r'streams:\s*(.*)$', line)
            if m:
                streams.append(expand(m.group(1).strip(), macros))
                continue
            m = re.match(r'not-in:\s*(.*)$', line)
            if m:
                skip.update(m.group(1).split())
                continue
            m = re.match(r'([a-z0-9-]+)\s+(.*?)\s*==>\s?(.*)$', line)
            if not m:
                raise SystemExit('%s:%d: not a rule: %s' % (path, lineno, line))
            rules.append(Rule(m.group(1), expand(m.group(2), macros),
                              m.group(3).strip(), lineno))
    for p in streams + [r.pattern for r in rules]:
        try:
            re.compile(p.replace('{STREAMS}', 'x'), re.M)
        except re.error as e:
            raise SystemExit('%s: a pattern does not compile (%s): %s' % (path, e, p))
    return streams, rules, skip


# ---------------------------------------------------------------- source

def masked_spans(text, lang):
    """The comments and string literals of text: [(start, end)]."""
    spans, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if lang == 'c' and text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
        elif lang == 'c' and text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
        elif lang == 'py' and c == '#':
            j = text.find('\n', i)
            j = n if j < 0 else j
        elif lang == 'py' and (text.startswith('"""', i) or text.startswith("'''", i)):
            j = text.find(text[i:i + 3], i + 3)
            j = n if j < 0 else j + 3
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
        else:
            i += 1
            continue
        spans.append((i, j))
        i = j
    return spans


def in_spans(pos, spans):
    lo, hi = 0, len(spans)
    while lo < hi:
        mid = (lo + hi) // 2
        if spans[mid][1] <= pos:
            lo = mid + 1
        else:
            hi = mid
    return lo < len(spans) and spans[lo][0] <= pos < spans[lo][1]


def code_of(line, lang):
    """A line without its comment and trailing blanks (for statement ends)."""
    if lang == 'c':
        line = re.sub(r'/\*.*?\*/', '', line)
        line = re.sub(r'//.*$', '', line)
    else:
        line = re.sub(r'#.*$', '', line)
    return line.rstrip()


def functions(text, lang):
    """The top-level functions of text: [(start, end)] character ranges. C: a
    `{` at the start of a line to the next `}` at the start of a line (the
    kit's style); Python: a `def` to the next line as little indented."""
    out = []
    if lang == 'c':
        for m in re.finditer(r'^\{\n(?:.*\n)*?\}\n?', text, re.M):
            sig = text.rfind('\n\n', 0, m.start())
            out.append((sig + 1 if sig >= 0 else 0, m.end()))
    else:
        lines = text.split('\n')
        pos, starts = 0, []
        for ln in lines:
            starts.append(pos)
            pos += len(ln) + 1
        for k, ln in enumerate(lines):
            m = re.match(r'([ \t]*)def\s', ln)
            if not m:
                continue
            ind, e = len(m.group(1)), len(lines)
            for j in range(k + 1, len(lines)):
                s = lines[j]
                if s.strip() and not s.lstrip().startswith('#') and \
                        len(s) - len(s.lstrip()) <= ind:
                    e = j
                    break
            out.append((starts[k], starts[e] if e < len(lines) else len(text)))
    return out


def function_of(pos, funcs):
    """The innermost function holding pos (None: file scope)."""
    best = None
    for f in funcs:
        if f[0] <= pos < f[1] and (best is None or f[0] >= best[0]):
            best = f
    return best


def line_starts(text):
    starts = [0]
    for m in re.finditer('\n', text):
        starts.append(m.end())
    return starts


def statement_lines(text, start, end):
    """The line numbers (0-based, inclusive) that the span covers."""
    starts = line_starts(text)
    first = max(k for k, s in enumerate(starts) if s <= start)
    last = max(k for k, s in enumerate(starts) if s < max(end, start + 1))
    return first, last


BLOCK_STOP = re.compile(r'^\s*(return|break|continue|goto|case\b|default\s*:)')


def neighbour(lines, first, last, step, lang):
    """The statement before (step -1) or after (step 1) lines first..last, as
    (first, last), or None where a brace, a block, a return or a label stands
    between (a move stays inside its block)."""
    def blank(k):
        return not code_of(lines[k], lang).strip()
    ind = len(lines[first]) - len(lines[first].lstrip())
    if step < 0:
        k = first - 1
        while k >= 0 and blank(k):
            k -= 1
        if k < 0:
            return None
        end = k
        if lang == 'py':
            if len(lines[k]) - len(lines[k].lstrip()) != ind or code_of(lines[k], lang).endswith(':'):
                return None
            return (k, k) if not BLOCK_STOP.match(lines[k]) else None
        if not code_of(lines[k], lang).endswith(';'):
            return None
        while k - 1 >= 0 and not blank(k - 1) and \
                not re.search(r'[;{}:]$', code_of(lines[k - 1], lang)) and \
                not lines[k - 1].lstrip().startswith('#'):
            k -= 1
        if BLOCK_STOP.match(lines[k]) or re.match(r'\s*(for|while|if|else|do)\b', lines[k]):
            return None
        if len(lines[k]) - len(lines[k].lstrip()) != ind:
            return None
        return (k, end)
    k = last + 1
    while k < len(lines) and blank(k):
        k += 1
    if k >= len(lines):
        return None
    if lang == 'py':
        if len(lines[k]) - len(lines[k].lstrip()) != ind or code_of(lines[k], lang).endswith(':'):
            return None
        return (k, k) if not BLOCK_STOP.match(lines[k]) else None
    if len(lines[k]) - len(lines[k].lstrip()) != ind or BLOCK_STOP.match(lines[k]) or \
            re.match(r'\s*(for|while|if|else|do|#)\b', lines[k]) or \
            re.search(r'[{}]', code_of(lines[k], lang)):
        return None
    s = k
    while k < len(lines) and not code_of(lines[k], lang).endswith(';'):
        if re.search(r'[{}]', code_of(lines[k], lang)):
            return None
        k += 1
    return (s, k) if k < len(lines) else None


def moved(text, m, step, lang):
    """text with the statement of match m swapped with its neighbour, or None."""
    lines = text.split('\n')
    first, last = statement_lines(text, m.start(), m.end())
    while last > first and not lines[last].strip():
        last -= 1
    nb = neighbour(lines, first, last, step, lang)
    if nb is None:
        return None
    a, b = ((nb[0], nb[1]), (first, last)) if step < 0 else ((first, last), (nb[0], nb[1]))
    # a before b: the lines between (blanks, comments) stay where they are
    new = lines[:a[0]] + lines[b[0]:b[1] + 1] + lines[a[1] + 1:b[0]] + \
        lines[a[0]:a[1] + 1] + lines[b[1] + 1:]
    return '\n'.join(new)


# ---------------------------------------------------------------- generation

class Mutant:
    def __init__(self, rule, line, before, after, text):
        self.rule, self.line, self.before, self.after, self.text = rule, line, before, after, text
        self.id = None

    def key(self):
        norm = lambda s: ' '.join(s.split())
        return '%s\0%s\0%s' % (self.rule, norm(self.before), norm(self.after))


def lang_of(src):
    return 'py' if src.endswith('.py') else 'c'


def rules_for(lang):
    return os.path.join(HERE, 'python.rules' if lang == 'py' else 'cuda.rules')


def stream_table(text, lang, stream_patterns, spans, funcs):
    """Each function's stream expressions, in order of first use:
    {function (start, end) or None: [expr]}."""
    table = {}
    for p in stream_patterns:
        for m in re.finditer(p, text, re.M):
            if in_spans(m.start('s'), spans):
                continue
            s = ' '.join(m.group('s').split())
            f = function_of(m.start('s'), funcs)
            table.setdefault(f, [])
            if s not in table[f]:
                table[f].append(s)
    return table


def generate(src_path):
    """Every mutant of one source file: [Mutant], with ids; and the counts
    {'places': ..., 'no-op': ..., 'duplicate': ...}."""
    lang = lang_of(src_path)
    with open(src_path, encoding='utf-8') as f:
        text = f.read()
    stream_patterns, rules, skip_calls = load_rules(rules_for(lang))
    legacy = lang == 'c' and not re.search(r'--default-stream[ =]per-thread', text_of_build(src_path))
    spans = masked_spans(text, lang)
    funcs = functions(text, lang)
    table = stream_table(text, lang, stream_patterns, spans, funcs)
    # {STREAMS}: every stream expression but 0 and NULL (which would match
    # any zero argument: the rules name the places where 0 is a stream)
    every = sorted({s for v in table.values() for s in v if s not in ('0', 'NULL')} |
                   {'cudaStreamPerThread', 'cudaStreamLegacy'}, key=len, reverse=True)
    streams_re = '|'.join(re.escape(s).replace(r'\ ', r'\s*') for s in every) or r'(?!x)x'
    starts = line_starts(text)
    out, counts = [], {'places': 0, 'no-op': 0, 'duplicate': 0}
    seen = {text}
    for rule in rules:
        pattern = re.compile(rule.pattern.replace('{STREAMS}', '(?:%s)' % streams_re), re.M)
        for m in pattern.finditer(text):
            first = m.start() + len(m.group(0)) - len(m.group(0).lstrip())
            at = m.start('s') if 's' in pattern.groupindex and m.group('s') is not None else m.start()
            if in_spans(first, spans) or call_of(text, at, spans) in skip_calls:
                continue
            if 's' in pattern.groupindex and m.group('s') is not None:
                s = ' '.join(m.group('s').split())
                if in_spans(m.start('s'), spans):
                    continue
                mine = table.get(function_of(m.start('s'), funcs), [])
                # a stream variable only where this function uses it as one
                if s not in SPECIAL_STREAMS and s not in mine:
                    continue
                others = [o for o in mine if o != s and o not in SPECIAL_STREAMS]
            else:
                s, others = None, []
            counts['places'] += 1
            line = max(k for k, st in enumerate(starts) if st <= m.start()) + 1
            if rule.replacement in ('@earlier', '@later'):
                new_text = moved(text, m, -1 if rule.replacement == '@earlier' else 1, lang)
                if new_text is None:
                    counts['no-op'] += 1
                    continue
                variants = [new_text]
            else:
                reps = [rule.replacement]
                if '{OTHER_STREAM}' in rule.replacement:
                    reps = [rule.replacement.replace('{OTHER_STREAM}', o.replace('\\', r'\\'))
                            for o in others]
                    if not reps:
                        counts['no-op'] += 1
                        continue
                variants = [text[:m.start()] + m.expand(r) + text[m.end():] for r in reps]
            for new_text in variants:
                # built with the legacy default stream, cudaStreamLegacy is 0
                same = new_text.replace('cudaStreamLegacy', '0') if legacy else new_text
                if same in seen:
                    counts['no-op' if same == text else 'duplicate'] += 1
                    continue
                seen.add(same)
                before, after = changed_lines(text, new_text)
                out.append(Mutant(rule.name, line, before, after, new_text))
    # ids: a hash of the rule and the lines it changed, the same whatever
    # else in the file moves; a repeat of the same change gets .2, .3, ...
    repeats = {}
    for mu in out:
        h = hashlib.sha1(mu.key().encode()).hexdigest()[:8]
        repeats[h] = repeats.get(h, 0) + 1
        mu.id = h if repeats[h] == 1 else '%s.%d' % (h, repeats[h])
    return out, counts


def text_of_build(src_path):
    """The Makefile beside a source and the kit's common build rules: how
    the lab is compiled (with --default-stream per-thread or not)."""
    text = ''
    for p in (os.path.join(os.path.dirname(src_path), 'Makefile'),
              os.path.join(KIT_ROOT, 'common', 'cuda.mk'), os.path.join(KIT_ROOT, 'common', 'lab.mk')):
        try:
            with open(p, encoding='utf-8') as f:
                text += f.read()
        except OSError:
            pass
    return text


def call_of(text, pos, spans):
    """The name of the call whose parentheses hold pos ('' at none; 'def'
    for a Python function's parameters)."""
    depth, i = 0, pos - 1
    while i >= 0:
        c = text[i]
        if in_spans(i, spans):
            i -= 1
            continue
        if c == ')':
            depth += 1
        elif c == '(':
            if depth == 0:
                m = re.search(r'(\bdef\s+)?([A-Za-z_][\w.]*)\s*$', text[:i])
                return ('def' if m.group(1) else m.group(2)) if m else ''
            depth -= 1
        elif c in ';{}':
            return ''
        i -= 1
    return ''


def changed_lines(a, b):
    """The lines of a that b changes, and what b has in their place."""
    sm = difflib.SequenceMatcher(None, a.split('\n'), b.split('\n'), autojunk=False)
    al, bl = a.split('\n'), b.split('\n')
    before, after = [], []
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op != 'equal':
            before += al[i1:i2]
            after += bl[j1:j2]
    return '\n'.join(before), '\n'.join(after)


def unified(src, a, b):
    return ''.join(difflib.unified_diff(a.splitlines(True), b.splitlines(True),
                                        'a/' + src, 'b/' + src, n=2))


# ---------------------------------------------------------------- labs

def labs():
    return sorted(f[:-5] for f in os.listdir(os.path.join(KIT_ROOT, 'checker'))
                  if re.match(r'\d\d-.*\.bats$', f))


def pick_labs(spec):
    all_ = labs()
    if not spec:
        return all_
    out = []
    for want in re.split(r'[\s,]+', spec.strip()):
        hit = [l for l in all_ if l == want or l.startswith(want + '-')]
        if not want or not hit:
            raise SystemExit('mutate: no lab "%s" (the labs: %s)' % (want, ' '.join(all_)))
        out.append(hit[0])
    return out


def makefile_var(lab, name):
    with open(os.path.join(KIT_ROOT, 'solutions', lab, 'Makefile')) as f:
        for line in f:
            m = re.match(r'%s\s*:=\s*(\S+)' % name, line)
            if m:
                return m.group(1)
    return None


def src_of(lab):
    return makefile_var(lab, 'SRC') or makefile_var(lab, 'PROG') + '.cu'


def kit_mutants(lab, d):
    """The kit's own mutants of lab (checker/tests/mutants/LAB/*.patch), each
    applied to a copy of d/solution as d/k-NAME: [(name, expected check,
    GPUs it needs, applied)]."""
    out = []
    mdir = os.path.join(KIT_ROOT, 'checker', 'tests', 'mutants', lab)
    for f in sorted(os.listdir(mdir)) if os.path.isdir(mdir) else []:
        if not f.endswith('.patch'):
            continue
        with open(os.path.join(mdir, f), encoding='utf-8') as fh:
            head = fh.read().split('\n')[:5]
        expect = next((l[len('# expect: '):] for l in head if l.startswith('# expect: ')), '')
        gpus = next((int(m.group(1)) for l in head for m in [re.match(r'# needs: (\d+) GPUs$', l)] if m), 1)
        v = os.path.join(d, 'k-' + f[:-6])
        shutil.copytree(os.path.join(d, 'solution'), v)
        with open(os.path.join(mdir, f), 'rb') as fh:
            ok = subprocess.run(['patch', '-s', '-F0', '-p1', '-d', v], stdin=fh,
                                capture_output=True).returncode == 0
        out.append(('k-' + f[:-6], expect, gpus, ok))
    return out


def write_lab(lab, out):
    """Generate lab's mutants into out/LAB/m-ID (Makefile, source,
    mutant.txt, mutant.patch); the solution into out/LAB/solution. Returns
    (mutants, counts)."""
    src = src_of(lab)
    sol = os.path.join(KIT_ROOT, 'solutions', lab)
    d = os.path.join(out, lab)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    mutants, counts = generate(os.path.join(sol, src))
    with open(os.path.join(sol, src), encoding='utf-8') as f:
        orig = f.read()
    for name, text in [('solution', orig)] + [('m-' + m.id, m.text) for m in mutants]:
        v = os.path.join(d, name)
        os.makedirs(v)
        shutil.copy(os.path.join(sol, 'Makefile'), v)
        with open(os.path.join(v, src), 'w', encoding='utf-8') as f:
            f.write(text)
    with open(os.path.join(d, 'mutants.tsv'), 'w', encoding='utf-8') as f:
        for m in mutants:
            f.write('%s\tm-%s\t%s\t%d\t%s\t%s\n' % (lab, m.id, m.rule, m.line,
                    ' '.join(m.before.split()), ' '.join(m.after.split())))
            v = os.path.join(d, 'm-' + m.id)
            with open(os.path.join(v, 'mutant.patch'), 'w', encoding='utf-8') as p:
                p.write('# rule: %s, line %d\n' % (m.rule, m.line))
                p.write(unified(src, orig, m.text))
    return mutants, counts


# ---------------------------------------------------------------- build

def nvidia_gpus():
    """How many GPUs this machine shows (nvidia-smi), 0 without a driver."""
    try:
        r = subprocess.run(['nvidia-smi', '--query-gpu=compute_cap', '--format=csv,noheader'],
                           capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return len(re.findall(r'^\d+\.\d+$', r.stdout, re.M)) if r.returncode == 0 else 0


def build_one(v, arch):
    cmd = ['make', '--no-print-directory', '-C', v, 'KIT_ROOT=' + KIT_ROOT]
    if arch:
        cmd.append('CUDA_ARCH=' + arch)
    with open(os.path.join(v, 'build.log'), 'w') as log:
        try:
            rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=600).returncode
        except subprocess.TimeoutExpired:
            rc = 124
    with open(os.path.join(v, 'build.rc'), 'w') as f:
        f.write('%d\n' % rc)
    return rc == 0


# ---------------------------------------------------------------- runs

def checker_env(keep):
    env = {k: v for k, v in os.environ.items() if not k.startswith('BATS_')}
    env.update(KEEP_RUNS=keep, LAB_SEED=SEED, NO_COLOR='1')
    # eight checkers at once already: each one's checks one after another
    # (run-checks, CHECK_JOBS), unless the caller says otherwise
    env.setdefault('CHECK_JOBS', '1')
    return env


def run_name(n, k):
    """The folder of variant n's k-th run (make mutate --runs): n itself for
    the first, n@K for the others."""
    return n if k == 1 else '%s@%d' % (n, k)


def check_one(lab, v):
    """Run lab's checker on the variant in folder v; its TAP in v/checks.tap,
    its runs kept in v/runs. Returns (failed checks, skipped reasons, ok count)."""
    keep = os.path.join(v, 'runs')
    shutil.rmtree(keep, ignore_errors=True)
    with open(os.path.join(v, 'checks.log'), 'w') as log:
        subprocess.run([os.path.join(KIT_ROOT, 'checker', 'run-checks'), '--dir', v,
                        '--tap-out', os.path.join(v, 'checks.tap'), lab],
                       stdout=log, stderr=subprocess.STDOUT, env=checker_env(keep))
    return read_tap(os.path.join(v, 'checks.tap'))


def read_tap(path):
    failed, skipped, ok = [], [], 0
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            for line in f:
                m = re.match(r'not ok \d+ (.*)$', line.rstrip('\n'))
                if m:
                    failed.append(m.group(1))
                    continue
                m = re.match(r'ok \d+ (.*?)(?: # skip ?(.*))?$', line.rstrip('\n'))
                if m and m.group(2) is not None:
                    skipped.append(m.group(2))
                elif m:
                    ok += 1
    except OSError:
        pass
    return failed, skipped, ok


def kept_runs(v):
    """{run name: path prefix} of the runs a checker kept for variant v (in
    v/runs/LAB.PID/), or of a fixture (NAME.rc, NAME.out, NAME.trace[.gz] in
    v itself)."""
    out = {}
    base = os.path.join(v, 'runs')
    if not os.path.isdir(base):
        if os.path.isdir(v):
            for f in sorted(os.listdir(v)):
                if f.endswith('.rc'):
                    out[f[:-3]] = os.path.join(v, f[:-3])
        return out
    for d in sorted(os.listdir(base)):
        if not os.path.isdir(os.path.join(base, d)):
            continue            # event-times.txt
        for f in os.listdir(os.path.join(base, d)):
            if f.endswith('.rc'):
                out.setdefault(f[:-3], os.path.join(base, d, f[:-3]))
    return out


# ---------------------------------------------------------------- "changed nothing"

POLLS = {'cudaEventQuery', 'cudaStreamQuery', 'cudaGetLastError', 'cudaPeekAtLastError',
         'cudaGetDevice'}


RELEASES = {'cudaFree', 'cudaFreeHost', 'cudaStreamDestroy', 'cudaEventDestroy',
            'cudaHostUnregister', 'cudaGraphDestroy', 'cudaGraphExecDestroy'}


def normalize_trace(path, teardown=True):
    """What a run did, without its times: per host thread, in order, each
    runtime call with what it queued (kind, direction, bytes, memory kinds,
    stream, device) and the NVTX ranges around the calls. Threads and streams
    are named by what they did, not by their ids; repeats of a polling call
    count once. teardown=False: without the calls that only give memory,
    streams and events back after a thread's last GPU work or wait (what a
    process gets back when it exits anyway). Returns a list of lines."""
    try:
        with open_run(path) as f:
            rows = [l.rstrip('\n').split('\t') for l in f]
    except OSError:
        return ['(no trace)']
    version = rows[0][0].split()[-1] if rows and rows[0] and rows[0][0].startswith('streamtrace') else '?'
    dev = version != '1'
    kinds, by_corr = {}, {}
    calls, marks = [], []
    for r in rows:
        t = r[0]
        if t == 'stream':
            kinds[r[1]] = r[2] + ('/' + r[4] if len(r) > 4 and r[4] != '-' else '')
        elif t in ('copy', 'kernel', 'memset', 'sync'):
            o = 1 if dev else 0             # format 1 has no DEVICE field
            d, s = (r[3], r[4]) if dev else ('0', r[3])
            f = r[4 + o:]
            if t == 'copy':                 # DIR BYTES SRC DST ASYNC [PEER VIA] CORR
                what = 'copy %s %s %s>%s async=%s' % tuple(f[0:5])
                if dev and len(f) >= 8:
                    what += ' peer=%s via=%s' % (f[5], f[6])
                corr = f[-1]
            elif t == 'kernel':             # GRID BLOCK CORR NAME
                what, corr = 'kernel %s <<<%s,%s>>>' % (f[3], f[0], f[1]), f[2]
            elif t == 'memset':             # BYTES MEM CORR
                what, corr = 'memset %s %s' % (f[0], f[1]), f[-1]
            else:                           # TYPE CORR
                what, corr = 'sync %s' % f[0], f[-1]
            by_corr.setdefault(corr, []).append((t, s, d, what))
        elif t == 'event':
            d, s, e = (r[2], r[3], r[4]) if dev else ('0', r[2], r[3])
            by_corr.setdefault(r[-1], []).append(('event', s, d, 'event'))
        elif t == 'api':
            calls.append((int(r[1]), int(r[2]), r[3], r[4], r[5] if len(r) > 5 else '?'))
        elif t == 'nvtx':
            marks.append((int(r[1]), int(r[2]), r[3], r[4] if len(r) > 4 else ''))
    # each thread's sequence: calls, and range starts/ends, in time order
    threads = {}
    for st, en, th, corr, name in calls:
        threads.setdefault(th, []).append((st, 1, ('call', name, corr)))
    for st, en, th, name in marks:
        threads.setdefault(th, []).append((st, 0, ('push', name)))
        threads.setdefault(th, []).append((en, 2, ('pop', name)))
    seq = {th: [x[2] for x in sorted(v, key=lambda x: (x[0], x[1]))] for th, v in threads.items()}

    def words(th, stream_name):
        out, last = [], None
        for x in seq[th]:
            if x[0] == 'push':
                line = '[ ' + x[1]
            elif x[0] == 'pop':
                line = '] ' + x[1]
            else:
                line = x[1]
                for kind, s, d, what in by_corr.get(x[2], []):
                    line += ' | %s on %s dev %s' % (what, stream_name(s), d)
            if line == last and x[0] == 'call' and x[1] in POLLS:
                continue
            release = x[0] == 'call' and x[1] in RELEASES
            out.append((line, release, x[0] == 'call' and not release and bool(by_corr.get(x[2]))))
            last = line
        if not teardown:
            busy = max([k for k, o in enumerate(out) if o[2]] or [-1])
            out = [o for k, o in enumerate(out) if k <= busy or not o[1]]
        return [o[0] for o in out]

    # threads named by what they did (stream kinds only), then streams by the
    # thread that first used them and the order it did
    rough = {th: words(th, lambda s: kinds.get(s, 'unknown')) for th in seq}
    order = sorted(seq, key=lambda th: (rough[th], th))
    names = {}
    for th in order:
        for x in seq[th]:
            if x[0] == 'call':
                for kind, s, d, what in by_corr.get(x[2], []):
                    if s != '-' and s not in names:
                        k = kinds.get(s, 'unknown')
                        names[s] = '%s%d' % (k, sum(v.startswith(k) for v in names.values()) + 1)
    lines = []
    for k, th in enumerate(order):
        lines.append('thread %d' % (k + 1))
        lines += ['  ' + w for w in words(th, lambda s: names.get(s, s if s == '-' else 'unknown'))]
    return lines


def open_run(path):
    """A run's file (out, trace), or its gzip'd copy (PATH.gz) as the
    fixtures keep it."""
    if not os.path.exists(path) and os.path.exists(path + '.gz'):
        return gzip.open(path + '.gz', 'rt', encoding='utf-8', errors='replace')
    return open(path, encoding='utf-8', errors='replace')


def gpu_schedule(path):
    """The GPU's work of a run as {id: (start, end)}: every copy, kernel and
    memset (an interval) and every event stamp (a point), named by what it
    was and who queued it, not by its stream: (host thread, what, k) for the
    k-th such record of that thread, the threads in the order of their first
    call. None without a trace."""
    try:
        with open_run(path) as f:
            rows = [l.rstrip('\n').split('\t') for l in f]
    except OSError:
        return None
    if not rows or not rows[0][0].startswith('streamtrace'):
        return None
    dev = rows[0][0].split()[-1] != '1'
    thread_of, first = {}, {}
    for r in rows:
        if r[0] == 'api':
            thread_of[r[4]] = r[3]
            first[r[3]] = min(first.get(r[3], int(r[1])), int(r[1]))
    order = {th: k for k, th in enumerate(sorted(first, key=lambda th: first[th]))}
    ops, seen = {}, {}
    for r in rows:
        t = r[0]
        if t in ('copy', 'kernel', 'memset'):
            o = 1 if dev else 0
            f = r[4 + o:]
            d = r[3] if dev else '0'
            if t == 'copy':
                what, corr = ('copy',) + tuple(f[0:4]) + (d,), f[-1]
            elif t == 'kernel':
                what, corr = ('kernel', f[3], f[0], f[1], d), f[2]
            else:
                what, corr = ('memset', f[0], f[1], d), f[-1]
            t0, t1 = int(r[1]), int(r[2])
        elif t == 'event':
            corr = r[-1]
            what = ('event', r[2] if dev else '0')
            t0 = t1 = int(r[1])
        else:
            continue
        key = (order.get(thread_of.get(corr), -1),) + what
        seen[key] = seen.get(key, 0) + 1
        ops[key + (seen[key],)] = (t0, t1)
    return ops


def relation(a, b):
    """How two records of one run lie in time: '<' a ended before b began,
    '>' after, '~' at once (a point inside an interval counts as at once)."""
    if a[1] <= b[0] and (a[1] < b[0] or a[0] < a[1] or b[0] < b[1]):
        return '<'
    if b[1] <= a[0] and (b[1] < a[0] or a[0] < a[1] or b[0] < b[1]):
        return '>'
    return '~'


# ns: CUPTI stamps an event a little after the GPU lets the work waiting for
# it begin (lab 04's consumer began 0.6 to 1.5 us before the stamp of the
# event it waited for, one H100, 2026-12-06), as the trace tool allows for
# an order (checker/trace/README.md); a moved record or wait moves work by
# the milliseconds of a kernel or copy.
STAMP_SLACK = 5000


def sure_relation(a, b):
    """relation(a, b) where an event's stamp (a point) is one of the two and
    lies farther than STAMP_SLACK from each edge of the other; None where it
    lies nearer (the stamp may be off by that much). Two intervals: relation."""
    if a[0] != a[1] and b[0] != b[1]:
        return relation(a, b)
    s = STAMP_SLACK
    if a[1] + s <= b[0]:
        return '<'
    if b[1] + s <= a[0]:
        return '>'
    if a[0] != a[1] and a[0] + s < b[0] < a[1] - s or b[0] != b[1] and b[0] + s < a[0] < b[1] - s:
        return '~'
    return None


SCHEDULE_MAX = 1500     # records; more (PyTorch's thousands of kernels): not compared


def same_schedule(sol_runs, mut_runs):
    """Did the GPU do the same in the mutant's runs as in the solution's: the
    same copies, kernels, memsets and event stamps, each pair of them in the
    same order or at once as in the solution's run, but for the pairs whose
    order the solution's two runs do not agree on, and an event's stamp
    within STAMP_SLACK of the other record's edge (sure_relation)? (Streams are not
    compared: what they change shows in the order.) Returns (True, how many
    records), (False, why) or (None, why) where it cannot be told."""
    a, b = sol_runs
    n_all = 0
    for n in sorted(set(a) & set(b)):
        sa, sb = gpu_schedule(a[n] + '.trace'), gpu_schedule(b[n] + '.trace')
        sm = gpu_schedule(mut_runs[n] + '.trace') if n in mut_runs else None
        if sa is None and sb is None:
            continue
        if sa is None or sb is None or sm is None:
            return None, 'run %s has no trace' % n
        if set(sa) != set(sb):
            return None, 'the solution\'s two runs did different work in run %s' % n
        if set(sm) != set(sa):
            return False, 'run %s: other work (%d records, the solution %d)' % (n, len(sm), len(sa))
        if len(sa) > SCHEDULE_MAX:
            return None, 'run %s: %d records, too many to compare' % (n, len(sa))
        keys = sorted(sa)
        for i, x in enumerate(keys):
            for y in keys[i + 1:]:
                r = sure_relation(sa[x], sa[y])
                if r is None or r != sure_relation(sb[x], sb[y]):
                    continue
                rm = sure_relation(sm[x], sm[y])
                if rm is not None and rm != r:
                    return False, 'run %s: %s and %s' % (n, ' '.join(x[1:3]), ' '.join(y[1:3]))
        n_all += len(sa)
    return True, n_all


def normalize_output(path):
    """A run's output, a line each, every number with a decimal point as #
    (a time, a bandwidth: no two runs print the same)."""
    try:
        with open_run(path) as f:
            return [' '.join(re.sub(r'\d+\.\d+(?:e[-+]?\d+)?', '#', l).split())
                    for l in f.read().split('\n')]
    except OSError:
        return []


def same_output(sol_a, sol_b, mut):
    """Does mut's output equal the solution's, but where two runs of the
    solution differ (a time, a bandwidth)? Token by token."""
    if not (len(sol_a) == len(sol_b) == len(mut)):
        return False
    for a, b, m in zip(sol_a, sol_b, mut):
        ta, tb, tm = a.split(), b.split(), m.split()
        if a == b:
            if m != a:
                return False
            continue
        if not (len(ta) == len(tb) == len(tm)):
            return False
        for x, y, z in zip(ta, tb, tm):
            if x == y and z != x:
                return False
    return True


def changed_nothing(sol_runs, mut_runs, teardown=True):
    """Did the mutant's runs print the same and do the same as the
    solution's (teardown=False: but for what a thread gives back after its
    last GPU work)? sol_runs: two {name: prefix} of the solution. None where
    the two solution runs themselves do not agree (nothing can be said)."""
    a, b = sol_runs
    names = sorted(set(a) & set(b))
    if not names or set(a) - set(mut_runs):
        return False
    for n in names:
        ta = normalize_trace(a[n] + '.trace', teardown)
        if ta != normalize_trace(b[n] + '.trace', teardown):
            return None
        if not same_output(normalize_output(a[n] + '.out'), normalize_output(b[n] + '.out'),
                           normalize_output(mut_runs[n] + '.out')):
            return False
        if normalize_trace(mut_runs[n] + '.trace', teardown) != ta:
            return False
        if read1(a[n] + '.rc') != read1(mut_runs[n] + '.rc'):
            return False
    return True


def open_lines(path):
    """The lines of a file; none if there is no such file."""
    try:
        with open(path, encoding='utf-8') as f:
            return f.readlines()
    except OSError:
        return []


def read1(path):
    try:
        with open_run(path) as f:
            return f.read().strip()
    except OSError:
        return ''


# ---------------------------------------------------------------- equivalents

FIXTURES = os.path.join(KIT_ROOT, 'checker', 'tests', 'fixtures', 'mutate')
# a change to one of these is never taken as equivalent by its schedule alone:
# a wait, a record or a free that mattered may have lost its race by luck
TOUCHY = re.compile(r'Synchronize|WaitEvent|EventRecord|EventQuery|StreamQuery|cudaFree|'
                    r'HostUnregister|\.record\(|wait_stream|wait_event|synchronize\(|'
                    r'record_stream|elapsed_time')


def load_equivalents():
    """{(lab, id): (proof, reason)} from equivalent/LAB.tsv, a line each:
    MUTANT PROOF REASON (tabs between). PROOF `schedule`: the recorded runs in
    fixtures/mutate/LAB show the GPU did the same (same_schedule); else the
    name of the test that proves REASON on the mutant's recorded run."""
    out = {}
    for name in sorted(os.listdir(EQUIVALENT)) if os.path.isdir(EQUIVALENT) else []:
        with open(os.path.join(EQUIVALENT, name), encoding='utf-8') as f:
            for line in f:
                if line.strip() and not line.startswith('#'):
                    mid, proof, reason = line.rstrip('\n').split('\t', 2)
                    out[(name[:-4], mid)] = (proof, reason)
    return out


# the runs a fixture keeps: those mutants.bats replays (fixture_replay), the
# traced run and its re-runs, lab 06's scenarios and stress runs
FIXTURE_RUN = re.compile(r'^(main(\.(again|look)\d+)?|s[1-4]|stress|sanitizer)$')


def keep_fixture(v, dst):
    """Copy the runs the checker kept for variant folder v into the fixture
    folder dst, as the fixtures keep them: each run's exit status, output,
    error output and trace (gzip'd, no time stamp). False where v kept none."""
    runs = {n: p for n, p in kept_runs(v).items() if FIXTURE_RUN.match(n)}
    if not runs:
        return False
    os.makedirs(dst, exist_ok=True)
    for name, prefix in runs.items():
        shutil.copy(prefix + '.rc', os.path.join(dst, name + '.rc'))
        for ext in ('.out', '.err', '.trace'):
            if os.path.exists(prefix + ext):
                with open(prefix + ext, 'rb') as fi, gzip.GzipFile(
                        os.path.join(dst, name + ext + '.gz'), 'wb', mtime=0) as fo:
                    shutil.copyfileobj(fi, fo)
    return True


def refix(args):
    """mutate.py refix: record the kept runs (fixtures/mutate/LAB) anew from a
    run of their variants (`run --only` with their ids, --runs 1, --out OUT),
    in a trace format that is newer, into --to (default the fixtures
    themselves): each fixture folder's files are replaced, none is added.
    Exits 1 where a fixture's variant left no runs in OUT."""
    out, status = os.path.abspath(args.out), 0
    for lab in pick_labs(args.labs):
        src = os.path.join(FIXTURES, lab)
        for v in sorted(os.listdir(src)) if os.path.isdir(src) else []:
            dst = os.path.join(os.path.abspath(args.to), lab, v)
            if os.path.isdir(dst) and dst.startswith(FIXTURES + os.sep):
                shutil.rmtree(dst)
            if keep_fixture(os.path.join(out, lab, v), dst):
                print('%s/%s: %d runs' % (lab, v, len(kept_runs(dst))))
            else:
                print('%s/%s: no runs in %s' % (lab, v, os.path.join(out, lab, v)))
                status = 1
    return status


def fixture_ids(labs):
    """The mutants (m-ID) the fixtures of labs keep runs of, space-separated."""
    ids = []
    for lab in pick_labs(labs):
        d = os.path.join(FIXTURES, lab)
        ids += [v for v in sorted(os.listdir(d)) if v.startswith('m-')] if os.path.isdir(d) else []
    return ' '.join(ids)


def list_equivalent(out, lab, m, n_records):
    """Add mutant m, proven the same on the GPU by its runs in out, to
    equivalent/LAB.tsv, and its runs (and the solution's, once) to the fixtures:
    each run's exit status, output and trace (gzip'd)."""
    for v in ('solution', 'solution-2', 'm-' + m.id):
        dst = os.path.join(FIXTURES, lab, v)
        if not os.path.isdir(dst):
            keep_fixture(os.path.join(out, lab, v), dst)
    os.makedirs(EQUIVALENT, exist_ok=True)
    with open(os.path.join(EQUIVALENT, lab + '.tsv'), 'a', encoding='utf-8') as f:
        f.write('m-%s\tschedule\tthe GPU did the same: its %d copies, kernels, memsets and '
                'event stamps each in the same order as the solution\'s (%s, line %d: %s)\n' % (
                    m.id, n_records, m.rule, m.line, ' '.join(m.after.split())[:100] or 'deleted'))


# ---------------------------------------------------------------- run

def run(args):
    """make mutate: generate, build and (on a GPU) check every lab's
    mutants, then judge them (judge_lab). Returns the exit status."""
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    gpus = nvidia_gpus()
    arch = '' if gpus else '75'     # no GPU: one architecture (as the self-test)
    jobs = args.jobs or (8 if gpus else os.cpu_count() or 2)
    build_jobs = os.cpu_count() or 2
    rows, report, status = [], [], 0
    for lab in pick_labs(args.labs):
        t0 = time.time()
        mutants, counts = write_lab(lab, out)
        d = os.path.join(out, lab)
        keep = set(args.only.replace(',', ' ').split()) if args.only else None
        if args.again:
            # what the earlier runs settled is carried over; the rest runs:
            # survivors, equivalents, mutants not judged, and every mutant
            # they never saw (a solution changed since makes new ones; one
            # that is no longer made is left out)
            prev = previous_verdicts(args.again, lab)
            ids = {'m-' + m.id for m in mutants}
            settled = {mid for mid, row in prev.items() if row[4] in SETTLED and mid in ids}
            keep = ids - settled
            with open(os.path.join(d, 'carried'), 'w', encoding='utf-8') as f:
                f.writelines('\t'.join(prev[mid]) + '\n' for mid in sorted(settled))
        if keep is not None:
            mutants = [m for m in mutants if 'm-' + m.id in keep or m.id in keep]
            with open(os.path.join(d, 'only'), 'w') as f:
                f.write(''.join('m-' + m.id + '\n' for m in mutants))
        for f_ in ('only',) + (() if args.again else ('carried',)):
            if (keep is None or f_ == 'carried') and os.path.isfile(os.path.join(d, f_)):
                os.remove(os.path.join(d, f_))      # an earlier run's
        with open(os.path.join(d, 'counts'), 'w') as f:
            f.write('%d %d\n' % (counts['duplicate'], gpus))
        kits = kit_mutants(lab, d) if args.kit else []
        names = ['solution'] + ['m-' + m.id for m in mutants] + [k[0] for k in kits if k[3]]
        with concurrent.futures.ThreadPoolExecutor(build_jobs) as ex:
            built = dict(zip(names, ex.map(lambda n: build_one(os.path.join(d, n), arch), names)))
        tb = time.time() - t0
        if not built['solution']:
            print('%s: the solution does not build (%s)' % (lab, os.path.join(d, 'solution', 'build.log')))
            status = 1
            continue
        tr = 0
        if gpus:
            # the solution twice (what varies between two right runs), then
            # every built mutant (the kit's first), jobs at a time
            t1 = time.time()
            for k in ('solution', 'solution-2'):
                v = os.path.join(d, k)
                if k != 'solution':
                    shutil.copytree(os.path.join(d, 'solution'), v, dirs_exist_ok=True)
                check_one(lab, v)
            todo = [k[0] for k in kits if k[3] and built[k[0]] and k[2] <= gpus] + \
                [n for n in names[1:] if n.startswith('m-') and built[n]]
            # each variant args.runs times, its runs one after the other in
            # the queue, so that they run at once beside each other (and
            # beside other variants'): a fresh schedule each time
            for n in todo:
                for k in range(2, args.runs + 1):
                    shutil.copytree(os.path.join(d, n), os.path.join(d, run_name(n, k)),
                                    dirs_exist_ok=True)
            todo = [run_name(n, k) for n in todo for k in range(1, args.runs + 1)]
            with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
                list(ex.map(lambda n: check_one(lab, os.path.join(d, n)), todo))
            tr = time.time() - t1
        with open(os.path.join(d, 'seconds'), 'w') as f:
            f.write('%d %d\n' % (tb, tr))
        with open(os.path.join(d, 'runs-each'), 'w') as f:
            f.write('%d\n' % args.runs)
        status = max(status, judge_lab(out, lab, rows, report, args.list))
        write_report(out, rows, report, gpus)
    return finish(out, rows, report, gpus, status)


# what a run again (--again) need not look at: a check that is tightened or
# added can only fail more (a killed mutant stays killed), and neither a build
# nor "changed nothing" depends on the checks
SETTLED = ('killed', 'no build', 'unchanged', 'leak at exit')


def previous_verdicts(reports, lab):
    """{mutant: report row} of lab in the earlier runs' report.tsv files."""
    out = {}
    for path in reports:
        with open(path, encoding='utf-8') as f:
            for line in f:
                row = line.rstrip('\n').split('\t')
                if row[0] == lab and len(row) >= 5:
                    out[row[1]] = row
    return out


def classify(args):
    """Judge again what make mutate left in OUT (after a run was cut short,
    or the equivalents or "changed nothing" changed): no build, no run."""
    out = os.path.abspath(args.out)
    rows, report, status, gpus = [], [], 0, 0
    for lab in pick_labs(args.labs):
        if os.path.isfile(os.path.join(out, lab, 'mutants.tsv')):
            status = max(status, judge_lab(out, lab, rows, report, args.list))
            gpus = max(gpus, int(read1(os.path.join(out, lab, 'counts')).split()[-1] or 0))
    return finish(out, rows, report, gpus, status)


def finish(out, rows, report, gpus, status):
    write_report(out, rows, report, gpus)
    print_table(rows, gpus)
    if not gpus:
        print('not graded: no GPU here (nvidia-smi shows none): the mutants were generated '
              'and built, not run; on a GPU node make mutate runs each through its checker')
        return 3 if status == 0 else status
    return status


def judge_lab(out, lab, rows, report, list_new=False):
    """Judge lab's mutants from what is on disk in OUT/LAB (mutants.tsv,
    each variant's build.rc, checks.tap and kept runs): a row of the table,
    a report line per mutant, what killed them and what survived, printed.
    Returns 1 where a mutant survived, a kit mutant was wrong, the solution
    failed, or a listed equivalent was killed (the list is stale); else 0."""
    d = os.path.join(out, lab)
    status = 0
    equivalents = load_equivalents()
    dup, gpus = (int(x) for x in (read1(os.path.join(d, 'counts')) or '0 0').split())
    tb, tr = (int(x) for x in (read1(os.path.join(d, 'seconds')) or '0 0').split())
    # a run of some mutants (--only, --again) lists them, none if it matched none
    only = (set(read1(os.path.join(d, 'only')).split())
            if os.path.isfile(os.path.join(d, 'only')) else None)
    mutants = []
    with open(os.path.join(d, 'mutants.tsv'), encoding='utf-8') as f:
        for line in f:
            c = line.rstrip('\n').split('\t')
            if only is None or c[1] in only:
                m = Mutant(c[2], int(c[3]), c[4], c[5], None)
                m.id = c[1][2:]
                mutants.append(m)
    built = lambda n: read1(os.path.join(d, n, 'build.rc')) == '0'
    ran = lambda n: os.path.isfile(os.path.join(d, n, 'checks.tap'))
    st = {'generated': len(mutants), 'duplicate': dup,
          'built': sum(built('m-' + m.id) for m in mutants), 'killed': 0,
          'unchanged': 0, 'leak at exit': 0, 'equivalent': 0, 'survived': 0, 'unstable': 0,
          'not judged': 0}
    st['no build'] = st['generated'] - st['built']
    by_check, survivors, stale = {}, [], []
    # mutants judged by an earlier run (--again), as it judged them
    carried = [l.rstrip('\n').split('\t') for l in open_lines(os.path.join(d, 'carried'))]
    for row in carried:
        status_ = row[4]
        key = {'no build': 'no build', 'killed': 'killed', 'unchanged': 'unchanged',
               'leak at exit': 'leak at exit'}[status_]
        st['generated'] += 1
        st[key] += 1
        if status_ != 'no build':
            st['built'] += 1
        if status_ == 'killed':
            for c in row[5].split('; '):
                by_check[c] = by_check.get(c, 0) + 1
        report.append((row[0], row[1], row[2], int(row[3]), status_, row[5] if len(row) > 5 else ''))
    if not gpus:
        rows.append((lab, st, tb, tr))
        for m in mutants:
            report.append((lab, 'm-' + m.id, m.rule, m.line,
                           'built' if built('m-' + m.id) else 'no build', ''))
        return 0
    for k in ('solution', 'solution-2'):
        failed = read_tap(os.path.join(d, k, 'checks.tap'))[0]
        if failed or not ran(k):
            print('%s: the solution failed %s: its mutants cannot be judged' % (lab, failed or 'to run'))
            status = 1
    sols = [kept_runs(os.path.join(d, 'solution')), kept_runs(os.path.join(d, 'solution-2'))]
    kits = []
    for name in sorted(n for n in os.listdir(d) if n.startswith('k-') and '@' not in n):
        with open(os.path.join(KIT_ROOT, 'checker', 'tests', 'mutants', lab, name[2:] + '.patch'),
                  encoding='utf-8') as f:
            head = f.read().split('\n')[:5]
        expect = next((l[len('# expect: '):] for l in head if l.startswith('# expect: ')), '')
        need = next((int(m.group(1)) for l in head for m in [re.match(r'# needs: (\d+) GPUs$', l)] if m), 1)
        kits.append((name, expect, need, built(name)))
    # each variant's runs (runs-each: make mutate --runs): a check kills a
    # mutant only where it failed in every run; one that failed in some runs
    # only is a race the GPU decided, and the mutant is "unstable"
    each = int(read1(os.path.join(d, 'runs-each')) or 1)
    results, unstable = {}, {}
    for n in [k[0] for k in kits] + ['m-' + m.id for m in mutants]:
        taps = [read_tap(os.path.join(d, run_name(n, k), 'checks.tap'))
                for k in range(1, each + 1) if ran(run_name(n, k))]
        if len(taps) < each:
            continue
        always = [c for c in taps[0][0] if all(c in t[0] for t in taps[1:])]
        sometimes = sorted({c for t in taps for c in t[0]} - set(always))
        if sometimes:
            unstable[n] = ['%s (%d of %d runs)' % (c, sum(c in t[0] for t in taps), each)
                           for c in sometimes]
        results[n] = (always, [s_ for t in taps for s_ in t[1]], min(t[2] for t in taps))
    if kits:
        st['kit'] = kit_verdicts(lab, kits, {k[0]: k[3] and k[0] in results for k in kits},
                                 results, gpus, report)
        status = max(status, 1 if st['kit'][1] else 0)
    for m in mutants:
        n = 'm-' + m.id
        if not built(n):
            report.append((lab, n, m.rule, m.line, 'no build', ''))
            continue
        if n not in results:
            st['not judged'] += 1
            report.append((lab, n, m.rule, m.line, 'not judged', 'not run (the run was cut short)'))
            continue
        failed, skipped, ok = results[n]
        eq = equivalents.get((lab, n))
        if not failed and n in unstable:
            st['unstable'] += 1
            m.unstable = unstable[n]
            survivors.append(m)
            report.append((lab, n, m.rule, m.line, 'unstable', '; '.join(unstable[n])))
            continue
        if failed:
            st['killed'] += 1
            for c in failed:
                by_check[c] = by_check.get(c, 0) + 1
            report.append((lab, n, m.rule, m.line, 'killed', '; '.join(failed)))
            if eq:
                stale.append('%s %s is listed as equivalent but was killed by: %s'
                             % (lab, n, '; '.join(failed)))
            continue
        if any(re.match(r'needs \d+ GPUs', s) for s in skipped):
            st['not judged'] += 1
            report.append((lab, n, m.rule, m.line, 'not judged', skipped[0]))
            continue
        # "changed nothing" where one of its runs did what the solution's
        # did: the calls a program makes can depend on the GPU's timing
        # (PyTorch's caching allocator reuses a block only once its event
        # is reached, else it asks for more), and a mutant's runs share the
        # GPU with other checkers where the solution's ran alone
        every = [kept_runs(os.path.join(d, run_name(n, k)))
                 for k in range(1, each + 1)]
        runs = every[0]
        same = any(changed_nothing(sols, r) for r in every)
        leak = not same and any(changed_nothing(sols, r, teardown=False) for r in every)
        if same:
            st['unchanged'] += 1
            report.append((lab, n, m.rule, m.line, 'unchanged', ''))
        elif leak:
            st['leak at exit'] += 1
            report.append((lab, n, m.rule, m.line, 'leak at exit', ''))
        elif eq:
            st['equivalent'] += 1
            report.append((lab, n, m.rule, m.line, 'equivalent', eq[1]))
        else:
            proven, why = same_schedule(sols, runs)
            if proven and not TOUCHY.search(m.before + ' ' + m.after):
                if list_new:
                    list_equivalent(out, lab, m, why)
                    st['equivalent'] += 1
                    report.append((lab, n, m.rule, m.line, 'equivalent', 'listed now: same schedule'))
                    continue
                why = 'the same on the GPU (%d records): mutate.py classify --list lists it' % why
            st['survived'] += 1
            survivors.append(m)
            report.append((lab, n, m.rule, m.line, 'survived', str(why)))
    rows.append((lab, st, tb, tr))
    print_lab(lab, st, by_check, survivors, tb, tr)
    for s_ in stale:
        print('  stale: ' + s_)
    return 1 if status or survivors or stale else 0


COLS = ['generated', 'duplicate', 'built', 'no build', 'killed', 'unchanged',
        'leak at exit', 'equivalent', 'survived', 'unstable', 'not judged']


def kit_verdicts(lab, kits, built, results, gpus, report):
    """The kit's own mutants: each must fail the check it names. Adds a
    report line each; returns (right, wrong, not judged) and prints each
    wrong one."""
    right = wrong = notj = 0
    for name, expect, need, applied in kits:
        if need > gpus:
            notj += 1
            report.append((lab, name, 'kit', 0, 'not judged', 'needs %d GPUs' % need))
            continue
        if not applied or not built.get(name):
            wrong += 1
            report.append((lab, name, 'kit', 0, 'WRONG', 'does not apply or build'))
            print('  WRONG: %s: does not apply or build' % name)
            continue
        failed = results[name][0]
        if expect in failed:
            right += 1
            report.append((lab, name, 'kit', 0, 'fails as named', '; '.join(failed)))
        else:
            wrong += 1
            report.append((lab, name, 'kit', 0, 'WRONG', '; '.join(failed) or 'no check failed'))
            print('  WRONG: %s did not fail "%s" (failed: %s)' % (name, expect, '; '.join(failed) or 'none'))
    return (right, wrong, notj)


def print_lab(lab, st, by_check, survivors, tb, tr):
    print('%s: %d killed of %d built (%d s to build, %d s to check)%s' % (
        lab, st['killed'], st['built'], tb, tr,
        '; the kit\'s own mutants: %d of %d fail the check they name%s' % (
            st['kit'][0], st['kit'][0] + st['kit'][1],
            ', %d not judged (GPUs)' % st['kit'][2] if st['kit'][2] else '') if 'kit' in st else ''))
    for c, k in sorted(by_check.items(), key=lambda x: -x[1]):
        print('  %4d  %s' % (k, c))
    for m in survivors:
        print('  %s: m-%s (%s, line %d): %s  ->  %s' % (
            'unstable' if getattr(m, 'unstable', None) else 'survived',
            m.id, m.rule, m.line, ' '.join(m.before.split())[:80], ' '.join(m.after.split())[:80]))
        if getattr(m, 'unstable', None):
            print('      killed in some runs only, by: ' + '; '.join(m.unstable))
    sys.stdout.flush()


def print_table(rows, gpus):
    head = ['lab'] + COLS + ["kit's own", 'seconds']
    print()
    print('| ' + ' | '.join(head) + ' |')
    print('|' + '---|' * len(head))
    for lab, st, tb, tr in rows:
        cells = [str(st[c]) if (gpus or c in ('generated', 'duplicate', 'built', 'no build')) else '-'
                 for c in COLS]
        k = st.get('kit')
        kit = '-' if not k else '%d of %d%s' % (k[0], k[0] + k[1], ' (+%d not judged)' % k[2] if k[2] else '')
        print('| %s | %s | %s | %d |' % (lab, ' | '.join(cells), kit, tb + tr))


def write_report(out, rows, report, gpus):
    """report.tsv: a line per mutant; table.md: the table (after each lab,
    so that a run cut short keeps what it did)."""
    with open(os.path.join(out, 'report.tsv'), 'w', encoding='utf-8') as f:
        f.write('lab\tmutant\trule\tline\tstatus\tchecks\n')
        for r in report:
            f.write('%s\t%s\t%s\t%d\t%s\t%s\n' % r)
    with open(os.path.join(out, 'table.md'), 'w', encoding='utf-8') as f:
        old, sys.stdout = sys.stdout, f
        try:
            print_table(rows, gpus)
        finally:
            sys.stdout = old


# ---------------------------------------------------------------- main

def main(argv):
    ap = argparse.ArgumentParser(prog='mutate.py', description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    r = sub.add_parser('run')
    r.add_argument('--labs', default=os.environ.get('LAB', ''))
    r.add_argument('--jobs', type=int, default=int(os.environ.get('JOBS') or 0))
    r.add_argument('--runs', type=int, default=int(os.environ.get('RUNS') or 3),
                   help='check each variant this many times; a check kills a mutant '
                        'only where it failed in every run (default 3)')
    r.add_argument('--out', default=os.path.join(KIT_ROOT, 'build', 'mutate'))
    r.add_argument('--only', default='', help='only these mutants (m-ID ...), of the labs given')
    r.add_argument('--list', action='store_true',
                   help='list every survivor the GPU did the same for as equivalent, with its runs')
    r.add_argument('--again', nargs='+', metavar='REPORT',
                   help='run only what earlier runs (their report.tsv) did not settle: survivors, '
                        'equivalents, mutants not judged, mutants they never saw; carry the rest over')
    r.add_argument('--no-kit', dest='kit', action='store_false',
                   help='leave out the kit\'s own mutants (checker/tests/mutants)')
    g = sub.add_parser('generate')
    g.add_argument('labs', nargs='?', default='')
    g.add_argument('--out', default=os.path.join(KIT_ROOT, 'build', 'mutate'))
    c = sub.add_parser('classify')
    c.add_argument('--labs', default=os.environ.get('LAB', ''))
    c.add_argument('--out', default=os.path.join(KIT_ROOT, 'build', 'mutate'))
    c.add_argument('--list', action='store_true',
                   help='list every survivor the GPU did the same for as equivalent, with its runs')
    f = sub.add_parser('refix', help='record the kept runs (fixtures/mutate) anew from a run of '
                       'their variants: run --labs L --only "$(mutate.py refix-ids L)" --runs 1 --out OUT first')
    f.add_argument('--labs', default=os.environ.get('LAB', ''))
    f.add_argument('--out', default=os.path.join(KIT_ROOT, 'build', 'mutate'))
    f.add_argument('--to', default=FIXTURES)
    i = sub.add_parser('refix-ids')
    i.add_argument('labs', nargs='?', default='')
    n = sub.add_parser('normalize')
    n.add_argument('trace')
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    if args.cmd == 'generate':
        for lab in pick_labs(args.labs):
            mutants, counts = write_lab(lab, os.path.abspath(args.out))
            by_rule = {}
            for m in mutants:
                by_rule[m.rule] = by_rule.get(m.rule, 0) + 1
            print('%s: %d mutants (%d places; %d changed nothing, %d repeated another)' % (
                lab, len(mutants), counts['places'], counts['no-op'], counts['duplicate']))
            for k in sorted(by_rule):
                print('  %4d  %s' % (by_rule[k], k))
        return 0
    if args.cmd == 'normalize':
        print('\n'.join(normalize_trace(args.trace)))
        return 0
    if args.cmd == 'classify':
        return classify(args)
    if args.cmd == 'refix':
        return refix(args)
    if args.cmd == 'refix-ids':
        print(fixture_ids(args.labs))
        return 0
    return run(args)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
