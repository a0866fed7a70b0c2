"""Every page listed in _toc.yml executes without error (at RSLAB_SCALE=quick).

The executions are marked ``pages`` and run by ``make test-pages``, one test per page: in
``make test`` the quick book build executes every page and fails on any cell's error
(``tests/test_failing_page.py``), so running them twice there would only cost time."""

import os
import re

import pytest
from pagerun import ROOT, execute_page, toc_pages

PAGES = toc_pages()


def test_toc_lists_only_existing_pages():
    missing = [p for p in PAGES if not p.exists()]
    assert not missing, f"_toc.yml lists pages that do not exist: {missing}"


def test_every_book_page_is_in_the_toc():
    listed = {p.resolve() for p in PAGES}
    orphans = [p for p in (ROOT / "book").glob("*.md") if p.resolve() not in listed]
    assert not orphans, f"pages not in _toc.yml (they would not be built): {orphans}"


MIN_CLAIMS = {"intro": 9, "01_algorithm": 33, "02_machine": 23, "03_dataflow": 44,
              "appendix": 2, "04_pipelining": 81, "05_div8": 48, "06_div14": 55,
              "09_results": 70, "07_beyond": 70, "08_fixed_point": 31, "10_many_cores": 70}
"""The claims each page checks at quick scale (``rslab.chapters.claims``), at least."""


@pytest.mark.pages
@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_page_executes(page, monkeypatch):
    monkeypatch.setenv("RSLAB_SCALE", os.environ.get("RSLAB_SCALE", "quick"))
    nb = execute_page(page)
    claims = nb.metadata["rslab_claims"]
    assert len(claims) >= MIN_CLAIMS.get(page.stem, 0), \
        f"{page.stem} checks {len(claims)} claims, fewer than its {MIN_CLAIMS[page.stem]}"


def _names_before_their_cells(text: str) -> list[tuple[int, str]]:
    """(line, name) of each ``{eval}`` whose name no code cell above it assigns."""
    text = re.sub(r"``.+?``", "", text)  # a role quoted as code is no role
    defined, early = set(), []
    for m in re.finditer(r"```\{code-cell\}[^\n]*\n(.*?)```|\{eval\}`([^`]+)`", text, re.S):
        if m.group(1) is not None:
            for names in re.findall(r"^\s*([A-Za-z_][\w, ]*?)\s*=(?!=)", m.group(1), re.M):
                defined.update(n.strip() for n in names.split(","))
            defined.update(re.findall(r"(?:for|import|as)\s+([A-Za-z_]\w*)", m.group(1)))
        elif (name := re.match(r"[A-Za-z_]\w*", m.group(2))) and name.group() not in defined:
            early.append((text[:m.start()].count("\n") + 1, m.group(2)))
    return early


@pytest.mark.parametrize("page", toc_pages(), ids=[p.stem for p in toc_pages()])
def test_a_sentence_cites_only_figures_computed_above_it(page):
    """The book's inline execution evaluates ``{eval}`` in page order: a name assigned in a
    later cell renders as nothing (or fails the strict build)."""
    assert not _names_before_their_cells(page.read_text()), page.name
