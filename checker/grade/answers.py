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

A statement is code between ';', '{' and '}' (a Markdown file: in its
fenced code blocks, and any other line by itself), compared without its
comments, without any whitespace, and with a CUDA_CHECK(...) wrapper taken
off (in a Markdown file's prose, each `inline code` span is one too)
off: `CUDA_CHECK(cudaStreamWaitEvent(w->stream_b, produced, 0));` and
`cudaStreamWaitEvent(w->stream_b, produced, 0); /* TODO(5) */` are the
same statement. An answer is a statement of a lab's solution that is in no
starter and nowhere in common/ (lab 02's starter launches a kernel, which is
lab 01's answer), and names at least two things (so "}", "break;" or a lone
"cudaMemcpyHostToDevice," are no answers). Standard library only.
"""
import os
import re
import sys

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


def file_statements(path):
    """The statements of a file; of a Markdown file, those of its fenced code
    blocks, and of each other line by itself (its HTML comments left out)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if not path.endswith(".md"):
        return statements(text)
    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        if lines[i].lstrip().startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].lstrip().startswith("```"):
                j += 1
            out += statements("\n".join(lines[i + 1:j]), i + 2)
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
    statement in a code block become one "/* ... */" (its indentation kept),
    an inline code span that is one `/* ... */`. Returns how many."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
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
            lines[a - 1] = re.match(r"\s*", line).group(0) + "/* ... */"
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


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "notes-out":
        for p in sys.argv[2:]:
            print("%s\t%d" % (p, notes_out(p)))
        return 0
    if len(sys.argv) < 3 or sys.argv[1] not in ("list", "find", "elide"):
        print("usage: answers.py list KIT | answers.py find KIT FILE... | answers.py notes-out FILE...",
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
    found = 0
    for path in sys.argv[3:]:
        for s, a, b in file_statements(path):
            if s in want:
                print("%s:%d:%d:%s" % (path, a, b, s))
                found += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
