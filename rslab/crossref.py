"""The book's cross-references and citations as plain Markdown, for Jupyter Lab.

The pages refer to each other by label (``{numref}`Chapter %s <ch-results>` ``, ``{ref}``,
``{doc}``), to the glossary by ``{term}`` and to the literature by ``{cite:p}``. Sphinx
resolves these when it builds the book; jupyterlab-myst does not (it shows a citation's raw
key, a reference's bare label). ``rslab.lab`` serves every chapter through ``resolve``, which
writes each role as the text the book shows — "Chapter 8", "(Rau, 1994)" — linked to the
page that holds it, and appends the works a page cites as a reference list. Numbers come from
the numbered parts of ``_toc.yml``, exactly as the build numbers them: chapters in order,
sections by their headings.

Nothing here changes a file: ``resolve`` maps text to text.
"""

import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_ROLE = re.compile(r"\{(cite(?::[pt])?|numref|ref|doc|term)\}`([^`]*)`")
_TARGET = re.compile(r"^\s*(.*?)\s*<([^<>]+)>\s*$")
_LABEL = re.compile(r"^\(([\w.:-]+)\)=\s*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
_FIELD = re.compile(r"(\w+)\s*=\s*[{\"](.*?)[}\"]\s*,?\s*$")


@dataclass(frozen=True)
class Target:
    """Where a label points: its page (a path relative to the book folder), title and number."""

    page: str
    title: str
    number: str | None


def _toc_pages(root: Path) -> list[tuple[str, bool]]:
    """Every page of ``_toc.yml`` in order, with whether its part is numbered."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text())
    pages = [(toc["root"], False)]
    for part in toc.get("parts", []):
        pages += [(c["file"], bool(part.get("numbered"))) for c in part.get("chapters", [])]
    return pages


def _page_targets(text: str, page: str, number: str | None) -> dict[str, Target]:
    """The labels of one page: each ``(label)=`` line names the heading (or block) after it."""
    targets, pending, counters = {}, [], [0] * 6
    for line, prose in prose_lines(text):
        if not prose:
            continue
        if m := _LABEL.match(line):
            pending.append(m.group(1))
            continue
        if m := _HEADING.match(line):
            depth, title = len(m.group(1)), m.group(2)
            if depth > 1:
                counters[depth - 2] += 1
                counters[depth - 1:] = [0] * (6 - depth + 1)
            sec = ".".join(str(c) for c in counters[:depth - 1])
            num = None if number is None else (number if depth == 1 else f"{number}.{sec}")
            targets.update({label: Target(page, title, num) for label in pending})
            pending = []
        elif line.strip() and pending:
            targets.update({label: Target(page, label, None) for label in pending})
            pending = []
    return targets


@dataclass(frozen=True)
class Book:
    """What ``resolve`` needs of a checkout: its pages' labels, titles and the bibliography."""

    folder: Path
    labels: dict[str, Target]
    titles: dict[str, Target]
    works: dict[str, dict[str, str]]


@cache
def load(root: str) -> Book | None:
    """The book at ``root`` (the folder holding ``_toc.yml``), or None if there is none."""
    root = Path(root)
    if not (root / "_toc.yml").is_file():
        return None
    labels, titles, chapter = {}, {}, 0
    for page, numbered in _toc_pages(root):
        path = root / f"{page}.md"
        if not path.is_file():
            continue
        text = path.read_text()
        chapter += numbered
        found = _page_targets(text, page, str(chapter) if numbered else None)
        labels.update(found)
        heading = next((m for line, prose in prose_lines(text)
                        if prose and (m := _HEADING.match(line))), None)
        titles[page] = Target(page, heading.group(2) if heading else page,
                              str(chapter) if numbered else None)
    bib = root / "references.bib"
    return Book(root, labels, titles, parse_bib(bib.read_text()) if bib.is_file() else {})


def parse_bib(text: str) -> dict[str, dict[str, str]]:
    """A BibTeX file's entries as ``{key: {field: value}}`` (one field per line, as ours)."""
    works, current = {}, None
    for line in text.splitlines():
        if m := re.match(r"\s*@\w+\{([^,]+),", line):
            current = works.setdefault(m.group(1).strip(), {})
        elif current is not None and (m := _FIELD.match(line.strip())):
            current[m.group(1).lower()] = m.group(2).replace("{", "").replace("}", "")
    return works


def _surname(name: str) -> str:
    name = name.strip()
    return name.split(",")[0].strip() if "," in name else name.split()[-1]


def author_year(work: dict[str, str]) -> tuple[str, str]:
    """("Rau", "1994"), ("Leviathan et al.", "2023"), ("Ayala and Artigues", "2010")."""
    names = [_surname(n) for n in work.get("author", "").split(" and ") if n.strip()]
    who = (names[0] if len(names) == 1 else " and ".join(names) if len(names) == 2
           else f"{names[0]} et al.") if names else "?"
    return who, work.get("year", "n.d.")


def _link(text: str, book: Book, target: Target, anchor: str | None, here: str) -> str:
    href = "" if target.page == here else os.path.relpath(target.page + ".md",
                                                          os.path.dirname(here) or ".")
    return f"[{text}]({href}{'#' + anchor if anchor else ''})"


def prose_lines(text: str):
    """``(line, is_prose)`` for every line (ends kept): False inside a backtick or tilde
    fence (code cells, whose ``#`` lines are comments, not headings)."""
    fence = None
    for line in text.splitlines(keepends=True):
        m = re.match(r"^\s*(`{3,}|~{3,})", line)
        if fence is None and m:
            fence = m.group(1)
            yield line, False
        else:
            if fence is not None and line.strip() == fence:
                fence = None
                yield line, False
            else:
                yield line, fence is None


def _split(arg: str) -> tuple[str | None, str]:
    m = _TARGET.match(arg)
    return (m.group(1), m.group(2)) if m else (None, arg.strip())


def _numref(arg: str, book: Book, page: str) -> str:
    text, label = _split(arg)
    target = book.labels.get(label)
    if target is None:
        return text or label
    number = target.number or "?"
    shown = (text or "Section %s").replace("%s", number).replace("{number}", number)
    return _link(shown, book, target, label, page)


def _ref(arg: str, book: Book, page: str) -> str:
    text, label = _split(arg)
    target = book.labels.get(label)
    return _link(text or target.title, book, target, label, page) if target else (text or label)


def _doc(arg: str, book: Book, page: str) -> str:
    text, name = _split(arg)
    base = os.path.normpath(Path(page).parent / name).replace(os.sep, "/") if page else name
    target = book.titles.get(base) or book.titles.get(name)
    return _link(text or target.title, book, target, None, page) if target else (text or name)


def _term(arg: str, book: Book, page: str) -> str:
    text, term = _split(arg)
    glossary = book.titles.get("book/glossary")
    if glossary is None:
        return text or term
    anchor = "term-" + re.sub(r"[^\w-]+", "-", term).strip("-")
    return _link(text or term, book, glossary, anchor, page)


def _cite(role: str, arg: str, book: Book, cited: list[str]) -> str:
    keys = [k.strip() for k in arg.split(",") if k.strip()]
    cited += [k for k in keys if k not in cited]
    pairs = [author_year(book.works.get(k, {"author": k})) for k in keys]
    if role == "cite:t":
        return "; ".join(f"{who} ({year})" for who, year in pairs)
    return "(" + "; ".join(f"{who}, {year}" for who, year in pairs) + ")"


def reference_list(keys: list[str], book: Book) -> str:
    """The works ``keys`` as a Markdown list, in the order they were first cited."""
    lines = []
    for key in keys:
        work = book.works.get(key)
        if work is None:
            continue
        who, year = author_year(work)
        where = work.get("booktitle") or work.get("journal") or work.get("institution", "")
        lines.append(f"- {who} ({year}). *{work.get('title', key)}*." + (f" {where}." if where
                                                                          else ""))
    return "\n".join(lines)


def resolve(text: str, page: str, book: Book | None) -> str:
    """``text`` (the MyST source of ``page``, e.g. ``book/05_div8``) with every
    cross-reference, glossary term and citation written as the book renders it."""
    if book is None:
        return text
    cited: list[str] = []

    def one(m: re.Match) -> str:
        role, arg = m.group(1), m.group(2)
        if role.startswith("cite"):
            return _cite(role, arg, book, cited)
        return {"numref": _numref, "ref": _ref, "doc": _doc, "term": _term}[role](arg, book, page)

    out = "".join(_ROLE.sub(one, line) if prose else line for line, prose in prose_lines(text))
    if cited:
        out = out.rstrip("\n") + "\n\n## References\n\n" + reference_list(cited, book) + "\n"
    return out
