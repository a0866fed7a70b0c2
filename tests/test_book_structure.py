"""The book's structure: one numbered story, references by label, one recommendation.

- Chapter numbers come from the build (the numbered part of ``_toc.yml``): no page writes
  one by hand, and a chapter's file name starts with the number the build gives it.
- Each numbered chapter opens with what the reader will learn and what it assumes, and
  ends with its takeaways.
- Every glossary term a page links exists in the glossary.
- The recommended draw (``RECOMMENDED``) is the one the introduction, Beyond the note,
  the results and the README name, read from one place.
"""

import re

import pytest
import yaml
from pagerun import ROOT

from rslab.crossref import prose_lines
from rslab.numerics.methods import RECOMMENDED, variant_name

TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())
NUMBERED = [c["file"] for part in TOC["parts"] if part.get("numbered") for c in part["chapters"]]
PAGES = sorted((ROOT / "book").glob("*.md"))
HAND_NUMBER = re.compile(r"\b[Cc]hapters?\s+\d|§\s*\d|\b[Cc]h\.\s*\d")


def prose(path) -> str:
    text = re.sub(r"\{[\w:]+\}`[^`]*`", "", path.read_text())  # roles are the build's
    return "".join(line for line, is_prose in prose_lines(text) if is_prose)


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_no_chapter_number_is_written_by_hand(page):
    found = [m.group(0) for m in HAND_NUMBER.finditer(prose(page))]
    assert not found, f"{page.name} writes chapter numbers by hand: {found} (use a " \
                      "{numref}`Chapter %s <ch-label>` reference)"


def test_chapter_files_carry_the_number_the_build_gives_them():
    for number, page in enumerate(NUMBERED, start=1):
        assert re.match(rf"book/{number:02d}_", page), (page, number)
    assert "book/how_to_run" not in NUMBERED and "book/appendix" not in NUMBERED


@pytest.mark.parametrize("page", NUMBERED, ids=[p.split("/")[-1] for p in NUMBERED])
def test_each_chapter_opens_with_its_aims_and_ends_with_its_takeaways(page):
    text = (ROOT / f"{page}.md").read_text()
    aims = re.search(r"^:::+\{admonition\} In this chapter\s*$(.*?)^:::+\s*$", text,
                     re.M | re.S)
    assert aims, f"{page}: no ':::{{admonition}} In this chapter' box"
    assert re.search(r"you will learn", aims.group(1), re.I) \
        and re.search(r"assumes", aims.group(1), re.I), f"{page}: say what it teaches and assumes"
    assert aims.start() < len(text) // 5, f"{page}: the aims come at the start"
    assert re.search(r"^## Takeaways\s*$", text, re.M), f"{page}: no '## Takeaways' section"


def test_every_linked_term_is_in_the_glossary():
    glossary = (ROOT / "book" / "glossary.md").read_text()
    block = re.search(r":::\{glossary\}\n(.*?)\n:::", glossary, re.S).group(1)
    terms = {line.strip().lower() for line in block.splitlines()
             if line and not line[0].isspace()}  # Sphinx matches terms without case
    for page in PAGES:
        for m in re.finditer(r"\{term\}`([^`]*)`", page.read_text()):
            target = re.search(r"<([^>]+)>", m.group(1))
            name = target.group(1) if target else m.group(1)
            assert name.lower() in terms, f"{page.name}: {{term}} {name!r} is not in the glossary"


RECOMMENDING = ("book/intro.md", "book/07_beyond.md", "book/09_results.md")


@pytest.mark.parametrize("page", RECOMMENDING)
def test_the_pages_that_recommend_a_draw_read_it_from_one_place(page):
    text = (ROOT / page).read_text()
    assert "RECOMMENDED" in text, f"{page} must name the draw through methods.RECOMMENDED"
    assert variant_name(*RECOMMENDED) not in "".join(
        line for line, is_prose in prose_lines(text) if is_prose), \
        f"{page} types the recommended draw's name instead of reading RECOMMENDED"


def test_the_readme_headlines_the_recommended_draw():
    assert variant_name(*RECOMMENDED) in (ROOT / "README.md").read_text()
