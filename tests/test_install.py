"""A fresh, non-editable ``pip install .`` into a new environment works from another directory:
the `rslab` script and ``python -m rslab`` run the README's examples (its own-loop section as
written, with the examples installed as package data), the wheel carries the
license and the Python bound, and the tree is left without a build/ folder.

The new environment borrows the lock's packages (numpy, scipy, ...) from this one through a
``.pth`` line, so the test needs no network; rslab itself comes only from the new install.
"""

import json
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
    proc = _run([script, "sim", "--example", "sumexp", "--timeline", "--trace", trace],
                installed)
    assert proc.returncode == 0, proc.stderr
    assert "steady state" in proc.stdout and "Timeline" in proc.stdout and trace.is_file()


def test_the_script_runs_pipeline(installed):
    script = installed["env"] / "bin" / "rslab"
    proc = _run([script, "pipeline", "--example", "sumexp_body"], installed)
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


def _own_loop_section() -> tuple[list[str], list[str]]:
    """The README's own-loop section: its shell commands and the lines it says they print."""
    text = (ROOT / "README.md").read_text()
    section = text.split("### Your own loop end to end", 1)[1].split("\n### ", 1)[0]
    blocks = section.split("```")
    commands = [line for b in blocks[1::2] if b.startswith("sh\n") for line in b[3:].splitlines()
                if line.strip()]
    printed = [line for b in blocks[1::2] if b.startswith("text\n")
               for line in b[5:].splitlines() if line.strip()]
    return commands, printed


def test_the_readme_own_loop_runs_as_written(installed):
    """The dot product of the README, command by command in a fresh directory with only the
    installed package, prints the lines the README quotes (the bottleneck named)."""
    commands, printed = _own_loop_section()
    assert len(commands) == 3 and len(printed) >= 5
    env = {"PATH": f"{installed['env'] / 'bin'}:/usr/bin:/bin", "HOME": str(installed["work"])}
    out = ""
    for command in commands:
        proc = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=300,
                              cwd=installed["work"], env=env)
        assert proc.returncode == 0, (command, proc.stderr)
        out += proc.stdout + proc.stderr
    for line in printed:
        assert line in out, line
    assert json.loads((installed["work"] / "dot.json").read_text())["loops"][0]["binding"] == \
        {"unit": "valu", "utilisation": 1.0}
