"""A reader's shell: commands run as typed, in the checkout or in a copy of it."""

import os
import shutil
import subprocess
from pathlib import Path

from pagerun import ROOT


def copy_of_checkout(dest: Path) -> Path:
    """A clone of the checkout as it is now (uncommitted changes too, as one commit), with
    the venv shared; the make stamps stay newer than the copy's requirements, so nothing is
    installed."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        src = ROOT / name
        if src.is_file() or src.is_symlink():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name, follow_symlinks=False)
    (dest / ".venv").symlink_to(ROOT / ".venv")
    vendor = ROOT / "book" / "_static" / "vendor"
    if vendor.is_dir():
        (dest / "book" / "_static" / "vendor").symlink_to(vendor)
    for name in ("requirements.txt", "pyproject.toml"):
        os.utime(dest / name, (0, 0))
    git = ["git", "-c", "user.name=reader", "-c", "user.email=reader@localhost"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "a reader's clone"]):
        subprocess.run(git + args, cwd=dest, check=True, capture_output=True)
    return dest


def reader_env(checkout: Path, **extra) -> dict:
    """A reader's shell in ``checkout``: the venv's scripts first on PATH, its package."""
    env = dict(os.environ, PATH=f"{checkout / '.venv' / 'bin'}:{os.environ['PATH']}",
               PYTHONPATH=str(checkout), RSLAB_SCALE="quick", **extra)
    return env


def run_as_typed(command: str, cwd: Path, env: dict, timeout: float = 600):
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, (f"`{command}` exited {done.returncode}:\n"
                                  f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return done
