"""Every command the README and *How to run* tell a reader to type, run as typed.

The commands are read from the `sh` code blocks of ``README.md`` and ``book/how_to_run.md``
(a ``text`` block is a synopsis or an output, not a command). Each one must match an entry
of ``RUNS`` (run here, as typed, in a copy of the checkout when it writes files, with the
size knob the README documents) or of ``ELSEWHERE`` (run as typed by another test or by CI,
named, or left out for the reason given), so a new command cannot go untested.
"""

import os
import re
import subprocess
from pathlib import Path

import pytest
from pagerun import ROOT
from readershell import copy_of_checkout, reader_env, run_as_typed

DOCS = ("README.md", "book/how_to_run.md")
ELSEWHERE = {
    r"make test": "CI: .ci/run runs `make test` on a clean clone",
    r"make book": "tests/test_reader_commands.py::test_make_test_builds_the_book_as_typed "
                  "(`make test` runs `make book RSLAB_SCALE=quick`)",
    r"RSLAB_SCALE=quick make book": "the same `make book RSLAB_SCALE=quick` that `make test` runs",
    r"make lab": "tests/browser/test_make_lab.py (and the live-notebook test starts Lab so)",
    r"make lab-screenshot": "tests/browser/test_make_lab.py, in a copy of the checkout (it "
                            "rewrites a tracked picture); `make live-test` runs it, `make test` "
                            "not (it repeats the machine chapter's live test)",
    r"make book-student": "not run: a second book build (about 2 minutes at quick scale); "
                          "_ext/rslab_book.py's student mode is tested on a page",
    r"make test-heavy": "not run: the exhaustive checks take minutes; `make test` runs the "
                        "same code on smaller inputs",
    r"make fuzz": "not run: the long profile takes many minutes; `make test` runs the same "
                  "properties with fewer examples",
    r"make live-test": "not run: Run All of every covered chapter in Lab; `make test`'s "
                       "browser stage runs the same test file on three chapters",
    r"make test-pages": "not run: each page executed again on its own; `make test` executes "
                        "every page in its book build",
    r"make sweep-full": "not run: the note-scale sweep takes hours; the sweep's tests run "
                        "`rslab sweep --scale quick`",
}
"""Commands run elsewhere (a file under tests/ that runs them) or not at all (`not run:`)."""


def commands(doc: str) -> list[str]:
    """The commands of ``doc``'s `sh` blocks: one per line, comments and blank lines out,
    ``\\`` continuations joined."""
    text = (ROOT / doc).read_text()
    found = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, re.MULTILINE | re.DOTALL):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = re.sub(r"(^|\s)#.*$", "", line).strip()
            if line:
                found.append(line)
    return found


def readers_commands() -> list[tuple[str, str]]:
    return [(doc, cmd) for doc in DOCS for cmd in commands(doc)]


def git_clone(command: str, tmp: Path):
    run_as_typed(command.replace("<this repository>", str(ROOT)), tmp, reader_env(ROOT))
    assert (tmp / "rslab" / "Makefile").is_file()


def make_bench(command: str, tmp: Path):
    done = run_as_typed(command, ROOT, reader_env(ROOT, BENCH_ARGS="--only machine"))
    assert "sampler" in done.stdout


RUNS = {
    r"git clone <this repository> rslab && cd rslab": git_clone,
    r"make bench": make_bench,
}
"""Commands this file runs one by one: each function gets the command and a temporary folder."""
IN_ORDER = r"rslab (pipeline|sim) .*"
"""The README's worked example: commands run here in one copy of the checkout, in order."""


def how_run(command: str):
    if re.fullmatch(IN_ORDER, command):
        return "test_the_readme_pipeline_commands_run_in_order"
    for table in (RUNS, ELSEWHERE):
        for pattern, how in table.items():
            if re.fullmatch(pattern, command):
                return how
    return None


def test_every_command_a_reader_types_is_run_or_its_exemption_is_given():
    cmds = readers_commands()
    assert len(cmds) >= 15, cmds
    untested = [f"{doc}: {cmd}" for doc, cmd in cmds if how_run(cmd) is None]
    assert not untested, "commands no test runs:\n" + "\n".join(untested)
    for reason in ELSEWHERE.values():
        named = re.match(r"(tests/\S+?\.py)", reason)
        assert reason.startswith(("not run:", "CI:", "the same")) or (
            named and (ROOT / named.group(1)).is_file()), reason


def test_make_test_builds_the_book_as_typed():
    """`make test` runs `make book` as a reader types it, with the documented size knob."""
    done = subprocess.run(["make", "-n", "test"], cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, MAKEFLAGS=""))
    assert re.search(r"^make(\[\d+\])?:? .*book RSLAB_SCALE=quick|make book RSLAB_SCALE=quick",
                     done.stdout, re.MULTILINE), done.stdout[-3000:]


@pytest.mark.parametrize("doc,command", [c for c in readers_commands()
                                         if any(re.fullmatch(p, c[1]) for p in RUNS)])
def test_a_readers_command_runs_as_typed(doc, command, tmp_path):
    RUNS[next(p for p in RUNS if re.fullmatch(p, command))](command, tmp_path)


def test_the_readme_pipeline_commands_run_in_order(tmp_path):
    """The README's pipeline and sim commands depend on each other (one writes what the
    next reads): run them in one copy of the checkout, in the README's order."""
    checkout = copy_of_checkout(tmp_path / "checkout")
    env = reader_env(checkout)
    ran = [cmd for doc, cmd in readers_commands() if re.fullmatch(IN_ORDER, cmd)]
    assert ran, "the README has no rslab pipeline/sim command"
    for cmd in ran:
        run_as_typed(cmd, checkout, env)
    assert (checkout / "examples" / "sumexp.s").is_file() and (checkout / "dot.json").is_file()
