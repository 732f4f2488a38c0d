"""The global symbols of a built object, for the checks that read calls
between envlock's files from their objects (file-cycles.py, layers.py)."""

import subprocess


def symbols(obj, tool):
    """(defined, undefined) global symbol names of one object file; on
    failure, exits 2 with one line naming tool and the object."""
    try:
        out = subprocess.run(["nm", "-P", obj], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit(f"{tool}: '{obj}': nm failed: {e}") from None
    defined, undefined = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        name, kind = f[0], f[1]
        if kind == "U":
            undefined.add(name)
        elif kind.isupper() or kind in "vw":
            # global definitions (and weak ones); lowercase is file-local
            defined.add(name)
    return defined, undefined
