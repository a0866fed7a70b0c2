"""The command line answers --help and rejects bad input with a clear message."""

import subprocess
import sys


def run(*args):
    return subprocess.run([sys.executable, "-m", "rslab", *args], capture_output=True, text=True,
                          timeout=300)


def test_help_lists_commands():
    proc = run("--help")
    assert proc.returncode == 0
    assert "usage: python -m rslab" in proc.stdout
    assert "bench" in proc.stdout


def test_unknown_command_is_an_error():
    proc = run("no-such-command")
    assert proc.returncode == 2
    assert "invalid choice" in proc.stderr


def test_bench_rejects_unknown_benchmark():
    proc = run("bench", "--only", "no-such-benchmark")
    assert proc.returncode == 2
    assert "--only" in proc.stderr
