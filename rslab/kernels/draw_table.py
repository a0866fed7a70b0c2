"""Cycles of every draw on the core, and the chapter's table of the three ways to draw a token.

* :func:`loop_figures`: II, ResMII, RecMII and the binding resource of a row's
  loop, the cycles per packed vector (II over the packed vectors an iteration
  takes) and the II measured in the simulator (two runs differing by whole
  kernel passes);
* :func:`row_runs`: whole bonus and residual rows simulated at a vocabulary
  size, their cycles and whether the token equals the reference's on the same
  weights and key; a bonus row of the race or the inverse CDF also needs the
  row max, so its cycles add the row-max pass (``rslab.kernels.rowmax``);
* :func:`draw_table`: one row per draw with those cycles beside the noise and
  token figures of :mod:`rslab.numerics.draw_comparison`, and the design note's
  Div8 and Div14 rows (the note's measured χ², nothing else of ours).
"""

from __future__ import annotations

import numpy as np

from rslab import reference as ref
from rslab.kernels.draw_loops import DRAWS, KINDS, draw_program, run_draw
from rslab.kernels.invcdf_row import PACKED_PER_ITER, invcdf_program, run_invcdf
from rslab.kernels.layout import round_to_bf16
from rslab.kernels.pipeline_bench import steady_state
from rslab.kernels.rowmax import emit_rowmax, run_rowmax
from rslab.numerics.invcdf import INVCDF_NOISES
from rslab.numerics.methods import variant_name
from rslab.numerics.search import NOTE_CHI2_DIV8, NOTE_CHI2_DIV14
from rslab.randomness import BONUS, RESIDUAL, fast_key
from rslab.row_draws import draw_tokens

ROW_DRAWS = DRAWS + tuple(("invcdf", n) for n in INVCDF_NOISES)
NEEDS_MAX = ("race", "invcdf")
REPRODUCIBILITY = {
    "gumbel": "bit-exact under any split of the row (per-token words, order-free max)",
    "race": "bit-exact under any split of the row (per-token words, order-free max)",
    "invcdf": "bit-exact only with the same summation order (blocks, groups, prefix)",
}
NOTE_ROWS = ({"draw": "the note's Div8", "note_chi2": NOTE_CHI2_DIV8},
             {"draw": "the note's Div14", "note_chi2": NOTE_CHI2_DIV14})


def _program(kind, method, noise, n_packed, config):
    if method == "invcdf":
        return invcdf_program(kind, noise, n_packed, config=config)
    return draw_program(kind, method, noise, n_packed, config=config)


def loop_figures(kind: str, method: str, noise: str, config=None) -> dict:
    """Scheduled and measured figures of the loop of one row (see the module docstring)."""
    from rslab.machine import MachineConfig

    config = config or MachineConfig()
    per = PACKED_PER_ITER if method == "invcdf" else 1
    prog = _program(kind, method, noise, 8 * per, config)
    sch = prog.schedule
    unroll = prog.expansion.unroll
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
    e = ref.softmax_numerators(logits[None], "fast")
    r = np.float32(1) / e.sum(dtype=np.float32)
    p = e * r
    return {"logits": logits, "q": q, "m": float(logits.max()), "r": float(r), "bonus": e,
            "residual": ref.residual_weights(p, q[None])}


def reference_token(kind, method, noise, inputs, seed, request, position) -> int:
    """The reference's token for the row (the Fast path, the same key and weights)."""
    purpose = BONUS if kind == "bonus" else RESIDUAL
    requests = np.array([request])
    if method != "gumbel":
        return int(draw_tokens(method, noise, seed, requests, position, purpose,
                               inputs[kind])[0])
    math = ref.path_math("fast", noise)
    if kind == "residual":
        return int(ref._residual_tokens("gumbel", noise, math, seed, requests, position,
                                        inputs["residual"])[0])
    g = ref.gumbel_noise(math, seed, requests, position, BONUS,
                         np.arange(inputs["logits"].size))
    return int(ref.sample_scores(inputs["logits"][None] * ref.LOG2E, g).argmax(-1)[0])


def run_row(kind: str, method: str, noise: str, inputs: dict, key: int):
    """Simulate one row's draw on the core (``inputs`` of :func:`row_inputs`)."""
    kw = {"q": inputs["q"], "m": inputs["m"], "r": inputs["r"], "key": key}
    if method == "invcdf":
        return run_invcdf(kind, noise, inputs["logits"], **kw)
    return run_draw(kind, method, noise, inputs["logits"], **kw)


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
        extra = max_cycles if kind == "bonus" and method in NEEDS_MAX else 0
        rows.append({"draw": variant_name(method, noise), "kind": kind, "cycles": res.cycles,
                     "rowmax_cycles": extra, "total_cycles": res.cycles + extra,
                     "token": res.token,
                     "matches_reference": res.token == reference_token(
                         kind, method, noise, inputs, seed, request, position)})
    return rows


def rowmax_per_packed(vocab: int) -> float:
    """Cycles per packed vector of the row-max pass a bonus race or inverse CDF needs first."""
    return float(emit_rowmax(vocab).passes[0].cycles_per_vector)


def draw_table(loops: list[dict], noise: list[dict], tokens: list[dict], vocab: int) -> list[dict]:
    """The chapter's table: per draw, cycles per packed vector of the bonus (with the row-max
    pass where one is needed) and residual rows, the noise bias, the token TV on each target,
    the samples a blind test needs on the worst target, the tail and the reproducibility.
    Draws without a loop (Div14: ``t/14`` needs a divide; the Exact path) have no cycles."""
    by_loop = {(r["draw"], r["kind"]): r for r in loops}
    by_noise = {r["name"]: r for r in noise}
    rowmax = rowmax_per_packed(vocab)
    out = []
    names = [variant_name(m, n) for m, n in ROW_DRAWS]
    names += [n for n in dict.fromkeys([r["name"] for r in noise] + [t["method"] for t in tokens])
              if n not in names]
    for name in names:
        method = name.split("-")[0] if "-" in name else "gumbel"
        row = {"draw": name, "bonus": None, "residual": None}
        if (name, "bonus") in by_loop:
            row["bonus"] = by_loop[(name, "bonus")]["cycles_per_packed"] + (
                rowmax if method in NEEDS_MAX else 0.0)
            row["residual"] = by_loop[(name, "residual")]["cycles_per_packed"]
        n = by_noise.get(name)
        row["expected_chi2"] = n["expected_chi2"] if n else None
        row["noise_detect"] = n["detect"] if n else None
        row["g_max"] = n["g_max"] if n else None
        mine = [t for t in tokens if t["method"] == name]
        row["tv"] = {t["target"]: t["tv"] for t in mine}
        row["detect_blind"] = min((t["detect_blind"] for t in mine), default=None)
        row["detect_aimed"] = min((t["detect_aimed"] for t in mine), default=None)
        row["reproducibility"] = REPRODUCIBILITY[method]
        out.append(row)
    return out + [dict(r) for r in NOTE_ROWS]
