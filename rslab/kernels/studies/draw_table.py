"""Cycles of every draw on the core: its loops' figures and whole rows against the reference.

* :func:`loop_figures`: II, ResMII, RecMII and the binding resource of a row's
  loop, the cycles per packed vector (II over the packed vectors an iteration
  takes) and the II measured in the simulator (two runs differing by whole
  kernel passes);
* :func:`row_runs`: whole bonus and residual rows simulated at a vocabulary
  size, their cycles and whether the token equals the reference's on the same
  weights and key; a bonus row of the race or the inverse CDF also needs the
  row max, so its cycles add the row-max pass (:mod:`rslab.kernels.studies.rowmax`,
  :func:`rowmax_per_packed`).
"""

from __future__ import annotations

import numpy as np

from rslab import reference as ref
from rslab.kernels.studies.draw_loops import DRAWS, KINDS, draw_program, run_draw
from rslab.kernels.studies.invcdf_row import PACKED_PER_ITER, invcdf_program, run_invcdf
from rslab.kernels.studies.rowmax import emit_rowmax, run_rowmax
from rslab.kernels.studies.steady import steady_state
from rslab.machine.bf16 import round_to_bf16
from rslab.numerics.invcdf import INVCDF_NOISES
from rslab.numerics.methods import draw, variant_name
from rslab.randomness import BONUS, RESIDUAL, fast_key

ROW_DRAWS = DRAWS + tuple(("invcdf", n) for n in INVCDF_NOISES)


def _invcdf_program(kind, method, noise, n_packed, **kw):
    return invcdf_program(kind, noise, n_packed, **kw)


def _invcdf_run(kind, method, noise, logits, **kw):
    return run_invcdf(kind, noise, logits, **kw)


ARGMAX_STUDY = (draw_program, run_draw, 1)
STUDIES = {"invcdf": (_invcdf_program, _invcdf_run, PACKED_PER_ITER)}
"""The kernel layer's study of each draw by method: (program, run, packed vectors per
iteration); an argmax draw's is ``ARGMAX_STUDY``."""


def _program(kind, method, noise, n_packed, config):
    program = STUDIES.get(method, ARGMAX_STUDY)[0]
    return program(kind, method, noise, n_packed, config=config)


def loop_figures(kind: str, method: str, noise: str, config=None) -> dict:
    """Scheduled and measured figures of the loop of one row (see the module docstring)."""
    from rslab.machine import MachineConfig

    config = config or MachineConfig()
    per = STUDIES.get(method, ARGMAX_STUDY)[2]
    prog = _program(kind, method, noise, 8 * per, config)
    sch = prog.loop.schedule
    unroll = prog.loop.expansion.unroll
    steady = steady_state(lambda it: _program(kind, method, noise, it * per, config).text,
                          sch.stage_count + 2 * unroll + 2, 2 * unroll, config)
    return {"draw": variant_name(method, noise), "kind": kind, "ii": sch.ii,
            "res_mii": sch.bounds.res_mii, "rec_mii": sch.bounds.rec_mii,
            "binding": binding_units(sch, config), "packed_per_iter": per,
            "cycles_per_packed": sch.ii / per, "measured_per_packed": steady["ii"] / per,
            "stalls_per_iter": steady["stalls_per_iter"]}


def binding_units(schedule, config) -> str:
    """Every unit whose bookings reach ResMII (``valu + sfu`` on a tie)."""
    b = schedule.bounds
    slots = config.slots
    tight = [u for u, n in b.usage.items() if n and -(-n // slots[u]) == b.res_mii]
    return " + ".join(tight) or b.res_binding


def row_inputs(vocab: int, seed: int = 0) -> dict:
    """One BF16 logits row, a draft row q, and what the reference derives from them."""
    rng = np.random.default_rng([seed, 18])
    logits = round_to_bf16((rng.standard_normal(vocab) * 3).astype(np.float32))
    q = rng.dirichlet(np.ones(vocab)).astype(np.float32)
    return row_weights(logits, q)


def row_weights(logits, q) -> dict:
    """A row's BF16 logits and draft row q with what the reference derives from them: the row
    max ``m``, ``r = 1/s``, the bonus row's ``e = exp2((l − m)·LOG2E)`` and the residual
    weights ``max(e·r − q, 0)``."""
    logits = round_to_bf16(np.asarray(logits, dtype=np.float32))
    q = np.asarray(q, dtype=np.float32)
    e = ref.softmax_numerators(logits[None], "fast")
    r = np.float32(1) / e.sum(dtype=np.float32)
    p = e * r
    return {"logits": logits, "q": q, "m": float(logits.max()), "r": float(r), "bonus": e,
            "residual": ref.residual_weights(p, q[None])}


def reference_token(kind, method, noise, inputs, seed, request, position) -> int:
    """The reference's token for the row (the Fast path, the same key and weights)."""
    math = ref.path_math("fast", draw(method).pipeline(noise))
    requests = np.array([request])
    if kind == "residual":
        drawn = ref.residual_draw(method, noise, math, seed, requests, position,
                                  inputs["residual"])
    else:
        drawn = ref.bonus_draw(method, noise, math, seed, requests, position,
                               inputs["logits"][None])
    return int(drawn[0][0])


def run_row(kind: str, method: str, noise: str, inputs: dict, key: int):
    """Simulate one row's draw on the core (``inputs`` of :func:`row_inputs`)."""
    kw = {"q": inputs["q"], "m": inputs["m"], "r": inputs["r"], "key": key}
    return STUDIES.get(method, ARGMAX_STUDY)[1](kind, method, noise, inputs["logits"], **kw)


def row_runs(vocab: int, *, seed: int = 0, request: int = 1, position: int = 0,
             draws=ROW_DRAWS, progress: bool = False) -> list[dict]:
    """Whole rows of every draw simulated at ``vocab`` (see the module docstring)."""
    from tqdm.auto import tqdm

    inputs = row_inputs(vocab, seed)
    max_cycles = run_rowmax(inputs["logits"])[1].cycles
    rows = []
    jobs = [(k, m, n) for m, n in draws for k in KINDS]
    for kind, method, noise in tqdm(jobs, desc="rows on the core", disable=not progress,
                                    leave=False):
        key = int(fast_key(seed, request, position, BONUS if kind == "bonus" else RESIDUAL)[0])
        res = run_row(kind, method, noise, inputs, key)
        extra = max_cycles if kind == "bonus" and draw(method).linear else 0
        rows.append({"draw": variant_name(method, noise), "kind": kind, "cycles": res.cycles,
                     "rowmax_cycles": extra, "total_cycles": res.cycles + extra,
                     "token": res.token,
                     "matches_reference": res.token == reference_token(
                         kind, method, noise, inputs, seed, request, position)})
    return rows


def rowmax_per_packed(vocab: int) -> float:
    """Cycles per packed vector of the row-max pass a bonus race or inverse CDF needs first."""
    return float(emit_rowmax(vocab).passes[0].cycles_per_vector)
