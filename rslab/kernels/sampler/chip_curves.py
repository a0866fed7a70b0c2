"""The sampler's latency and throughput on 1 … 64 cores, each point against the chip's bound.

A point is one chip run (:func:`~rslab.kernels.sampler.chip_run.run_chip_sampler`) at a test
point of the note (``first-reject``: every request rejects its first draft;
``all-accept``: every request accepts all S = 4; the inputs of
:mod:`rslab.fixtures`), with R requests on C cores in one mode: its cycles (the latency of
the step: every request's tokens are out), its throughput (tokens emitted per thousand
cycles), the chip's bound (:mod:`rslab.kernels.sampler.chip_bound`) and whether the tokens
are the reference's, the waits of the core that ended last (``last_waits``: for its DMA
engine, the HBM and barriers), and the HBM's traffic as delivered (``hbm_bytes``, the most
bytes one core brought, ``core_bytes_max``, and the cycle after its last byte,
``last_byte``). :func:`curve_points` computes a grid of points (each once per book
build, :mod:`rslab.memo`; spread over an executor's workers); :func:`scaling_end` reads, per
curve, where more cores stop paying (the fewest within a tenth of the fastest) and what binds
there.

The grids (:data:`GRIDS`): both test points in both modes; at scale ``full`` R = 1, 2, 8, 32,
64 and every C from 1 to 64 (1,280 runs: hours on a 2-core machine), at ``book`` the same R
and the twelve C where the curves bend, at ``quick`` R = 1, 2, 64 and four C (the targets'
points among them).
"""

from __future__ import annotations

from collections import Counter

from rslab import memo
from rslab.executors import Serial
from rslab.fixtures import all_accept_inputs, first_reject_inputs
from rslab.kernels.sampler.chip_plan import MODES
from rslab.kernels.sampler.chip_run import run_chip_sampler
from rslab.machine.config import ChipConfig
from rslab.scale import by_scale

POINTS = {"first-reject": first_reject_inputs, "all-accept": all_accept_inputs}
S = 4
GRIDS = {"quick": ((1, 2, 64), (1, 8, 32, 64)),
         "book": ((1, 2, 8, 32, 64), (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)),
         "full": ((1, 2, 8, 32, 64), tuple(range(1, 65)))}
"""The requests and the cores of each scale's grid."""
STRONG = 1.1
"""Strong scaling ends at the fewest cores whose cycles are within this factor of the
fastest point's: no more cores measured cut the cycles by more than a tenth."""


def grid(scale: str | None = None) -> tuple:
    """(requests, cores) of the grid at ``scale`` (default: the current one)."""
    return by_scale(GRIDS["quick"], GRIDS["book"], GRIDS["full"], scale)


def _chip(settings) -> ChipConfig:
    return ChipConfig().with_(**dict(settings))


TARGETS = {"latency": ("first-reject", 2, 32, "sequential", 1.5),
           "throughput": ("all-accept", 64, 64, "sequential", 1.3)}
"""The chip program's design targets: (test point, R, cores, mode, the most cycles / the
chip's bound): latency at the note's first-step reject, throughput at all-accept, R = 64."""


@memo.cached
def curve_point(name: str, R: int, cores: int, mode: str, vocab: int, merge: str = "max-first",
                settings: tuple = (), seed: int = 0, guess: str = "reject") -> dict:
    """One point (module docstring); ``settings``: (field, value) changes of the default
    chip (its HBM bandwidth, its network's latencies); ``guess``: what a split row's check
    fetches ahead (:data:`~rslab.kernels.sampler.chip_plan.GUESSES`)."""
    if name not in POINTS:
        raise ValueError(f"name must be one of {sorted(POINTS)}, got {name!r}")
    inputs = POINTS[name](R=R, S=S, V=vocab, seed=seed)
    run = run_chip_sampler(inputs, cores=cores, mode=mode, merge=merge, seed=seed,
                           chip=_chip(settings), compare=False, figures=False, trace=False,
                           guess=guess)
    b = run.chip_bound
    last = run.chip_run.runs[run.critical_core].stalls
    tokens = int(run.reference_num_accepted.sum()) + R
    transfers = run.chip_run.transfers
    per_core = Counter()
    for t in transfers:
        per_core[t["core"]] += t["bytes"]
    return {"name": name, "R": R, "cores": cores, "mode": mode, "merge": merge, "vocab": vocab,
            "guess": guess,
            "cycles": int(run.cycles), "bound_cycles": b["bound_cycles"], "ratio": b["ratio"],
            "binding": b["binding"], "exchange_cycles": b["exchange_cycles"],
            "hbm_cycles": b["hbm_cycles"], "dma_cycles": b["dma_cycles"],
            "sfu_cycles": b["sfu_cycles"],
            "valu_cycles": b["valu_cycles"], "tokens": tokens,
            "tokens_per_kcycle": round(1000 * tokens / run.cycles, 3),
            "cores_per_row": run.plan.cores_per_row, "plan": run.plan.describe(),
            "hbm_stall": int(run.stalls["hbm"]), "barrier_stall": int(run.stalls["barrier"]),
            "last_waits": {w: int(last[c]) for w, c in
                           (("dma", "dma-wait"), ("hbm", "hbm"), ("barrier", "barrier"))},
            "hbm_bytes": int(sum(per_core.values())), "core_bytes_max": int(max(per_core.values())),
            "last_byte": int(max(t["end"] for t in transfers)),
            "tokens_match_reference": bool(run.tokens_match)}


def _point(task, shared=None) -> dict:
    return curve_point(*task)


def curve_points(vocab: int, *, names=tuple(POINTS), requests=None, cores=None,
                 modes=MODES, merge: str = "max-first", settings: tuple = (), seed: int = 0,
                 executor=None) -> list[dict]:
    """The grid's points (``requests``, ``cores`` default: :func:`grid`'s), as tasks of
    ``executor`` (default: this process), in order: test point, mode, R, C."""
    requests = grid()[0] if requests is None else tuple(requests)
    cores = grid()[1] if cores is None else tuple(cores)
    tasks = [(name, R, c, mode, vocab, merge, tuple(settings), seed) for name in names
             for mode in modes for R in requests for c in cores]
    return (executor or Serial()).map(_point, tasks)


def scaling_end(points) -> list[dict]:
    """Per curve (test point, mode, R): the fewest cycles and at how many cores, where strong
    scaling ends — the fewest cores whose cycles are within ``STRONG`` of the fewest on the
    grid measured, so that no core count measured beyond them is more than a tenth faster
    (it depends on which core counts the grid has: a grid without a count can put the end at
    the next one it has) —, what binds the chip's bound there, and
    the speedup of the fastest point over one core."""
    curves: dict = {}
    for p in points:
        curves.setdefault((p["name"], p["mode"], p["R"]), []).append(p)
    out = []
    for (name, mode, R), pts in curves.items():
        pts = sorted(pts, key=lambda p: p["cores"])
        by = {p["cores"]: p for p in pts}
        best = min(pts, key=lambda p: (p["cycles"], p["cores"]))
        end = next(p for p in pts if p["cycles"] <= STRONG * best["cycles"])
        one = by.get(1)
        out.append({"name": name, "mode": mode, "R": R, "best_cores": best["cores"],
                    "best_cycles": best["cycles"], "ends_at": end["cores"],
                    "binding_there": end["binding"], "exchange_share": round(
                        end["exchange_cycles"] / end["bound_cycles"], 3),
                    "ratio_there": end["ratio"],
                    "speedup": round(one["cycles"] / best["cycles"], 2) if one else None})
    return out
