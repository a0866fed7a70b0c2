"""``rslab.api`` used as a test harness uses it: pipeline a body, simulate it with inputs,
compare registers and VMEM with NumPy; every bad input one ``ValueError`` naming it."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rslab import api
from rslab.machine import MachineConfig
from rslab.machine.bf16 import pack_rows, round_to_bf16, unpack_rows
from rslab.machine.units import tree_sum

DOT = (Path(api.__file__).parent / "examples" / "dot_bf16_body.s").read_text()
DOUBLE = """iterations 6
before: sli s1, 0
before: sli s2, 8192
x = vld [s1 + 0 + 512*i]
y = vadd.u32 x, x
vst y, [s2 + 0 + 512*i]
"""


def dot_numpy(a, b) -> np.float32:
    """The dot product in the kernel's order: per packed vector, lane l adds the products
    of values l and l + 128; then the lanes' tree sum."""
    acc = np.zeros(128, np.float32)
    for k in range(a.size // 256):
        lo, hi = slice(256 * k, 256 * k + 128), slice(256 * k + 128, 256 * (k + 1))
        acc = acc + (a[lo] * b[lo] + a[hi] * b[hi])
    return np.float32(tree_sum(acc))


@pytest.mark.parametrize("config", [None, {"valu_slots": 4},
                                    MachineConfig().with_(latency={"valu": 5})])
def test_a_bf16_dot_product_computes_numpys_value(config):
    rng = np.random.default_rng(7)
    a, b = (round_to_bf16(rng.standard_normal(64 * 256).astype(np.float32)) for _ in range(2))
    plan = api.pipeline(DOT, config=config)
    assert plan.program.startswith("# machine: ") and plan.report["ii"] == plan.ii >= 1
    run = api.simulate(plan.program, vmem={0: (a, "bf16-packed"), 65536: (b, "bf16-packed")})
    assert run.reg("s3", "f32") == dot_numpy(a, b)
    assert run.regs["s3"] == int(dot_numpy(a, b).view(np.uint32))
    assert run.machine == api.machine(config)  # the machine the program recorded
    assert run.cycles > 64 * plan.ii


@pytest.mark.parametrize("dtype, kind", [(np.uint32, "u32"), (np.int32, "i32")])
def test_vmem_in_and_out_by_kind(dtype, kind):
    x = np.arange(-300, 6 * 128 - 300).astype(dtype)
    run = api.simulate(api.pipeline(DOUBLE).program, vmem={0: x})
    got = run.vmem(8192, x.size, kind)
    assert got.dtype == dtype and np.array_equal(got, (x.astype(np.int64) * 2).astype(dtype))
    packed = run.vmem(0, 256, "bf16-packed")  # value l: the low half-word of word l
    assert np.array_equal(packed[:128], x[:128].view(np.uint32) & 0xFFFF)
    assert np.array_equal(packed[128:], x[:128].view(np.uint32) >> 16)


def test_registers_by_name():
    run = api.simulate("sli s3, -7\nvli v2, 1.5\nhalt\n", sregs={4: 2.5})
    assert run.regs["s3"] == 2**32 - 7 and run.reg("s3", "i32") == -7
    assert run.reg("s4", "f32") == 2.5
    assert np.array_equal(run.reg("v2", "f32"), np.full(128, 1.5, np.float32))
    assert run.regs["v2"].dtype == np.uint32 and len(run.regs) == 32 + 64
    with pytest.raises(KeyError, match="'v64' does not exist"):
        run.regs["v64"]
    with pytest.raises(KeyError, match="registers are named"):
        run.regs["x1"]
    with pytest.raises(ValueError, match="a register holds f32, i32 or u32 words, not bf16"):
        run.reg("s3", "bf16")


def test_report_is_what_the_command_prints(tmp_path):
    program = api.pipeline(DOUBLE).program
    rep = api.simulate(program, trace=True).report()
    (tmp_path / "p.s").write_text(program)
    cli = json.loads(subprocess.run([sys.executable, "-m", "rslab", "sim", tmp_path / "p.s",
                                     "--json"], capture_output=True, text=True,
                                    check=True).stdout)
    for key in ("cycles", "bundles", "ops", "stalls", "loops", "utilisation"):
        assert rep[key] == cli[key], key
    with pytest.raises(ValueError, match="trace=True"):
        api.simulate(program).report()


ROW = np.zeros(128, np.float32)


@pytest.mark.parametrize("call, needle", [
    (lambda: api.pipeline("x = vfoo y\n"), "<body>:1: unknown opcode 'vfoo'"),
    (lambda: api.pipeline(DOT, config={"valu_slots": "x"}), "config: valu_slots=x"),
    (lambda: api.pipeline(DOT, config=[("valu_slots", 3)]), "config must be a mapping"),
    (lambda: api.simulate("vadd.f32 v1\nhalt\n", name="k.s"), "k.s:1: vadd.f32 takes 3"),
    (lambda: api.simulate(b"halt\n"), "program_text must be the program's text"),
    (lambda: api.simulate("# machine: valu_slots=3\nhalt\n", config={"valu_slots": 4}),
     "<program>:1: the program was scheduled for the machine 'valu_slots=3' (this line), "
     "but config= asks for 'valu_slots=4'"),
    (lambda: api.simulate("halt\n", config={"sfu_hold": 1, "valu_slots": 9999}),
     "config: valu_slots=9999: at most 64"),
    (lambda: api.simulate("halt\n", vmem={0: np.zeros(4)}),
     "vmem[0]: float64 holds 8-byte values and VMEM words are 32-bit; convert it first: "
     "a.astype(numpy.float32)"),
    (lambda: api.simulate("halt\n", vmem={0: np.zeros(4, np.uint16)}),
     "vmem[0]: uint16 values are BF16 bit patterns; state their layout"),
    (lambda: api.simulate("halt\n", vmem={0: (ROW, "i32")}), "vmem[0]: holds float32"),
    (lambda: api.simulate("halt\n", vmem={0: (ROW, "f64")}), "vmem[0]: unknown kind 'f64'"),
    (lambda: api.simulate("halt\n", vmem={0: ROW, 256: ROW}), "vmem[256]: overlaps vmem[0]"),
    (lambda: api.simulate("halt\n", vmem={6: ROW}), "addresses must be non-negative"),
    (lambda: api.simulate("halt\n", vmem={2**22 - 4: ROW}), "beyond the 4194304-byte memory"),
    (lambda: api.simulate("halt\n", vmem=[ROW]), "vmem must be a mapping"),
    (lambda: api.simulate("loop 9\nnop\nendloop\nhalt\n", max_steps=5),
     "step limit reached: 5 steps"),
    (lambda: api.simulate("halt\n").vmem(2**22, 1), "outside VMEM"),
    (lambda: api.simulate("halt\n").vmem(0, 0), "count must be a positive integer"),
    (lambda: api.simulate("halt\n").vmem(2, 1), "address must be a non-negative multiple"),
])
def test_bad_input_is_one_value_error(call, needle):
    with pytest.raises(ValueError) as exc:
        call()
    assert needle in str(exc.value) and "\n" not in str(exc.value), str(exc.value)


def test_a_packed_row_reads_back_as_its_values():
    row = round_to_bf16(np.linspace(-1, 1, 300, dtype=np.float32))
    run = api.simulate("halt\n", vmem={1024: (row, "bf16-packed")})
    bits = run.vmem(1024, 300, "bf16-packed")
    assert np.array_equal(unpack_rows(pack_rows(row), 300), row)
    assert np.array_equal((bits.astype(np.uint32) << 16).view(np.float32), row)


def test_the_readmes_example_runs_as_written():
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    code = text.split("### From Python", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1], timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("16384.0 ") and "[16256 16256 16256 16256]" in proc.stdout
