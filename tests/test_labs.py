"""The kernel labs, graded as an instructor grades them: ``rslab grade`` as a subprocess.

Each lab is graded on the book's kernel built for a variant (full marks there), on its
starting kernel (correct, a low score) and on hostile submissions — correct only when V is a
multiple of 256, outputs hard-coded for one variant's inputs, an endless loop, a store
outside the contract, a read outside it, a file that does not assemble — each with its
verdict in one line. Small rows and two variants keep it cheap; ``heavy`` grades the
public variants.
"""

import csv
import json
import re
import subprocess
import sys

import numpy as np
import pytest

from rslab.kernels.studies.sumexp import reference_sumexp
from rslab.labs import LABS
from rslab.labs.fixedbonus import block_sums
from rslab.labs.lab import SUMS
from rslab.labs.residual import reference
from rslab.labs.variants import Variant
from rslab.machine.asm import f32_bits

VARIANTS = """\
[[variant]]
name = "small"
seed = 5
vocab = 2048

[[variant]]
name = "ragged"
seed = 6
vocab = 1000
machine = { valu_latency = 4, sfu_latency = 17 }
"""
SMALL = Variant("small", seed=5, vocab=2048, public=False)


def rslab(*args, env=None):
    proc = subprocess.run([sys.executable, "-m", "rslab", *map(str, args)], capture_output=True,
                          text=True, timeout=600, env=env)
    return proc


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("labs")
    (root / "variants.toml").write_text(VARIANTS)
    (root / "small.toml").write_text(VARIANTS.split("\n\n")[0] + "\n")
    return root


def hard_coded(name: str) -> str:
    """A program that writes the outputs of the variant ``small`` and nothing else."""
    lab = LABS[name]
    case = lab.case(SMALL)
    if name == "sumexp":
        _, s = reference_sumexp(case.data["logits"])
        return f"sli s3, {f32_bits(np.float32(s))}\nhalt\n"
    if name == "rowmax":
        return f"sli s3, {f32_bits(case.data['logits'].max())}\nhalt\n"
    if name == "residual":
        token, score = reference(case)
        return f"sli s4, {f32_bits(score)}\nsli s5, {f32_bits(np.float32(token))}\nhalt\n"
    lines = []
    for j, value in enumerate(block_sums(case, SMALL.packed)):
        lines += [f"sli s20, {f32_bits(value)}", f"sst s20, [s0 + {SUMS + 4 * j}]"]
    return "\n".join(lines + ["halt"]) + "\n"


def only_multiples_of_256(start: str) -> str:
    """The starting kernel with its trip count from ⌊V/256⌋ packed vectors (the last, partial
    one dropped): right only when 256 divides V."""
    shift = int(re.search(r"sshl s11, s11, (\d)", start).group(1))
    text = re.sub(r"sadd s11, s10, 2047\nsshr s11, s11, 11\nsshl s11, s11, \d\n",
                  f"sshr s11, s10, {8 + 3 - shift}\n", start)
    assert text != start
    return text


@pytest.mark.parametrize("name", sorted(LABS))
def test_lab_grades_book_start_and_hostile_kernels(name, files, tmp_path):
    spec = rslab("grade", name, "--spec", "--variants", files / "variants.toml")
    assert spec.returncode == 0, spec.stderr
    for needed in ("Inputs", "Outputs:", "Padding past V", "Starting kernel", "Task bound",
                   "Ladder", "hidden"):
        assert needed in spec.stdout
    start = rslab("grade", name, "--starting-kernel")
    assert start.returncode == 0, start.stderr

    book = rslab("grade", name, "--book-kernel", "small", "--variants", files / "small.toml")
    assert book.returncode == 0, book.stderr
    (tmp_path / "book.s").write_text(book.stdout)
    graded = rslab("grade", name, tmp_path / "book.s", "--variants", files / "small.toml",
                   "--json")
    assert graded.returncode == 0, graded.stderr
    results = json.loads(graded.stdout)
    assert results["score"] == 100, results["output"]
    assert {"name", "score", "max_score", "output", "visibility"} <= set(results["tests"][0])

    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "start.s").write_text(start.stdout)
    (folder / "only256.s").write_text(only_multiples_of_256(start.stdout))
    (folder / "hard.s").write_text(hard_coded(name))
    (folder / "endless.s").write_text("top:\njmp top\n")
    (folder / "store.s").write_text("vst v0, [s1 + 0]\n" + start.stdout)
    (folder / "read.s").write_text("sli s20, 4000000\nvld v0, [s20 + 0]\n" + start.stdout)
    (folder / "broken.s").write_text("vadd.f32 v1, v2\nhalt\n")
    graded = rslab("grade", name, folder, "--variants", files / "variants.toml",
                   "--csv", tmp_path / "scores.csv", "--json", tmp_path / "scores.json")
    assert graded.returncode == 0, graded.stderr
    assert "Traceback" not in graded.stdout + graded.stderr
    rows = {row["file"].split("/")[-1]: row
            for row in csv.DictReader((tmp_path / "scores.csv").open())}
    assert set(rows) == {"start.s", "only256.s", "hard.s", "endless.s", "store.s", "read.s",
                         "broken.s"}
    assert rows["start.s"]["correct"] == "1"
    assert 40 <= float(rows["start.s"]["score"]) <= 50, rows["start.s"]
    hard = "small" if name == "rowmax" else "ragged"  # a probe row catches it on its own V
    expected = {"only256.s": "wrong on hidden variant ragged", "hard.s": "wrong on hidden "
                f"variant {hard}", "endless.s": "does not halt", "store.s": "writes outside",
                "read.s": "reads outside", "broken.s": "does not assemble: "}
    for file, verdict in expected.items():
        row = rows[file]
        assert row["score"] == "0" and row["correct"] == "0", row
        assert verdict in row["verdict"], row
        assert "\n" not in row["verdict"]
        assert "expected" not in row["verdict"]  # a hidden variant's answer stays hidden
        assert "V =" not in row["verdict"]  # and so does its vocabulary
    lines = graded.stdout.strip().splitlines()
    assert len(lines) == len(rows) + 1  # a line a file, then the summary
    data = json.loads((tmp_path / "scores.json").read_text())
    assert set(data["results"]) == {row["file"] for row in rows.values()}
    for result in data["results"].values():
        assert result["score"] == pytest.approx(sum(t["score"] for t in result["tests"]))


def test_rowmax_probes_catch_a_kernel_that_reads_half_of_each_packed_vector(tmp_path):
    """A maximum rests on one token: a kernel that drops the high halves is wrong on every
    public variant and on a hidden V whose tail lies in low halves (V mod 256 ≤ 128), where
    the row's own maximum does; the book's and the starting kernel pass the probe rows."""
    start = rslab("grade", "rowmax", "--starting-kernel").stdout
    low_only = start.replace("vmax.f32 v50, v3, v2", "vmax.f32 v50, v3, v1")
    assert low_only != start
    (tmp_path / "low.s").write_text(low_only)
    (tmp_path / "start.s").write_text(start)
    (tmp_path / "v.toml").write_text('[[variant]]\nname = "h1"\nseed = 3\nvocab = 30001\n')
    for variant in ("public-a", "public-b", "public-c"):
        graded = rslab("grade", "rowmax", tmp_path / "low.s", "--only", variant)
        assert f"0/100 (rowmax): wrong on variant {variant}" in graded.stdout, graded.stdout
        book = rslab("grade", "rowmax", "--book-kernel", variant).stdout
        (tmp_path / "book.s").write_text(book)
        assert "100/100" in rslab("grade", "rowmax", tmp_path / "book.s", "--only",
                                  variant).stdout
    (tmp_path / "a.s").write_text(rslab("grade", "rowmax", "--book-kernel", "public-a").stdout)
    longer = rslab("grade", "rowmax", tmp_path / "a.s", "--only", "public-b").stdout
    assert "reads outside its contract on variant public-b (V = 10,000): " in longer, longer
    hidden = rslab("grade", "rowmax", tmp_path / "low.s", "--variants", tmp_path / "v.toml")
    assert "wrong on hidden variant h1" in hidden.stdout, hidden.stdout
    assert "correct on 1 variant" in rslab("grade", "rowmax", tmp_path / "start.s",
                                           "--variants", tmp_path / "v.toml").stdout


def test_a_loop_body_is_scheduled_for_each_variant(files, tmp_path):
    body = (tmp_path / "body.s")
    body.write_text(SUMEXP_BODY)
    graded = rslab("grade", "sumexp", body, "--variants", files / "variants.toml")
    assert graded.returncode == 0, graded.stderr
    assert "100/100" in graded.stdout and "(loop body)" in graded.stdout, graded.stdout
    body.write_text(SUMEXP_BODY.replace("1024*i", "1536*i"))
    graded = rslab("grade", "sumexp", body, "--variants", files / "variants.toml")
    assert "0/100" in graded.stdout and "an iteration takes 768 tokens" in graded.stdout


def test_the_chapters_body_copied_loses_points_where_its_four_workers_do_not_suffice(tmp_path):
    """On a machine whose VALU latency exceeds the loop's ResMII, the book's kernel built for
    it takes more accumulators; the chapter's four-worker body, copied, is correct but slower."""
    (tmp_path / "slow.toml").write_text('[[variant]]\nname = "slow-valu"\nseed = 21\n'
                                        'vocab = 20000\nmachine = { valu_latency = 12 }\n')
    (tmp_path / "body.s").write_text(SUMEXP_BODY)
    graded = rslab("grade", "sumexp", tmp_path / "body.s", "--variants", tmp_path / "slow.toml")
    assert "correct on 1 variant" in graded.stdout, graded.stdout + graded.stderr
    score = float(graded.stdout.split(": ")[1].split("/")[0])
    assert 40 < score < 100, graded.stdout


def test_grading_reads_the_variants_from_the_environment(files, tmp_path):
    (tmp_path / "hard.s").write_text(hard_coded("rowmax"))
    env = {"RSLAB_GRADING_VARIANTS": str(files / "variants.toml"), "PATH": "/usr/bin:/bin"}
    graded = rslab("grade", "rowmax", tmp_path / "hard.s", env=env)
    assert "wrong on hidden variant small" in graded.stdout, graded.stdout + graded.stderr
    public = rslab("grade", "rowmax", tmp_path / "hard.s")  # the public variants
    assert "wrong on variant public-a" in public.stdout and "expected" in public.stdout


def test_bad_input_is_one_error_line(files, tmp_path):
    for args, message in (
            (("no-lab", "x.s"), "unknown lab 'no-lab'"),
            (("sumexp", tmp_path / "missing.s"), "no such file"),
            (("sumexp", "--spec", "--variants", tmp_path / "none.toml"), "cannot read"),
            (("sumexp", "--book-kernel", "nope"), "unknown variant 'nope'")):
        proc = rslab("grade", *args)
        assert proc.returncode == 2, proc
        assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    (tmp_path / "bad.toml").write_text('[[variant]]\nseed = 1\nvocab = 100\n'
                                       'machine = { valu_slots = 1 }\n')
    proc = rslab("grade", "sumexp", "--spec", "--variants", tmp_path / "bad.toml")
    assert proc.returncode == 2 and "valu_slots below the book's machine" in proc.stderr
    for name, text, message in (
            ("typo-lab", 'labs = ["rowmx"]\n', "unknown lab 'rowmx'"),
            ("twice", 'name = "public-a"\n', "variant name 'public-a' is used twice"),
            ("banks192", "machine = { vmem_banks = 192 }\n", "multiple of the book's 128"),
            ("other-lab", 'labs = ["sumexp"]\n', "no variant for lab 'rowmax'")):
        (tmp_path / f"{name}.toml").write_text(f'[[variant]]\nseed = 1\nvocab = 3000\n{text}')
        proc = rslab("grade", "rowmax", "--spec", "--variants", tmp_path / f"{name}.toml")
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
    (tmp_path / "ladder.toml").write_text("[ladder.rowmx]\ncorrect = 40\n")
    proc = rslab("grade", "rowmax", "--spec", "--variants", tmp_path / "ladder.toml")
    assert proc.returncode == 2 and "[ladder.rowmx]: unknown lab" in proc.stderr
    (tmp_path / "banks.toml").write_text('[[variant]]\nseed = 1\nvocab = 3000\n'
                                         'machine = { vmem_banks = 1 }\n')
    proc = rslab("grade", "residual", "--spec", "--variants", tmp_path / "banks.toml")
    assert proc.returncode == 2 and "vmem_banks below the book's machine" in proc.stderr


@pytest.mark.heavy
@pytest.mark.parametrize("name", sorted(LABS))
def test_public_variants_ladder(name):
    """On the public variants: the book's kernel on each gets full marks, the starting kernel
    correct with only the correctness points."""
    from rslab.labs.grading import baseline, grade
    from rslab.labs.ladder import Ladder
    from rslab.labs.submission import Submission
    from rslab.labs.variants import PUBLIC

    lab = LABS[name]
    for v in PUBLIC:
        b = baseline(lab, v)
        result = grade(lab, Submission(lab.book_kernel(v, b.case), "book.s"), [v], Ladder())
        assert result.score == 100, result.line()
        assert b.bound <= b.book < b.start
    start = grade(lab, Submission(lab.starting_kernel(), "start.s"), PUBLIC, Ladder())
    assert start.correct and start.score == 40, start.line()


SUMEXP_BODY = """\
carried acc0=v50 acc1=v51 acc2=v52 acc3=v53
before: vbcast v60, s8 ; vli v61, 0x3fb8aa3b
before: vli v50, 0 ; vli v51, 0
before: vli v52, 0 ; vli v53, 0
x0 = vld [s1 + 0 + 1024*i]
x1 = vld [s1 + 512 + 1024*i]
l0 = vunpack.lo x0
z0 = vsub.f32 l0, v60
y0 = vmul.f32 z0, v61
@e0 = vexp2 y0
e0 = vpop @e0
l1 = vunpack.hi x0
z1 = vsub.f32 l1, v60
y1 = vmul.f32 z1, v61
@e1 = vexp2 y1
e1 = vpop @e1
l2 = vunpack.lo x1
z2 = vsub.f32 l2, v60
y2 = vmul.f32 z2, v61
@e2 = vexp2 y2
e2 = vpop @e2
l3 = vunpack.hi x1
z3 = vsub.f32 l3, v60
y3 = vmul.f32 z3, v61
@e3 = vexp2 y3
e3 = vpop @e3
acc0 = vadd.f32 acc0[-1], e0
acc1 = vadd.f32 acc1[-1], e1
acc2 = vadd.f32 acc2[-1], e2
acc3 = vadd.f32 acc3[-1], e3
after: vadd.f32 v56, v50, v51 ; vadd.f32 v57, v52, v53
after: vadd.f32 v58, v56, v57
after: vred.add s3, v58
"""
