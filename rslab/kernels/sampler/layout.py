"""Where the full sampler's data lives: the HBM image and the VMEM map (byte addresses).

HBM (written by the host, read by the kernel's DMAs):

* ``logits``: target logits ``[R, S+1]`` rows, each packed BF16
  (:func:`rslab.machine.bf16.pack_rows`; ``V/256`` packed vectors of 512 bytes);
* ``q``: draft probabilities float32 ``[R, S, V]``;
* ``ids``: draft token ids int32 ``[R, S]``;
* ``keys``: the Fast path's hardware-RNG keys uint32 ``[R, S+1, 3]`` (one per
  purpose, :func:`rslab.randomness.fast_key`); ``seed``: the Exact path's Philox
  key (two uint32 words).

VMEM: three logits row buffers (two alternate inside a request, the third
receives the next request's first row while a residual or bonus row still
reads its own), one float32 q row buffer, the float32 landing buffer of the
row being checked, the tables, the Philox key schedule, outputs, a scratch
vector, the inverse CDF's block sums and scan rows and the fixed-point tail's rows.
Each row buffer is followed by one packed vector of padding, the q and landing buffers by two
float32 vectors (:meth:`SamplerLayout.pads`): a loop that takes two packed
vectors per iteration may read one vector past an odd row, and the padding
(−inf logits, q = 0) scores −∞ there (an inverse-CDF weight of 0).

Outputs (VMEM, read back by the host): ``tokens`` int32 ``[R, S+1]``,
``num_accepted`` int32 ``[R]`` and float32 diagnostics: per checked position the
row max ``m``, the sum ``s``, ``p(x)`` and the uniform ``u``; per request the
winning score of its residual or bonus row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rslab.kernels.ops.invcdf import PACKED_PER_ITER, Layout, scratch_bytes, scratch_layout
from rslab.machine.bf16 import BLOCK, LANES, pack_rows
from rslab.machine.simulator import DEFAULT_MAX_STEPS, MAX_STEPS_LIMIT
from rslab.note import VOCAB as NOTE_VOCAB
from rslab.randomness import PURPOSES, fast_key, philox_key

PACKED_BYTES = 4 * LANES
FIXED_BYTES = 21 * PACKED_BYTES
"""VMEM of the fixed-point tail's rows (a check in its module holds it to its need)."""
Q_BYTES_PER_PACKED = 2 * PACKED_BYTES
PATHS = ("fast", "exact")


def _align(x: int, a: int = PACKED_BYTES) -> int:
    return -(-x // a) * a


STEP_ROWS = 40 * NOTE_VOCAB
"""The work (rows × tokens) the simulator's default step budget covers: the note's
all-accept test point, 40 rows of the note's vocabulary, which runs within it."""


def step_budget(rows: int, vocab: int) -> int:
    """The steps (bundles and loop directives) a sampler program over ``rows`` rows of
    ``vocab`` tokens may take before the simulator calls it endless: the simulator's default
    per :data:`STEP_ROWS` of work, never less than the default, at most its limit."""
    scale = max(1, math.ceil(rows * vocab / STEP_ROWS))
    return min(MAX_STEPS_LIMIT, DEFAULT_MAX_STEPS * scale)


@dataclass(frozen=True)
class SamplerLayout:
    """Addresses for one test point: ``R`` requests, ``S`` drafts, vocabulary ``V``."""

    R: int
    S: int
    V: int

    def __post_init__(self):
        for name, value, low in (("R", self.R, 1), ("S", self.S, 1), ("V", self.V, BLOCK)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ValueError(f"{name} must be an integer ≥ {low}, got {value!r}")
        if self.V % BLOCK:
            raise ValueError(f"V must be a multiple of {BLOCK} (whole packed BF16 vectors), "
                             f"got {self.V}")
        if self.vmem_end > 4 * 1024 * 1024:
            raise ValueError(f"V = {self.V}: the buffers need {self.vmem_end} bytes of VMEM")

    # ----------------------------------------------------------- sizes
    @property
    def n_packed(self) -> int:
        """Packed BF16 vectors per logits row."""
        return self.V // BLOCK

    @property
    def row_bytes(self) -> int:
        return self.n_packed * PACKED_BYTES

    @property
    def q_row_bytes(self) -> int:
        return 4 * self.V

    # ----------------------------------------------------------- HBM
    @property
    def hbm_logits(self) -> int:
        return 0

    @property
    def hbm_q(self) -> int:
        return self.R * (self.S + 1) * self.row_bytes

    @property
    def hbm_ids(self) -> int:
        return self.hbm_q + self.R * self.S * self.q_row_bytes

    @property
    def table_bytes(self) -> int:
        """ids, keys and seed words, copied to VMEM in one DMA."""
        return _align(4 * (self.R * self.S + 3 * self.R * (self.S + 1) + 2), 4)

    def hbm_row(self, r: int, s: int) -> int:
        return self.hbm_logits + (r * (self.S + 1) + s) * self.row_bytes

    def hbm_q_row(self, r: int, s: int) -> int:
        return self.hbm_q + (r * self.S + s) * self.q_row_bytes

    # ----------------------------------------------------------- VMEM
    @property
    def vm_tables(self) -> int:
        return 0

    def vm_id(self, r: int, s: int) -> int:
        return self.vm_tables + 4 * (r * self.S + s)

    def vm_key(self, r: int, s: int, purpose: int) -> int:
        return self.vm_tables + 4 * (self.R * self.S + 3 * (r * (self.S + 1) + s) + purpose)

    @property
    def vm_seed(self) -> int:
        return self.vm_tables + 4 * (self.R * self.S + 3 * self.R * (self.S + 1))

    @property
    def vm_qx(self) -> int:
        return _align(self.vm_tables + self.table_bytes)

    @property
    def vm_scratch(self) -> int:
        return self.vm_qx + PACKED_BYTES

    @property
    def vm_keysched(self) -> int:
        """Philox round keys: 20 broadcast vectors (k0 of rounds 0..9, then k1)."""
        return self.vm_scratch + PACKED_BYTES

    @property
    def vm_tokens(self) -> int:
        return self.vm_keysched + 20 * PACKED_BYTES

    @property
    def vm_num_accepted(self) -> int:
        return self.vm_tokens + 4 * self.R * (self.S + 1)

    def vm_diag(self, name: str) -> int:
        """float32 diagnostics: ``m``, ``sum``, ``px``, ``u`` ([R, S]) and ``score`` ([R])."""
        order = ("m", "sum", "px", "u")
        base = self.vm_num_accepted + 4 * self.R
        if name in order:
            return base + order.index(name) * 4 * self.R * self.S
        if name == "score":
            return base + 4 * 4 * self.R * self.S
        raise ValueError(f"name must be one of {order + ('score',)}, got {name!r}")

    @property
    def vm_buffers(self) -> tuple:
        start = _align(self.vm_diag("score") + 4 * self.R)
        return tuple(start + i * (self.row_bytes + PACKED_BYTES) for i in range(3))

    @property
    def vm_q(self) -> int:
        return self.vm_buffers[2] + self.row_bytes + PACKED_BYTES

    @property
    def vm_fp32(self) -> int:
        """The row's float32 halves as the row-max pass lands them (vector k at k·512)."""
        return self.vm_q + self.q_row_bytes + 2 * PACKED_BYTES

    @property
    def n_packed_even(self) -> int:
        """Packed vectors per row rounded up to the inverse CDF's two per iteration."""
        return -(-self.n_packed // PACKED_PER_ITER) * PACKED_PER_ITER

    @property
    def vm_invcdf(self) -> int:
        """The inverse CDF's block sums, group prefix and scan rows
        (:func:`rslab.kernels.ops.invcdf.scratch_layout`)."""
        return self.vm_fp32 + 2 * self.row_bytes + 2 * PACKED_BYTES

    def invcdf_layout(self, buf: int) -> Layout:
        """The inverse CDF's view of a row whose packed logits are at ``buf``."""
        return scratch_layout(self.n_packed_even, buf, self.vm_q, self.vm_invcdf)

    @property
    def vm_fixed(self) -> int:
        """The fixed-point inverse CDF's rows (:func:`rslab.kernels.sampler.fixed_row.
        scratch_bytes`), after the inverse CDF's."""
        return self.vm_invcdf + scratch_bytes(self.n_packed_even)

    @property
    def vmem_end(self) -> int:
        return self.vm_fixed + FIXED_BYTES

    def pads(self) -> list[tuple[int, int]]:
        """(VMEM address, 32-bit word) of every padding vector after a buffer: two BF16 −inf
        after each row buffer, float32 −inf after the landing buffer, 0 after q."""
        rows = [(b + self.row_bytes, 0xFF80FF80) for b in self.vm_buffers]
        fp32 = [(self.vm_fp32 + 2 * self.row_bytes + i * PACKED_BYTES, 0xFF800000)
                for i in range(2)]
        q = [(self.vm_q + self.q_row_bytes + i * PACKED_BYTES, 0) for i in range(2)]
        return rows + fp32 + q

    def buffer(self, r: int, s: int) -> int:
        """Row buffer index of (r, s): X_r = r mod 3 for even s, (r + 2) mod 3 for odd s."""
        return r % 3 if s % 2 == 0 else (r + 2) % 3

    # ----------------------------------------------------------- the host side
    def hbm_image(self, target_logits, draft_probs, draft_token_ids, seed: int) -> dict:
        """``{byte address: array}`` for ``simulate(hbm=...)``."""
        l = np.asarray(target_logits, dtype=np.float32)
        q = np.asarray(draft_probs, dtype=np.float32)
        ids = np.asarray(draft_token_ids)
        if l.shape != (self.R, self.S + 1, self.V):
            raise ValueError(f"target_logits must have shape {(self.R, self.S + 1, self.V)}, "
                             f"got {l.shape}")
        if q.shape != (self.R, self.S, self.V):
            raise ValueError(f"draft_probs must have shape {(self.R, self.S, self.V)}, "
                             f"got {q.shape}")
        if ids.shape != (self.R, self.S):
            raise ValueError(f"draft_token_ids must have shape {(self.R, self.S)}, "
                             f"got {ids.shape}")
        rr, ss = np.meshgrid(np.arange(self.R), np.arange(self.S + 1), indexing="ij")
        keys = np.stack([fast_key(seed, rr.reshape(-1), ss.reshape(-1), p)
                         for p in sorted(PURPOSES.values())], axis=-1)
        return self.image(l, q, ids, keys, seed)

    def image(self, target_logits, draft_probs, draft_token_ids, keys, seed: int) -> dict:
        """``{byte address: array}`` of already checked inputs, with the Fast path's ``keys``
        ([R·(S+1), 3]: row (r, s) at r·(S+1) + s, one per purpose) given."""
        tables = np.concatenate([np.asarray(draft_token_ids).astype(np.uint32).reshape(-1),
                                 np.asarray(keys).astype(np.uint32).reshape(-1),
                                 philox_key(seed)])
        return {self.hbm_logits: pack_rows(np.asarray(target_logits, np.float32)),
                self.hbm_q: np.asarray(draft_probs, np.float32),
                self.hbm_ids: tables.astype(np.uint32)}

    def read_outputs(self, run) -> dict:
        """tokens, num_accepted and the float32 diagnostics from a finished run."""
        R, S = self.R, self.S
        out = {
            "tokens": run.read_vmem(self.vm_tokens, R * (S + 1), np.int32).reshape(R, S + 1),
            "num_accepted": run.read_vmem(self.vm_num_accepted, R, np.int32),
            "score": run.read_vmem(self.vm_diag("score"), R, np.float32),
        }
        for name in ("m", "sum", "px", "u"):
            out[name] = run.read_vmem(self.vm_diag(name), R * S, np.float32).reshape(R, S)
        return out
