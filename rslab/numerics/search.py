"""The divisor search: which k in ``g = −(fl(t/k) + log2 k)`` gives the least biased noise.

Two searches (the Div14 chapter):

* **Sampled** (the design note's method): screening runs every candidate on
  ``screen_seeds`` seeds × ``samples_per_seed`` draws; the best few
  (``finalists``) and the baseline (Div8) go to the finals on ``final_seeds``
  fresh seeds. Criteria: mean per-seed KS distance and the χ² of the bin
  counts pooled over seeds. The ranking is the sum of the two ranks (ties by
  χ²); the Pareto front of the two criteria is reported too.
* **Exact**: every divisor of a fine grid through all 2^24 lattice points:
  noncentrality λ (the expected χ² at N samples is 63 + N·λ), the exact KS
  distance and the upper tail. Its Pareto front of (λ, exact KS). A grid point is
  the second layer on the shared first layer, one in-place sort of its outputs,
  binary searches and ``stats.ks_sorted`` (F only where the KS maximum can be).

Presets per scale (``search_config``): ``full`` is the note's scale (3 seeds ×
10^8 screening, 10 seeds × 10^8 finals, integers 2–16 plus non-integers, a
1/16 grid over [2, 16]); ``book`` and ``quick`` are smaller and say so.
"""

from __future__ import annotations

import csv
import functools
import json
import math
import os
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from rslab import memo
from rslab.executors import default_workers
from rslab.numerics import montecarlo as mc
from rslab.numerics import stats, tails
from rslab.numerics.fastlog import DEFAULT_FASTLOG2, FastLog2
from rslab.numerics.gumbel import LATTICE_CHUNK, get_noise, lattice_first_layer, second_layer

INTEGER_DIVISORS = tuple(float(k) for k in range(2, 17))
NON_INTEGER_DIVISORS = (2.5, 3.5, 6.5, 9.5, 10.5, 12.5, 13.5, 14.5, 15.5, math.e, math.pi)
BASELINE = 8.0



def divisor_name(k: float) -> str:
    """``div14`` for integers, ``div(10.5)`` otherwise (the ``get_noise`` names)."""
    return get_noise(f"div({float(k)!r})").name


MAX_GRID_POINTS = 1024
"""Most divisors an exact grid may hold (each costs one pass over the 2^24 lattice, ≈ 1 s)."""


def check_divisors(divisors) -> tuple[float, ...]:
    """Divisors as floats; each positive and finite, distinct as the float32 constant the core
    uses, and giving finite noise at every lattice uniform (``get_noise`` checks that)."""
    out = []
    for k in divisors:
        if isinstance(k, bool) or not isinstance(k, (int, float, np.integer, np.floating)):
            raise ValueError(f"divisor must be a number, got {k!r}")
        k = float(k)
        if not math.isfinite(k) or k <= 0:
            raise ValueError(f"divisor must be positive and finite, got {k}")
        out.append(k)
    if not out:
        raise ValueError("need at least one divisor")
    names = [divisor_name(k) for k in out]
    if len(set(names)) != len(names) or len(set(np.float32(out).tolist())) != len(out):
        raise ValueError(f"divisors must be distinct (as float32 values), got {out}")
    return tuple(out)


def fine_grid(lo: float = 2.0, hi: float = 16.0, step: float = 1 / 16) -> list[float]:
    """Divisors lo, lo + step, …, hi (a step that is a power of two keeps them exact); at most
    ``MAX_GRID_POINTS`` of them."""
    if not (math.isfinite(lo) and math.isfinite(hi) and math.isfinite(step)
            and 0 < lo < hi and step > 0):
        raise ValueError(f"need finite 0 < lo < hi and step > 0, got lo={lo}, hi={hi}, "
                         f"step={step}")
    points = round((hi - lo) / step) + 1
    if points > MAX_GRID_POINTS:
        raise ValueError(f"the grid lo={lo}:hi={hi}:step={step} has {points:.4g} divisors, more "
                         f"than {MAX_GRID_POINTS}: use a larger step")
    return [float(x) for x in lo + step * np.arange(points)]


def pareto_front(a, b) -> np.ndarray:
    """Mask of the points not dominated when minimising both ``a`` and ``b``."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("a and b must be 1-d arrays of the same length")
    dominated = ((a[None, :] <= a[:, None]) & (b[None, :] <= b[:, None])
                 & ((a[None, :] < a[:, None]) | (b[None, :] < b[:, None])))
    return ~dominated.any(axis=1)


def output_paths(path) -> tuple[Path, Path]:
    """``<path>.json`` and ``<path>.csv``, their folder created; ValueError if it cannot be, or
    cannot be written (checked before a search, not after it)."""
    path = Path(path)
    stem = path.with_suffix("") if path.suffix in (".json", ".csv") else path
    try:
        stem.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"output: cannot create the folder {str(stem.parent)!r}: "
                         f"{exc.strerror}") from None
    if not os.access(stem.parent, os.W_OK):
        raise ValueError(f"output: the folder {str(stem.parent)!r} is not writable")
    paths = stem.with_suffix(".json"), stem.with_suffix(".csv")
    for p in paths:
        if p.is_dir():
            raise ValueError(f"output: {str(p)!r} is a folder")
    return paths


@dataclass(frozen=True)
class SearchConfig:
    """Everything a search run depends on (it is written into the result file)."""

    scale: str
    divisors: tuple[float, ...]
    screen_seeds: tuple[int, ...]
    final_seeds: tuple[int, ...]
    samples_per_seed: int
    finalists: int = 4
    baseline: float = BASELINE
    grid: tuple[float, ...] = ()
    processes: int = field(default_factory=default_workers)
    chunk: int = mc.DEFAULT_CHUNK
    rng: str = "hw"
    log2: FastLog2 = field(default=DEFAULT_FASTLOG2, repr=False)

    def __post_init__(self):
        check_divisors(self.divisors)
        if self.grid:
            check_divisors(self.grid)
        mc._check_seeds(self.screen_seeds)
        mc._check_seeds(self.final_seeds)
        mc._check_samples(self.samples_per_seed)
        mc._check_processes(self.processes)
        mc._check_chunk(self.chunk)
        mc._check_rng(self.rng)
        if isinstance(self.finalists, bool) or not isinstance(self.finalists, int) \
                or self.finalists < 1:
            raise ValueError(f"finalists must be a positive integer, got {self.finalists!r}")
        if not isinstance(self.log2, FastLog2):
            raise ValueError("log2 must be a FastLog2")
        check_divisors([self.baseline])

    def replace(self, **changes) -> SearchConfig:
        return replace(self, **changes)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["log2"] = asdict(self.log2)
        d["divisor_names"] = [divisor_name(k) for k in self.divisors]
        return d


def search_config(scale: str | None = None, **changes) -> SearchConfig:
    """The preset of a scale (``quick``, ``book`` or ``full`` = the note's), with changes."""
    from rslab.scale import by_scale, current_scale

    scale = current_scale() if scale is None else scale
    quick_divisors = (2.0, 8.0, 10.0, 14.0, 10.5)
    base = SearchConfig(
        scale=scale,
        divisors=by_scale(quick_divisors, INTEGER_DIVISORS + NON_INTEGER_DIVISORS,
                          INTEGER_DIVISORS + NON_INTEGER_DIVISORS, scale),
        screen_seeds=(1, 2, 3),
        final_seeds=tuple(range(101, by_scale(104, 111, 111, scale))),
        samples_per_seed=by_scale(2**20, 10**8, 10**8, scale),
        finalists=by_scale(1, 4, 4, scale),
        grid=tuple(fine_grid(2.0, 16.0, by_scale(2.0, 1 / 4, 1 / 16, scale))),
        # a quick search's tasks are too small to repay starting processes and sending them
        # the lattice: it runs in this process
        processes=by_scale(1, default_workers(), default_workers(), scale),
    )
    return base.replace(**changes)


def _pipelines(divisors, log2) -> dict:
    return {divisor_name(k): get_noise(f"div({k!r})", log2=log2) for k in divisors}


def stage_rows(result: mc.MonteCarloResult, divisors, baseline_name: str | None) -> list[dict]:
    """One row per candidate: sampled criteria (pooled, and per seed), exact λ and KS, change
    against the baseline."""
    names = {divisor_name(k): k for k in divisors}
    rows = []
    for name, cand in result.candidates.items():
        rows.append({"name": name, "divisor": names[name], "seeds": len(cand.seeds),
                     "samples": cand.total_samples, "mean_ks": cand.mean_ks, "chi2": cand.chi2,
                     "chi2_p": cand.chi2_p, "lam": cand.lam, "exact_ks": cand.exact_ks,
                     "expected_chi2": mc.N_BINS - 1 + cand.total_samples * cand.lam,
                     "chi2_per_seed": cand.chi2_per_seed.tolist(),
                     "ks_per_seed": cand.ks.tolist()})
    ks_rank = np.argsort(np.argsort([r["mean_ks"] for r in rows], kind="stable"), kind="stable")
    chi_rank = np.argsort(np.argsort([r["chi2"] for r in rows], kind="stable"), kind="stable")
    front = pareto_front([r["mean_ks"] for r in rows], [r["chi2"] for r in rows])
    base = next((r for r in rows if r["name"] == baseline_name), None)
    for i, r in enumerate(rows):
        r["rank_sum"] = int(ks_rank[i] + chi_rank[i])
        r["pareto"] = bool(front[i])
        r["ks_change_pct"] = 100 * (r["mean_ks"] / base["mean_ks"] - 1) if base else None
        r["chi2_change_pct"] = 100 * (r["chi2"] / base["chi2"] - 1) if base else None
    rows.sort(key=lambda r: (r["rank_sum"], r["chi2"]))
    return rows


@functools.lru_cache(maxsize=2)
def _first_layer(log2: FastLog2) -> np.ndarray:
    """t over the lattice (the first layer is the same for every divisor); ValueError (from
    ``get_noise``) for a ``log2`` whose first layer is not positive and finite."""
    get_noise("div8", log2=log2)
    return lattice_first_layer(log2, True)


def exact_row(name: str, g: np.ndarray, tail_ys=(8.0, 12.0, 16.0, 20.0)) -> dict:
    """λ, exact KS and tail figures of g over the lattice, from one sort (no argsort)."""
    # lattice outputs are nearly sorted already: a merge sort is the fastest
    return sorted_row(name, np.sort(np.asarray(g, dtype=np.float32), kind="stable"), tail_ys)


def sorted_row(name: str, s: np.ndarray, tail_ys=(8.0, 12.0, 16.0, 20.0)) -> dict:
    """``exact_row`` of the 2^24 sorted float32 outputs ``s``: binary searches and
    ``stats.ks_sorted`` (over every position, which gives the KS distance over the distinct
    values: inside a run of equal values the terms are below those at its ends)."""
    if s.shape != (mc.LATTICE_SIZE,) or np.isnan(s[-1]):
        raise ValueError(f"{name}: need 2^24 outputs without NaN")
    lam = sorted_lambda(s)
    ks = stats.ks_sorted(s, mc.LATTICE_SIZE)
    # +inf sorts last, after the finite values (no NaN here)
    n_inf = s.size - int(np.searchsorted(s, np.float32(np.inf), side="left"))
    g_max = float(s[s.size - n_inf - 1]) if n_inf < s.size else -np.inf
    if not np.isfinite(g_max):
        raise ValueError(f"{name}: no finite output")
    ys = np.asarray(tail_ys, dtype=np.float64)
    law_p = 1 - stats.search_sorted(s, ys, side="right") / mc.LATTICE_SIZE
    top = int(np.searchsorted(s, np.float32(g_max), side="right")
              - np.searchsorted(s, np.float32(g_max), side="left"))
    return {"name": name, "lam": lam, "exact_ks": ks, "g_max": g_max,
            "p_inf": float(n_inf / mc.LATTICE_SIZE),
            "p_top_atom": top / mc.LATTICE_SIZE,
            "ideal_beyond_max": float(stats.gumbel2_sf(g_max)), "tail_y": ys.tolist(),
            "tail_ratio": (law_p / stats.gumbel2_sf(ys)).tolist()}


def lambda_by_divisor(divisors, log2: FastLog2 = DEFAULT_FASTLOG2) -> np.ndarray:
    """Exact λ of each divisor's pipeline (bins only: cheaper than ``exact_search``)."""
    return np.array([divisor_lambda(k, log2) for k in check_divisors(divisors)])


def lattice_noise(k: float, log2: FastLog2) -> np.ndarray:
    """g of ``div(k)`` under ``log2`` at every lattice point: ``second_layer`` on the shared first
    layer, a cache-sized piece at a time."""
    t = _first_layer(log2)
    out = np.empty_like(t)
    for s in range(0, t.size, LATTICE_CHUNK):
        second_layer(t[s:s + LATTICE_CHUNK], k, log2, out=out[s:s + LATTICE_CHUNK])
    return out


def sorted_noise(k: float, log2: FastLog2) -> np.ndarray:
    """``lattice_noise`` sorted in place (a merge sort: the outputs are nearly sorted)."""
    g = lattice_noise(k, log2)
    g.sort(kind="stable")
    return g


def sorted_lambda(s) -> float:
    """λ of the 2^24 sorted lattice outputs ``s``: the 64 bins' counts from 63 binary searches."""
    cuts = stats.search_sorted(s, stats.bin_edges(mc.N_BINS), side="left")
    p = np.diff(np.concatenate([[0], cuts, [s.size]])) / mc.LATTICE_SIZE
    return float(((p - 1 / mc.N_BINS) ** 2 * mc.N_BINS).sum())


@memo.cached
def divisor_lambda(k: float, log2: FastLog2) -> float:
    """Exact λ of ``div(k)`` under ``log2`` (the second layer and a sort, once per build)."""
    return sorted_lambda(sorted_noise(k, log2))


@memo.cached
def divisor_row(k: float, log2: FastLog2, tail_ys: tuple) -> dict:
    """``exact_row`` of ``div(k)`` under ``log2``, with its ``divisor`` (once per build)."""
    row = sorted_row(divisor_name(k), sorted_noise(k, log2), tail_ys)
    row["divisor"] = k
    return row


def _exact_task(args, _shared=None):
    return divisor_row(*args)


def exact_search(divisors, *, log2: FastLog2 = DEFAULT_FASTLOG2, processes: int = 1,
                 tail_ys=(8.0, 12.0, 16.0, 20.0), progress: bool = True,
                 executor=None) -> list[dict]:
    """λ, exact KS and tail figures of each divisor over all 2^24 lattice points (one task per
    divisor on ``executor``, default ``processes`` local processes)."""
    divisors = check_divisors(divisors)
    tasks = [(k, log2, tuple(tail_ys)) for k in divisors]
    executor_ = mc.executor_for(processes, executor)
    if executor is None:
        _first_layer(log2)  # once, before local workers fork
    bar = mc._progress_bar(len(tasks), progress, "exact", "div")
    try:
        rows = mc.map_tasks(_exact_task, tasks, executor_, bar)
    finally:
        bar.close()
        if executor is None:
            executor_.shutdown()
    front = pareto_front([r["lam"] for r in rows], [r["exact_ks"] for r in rows])
    for r, f in zip(rows, front, strict=True):
        r["pareto"] = bool(f)
    return rows


@dataclass
class SearchResult:
    """Screening, finals and exact rows, the winners, timings, and the config."""

    config: SearchConfig
    screening: list[dict]
    finals: list[dict]
    exact: list[dict]
    finalist_tails: dict[str, dict]
    seconds: dict[str, float]

    @property
    def best(self) -> str:
        """The finals' winner: smallest rank sum (KS rank + χ² rank), ties by χ²."""
        return self.finals[0]["name"]

    @property
    def exact_best(self) -> dict:
        """Names of the grid divisors with the smallest λ and the smallest exact KS."""
        if not self.exact:
            return {}
        return {"lam": min(self.exact, key=lambda r: r["lam"])["name"],
                "exact_ks": min(self.exact, key=lambda r: r["exact_ks"])["name"]}

    def to_dict(self) -> dict:
        return {"config": self.config.to_dict(), "best": self.best,
                "exact_best": self.exact_best, "screening": self.screening,
                "finals": self.finals, "exact": self.exact,
                "finalist_tails": self.finalist_tails, "seconds": self.seconds}

    def write(self, path) -> tuple[Path, Path]:
        """Write ``<path>.json`` (everything) and ``<path>.csv`` (a row per stage and candidate)."""
        json_path, csv_path = output_paths(path)
        json_path.write_text(json.dumps(_plain(self.to_dict()), indent=2) + "\n")
        cols = ["stage", "name", "divisor", "seeds", "samples", "mean_ks", "chi2", "chi2_p",
                "lam", "exact_ks", "expected_chi2", "ks_change_pct", "chi2_change_pct",
                "pareto", "g_max"]
        with csv_path.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
            writer.writeheader()
            for stage, rows in (("screening", self.screening), ("finals", self.finals),
                                ("exact", self.exact)):
                for r in rows:
                    writer.writerow({"stage": stage, **_plain(r)})
        return json_path, csv_path


def _plain(obj):
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    return obj


TAIL_DELTAS = (16, 20, 24)


def finalist_tail(law: mc.LatticeLaw) -> dict:
    """Tail summary of a finalist and the chance that a tail token 2^-Δ below the top wins."""
    summary = tails.tail_summary(law)
    summary["tail_token_win"] = {str(d): tails.tail_token_win(law, d) for d in TAIL_DELTAS}
    summary["ideal_tail_token_win"] = {str(d): float(tails.ideal_tail_token_win(d))
                                       for d in TAIL_DELTAS}
    return summary


def run_search(config: SearchConfig, *, progress: bool = True, exact: bool = True,
               executor=None) -> SearchResult:
    """Screening, finals, the exact grid and the finalists' tails, as configured (on
    ``executor`` if given, else on ``config.processes`` local processes)."""
    if not isinstance(config, SearchConfig):
        raise ValueError("config must be a SearchConfig")
    seconds = {}
    baseline = divisor_name(config.baseline)
    divisors = config.divisors
    if config.baseline not in divisors:
        divisors = (config.baseline, *divisors)

    t0 = time.perf_counter()
    screen = mc.run(_pipelines(divisors, config.log2), config.screen_seeds,
                    config.samples_per_seed, processes=config.processes, chunk=config.chunk,
                    rng=config.rng, progress=progress, executor=executor)
    screening = stage_rows(screen, divisors, baseline)
    seconds["screening"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    chosen = [r["divisor"] for r in screening if r["name"] != baseline][:config.finalists]
    final_divisors = (config.baseline, *chosen)
    final = mc.run(_pipelines(final_divisors, config.log2), config.final_seeds,
                   config.samples_per_seed, processes=config.processes, chunk=config.chunk,
                   rng=config.rng, progress=progress, extra=finalist_tail, executor=executor)
    finals = stage_rows(final, final_divisors, baseline)
    finalist_tails = {name: cand.extra for name, cand in final.candidates.items()}
    seconds["finals"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    exact_rows = []
    if exact and config.grid:
        exact_rows = exact_search(config.grid, log2=config.log2, processes=config.processes,
                                  progress=progress, executor=executor)
    seconds["exact"] = time.perf_counter() - t0

    return SearchResult(config, screening, finals, exact_rows, finalist_tails, seconds)
