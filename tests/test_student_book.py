"""The students' book holds no answer: its markup, a small book built both ways, the whole book.

- :func:`rslab.student.strip_page` removes solution directives and cells tagged ``solution``;
- a two-page book is built full and students' (``rslab.bookbuild --student``): the page
  whose answer cell is tagged leaks nothing (sentences, numbers, claims, downloads), the page
  whose answer cell is not is caught by :func:`rslab.student.leaks`;
- every page of the book: the names its solutions cite come from cells tagged ``solution``
  (every page's do);
- ``leaks`` (``make leak-test``): every file of the whole students' book at quick scale
  searched for the full book's answers: solution sentences and the cells computing them
  (their claims and definitions) and solution numbers, in every file: none may show (a time
  a page measures is printed with two significant digits, ``prose.seconds``, so it cannot
  pass for an answer's three).
"""

import os
import shutil
import subprocess
import sys

import pytest
from pagerun import ROOT, toc_pages

from rslab.student import cell_tags, leaks, solution_marks, strip_page, untagged_answers

PAGE = """---
jupytext:
  text_representation: {extension: .md, format_name: myst, format_version: 0.13}
kernelspec: {display_name: Python 3, language: python, name: python3}
mystnb: {execution_mode: inline}
---

# Page TITLE

```{code-cell} ipython3
from rslab.chapters.claims import claim

shown = f"{1 / 7:.4f}"
```

The chapter's own number {eval}`shown` stays in the students' book.

```{code-cell} ipython3
:tags: [remove-input, TAGS]
answer = f"{2 / 3 + OFFSET:.5f}"
claim(2 / 3 + OFFSET > 1.6, "The answer on the TITLE page is more than one point six.")
answer
```

:::{exercise}
:label: ex-TITLE
How much is OFFSET and two thirds, to five places?
:::

:::{solution} ex-TITLE
:class: dropdown
It is {eval}`answer`. The answer on the TITLE page is more than one point six.
:::
"""


def test_strip_page_removes_solutions_and_solution_cells_only():
    page = PAGE.replace("TAGS", "solution").replace("TITLE", "one").replace("OFFSET", "1")
    out = strip_page(page)
    assert "answer =" not in out and "more than one point six" not in out
    assert "{solution}" not in out
    assert "shown = " in out and "How much is 1 and two thirds" in out
    assert strip_page(PAGE.replace("TAGS", "hide-input")).count("answer =") == 1
    assert cell_tags(":tags: [remove-input, solution]\nx = 1\n") == ["remove-input", "solution"]
    assert cell_tags("---\ntags: [solution]\n---\nx = 1\n") == ["solution"]
    assert cell_tags("x = 1  # :tags: [solution]\n") == []


def test_untagged_answers_names_the_cells_to_tag():
    assert untagged_answers(PAGE.replace("TAGS", "hide-input").replace("TITLE", "a")) == \
        [("ex-a", ["answer"])]
    assert untagged_answers(PAGE.replace("TAGS", "solution")) == []


def test_solution_marks_keep_long_sentences_and_three_digit_numbers():
    sentences, numbers = solution_marks("Yes. It is 1.66667, 12 and 1,244,858 in all of it. "
                                        "Short one.")
    assert sentences == ["It is 1.66667, 12 and 1,244,858 in all of it."]
    assert numbers == ["1,244,858", "1.66667"]


@pytest.fixture(scope="module")
def two_page_book(tmp_path_factory):
    root = tmp_path_factory.mktemp("book")
    (root / "book").mkdir()
    (root / "book" / "clean.md").write_text(PAGE.replace("TAGS", "solution")
                                            .replace("TITLE", "clean").replace("OFFSET", "1"))
    (root / "book" / "leaky.md").write_text(PAGE.replace("TAGS", "hide-output")
                                            .replace("TITLE", "leaky").replace("OFFSET", "2"))
    for name in ("_config.yml", "references.bib"):
        shutil.copy(ROOT / name, root / name)
    for name in ("_ext", "tools"):
        (root / name).symlink_to(ROOT / name, target_is_directory=True)
    shutil.copytree(ROOT / "book" / "_static", root / "book" / "_static", symlinks=True)
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/clean\nchapters:\n"
                                   "  - file: book/leaky\n")
    run = [sys.executable, "-m", "rslab.bookbuild", "--strict", "--jobs", "1", "--path",
           str(root)]
    for extra in ([], ["--student"]):
        proc = subprocess.run(run + extra, capture_output=True, text=True, timeout=900,
                              cwd=root)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return root


@pytest.mark.slow
def test_a_tagged_answer_leaks_nowhere_and_an_untagged_one_is_found(two_page_book):
    full = two_page_book / "_build" / "html"
    student = two_page_book / "_build" / "student" / "_build" / "html"
    assert "1.66667" in (full / "book" / "clean.html").read_text()
    assert "2.66667" in (full / "book" / "leaky.html").read_text()
    found = leaks(full, student)
    assert found and all(line.startswith("book/leaky.html") for line in found), found
    assert "book/leaky.html: '2.66667' in book/leaky.html" in found  # a folded output
    assert "book/leaky.html: '2.66667' in _sources/book/leaky.ipynb" in found  # the download
    assert any("answer cell (answer): 'The answer on the leaky page is more than one point "
               "six.' in _sources/book/leaky.md" in line for line in found)  # its claim
    clean = {p.relative_to(student).as_posix(): p.read_text(errors="replace")
             for p in student.rglob("*") if p.is_file() and "clean" in p.name}
    assert {"book/clean.html", "_sources/book/clean.md", "_sources/book/clean.ipynb"} <= \
        set(clean)
    for name, text in clean.items():
        assert "1.66667" not in text and "more than one point six" not in text, name
        assert "answer =" not in text, name
    assert "0.1429" in clean["book/clean.html"]  # the chapter's own number is still there


@pytest.mark.parametrize("page", toc_pages(), ids=[p.stem for p in toc_pages()])
def test_the_names_a_solution_cites_come_from_solution_cells(page):
    found = {label for label, _ in untagged_answers(page.read_text())}
    assert not found, f"{page.name}: tag the cells these solutions cite `solution`: " \
                      f"{sorted(found)}"


@pytest.mark.leaks
def test_no_file_of_the_students_book_reveals_a_solution():
    full, student = ROOT / "_build" / "html", ROOT / "_build" / "student" / "_build" / "html"
    if not (full / "index.html").exists() or not (student / "index.html").exists():
        if os.environ.get("RSLAB_REQUIRE_BOOK") == "1":
            pytest.fail("build the book and the students' book first (make book-quick "
                        "book-student-quick)")
        pytest.skip("the full and the students' book are not built")
    found = leaks(full, student)
    assert not found, "answers leak into the students' book:\n" + "\n".join(found[:40])


def test_lab_student_mode_serves_the_stripped_pages(tmp_path, monkeypatch):
    import rslab.lab as lab

    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "page.md").write_text(PAGE.replace("TAGS", "solution")
                                               .replace("TITLE", "lab").replace("OFFSET", "1"))
    (tmp_path / "_config.yml").write_text("title: t\n")
    seen = {}
    monkeypatch.setattr(lab.os, "execve", lambda path, cmd, env: seen.update(cmd=cmd))
    lab.main([str(tmp_path / "book"), "--student", "--no-browser"])
    served = tmp_path / "_build" / "student" / "lab" / "book"
    assert f"--ServerApp.root_dir={served}" in seen["cmd"] and "--student" not in seen["cmd"]
    text = (served / "page.md").read_text()
    assert "How much is 1 and two thirds" in text and "answer =" not in text
    assert "{solution}" not in text
    assert "answer =" in (tmp_path / "book" / "page.md").read_text()  # the book is untouched


def test_a_measured_time_has_two_significant_digits():
    """The leak search takes numbers of three significant digits: a time never is one."""
    from rslab.chapters.prose import seconds
    from rslab.student import significant_digits

    shown = [seconds(x) for x in (0.0123, 2.77, 9.96, 67.4, 186.0, 1234.5)]
    assert shown == ["0.012", "2.8", "10", "67", "190", "1,200"]
    assert all(significant_digits(s) <= 2 for s in shown)
