"""rslab.chapters.glue: MyST-NB's glue in the build; outside it, the value is also shown."""

from pagerun import ROOT, execute_page, toc_pages

CELL = ("```{code-cell} ipython3\nfrom rslab.chapters import glue\n"
        "glue('answer', 42, display=False)\nglue('ratio', 2 / 3, display=False)\n```\n")


def run(tmp_path, monkeypatch, build: bool):
    header = (ROOT / "book" / "intro.md").read_text().split("---\n")[1]
    page = tmp_path / "page.md"
    page.write_text(f"---\n{header}---\n\n# Page\n\n{CELL}")
    if build:
        monkeypatch.setenv("RSLAB_BOOK_BUILD", "1")
    else:
        monkeypatch.delenv("RSLAB_BOOK_BUILD", raising=False)
    outputs = execute_page(page).cells[-1].outputs
    glued = {o.metadata["scrapbook"]["name"] for o in outputs
             if "scrapbook" in o.get("metadata", {})}
    shown = [o.data.get("text/markdown", "") for o in outputs
             if "scrapbook" not in o.get("metadata", {})]
    return glued, shown


def test_outside_the_build_glued_values_are_recorded_and_shown_in_one_line(tmp_path, monkeypatch):
    glued, shown = run(tmp_path, monkeypatch, build=False)
    assert glued == {"answer", "ratio"}
    assert shown == ["glued: `answer` = 42 · `ratio` = 0.666667"]


def test_in_the_build_glue_only_records(tmp_path, monkeypatch):
    glued, shown = run(tmp_path, monkeypatch, build=True)
    assert glued == {"answer", "ratio"} and shown == []


def test_pages_import_the_package_glue_not_myst_nb():
    offenders = [p.name for p in toc_pages() if "myst_nb" in p.read_text()]
    assert not offenders, f"pages importing myst_nb (use `from rslab.chapters import glue`): " \
                          f"{offenders}"
