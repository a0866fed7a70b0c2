"""``rslab sim``'s inputs and outputs as a kernel engineer types them (issue 36): ``--vmem``
by stated kinds, ``--dump-vmem``, the ``# machine:`` line ``rslab pipeline`` writes, a
repeated ``--config`` key, ``rslab isa``'s slot table, the timeline's columns and ruler,
the trace's window and bound, the options named in errors. Each hostile input is one
``error:`` line naming the option or the file, exit status 2, no traceback."""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rslab.machine import MachineConfig, MachineError, assemble, simulate
from rslab.machine.bf16 import f32_to_bf16_bits, pack_rows, unpack_rows

ROOT = Path(__file__).resolve().parents[1]
# four vectors (2,048 bytes) copied from byte 0 to byte 4096
COPY = ("sli s1, 0\n" + "".join(f"vld v{k}, [s1 + {512 * k}]\n" for k in range(4))
        + "".join(f"vst v{k}, [s1 + {4096 + 512 * k}]\n" for k in range(4)) + "halt\n")


def rslab(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "rslab", *map(str, args)], input=stdin,
                          capture_output=True, text=True, timeout=300)


def one_error(proc, *needles):
    """Exit status 2 and one ``error:`` line holding every needle (argparse prints its
    usage above it); no traceback."""
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = [line for line in proc.stderr.splitlines() if "error:" in line]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert all(n in lines[0] for n in needles), (needles, lines[0])


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("simio")
    (tmp / "copy.s").write_text(COPY)
    return tmp


# --vmem: the values a program reads are the values given, by the stated kind ----------

F32 = np.array([17.5, -0.0, 3.25e-7, np.inf, 1.5, -2.0, 1e30, 7.0], np.float32)
BF16_BITS = f32_to_bf16_bits(np.linspace(-3, 3, 301, dtype=np.float32))


@pytest.mark.parametrize("data, kind, expected", [
    (F32, "", F32),
    (F32, ":f32", F32),
    (np.array([-5, 2**31 - 1, -(2**31), 0], np.int32), ":i32", None),
    (np.array([0, 2**32 - 1, 12345], np.uint32), ":u32", None),
    (BF16_BITS, ":bf16", None),                      # in order, an odd count
    (BF16_BITS, ":bf16-packed", None),               # the packed layout, padded with -inf
    (F32.astype(">f4"), ":f32", F32),                # big-endian: its values, not its bytes
    (F32[:4], ":bf16", f32_to_bf16_bits(F32[:4])),  # float32 rounded to BF16
], ids=["f32", "f32-stated", "i32", "u32", "bf16", "bf16-packed", "big-endian", "f32-as-bf16"])
def test_vmem_values_go_through_the_machine_unchanged(work, tmp_path, data, kind, expected):
    """A program copies what --vmem loaded; --dump-vmem of the copy by the same kind gives
    the values back bit for bit."""
    np.save(tmp_path / "in.npy", data)
    out = tmp_path / "out.npy"
    read = kind or ":f32"
    proc = rslab("sim", work / "copy.s", "--vmem", f"{tmp_path / 'in.npy'}{kind}",
                 "--dump-vmem", f"4096:{data.size}{read}", out, "--json")
    assert proc.returncode == 0, proc.stderr
    got = np.load(out)
    want = data.astype(data.dtype.newbyteorder("=")) if expected is None else expected
    assert got.dtype == want.dtype and got.view(np.uint8).tobytes() == want.tobytes()
    (dump,) = json.loads(proc.stdout)["dumps"]
    assert dump == {"path": str(out), "address": 4096, "count": data.size,
                    "kind": read[1:], "dtype": str(want.dtype)}


def test_a_packed_bf16_row_is_what_vunpack_reads(work):
    """The packed kind is the machine chapter's layout: vunpack.lo / .hi give values l and
    l + 128 of the row."""
    row = np.linspace(-2, 2, 256, dtype=np.float32)
    np.save(work / "row.npy", row)
    (work / "unpack.s").write_text("sli s1, 0\nvld v1, [s1 + 0]\nvunpack.lo v2, v1\n"
                                   "vunpack.hi v3, v1\nvst v2, [s1 + 4096]\n"
                                   "vst v3, [s1 + 4608]\nhalt\n")
    proc = rslab("sim", work / "unpack.s", "--vmem", f"{work / 'row.npy'}:bf16-packed",
                 "--dump-vmem", "4096:256", work / "unpacked.npy")
    assert proc.returncode == 0, proc.stderr
    assert np.array_equal(np.load(work / "unpacked.npy"), unpack_rows(pack_rows(row)))


def test_the_findings_float64_is_refused_naming_the_file(work):
    """K2: a float64 17.5 (numpy's default) was read as raw bytes, 3.7e19."""
    np.save(work / "f64.npy", np.array([17.5] * 128))
    one_error(rslab("sim", work / "copy.s", "--vmem", work / "f64.npy"),
              f"--vmem {work / 'f64.npy'}", "float64 holds 8-byte values",
              "a.astype(numpy.float32)")


HOSTILE_FILES = {
    "i64.npy": lambda p: np.save(p, np.arange(4)),
    "u64.npy": lambda p: np.save(p, np.arange(4, dtype=np.uint64)),
    "bool.npy": lambda p: np.save(p, np.array([True, False])),
    "f16.npy": lambda p: np.save(p, np.ones(4, np.float16)),
    "i16.npy": lambda p: np.save(p, np.ones(4, np.int16)),
    "c64.npy": lambda p: np.save(p, np.ones(4, np.complex64)),
    "str.npy": lambda p: np.save(p, np.array(["ab", "cd"])),
    "rec.npy": lambda p: np.save(p, np.zeros(3, [("a", "<f4"), ("b", "<i4")])),
    "obj.npy": lambda p: np.save(p, np.array([1, "a"], dtype=object), allow_pickle=True),
    "fortran.npy": lambda p: np.save(p, np.asfortranarray(np.ones((3, 4), np.float32))),
    "scalar.npy": lambda p: np.save(p, np.float32(3)),
    "empty.npy": lambda p: np.save(p, np.zeros(0, np.float32)),
    "u16.npy": lambda p: np.save(p, np.ones(4, np.uint16)),
    "big.npy": lambda p: np.save(p, np.zeros(2**20 + 1, np.float32)),
    "pickle.npy": lambda p: p.write_bytes(b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00]\x94."),
    "archive.npz": lambda p: np.savez(p, a=np.ones(2, np.float32)),
    "text.npy": lambda p: p.write_text("hello"),
    "nothing.npy": lambda p: p.write_bytes(b""),
    "truncated.npy": lambda p: p.write_bytes(_npy_bytes(np.ones(64, np.float32))[:-8]),
}


def _npy_bytes(array) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


@pytest.mark.parametrize("file, suffix, needle", [
    ("i64.npy", "", "int64 holds 8-byte values and VMEM words are 32-bit"),
    ("u64.npy", "", "a.astype(numpy.uint32)"),
    ("bool.npy", "", "bool is not a VMEM value type"),
    ("f16.npy", "", "float16 is not a VMEM value type"),
    ("i16.npy", "", "int16 is not a VMEM value type"),
    ("c64.npy", "", "complex64 is not a VMEM value type"),
    ("str.npy", "", "<U2 is not a VMEM value type"),
    ("rec.npy", "", "is not a VMEM value type"),
    ("obj.npy", "", "an array of Python objects, which is not loaded"),
    ("fortran.npy", "", "saved in Fortran order"),
    ("scalar.npy", "", "needs an array of at least one value, got shape ()"),
    ("empty.npy", "", "needs an array of at least one value, got shape (0,)"),
    ("u16.npy", "", "uint16 values are BF16 bit patterns; state their layout"),
    ("u16.npy", ":f32", "uint16 values are BF16 bit patterns"),
    ("u16.npy", ":bf17", "unknown kind 'bf17'; the kinds: f32, i32, u32, bf16, bf16-packed"),
    ("i64.npy", ":i32", "int64 holds 8-byte values"),
    ("big.npy", "", "end at byte 4,194,308, beyond VMEM's 4,194,304 bytes"),
    ("pickle.npy", "", "a pickle, which is not loaded"),
    ("archive.npz", "", "an .npz archive of several arrays"),
    ("text.npy", "", "not a .npy file"),
    ("nothing.npy", "", "not a .npy file"),
    ("truncated.npy", "", "the file ends before the data its header announces"),
    ("missing.npy", "", "No such file or directory"),
    ("u16.npy", "@6:bf16", "the address must be a non-negative multiple of 4"),
    ("u16.npy", "@-4:bf16", "the address must be a non-negative multiple of 4"),
    ("u16.npy", "@four:bf16", "the address must be an integer, got 'four'"),
    ("u16.npy", "@4194304:bf16", "beyond VMEM's 4,194,304 bytes"),
])
def test_a_hostile_vmem_file_is_one_error_naming_it(work, file, suffix, needle):
    path = work / file
    if file in HOSTILE_FILES and not path.exists():
        HOSTILE_FILES[file](path)
    one_error(rslab("sim", work / "copy.s", "--vmem", f"{path}{suffix}"),
              f"--vmem {path}{suffix}", needle)


def test_two_vmem_files_that_overlap_are_refused(work):
    np.save(work / "four.npy", np.ones(4, np.float32))
    proc = rslab("sim", work / "copy.s", "--vmem", work / "four.npy", "--vmem",
                 f"{work / 'four.npy'}@12")
    one_error(proc, f"--vmem {work / 'four.npy'}@12: overlaps --vmem {work / 'four.npy'}",
              "bytes 12-15")
    proc = rslab("sim", work / "copy.s", "--vmem", work / "four.npy", "--vmem",
                 f"{work / 'four.npy'}@16", "--dump-vmem", "0:8", work / "eight.npy")
    assert proc.returncode == 0, proc.stderr
    assert np.array_equal(np.load(work / "eight.npy"), np.ones(8, np.float32))


# --dump-vmem -------------------------------------------------------------------------

@pytest.mark.parametrize("spec, out, needle", [
    ("4194300:2", "d.npy", "end at byte 4,194,308, beyond VMEM's 4,194,304 bytes"),
    ("0:1048577", "d.npy", "beyond VMEM's"),
    ("0:3:bf16-packed", "d.npy", None),  # fine: one packed block
    ("4194048:257:bf16-packed", "d.npy", "beyond VMEM's"),  # two blocks needed
    ("3:1", "d.npy", "the address must be a non-negative multiple of 4"),
    ("0:0", "d.npy", "LEN must be at least 1, got 0"),
    ("0:many", "d.npy", "LEN must be an integer, got 'many'"),
    ("0", "d.npy", "expected ADDR:LEN[:KIND]"),
    ("0:1:2:3", "d.npy", "expected ADDR:LEN[:KIND]"),
    ("0:1:f64", "d.npy", "unknown kind 'f64'"),
    ("0:1", "missing/d.npy", "its folder is missing"),
    ("0:1", ".", "a folder"),
    ("0:1", "copy.s", "is an input of the run"),
])
def test_a_hostile_dump_is_one_error_before_the_run(work, spec, out, needle):
    proc = rslab("sim", work / "copy.s", "--dump-vmem", spec, work / out)
    if needle is None:
        assert proc.returncode == 0, proc.stderr
        return
    one_error(proc, f"--dump-vmem {spec} {work / out}", needle)


def test_two_dumps_to_one_file_are_refused(work):
    one_error(rslab("sim", work / "copy.s", "--dump-vmem", "0:1", work / "same.npy",
                    "--dump-vmem", "4:1", work / "same.npy"),
              "--dump-vmem 4:1", "is the file of --dump-vmem 0:1")


# the machine a program was scheduled for --------------------------------------------

def test_pipeline_records_the_machine_and_sim_runs_the_program_on_it(work):
    out = work / "dot20.s"
    proc = rslab("pipeline", "--example", "dot_bf16_body", "--config", "sfu_latency=20",
                 "valu_slots=3", "-o", out)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert text.splitlines()[0] == "# machine: valu_slots=3 sfu_latency=20"
    config = MachineConfig().with_(slots={"valu": 3}, latency={"sfu": 20})
    expected = simulate(assemble(text), config).cycles
    with pytest.raises(MachineError, match="needs 3 valu slots"):  # the machine matters
        simulate(assemble(text))
    for extra in ([], ["--config", "sfu_latency=20", "valu_slots=3"]):
        rep = json.loads(rslab("sim", out, "--json", *extra).stdout)
        assert rep["cycles"] == expected
        assert rep["machine"]["settings"] == "valu_slots=3 sfu_latency=20"
    assert "from the program's '# machine:' line 1" in rslab("sim", out).stdout
    one_error(rslab("sim", out, "--config", "sfu_latency=20"), f"{out}:1: error:",
              "scheduled for the machine 'valu_slots=3 sfu_latency=20'",
              "--config asks for 'sfu_latency=20'")
    default = work / "dot.s"
    assert rslab("pipeline", "--example", "dot_bf16_body", "-o", default).returncode == 0
    assert default.read_text().startswith("# machine: default\n")
    one_error(rslab("sim", default, "--config", "valu_slots=3"),
              "scheduled for the machine 'default'", "--config asks for 'valu_slots=3'")


def test_a_piped_program_runs_on_the_machine_it_was_scheduled_for():
    """The finding: without the machine's settings sim stopped at line 11 (three VALU ops
    in a bundle of a two-slot machine) or read NaN (64 lanes)."""
    from rslab.commands.pipeline import pipeline_text
    from rslab.machine.overrides import apply_overrides

    pairs = [("valu_slots", "3"), ("lanes", "64")]
    proc = subprocess.run(f"{sys.executable} -m rslab pipeline --example dot_bf16_body "
                          "--config valu_slots=3 lanes=64 -o - | "
                          f"{sys.executable} -m rslab sim - --json", shell=True,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    program = pipeline_text((ROOT / "examples" / "dot_bf16_body.s").read_text(),
                            pairs=pairs)["program"]
    assert rep["machine"] == {"settings": "lanes=64 valu_slots=3",
                              "from": "the program's '# machine:' line 1"}
    assert rep["cycles"] == simulate(assemble(program), apply_overrides(pairs)).cycles


@pytest.mark.parametrize("head, line, needle", [
    ("# machine: valu_slots=x\n", 1, "'# machine:' valu_slots=x: the value must be an integer"),
    ("# machine: warp_slots=2\n", 1, "unknown machine setting 'warp_slots'"),
    ("# machine: valu_slots\n", 1, "expects 'default' or key=value settings"),
    ("# machine:\n", 1, "names no machine"),
    ("# machine: valu_slots=2 valu_slots=3\n", 1, "valu_slots is given twice"),
    ("# a comment\n\n# machine: default\n# machine: default\n", 4, "a second '# machine:'"),
])
def test_a_malformed_machine_line_names_its_line(work, head, line, needle):
    path = work / "head.s"
    path.write_text(head + "halt\n")
    one_error(rslab("sim", path), f"{path}:{line}: error:", needle)


@pytest.mark.parametrize("command", [["sim", "COPY"], ["pipeline", "--example", "sumexp_body"],
                                     ["isa"]])
def test_a_repeated_config_key_is_refused(work, command):
    command = [str(work / "copy.s") if c == "COPY" else c for c in command]
    for config in (["--config", "valu_slots=2", "--config", "valu_slots=3"],
                   ["--config", "valu_slots=2", "sfu_latency=4", "valu_slots=2"]):
        one_error(rslab(*command, *config), "--config valu_slots is given twice")


# rslab isa: the slot table ------------------------------------------------------------

def test_isa_prints_the_slot_table_of_the_machine_given():
    args = ["--config", "valu_slots=3", "sfu_hold=2", "fifo_depth=8", "ld_latency=7"]
    m = json.loads(rslab("isa", "--json", *args).stdout)["machine"]
    classes = {c["class"]: c for c in m["classes"]}
    assert (classes["valu"]["slots"], classes["ld"]["latency"], classes["pop"]["slots"]) == \
        (3, 7, None)
    assert "vexp2" in classes["sfu"]["mnemonics"] and classes["pop"]["mnemonics"] == ["vpop"]
    assert m["sfu"] == {"hold": 2, "push_every": 3, "fifo_depth": 8}
    assert m["settings"] == "sfu_hold=2 fifo_depth=8 valu_slots=3 ld_latency=7"
    text = rslab("isa", *args).stdout
    assert text.startswith("machine: sfu_hold=2 fifo_depth=8 valu_slots=3 ld_latency=7")
    rows = {line.split()[0]: line.split()[1:3] for line in text.splitlines()[2:10]}
    assert rows["valu"] == ["3", "3"] and rows["ld"] == ["1", "7"] and rows["pop"] == ["-", "1"]
    assert "a push holds the SFU 3 cycles" in text and "8-entry FIFO" in text


# the timeline's columns and ruler ------------------------------------------------------

def ruler_labels(text: str) -> dict[int, int]:
    """column → cycle of each ruler label, checking that each label sits on its tick, has
    a blank before the next, and that the header names the columns."""
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if line.lstrip().startswith("iter "))
    head, ticks = lines[i], lines[i + 1]
    assert re.match(r"^ *iter +line  (body +)?op +", head), head
    start = re.match(r"^ *iter +line  (body +)?op +", head).end()
    labels = {m.start(): int(m.group()) for m in re.finditer(r"\d+", head[start:])}
    assert {start + c for c in labels} == {m.start() for m in re.finditer(r"\|", ticks)}
    spans = sorted((c, c + len(str(v))) for c, v in labels.items())
    assert all(a_end < b for (_, a_end), (b, _) in zip(spans, spans[1:], strict=False))
    return {start + c: v for c, v in labels.items()}


def check_columns(text: str, start: int) -> None:
    """Every row's cells begin at the ruler's first column, and every label names the
    cycle of its column."""
    lines = text.splitlines()
    labels = ruler_labels(text)
    first = min(labels) - (min(labels.values()) - start)
    rows = [line for line in lines if re.search(r"[.=IR]{3,}$", line)]
    assert rows and all(len(r) - len(re.search(r"[.=IRrbkhfwd]+$", r).group()) == first
                        for r in rows), rows
    assert all(v - start == c - first for c, v in labels.items())


@pytest.mark.parametrize("window", ["18:30", "0:40", "95:131", "123440:123470",
                                    "123447:123475", "123451:123455"])
def test_timeline_labels_never_run_together(work, window):
    """The finding: --timeline 18:30 printed '1820'. Five- and six-digit cycles too."""
    path = work / "slow.s"
    path.write_text("vli v1, 0\nloop 124\nvexp2 v1\nvpop v1\nendloop\nhalt\n")
    proc = rslab("sim", path, "--config", "sfu_latency=1000", "--timeline", window)
    assert proc.returncode == 0, proc.stderr
    assert "1820" not in proc.stdout
    check_columns(proc.stdout, int(window.split(":")[0]))


def test_timeline_columns_hold_wide_cells(work):
    """Six-digit line numbers, iteration counters wider than 'iter', an op longer than its
    column: the rows stay under the ruler."""
    path = work / "wide.s"
    path.write_text("#\n" * 123456 + "sli s1, 0\nvli v63, 0x" + "0" * 40 + "1\n"
                    "loop 10\nloop 10\nloop 10\nloop 11\n"
                    "vld.s v1, [s1 + 1048064], 0 ; vadd.f32 v2, v63, v4 ; sadd s1, s1, 0\n"
                    "endloop\nendloop\nendloop\nendloop\nhalt\n")
    for window, seen in (("0:12", "vli v63, 0x000"), ("9990:10010", "[9,0,7,10] 123463")):
        proc = rslab("sim", path, "--timeline", window)
        assert proc.returncode == 0, proc.stderr
        assert seen in proc.stdout, proc.stdout
        check_columns(proc.stdout, int(window.split(":")[0]))


# the trace's window and size bound ------------------------------------------------------

def test_trace_window_keeps_only_its_cycles(work):
    trace = work / "w.json"
    proc = rslab("sim", ROOT / "examples" / "sumexp.s", "--trace", trace, "--trace-window",
                 "100:140", "--json")
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)["trace"]
    events = json.loads(trace.read_text())["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    assert slices and all(100 <= e["ts"] + (e["dur"] if e["cat"] == "stall" else 0) < 140
                          for e in slices)
    assert rep["window"] == [100, 140] and rep["flows"] == [100, 140] and rep["note"] == ""
    assert rep["ops"] == sum(1 for e in slices if e["cat"] != "stall")


def test_a_long_runs_trace_is_cut_at_its_bound_and_says_so(work):
    """The finding: a 600 k-op run wrote a 143 MB trace."""
    from rslab.machine.perfetto import MAX_TRACE_OPS

    path = work / "long.s"
    path.write_text("sli s1, 0\nloop 51000\nvadd.f32 v1, v2, v3 ; sadd s1, s1, 1\nendloop\n"
                    "halt\n")
    trace = work / "long.json"
    proc = rslab("sim", path, "--trace", trace)
    assert proc.returncode == 0, proc.stderr
    assert f"a trace holds at most {MAX_TRACE_OPS:,} ops; choose the cycles with " \
           "--trace-window START:END" in proc.stdout
    slices = [e for e in json.loads(trace.read_text())["traceEvents"] if e["ph"] == "X"]
    assert len(slices) <= MAX_TRACE_OPS and trace.stat().st_size < 40 * 10**6


@pytest.mark.parametrize("args, needle", [
    (["--trace-window", "100:140"], "--trace-window needs --trace OUT.json"),
    (["--trace", "t.json", "--trace-window", "140:100"], "argument --trace-window: needs 0"),
    (["--trace", "t.json", "--trace-window", "a:b"], "argument --trace-window: must be a"),
])
def test_a_bad_trace_window_is_one_error(work, args, needle):
    args = [str(work / a) if a == "t.json" else a for a in args]
    one_error(rslab("sim", work / "copy.s", *args), needle)


# errors in the options' words --------------------------------------------------------

def test_the_step_limit_names_the_option(work):
    path = work / "endless.s"
    path.write_text("loop 1000\nsadd s1, s1, 1\nendloop\nhalt\n")
    one_error(rslab("sim", path, "--max-steps", "50"), "step limit reached: 50 steps",
              "--max-steps N")


def test_exact_says_why_it_found_no_schedule():
    proc = rslab("pipeline", "--example", "dot_bf16_body", "--exact", "--max-stages", "2",
                 "--json")
    assert proc.returncode == 0, proc.stderr
    (tried,) = json.loads(proc.stdout)["exact"]
    assert (tried["status"], tried["reason"]) == ("none", "no schedule within --max-stages 2")
    text = rslab("pipeline", "--example", "dot_bf16_body", "--exact", "--max-stages", "2")
    assert "none, no schedule within --max-stages 2" in text.stdout
