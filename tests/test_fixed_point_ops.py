"""The fixed-point tail's pieces on the simulator against Python integers, and the packer."""

import numpy as np
import pytest

from rslab.kernels.loops.pack import pack_lines
from rslab.kernels.ops.fixed_point import DIGITS, carry_lines, greater_lines, product_lines
from rslab.machine import assemble, simulate

RNG = np.random.default_rng(11)


def digits(x: int) -> list:
    return [(x >> (16 * j)) & 0xFFFF for j in range(DIGITS)]


@pytest.mark.parametrize("trial", range(4))
def test_the_product_is_the_top_of_u_times_q(trial):
    u = int.from_bytes(RNG.bytes(12), "little") if trial else (1 << 96) - 1
    q = int.from_bytes(RNG.bytes(10), "little") >> 6 if trial else (1 << 74) - 1
    words, qd, xd = ("s1", "s2", "s3"), [f"s{4 + j}" for j in range(5)], [
        f"s{9 + j}" for j in range(5)]
    lines = [f"sli {w}, {(u >> (64 - 32 * i)) & 0xFFFFFFFF}" for i, w in enumerate(words)]
    lines += [f"sli {r}, {d}" for r, d in zip(qd, digits(q), strict=True)]
    lines += product_lines(words, qd, xd, [f"s{14 + k}" for k in range(6)], "s20", "s21")
    run = simulate(assemble("\n".join(pack_lines(lines)) + "\nhalt\n"))
    got = sum(run.sreg(int(r[1:])) << (16 * j) for j, r in enumerate(xd))
    assert got == (u * q) >> 96


def test_carries_and_the_compare_of_normalised_numbers():
    """Lane-wise: limbs below 2^24 normalised, then compared with another number."""
    limbs = RNG.integers(0, 2**23, size=(4, 128), dtype=np.uint32)
    other = RNG.integers(0, 2**16, size=(DIGITS, 128), dtype=np.uint32)
    other[:, :8] = 0  # a few equal lanes: the compare must look past the top digits
    value = sum(limbs[j].astype(object) << (16 * j) for j in range(4))
    for j in range(DIGITS):
        other[j, :8] = [(int(x) >> (16 * j)) & 0xFFFF for x in value[:8]]
    other[0, :4] += 1  # lanes 0-3: other is one more, lanes 4-7 equal
    vm = {0: limbs.reshape(-1), 4 * 512: other.reshape(-1)}
    lines = [f"vld v{j}, [s0 + {512 * j}]" for j in range(4)]
    lines += [f"vld v{10 + j}, [s0 + {2048 + 512 * j}]" for j in range(DIGITS)]
    lines += ["vli v30, 0xffff"] + carry_lines([f"v{j}" for j in range(4)],
                                               [f"v{20 + j}" for j in range(DIGITS)], "v30", "v31")
    lines += [f"vcvt.u2f v{r}, v{r}" for r in (*range(20, 25), *range(10, 15))]
    lines += greater_lines([f"v{20 + j}" for j in range(DIGITS)],
                           [f"v{10 + j}" for j in range(DIGITS)], "v40", "v41", "v42")
    run = simulate(assemble("\n".join(pack_lines(lines)) + "\nhalt\n"), vmem=vm)
    norm = [run.vreg(20 + j).astype(np.uint32) for j in range(DIGITS)]  # as float32 digits
    assert all(sum(int(norm[j][l]) << (16 * j) for j in range(DIGITS)) == value[l]
               for l in range(128))
    assert (norm[0] < 2**16).all() and (norm[3] < 2**16).all()
    mask = run.vreg(40, np.uint32) != 0
    other_value = sum(other[j].astype(object) << (16 * j) for j in range(DIGITS))
    assert (mask == (value > other_value)).all() and not mask[:8].any()


def test_the_packer_keeps_the_meaning_and_the_order():
    lines = ["vadd.f32 v1, v2, v3", "vadd.f32 v4, v2, v3", "vadd.f32 v5, v1, v3",
             "vst v1, [s0 + 0]", "vld v6, [s0 + 0]", "lab: sadd s1, s1, 1", "smov s2, s1"]
    assert pack_lines(lines) == ["vadd.f32 v1, v2, v3 ; vadd.f32 v4, v2, v3",
                                 "vadd.f32 v5, v1, v3 ; vst v1, [s0 + 0]", "vld v6, [s0 + 0]",
                                 "lab: sadd s1, s1, 1", "smov s2, s1"]
