"""Jupyter Lab started the way a reader starts it: ``make lab``, as typed.

The port and the token are Jupyter's own environment variables (``JUPYTER_PORT``,
``JUPYTER_TOKEN``, as the README tells a reader); the settings, runtime and config folders
are temporary (``JUPYTER_CONFIG_DIR`` and friends), so a test never reads or writes the
home folder. ``make lab`` runs in the repository, as a reader runs it.
"""

import json
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVER_CONFIG = {
    "ServerApp": {"port_retries": 0, "open_browser": False},
    "LabApp": {"expose_app_in_browser": True, "news_url": "",
               "check_for_updates_class": "jupyterlab.NeverCheckForUpdate"},
}
"""What a test asks of the server beyond a reader's defaults: no browser of its own, no
second port, no news or update check (the network is closed)."""
LAB_SETTINGS = {
    # every cell in the page, as a reader scrolls; no pop-up over the page; no autosave
    "notebook-extension/tracker": {"windowingMode": "none"},
    "apputils-extension/notification": {"fetchNews": "false"},
    "docmanager-extension/plugin": {"autosave": False},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(url: str, token: str, path: str, method: str = "GET", body=None):
    """One REST call; the decoded JSON answer (None for an empty one)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url + path, method=method, data=data,
                                 headers={"Authorization": f"token {token}",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        raw = r.read()
    return json.loads(raw) if raw else None


def lab_home(home: Path) -> dict:
    """The environment of a reader's ``make lab`` with its Jupyter folders under ``home``."""
    for name, value in LAB_SETTINGS.items():
        path = home / "settings" / "@jupyterlab" / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    for name in ("jupyter_server_config.json", "jupyter_lab_config.json"):
        (config / name).write_text(json.dumps(SERVER_CONFIG))
    return {"JUPYTER_CONFIG_DIR": str(config), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "JUPYTER_DATA_DIR": str(home / "data"),
            "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"), "HOME": str(home),
            "RSLAB_SCALE": "quick"}


@contextmanager
def make_lab(home: Path, user: str | None = None, group: str = "nogroup", timeout: float = 90,
             checkout: Path = ROOT):
    """``make lab`` running in ``checkout`` (the repository): yields ``(url, token, log
    path)``; stops the server through its REST API (``make`` must then exit with 0) or kills
    it on failure. ``user`` runs it as that user (``setpriv``), the way a reader who is not
    root runs it."""
    port, token = free_port(), secrets.token_hex(16)
    env = dict(os.environ, **lab_home(home), JUPYTER_PORT=str(port), JUPYTER_TOKEN=token)
    env.pop("PYTHONPATH", None)
    cmd = ["make", "lab"]
    if user is not None:
        os.chmod(home, 0o777)
        for path in home.rglob("*"):
            os.chmod(path, 0o777)
        cmd = ["setpriv", f"--reuid={user}", f"--regid={group}", "--clear-groups", *cmd]
    log_path = home / "make-lab.log"
    url = f"http://127.0.0.1:{port}/"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=checkout, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    api(url, token, "api/status")
                    break
                except (OSError, urllib.error.URLError):
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise AssertionError("`make lab` did not start Jupyter Lab:\n"
                                             + log_path.read_text()) from None
                    time.sleep(0.5)
            yield url, token, log_path
            api(url, token, "api/shutdown", method="POST")
            assert proc.wait(timeout=30) == 0, "`make lab` failed:\n" + log_path.read_text()
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=30)
