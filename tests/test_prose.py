"""rslab.chapters.prose and the pages' MyST: numbers cited by plain names, solutions as
directives, the students' book without them."""

import re
import subprocess
import sys

import pytest
from pagerun import ROOT, toc_pages

from rslab.chapters.prose import (
    and_list,
    bad_eval_names,
    eval_names,
    solutions,
    strip_solutions,
    unit_names,
)

TEXT = """Intro {eval}`ratio` and {eval}`a.b`.

:::{exercise}
:label: ex-one
Two thirds?
:::

:::{solution} ex-one
:class: dropdown
HIDDEN-ONE is 0.667.
:::

::::{solution} ex-two
:class: dropdown
```python
HIDDEN-TWO
```
:::{note}
inside
:::
::::

after
"""


def test_eval_names_are_read_in_order_and_expressions_flagged():
    assert eval_names(TEXT) == ["ratio", "a.b"]
    assert bad_eval_names(TEXT) == ["a.b"]


def test_strip_solutions_removes_every_solution_and_keeps_the_rest():
    assert len(solutions(TEXT)) == 2
    out = strip_solutions(TEXT)
    assert "HIDDEN" not in out and "inside" not in out
    assert "Two thirds?" in out and out.rstrip().endswith("after")


PAGES = toc_pages()


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_a_page_citing_numbers_runs_inline_with_plain_names(page):
    text = page.read_text()
    if "{eval}" not in text or not text.startswith("---\n") or "kernelspec" not in text:
        return  # no number cited, or a page that is not a notebook (it shows the syntax)
    assert not bad_eval_names(text), f"{page.name}: {{eval}} of an expression, not a name"
    assert "execution_mode: inline" in text.split("---\n")[1], \
        f"{page.name} cites {{eval}} numbers: its top matter needs mystnb execution_mode inline"
    assert "{glue" not in text, f"{page.name}: a {{glue}} role (the book cites by {{eval}})"
    assert "```{admonition} Solution" not in text, f"{page.name}: a solution as an admonition"
    cells = re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", text, re.DOTALL)
    # MyST-NB's inline mode never runs a remove-cell cell, and after a cell whose last line
    # ends with ";" IPython keeps every later {eval} quiet (it returns no output)
    assert not [c for c in cells if c.lstrip().startswith(":tags:") and "remove-cell" in
                c.split("\n", 1)[0]], f"{page.name}: a remove-cell cell (use remove-input)"
    quiet = [c.rstrip().splitlines()[-1] for c in cells if c.rstrip().endswith(";")]
    assert not quiet, f"{page.name}: a cell ends with ';' (assign the figure instead): {quiet}"


STUDENT_PAGE = """---
jupytext:
  text_representation: {extension: .md, format_name: myst, format_version: 0.13}
kernelspec: {display_name: Python 3, language: python, name: python3}
mystnb: {execution_mode: inline}
---

# A page with an exercise

```{code-cell} ipython3
answer = f"{2 / 3:.3f}"
```

The number {eval}`answer` is in its sentence.

:::{exercise}
:label: tiny-ex
How much is two thirds?
:::

:::{solution} tiny-ex
:class: dropdown
SOLUTION-TEXT-42 is the answer.
:::
"""


@pytest.fixture
def tiny_book(tmp_path):
    import shutil

    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "tiny.md").write_text(STUDENT_PAGE)
    for name in ("_config.yml", "references.bib"):
        shutil.copy(ROOT / name, tmp_path / name)
    for name in ("_ext", "book/_static", "tools"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/tiny\n")
    return tmp_path


def built_text(html_dir) -> dict:
    return {p.relative_to(html_dir).as_posix(): p.read_text(errors="replace")
            for p in html_dir.rglob("*") if p.is_file() and p.suffix in (".html", ".ipynb",
                                                                          ".md", ".txt", ".js")}


@pytest.mark.slow
def test_the_students_book_has_no_solution_and_the_default_book_hides_it(tiny_book):
    run = [sys.executable, "-m", "rslab.bookbuild", "--strict", "--path", str(tiny_book)]
    for extra in ([], ["--student"]):
        proc = subprocess.run(run + extra, capture_output=True, text=True, timeout=600,
                              cwd=tiny_book)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    default = built_text(tiny_book / "_build" / "html")
    student = built_text(tiny_book / "_build" / "student" / "_build" / "html")
    page = default["book/tiny.html"]
    assert "The number <span" in page and "0.667" in page and "{eval}" not in page
    assert 'class="solution dropdown' in page and "SOLUTION-TEXT-42" in page
    assert "_sources/book/tiny.ipynb" in default
    assert "How much is two thirds?" in student["book/tiny.html"]
    leaks = [name for name, text in student.items() if "SOLUTION-TEXT-42" in text]
    assert not leaks, f"the students' book shows a solution in {leaks}"
    assert {"_sources/book/tiny.ipynb", "_sources/book/tiny.md"} <= set(student)


def test_units_and_lists_read_as_words():
    """A binding in the page's words, and items as a sentence lists them."""
    assert unit_names("st = valu") == "store port = VALU"
    assert unit_names("valu + sfu + recurrence") == "VALU + SFU + recurrence"
    assert unit_names("hbm") == "HBM" and unit_names("nonsense") == "nonsense"
    assert and_list([24, 28, 36]) == "24, 28 and 36"
    assert and_list(["a"]) == "a" and and_list([]) == ""
