"""rslab.lab: the chapters read-only to disk, the reader's scale, root; the reader's install."""

import asyncio
import os
import re
import tomllib
from importlib import metadata

import pytest
from pagerun import ROOT
from tornado.web import HTTPError

from rslab.lab import ChapterContentsManager, lab_command, lab_environment


@pytest.fixture
def manager(tmp_path):
    (tmp_path / "chapter.md").write_text("# A chapter\n")
    return ChapterContentsManager(root_dir=str(tmp_path)), tmp_path


def run(coro):
    return asyncio.run(coro)


def test_a_chapter_is_served_read_only_and_never_written(manager):
    cm, root = manager
    model = run(cm.get("chapter.md", type="file"))
    assert model["writable"] is False
    for action in (lambda: cm.save({"type": "file", "format": "text", "content": "x"},
                                   "chapter.md"),
                   lambda: cm.rename_file("chapter.md", "other.md"),
                   lambda: cm.delete_file("chapter.md")):
        with pytest.raises(HTTPError) as err:
            run(action())
        assert err.value.status_code == 403 and "Save Notebook As" in err.value.log_message
    assert (root / "chapter.md").read_text() == "# A chapter\n"


def test_a_readers_copy_is_saved(manager):
    cm, root = manager
    run(cm.save({"type": "file", "format": "text", "content": "mine"}, "copy.txt"))
    assert (root / "copy.txt").read_text() == "mine"
    assert run(cm.get("copy.txt", type="file"))["writable"] is True


def test_the_command_serves_the_folder_with_the_manager_and_allows_root_only_as_root(tmp_path):
    cmd = lab_command(tmp_path, "--no-browser")
    assert cmd[1] == "lab" and f"--ServerApp.root_dir={tmp_path.resolve()}" in cmd
    assert "--ServerApp.contents_manager_class=rslab.lab.ChapterContentsManager" in cmd
    assert ("--allow-root" in cmd) == (os.geteuid() == 0) and cmd[-1] == "--no-browser"


def test_kernels_start_at_the_readers_scale_unless_one_is_set():
    assert lab_environment({}) == {"RSLAB_SCALE": "quick"}
    assert lab_environment({"RSLAB_SCALE": "book"})["RSLAB_SCALE"] == "book"


def requirement_closure(names: list[str]) -> set[str]:
    """Every installed distribution that ``names`` pull in (markers without extras)."""
    seen, todo = set(), [re.split(r"[\s<>=!~;\[]", n, maxsplit=1)[0].lower() for n in names]
    while todo:
        name = todo.pop().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        todo += [re.split(r"[\s<>=!~;\[(]", r, maxsplit=1)[0].lower()
                 for r in requires if "extra ==" not in r]
    return seen


def test_the_readers_install_does_not_pull_the_test_stack():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    reader = requirement_closure(project["dependencies"] + extras["book"] + extras["fast"])
    assert "jupyterlab-myst" in reader and "jupytext" in reader
    pulled = reader & {"pytest", "playwright", "hypothesis", "dask", "jupyter-book", "ruff"}
    assert not pulled, f"the book extra pulls the test stack: {pulled}"
    makefile = (ROOT / "Makefile").read_text()
    assert "pip install --quiet -c requirements.txt -e '.[book,fast]'" in makefile
    lab = re.search(r"^lab: (.*)\n\t(.*)$", makefile, re.MULTILINE)
    assert lab.group(1) == "lab-settings" and "rslab.lab" in lab.group(2)


def test_every_chapter_is_served_with_its_references_resolved():
    """Lab shows no raw role: citations, cross-references and glossary terms read as in the
    book (jupyterlab-myst resolves none of them)."""
    from rslab.crossref import prose_lines

    cm = ChapterContentsManager(root_dir=str(ROOT / "book"))
    for path in sorted((ROOT / "book").glob("*.md")):
        text = run(cm.get(path.name, type="file", format="text"))["content"]
        prose = "".join(line for line, is_prose in prose_lines(text) if is_prose)
        raw = re.findall(r"\{(?:cite(?::[pt])?|numref|ref|doc|term)\}`[^`]*`", prose)
        assert not raw, f"{path.name}: {raw}"
        assert text.count("```") == path.read_text().count("```")
