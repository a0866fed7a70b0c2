"""Build the book: what ``jupyter-book build . --all -W -n --keep-going`` does, with
``--jobs`` pages executed at once (Sphinx's parallel read), then print how long each page
took to execute: MyST-NB's execution data, which the book's Sphinx extension
(``_ext/rslab_book.py``) writes to ``_build/execution.json``.

``python -m rslab.bookbuild [--strict] [--student] [--jobs N] [--path DIR]``. ``--student``
builds the students' book, the same pages without their answers (solution directives and
cells tagged ``solution``, :mod:`rslab.student`), from the students' copy of the book in
``_build/student/src`` into ``_build/student/_build/html``. ``--jobs`` defaults to the cores this
process may use; each page's own process pools then get the cores over the jobs
(``RSLAB_WORKERS``, read by ``rslab.executors``), so two pages at once do not oversubscribe
two cores. First fetches the pages' JavaScript (``tools/fetch_web_assets.sh``, a no-op once
fetched) so the book works offline. Exit status is the build's: a page that fails to
execute, or any Sphinx warning, fails it; so does a built page that loads a script or style
sheet from another host.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path

from rslab.student import copy_book

EXECUTION_DATA = Path("_build") / "execution.json"
MEMO_DIR = Path("_build") / "memo"
MEMO_ENV = "RSLAB_MEMO_DIR"
"""The environment variable ``rslab.memo`` reads (this module imports nothing of rslab)."""
WORKERS_ENV = "RSLAB_WORKERS"
"""The environment variable ``rslab.executors.default_workers`` reads."""
REMOTE_ASSET = re.compile(
    r"<(?:script|link|img|iframe)\b[^>]{0,500}?\b(?:src|href)=[\"']((?:https?:)?//[^\"'\s]+)",
    re.IGNORECASE)
CDN_HOST = re.compile(r"[\w.-]{0,40}(?:jsdelivr|unpkg|cdnjs)[\w./@-]{0,80}", re.IGNORECASE)


def page_times(root: Path) -> list[tuple[str, float, bool]]:
    """(page, seconds, succeeded) of every executed page, from the build's execution data;
    empty if the build wrote none."""
    path = Path(root) / EXECUTION_DATA
    if not path.is_file():
        return []
    pages = json.loads(path.read_text())["pages"]
    return [(page, float(d["runtime"] or 0.0), bool(d["succeeded"]))
            for page, d in pages.items()]


def remote_assets(html_dir: Path) -> dict[str, list[str]]:
    """Pages of a built book that load a script, style sheet, image or frame from another host."""
    found = {}
    for page in sorted(html_dir.rglob("*.html")):
        text = page.read_text(encoding="utf-8", errors="replace")
        urls = REMOTE_ASSET.findall(text) + CDN_HOST.findall(text)
        if urls:
            found[str(page.relative_to(html_dir))] = sorted(set(urls))
    return found


def fetch_web_assets(root: Path) -> int:
    """Run ``tools/fetch_web_assets.sh`` (npm pack, pinned checksums) if the book has it."""
    script = root / "tools" / "fetch_web_assets.sh"
    return subprocess.call(["bash", str(script)]) if script.is_file() else 0


def cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def sphinx_build(root: Path, out: Path, strict: bool, jobs: int) -> int:
    """Sphinx on the book at ``root`` with jupyter-book's configuration, as ``jupyter-book
    build ROOT --all [-W -n --keep-going] [--path-output OUT]`` runs it, ``jobs`` pages read
    at once; the build's status (a page that raised prints its traceback)."""
    from jupyter_book.sphinx import build_sphinx
    from sphinx.errors import SphinxParallelError

    root = root.absolute()
    overrides = {"external_toc_path": (root / "_toc.yml").as_posix(),
                 "latex_individualpages": False}
    if strict:
        overrides["nitpicky"] = True
    result = build_sphinx(root, out.absolute() / "_build" / "html", noconfig=True,
                          path_config=str(root / "_config.yml"), confoverrides=overrides,
                          builder="html", warningiserror=strict, keep_going=strict,
                          freshenv=True, jobs=jobs)
    if isinstance(result, SphinxParallelError):
        print(result.traceback, file=sys.stderr)
    elif isinstance(result, BaseException):
        traceback.print_exception(result, file=sys.stderr)
    return 1 if isinstance(result, BaseException) else result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rslab.bookbuild", description=__doc__)
    parser.add_argument("--path", default=".", help="book root (default: .)")
    parser.add_argument("--strict", action="store_true", help="-W -n --keep-going")
    parser.add_argument("--student", action="store_true",
                        help="the students' book: no solutions (_build/student)")
    parser.add_argument("--jobs", type=int, default=cores(),
                        help="pages executed at once (default: the cores this process may use)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be a positive integer, got {args.jobs}")
    out = Path(args.path) / "_build" / "student" if args.student else Path(args.path)
    source = copy_book(args.path, out / "src") if args.student else Path(args.path)
    if fetch_web_assets(Path(args.path)) != 0:
        print("could not fetch the book's JavaScript (tools/fetch_web_assets.sh)", file=sys.stderr)
        return 1
    for stale in ("html", "jupyter_execute", "screenshots"):  # pages of removed chapters
        shutil.rmtree(out / "_build" / stale, ignore_errors=True)
    (out / EXECUTION_DATA).unlink(missing_ok=True)
    # this build's cache of deterministic results, empty at the start (see rslab.memo)
    memo_dir = out.resolve() / MEMO_DIR
    shutil.rmtree(memo_dir, ignore_errors=True)
    memo_dir.mkdir(parents=True)
    os.environ[MEMO_ENV] = str(memo_dir)
    os.environ.setdefault(WORKERS_ENV, str(max(1, cores() // args.jobs)))
    start = time.perf_counter()
    rc = sphinx_build(source, out, args.strict, args.jobs)
    total = time.perf_counter() - start
    times = page_times(out)
    print("\nPage execution times (MyST-NB's execution data):")
    for page, seconds, ok in times:
        print(f"  {seconds:8.1f} s  {page}" + ("" if ok else "  (failed)"))
    print(f"  {sum(s for _, s, _ in times):8.1f} s  all pages; whole build {total:.1f} s")
    html_dir = out / "_build" / "html"
    if rc == 0 and not (html_dir / "index.html").exists():
        print("build reported success but _build/html/index.html is missing", file=sys.stderr)
        return 1
    remote = remote_assets(html_dir) if html_dir.is_dir() else {}
    for page, urls in remote.items():
        print(f"{page} loads from another host (the book must work offline): {', '.join(urls)}",
              file=sys.stderr)
    return rc or (1 if remote else 0)


if __name__ == "__main__":
    sys.exit(main())
