"""The inverse CDF's pieces on the core: the block sums of the pass, and the tail's scans.

- :func:`block_sum_ops`: stream k's weights summed by the cross-lane unit
  (``vred.add``) and the block sum stored with ``sst``. The sum reaches its store one
  iteration later (``Use(b, 1)``), which pins it to a scalar register (a carried value):
  the last ones are stored after the loop.
- :func:`scan_lines` / :func:`suffix_scan_lines`: the inclusive Hillis–Steele scan of
  a vector (prefix or suffix), seven store / shifted-load / add steps over a row of
  zeros (:data:`rslab.numerics.invcdf.SCAN_STEPS`), as straight-line assembly.
- :func:`first_past_lines`: the first lane with a positive weight whose scan passes a
  threshold, else the last positive lane (a true mask lane reads as NaN, the largest,
  for ``vred.argmax``).

Registers (``regs``): ``sums`` the base of the block-sum row.
"""

from rslab.machine.bf16 import LANES
from rslab.numerics.invcdf import SCAN_STEPS
from rslab.schedule import Addr, Op, Use


def block_sum_ops(k: int, w: str, regs, streams: int) -> list:
    """Stream k's ``b{k} = Σ w`` and its store, the iteration's ``streams`` sums in order."""
    return [Op("vred.add", f"b{k}", (w,)),
            Op("sst", None, (Use(f"b{k}", 1),), name=f"st{k}",
               addr=Addr(regs["sums"], 4 * (k - streams), 4 * streams))]


def scan_lines(src: str, dst: str, tmp: str, row: int) -> list:
    """Inclusive prefix scan of ``src`` into ``dst`` (``row``: 128 zeros, then scratch)."""
    lines = [f"vmov {dst}, {src}"]
    for i in range(SCAN_STEPS):
        lines += [f"vst {dst}, [s0 + {row + 4 * LANES}]",
                  f"vld {tmp}, [s0 + {row + 4 * LANES - 4 * (1 << i)}]",
                  f"vadd.f32 {dst}, {dst}, {tmp}"]
    return lines


def suffix_scan_lines(src: str, dst: str, tmp: str, row: int) -> list:
    """Inclusive suffix scan (``Q_l += Q_{l+2^i}``; ``row``: scratch, then 128 zeros)."""
    lines = [f"vmov {dst}, {src}"]
    for i in range(SCAN_STEPS):
        lines += [f"vst {dst}, [s0 + {row}]", f"vld {tmp}, [s0 + {row + 4 * (1 << i)}]",
                  f"vadd.f32 {dst}, {dst}, {tmp}"]
    return lines


def first_past_lines(scan: str, weights: str, threshold: str, out: str, v: dict) -> list:
    """``out`` = the first positive lane with scan > threshold, else the last positive lane
    (``v``: vector registers by role, ``zero``, ``iota_f``, ``minus1`` set)."""
    return [f"vcmpgt.f32 {v['valid']}, {weights}, {v['zero']}",
            f"vsel {v['lane']}, {v['valid']}, {v['iota_f']}, {v['minus1']}",
            "vred.max s28, " + v["lane"],
            f"vbcast {v['lane']}, s28",
            f"vcmpeq.f32 {v['is_last']}, {v['iota_f']}, {v['lane']}",
            f"vcmpgt.f32 {v['past']}, {scan}, {threshold}",
            f"vand {v['past']}, {v['past']}, {v['valid']}",
            f"vor {v['past']}, {v['past']}, {v['is_last']}",
            f"vred.argmax {out}, {v['past']}"]
