"""Checked answers: ``check()`` on a right, a wrong and a prose-copied answer, the hidden
variant from the instructor's file, and a student's notebook graded as a subprocess."""

import csv
import json
import subprocess
import sys

import pytest

from rslab.exercises import EXERCISES, check, expected, variant
from rslab.exercises.registry import KINDS

CHEAP = [i for i, e in EXERCISES.items() if not i.startswith(("div8", "div14", "beyond"))]
"""The exercises whose oracles simulate or schedule (well under a second each); the lattice
enumerations run under ``heavy``."""


def test_every_exercise_states_its_question_on_its_variant():
    assert len(EXERCISES) >= 15
    for e in EXERCISES.values():
        assert e.kind in KINDS and e.points > 0
        text = e.text(e.params)
        assert "{" not in text, text
        if e.book is not None:
            assert set(e.book) == set(e.params) and e.book != e.params


@pytest.mark.parametrize("exercise_id", CHEAP)
def test_check_takes_the_right_answer_and_refuses_the_prose_and_a_wrong_one(exercise_id,
                                                                             capsys):
    e = EXERCISES[exercise_id]
    right = expected(exercise_id)
    assert check(exercise_id, right)
    if e.book is not None:  # the number the prose works out is not this variant's answer
        prose = expected(exercise_id, e.book)
        result = check(exercise_id, prose)
        assert not result and result.points == 0
        assert "the book's prose" in capsys.readouterr().out.splitlines()[-1]
    wrong = (not right) if e.kind == "yes/no" else right + max(1, abs(right)) * 0.5
    assert not check(exercise_id, wrong)


def test_oracles_agree_with_what_the_machine_chapter_derives():
    """Answers a student can derive by hand: slots × latency chains, ⌈latency / (1 + hold)⌉
    results in flight, odd strides conflicting 4-way on 32 banks."""
    assert expected("machine-chains") == 4 * 3
    assert expected("machine-chains", {"valu_latency": 3, "valu_slots": 2}) == 6
    assert expected("machine-in-flight") == -(-21 // 2)
    assert expected("machine-strides") == 32  # 128 lanes / (32 banks / gcd) = 4·gcd → gcd 1
    assert expected("algorithm-key-words") == 2
    assert expected("algorithm-emitted") == pytest.approx(sum(0.7 ** k for k in range(6)))
    assert expected("pipelining-hold") == 4 * (1 + 3)  # four pushes book the SFU 1 + hold


def test_check_answers_yes_no_and_numbers_as_typed():
    assert check("dataflow-third-slot", "no") and check("dataflow-third-slot", False)
    assert not check("dataflow-third-slot", "yes") and not check("machine-chains", "12 chains")
    assert check("machine-chains", 12.0) and check("algorithm-emitted", 2.941170)
    with pytest.raises(ValueError, match="unknown exercise 'no-such'"):
        check("no-such", 1)


def test_the_instructors_file_changes_the_variant(tmp_path, monkeypatch):
    (tmp_path / "v.toml").write_text("[exercise.machine-chains]\nvalu_latency = 5\n"
                                     "valu_slots = 2\n")
    monkeypatch.setenv("RSLAB_GRADING_VARIANTS", str(tmp_path / "v.toml"))
    assert dict(variant("machine-chains")) == {"valu_latency": 5, "valu_slots": 2}
    assert check("machine-chains", 10) and not check("machine-chains", 12)
    (tmp_path / "v.toml").write_text("[exercise.machine-chains]\nvalu_slotz = 2\n")
    with pytest.raises(ValueError, match="unknown parameter"):
        variant("machine-chains")


@pytest.mark.heavy
@pytest.mark.parametrize("exercise_id", sorted(set(EXERCISES) - set(CHEAP)))
def test_lattice_oracles_refuse_the_prose(exercise_id):
    e = EXERCISES[exercise_id]
    right = expected(exercise_id)
    assert check(exercise_id, right)
    assert not check(exercise_id, expected(exercise_id, e.book))


NOTEBOOK = """---
jupytext:
  text_representation: {extension: .md, format_name: myst, format_version: 0.13}
kernelspec: {display_name: Python 3, language: python, name: python3}
---

```{code-cell} ipython3
from rslab.exercises import check, variant

v = variant("machine-chains")
check("machine-chains", v.valu_latency * v.valu_slots)
```

```{code-cell} ipython3
check("pipelining-workers", 4)
```

```{code-cell} ipython3
raise RuntimeError("a broken cell")
```

```{code-cell} ipython3
check("machine-strides", 8)
```
"""


@pytest.mark.slow
def test_rslab_grade_exercises_runs_a_notebook_with_the_hidden_variant(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    (folder / "alice.md").write_text(NOTEBOOK)
    (tmp_path / "v.toml").write_text("[exercise.machine-chains]\nvalu_latency = 5\n"
                                     "valu_slots = 2\n[exercise.pipelining-workers]\n"
                                     "valu_latency = 2\n")
    warnings = []  # each run's standard error

    def grade(*extra):
        proc = subprocess.run([sys.executable, "-m", "rslab", "grade", "exercises", folder,
                               "--csv", tmp_path / "s.csv", "--json", tmp_path / "s.json",
                               *extra], capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stdout
        warnings.append(proc.stderr)
        return next(csv.DictReader((tmp_path / "s.csv").open()))

    public = grade()  # the public variants: the typed-in 4 is right there
    assert public["machine-chains"] == "1" and public["pipelining-workers"] == "1"
    assert public["machine-strides"] == "0" and public["errors"] == "1"
    hidden = grade("--variants", tmp_path / "v.toml")  # the code's answer follows the variant
    assert "warning" not in warnings[-1]  # both hidden answers differ from the page's
    assert hidden["machine-chains"] == "1" and hidden["pipelining-workers"] == "0"
    assert float(hidden["score"]) == 1 and float(hidden["max_score"]) == 3
    results = json.loads((tmp_path / "s.json").read_text())
    tests = results["tests"]
    assert [t["name"] for t in tests] == ["machine-chains", "pipelining-workers",
                                          "machine-strides"]


@pytest.mark.slow
def test_a_deleted_check_still_counts_against_the_notebook(tmp_path):
    """A notebook is scored on every exercise its folder's notebooks check and on --expect's,
    so deleting a check cell does not lower its maximum; a bad id is one error line."""
    folder = tmp_path / "notebooks"
    folder.mkdir()
    (folder / "alice.md").write_text(NOTEBOOK)
    (folder / "README.md").write_text("# My answers\n\nNo code here.\n")  # not a notebook
    (folder / "bob").mkdir()  # one subfolder down, as a folder of kernels
    (folder / "bob" / "bob.md").write_text(NOTEBOOK.split("```{code-cell} ipython3\ncheck(")[0])
    run = [sys.executable, "-m", "rslab", "grade", "exercises", folder, "--csv", tmp_path / "s.csv"]
    proc = subprocess.run(run + ["--expect", "machine-branch"], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    rows = {r["file"].rsplit("/", 1)[-1]: r for r in csv.DictReader((tmp_path / "s.csv").open())}
    assert set(rows) == {"alice.md", "bob.md"}
    assert rows["alice.md"]["max_score"] == rows["bob.md"]["max_score"]
    assert rows["bob.md"]["machine-strides"] == "0" and rows["bob.md"]["machine-branch"] == "0"
    bad = subprocess.run(run + ["--expect", "no-such"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "unknown exercise 'no-such'" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    (tmp_path / "typo.toml").write_text("[exercise.machine-chain]\nvalu_latency = 5\n")
    bad = subprocess.run(run + ["--variants", tmp_path / "typo.toml"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and "[exercise.machine-chain]" in bad.stderr
    (tmp_path / "param.toml").write_text("[exercise.machine-chains]\nvalu_latncy = 5\n")
    bad = subprocess.run(run + ["--variants", tmp_path / "param.toml"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and "unknown parameter" in bad.stderr, bad.stderr


FORGER = NOTEBOOK.split("```{code-cell} ipython3\ncheck(")[0] + """
```{code-cell} ipython3
import json, os
with open(os.environ["RSLAB_CHECK_LOG"], "a") as log:
    log.write(json.dumps({"exercise": "machine-strides", "correct": True, "points": 99}) + "\\n")
for guess in range(1, 40):
    if check("pipelining-workers", guess):
        break
```
"""


@pytest.mark.slow
def test_the_grader_scores_the_first_check_with_its_own_oracle(tmp_path):
    """A notebook that writes its own log line or tries answers until one is right gains
    nothing: the grader re-checks each exercise's first logged answer itself."""
    folder = tmp_path / "notebooks"
    folder.mkdir()
    (folder / "mallory.md").write_text(FORGER)
    proc = subprocess.run([sys.executable, "-m", "rslab", "grade", "exercises", folder, "--csv",
                           tmp_path / "s.csv"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    row = next(csv.DictReader((tmp_path / "s.csv").open()))
    assert row["machine-chains"] == "1" and row["pipelining-workers"] == "0"
    assert row.get("machine-strides", "0") == "0" and float(row["score"]) == 1


def test_check_without_an_answer_says_so_and_scores_nothing(capsys):
    from rslab.exercises import check

    result = check("machine-chains", None)
    out = capsys.readouterr().out
    assert not result and result.points == 0
    assert "no answer yet" in out and "With VALU latency" in out


@pytest.mark.slow
def test_the_grader_warns_of_a_hidden_answer_the_page_gives_away(tmp_path):
    """A hidden variant whose answer is the public variant's (here: no third SFU op fits at
    hold 3, as at the public hold; a section that copies the public parameters) is graded,
    with a warning naming the exercise."""
    folder = tmp_path / "notebooks"
    folder.mkdir()
    (folder / "typed.md").write_text(NOTEBOOK.split("```{code-cell} ipython3\ncheck(")[0] +
                                     '```{code-cell} ipython3\ncheck("dataflow-third-slot", '
                                     '"no")\n```\n')
    (tmp_path / "v.toml").write_text("[exercise.dataflow-third-slot]\nsfu_hold = 3\n"
                                     "[exercise.machine-chains]\nvalu_latency = 4\n"
                                     "valu_slots = 3\n")  # the public parameters, copied
    proc = subprocess.run([sys.executable, "-m", "rslab", "grade", "exercises", folder,
                           "--variants", tmp_path / "v.toml"], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "[exercise.dataflow-third-slot]: its answer is the public variant's (no)" \
        in proc.stderr
    assert "[exercise.machine-chains]: its answer is the public variant's (12)" in proc.stderr
    assert "dataflow-third-slot 2/2" in proc.stdout
