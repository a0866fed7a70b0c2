"""Execute book pages (MyST Markdown notebooks) the way the book build does."""

from pathlib import Path

import jupytext
import nbformat
import yaml
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


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


def execute_page(path: Path, timeout: int = 900) -> nbformat.NotebookNode:
    """Run every cell of a page in a fresh kernel; raise ``CellExecutionError`` on failure."""
    nb = jupytext.read(path)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    return nb
