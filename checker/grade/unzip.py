#!/usr/bin/env python3
"""unzip.py -- unpack a .zip submission, with python3 alone (no unzip).

    python3 unzip.py ZIP DEST        (grade-one: python3 - ZIP DEST <unzip.py,
                                      as the sandbox user)

Writes the regular files and folders of ZIP under DEST. Refuses, and names
on stdout as "refused: NAME (why)", every member that could land outside
DEST or is not a plain file: an absolute path (/x, C:/x), a '..' in its
path, a symbolic link. Backslashes in a name are taken as folder
separators (some Windows tools write them). Exit status 0 when the archive
was read (refusals or not); 1 when it cannot be opened, with one line on
stdout, "error: why", or when a member cannot be unpacked (damaged,
encrypted, an unknown compression, past the file size limit): then one line
"error: member NAME cannot be unpacked (why)" for each such member, none of
it left behind, and every other member unpacked all the same (a lab whose
file is intact is graded). Standard library only.
"""
import os
import shutil
import stat
import sys
import zipfile


def main():
    if len(sys.argv) != 3:
        print("error: usage: unzip.py ZIP DEST")
        return 2
    src, dest = sys.argv[1], sys.argv[2]
    try:
        z = zipfile.ZipFile(src)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError) as e:
        print("error: %s" % e)
        return 1
    failed = 0
    with z:
        for info in z.infolist():
            name = info.filename.replace("\\", "/")
            parts = name.split("/")
            why = None
            if name.startswith("/") or (len(parts[0]) == 2 and parts[0][1] == ":"):
                why = "an absolute path"
            elif ".." in parts:
                why = "a '..' in its path"
            elif stat.S_ISLNK(info.external_attr >> 16):
                why = "a symbolic link"
            if why:
                print("refused: %s (%s)" % (info.filename, why))
                continue
            parts = [p for p in parts if p not in ("", ".")]
            if not parts:
                continue
            path = os.path.join(dest, *parts)
            try:
                if name.endswith("/"):
                    os.makedirs(path, exist_ok=True)
                    continue
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with z.open(info) as r, open(path, "wb") as w:
                    shutil.copyfileobj(r, w)
            except Exception as e:     # damaged, encrypted, too large, zlib.error...
                print("error: member %s cannot be unpacked (%s: %s)"
                      % (info.filename, type(e).__name__, e))
                failed = 1
                try:
                    if not name.endswith("/") and os.path.isfile(path):
                        os.remove(path)    # no half of a member
                except OSError:
                    pass
    return failed


if __name__ == "__main__":
    sys.exit(main())
