"""The book's Sphinx extension schedules the parallel read: the listed pages first, one page
per task, started in that order by Sphinx's own ``ParallelTasks``."""

import importlib.util
import time
from types import SimpleNamespace

from pagerun import ROOT
from sphinx.util.parallel import ParallelTasks

spec = importlib.util.spec_from_file_location("rslab_book", ROOT / "_ext" / "rslab_book.py")
ext = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ext)


def test_the_listed_pages_are_read_first_in_their_order():
    app = SimpleNamespace(config=SimpleNamespace(rslab_read_order=["c", "x", "a"]))
    docnames = ["a", "b", "c", "d"]
    ext.listed_first(app, None, docnames)
    assert docnames == ["c", "a", "b", "d"]


def _start_order(docnames, nproc, log):
    def task(chunk):  # as a page does, it outlasts the loop that adds the tasks
        with log.open("a") as fh:
            fh.write(" ".join(chunk) + "\n")
        time.sleep(0.3)

    tasks = ParallelTasks(nproc)
    for chunk in ext.one_page_per_task(docnames, nproc):
        tasks.add_task(task, chunk)
    tasks.join()
    return log.read_text().split()


def test_sphinx_starts_the_pages_in_the_given_order(tmp_path):
    docnames = [f"page{i}" for i in range(7)]
    chunks = ext.one_page_per_task(docnames, 2)
    assert all(len(c) == 1 for c in chunks) and sorted(sum(chunks, [])) == docnames
    assert _start_order(docnames, 1, tmp_path / "one") == docnames
