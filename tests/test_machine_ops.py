"""Functional results of every op against NumPy."""

import numpy as np
import pytest

from rslab.machine import MachineConfig, assemble, simulate
from rslab.machine.bf16 import f32_to_bf16_bits, pack_rows, unpack_rows
from rslab.numerics.fastlog import (
    DEFAULT_FASTLOG2,
    fast_exp2,
    fast_rcp,
    precise_exp2,
    precise_log2,
)
from rslab.numerics.rng import hw_random_words

RNG = np.random.default_rng(7)
A = RNG.normal(size=128).astype(np.float32) * 4
B = RNG.normal(size=128).astype(np.float32) * 4
B[:8] = A[:8]                                   # some equal lanes for the compares
UA = RNG.integers(0, 2**32, size=128, dtype=np.uint64).astype(np.uint32)
UB = RNG.integers(0, 2**32, size=128, dtype=np.uint64).astype(np.uint32)
MASK = np.uint32(0xFFFFFFFF)


def vrun(text, **vregs):
    regs = {int(k[1:]): v for k, v in vregs.items()}
    return simulate(assemble(text + "\nhalt"), vregs=regs)


def as_mask(cond):
    return np.where(cond, MASK, np.uint32(0))


@pytest.mark.parametrize("op, fn", [
    ("vadd.f32", np.add), ("vsub.f32", np.subtract), ("vmul.f32", np.multiply),
    ("vmax.f32", np.maximum), ("vmin.f32", np.minimum)])
def test_float_binary(op, fn):
    r = vrun(f"{op} v3, v1, v2", v1=A, v2=B)
    np.testing.assert_array_equal(r.vreg(3), fn(A, B))


@pytest.mark.parametrize("op, fn", [
    ("vcmpgt.f32", np.greater), ("vcmpge.f32", np.greater_equal), ("vcmplt.f32", np.less),
    ("vcmpeq.f32", np.equal)])
def test_compares_give_all_ones_masks(op, fn):
    r = vrun(f"{op} v3, v1, v2", v1=A, v2=B)
    np.testing.assert_array_equal(r.vreg(3, np.uint32), as_mask(fn(A, B)))


@pytest.mark.parametrize("op, fn", [
    ("vand", np.bitwise_and), ("vor", np.bitwise_or), ("vxor", np.bitwise_xor),
    ("vadd.u32", np.add), ("vsub.u32", np.subtract), ("vmullo.u32", np.multiply)])
def test_integer_binary(op, fn):
    r = vrun(f"{op} v3, v1, v2", v1=UA, v2=UB)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(r.vreg(3, np.uint32), fn(UA, UB))


def test_mulhi():
    r = vrun("vmulhi.u32 v3, v1, v2", v1=UA, v2=UB)
    want = ((UA.astype(np.uint64) * UB.astype(np.uint64)) >> np.uint64(32)).astype(np.uint32)
    np.testing.assert_array_equal(r.vreg(3, np.uint32), want)


def test_shifts_by_register_and_immediate():
    amounts = (np.arange(128) % 40).astype(np.uint32)
    r = vrun("vshl v3, v1, v2 ; vshr v4, v1, v2", v1=UA, v2=amounts)
    big = amounts >= 32
    want_l = np.where(big, 0, UA << (amounts & 31)).astype(np.uint32)
    want_r = np.where(big, 0, UA >> (amounts & 31)).astype(np.uint32)
    np.testing.assert_array_equal(r.vreg(3, np.uint32), want_l)
    np.testing.assert_array_equal(r.vreg(4, np.uint32), want_r)
    r = vrun("vshl v3, v1, 8 ; vshr v4, v1, 32", v1=UA)
    np.testing.assert_array_equal(r.vreg(3, np.uint32), UA << np.uint32(8))
    assert not r.vreg(4, np.uint32).any()


def test_select_mov_broadcast_immediates_iota():
    m = as_mask(A > 0)
    r = vrun("vsel v4, v3, v1, v2 ; vmov v5, v1\nvli v6, -2.5 ; vli v7, 0x7f800000\n"
             "vli v8, -1 ; viota v9\nsli s1, 1.5\nvbcast v10, s1", v1=A, v2=B, v3=m)
    np.testing.assert_array_equal(r.vreg(4), np.where(A > 0, A, B))
    np.testing.assert_array_equal(r.vreg(5), A)
    assert (r.vreg(6) == -2.5).all() and np.isposinf(r.vreg(7)).all()
    assert (r.vreg(8, np.uint32) == MASK).all()
    np.testing.assert_array_equal(r.vreg(9, np.uint32), np.arange(128))
    assert (r.vreg(10) == 1.5).all()


def test_unpack_and_pack_follow_the_packed_layout():
    row = RNG.normal(size=256).astype(np.float32)
    packed = pack_rows(row)
    r = vrun("vunpack.lo v2, v1 ; vunpack.hi v3, v1\nvpack v4, v2, v3", v1=packed)
    want = unpack_rows(packed)
    np.testing.assert_array_equal(r.vreg(2), want[:128])
    np.testing.assert_array_equal(r.vreg(3), want[128:])
    np.testing.assert_array_equal(r.vreg(4, np.uint32), packed)
    r = vrun("vpack v3, v1, v2", v1=A, v2=B)
    got = r.vreg(3, np.uint32)
    np.testing.assert_array_equal(got & 0xFFFF, f32_to_bf16_bits(A))
    np.testing.assert_array_equal(got >> 16, f32_to_bf16_bits(B))


def test_bf16_bits_round_to_nearest_even_for_every_high_half():
    """Every float32 high half with the low halves below, at, above the tie and the extremes;
    every NaN (negative ones too) becomes the quiet NaN."""
    high = np.arange(2**16, dtype=np.uint32)
    for low in (0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF):
        x = ((high << 16) | low).view(np.float32)
        up = (low > 0x8000) | ((low == 0x8000) & (high & 1 == 1))
        want = np.where(np.isnan(x), 0x7FC0, (high + up) & 0xFFFF).astype(np.uint16)
        np.testing.assert_array_equal(f32_to_bf16_bits(x), want)


def test_conversions():
    f = np.array([0.0, 1.9, -3.0, np.nan, np.inf, -np.inf, 4.5e9, 123456.7] * 16, np.float32)
    r = vrun("vcvt.f2u v2, v1 ; vcvt.u2f v3, v4", v1=f, v4=UA)
    want = np.array([0, 1, 0, 0, 0xFFFFFFFF, 0, 0xFFFFFFFF, 123456] * 16, np.uint32)
    np.testing.assert_array_equal(r.vreg(2, np.uint32), want)
    np.testing.assert_array_equal(r.vreg(3), UA.astype(np.float32))


def test_vrand_uses_the_hardware_rng():
    counters = np.arange(1000, 1128, dtype=np.uint32)
    r = simulate(assemble("vrand v2, v1, s3\nhalt"), vregs={1: counters}, sregs={3: 0xBEEF})
    np.testing.assert_array_equal(r.vreg(2, np.uint32), hw_random_words(0xBEEF, counters))


@pytest.mark.parametrize("op, fn", [
    ("vexp2", fast_exp2), ("vexp2.p", precise_exp2), ("vlog2", DEFAULT_FASTLOG2),
    ("vlog2.p", precise_log2), ("vrcp", fast_rcp)])
def test_sfu_ops_use_the_configured_models(op, fn):
    x = np.abs(A) + np.float32(0.01)
    r = vrun(f"{op} v1\n{op} v2\nvpop v3\nvpop v4", v1=x, v2=x * 2)
    np.testing.assert_array_equal(r.vreg(3), fn(x))
    np.testing.assert_array_equal(r.vreg(4), fn(x * 2))


def test_vlog2_default_is_the_fastlog_emulator():
    assert MachineConfig().log2_fn is DEFAULT_FASTLOG2


def test_sfu_config_override_and_fifo_order():
    cfg = MachineConfig().with_(log2_fn=lambda x: x + np.float32(100))
    x = np.arange(128, dtype=np.float32)
    r = simulate(assemble("vlog2 v1\nvexp2.p v1\nvlog2 v1\nvpop v2\nvpop v3\nvpop v4\nhalt"),
                 cfg, vregs={1: x})
    np.testing.assert_array_equal(r.vreg(2), x + 100)
    np.testing.assert_array_equal(r.vreg(3), precise_exp2(x))
    np.testing.assert_array_equal(r.vreg(4), x + 100)


def test_sfu_batches_across_the_operand_ring_give_each_pop_its_own_result():
    # groups of 7 pushes then 7 pops: over 40 groups the batches cross the ring's end
    # (8 FIFO depths of rows) at every offset; each pop still gets exp2 of its own push
    rows = np.stack([A * np.float32(1 + k / 8) for k in range(7)])
    body = "".join(f"vexp2 v{1 + k}\n" for k in range(7)) + "".join(
        f"vpop v{10 + k}\nvadd.f32 v{20 + k}, v{20 + k}, v{10 + k}\n" for k in range(7))
    r = simulate(assemble(f"loop 40\n{body}endloop\nhalt"),
                 vregs={1 + k: rows[k] for k in range(7)})
    for k in range(7):
        want = np.zeros(128, np.float32)
        for _ in range(40):
            want += fast_exp2(rows[k])
        np.testing.assert_array_equal(r.vreg(20 + k), want)


def test_reductions():
    x = A.copy()
    x[[5, 77]] = 50.0                             # a tie: the lowest index wins
    r = vrun("vred.max s1, v1\nvred.add s4, v1\nvred.min s2, v1\nvred.argmax s3, v1", v1=x)
    assert r.sreg_f32(1) == x.max() and r.sreg_f32(2) == x.min() and r.sreg(3) == 5
    tree = x.copy()
    n = 128
    while n > 1:
        tree[:n // 2] = tree[:n // 2] + tree[n // 2:n]
        n //= 2
    assert r.sreg_f32(4) == tree[0]
    assert abs(r.sreg_f32(4) - float(x.astype(np.float64).sum())) < 1e-3
    y = x.copy()
    y[[9, 20]] = np.nan                            # NaN counts as the largest: first NaN wins
    r = vrun("vred.argmax s1, v1\nvred.max s2, v1", v1=y)
    assert r.sreg(1) == 9 and np.isnan(r.sreg_f32(2))


def test_scalar_integer_ops():
    text = ("sli s1, 100\nsli s2, -3\nsadd s3, s1, s2\nssub s4, s2, s1\nsmul s5, s1, s2\n"
            "sand s6, s1, 0x0f\nsor s7, s1, 1\nsxor s8, s1, s1\nsshl s9, s1, 4\n"
            "sshr s10, s2, 28\nslt s11, s2, s1\nsltu s12, s2, s1\nseq s13, s1, 100\n"
            "smov s14, s2\nsshl s15, s1, 40\nhalt")
    r = simulate(assemble(text))
    assert r.sreg(3) == 97 and r.sreg_i32(4) == -103 and r.sreg_i32(5) == -300
    assert (r.sreg(6), r.sreg(7), r.sreg(8), r.sreg(9)) == (4, 101, 0, 1600)
    assert r.sreg(10) == 0xF and (r.sreg(11), r.sreg(12), r.sreg(13)) == (1, 0, 1)
    assert r.sreg_i32(14) == -3 and r.sreg(15) == 0


def test_scalar_float_ops():
    r = simulate(assemble("sli s1, 1.5\nsli s2, 0.1\nsfadd s3, s1, s2\nsfsub s4, s1, s2\n"
                          "sfmul s5, s1, s2\nsflt s6, s2, s1\nsflt s7, s1, s2\nhalt"))
    a, b = np.float32(1.5), np.float32(0.1)
    assert r.sreg_f32(3) == a + b and r.sreg_f32(4) == a - b and r.sreg_f32(5) == a * b
    assert (r.sreg(6), r.sreg(7)) == (1, 0)


def test_loads_and_stores_contiguous_strided_scalar():
    mem = np.arange(4096, dtype=np.uint32)
    text = ("sli s1, 1024\nvld v1, [s1 + 512]\nvld.s v2, [s1 - 1024], 3\n"
            "vst v1, [s1 + 8192]\nvst.s v2, [s1 + 12288], 2\nsld s2, [s1 + 4]\n"
            "sst s2, [s1 + 16380]\nhalt")
    r = simulate(assemble(text), vmem=mem)
    np.testing.assert_array_equal(r.vreg(1, np.uint32), mem[384:512])
    np.testing.assert_array_equal(r.vreg(2, np.uint32), mem[0:384:3])
    np.testing.assert_array_equal(r.read_vmem(1024 + 8192, 128), mem[384:512])
    np.testing.assert_array_equal(r.read_vmem(1024 + 12288, 256)[::2], mem[0:384:3])
    assert r.sreg(2) == 257 and r.read_vmem(1024 + 16380, 1)[0] == 257


def test_vmem_and_hbm_inputs_are_copied():
    mem = np.ones(128, np.float32)
    simulate(assemble("vst v1, [s0 + 0]\nhalt"), vmem=mem)
    assert (mem == 1).all()
