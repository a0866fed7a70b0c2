"""Jupyter Lab on the book's chapters: ``python -m rslab.lab [FOLDER] [lab options]``
(``make lab``, folder ``book``).

- The chapters are read-only to disk: ``ChapterContentsManager`` (jupytext wraps it, so a
  ``.md`` page opens as a notebook) serves every ``.md`` page with ``writable: false`` and
  refuses to save, rename or delete it, so Run All, edits and saves never change the
  repository; *File → Save Notebook As…* keeps a reader's copy as a new ``.ipynb``.
- Cross-references, glossary terms and citations read as in the book: each page is served
  through ``rslab.crossref.resolve`` ("Chapter 8", "(Rau, 1994)" and a reference list,
  linked), since jupyterlab-myst resolves none of them; the file itself is never changed.
- The kernels run at ``rslab.scale.LAB_SCALE`` unless ``RSLAB_SCALE`` is set (a page's
  first cell switches it: ``use_scale("book")``).
- As root (a container) Lab is started with ``--allow-root``.
- ``--student`` serves the students' copy of the pages instead (``rslab.student``: no
  solution, no cell tagged ``solution``), written to ``_build/student/lab`` beside the book
  (``make lab-student``).
"""

import os
import sys
from pathlib import Path

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from jupytext.async_contentsmanager import build_async_jupytext_contents_manager_class
from tornado.web import HTTPError

from rslab import crossref
from rslab.scale import LAB_SCALE

READ_ONLY = ("The chapters are read-only, so that opening one never changes the repository: "
             "use File > Save Notebook As... to keep your copy as a new .ipynb.")


class ChapterFiles(AsyncLargeFileManager):
    """Lab's files with every existing ``.md`` page read-only and its references resolved."""

    def is_chapter(self, path: str) -> bool:
        """True for an existing ``.md`` file under the root folder."""
        path = path.strip("/")
        return path.endswith(".md") and os.path.isfile(self._get_os_path(path))

    def book(self) -> tuple[crossref.Book | None, Path]:
        """The book holding the served folder (the nearest parent with a ``_toc.yml``)."""
        root = Path(self.root_dir).resolve()
        top = next((p for p in (root, *root.parents) if (p / "_toc.yml").is_file()), root)
        return crossref.load(str(top)), top

    async def get(self, path, *args, **kwargs):
        model = await super().get(path, *args, **kwargs)
        if self.is_chapter(path):
            model["writable"] = False
            if isinstance(model.get("content"), str):
                book, top = self.book()
                page = Path(self._get_os_path(path.strip("/"))).relative_to(top).with_suffix("")
                model["content"] = crossref.resolve(model["content"], page.as_posix(), book)
        return model


class ChapterContentsManager(build_async_jupytext_contents_manager_class(ChapterFiles)):
    """``ChapterFiles`` as jupytext serves them (a ``.md`` page opens as a notebook), with a
    save, rename or delete of a chapter refused before jupytext's own handling, so that the
    reader's front end receives the refusal as it is (403, with the reason), not wrapped."""

    def _refuse(self, path: str) -> None:
        if self.is_chapter(path):
            raise HTTPError(403, f"{path}: {READ_ONLY}")

    async def save(self, model, path=""):
        self._refuse(path)
        return await super().save(model, path)

    async def rename_file(self, old_path, new_path):
        self._refuse(old_path)
        return await super().rename_file(old_path, new_path)

    async def delete_file(self, path):
        self._refuse(path)
        return await super().delete_file(path)


def lab_command(folder, *options: str) -> list[str]:
    """The ``jupyter lab`` command line serving ``folder`` with the read-only chapters."""
    jupyter = Path(sys.executable).with_name("jupyter")
    cmd = [str(jupyter), "lab", f"--ServerApp.root_dir={Path(folder).resolve()}",
           "--ServerApp.contents_manager_class=rslab.lab.ChapterContentsManager"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    return cmd + list(options)


def lab_environment(base: dict | None = None) -> dict:
    """``base`` (default: this process's environment) with the reader's scale as default."""
    env = dict(os.environ if base is None else base)
    env.setdefault("RSLAB_SCALE", LAB_SCALE)
    return env


def student_folder(folder) -> Path:
    """The pages' folder of the students' copy of the book whose pages are in ``folder``
    (its root is the folder above: the copy goes to ``ROOT/_build/student/lab``)."""
    from rslab.student import copy_book

    folder = Path(folder).resolve()
    return copy_book(folder.parent, folder.parent / "_build" / "student" / "lab") / folder.name


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    student = "--student" in argv
    argv = [a for a in argv if a != "--student"]
    folder = argv.pop(0) if argv and not argv[0].startswith("-") else "book"
    if not Path(folder).is_dir():
        raise SystemExit(f"python -m rslab.lab: folder {folder!r} does not exist")
    if student:
        folder = student_folder(folder)
    cmd = lab_command(folder, *argv)
    os.execve(cmd[0], cmd, lab_environment())
    return 0


if __name__ == "__main__":
    sys.exit(main())
