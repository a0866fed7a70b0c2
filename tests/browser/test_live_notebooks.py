"""Chapters as live notebooks: a real Jupyter Lab from the project's venv, a real browser.

Starts Jupyter Lab with ``make lab`` as a reader types it (``labserver``: the repository's
own ``book/`` with the chapters read-only to disk, the reader's scale; a free port and a
random token in Jupyter's ``JUPYTER_PORT``/``JUPYTER_TOKEN``, settings and runtime files in
a temporary folder), opens a chapter's ``.md`` in headless Chromium (it must open as a notebook on a
double click in the file browser: jupytext's default viewer from the venv's settings
overrides) and runs all cells. Then, as a reader would see it:

- the rendered Markdown holds no raw role or directive (``{glue``, ``{eval``, ``{cite``,
  a fence of ``{admonition}``);
- a number the test computes itself stands inside its sentence, and after the test edits
  a parameter cell and re-runs it, the sentence shows the new number it computes;
- no solution's text is visible until its dropdown is clicked;
- one live control moved to a value that is not one of the page's precomputed frames
  (typed into the slider's readout) recomputes the figure: the status says "computed",
  the picture changed, and the caption holds the number the test computes for that value;
- after saving, ``git status --porcelain book/`` is empty: nothing was written.

Screenshots go to ``_build/screenshots/lab_<chapter>*.png``,
the Run All times to ``_build/screenshots/lab_run_all.json``; with
``RSLAB_LAB_SCREENSHOT=<path>`` (``make lab-screenshot``) the machine chapter's screenshot
is also written there, which is how the how-to-run page gets its picture.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from labserver import api, make_lab

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
except ImportError:  # the browser fixture skips (or fails) with the reason
    PlaywrightTimeout = TimeoutError

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "_build" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
REQUIRED = os.environ.get("RSLAB_REQUIRE_BOOK") == "1"
SETTINGS = Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
RUN_ALL_SECONDS = int(os.environ.get("RSLAB_LIVE_RUN_ALL_SECONDS", 300))
"""How long Run All of one chapter may take: a guard against a hang, not a speed target (the
book says a page takes seconds to a few minutes; a loaded machine may need more)."""
LIVE_SECONDS = 120
"""The longest wait for one re-run (a cell, a slider's figure) on a loaded machine."""


def unavailable(reason: str):
    if REQUIRED:
        pytest.fail(reason)
    pytest.skip(reason)


def expected_machine():
    from rslab.chapters import machine as ch

    return ch.naive_caption(17, 3, ch.naive_sumexp(17, 3)[1])


def expected_div8():
    from rslab.chapters import div8 as ch

    return ch.divisor_caption(5.5, ch.divisor_error_profile(5.5))


def expected_results():
    from rslab.chapters import results as ch
    from rslab.kernels.sampler.scenarios import run_scenarios

    return ch.vocab_caption(768, run_scenarios(768, "fast", progress=False)["scenarios"])


def results_sentence(vocab: int) -> str:
    from rslab.kernels.sampler.scenarios import run_scenarios

    aa = run_scenarios(vocab, "fast", progress=False)["scenarios"][0]
    assert aa["name"] == "all-accept"
    return f"goes from {aa['baseline_cycles']:,} to {aa['optimized_cycles']:,}"


def machine_sentence(n_ops: int) -> str:
    from rslab.machine import assemble, simulate
    from rslab.machine import examples as ex

    cycles = simulate(assemble(ex.dependent_chain(n_ops))).cycles
    return f"({n_ops} ops: {cycles} cycles)"


def beyond_sentence(tail: float) -> str:
    from rslab.chapters import beyond as ch
    from rslab.numerics import targets

    mc = ch.argmax_montecarlo(targets.peaked(tail, 4096), "gumbel", "div8", 1_000)
    return f"exact law predicts {mc['expected'][1] + mc['expected'][3]:.1f}"


def many_cores_sentence(hop: int) -> str:
    from rslab.machine.config import ChipConfig

    chip = ChipConfig(hop_latency=hop)
    return f"{chip.barrier_latency(16)} cycles for 16 cores and {chip.barrier_latency(64)}"


SENTENCES = {
    # chapter: (text of the parameter line, its edit, the sentence's start, expected(before),
    #           expected(after))
    "machine": ("ns = np.arange(1, 33)", "ns = np.arange(1, 21)", "The chain costs",
                lambda: machine_sentence(32), lambda: machine_sentence(20)),
    "div8": ("N = by_scale(quick=2**18,", "N = by_scale(quick=2**17,",
             "The Monte Carlo runs below use", lambda: f"use {2**18:,} samples",
             lambda: f"use {2**17:,} samples"),
    "results": ("V_MAIN = by_scale(quick=1024,", "V_MAIN = by_scale(quick=768,",
                "all-accept goes from", lambda: results_sentence(1024),
                lambda: results_sentence(768)),
    "beyond": ("MC_TAIL = 0.2", "MC_TAIL = 0.25", "The argmax draws.",
               lambda: beyond_sentence(0.2), lambda: beyond_sentence(0.25)),
    "many_cores": ("chip = ChipConfig()\n", "chip = ChipConfig(hop_latency=20)\n",
                   "What carries over is a ratio", lambda: many_cores_sentence(9),
                   lambda: many_cores_sentence(20)),
}
"""How each chapter's test edits one parameter and finds the number in a sentence."""
RAW_MYST = ("{glue", "{eval", "{cite", "```{admonition}", ":::{admonition}")


def expected_beyond():
    from rslab.chapters import beyond as ch

    # the Lab kernel runs the chapter at quick scale
    return ch.tail_figure(ch.swept_draws("quick"), ch.page_vocab("quick"))(tail=0.037)[1]


def expected_many_cores():
    from rslab.chapters import many_cores as ch

    return ch.live_figure()(16, 2, "sequential", 1152)[1]


CHAPTERS = {
    # chapter: (page, label of the control, value typed, its text in the status, expected caption)
    "machine": ("02_machine.md", "SFU latency", "17", "SFU latency = 17", expected_machine),
    "div8": ("05_div8.md", "divisor k", "5.5", "divisor k = 5.5", expected_div8),
    "results": ("09_results.md", "vocab V", "768", "vocab V = 768", expected_results),
    "beyond": ("07_beyond.md", "tail mass", "0.037", "tail mass = 0.037", expected_beyond),
    "many_cores": ("10_many_cores.md", "cores", "16", "cores = 16", expected_many_cores),
}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """Jupyter Lab as a reader starts it: ``make lab`` (``labserver.make_lab``)."""
    if not Path(sys.executable).with_name("jupyter").exists():
        unavailable(f"{Path(sys.executable).with_name('jupyter')} is missing (make venv)")
    if not SETTINGS.is_file():
        unavailable(f"{SETTINGS} is missing (`make lab-settings` sets jupytext's viewer)")
    home = tmp_path_factory.mktemp("lab")
    try:
        with make_lab(home) as (url, token, _):
            yield url, token
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        unavailable(f"{CHROMIUM} is missing (`make chromium` installs Debian's chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the Python package playwright is not installed")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


def test_lab_settings_make_md_open_as_notebook():
    """``make lab-settings`` set jupytext's notebook view as the venv's default viewer."""
    if not SETTINGS.is_file():
        unavailable(f"{SETTINGS} is missing (make lab-settings)")
    out = subprocess.run([str(Path(sys.executable).with_name("jupytext-config")),
                          "--settings-file", str(SETTINGS), "list-default-viewer"],
                         capture_output=True, text=True, check=True).stdout
    assert "markdown: Jupytext Notebook" in out, out


READY = """() => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    return !!(panel && panel.context && panel.context.isReady && panel.content.model &&
              panel.sessionContext.isReady &&
              panel.sessionContext.session?.kernel?.status === 'idle');
}"""
"""The notebook is loaded and its kernel started: Run All before this asks for a kernel."""
RUN_ALL = "() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }"
"""Starts Run All without waiting for it (the wait below has a timeout)."""
ALL_RAN = """() => {
    const panel = window.jupyterapp.shell.currentWidget;
    const kernel = panel.sessionContext.session?.kernel;
    const cells = Array.from(panel.content.model.cells);
    return kernel && kernel.status === 'idle' && cells.length > 0 &&
        cells.every(c => c.type !== 'code' || c.executionCount);
}"""


def run_all_cells(page, name: str) -> float:
    """Run All; the seconds it took."""
    page.wait_for_function(READY, timeout=120_000, polling=500)
    start = time.monotonic()
    page.evaluate(RUN_ALL)
    try:
        page.wait_for_function(ALL_RAN, timeout=RUN_ALL_SECONDS * 1000, polling=1000)
    except PlaywrightTimeout:
        dialogs = page.locator(".jp-Dialog").all_inner_texts()
        pytest.fail(f"{name}: Run All did not finish in {RUN_ALL_SECONDS} s"
                    + (f"; a dialog is open: {dialogs}" if dialogs else ""))
    seconds = time.monotonic() - start
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
                          ":has-text('Traceback')")
    assert errors.count() == 0, f"{name}: a cell raised: {errors.first.inner_text()[:2000]}"
    return seconds


RUN_FROM = """([text, stop]) => {
    const panel = window.jupyterapp.shell.currentWidget;
    const cells = Array.from(panel.content.model.cells);
    const first = cells.findIndex(c => c.sharedModel.getSource().includes(text));
    const last = cells.findIndex((c, i) => i > first && c.type === 'markdown' &&
                                 c.sharedModel.getSource().includes(stop));
    if (first < 0 || last < 0) { return false; }
    panel.content.activeCellIndex = first;
    for (let i = first; i <= last; i++) {
        window.jupyterapp.commands.execute('notebook:run-cell-and-select-next');
    }
    return true;
}"""
"""Runs the cells from the one holding ``text`` to the Markdown cell holding ``stop``."""
EDIT_CELL = """([old, text]) => {
    const cells = Array.from(window.jupyterapp.shell.currentWidget.content.model.cells);
    const cell = cells.find(c => c.sharedModel.getSource().includes(old));
    if (!cell) { return false; }
    cell.sharedModel.setSource(cell.sharedModel.getSource().replace(old, text));
    return true;
}"""


def rendered_markdown(page) -> str:
    return "\n".join(page.locator(".jp-MarkdownCell .jp-RenderedMarkdown, "
                                   ".jp-MarkdownCell .jp-RenderedMySTMarkdown, "
                                   ".jp-MarkdownCell .myst").all_inner_texts())


def sentence_with(page, start: str) -> str:
    cell = page.locator(".jp-MarkdownCell", has_text=start).first
    text = cell.locator(".jp-Cell-inputArea").inner_text()
    return text[text.index(start):]


def check_sentence(page, chapter: str):
    """The number in a sentence, before and after a parameter cell is edited and re-run."""
    old, new, start, before, after = SENTENCES[chapter]
    assert before() in sentence_with(page, start), \
        f"{chapter}: {before()!r} is not in the sentence {sentence_with(page, start)[:200]!r}"
    assert page.evaluate(EDIT_CELL, [old, new]), f"{chapter}: no cell holds {old!r}"
    assert page.evaluate(RUN_FROM, [new, start])
    page.locator(".jp-MarkdownCell", has_text=start).filter(has_text=after()).first.wait_for(
        timeout=LIVE_SECONDS * 1000)
    cell = page.locator(".jp-MarkdownCell", has_text=start).first
    cell.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / f"lab_{chapter}_sentence.png"))


RENDERED = (".jp-MarkdownCell .jp-RenderedMarkdown, .jp-MarkdownCell .jp-RenderedMySTMarkdown, "
            ".jp-MarkdownCell .myst")
"""The rendered Markdown of the cells (the hidden source editors hold the same text)."""
MARKUP = re.compile(r"[$`{}*\[\]_\\<>|]")


def probe_text(solution: str, source: str) -> str:
    """The longest run of plain prose in a solution that the page's source holds only once:
    what the rendered page shows word for word there and nowhere else (math, code and roles
    render differently)."""
    body = [ln for ln in solution.splitlines()[1:] if ln.strip() and not ln.startswith(":")]
    runs = sorted((part.strip() for ln in body for part in MARKUP.split(ln)), key=len,
                  reverse=True)
    return next(run for run in runs if source.count(run) == 1)[:40]


def check_solutions_hidden(page, chapter: str, source: str):
    """Every solution's text is hidden until its dropdown is clicked."""
    from rslab.chapters.prose import solutions

    texts = [probe_text(s, source) for s in solutions(source)]
    assert texts, f"{chapter}: the page has no solution directive"
    for text in texts:
        probe = page.locator(RENDERED).get_by_text(text).first
        assert not probe.is_visible(), f"{chapter}: a solution is visible unopened: {text!r}"
    first = page.locator(".jp-MarkdownCell summary", has_text="Solution").first
    first.scroll_into_view_if_needed()
    first.click()
    page.locator(RENDERED).get_by_text(texts[0]).first.wait_for(state="visible",
                                                                timeout=10_000)
    page.screenshot(path=str(SHOTS / f"lab_{chapter}_solution.png"))


def book_status() -> str:
    """``git status --porcelain book/``, without the picture ``make lab-screenshot`` asks for."""
    status = subprocess.run(["git", "status", "--porcelain", "book/"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    shot = os.environ.get("RSLAB_LAB_SCREENSHOT")
    return "".join(line for line in status.splitlines(keepends=True)
                   if not (shot and line.rstrip().endswith(shot)))


def save_and_check_the_tree_is_clean(page, chapter: str, page_name: str, before: tuple):
    """Save; ``git status --porcelain book/`` is what it was before the chapter was opened
    (empty on a clean checkout) and the page's bytes are unchanged."""
    page.evaluate("() => { window.jupyterapp.commands.execute('docmanager:save'); }")
    time.sleep(2)  # not awaited: on a read-only page Lab answers with a notification
    page.screenshot(path=str(SHOTS / f"lab_{chapter}_saved.png"))
    if page.locator(".jp-Dialog").count():  # a prompt to save elsewhere: the reader's choice
        page.keyboard.press("Escape")
    after = (book_status(), (ROOT / "book" / page_name).read_bytes())
    assert after[0] == before[0], \
        f"{chapter}: opening, running and saving changed book/: {after[0]!r}, was {before[0]!r}"
    assert after[1] == before[1], f"{chapter}: saving rewrote {page_name}"


def record_run_all(chapter: str, seconds: float):
    path = SHOTS / "lab_run_all.json"
    times = json.loads(path.read_text()) if path.is_file() else {}
    times[chapter] = round(seconds, 1)
    path.write_text(json.dumps(times, indent=1, sort_keys=True) + "\n")


def open_by_double_click(page, workspace_url: str, page_name: str):
    """A fresh workspace (no tab of an earlier chapter restored), then the chapter's ``.md``
    double-clicked in Lab's file browser, as a reader opens it: it must open as a notebook."""
    page.goto(workspace_url, wait_until="load")
    item = page.locator(".jp-DirListing-item", has_text=page_name).first
    item.wait_for(timeout=120_000)
    item.dblclick()
    panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)").first
    try:
        panel.wait_for(timeout=180_000)
    except PlaywrightTimeout:
        editors = page.locator(".jp-FileEditor:not(.lm-mod-hidden)").count()
        pytest.fail(f"{page_name} did not open as a notebook on double click"
                    + (" (it opened in the text editor)" if editors else ""))


def live_figure_with(page, label: str):
    figure = page.locator(".rslab-live").filter(
        has=page.locator(".widget-slider .widget-label", has_text=label)).first
    figure.wait_for(state="visible", timeout=30_000)
    return figure


IN_MAKE_TEST = ("machine", "div8", "results")
"""The chapters ``make test`` opens (its browser stage has a 4-minute budget); ``make
live-test`` opens every chapter of ``CHAPTERS``."""


@contextmanager
def chapter_run(lab, browser, chapter: str, page_name: str):
    """The chapter double-clicked in a fresh workspace and run as a reader runs it (Run All
    timed and recorded, no raw MyST in its rendered Markdown); yields the page and the
    chapter's source for the caller's checks, then saves and checks that the tree is as it
    was, and closes the page and its kernel."""
    url, token = lab
    before = (book_status(), (ROOT / "book" / page_name).read_bytes())
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    try:
        open_by_double_click(page, f"{url}lab/workspaces/{chapter}?reset&token={token}",
                             page_name)
        seconds = run_all_cells(page, page_name)
        SHOTS.mkdir(parents=True, exist_ok=True)
        record_run_all(chapter, seconds)
        prose = rendered_markdown(page)
        raw = [r for r in RAW_MYST if r in prose]
        assert not raw, f"{chapter}: raw MyST in the rendered Markdown: {raw}"
        yield page, (ROOT / "book" / page_name).read_text()
        save_and_check_the_tree_is_clean(page, chapter, page_name, before)
    finally:
        context.close()
        for session in api(url, token, "api/sessions"):
            api(url, token, f"api/sessions/{session['id']}", method="DELETE")


@pytest.mark.parametrize("chapter", [c if c in IN_MAKE_TEST else
                                     pytest.param(c, marks=pytest.mark.live_extra)
                                     for c in CHAPTERS])
def test_chapter_recomputes_live(chapter, lab, browser):
    page_name, label, typed, status_text, expected = CHAPTERS[chapter]
    with chapter_run(lab, browser, chapter, page_name) as (page, source):
        assert page.locator(".rslab-static").first.is_hidden(), \
            "the precomputed selectors show in Jupyter (they are for the static page)"
        check_sentence(page, chapter)
        check_solutions_hidden(page, chapter, source)
        figure = live_figure_with(page, label)
        figure.scroll_into_view_if_needed()
        image = figure.locator(".widget-image").first
        before_src, before_png = image.get_attribute("src"), image.screenshot()
        readout = figure.locator(".widget-slider", has=page.locator(
            ".widget-label", has_text=label)).locator(".widget-readout").first
        readout.click()
        page.keyboard.press("Control+A")
        page.keyboard.type(typed)
        page.keyboard.press("Enter")
        status = figure.locator(".rslab-status")
        status.filter(has_text=status_text).filter(has_text="computed in").wait_for(
            timeout=LIVE_SECONDS * 1000)
        page.wait_for_function("([el, src]) => el.getAttribute('src') !== src",
                               arg=[image.element_handle(), before_src], timeout=10_000)
        assert image.screenshot() != before_png, "the picture did not change"
        caption = figure.locator(".rslab-caption").inner_text()
        assert caption == expected(), f"{chapter}: the caption is {caption!r}"
        figure.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / f"lab_{chapter}.png"))
        target = os.environ.get("RSLAB_LAB_SCREENSHOT")
        if target and chapter == "machine":
            Path(target).parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=target)


RUN_ALL_ONLY = {"intro": "intro.md", "algorithm": "01_algorithm.md", "dataflow": "03_dataflow.md",
                "pipelining": "04_pipelining.md", "div14": "06_div14.md"}
"""The chapters with no live control: ``make live-test`` opens each as a reader does, runs
all its cells and records the time beside the live chapters'."""


@pytest.mark.live_extra
@pytest.mark.parametrize("chapter", list(RUN_ALL_ONLY))
def test_chapter_runs_all_as_the_book_reads(chapter, lab, browser):
    from rslab.chapters.prose import solutions

    with chapter_run(lab, browser, chapter, RUN_ALL_ONLY[chapter]) as (page, source):
        if solutions(source):
            check_solutions_hidden(page, chapter, source)
