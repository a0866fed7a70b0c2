"""``make lab`` as a reader types it: Lab starts on ``book/`` with the chapters read-only.

Through Lab's REST API, as the browser would: a chapter opens as a notebook that is not
writable, a save of it is refused with the reason, a *Save As* copy is accepted; citations
and cross-references arrive resolved. As root (``--allow-root``, as CI runs) and as a user
who is not root (no flag).
"""

import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
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


SCRIPTS = {"jupyter": "jupyter_core.command:main", "jupyter-lab": "jupyterlab.labapp:main"}
"""The console scripts ``make lab`` runs, as pip writes them into a reader's venv."""


def user_checkout(user: str, dest: Path) -> Path:
    """A copy of the checkout that ``user`` owns, with a venv of its own made from a
    Python that ``user`` can run (the system's, same minor version) and seeing this venv's
    installed packages, as a reader's own venv would have them; its make stamps are current,
    so ``make lab`` installs nothing. Skips when this machine has no such Python, or when
    ``user`` cannot read this venv."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("starting make lab as another user needs root and setpriv")
    python = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    if not python.is_file():
        pytest.skip(f"no system {python.name} for a venv that user {user} can run")
    dest.chmod(0o755)
    checkout = copy_of_checkout(dest / "rslab")
    venv = checkout / ".venv"
    venv.unlink()
    subprocess.run([str(python), "-m", "venv", "--without-pip", str(venv)], check=True)
    shared = Path(sysconfig.get_paths()["purelib"])
    (Path(sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"])
     / "shared-packages.pth").write_text(f"import site; site.addsitedir({str(shared)!r})\n")
    settings = Path("share/jupyter/lab/settings/overrides.json")
    (venv / settings).parent.mkdir(parents=True)
    shutil.copy2(ROOT / ".venv" / settings, venv / settings)
    for script, entry in SCRIPTS.items():
        path = venv / "bin" / script
        module, func = entry.split(":")
        path.write_text(f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom {module} import {func}\n"
                        f"sys.exit({func}())\n")
        path.chmod(0o755)
    for stamp in (".installed", ".reader-installed", settings):
        (venv / stamp).touch()
    subprocess.run(["chown", "-R", f"{user}:", str(dest)], check=True)
    probe = subprocess.run(["setpriv", f"--reuid={user}", "--regid=nogroup", "--clear-groups",
                            str(venv / "bin" / "python"), "-c", "import jupyterlab, numpy"],
                           capture_output=True, text=True, cwd=checkout)
    if probe.returncode:
        pytest.skip(f"user {user} cannot use this venv's packages ({shared}): "
                    + probe.stderr.strip().splitlines()[-1])
    return checkout


def test_make_lab_starts_for_a_user_who_is_not_root():
    """``make lab`` as typed by a reader who is not root, in their own checkout and venv:
    Lab starts without ``--allow-root`` and serves the chapters read-only."""
    checkout = user_checkout("nobody", Path(tempfile.mkdtemp(prefix="rslab-reader-")))
    home = checkout.parent / "home"
    home.mkdir()
    try:
        with make_lab(home, user="nobody", checkout=checkout) as (url, token, _):
            chapter = contents(url, token, "02_machine.md", type="notebook")
            assert chapter["writable"] is False
            saved = api(url, token, "api/contents/my-copy.ipynb", method="PUT",
                        body={"type": "notebook", "format": "json",
                              "content": chapter["content"]})
            assert saved["writable"] is True
        copy = checkout / "book" / "my-copy.ipynb"
        assert copy.stat().st_uid == pwd.getpwnam("nobody").pw_uid, "Lab did not run as nobody"
    finally:
        shutil.rmtree(checkout.parent, ignore_errors=True)


@pytest.mark.live_extra  # the machine chapter's live test again: make live-test, not make test
def test_make_lab_screenshot_refreshes_the_picture_in_a_copy_of_the_checkout(tmp_path):
    """``make lab-screenshot`` as typed, in a copy of the checkout: it rewrites the tracked
    picture of the how-to-run page there, never in the repository."""
    checkout = copy_of_checkout(tmp_path / "checkout")
    picture = checkout / "book" / "_static" / "lab" / "machine_live.png"
    os.utime(picture, (0, 0))
    run_as_typed("make lab-screenshot", checkout, reader_env(checkout), timeout=900)
    assert picture.stat().st_mtime > 0 and picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
