"""rslab.crossref: the book's roles written as the book renders them, for Lab."""

from rslab.crossref import author_year, load, parse_bib, resolve


def book(tmp_path, pages: dict[str, str], numbered=("a", "b")):
    toc = ["format: jb-book", "root: intro", "parts:", "  - caption: Start", "    chapters:",
           "      - file: howto", "  - caption: Book", "    numbered: true", "    chapters:"]
    toc += [f"      - file: {p}" for p in numbered]
    (tmp_path / "_toc.yml").write_text("\n".join(toc) + "\n")
    (tmp_path / "references.bib").write_text(
        "@inproceedings{rau1994,\n  author = {Rau, B. Ramakrishna},\n  title = {Iterative "
        "Modulo Scheduling},\n  year = {1994}\n}\n@misc{two,\n  author = {Lam, Monica and "
        "Kim, J.},\n  title = {T},\n  year = {1988}\n}\n")
    for name, text in pages.items():
        (tmp_path / f"{name}.md").write_text(text)
    load.cache_clear()
    return load(str(tmp_path))


def test_chapters_and_sections_are_numbered_as_the_build_numbers_them(tmp_path):
    b = book(tmp_path, {"intro": "# Intro\n", "howto": "# How\n",
                        "a": "(ch-a)=\n# Alpha\n\n```{code-cell}\n# not a heading\n```\n"
                             "## One\n(sec-two)=\n## Two\n",
                        "b": "(ch-b)=\n# Beta\n"})
    text = resolve("See {numref}`Chapter %s <ch-b>`, {numref}`Section %s <sec-two>` and "
                   "{ref}`ch-a`.", "howto", b)
    assert text == "See [Chapter 2](b.md#ch-b), [Section 1.2](a.md#sec-two) and [Alpha](a.md#ch-a)."


def test_citations_read_author_year_and_the_page_gets_its_reference_list(tmp_path):
    b = book(tmp_path, {"intro": "# Intro\n", "howto": "# How\n", "a": "# A\n", "b": "# B\n"})
    text = resolve("As {cite:p}`rau1994,two` show; {cite:t}`rau1994`.\n", "a", b)
    assert text.startswith("As (Rau, 1994; Lam and Kim, 1988) show; Rau (1994).\n")
    assert "## References" in text and "*Iterative Modulo Scheduling*" in text


def test_a_doc_link_may_leave_the_pages_folder(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "docs").mkdir()
    book(tmp_path, {"book/intro": "# Intro\n", "howto": "# How\n", "a": "# A\n",
                "b": "# B\n", "docs/arch": "# Architecture\n"})
    (tmp_path / "_toc.yml").write_text((tmp_path / "_toc.yml").read_text()
                                       + "  - caption: After\n    chapters:\n"
                                         "      - file: docs/arch\n")
    load.cache_clear()
    b = load(str(tmp_path))
    assert resolve("See {doc}`../docs/arch`.", "book/intro", b) == \
        "See [Architecture](../docs/arch.md)."


def test_code_and_unknown_labels_are_left_as_they_are(tmp_path):
    b = book(tmp_path, {"intro": "# Intro\n", "howto": "# How\n", "a": "# A\n", "b": "# B\n"})
    src = "```{code-cell}\nx = '{ref}`a`'\n```\nSee {ref}`nowhere`.\n"
    assert resolve(src, "a", b) == "```{code-cell}\nx = '{ref}`a`'\n```\nSee nowhere.\n"
    assert resolve(src, "a", None) == src


def test_bibtex_fields_and_names():
    works = parse_bib("@article{k,\n  author = {van Sloun, Ruud and A, B and C, D},\n"
                      "  year = {2022}\n}\n")
    assert author_year(works["k"]) == ("van Sloun et al.", "2022")
