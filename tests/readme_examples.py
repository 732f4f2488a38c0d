#!/usr/bin/python3
"""The README's examples of envlock's output, run for real.

A block the README marks with a line

    <!-- example: ARGS... -->

followed by a fenced block whose first line is "$ envlock ..." (what the
reader types) holds, after that line, what `envlock ARGS...` prints, run
from the repository root with COLUMNS=80 on the made-up machines the tests
build (tests/golden, tests/fixtures/roots). Exit status is not compared
(check and diff exit 1 when they find something).

usage: readme_examples.py ENVLOCK README [--update] [--top DIR]
Prints one line per example: "ok ARGS" or "differs ARGS" and a unified
diff; with --update, rewrites the README's blocks instead. The commands run
in the README's folder, or in DIR with --top. Exit 0 when
every example matches (or was rewritten), 1 otherwise.
"""
import difflib
import os
import shlex
import subprocess
import sys

MARK = "<!-- example: "


def run(envlock, args, top):
    env = dict(os.environ, COLUMNS="80", LC_ALL="C", TZ="UTC", NO_COLOR="1")
    env.pop("CLICOLOR_FORCE", None)
    r = subprocess.run([envlock] + args, cwd=top, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return r.stdout.rstrip("\n").split("\n")


def main():
    envlock, readme = os.path.abspath(sys.argv[1]), sys.argv[2]
    update = "--update" in sys.argv[3:]
    top = os.path.dirname(os.path.abspath(readme))
    if "--top" in sys.argv[3:]:
        top = sys.argv[sys.argv.index("--top") + 1]
    lines = open(readme, encoding="utf-8").read().split("\n")
    out, bad, seen, i = [], 0, 0, 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        if not line.startswith(MARK) or not line.endswith(" -->"):
            continue
        seen += 1
        args = shlex.split(line[len(MARK):-len(" -->")])
        if i + 1 >= len(lines) or not lines[i].startswith("```") or not lines[i + 1].startswith("$ envlock"):
            print("malformed %s: a fenced block whose first line is '$ envlock ...' must follow" % " ".join(args))
            return 1
        end = i + 2
        while end < len(lines) and lines[end] != "```":
            end += 1
        have, want = lines[i + 2:end], run(envlock, args, top)
        out += lines[i:i + 2]
        if have == want:
            print("ok %s" % " ".join(args))
        elif update:
            print("rewritten %s" % " ".join(args))
        else:
            bad += 1
            print("differs %s" % " ".join(args))
            for d in difflib.unified_diff(have, want, "README.md", "envlock " + " ".join(args), lineterm=""):
                print("  " + d)
        out += want if update else have
        i = end
    if update:
        with open(readme + ".new", "w", encoding="utf-8") as f:
            f.write("\n".join(out))
        os.replace(readme + ".new", readme)
    if not seen:
        print("no examples marked in %s" % readme)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
