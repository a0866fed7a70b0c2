"""A fresh, non-editable ``pip install .`` into a new environment works from another directory:
the `rslab` script and ``python -m rslab`` run the README's examples, the wheel carries the
license and the Python bound, and the tree is left without a build/ folder.

The new environment borrows the lock's packages (numpy, scipy, ...) from this one through a
``.pth`` line, so the test needs no network; rslab itself comes only from the new install.
"""

import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tree_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [f for f in out.splitlines() if (ROOT / f).is_file()]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    base = tmp_path_factory.mktemp("install")
    src = base / "src"
    for rel in _tree_files():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_bytes((ROOT / rel).read_bytes())
    env = base / "env"
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = subprocess.run([python, "-c", where], capture_output=True, text=True,
                          check=True).stdout.strip()
    Path(site, "rslab-lock.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                           "--no-deps", "--no-build-isolation", "--no-index", "--quiet", str(src)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    work = base / "work"
    work.mkdir()
    return {"src": src, "env": env, "python": python, "site": Path(site), "work": work}


def _run(cmd, installed):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300,
                          cwd=installed["work"])


def test_the_installed_package_is_not_the_source_tree(installed):
    proc = _run([installed["python"], "-c", "import rslab; print(rslab.__file__)"], installed)
    assert Path(proc.stdout.strip()).is_relative_to(installed["site"]), proc.stdout + proc.stderr


def test_the_script_runs_sim_with_a_timeline_and_a_trace(installed):
    script = installed["env"] / "bin" / "rslab"
    trace = installed["work"] / "t.json"
    proc = _run([script, "sim", installed["src"] / "examples" / "sumexp.s", "--timeline",
                 "--trace", trace], installed)
    assert proc.returncode == 0, proc.stderr
    assert "steady state" in proc.stdout and "Timeline" in proc.stdout and trace.is_file()


def test_the_script_runs_pipeline(installed):
    script = installed["env"] / "bin" / "rslab"
    proc = _run([script, "pipeline", installed["src"] / "examples" / "sumexp_body.s"], installed)
    assert proc.returncode == 0, proc.stderr
    assert "ResMII 10" in proc.stdout and "pipelined program:" in proc.stdout


def test_both_ways_of_running_name_themselves(installed):
    script = _run([installed["env"] / "bin" / "rslab", "--help"], installed)
    module = _run([installed["python"], "-m", "rslab", "--help"], installed)
    assert script.stdout.startswith("usage: rslab ")
    assert module.stdout.startswith("usage: python -m rslab ")


def test_the_metadata_tells_the_truth_and_no_build_folder_is_left(installed):
    (dist,) = installed["site"].glob("rslab-*.dist-info")
    meta = (dist / "METADATA").read_text()
    assert "Requires-Python: >=3.11" in meta and "License-Expression: MIT" in meta
    assert "Provides-Extra: dask" in meta and "Provides-Extra: test" in meta
    assert any(p.name == "LICENSE" for p in dist.rglob("LICENSE"))
    assert not (installed["src"] / "build").exists()
    assert not list(installed["src"].glob("*.egg-info"))
