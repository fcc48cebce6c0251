#!/usr/bin/env python3
"""answers.py -- the statements that answer the labs, and where a file holds one.

    answers.py list KIT                 "ID<TAB>STATEMENT" for each answer
    answers.py find KIT FILE...         "FILE:FIRST:LAST:STATEMENT" for each
                                        statement of FILE that is an answer
    answers.py elide KIT FILE.md...     rewrite each Markdown file with every
                                        answer elided: a code block's lines as
                                        "/* ... */", an inline `code` span as
                                        `/* ... */`; print how many per file
    answers.py notes-out FILE...        rewrite each deck without its presenter
                                        notes (Marp: an HTML comment that is no
                                        directive); print how many it took out
    answers.py leaks KIT DIR            "FILE:LINE: WHAT" for each figure of the
                                        kit's reference runs (checker/reference)
                                        and each measured answer in the text
                                        files under DIR (a handout)

A statement is code between ';', '{' and '}' (a Markdown file: in its
fenced code blocks, and any other line by itself), compared without its
comments, without any whitespace, and with a CUDA_CHECK(...) wrapper taken
off (in a Markdown file's prose, each `inline code` span is one too)
off: `CUDA_CHECK(cudaStreamWaitEvent(w->stream_b, produced, 0));` and
`cudaStreamWaitEvent(w->stream_b, produced, 0); /* TODO(5) */` are the
same statement. In Python (a .py file, a ```python block) a statement is a logical
line, compared the same way. A string in a program (a .cu, .c, .h or .py
file: a message, a usage text) that holds an answer, whitespace aside,
holds one too: a starter's message must say what to do, not the code. An
answer is a statement of a lab's solution that is in no
starter and nowhere in common/ (lab 02's starter launches a kernel, which is
lab 01's answer), and names at least two things (so "}", "break;" or a lone
"cudaMemcpyHostToDevice," are no answers). Standard library only.
"""
import io
import os
import re
import sys
import tokenize

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def strip_comments(text):
    """C comments out, strings kept; each comment leaves its newlines."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == "#" and (i == 0 or text[i - 1] == "\n"):
            j = text.find("\n", i)             # a preprocessor line: not a statement
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def norm(piece):
    """A statement as compared: no whitespace, no CUDA_CHECK( ) around it."""
    s = re.sub(r"\s+", "", piece)
    while s.startswith("CUDA_CHECK(") and s.endswith(")"):
        s = s[len("CUDA_CHECK("):-1]
    return s


def statements(text, first_line=1):
    """[(statement, first line, last line)] of a piece of code."""
    text = strip_comments(text)
    out, start, line, begin = [], 0, first_line, None
    buf = []
    for ch in text:
        if ch in ";{}":
            s = norm("".join(buf))
            if s:
                out.append((s, begin if begin is not None else line, line))
            buf, begin = [], None
        else:
            if begin is None and not ch.isspace():
                begin = line
            buf.append(ch)
        if ch == "\n":
            line += 1
    s = norm("".join(buf))
    if s:
        out.append((s, begin if begin is not None else line, line))
    return out


def py_statements(text, first_line=1):
    """[(statement, first line, last line)] of Python code: its logical
    lines, comments out. Code that does not tokenize (a fragment in a deck)
    is taken a line at a time."""
    out = []
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        for i, line in enumerate(text.split("\n")):
            s = norm(line.split(" #")[0] if not line.lstrip().startswith("#") else "")
            if s:
                out.append((s, first_line + i, first_line + i))
        return out
    buf, begin, end = [], None, None
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
            tokenize.ENDMARKER)
    for t in toks:
        if t.type == tokenize.NEWLINE or (t.type == tokenize.OP and t.string == ";"):
            st = norm(" ".join(buf))
            if st:
                out.append((st, begin, end))
            buf, begin = [], None
        elif t.type not in skip:
            if begin is None:
                begin = first_line + t.start[0] - 1
            end = first_line + t.end[0] - 1
            buf.append(t.string)
    st = norm(" ".join(buf))
    if st:
        out.append((st, begin, end))
    return out


def string_literals(path):
    """[(text without whitespace, first line, last line)] of each string in a
    program's source (C or Python)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    out = []
    if path.endswith(".py"):
        try:
            toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
        except (tokenize.TokenError, IndentationError, SyntaxError):
            toks = []
        for t in toks:
            if t.type == tokenize.STRING or t.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                out.append((re.sub(r"\s+", "", t.string), t.start[0], t.end[0]))
        return out
    # C: adjacent literals are one string ("a" "b"); escapes left as written
    line = 1
    for m in re.finditer(r'"(?:[^"\\\n]|\\.)*"|\n', strip_comments(text)):
        if m.group(0) == "\n":
            line += 1
            continue
        out.append((re.sub(r"\s+", "", m.group(0)[1:-1].replace("\\n", " ")), line, line))
    return out


def file_statements(path):
    """The statements of a file; of a Markdown file, those of its fenced code
    blocks, and of each other line by itself (its HTML comments left out)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if path.endswith(".py"):
        return py_statements(text)
    if not path.endswith(".md"):
        return statements(text)
    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        if lines[i].lstrip().startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].lstrip().startswith("```"):
                j += 1
            code = "\n".join(lines[i + 1:j])
            py = lines[i].strip().lstrip("`").strip().lower() in ("python", "py", "python3")
            out += py_statements(code, i + 2) if py else statements(code, i + 2)
            i = j + 1
        else:
            line = re.sub(r"<!--.*?-->", "", lines[i])
            out += statements(line, i + 1)
            for span in INLINE.findall(line):
                out += [(s, i + 1, i + 1) for s, _, _ in statements(span)]
            i += 1
    return out


INLINE = re.compile(r"`([^`\n]+)`")


def elide(path, want):
    """Rewrite a Markdown file without the answers in WANT: the lines of a
    statement in a code block become one "/* ... */" (its indentation kept;
    "..." in a Python block), an inline code span that is one `/* ... */`.
    Returns how many."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    py, inside = set(), None        # the lines (1-based) of Python blocks
    for i, l in enumerate(lines, 1):
        if l.lstrip().startswith("```"):
            inside = None if inside is not None else \
                l.strip().lstrip("`").strip().lower() in ("python", "py", "python3")
        elif inside:
            py.add(i)
    count, cut = 0, set()
    for s, a, b in sorted(file_statements(path), key=lambda t: -t[1]):
        if s not in want:
            continue
        count += 1
        line = lines[a - 1]
        spans = [m for m in INLINE.finditer(line)
                 if any(x == s for x, _, _ in statements(m.group(1)))]
        if a == b and spans:
            for m in reversed(spans):
                line = line[:m.start()] + "`/* ... */`" + line[m.end():]
            lines[a - 1] = line
        else:
            keep = ""              # a Python line's comment stays ("...  # TODO 1")
            if a in py and a == b and re.search(r"\s#\s", line):
                keep = "  " + line[re.search(r"\s#\s", line).start():].strip()
            lines[a - 1] = re.match(r"\s*", line).group(0) + ("..." if a in py else "/* ... */") + keep
            cut |= set(range(a, b))          # the statement's other lines (0-based a..b-1)
    lines = [l for i, l in enumerate(lines) if i not in cut]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    return count


def labs(kit):
    return sorted(f[:-5] for f in os.listdir(os.path.join(kit, "checker"))
                  if re.match(r"^\d\d-.*\.bats$", f))


def lab_src(kit, lab):
    """The file a student writes (SRC in the lab's Makefile, else PROG.cu,
    else the starter PROG.*), as lib.bash's kit_src finds it."""
    mk = open(os.path.join(kit, "labs", lab, "Makefile"), encoding="utf-8").read()
    m = re.search(r"^SRC\s*:=\s*(\S+)", mk, re.M)
    if m:
        return m.group(1)
    prog = re.search(r"^PROG\s*:=\s*(\S+)", mk, re.M).group(1)
    for ext in (".cu", ".py", ".c"):
        if os.path.exists(os.path.join(kit, "labs", lab, prog + ext)):
            return prog + ext
    return prog + ".cu"


def answers(kit):
    """[(lab, statement)] in the order the solutions have them."""
    given = set()
    for lab in labs(kit):
        given |= {s for s, _, _ in file_statements(os.path.join(kit, "labs", lab, lab_src(kit, lab)))}
    cdir = os.path.join(kit, "common")
    for f in sorted(os.listdir(cdir)):
        if f.endswith(".h"):
            given |= {s for s, _, _ in file_statements(os.path.join(cdir, f))}
    out, seen = [], set()
    for lab in labs(kit):
        sol = os.path.join(kit, "solutions", lab, lab_src(kit, lab))
        if not os.path.exists(sol):
            continue
        for s, _, _ in file_statements(sol):
            if s in given or s in seen or len(NAME.findall(s)) < 2:
                continue
            seen.add(s)
            out.append((lab, s))
    return out


# Marp's directives, written as HTML comments too (a leading _ for one slide)
DIRECTIVES = ("theme style headingDivider size math title author description image keywords url "
              "marp lang paginate header footer class backgroundColor backgroundImage "
              "backgroundPosition backgroundRepeat backgroundSize color transition").split()
DIRECTIVE = re.compile(r"^\s*(?:_?(?:%s)\s*:.*\n?\s*)+$" % "|".join(DIRECTIVES), re.S)


def notes_out(path):
    """Rewrite a Marp deck without its presenter notes; return how many."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    count = 0

    def drop(m):
        nonlocal count
        if DIRECTIVE.match(m.group(1)):
            return m.group(0)
        count += 1
        return ""
    # a notes comment alone on its lines goes with its lines; any other, alone
    text = re.sub(r"(?m)^[ \t]*<!--(.*?)-->[ \t]*\n", drop, text, flags=re.S)
    text = re.sub(r"<!--(.*?)-->", drop, text, flags=re.S)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return count


# ------------------------------------------------------------ leaks
#
# A handout answers no Predict question before the student's run: no figure
# of the kit's reference runs (checker/reference/LAB.tsv: "fig<TAB>LABEL<TAB>
# NAME<TAB>VALUE<TAB>UNIT") in any of its text files, as make check prints it
# (3 significant digits: a number with a point anywhere; a whole number with
# its unit after it, since a bare 2 or 100 is in every text), and no
# measured answer in what a student reads about a lab (its folder, its deck,
# its checker, the top README; the tools' own READMEs are about the tools): a line that names a GPU and a figure in a unit
# the questions use (x, %, ms, us, GB/s) is a measurement of the kit's, unless
# it names the public source it comes from (a datasheet, a whitepaper, PCI-SIG).

GPU = re.compile(r"\b(?:[A-Z]?H100|H200|GH200|B200|A100|V100|L40S?|T4|RTX ?\d{4})\b")
MEASURED = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s*(?:x|×|%|ms|us|µs|GB/s)(?![\w/])")
SOURCE = re.compile(r"datasheet|whitepaper|PCI-SIG|Programming Guide|Runtime API|specification|"
                    r"documentation", re.I)
UNITS = {"x": r"(?:x|×|times)", "%": r"%", "ms": r"ms", "us": r"(?:us|µs)", "GB/s": r"GB/s"}
TEXT = (".md", ".cu", ".c", ".h", ".py", ".bats", ".bash", ".sh", ".mk", ".awk", ".txt", ".tsv",
        ".json", ".yml", ".css", ".mjs", ".svg")


def reference_figures(kit):
    """[(lab, name, value, unit, pattern)] of the kit's reference runs."""
    out, rdir = [], os.path.join(kit, "checker", "reference")
    for f in sorted(os.listdir(rdir)) if os.path.isdir(rdir) else []:
        if not f.endswith(".tsv"):
            continue
        for line in open(os.path.join(rdir, f), encoding="utf-8"):
            x = line.rstrip("\n").split("\t")
            if x[0] != "fig" or len(x) < 5:
                continue
            name, value, unit = x[2], x[3], x[4]
            try:
                v = float(value)
            except ValueError:
                continue
            if unit.startswith("of ") or v in (0, 100):
                continue                # a count is the question itself; 100: "at the bound"
            num = re.escape(value)
            if "." in value:
                pat = r"(?<![\d.])" + num + r"(?!\d)(?!\.\d)"
            else:
                pat = r"(?<![\d.])" + num + r"\s*" + UNITS.get(unit, re.escape(unit)) + r"(?![\w/])"
            out.append((f[:-4], name, value, unit, re.compile(pat)))
    return out


def student_reads(rel):
    """Whether a handout's file (its path in the handout) is text a student
    reads about a lab: the labs, the decks, the checkers, the READMEs."""
    return bool(re.match(r"(labs/|slides/[^/]+\.md$|checker/\d\d-[^/]+\.bats$|README\.md$)", rel))


def leaks(kit, top):
    refs, out = reference_figures(kit), []
    for d, dirs, files in os.walk(top):
        dirs[:] = sorted(x for x in dirs if x not in (".git", "node_modules", "vendor"))
        for f in sorted(files):
            path = os.path.join(d, f)
            rel = os.path.relpath(path, top)
            if not (f.endswith(TEXT) or f in ("Makefile", "run-checks")) or os.path.islink(path):
                continue
            try:
                text = open(path, encoding="utf-8").read()
            except (UnicodeDecodeError, OSError):
                continue
            if rel.endswith(".md"):
                text = re.sub(r"<!--.*?-->", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
            for lab, name, value, unit, pat in refs:
                for m in pat.finditer(text):
                    out.append("%s:%d: %s = %s %s, a figure of the kit's reference runs of %s" % (
                        rel, text.count("\n", 0, m.start()) + 1, name, value, unit, lab))
            if rel.endswith(".svg") and re.search(r"ms shown, \d+ records", text):
                out.append("%s:1: a timeline of a measured run (the kit's; a student's deck shows the student's own)" % rel)
            if not student_reads(rel):
                continue
            lines = text.split("\n") + [""]
            for i, line in enumerate(lines[:-1], 1):
                # the source may close the sentence on the next line
                if GPU.search(line) and MEASURED.search(line) and not SOURCE.search(line + " " + lines[i]):
                    out.append("%s:%d: a measured figure on a named GPU (%s): %s" % (
                        rel, i, MEASURED.search(line).group(0), line.strip()[:120]))
    return out


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "leaks":
        found = leaks(sys.argv[2], sys.argv[3])
        for x in found:
            print(x)
        return 1 if found else 0
    if len(sys.argv) >= 3 and sys.argv[1] == "notes-out":
        for p in sys.argv[2:]:
            print("%s\t%d" % (p, notes_out(p)))
        return 0
    if len(sys.argv) < 3 or sys.argv[1] not in ("list", "find", "elide"):
        print("usage: answers.py list KIT | answers.py find KIT FILE... | answers.py elide KIT FILE.md... |"
              " answers.py notes-out FILE... | answers.py leaks KIT DIR",
              file=sys.stderr)
        return 2
    kit = sys.argv[2]
    ans = answers(kit)
    if sys.argv[1] == "list":
        for lab, s in ans:
            print("%s\t%s" % (lab, s))
        return 0 if ans else 1
    want = {s for _, s in ans}
    if sys.argv[1] == "elide":
        for path in sys.argv[3:]:
            print("%s\t%d" % (path, elide(path, want)))
        return 0
    for path in sys.argv[3:]:
        for s, a, b in file_statements(path):
            if s in want:
                print("%s:%d:%d:%s" % (path, a, b, s))
        if path.endswith((".cu", ".c", ".h", ".py")):
            for text, a, b in string_literals(path):
                for s in sorted(want):
                    if s in text:
                        print("%s:%d:%d:%s" % (path, a, b, s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
