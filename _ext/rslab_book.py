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
- The kernels MyST-NB starts inherit ``RSLAB_BOOK_BUILD=1``, so the pages'
  ``rslab.chapters.glue`` records values without also showing them.
"""

import os
from pathlib import Path
from shutil import copy2

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


def setup(app):
    os.environ["RSLAB_BOOK_BUILD"] = "1"  # read by rslab.chapters.glue in the page kernels
    app.connect("html-page-context", drop_thebe_scripts)
    app.connect("builder-inited", check_local_assets)
    # before sphinx-book-theme builds its header buttons (priority 501)
    app.connect("html-page-context", add_ipynb_download, priority=500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
