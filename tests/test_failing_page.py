"""A page with a failing cell fails both the page test and the book build; the build reads
pages in parallel (two at once), and a warning or a failing page still fails it."""

import json
import shutil
import subprocess
import sys

import pytest
from nbclient.exceptions import CellExecutionError
from pagerun import ROOT, execute_page

HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

"""
FAILING_PAGE = HEADER + """# A page that fails

```{code-cell} ipython3
raise RuntimeError("this cell fails on purpose")
```
"""
MEETING_PAGE = HEADER + """# Page {me}

```{{code-cell}} ipython3
import time
from pathlib import Path

Path("{me}.here").touch()
deadline = time.monotonic() + 300
while not Path("{other}.here").exists():  # the other page runs at the same time, or never
    assert time.monotonic() < deadline, "the two pages did not run at the same time"
    time.sleep(0.1)
```
"""
PLAIN_PAGES = 5
"""Plain pages beside the executed ones: Sphinx reads in parallel only more than five."""


@pytest.fixture
def failing_book(tmp_path):
    """A book using the project's own configuration, whose first page raises."""
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "broken.md").write_text(FAILING_PAGE)
    toc = "format: jb-book\nroot: book/broken\nchapters:\n"
    for i in range(PLAIN_PAGES):
        (tmp_path / "book" / f"plain{i}.md").write_text(f"# Plain page {i}\n\nText.\n")
        toc += f"  - file: book/plain{i}\n"
    for name in ("_config.yml", "references.bib"):
        shutil.copy(ROOT / name, tmp_path / name)
    for name in ("_ext", "book/_static", "tools"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    (tmp_path / "_toc.yml").write_text(toc)
    return tmp_path


def build(book, jobs=2):
    return subprocess.run(
        [sys.executable, "-m", "rslab.bookbuild", "--strict", "--jobs", str(jobs),
         "--path", str(book)], capture_output=True, text=True, timeout=600, cwd=book)


def test_failing_cell_fails_page_execution(failing_book):
    with pytest.raises(CellExecutionError, match="fails on purpose"):
        execute_page(failing_book / "book" / "broken.md", timeout=120)


@pytest.mark.slow
def test_failing_cell_fails_the_book_build(failing_book):
    proc = build(failing_book)
    assert proc.returncode != 0, proc.stdout[-2000:]
    assert "fails on purpose" in proc.stdout + proc.stderr


@pytest.mark.slow
def test_a_warning_fails_the_parallel_build(failing_book):
    (failing_book / "book" / "broken.md").write_text("# No longer broken\n")
    (failing_book / "book" / "plain3.md").write_text("# Plain\n\nSee {doc}`no_such_page`.\n")
    proc = build(failing_book)
    assert proc.returncode != 0, proc.stdout[-2000:]
    assert "no_such_page" in proc.stderr


@pytest.mark.slow
def test_two_pages_run_at_once_and_the_build_prints_their_times(failing_book):
    pages = failing_book / "book"
    (pages / "broken.md").write_text(MEETING_PAGE.format(me="broken", other="plain0"))
    (pages / "plain0.md").write_text(MEETING_PAGE.format(me="plain0", other="broken"))
    proc = build(failing_book)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads((failing_book / "_build" / "execution.json").read_text())["pages"]
    assert set(data) == {"book/broken", "book/plain0"}
    tail = proc.stdout[proc.stdout.index("Page execution times (MyST-NB's execution data):"):]
    for page, d in data.items():
        assert d["succeeded"] and d["runtime"] > 0
        assert f"{d['runtime']:8.1f} s  {page}" in tail
