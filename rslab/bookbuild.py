"""Build the book: ``jupyter-book build . --all -W -n --keep-going``, then print
how long each page took to execute.

``python -m rslab.bookbuild [--strict] [--path DIR]``. Exit status is the
build's: a page that fails to execute, or any Sphinx warning, fails it.
"""

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

EXECUTED = re.compile(r"(\S+): Executed notebook in ([0-9.]+) seconds")


def page_times(log: str) -> list[tuple[str, float]]:
    """Return (page, seconds) for every 'Executed notebook in N seconds' line of a build log."""
    return [(Path(m.group(1)).name, float(m.group(2))) for m in EXECUTED.finditer(log)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rslab.bookbuild", description=__doc__)
    parser.add_argument("--path", default=".", help="book root (default: .)")
    parser.add_argument("--strict", action="store_true", help="-W -n --keep-going")
    args = parser.parse_args(argv)
    cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", args.path, "--all"]
    if args.strict:
        cmd += ["-W", "-n", "--keep-going"]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in proc.stdout:
        sys.stdout.write(line)
        lines.append(line)
    rc = proc.wait()
    total = time.perf_counter() - start
    times = page_times("".join(lines))
    print("\nPage execution times:")
    for page, seconds in times:
        print(f"  {seconds:8.1f} s  {page}")
    print(f"  {sum(s for _, s in times):8.1f} s  all pages; whole build {total:.1f} s")
    if rc == 0 and not (Path(args.path) / "_build" / "html" / "index.html").exists():
        print("build reported success but _build/html/index.html is missing", file=sys.stderr)
        return 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
