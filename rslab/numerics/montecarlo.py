"""Monte Carlo at scale for noise pipelines, through the 2^24-point uniform lattice.

Every noise pipeline maps a uniform u to g, and u takes one of 2^24 values,
indexed by k = w >> 8 of a 32-bit random word w (``rng.uniform_from_words``).
So g is a deterministic function of k, and a sample of N draws is fully
described by how often each lattice index was drawn. The engine therefore

1. draws the words of one seed's stream in chunks and counts k into a
   2^24-entry table (peak memory independent of N),
2. evaluates each candidate pipeline once per lattice point (a ``LatticeLaw``,
   built before sampling), and
3. turns the counts into the 64 equiprobable bin counts and the KS distance of
   the sample's empirical CDF from F(x) = 2^(-2^(-x)).

This is the same computation as running the pipeline on every sampled u
(``per_sample_stats`` does that; the tests show both give identical bits), but
the pipeline's cost is paid per lattice point instead of per sample. ``run``
first draws the count tables of all seeds (tasks: blocks of a seed's stream, whose
tables add up), then evaluates the candidates on them (tasks: candidates), on any
executor of :mod:`rslab.executors`: memory is one 2^24 table per seed plus one law
per worker, whatever the number of samples.
All candidates of a run see the *same* uniforms for a given seed (common random
numbers), which makes their comparison less noisy.

Streams: seed s (0 ≤ s < 2^32) draws word i (0 ≤ i < 2^32) as
``hw_random_words(s, i)`` (the Fast path's per-lane RNG, ``rng="hw"``) or as
word i % 4 of ``philox4x32((i // 4, 0, 0, 0), (s, 0))`` (``rng="philox"``).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field

import numpy as np

from rslab.executors import LocalProcesses, Serial
from rslab.numerics import compiled
from rslab.numerics.gumbel import lattice, on_lattice
from rslab.numerics.rng import (
    UNIFORM_BITS,
    hw_random_words_into,
    philox4x32,
    uniform_from_words,
)
from rslab.numerics.stats import bin_edges, chi2_from_counts, chi2_law, gumbel2_cdf

LATTICE_SIZE = 2**UNIFORM_BITS
N_BINS = 64
RNGS = ("hw", "philox")
DEFAULT_CHUNK = 2**22
MAX_SAMPLES_PER_SEED = 2**32


def stream_fpc(n: int, rng: str = "hw") -> float:
    """The finite-population factor of ``n`` distinct words of the hardware model, one
    seed's stream or the first word of n keys of one position: ``1 − n/2^32`` (its counter
    and key hashes are bijections, so these words never repeat and n words are n draws
    without replacement from the 2^32 words: every count's variance is the multinomial one
    times this factor), 1 for Philox (whose words may repeat)."""
    _check_rng(rng)
    return 1 - n / MAX_SAMPLES_PER_SEED if rng == "hw" else 1.0


def bin_index(g, n_bins: int = N_BINS) -> np.ndarray:
    """Bin of each g, as ``stats.bin_counts`` bins it (bin j is [edge_j, edge_j+1))."""
    g = np.asarray(g)
    if np.isnan(g).any():
        raise ValueError("g contains NaN; the bins and the KS distance are undefined")
    return np.searchsorted(bin_edges(n_bins), g.astype(np.float64), side="right").astype(np.uint8)


def chi2_uniform(bin_counts) -> tuple[float, float]:
    """Pearson χ² of counts against equiprobable bins, and its p-value (df = bins - 1)."""
    res = chi2_from_counts(np.asarray(bin_counts, dtype=np.int64))
    return res.statistic, res.pvalue


def _ks(f, counts) -> float:
    """KS distance from F at sorted distinct values and the sample's count on each.

    Values with count 0 may be dropped or kept: their terms never exceed a
    neighbour's, so the result is the same bits either way (dropped when sparse).
    """
    if np.count_nonzero(counts) < counts.size // 4:
        nonzero = np.flatnonzero(counts)
        f, counts = f[nonzero], counts[nonzero]
    after = np.cumsum(counts)
    n = int(after[-1]) if after.size else 0
    if n <= 0:
        raise ValueError("the sample must hold at least one value")
    line = np.divide(after, n)
    d_plus = np.subtract(line, f, out=line).max()
    after -= counts
    np.divide(after, n, out=line)
    return float(max(d_plus, np.subtract(f, line, out=line).max()))


def run_ends(sorted_values) -> np.ndarray:
    """The last index of each run of equal values in a sorted array (int64)."""
    return np.append(np.flatnonzero(sorted_values[1:] != sorted_values[:-1]),
                     sorted_values.size - 1)


def atoms_ks(f, ends, total: int = LATTICE_SIZE) -> float:
    """KS distance of a law on the lattice: F at its sorted distinct values ``f`` and the last
    lattice position of each (``ends``)."""
    return cumulative_ks(f, np.add(ends, 1, dtype=np.float64), total)


def cumulative_ks(f, after, total: int) -> float:
    """KS distance from F at sorted distinct values ``f``, given how many of ``total`` points lie
    at or below each (``after``, integers): ``max(after/total − F, F − before/total)`` with
    ``before`` the previous value's ``after`` (0 first), in two buffers."""
    line = compiled.kernel("ks_line")
    if line is not None:
        d_plus, d_minus = line(f, after, total)
    else:
        after = np.divide(after, total)
        diff = np.subtract(after, f)
        d_plus = diff.max()
        # before/total is after/total shifted by one, with 0 first (F − 0 is F exactly)
        d_minus = np.subtract(f[1:], after[:-1], out=diff[1:]).max(initial=-np.inf)
    return float(max(d_plus, max(d_minus, f[0])))


def ks_from_atoms(values, counts) -> float:
    """KS distance sup|F_n - F| of a sample given as sorted distinct values and their counts."""
    values = np.asarray(values)
    counts = np.asarray(counts, dtype=np.int64)
    if values.shape != counts.shape or values.ndim != 1:
        raise ValueError("values and counts must be 1-d arrays of the same length")
    return _ks(gumbel2_cdf(values), counts)


def ks_of_sample(g) -> float:
    """KS distance of a sample, the textbook way: sort, then max(i/N - F, F - (i-1)/N)."""
    x = np.sort(np.asarray(g, dtype=np.float32))
    n = x.size
    if n == 0:
        raise ValueError("the sample must hold at least one value")
    if np.isnan(x).any():
        raise ValueError("g contains NaN; the KS distance is undefined")
    f = gumbel2_cdf(x)
    i = np.arange(1, n + 1, dtype=np.int64)
    return float(max(np.max(i / n - f), np.max(f - (i - 1) / n)))


# --------------------------------------------------------------------------- streams

def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    if not 0 <= int(seed) < 2**32:
        raise ValueError(f"seed must be in [0, 2^32), got {seed}")
    return int(seed)


def _check_samples(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise ValueError(f"samples must be an integer, got {n!r}")
    if not 0 < int(n) <= MAX_SAMPLES_PER_SEED:
        raise ValueError(f"samples per seed must be in [1, 2^32], got {n}")
    return int(n)


def _check_rng(rng) -> str:
    if rng not in RNGS:
        raise ValueError(f"rng must be one of {RNGS}, got {rng!r}")
    return rng


def stream_words(seed: int, start: int, stop: int, rng: str = "hw") -> np.ndarray:
    """Words ``start .. stop-1`` of seed ``seed``'s stream (uint32)."""
    seed = _check_seed(seed)
    _check_rng(rng)
    if not 0 <= start <= stop <= MAX_SAMPLES_PER_SEED:
        raise ValueError(f"need 0 <= start <= stop <= 2^32, got start={start}, stop={stop}")
    if rng == "hw":
        return _hw_words(seed, start, np.empty(stop - start, np.uint32))
    first, last = start // 4, -(-stop // 4)
    ctr = np.zeros((last - first, 4), dtype=np.uint32)
    ctr[:, 0] = np.arange(first, last, dtype=np.uint64).astype(np.uint32)
    words = philox4x32(ctr, np.array([seed, 0], dtype=np.uint32)).reshape(-1)
    return words[start - 4 * first: stop - 4 * first]


def _hw_words(seed: int, start: int, out: np.ndarray, tmp: np.ndarray | None = None):
    """Words ``start .. start + out.size − 1`` of the hw stream of ``seed``, written into ``out``:
    ``hw_random_words(seed, i) = mix32(i·γ + mix32(seed ^ salt))``, in place."""
    np.add(_counter_ramp(out.size), np.uint32(start), out=out)
    return hw_random_words_into(seed, out, out, tmp)


@functools.lru_cache(maxsize=2)
def _counter_ramp(m: int) -> np.ndarray:
    """0, 1, …, m − 1 as uint32 (read-only)."""
    r = np.arange(m, dtype=np.uint32)
    r.setflags(write=False)
    return r


def _chunks(n: int, chunk: int):
    for start in range(0, n, chunk):
        yield start, min(n, start + chunk)


def _check_chunk(chunk) -> int:
    if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk <= 0:
        raise ValueError(f"chunk must be a positive integer, got {chunk!r}")
    return int(chunk)


def lattice_counts(seed: int, n: int, *, rng: str = "hw", chunk: int = DEFAULT_CHUNK,
                   on_chunk=None, first: int = 0) -> np.ndarray:
    """How often each lattice index k = w >> 8 occurs among the n words of a seed from word
    ``first`` on."""
    n = _check_samples(n)
    chunk = _check_chunk(chunk)
    seed = _check_seed(seed)
    _check_rng(rng)
    if not 0 <= first <= first + n <= MAX_SAMPLES_PER_SEED:
        raise ValueError(f"need 0 <= start <= stop <= 2^32, got start={first}, stop={first + n}")
    counts = np.zeros(LATTICE_SIZE, dtype=np.uint32 if n < 2**32 else np.uint64)
    one, count = counts.dtype.type(1), compiled.kernel("count")
    words, tmp = np.empty(min(n, chunk), np.uint32), np.empty(min(n, chunk), np.uint32)
    for start, stop in _chunks(n, chunk):
        if rng == "hw":
            k = _hw_words(seed, first + start, words[:stop - start], tmp[:stop - start])
        else:
            k = stream_words(seed, first + start, first + stop, rng)
        np.right_shift(k, np.uint32(32 - UNIFORM_BITS), out=k)
        if count is not None:
            count(k, counts)
        else:
            k.sort()  # the same counts; sorted indices make the scatter cache-friendly
            np.add.at(counts, k, one)
        if on_chunk is not None:
            on_chunk(stop - start)
    return counts


# --------------------------------------------------------------------------- laws

def lattice_uniforms() -> np.ndarray:
    """``all_uniforms()``, computed once per process (read-only; ``gumbel.lattice``)."""
    return lattice()


@dataclass(frozen=True)
class LatticeLaw:
    """One pipeline's output over the whole lattice: g as a function of the lattice index k.

    Built once per candidate (sorting the 2^24 outputs); it turns any lattice
    counts into bin counts and a KS distance with one pass, and gives the exact
    law (every lattice point once).
    """

    name: str
    order: np.ndarray = field(repr=False)  # lattice indices sorted by g (stable)
    ends: np.ndarray = field(repr=False)  # last sorted position of each distinct value
    atom_values: np.ndarray = field(repr=False)  # the distinct values of g, increasing
    atom_cdf: np.ndarray = field(repr=False)  # F at each distinct value
    bin_sizes: np.ndarray = field(repr=False)  # lattice points per bin (64)
    bin_atom_edges: np.ndarray = field(repr=False)  # atoms in bins 0..j, for j = 0..63

    @classmethod
    def build(cls, name: str, values) -> LatticeLaw:
        values = np.ascontiguousarray(values, dtype=np.float32)
        if values.shape != (LATTICE_SIZE,):
            raise ValueError(f"{name}: values must hold g for all 2^24 lattice points, "
                             f"got shape {values.shape}")
        if np.isnan(values).any():
            raise ValueError(f"{name}: g contains NaN; the bins and the KS distance are undefined")
        order = np.argsort(values, kind="stable").astype(np.int32)
        sorted_values = values[order]
        ends = run_ends(sorted_values).astype(np.int32)
        atoms = sorted_values[ends]
        del sorted_values
        # atoms in bins 0..j are those below edge j (bin j is [edge_{j-1}, edge_j))
        edges = np.append(np.searchsorted(atoms.astype(np.float64), bin_edges(N_BINS),
                                          side="left"), atoms.size)
        lattice_below = np.concatenate([[0], ends.astype(np.int64) + 1])[edges]
        bin_sizes = np.diff(lattice_below, prepend=0)
        return cls(name, order, ends, atoms, gumbel2_cdf(atoms), bin_sizes, edges)

    @classmethod
    def of(cls, name: str, pipeline) -> LatticeLaw:
        """The law of ``pipeline`` (a callable u → g on float32 arrays)."""
        return cls.build(name, on_lattice(pipeline))

    def _sorted(self, counts) -> np.ndarray:
        """``counts`` (one entry per lattice point, uint32/uint64/int64) in the outputs' order."""
        if np.shape(counts) != (LATTICE_SIZE,):
            raise ValueError(f"counts must have one entry per lattice point, "
                             f"got shape {np.shape(counts)}")
        run = np.asarray(counts)[self.order]
        if run.dtype not in (np.uint32, np.uint64, np.int64):
            raise ValueError(f"counts must be uint32, uint64 or int64, got {run.dtype}")
        return run

    def atom_counts(self, counts) -> np.ndarray:
        """How many of the counted lattice points fall on each distinct value (int64)."""
        sorted_counts = self._sorted(counts)
        # the running total never exceeds the sample size, which fits the counts' dtype
        cum = np.add.accumulate(sorted_counts, dtype=sorted_counts.dtype)[self.ends]
        out = np.empty(cum.size, dtype=np.int64)
        out[0] = cum[0]
        np.subtract(cum[1:], cum[:-1], out=out[1:], casting="unsafe")
        return out

    def sample_stats(self, counts: np.ndarray) -> tuple[np.ndarray, float]:
        """(64 bin counts, KS distance) of a sample given how often each lattice point was drawn."""
        run = self._sorted(counts)
        # the running total never exceeds the sample size, which fits the counts' dtype; at
        # each atom's last lattice position it is the sample's count at or below that atom
        np.add.accumulate(run, out=run)
        after = run[self.ends]
        n = int(after[-1])
        if n <= 0:
            raise ValueError("the sample must hold at least one value")
        edges = self.bin_atom_edges
        below = np.where(edges > 0, after[np.maximum(edges - 1, 0)], 0).astype(np.int64)
        bins = np.diff(below, prepend=0)
        return bins, cumulative_ks(self.atom_cdf, after, n)

    # the exact law
    def atoms(self) -> tuple[np.ndarray, np.ndarray]:
        """Sorted distinct values of g and their exact probabilities."""
        return self.atom_values, self._atom_probs

    @functools.cached_property
    def _atom_probs(self) -> np.ndarray:
        probs = np.diff(self.ends, prepend=-1) / LATTICE_SIZE
        probs.setflags(write=False)
        return probs

    @functools.cached_property
    def atom_values64(self) -> np.ndarray:
        """``atom_values`` in float64 (read-only), once: a float32 array searched with float64
        keys would be converted on every search."""
        values = self.atom_values.astype(np.float64)
        values.setflags(write=False)
        return values

    def lattice_at_most(self, y) -> np.ndarray:
        """How many lattice points give g ≤ y (int64, for each y)."""
        below = np.searchsorted(self.atom_values64, np.asarray(y, dtype=np.float64),
                                side="right")
        return np.where(below > 0, self.ends[below - 1].astype(np.int64) + 1, 0)

    def bin_probabilities(self) -> np.ndarray:
        """Exact probability of each of the 64 bins."""
        return self.bin_sizes / LATTICE_SIZE

    def noncentrality(self) -> float:
        """λ = Σ (p_j - q_j)² / q_j: the expected χ² grows like 63 + N·λ."""
        p = self.bin_probabilities()
        q = 1.0 / N_BINS
        return float(((p - q) ** 2 / q).sum())

    def exact_ks(self) -> float:
        """sup|F_law - F| of the exact law (what a sample's KS distance converges to)."""
        return atoms_ks(self.atom_cdf, self.ends)


def predicted_chi2(lam: float, n: int, n_bins: int = N_BINS, fpc: float = 1.0):
    """The law of the χ² of n samples with noncentrality λ: ``scipy.stats.ncx2(bins-1, n·λ)``
    for independent draws; ``fpc · ncx2(bins-1, n·λ/fpc)`` for draws whose counts vary less by
    the finite-population factor ``fpc`` (``stream_fpc`` of the words per seed)."""
    if not np.isfinite(lam) or lam < 0:
        raise ValueError(f"lam must be a finite non-negative number, got {lam}")
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    return chi2_law(n_bins - 1, n * lam, fpc)


# --------------------------------------------------------------------------- runs

@dataclass
class CandidateResult:
    """Per-seed and pooled statistics of one candidate."""

    name: str
    seeds: list[int]
    samples_per_seed: int
    bin_counts: np.ndarray  # (seeds, 64) int64
    ks: np.ndarray  # (seeds,)
    lam: float = float("nan")  # exact noncentrality of the candidate's law
    exact_ks: float = float("nan")  # exact KS distance of the candidate's law
    extra: dict = field(default_factory=dict)  # what ``evaluate(extra=...)`` computed

    @property
    def chi2_per_seed(self) -> np.ndarray:
        return np.array([chi2_uniform(row)[0] for row in self.bin_counts])

    @property
    def pooled_counts(self) -> np.ndarray:
        return self.bin_counts.sum(axis=0)

    @property
    def chi2(self) -> float:
        """χ² of the bin counts pooled over all seeds."""
        return chi2_uniform(self.pooled_counts)[0]

    @property
    def chi2_p(self) -> float:
        return chi2_uniform(self.pooled_counts)[1]

    @property
    def mean_ks(self) -> float:
        """Mean of the per-seed KS distances."""
        return float(np.mean(self.ks))

    @property
    def total_samples(self) -> int:
        return self.samples_per_seed * len(self.seeds)

    def summary(self) -> dict:
        return {"name": self.name, "seeds": len(self.seeds), "samples": self.total_samples,
                "mean_ks": self.mean_ks, "chi2": self.chi2, "chi2_p": self.chi2_p,
                "lam": self.lam, "exact_ks": self.exact_ks}


@dataclass
class MonteCarloResult:
    """Results of ``run``: one ``CandidateResult`` per candidate, all on the same streams."""

    candidates: dict[str, CandidateResult]
    seeds: list[int]
    samples_per_seed: int
    rng: str
    seconds_sampling: float
    seconds_evaluating: float

    def __getitem__(self, name) -> CandidateResult:
        return self.candidates[name]

    @property
    def samples(self) -> int:
        return self.samples_per_seed * len(self.seeds)


def _check_processes(processes) -> int:
    if isinstance(processes, bool) or not isinstance(processes, (int, np.integer)) \
            or processes < 1:
        raise ValueError(f"processes must be a positive integer, got {processes!r}")
    return int(processes)


def _check_seeds(seeds) -> list[int]:
    if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__iter__"):
        raise ValueError(f"seeds must be a sequence of integers, got {seeds!r}")
    seeds = [_check_seed(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds must not be empty")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct, got {seeds}")
    return seeds


DEFAULT_BLOCK = 2**25
"""Samples per task of ``draw_counts``: a seed's stream is counted in blocks whose count
tables add up (finer progress, and more tasks than seeds to spread over workers)."""


def _progress_bar(total, progress, desc, unit):
    from tqdm.auto import tqdm

    return tqdm(total=total, unit=unit, unit_scale=True, desc=desc, disable=not progress,
                leave=False)


def executor_for(processes, executor):
    """``executor`` if given, else local processes (``processes`` of them, 1 = serial)."""
    if executor is not None:
        return executor
    n = _check_processes(processes)
    return Serial() if n == 1 else LocalProcesses(n)


def map_tasks(fn, tasks, executor, bar, *, shared=None, sizes=None) -> list:
    """``[fn(t, shared) for t in tasks]`` on ``executor``, advancing ``bar`` as tasks finish
    (by ``sizes[i]`` for task i, else by one)."""
    def done(i):
        bar.update(1 if sizes is None else sizes[i])

    return executor.map(fn, tasks, shared=shared, on_done=done)


def _count_block(task, _shared):
    seed, start, stop, rng, chunk = task
    return lattice_counts(seed, stop - start, rng=rng, chunk=chunk, first=start)


def count_blocks(seeds, n: int, rng: str, chunk: int, block: int = DEFAULT_BLOCK) -> list:
    """The tasks of ``draw_counts``: (seed, start, stop, rng, chunk) blocks of every stream."""
    return [(s, a, b, rng, chunk) for s in seeds for a, b in _chunks(n, block)]


def draw_counts(seeds, samples_per_seed: int, *, processes: int = 1, chunk: int = DEFAULT_CHUNK,
                rng: str = "hw", progress: bool = True, executor=None,
                block: int = DEFAULT_BLOCK) -> dict[int, np.ndarray]:
    """Lattice counts of each seed's first ``samples_per_seed`` words.

    Each stream is counted in blocks of ``block`` words on ``executor`` (default:
    ``processes`` local processes) and the blocks' tables are added: the same bits as
    ``lattice_counts`` of the whole stream, whatever runs the blocks.
    """
    seeds = _check_seeds(seeds)
    n = _check_samples(samples_per_seed)
    chunk = _check_chunk(chunk)
    _check_rng(rng)
    tasks = count_blocks(seeds, n, rng, chunk, _check_chunk(block))
    executor_ = executor_for(processes, executor)
    bar = _progress_bar(n * len(seeds), progress, "sampling", "sample")
    try:
        blocks = map_tasks(_count_block, tasks, executor_, bar,
                           sizes=[b - a for _, a, b, _, _ in tasks])
    finally:
        bar.close()
        if executor is None:
            executor_.shutdown()
    dtype = np.uint32 if n < 2**32 else np.uint64
    out = {}
    for (seed, *_), counts in zip(tasks, blocks, strict=True):
        if seed in out:
            out[seed] += counts
        else:  # the first block's table is the stream's (no zeroed table to add it to)
            out[seed] = counts.astype(dtype, copy=False)
    return {s: out[s] for s in seeds}


def _evaluate_task(item, shared):
    name, pipeline = item
    law = LatticeLaw.of(name, pipeline)
    counts = shared["counts"]
    stats = [law.sample_stats(counts[s]) for s in shared["seeds"]]
    extra = shared["extra"](law) if shared["extra"] else {}
    return name, stats, law.noncentrality(), law.exact_ks(), extra


def evaluate(pipelines: dict, counts: dict[int, np.ndarray], *, processes: int = 1,
             progress: bool = True, extra=None, executor=None) -> dict[str, CandidateResult]:
    """Per-seed bin counts and KS of every pipeline on the given lattice counts.

    ``pipelines`` maps a name to a callable u → g (float32). One task per candidate
    on ``executor`` (default: ``processes`` local processes), which receives the
    counts once; each task builds one ``LatticeLaw``. ``extra(law) -> dict``, if
    given, is computed on each law too (``CandidateResult.extra``).
    """
    if not pipelines:
        raise ValueError("pipelines must not be empty")
    for name, pipe in pipelines.items():
        if not callable(pipe):
            raise ValueError(f"pipeline {name!r} must be callable u -> g")
    seeds = list(counts)
    sizes = {int(counts[s].sum()) for s in seeds}
    if len(sizes) != 1:
        raise ValueError("all seeds must have the same number of samples")
    if extra is not None and not callable(extra):
        raise ValueError("extra must be a callable law -> dict")
    executor_ = executor_for(processes, executor)
    bar = _progress_bar(len(pipelines), progress, "candidates", "cand")
    try:
        pairs = map_tasks(_evaluate_task, list(pipelines.items()), executor_, bar,
                          shared={"counts": counts, "seeds": seeds, "extra": extra})
    finally:
        bar.close()
        if executor is None:
            executor_.shutdown()
    n = sizes.pop()
    out = {}
    for name, stats, lam, exact_ks, more in pairs:
        bins = np.stack([b for b, _ in stats])
        ks = np.array([k for _, k in stats])
        out[name] = CandidateResult(name, seeds, n, bins, ks, lam, exact_ks, more)
    return out


def run(pipelines: dict, seeds, samples_per_seed: int, *, processes: int = 1,
        chunk: int = DEFAULT_CHUNK, rng: str = "hw", progress: bool = True,
        extra=None, executor=None) -> MonteCarloResult:
    """Sample every pipeline on the streams of ``seeds``: ``samples_per_seed`` draws each.

    All candidates see the same uniforms (common random numbers). Results do
    not depend on ``processes``, ``executor`` or ``chunk``. Memory: one 2^24 count table per
    seed, whatever the number of samples.
    """
    if not isinstance(pipelines, dict) or not pipelines:
        raise ValueError("pipelines must be a non-empty dict of name -> callable")
    start = time.perf_counter()
    counts = draw_counts(seeds, samples_per_seed, processes=processes, chunk=chunk, rng=rng,
                         progress=progress, executor=executor)
    mid = time.perf_counter()
    cands = evaluate(pipelines, counts, processes=processes, progress=progress, extra=extra,
                     executor=executor)
    end = time.perf_counter()
    return MonteCarloResult(cands, list(counts), int(samples_per_seed), rng, mid - start, end - mid)


def per_sample_stats(pipeline, seed: int, n: int, *, rng: str = "hw",
                     chunk: int = DEFAULT_CHUNK) -> tuple[np.ndarray, float]:
    """(64 bin counts, KS) by running ``pipeline`` on every sampled u — the slow reference.

    Holds all N outputs in memory for the KS sort; meant for small runs.
    """
    n = _check_samples(n)
    chunk = _check_chunk(chunk)
    outputs = []
    bins = np.zeros(N_BINS, dtype=np.int64)
    for start, stop in _chunks(n, chunk):
        g = np.asarray(pipeline(uniform_from_words(stream_words(seed, start, stop, rng))))
        bins += np.bincount(bin_index(g), minlength=N_BINS)
        outputs.append(g.astype(np.float32))
    return bins, ks_of_sample(np.concatenate(outputs))
