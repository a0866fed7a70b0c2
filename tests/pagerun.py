"""Execute book pages (MyST Markdown notebooks) the way the book build does."""

import base64
import json
from pathlib import Path

import jupytext
import nbformat
import yaml
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def toc_pages(root: Path = ROOT) -> list[Path]:
    """Every page listed in ``_toc.yml`` (root, chapters and sections), in order."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return [root / f"{name}.md" for name in files]


def slider_figures(nb: nbformat.NotebookNode) -> list[list[bytes]]:
    """The PNG frames of every slider figure in an executed page, read from the widget state
    the page stores for the static HTML: a ``Stack`` of ``Image`` widgets whose
    ``selected_index`` a client-side link drives."""
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    linked = {m["state"]["target"][0].removeprefix("IPY_MODEL_")
              for m in state.values() if m["model_name"] == "LinkModel"
              and m["state"].get("target", [None, None])[1] == "selected_index"}
    figures = []
    for model_id in sorted(linked):
        stack = state.get(model_id, {})
        frames = []
        for ref in stack.get("state", {}).get("children", []):
            image = state.get(ref.removeprefix("IPY_MODEL_"), {})
            buffers = [b for b in image.get("buffers", []) if b["path"] == ["value"]]
            if image.get("model_name") == "ImageModel" and buffers:
                frames.append(base64.b64decode(buffers[0]["data"]))
        figures.append(frames)
    return figures


CLAIMS_CELL = ("import json as _json\nfrom rslab.chapters.claims import checked as _checked\n"
               "print(_json.dumps(_checked()))")
"""Appended to a page by ``execute_page``: prints the claims the page checked."""


def execute_page(path: Path, timeout: int = 900) -> nbformat.NotebookNode:
    """Run every cell of a page in a fresh kernel; raise ``CellExecutionError`` on failure
    (a false ``claim`` is one), and ``ValueError`` if a slider figure shows the same picture
    at every position. The sentences the page's claims checked are in
    ``nb.metadata["rslab_claims"]``."""
    nb = jupytext.read(path)
    nb.cells.append(nbformat.v4.new_code_cell(CLAIMS_CELL))
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    claims_cell = nb.cells.pop()
    nb.metadata["rslab_claims"] = json.loads(claims_cell.outputs[-1]["text"].strip()
                                             .splitlines()[-1])
    for frames in slider_figures(nb):
        if len(frames) > 1 and len(set(frames)) == 1:
            raise ValueError(f"{path.name}: a slider figure draws the same picture for all "
                             f"{len(frames)} values (does draw(value) use its value?)")
    return nb
