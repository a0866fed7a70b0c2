"""The built book in a real browser (Debian chromium, headless, no network).

Opens every page of ``_build/html`` from a localhost server with every other
request aborted, and fails on JavaScript errors, failed or blocked requests and
images that did not load. On pages with widgets it checks that every widget view
rendered and moves one slider (a keyboard arrow on its handle) and checks that the
picture changed; every chapter (``book/NN_*``) must have such a slider. It opens
the first solution toggle of a page, checks each page offers its ``.ipynb``, and
that a page with widgets also works from a ``file://`` URL. Full-page screenshots
go to ``_build/screenshots/``.

Standalone, it skips (with the reason) when the book or the browser is missing;
``make test`` sets ``RSLAB_REQUIRE_BOOK=1`` so that a missing book fails instead.
``RSLAB_BOOK_HTML`` points it at another built book.
"""

import functools
import http.server
import os
import re
import threading
from pathlib import Path

import pytest

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
except ImportError:  # the browser fixture skips (or fails) with the reason
    PlaywrightTimeout = TimeoutError

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
HTML = Path(os.environ.get("RSLAB_BOOK_HTML", ROOT / "_build" / "html")).resolve()
SHOTS = HTML.parent / "screenshots"
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
REQUIRED = os.environ.get("RSLAB_REQUIRE_BOOK") == "1"
CHAPTER = re.compile(r"(^|/)\d\d_[^/]*\.html$")
WIDGET_STATE = 'script[type="application/vnd.jupyter.widget-state+json"]'
WIDGET_VIEW = 'script[type="application/vnd.jupyter.widget-view+json"]'
SLIDER_FIGURE = ".widget-vbox:has(> .widget-slider):has(.widget-image)"


def book_pages() -> list[str]:
    """Every HTML page of the build (not the theme's static files), relative to it."""
    if not (HTML / "index.html").is_file():
        return []
    skip = ("_static", "_sources", "_images", "_downloads")
    return sorted(str(p.relative_to(HTML)) for p in HTML.rglob("*.html")
                  if p.relative_to(HTML).parts[0] not in skip)


PAGES = book_pages()


def unavailable(reason: str):
    if REQUIRED:
        pytest.fail(reason)
    pytest.skip(reason)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    if not PAGES:
        unavailable(f"no built book at {HTML} (run `make book-quick` first)")
    handler = functools.partial(QuietHandler, directory=str(HTML))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        unavailable(f"{CHROMIUM} is missing (`make chromium` installs Debian's chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the Python package playwright is not installed")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        browser.close()


class PageLog:
    """Everything that went wrong while a page loaded and ran."""

    def __init__(self, page, base: str):
        self.errors: list[str] = []
        self.blocked: list[str] = []
        page.on("console", lambda m: m.type == "error" and self.errors.append(
            f"console: {m.text} ({m.location.get('url', '')})"))
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: r.url not in self.blocked and self.errors.append(
            f"request failed: {r.url} {r.failure}"))
        page.on("response", lambda r: r.status >= 400 and self.errors.append(
            f"HTTP {r.status}: {r.url}"))

        def route(route):
            url = route.request.url
            if url.startswith((base, "data:", "blob:")):
                route.continue_()
            else:
                self.blocked.append(url)
                route.abort()

        page.route("**/*", route)


@pytest.fixture
def open_page(server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    # a loaded 2-core machine renders the big pages slowly (make test's browser stage runs
    # beside the live notebooks)
    context.set_default_timeout(180_000)

    def open_(rel: str):
        page = context.new_page()
        log = PageLog(page, server)
        page.goto(server + rel, wait_until="load")
        page.wait_for_load_state("networkidle")
        return page, log

    yield open_
    context.close()


def wait_for_images(page) -> list[str]:
    """Wait until every <img> settled; return the sources of those that did not load."""
    page.evaluate("""async () => {
        await Promise.all(Array.from(document.images).map(img => img.complete ? null :
            new Promise(done => { img.onload = img.onerror = done; setTimeout(done, 10000); })));
    }""")
    return page.evaluate("""() => Array.from(document.images)
        .filter(img => !img.complete || img.naturalWidth === 0)
        .map(img => img.currentSrc || img.src || img.outerHTML.slice(0, 120))""")


def check_widgets(page) -> int:
    """Every widget view on the page rendered; return how many there are."""
    views = page.locator(WIDGET_VIEW).count()
    assert page.locator(WIDGET_STATE).count() == 1, "widget views without a widget-state script"
    page.wait_for_function(
        """sel => Array.from(document.querySelectorAll(sel))
                .every(s => s.parentElement.querySelector('.jupyter-widgets'))""",
        arg=WIDGET_VIEW, timeout=30_000)
    return views


def move_slider(page) -> tuple[str, str]:
    """Press an arrow key on the first slider figure; return the readouts before and after,
    after checking that the picture changed."""
    figure = page.locator(SLIDER_FIGURE).first
    figure.scroll_into_view_if_needed()
    image = figure.locator(".widget-image").first
    readout = figure.locator(".widget-readout").first
    before_label, before_src = readout.inner_text(), image.get_attribute("src")
    before_png = image.screenshot()
    handle = figure.locator(".noUi-handle").first
    handle.focus()
    at_end = handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax")
    handle.press("ArrowLeft" if at_end else "ArrowRight")
    try:
        page.wait_for_function(
            """([fig, src]) => {
                const img = document.querySelector(fig + ' .widget-image');
                return img && img.complete && img.getAttribute('src') !== src; }""",
            arg=[SLIDER_FIGURE, before_src], timeout=10_000)
    except PlaywrightTimeout:
        pytest.fail(f"moving the slider from {before_label!r} showed no other frame within 10 s "
                    "(is the slider linked to its Stack client-side?)")
    after_label = readout.inner_text()
    assert after_label != before_label, "the slider's readout did not move"
    assert image.screenshot() != before_png, "the picture did not change when the slider moved"
    return before_label, after_label


def check_dropdowns(page) -> int:
    """Solutions in dropdown admonitions are hidden behind a toggle button that opens them."""
    dropdowns = page.locator(".admonition.dropdown")
    count = dropdowns.count()
    if count:
        first = dropdowns.first
        button = first.locator(".toggle-button")
        assert button.count() == 1, "a dropdown admonition has no toggle button"
        body = first.locator(":scope > :not(.admonition-title)").first
        assert not body.is_visible(), "a solution is visible before its toggle is opened"
        first.scroll_into_view_if_needed()
        button.click()
        body.wait_for(state="visible", timeout=5_000)
    return count


UNRENDERED = re.compile(r"\{(glue|cite|doc|ref|numref|eq|download)[:}]")
"""A MyST role left as text in the page (for instance a role inside backticks)."""


def unrendered_roles(page) -> list[str]:
    """Role markup visible in the prose (code cells and listings are left out)."""
    text = page.evaluate("""() => {
        const root = (document.querySelector('article') || document.body).cloneNode(true);
        root.querySelectorAll('.cell_input, pre').forEach(e => e.remove());
        return root.innerText; }""")
    return [text[max(0, m.start() - 40):m.end() + 40] for m in UNRENDERED.finditer(text)]


def screenshot_name(rel: str) -> str:
    return rel.removesuffix(".html").replace("/", "__") + ".png"


@pytest.mark.parametrize("rel", PAGES or ["<no book>"])
def test_page_in_browser(rel, open_page):
    page, log = open_page(rel)
    has_widgets = page.locator(WIDGET_VIEW).count() > 0
    if has_widgets:
        check_widgets(page)
    missing = wait_for_images(page)
    has_slider = page.locator(SLIDER_FIGURE).count() > 0
    if has_slider:
        move_slider(page)
    check_dropdowns(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.evaluate("() => { document.activeElement?.blur(); window.scrollTo(0, 0); }")
    page.screenshot(path=str(SHOTS / screenshot_name(rel)), full_page=True)
    assert not log.blocked, f"{rel} asked for other hosts (the book must work offline): " \
                            f"{log.blocked}"
    assert not log.errors, f"{rel}: " + "\n".join(log.errors)
    assert not missing, f"{rel}: images that did not load: {missing}"
    assert not (bad := unrendered_roles(page)), f"{rel}: role markup shown as text: {bad}"
    assert has_slider or not CHAPTER.search(rel), \
        f"{rel}: every chapter needs at least one slider figure (rslab.viz.widgets.live_figure)"


def test_book_works_from_a_file_url(browser):
    """A reader may open _build/html/index.html straight from disk."""
    if not PAGES:
        unavailable(f"no built book at {HTML} (run `make book-quick` first)")
    with_slider = [rel for rel in PAGES if 'widget-view+json' in (HTML / rel).read_text()]
    if not with_slider:
        pytest.skip("no page with widgets in the build")
    context = browser.new_context()
    try:
        page = context.new_page()
        log = PageLog(page, (HTML.as_uri() + "/"))
        page.goto((HTML / with_slider[0]).as_uri(), wait_until="load")
        check_widgets(page)
        if page.locator(SLIDER_FIGURE).count():
            move_slider(page)
        assert not log.blocked and not log.errors, log.blocked + log.errors
    finally:
        context.close()


def test_every_page_offers_its_notebook(server):
    import urllib.request

    for rel in PAGES:
        if not rel.startswith("book/"):
            continue
        text = (HTML / rel).read_text(encoding="utf-8")
        match = re.search(r'href="([^"]+\.ipynb)"', text)
        assert match, f"{rel} has no .ipynb download link"
        url = server + str(Path(rel).parent / match.group(1))
        with urllib.request.urlopen(url) as response:
            assert b'"nbformat"' in response.read(), f"{url} is not a notebook"
