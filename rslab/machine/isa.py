"""The instruction set: one table row per mnemonic (slot class, latency class, operands, meaning).

Operand kinds in ``sig``:
``vd``/``va`` vector destination/source, ``sd``/``sa`` scalar destination/source,
``num`` an immediate (integer, or a float given as its float32 bit pattern),
``imm`` an integer immediate, ``sai`` a scalar register or an integer immediate,
``vai`` a vector register or an integer immediate, ``mem`` ``[sA + imm]`` (imm in bytes),
``label`` a branch target. A trailing ``?`` marks an optional operand.

Vector registers hold 128 lanes × 32-bit words; float ops read them as float32,
integer ops as uint32. Masks are all-ones (true) or zero (false) words.

The chip's ops (``CHIP_OPS``: the exchange, the barrier; :mod:`rslab.machine.chip`) run on a
core of a chip only; ``scid`` reads 0 on a lone core.
"""

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class OpSpec:
    """One mnemonic: the slot it occupies, the latency class of its result, its operands."""

    name: str
    slot: str | None
    lat: str | None
    sig: tuple[str, ...]
    doc: str


def _ops(slot, lat, sig, names_docs):
    return [OpSpec(n, slot, lat, tuple(sig.split()), d) for n, d in names_docs]


_VALU3 = [
    ("vadd.f32", "vD = vA + vB (float32)"),
    ("vsub.f32", "vD = vA - vB (float32)"),
    ("vmul.f32", "vD = vA * vB (float32; no FMA on this core)"),
    ("vmax.f32", "vD = max(vA, vB) (float32; NaN propagates)"),
    ("vmin.f32", "vD = min(vA, vB) (float32; NaN propagates)"),
    ("vcmpgt.f32", "vD = mask(vA > vB)"),
    ("vcmpge.f32", "vD = mask(vA >= vB)"),
    ("vcmplt.f32", "vD = mask(vA < vB)"),
    ("vcmpeq.f32", "vD = mask(vA == vB)"),
    ("vpack", "vD = bf16(vA) in the low half-words, bf16(vB) in the high (round to nearest even)"),
    ("vand", "vD = vA & vB"),
    ("vor", "vD = vA | vB"),
    ("vxor", "vD = vA ^ vB"),
    ("vadd.u32", "vD = vA + vB mod 2^32"),
    ("vsub.u32", "vD = vA - vB mod 2^32"),
    ("vmulhi.u32", "vD = (vA * vB) >> 32 (unsigned)"),
    ("vmullo.u32", "vD = vA * vB mod 2^32"),
]
_VALU2 = [
    ("vmov", "vD = vA"),
    ("vunpack.lo", "vD = float32 of the low BF16 half-word of each lane (element i)"),
    ("vunpack.hi", "vD = float32 of the high BF16 half-word of each lane (element i+128)"),
    ("vcvt.u2f", "vD = float32(vA as uint32), round to nearest"),
    ("vcvt.f2u", "vD = uint32(trunc(vA)); negative and NaN → 0, ≥ 2^32 → 0xffffffff"),
]
_SFU = [
    ("vexp2", "push exp2(vA) (fast SFU model, MachineConfig.exp2_fn)"),
    ("vexp2.p", "push exp2(vA) correctly rounded"),
    ("vlog2", "push log2(vA) (fast SFU model, MachineConfig.log2_fn = FastLog2)"),
    ("vlog2.p", "push log2(vA) correctly rounded"),
    ("vrcp", "push 1/vA (SFU model, MachineConfig.rcp_fn)"),
]
_XLU = [
    ("vred.max", "sD = max over lanes of vA (float32; NaN propagates)"),
    ("vred.min", "sD = min over lanes of vA (float32; NaN propagates)"),
    ("vred.add", "sD = sum over lanes of vA (float32, pairwise tree: lane l + lane l+64, ...)"),
    ("vred.argmax", "sD = lowest lane index holding the max of vA (NaN counts as the largest)"),
]
_SALU = [
    ("sadd", "sD = sA + B mod 2^32"),
    ("ssub", "sD = sA - B mod 2^32"),
    ("smul", "sD = sA * B mod 2^32"),
    ("sand", "sD = sA & B"),
    ("sor", "sD = sA | B"),
    ("sxor", "sD = sA ^ B"),
    ("sshl", "sD = sA << B (B ≥ 32 gives 0)"),
    ("sshr", "sD = sA >> B, logical (B ≥ 32 gives 0)"),
    ("slt", "sD = 1 if sA < B as signed 32-bit integers else 0"),
    ("sltu", "sD = 1 if sA < B as unsigned integers else 0"),
    ("seq", "sD = 1 if sA == B else 0"),
]
_SFLOAT = [
    ("sfadd", "sD = sA + sB (float32)"),
    ("sfsub", "sD = sA - sB (float32)"),
    ("sfmul", "sD = sA * sB (float32)"),
    ("sflt", "sD = 1 if sA < sB (float32) else 0"),
]

SPECS: dict[str, OpSpec] = {
    s.name: s
    for s in (
        _ops("valu", "valu", "vd va va", _VALU3)
        + _ops("valu", "valu", "vd va", _VALU2)
        + _ops("valu", "valu", "vd va va va", [("vsel", "vD = vA where mask vM ≠ 0 else vB "
                                                          "(operands vD, vM, vA, vB)")])
        + _ops("valu", "valu", "vd va vai", [("vshl", "vD = vA << B per lane (≥ 32 gives 0)"),
                                             ("vshr", "vD = vA >> B per lane, logical")])
        + _ops("valu", "valu", "vd sa", [("vbcast", "vD = sA in every lane")])
        + _ops("valu", "valu", "vd num", [("vli", "vD = immediate in every lane")])
        + _ops("valu", "valu", "vd", [("viota", "vD = lane index 0..127")])
        + _ops("valu", "valu", "vd va sa",
               [("vrand", "vD[l] = hw_random_words(key=sK, counter=vC[l])")])
        + _ops("valu", "pop", "vd", [("vpop", "vD = SFU FIFO head (waits until it is ready)")])
        + _ops("sfu", "sfu", "va", _SFU)
        + _ops("xlu", "xlu", "sd va", _XLU)
        + _ops("ld", "ld", "vd mem", [("vld", "vD = 128 consecutive words at [sA + imm]")])
        + _ops("ld", "ld", "vd mem imm",
               [("vld.s", "vD[l] = word at [sA + imm] + 4·stride·l")])
        + _ops("st", "st", "va mem", [("vst", "128 consecutive words at [sA + imm] = vS")])
        + _ops("st", "st", "va mem imm",
               [("vst.s", "word at [sA + imm] + 4·stride·l = vS[l]")])
        + _ops("scalar", "scalar", "sd num", [("sli", "sD = immediate")])
        + _ops("scalar", "scalar", "sd sa", [("smov", "sD = sA")])
        + _ops("scalar", "scalar", "sd sa sai", _SALU)
        + _ops("scalar", "scalar", "sd sa sa", _SFLOAT)
        + _ops("scalar", "ld", "sd mem", [("sld", "sD = word at [sA + imm]")])
        + _ops("scalar", "st", "sa mem", [("sst", "word at [sA + imm] = sS")])
        + _ops("scalar", "scalar", "sa label", [("bz", "branch to label if sA == 0"),
                                                ("bnz", "branch to label if sA != 0")])
        + _ops("scalar", "scalar", "label", [("jmp", "branch to label")])
        + _ops("scalar", None, "sa sa sa imm?",
               [("dma", "copy sLen bytes HBM[sSrc] → VMEM[sDst] asynchronously (optional tag)")])
        + _ops("scalar", None, "imm?", [("dmawait", "wait until the DMAs (of the tag) are done")])
        + _ops(None, None, "", [("nop", "an empty bundle")])
        + _ops("scalar", "scalar", "sd", [("scid", "sD = this core's index on the chip "
                                                  "(0 on a lone core)")])
        + _ops("scalar", "st", "sa mem", [("sxst", "exchange word at [sA + imm] = sS (posted: "
                                                   "the other cores read it after a barrier)")])
        + _ops("st", "st", "va mem", [("xst", "128 exchange words at [sA + imm] = vS (posted)")])
        + _ops("ld", "ld", "vd mem", [("xld", "vD = 128 exchange words at [sA + imm]")])
        + _ops("scalar", None, "sa imm", [("bar", "wait until imm cores have arrived at the "
                                                  "barrier named by the value of sA")])
    )
}

DIRECTIVES = {
    "loop": "loop N | loop sN: repeat the body up to the matching endloop N times "
            "(zero overhead; N = 0 skips it)",
    "endloop": "end of a hardware loop body",
    "halt": "stop once everything in flight has completed",
}

SFU_OPS = frozenset(s.name for s in SPECS.values() if s.slot == "sfu")
"""The ops that push an operand to the SFU; their results return through the FIFO."""
POP_OPS = frozenset(s.name for s in SPECS.values() if s.lat == "pop")
"""The ops that pop the SFU FIFO's head."""
BRANCH_OPS = frozenset(("bz", "bnz", "jmp"))
CHIP_OPS = frozenset(("sxst", "xst", "xld", "bar"))
"""The ops that need a chip: its exchange memory and its barriers."""


def did_you_mean(word: str) -> str:
    """`` (did you mean X?)`` for the mnemonics that extend ``word`` by a type suffix
    (``vadd``: ``vadd.f32``, ``vadd.u32``), else the closest mnemonic or directive, else
    ``""``."""
    word = word.lower()
    close = [n for n in SPECS if n.startswith(word + ".")] or difflib.get_close_matches(
        word, [*SPECS, *DIRECTIVES], n=1, cutoff=0.6)
    return f" (did you mean {' or '.join(close)}?)" if close else ""
