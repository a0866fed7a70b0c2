"""The students' book: every page without its answers, and the search for answers that leak.

**The markup the pages use** (MyST):

- a solution is a ``solution`` directive (sphinx-exercise), as the pages write it today;
- a code cell that computes or states an answer — the numbers a solution cites, a ``claim``
  about an exercise — carries the tag ``solution``::

      ```{code-cell} ipython3
      :tags: [remove-input, solution]
      ex1_after = f"{after:.2f}"
      claim(after < before, "only both changes together shorten the sum pass")
      ```

  In the students' book such a cell is removed from the page before it runs: its source,
  its outputs and its claims are nowhere (the HTML, the ``.ipynb`` and ``.md`` downloads,
  the pages Lab serves). So a name a ``solution`` cell defines may be cited only inside
  solutions (the students' build, strict, fails on a name left undefined), and no other
  cell may use it.

:func:`strip_page` applies the markup to one page; :func:`copy_book` writes the students'
copy of the book (``rslab.bookbuild --student`` builds it; ``python -m rslab.lab
--student`` serves its pages); :func:`leaks` searches every published file of a students'
build for each solution's sentences and its numbers of three or more significant digits,
taken from the full build's HTML, and for the cells that compute a solution's numbers
(:func:`answer_cells`: their claims' sentences and their definitions of those numbers).
``python -m rslab.student leaks FULL_HTML STUDENT_HTML`` prints them (exit 1 when any).
"""

from __future__ import annotations

import html
import re
import shutil
import sys
from html.parser import HTMLParser
from pathlib import Path

from rslab.chapters.prose import eval_names, solutions, strip_solutions

SOLUTION_TAG = "solution"
CODE_CELL = re.compile(r"^(?P<fence>`{3,})\{code-cell\}[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$\n?",
                       re.MULTILINE | re.DOTALL)
"""A MyST code cell, from its opening fence to the closing fence of the same length."""
BOOK_FILES = ("_config.yml", "_toc.yml", "references.bib")
BOOK_FOLDERS = ("_ext", "book", "docs")


def cell_tags(body: str) -> list[str]:
    """The tags of a code cell's body: its ``:tags: [...]`` option line, or ``tags:`` in
    the YAML block at its top."""
    lines = body.splitlines()
    if lines and lines[0].strip() == "---":
        block = lines[1:lines.index("---", 1)] if "---" in lines[1:] else []
        options = [line for line in block if line.startswith("tags:")]
        text = options[0][len("tags:"):] if options else ""
    else:
        options = []
        for line in lines:
            if not line.startswith(":"):
                break
            options.append(line)
        text = next((line[len(":tags:"):] for line in options if line.startswith(":tags:")), "")
    return [t.strip().strip("'\"") for t in text.strip().strip("[]").split(",") if t.strip()]


def solution_cells(markdown: str) -> list[str]:
    """The code cells of ``markdown`` tagged ``solution`` (their whole text)."""
    return [m.group(0) for m in CODE_CELL.finditer(markdown)
            if SOLUTION_TAG in cell_tags(m.group("body"))]


ASSIGNED = re.compile(r"^\s*((?:[A-Za-z_]\w*\s*,\s*)*[A-Za-z_]\w*)\s*=(?!=)", re.MULTILINE)
"""The names on the left of an assignment (``a = ...``, ``a, b = ...``) at a line's start."""


def _defined(body: str) -> set[str]:
    return {name.strip() for names in ASSIGNED.findall(body) for name in names.split(",")}


def answer_cells(markdown: str) -> list[tuple[list[str], str]]:
    """(names, cell body) of every code cell that defines a name only solutions cite (in
    ``{eval}``): the cells that compute an answer, tagged ``solution`` or not."""
    cited = {n for sol in solutions(markdown) for n in eval_names(sol)}
    only = cited - set(eval_names(strip_solutions(markdown)))
    return [(sorted(_defined(m.group("body")) & only), m.group("body"))
            for m in CODE_CELL.finditer(markdown) if _defined(m.group("body")) & only]


def untagged_answers(markdown: str) -> list[tuple[str, list[str]]]:
    """(solution label, names) for every solution citing names that only solutions cite and
    that a code cell without the ``solution`` tag defines: the cells to tag."""
    untagged = {n for names, body in answer_cells(markdown)
                if SOLUTION_TAG not in cell_tags(body) for n in names}
    out = []
    for solution in solutions(markdown):
        label = solution.split("\n", 1)[0].split("}", 1)[1].strip()
        names = sorted(set(eval_names(solution)) & untagged)
        if names:
            out.append((label, names))
    return out


def claims_of(body: str) -> list[str]:
    """The sentences a code cell's ``claim(condition, "sentence")`` calls state."""
    import ast

    try:
        tree = ast.parse("\n".join(line for line in body.splitlines()
                                   if not line.startswith(":")))
    except SyntaxError:
        return []
    return [call.args[1].value for call in ast.walk(tree)
            if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "claim"
            and len(call.args) > 1 and isinstance(call.args[1], ast.Constant)
            and isinstance(call.args[1].value, str)]


def strip_page(markdown: str) -> str:
    """``markdown`` without its solution directives and its ``solution`` code cells."""
    kept = CODE_CELL.sub(lambda m: "" if SOLUTION_TAG in cell_tags(m.group("body"))
                         else m.group(0), markdown)
    return strip_solutions(kept)


def copy_book(root, dst) -> Path:
    """The students' copy of the book at ``root`` in ``dst`` (emptied first): its
    configuration, its extension and its pages, every ``.md`` page stripped."""
    root, dst = Path(root), Path(dst)
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    for name in BOOK_FILES:
        if (root / name).is_file():
            shutil.copy2(root / name, dst / name)
    for name in BOOK_FOLDERS:
        if (root / name).is_dir():
            shutil.copytree(root / name, dst / name, symlinks=False,
                            ignore=shutil.ignore_patterns("*.ipynb", "__pycache__",
                                                          ".ipynb_checkpoints"))
    for page in dst.rglob("*.md"):
        if "_static" not in page.parts:
            page.write_text(strip_page(page.read_text(encoding="utf-8")), encoding="utf-8")
    return dst


# ------------------------------------------------------------------ the leak search
NUMBER = re.compile(r"(?<![\w.])[-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+−]?\d+)?%?")
SENTENCE_WORDS = 6
"""A solution's sentence is searched for when it has at least this many words."""
PUBLISHED = (".html", ".ipynb", ".md", ".txt", ".js", ".json")
"""The files of a build searched (``_static`` aside: the theme's and the book's assets, the
same in every build)."""


def significant_digits(number: str) -> int:
    mantissa = re.split(r"[eE]", number.replace(",", "").lstrip("-−").rstrip("%"))[0]
    digits = mantissa.replace(".", "").lstrip("0")
    return len(digits.rstrip("0")) if "." not in mantissa else len(digits)


class _PageText(HTMLParser):
    """A built page's text: its solutions (each), what a reader sees outside them (no code
    cell's source, nothing folded in a ``details`` element), and everything."""

    VOID = ("br", "img", "input", "meta", "link", "hr", "wbr", "source", "col", "area")

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.solutions, self.shown = [], [], []

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        classes = (dict(attrs).get("class") or "").split()
        kind = ("solution" if "solution" in classes else
                "hidden" if tag == "details" or "cell_input" in classes else None)
        if kind == "solution":
            self.solutions.append([])
        self.stack.append(kind)

    def handle_endtag(self, tag):
        if tag not in self.VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if "solution" in self.stack:
            self.solutions[-1].append(data)
        elif "hidden" not in self.stack:
            self.shown.append(data)


def _flat(text: str) -> str:
    return " ".join(html.unescape(text).replace("−", "-").split())


def page_text(path: Path) -> _PageText:
    parser = _PageText()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return parser


def solution_marks(solution: str) -> tuple[list[str], list[str]]:
    """(sentences of at least ``SENTENCE_WORDS`` words, numbers of at least three significant
    digits) of one solution's text."""
    text = _flat(solution)
    sentences = [s.strip() for s in re.split(r"(?<=[.!?:;])\s+", text)
                 if len(s.split()) >= SENTENCE_WORDS]
    numbers = sorted({n for n in NUMBER.findall(text) if significant_digits(n) >= 3})
    return sentences, numbers


def _forms(mark: str) -> list[str]:
    """The ways a mark may be written in another file: as shown and, a number, without its
    thousands separators."""
    forms = [mark.replace("−", "-")]
    if NUMBER.fullmatch(mark) and "," in mark:
        forms.append(forms[0].replace(",", ""))
    return forms


def leaks(full_html, student_html) -> list[str]:
    """Every solution sentence and number (of three or more significant digits) of the full
    build that a file of the students' build publishes and that no
    reader of the full build sees outside the solutions (on any page: the prose, the tables
    and figures' text, not a cell's source nor anything folded away), and every line of a
    cell computing an answer: ``PAGE: "text" in FILE``."""
    full_html, student_html = Path(full_html), Path(student_html)
    published = {p.relative_to(student_html).as_posix(): _flat(p.read_text(
        encoding="utf-8", errors="replace")) for p in sorted(student_html.rglob("*"))
        if p.is_file() and p.suffix in PUBLISHED and "_static" not in p.parts}
    pages = {p: page_text(p) for p in sorted(full_html.rglob("*.html"))}
    shown = " ".join(_flat(" ".join(t.shown)) for t in pages.values())
    found = []
    for source in sorted((full_html / "_sources").rglob("*.md")):
        page = source.relative_to(full_html / "_sources").with_suffix(".html").as_posix()
        for names, body in answer_cells(source.read_text(encoding="utf-8")):
            marks = claims_of(body) + [_flat(line) for line in body.splitlines()
                                       if ASSIGNED.match(line) and _defined(line) & set(names)]
            for mark in marks:
                found += [f"{page}: answer cell ({', '.join(names)}): {mark!r} in {name}"
                          for name, text in published.items() if _flat(mark) in text]
    for page, parsed in pages.items():
        for solution in parsed.solutions:
            sentences, numbers = solution_marks(" ".join(solution))
            marks = [m for m in sentences + numbers
                     if not any(_contains(shown, f, NUMBER.fullmatch(m)) for f in _forms(m))]
            for mark in marks:
                number = NUMBER.fullmatch(mark)
                where = [name for name, text in published.items()
                         if any(_contains(text, f, number) for f in _forms(mark))]
                found += [f"{page.relative_to(full_html).as_posix()}: {mark!r} in {w}"
                          for w in where]
    return found


def _contains(text: str, mark: str, number) -> bool:
    """``mark`` in ``text``; a number only where it is not part of a longer number."""
    if not number:
        return mark in text
    return re.search(rf"(?<![\d.]){re.escape(mark)}(?![\d])", text) is not None


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if len(argv) != 3 or argv[0] != "leaks":
        print("usage: python -m rslab.student leaks FULL_HTML_DIR STUDENT_HTML_DIR",
              file=sys.stderr)
        return 2
    for folder in argv[1:]:
        if not Path(folder).is_dir():
            print(f"python -m rslab.student: {folder} is not a built book's folder",
                  file=sys.stderr)
            return 2
    found = leaks(argv[1], argv[2])
    for line in found:
        print(line)
    print(f"{len(found)} leak(s) of a solution in the students' build", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
