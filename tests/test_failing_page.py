"""A page with a failing cell fails both the page test and the book build."""

import json
import shutil
import subprocess
import sys

import pytest
from nbclient.exceptions import CellExecutionError
from pagerun import ROOT, execute_page

FAILING_PAGE = """---
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

# A page that fails

```{code-cell} ipython3
raise RuntimeError("this cell fails on purpose")
```
"""


@pytest.fixture
def failing_book(tmp_path):
    """A one-page book using the project's own configuration, whose page raises."""
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "broken.md").write_text(FAILING_PAGE)
    for name in ("_config.yml", "references.bib"):
        shutil.copy(ROOT / name, tmp_path / name)
    for name in ("_ext", "book/_static", "tools"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/broken\n")
    return tmp_path


def test_failing_cell_fails_page_execution(failing_book):
    with pytest.raises(CellExecutionError, match="fails on purpose"):
        execute_page(failing_book / "book" / "broken.md", timeout=120)


@pytest.mark.slow
def test_failing_cell_fails_the_book_build(failing_book):
    proc = subprocess.run(
        [sys.executable, "-m", "rslab.bookbuild", "--strict", "--path", str(failing_book)],
        capture_output=True, text=True, timeout=600, cwd=failing_book,
    )
    assert proc.returncode != 0, proc.stdout[-2000:]
    assert "fails on purpose" in proc.stdout + proc.stderr


@pytest.mark.slow
def test_the_build_prints_page_times_from_myst_nbs_execution_data(failing_book):
    page = failing_book / "book" / "broken.md"
    page.write_text(FAILING_PAGE.replace('raise RuntimeError("this cell fails on purpose")',
                                         "import time\ntime.sleep(1.5)"))
    proc = subprocess.run(
        [sys.executable, "-m", "rslab.bookbuild", "--strict", "--path", str(failing_book)],
        capture_output=True, text=True, timeout=600, cwd=failing_book,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads((failing_book / "_build" / "execution.json").read_text())
    (seconds,) = [d["runtime"] for d in data["pages"].values()]
    assert seconds >= 1.5 and data["pages"]["book/broken"]["succeeded"]
    tail = proc.stdout[proc.stdout.index("Page execution times (MyST-NB's execution data):"):]
    assert f"{seconds:8.1f} s  book/broken" in tail
