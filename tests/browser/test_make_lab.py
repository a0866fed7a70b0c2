"""``make lab`` as a reader types it: Lab starts on ``book/`` with the chapters read-only.

Through Lab's REST API, as the browser would: a chapter opens as a notebook that is not
writable, a save of it is refused with the reason, a *Save As* copy is accepted; citations
and cross-references arrive resolved. As root (``--allow-root``, as CI runs) and as a user
who is not root (no flag).
"""

import os
import shutil
import subprocess
import sys
import urllib.error
from pathlib import Path

import pytest
from labserver import ROOT, api, make_lab
from readershell import copy_of_checkout, reader_env, run_as_typed

pytestmark = pytest.mark.browser


def contents(url, token, path, **query):
    params = "&".join(f"{k}={v}" for k, v in query.items())
    return api(url, token, f"api/contents/{path}" + (f"?{params}" if params else ""))


def book_status() -> str:
    return subprocess.run(["git", "status", "--porcelain", "book/"], cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout


def test_make_lab_serves_the_chapters_read_only_and_keeps_a_readers_copy(tmp_path):
    copy = ROOT / "book" / "reader-copy-test.ipynb"
    before = book_status()
    with make_lab(tmp_path) as (url, token, _):
        chapter = contents(url, token, "02_machine.md", type="notebook")
        assert chapter["writable"] is False and chapter["type"] == "notebook"
        with pytest.raises(urllib.error.HTTPError) as refused:
            api(url, token, "api/contents/02_machine.md", method="PUT",
                body={"type": "notebook", "format": "json", "content": chapter["content"]})
        assert refused.value.code == 403
        assert "Save Notebook As" in refused.value.read().decode()
        try:
            saved = api(url, token, f"api/contents/{copy.name}", method="PUT",
                        body={"type": "notebook", "format": "json",
                              "content": chapter["content"]})
            assert saved["writable"] is True and copy.is_file()
        finally:
            copy.unlink(missing_ok=True)
        div8 = contents(url, token, "05_div8.md", type="notebook")
        text = "".join("".join(c["source"]) for c in div8["content"]["cells"])
        assert "{cite" not in text and "Oberman and Siu, 2005" in text
    assert book_status() == before, f"make lab wrote into the repository:\n{book_status()}"


def can_run_as(user: str) -> str | None:
    """Why ``user`` cannot run this venv's ``make lab`` here, or None if it can."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return "starting make lab as another user needs root and setpriv"
    probe = subprocess.run(["setpriv", f"--reuid={user}", "--regid=nogroup", "--clear-groups",
                            "sh", "-c", f"'{sys.executable}' -c 0"], capture_output=True,
                           cwd=ROOT)
    if probe.returncode:
        return (f"user {user} cannot run this venv's interpreter "
                f"({Path(sys.executable).resolve()}): the venv was made by root from a "
                "Python under a folder only root can read")
    return None


def test_make_lab_starts_for_a_user_who_is_not_root(tmp_path):
    if reason := can_run_as("nobody"):
        pytest.skip(reason)
    with make_lab(tmp_path, user="nobody") as (url, token, _):
        chapter = contents(url, token, "07_results.md", type="notebook")
        assert chapter["writable"] is False


def test_make_lab_screenshot_refreshes_the_picture_in_a_copy_of_the_checkout(tmp_path):
    """``make lab-screenshot`` as typed, in a copy of the checkout: it rewrites the tracked
    picture of the how-to-run page there, never in the repository."""
    checkout = copy_of_checkout(tmp_path / "checkout")
    picture = checkout / "book" / "_static" / "lab" / "machine_live.png"
    os.utime(picture, (0, 0))
    run_as_typed("make lab-screenshot", checkout, reader_env(checkout), timeout=900)
    assert picture.stat().st_mtime > 0 and picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
