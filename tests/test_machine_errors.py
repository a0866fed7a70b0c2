"""Every error path: assembly errors carry the line; machine errors carry pc, cycle, op text."""

import numpy as np
import pytest

from rslab.machine import AssemblyError, MachineConfig, MachineError, assemble, simulate


@pytest.mark.parametrize("text, line, needle", [
    ("nop\nvfoo v1, v2", 2, "unknown mnemonic"),
    ("vadd.f32 v1, v2", 1, "takes 3 operand"),
    ("vadd.f32 v1, s2, v3", 1, "vector register"),
    ("vld v1, s2 + 4", 1, "memory operand"),
    ("vld v1, [v2 + 4]", 1, "memory operand"),
    ("sli s1, banana", 1, "sli"),
    ("sli s1, 0x1ffffffff", 1, "32 bits"),
    ("jmp nowhere", 1, "undefined label"),
    ("a:\nnop\na:\nnop", 3, "already defined"),
    ("nop\nendloop", 2, "without a matching loop"),
    ("loop 3\nnop", 1, "without a matching endloop"),
    ("loop 3\nendloop", 2, "empty loop body"),
    ("loop 3 ; nop\nnop\nendloop", 1, "stand alone"),
    ("loop -1\nnop\nendloop", 1, "count"),
    ("loop\nnop\nendloop", 1, "count"),
    ("halt 3", 1, "no operand"),
    ("vmov v1, v2 ; vmov v1, v3", 1, "write v1"),
    ("nop ; vmov v1, v2", 1, "nop must be alone"),
    ("vmov v1, v2 ;  ; vmov v3, v4", 1, "empty op"),
    ("loop 2\ninner:\nnop\nendloop\njmp inner", 5, "crosses"),
    ("bz s1, a ; bnz s2, a\na:\nnop", 1, "one branch"),
])
def test_assembly_errors_name_the_line_and_text(text, line, needle):
    with pytest.raises(AssemblyError) as exc:
        assemble(text)
    assert exc.value.line == line
    assert needle in str(exc.value)
    assert f"line {line}" in str(exc.value)
    assert exc.value.text.strip() in str(exc.value)


def test_assemble_rejects_non_text():
    with pytest.raises(ValueError, match="text"):
        assemble(b"nop")


def machine_error(text, config=None, **kw):
    with pytest.raises(MachineError) as exc:
        simulate(assemble(text), config, **kw)
    return exc.value


def test_vmem_out_of_bounds_and_unaligned():
    e = machine_error("nop\nvld v1, [s1 + 0]\nhalt", sregs={1: 4 * 1024 * 1024 - 4})
    assert "out of bounds" in e.message and e.pc == 1 and e.cycle == 1
    assert e.op == "vld v1, [s1 + 0]"
    e = machine_error("vst v1, [s1 - 4]\nhalt")
    assert "out of bounds" in e.message
    e = machine_error("sld s2, [s1 + 2]\nhalt")
    assert "unaligned" in e.message
    e = machine_error("vld.s v1, [s1 + 0], 9000\nhalt")
    assert "strided" in e.message


def test_pop_on_empty_fifo_is_a_deadlock():
    e = machine_error("nop\nvpop v1\nhalt")
    assert "deadlock" in e.message and e.pc == 1 and "vpop v1" in e.op


def test_fifo_overflow():
    cfg = MachineConfig().with_(fifo_depth=2)
    e = machine_error("vexp2 v1\nvexp2 v1\nvexp2 v1\nhalt", cfg)
    assert "overflow" in e.message and e.pc == 2 and e.cycle == 4


def test_unknown_registers():
    e = machine_error("vmov v64, v1\nhalt")
    assert "unknown register v64" in e.message and e.cycle is None
    e = machine_error("sadd s1, s32, 1\nhalt")
    assert "unknown register s32" in e.message
    e = machine_error("vld v1, [s40 + 0]\nhalt")
    assert "unknown register s40" in e.message
    e = machine_error("loop s99\nnop\nendloop\nhalt")
    assert "unknown register s99" in e.message
    cfg = MachineConfig().with_(vregs=8)
    e = machine_error("vmov v8, v1", cfg)
    assert "8 vector registers" in e.message


def test_loop_nesting_too_deep():
    cfg = MachineConfig().with_(loop_depth=1)
    e = machine_error("loop 2\nloop 2\nnop\nendloop\nendloop\nhalt", cfg)
    assert "loop_depth" in e.message and e.pc == 1


def test_slot_limits_from_the_config():
    e = machine_error("vld v1, [s0 + 0] ; vld v2, [s0 + 512]\nhalt")
    assert "ld slots" in e.message
    cfg = MachineConfig().with_(slots={"ld": 2})
    simulate(assemble("vld v1, [s0 + 0] ; vld v2, [s0 + 512]\nhalt"), cfg)


def test_dma_errors():
    e = machine_error("sli s3, 64\ndma s1, s2, s3\nhalt", hbm=np.zeros(8, np.uint32))
    assert "out of bounds" in e.message
    e = machine_error("sli s3, 6\ndma s1, s2, s3\nhalt", hbm=np.zeros(8, np.uint32))
    assert "multiples of 4" in e.message
    e = machine_error("dma s1, s2, s3, 9\nhalt")
    assert "tag 9" in e.message
    e = machine_error("dmawait 8\nhalt")
    assert "tag 8" in e.message


def test_endless_loop_hits_the_bundle_limit():
    e = machine_error("top:\njmp top", max_steps=100)
    assert "step limit" in e.message


@pytest.mark.parametrize("kwargs, needle", [
    ({"sregs": {40: 1}}, "s40"),
    ({"sregs": {1: "x"}}, "sregs"),
    ({"vregs": {1: np.zeros(5)}}, "vregs"),
    ({"vmem": {3: np.zeros(4, np.uint32)}}, "multiples of 4"),
    ({"vmem": np.zeros(5, np.uint8)}, "multiple of 4"),
    ({"max_steps": 0}, "max_steps"),
])
def test_bad_simulate_arguments(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        simulate(assemble("halt"), **kwargs)


def test_bad_program_and_config_types():
    with pytest.raises(ValueError, match="program"):
        simulate("halt")
    with pytest.raises(ValueError, match="config"):
        simulate(assemble("halt"), config={})


@pytest.mark.parametrize("change, needle", [
    ({"slots": {"valu": 0}}, "slots"),
    ({"slots": {"fpu": 1}}, "unknown"),
    ({"latency": {"sfu": 0}}, "latency"),
    ({"fifo_depth": 0}, "fifo_depth"),
    ({"sfu_hold": -1}, "sfu_hold"),
    ({"bank_bytes": 8}, "bank_bytes"),
    ({"log2_fn": 3}, "log2_fn"),
    ({"colour": 1}, "unknown"),
])
def test_bad_config(change, needle):
    with pytest.raises(ValueError, match=needle):
        MachineConfig().with_(**change)


def test_config_with_merges_tables_and_hashes():
    base = MachineConfig()
    cfg = base.with_(latency={"sfu": 20}, slots={"valu": 3}, fifo_depth=8)
    assert cfg.latency["sfu"] == 20 and cfg.latency["valu"] == base.latency["valu"]
    assert cfg.slots["valu"] == 3 and cfg.fifo_depth == 8
    assert base.latency["sfu"] == 13 and base == MachineConfig()
    assert hash(base) == hash(MachineConfig()) and cfg != base
    assert any("20" in value for _, value, _ in cfg.table())
