"""Sphinx extension for the rslab book (registered in _config.yml, ``local_extensions``).

- Every notebook page gets an ``.ipynb`` entry in the theme's download menu: the
  notebook executed by this build (outputs included), copied from
  ``_build/jupyter_execute`` to ``_sources``. The theme only does this when a
  launch service (Binder, Colab, ...) is configured, and the book has none.
- No page mentions a CDN: sphinx-thebe (a default extension of Jupyter Book,
  unused here: thebe is off) puts the unpkg address of thebe into every page; its
  two scripts are dropped.
- The JavaScript the pages load instead of a CDN (require.js, the ipywidgets
  html-manager, MathJax; fetched by ``tools/fetch_web_assets.sh``) must exist in
  a static folder; a missing file is a warning, so a ``-W`` build fails.
- The students' book (``make book-student``) needs nothing here: it is built from a copy of
  the pages without their answers (``rslab.student``), so its HTML, its search index and its
  ``.ipynb``/``.md`` downloads hold none.
- At the end of the build, MyST-NB's execution data of every page (runtime,
  method, success, error) is written to ``_build/execution.json``, from which
  ``rslab.bookbuild`` prints the per-page times. Under a parallel read each worker's
  data is merged into the main environment by MyST-NB's collector first.
- Pages are read, and so executed, in the order of ``rslab_read_order`` (``_config.yml``:
  the long pages and the memory-hungry one placed so that they do not meet), the rest after
  them in Sphinx's order. Under a parallel read (``bookbuild --jobs``) every page is a task
  of its own, so a worker that finishes a page takes the next one: Sphinx would otherwise
  hand each worker a fixed run of pages.
- Two extensions jupyter-book loads do not say whether they are parallel-read safe, so
  Sphinx would warn (failing a ``-W`` build) and read serially; both are, and are declared so here
  (``PARALLEL_SAFE``): ``sphinx_jupyterbook_latex`` only adds config values, node classes and
  transforms that act when the builder is LaTeX; ``sphinx_multitoc_numbering`` replaces how
  section numbers are assigned, which Sphinx does in the main process after the read. Neither
  keeps anything in the environment.
"""

import json
from pathlib import Path
from shutil import copy2

import sphinx.builders
from sphinx.util import logging

logger = logging.getLogger(__name__)


def local_assets(config) -> list[str]:
    """The ``_static``-relative paths of the page scripts that must be served locally."""
    paths = list(config.nb_ipywidgets_js) + [config.mathjax_path]
    return [p for p in paths if p and "://" not in p and not p.startswith("//")]


def check_local_assets(app):
    if app.builder.format != "html":
        return
    static_dirs = [Path(app.confdir, d) for d in app.config.html_static_path]
    for rel in local_assets(app.config):
        if not any((d / rel).is_file() for d in static_dirs):
            logger.warning("page script _static/%s is missing (the book must not need a CDN); "
                           "run tools/fetch_web_assets.sh (make web-assets)", rel)


def add_ipynb_download(app, pagename, templatename, context, doctree):
    if doctree is None or not context.get("sourcename", "").endswith((".md", ".md.txt")):
        return
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if not executed.is_file():
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    copy2(executed, target)
    context["ipynb_source"] = f"{pagename}.ipynb"


def drop_thebe_scripts(app, pagename, templatename, context, doctree):
    if app.config.html_theme_options.get("launch_buttons", {}).get("thebe"):
        return

    def is_thebe(script) -> bool:
        name = str(getattr(script, "filename", script) or "")
        body = str(getattr(script, "attributes", {}).get("body", ""))
        return name.endswith("sphinx-thebe.js") or "THEBE_JS_URL" in body

    context["script_files"] = [s for s in context.get("script_files", []) if not is_thebe(s)]


EXECUTION_KEYS = ("runtime", "method", "succeeded", "error")


def write_execution_data(app, exception):
    from myst_nb.sphinx_ import NbMetadataCollector

    pages = {doc: {k: meta["exec_data"].get(k) for k in EXECUTION_KEYS}
             for doc, meta in sorted(NbMetadataCollector.get_doc_data(app.env).items())
             if meta.get("exec_data")}
    path = Path(app.outdir).parent / "execution.json"
    path.write_text(json.dumps({"pages": pages}, indent=2) + "\n")


def listed_first(app, env, docnames):
    """Reorder the pages to read: those of ``rslab_read_order`` first, in its order."""
    rank = {name: i for i, name in enumerate(app.config.rslab_read_order)}
    docnames.sort(key=lambda name: rank.get(name, len(rank)))


def one_page_per_task(docnames, nproc, maxbatch=None):
    """Sphinx's ``make_chunks`` for the parallel read (and write): one page per task, started
    in ``docnames`` order. ``ParallelTasks`` starts the first ``nproc`` tasks as they are added
    and then, as workers free up, the task added last, so the rest are handed over reversed."""
    return [[name] for name in [*docnames[:nproc], *reversed(docnames[nproc:])]]


PARALLEL_SAFE = ("sphinx_jupyterbook_latex", "sphinx_multitoc_numbering")
"""Extensions that keep no state of a page in the environment, but do not say so."""


def declare_parallel_safe(app, env, docnames):
    """Before Sphinx asks whether every extension may read in parallel (after jupyter-book
    loaded its last ones)."""
    for name in PARALLEL_SAFE:
        ext = app.extensions.get(name)
        if ext is not None and ext.parallel_read_safe is None:
            ext.parallel_read_safe = True


def setup(app):
    app.connect("html-page-context", drop_thebe_scripts)
    app.connect("builder-inited", check_local_assets)
    # before sphinx-book-theme builds its header buttons (priority 501)
    app.connect("html-page-context", add_ipynb_download, priority=500)
    app.connect("build-finished", write_execution_data)
    app.add_config_value("rslab_read_order", [], "env", list)
    app.connect("env-before-read-docs", listed_first)
    app.connect("env-before-read-docs", declare_parallel_safe)
    sphinx.builders.make_chunks = one_page_per_task
    return {"parallel_read_safe": True, "parallel_write_safe": True}
