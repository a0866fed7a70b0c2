"""Assembler syntax, the builder, and the listing."""

import numpy as np

from rslab.machine import Builder, assemble, simulate
from rslab.machine.asm import parse_number

LISTING_EXAMPLE = """
# one bundle per line; ops in a bundle separated by " ; "
vld v0, [s1 + 0] ; sadd s1, s1, 512
vunpack.lo v1, v0 ; vunpack.hi v2, v0
vsub.f32 v3, v1, v9 ; vsub.f32 v4, v2, v9
vexp2 v5                    # push to the SFU
vpop v6                     # pop the FIFO head
loop 302                    # zero-overhead loop, body up to endloop
nop
endloop
halt
"""


def test_design_example_assembles():
    p = assemble(LISTING_EXAMPLE)
    kinds = [e.kind for e in p.entries]
    assert kinds == ["bundle"] * 5 + ["loop", "bundle", "endloop", "halt"]
    assert [op.name for op in p.entries[0].ops] == ["vld", "sadd"]
    assert p.entries[0].ops[0].operands[1] == ("mem", 1, 0)
    assert p.entries[5].count == ("imm", 302) and p.entries[5].end == 7
    r = simulate(p)
    assert r.bundles == 5 + 302


def test_numbers_and_memory_operands():
    assert parse_number("1.0") == 0x3F800000
    assert parse_number("-inf") == 0xFF800000
    assert parse_number("-1") == 0xFFFFFFFF
    assert parse_number("0x10") == 16
    assert parse_number("1e-3") == np.float32(1e-3).view(np.uint32)
    p = assemble("vld v1, [s2]\nvld v1, [s2+16]\nvld v1, [ s2 - 0x20 ]\nhalt")
    assert [e.ops[0].operands[1] for e in p.entries[:3]] == [
        ("mem", 2, 0), ("mem", 2, 16), ("mem", 2, -32)]


def test_labels_comments_and_case():
    p = assemble("start: VMOV v1, v2   # comment\n\n  # only a comment\nend: halt")
    assert p.labels == {"start": 0, "end": 1}
    assert p.entries[0].ops[0].name == "vmov"


def test_builder_emits_the_same_program():
    b = Builder()
    b.emit("sli s1, 0")
    with b.loop(4):
        b.emit("vld v0, [s1 + 0]", "sadd s1, s1, 512", comment="next vector")
    b.label("done").halt()
    text = b.text()
    assert "vld v0, [s1 + 0] ; sadd s1, s1, 512" in text
    assert b.program().entries == assemble(text).entries
    assert simulate(b.program()).sreg(1) == 2048


def test_listing_shows_every_entry():
    p = assemble("a: vmov v1, v2\nloop 2\nnop\nendloop\nhalt")
    listing = p.listing()
    assert "a:" in listing and "vmov v1, v2" in listing and "loop 2" in listing
    assert p.loops() == [1] and p.n_bundles == 3


def test_branch_to_own_endloop_is_a_continue():
    text = ("loop 4\nsand s2, s3, 1\nsadd s3, s3, 1\nbz s2, next\nsadd s1, s1, 1\n"
            "next:\nendloop\nhalt")
    r = simulate(assemble(text))
    assert r.sreg(1) == 2 and r.sreg(3) == 4


def test_repeated_op_text_keeps_its_own_line():
    program = assemble("vmov v1, v2\nsli s1, 3\nvmov v1, v2\nhalt\n")
    assert [e.ops[0].line for e in program.entries if e.kind == "bundle"] == [1, 2, 3]


def test_body_notes_are_parsed_into_each_op():
    """``#@ LABEL iN sK`` per op (``-`` for an op of no body line), and a loop line's
    ``# U source iterations per pass``: what rslab pipeline writes, sim's timeline shows."""
    import re

    import pytest

    from rslab.machine import AssemblyError

    program = assemble("loop 3  # 2 source iterations per pass\n"
                       "vld v0, [s1 + 0] ; sadd s1, s1, 512  #@ x i4 s0 ; -\n"
                       "vadd.f32 v1, v0, v0  # a plain comment\nendloop\nhalt\n")
    loop, first, second = program.entries[:3]
    assert loop.per_pass == 2
    assert first.sources == (("x", 4, 0), None) and second.sources == (None,)
    for bad, what in (("vld v0, [s1 + 0]  #@ x i4 s0 ; y i1 s1", "names 2 op(s), the bundle has 1"),
                      ("vld v0, [s1 + 0]  #@ x 4 0", "expected LABEL iN sK or - for each op")):
        with pytest.raises(AssemblyError, match=re.escape(what)):
            assemble(bad)
