"""The design-space sweep: which fast ``log2`` can a Gumbel sampler trust, and with which divisor?

A *design* is a ``FastLog2`` with some knobs changed (the axes: segments via
``index_bits``, coefficient width ``c1_bits``, per-binade output bits
``output_fraction_bits``, the plateau ``zero_threshold``, or any other field). Every
point, design × divisor k, is an exact enumeration of the Div-k noise
``g = −(fl(t/k) + log2 k)`` over all 2^24 lattice uniforms, each with that design's
own first layer ``t``. Per point: λ (the expected χ² at N samples is 63 + N·λ), the
exact KS distance, and the *zero mass* (the probability that the second log returns
exactly 0, the plateau's atom). Per design: the best divisor (smallest λ, ties by KS).

Points are independent tasks (:mod:`rslab.executors`), ordered design by design so a
worker reuses a design's first layer. Presets per scale (``sweep_config``): ``quick``
for tests, ``book`` for the Div14 chapter's heat map, ``full`` for the command line.
"""

from __future__ import annotations

import csv
import itertools
import json
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np

from rslab.executors import make_executor
from rslab.numerics import montecarlo as mc
from rslab.numerics import search
from rslab.numerics.fastlog import DEFAULT_FASTLOG2, FastLog2
from rslab.numerics.gumbel import second_layer_parts

KNOBS = tuple(f.name for f in fields(FastLog2))
"""The FastLog2 fields a sweep may vary."""
REFERENCE_N = 10**9
"""The sample size at which the table quotes the expected χ² (the note's 10^9)."""

PRESETS = {
    "quick": ({"index_bits": (6,), "c1_bits": (9, 12)}, (8.0, 9.0, 14.0)),
    "book": ({"index_bits": (5, 6, 7), "c1_bits": (9, 12)}, search.INTEGER_DIVISORS),
    "full": ({"index_bits": (5, 6, 7), "c1_bits": (8, 9, 10, 12),
              "output_fraction_bits": (None, 18),
              "zero_threshold": (DEFAULT_FASTLOG2.zero_threshold, 0.0)},
             search.INTEGER_DIVISORS),
}
"""Axes and divisors of each scale: ``book`` and ``full`` try every integer divisor 2–16, so
that each design's best divisor is its best integer; ``quick`` tries Div8, Div9 (the
calibrated design's best integer) and Div14."""


def _check_axes(axes) -> tuple:
    out = []
    for name, values in dict(axes).items():
        if name not in KNOBS:
            raise ValueError(f"axis {name!r} is not a FastLog2 field; known: {', '.join(KNOBS)}")
        values = tuple(values)
        if not values:
            raise ValueError(f"axis {name}: needs at least one value")
        if len(set(values)) != len(values):
            raise ValueError(f"axis {name}: values must be distinct, got {values}")
        out.append((name, values))
    return tuple(out)


@dataclass(frozen=True)
class SweepConfig:
    """Axes (FastLog2 field → values, every combination a design), divisors, base design."""

    scale: str
    axes: tuple
    divisors: tuple
    base: FastLog2 = field(default=DEFAULT_FASTLOG2, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "axes", _check_axes(self.axes))
        object.__setattr__(self, "divisors", search.check_divisors(self.divisors))
        if not isinstance(self.base, FastLog2):
            raise ValueError("base must be a FastLog2")
        self.designs()  # every design must be a valid FastLog2

    def designs(self) -> list[tuple[dict, FastLog2]]:
        """(knobs, FastLog2) of every combination of the axes' values, first axis slowest."""
        names = [n for n, _ in self.axes]
        out = []
        for combo in itertools.product(*(v for _, v in self.axes)):
            knobs = dict(zip(names, combo, strict=True))
            try:
                out.append((knobs, self.base.replace(**knobs)))
            except (ValueError, TypeError) as exc:
                raise ValueError(f"design {knobs}: {exc}") from None
        return out

    @property
    def points(self) -> int:
        return len(self.designs()) * len(self.divisors)

    def to_dict(self) -> dict:
        return {"scale": self.scale, "axes": {n: list(v) for n, v in self.axes},
                "divisors": list(self.divisors), "base": asdict(self.base)}


def sweep_config(scale: str | None = None, *, axes=None, divisors=None) -> SweepConfig:
    """The preset of a scale, with ``axes`` (merged over the preset's) or ``divisors`` changed."""
    from rslab.scale import by_scale, current_scale

    scale = current_scale() if scale is None else scale
    preset_axes, preset_divisors = by_scale(PRESETS["quick"], PRESETS["book"], PRESETS["full"],
                                            scale)
    merged = {**preset_axes, **dict(axes or {})}
    return SweepConfig(scale, tuple(merged.items()),
                       tuple(preset_divisors if divisors is None else divisors))


def point(task, _shared=None) -> dict:
    """One point: the exact figures of divisor k under one design (a task of ``run_sweep``)."""
    design, knobs, k = task
    try:
        t = search._first_layer(design)
    except ValueError as exc:  # the design leaves no positive first layer
        return {**knobs, "divisor": k, "name": search.divisor_name(k), "error": str(exc)}
    _, l2, g = second_layer_parts(t, k, design)
    g.sort(kind="stable")  # its own array, nearly sorted: a merge sort in place
    row = search.sorted_row(search.divisor_name(k), g, tail_ys=())
    return {**knobs, "divisor": k, "name": row["name"], "lam": row["lam"],
            "expected_chi2": mc.N_BINS - 1 + REFERENCE_N * row["lam"],
            "exact_ks": row["exact_ks"],
            "zero_mass": float(np.count_nonzero(l2 == 0) / mc.LATTICE_SIZE),
            "p_inf": row["p_inf"], "g_max": row["g_max"]}


def best_rows(rows, axes) -> list[dict]:
    """Per design (in sweep order), its best point: smallest λ, ties by exact KS."""
    names = [n for n, _ in axes]
    groups = {}
    for r in rows:
        groups.setdefault(tuple(r[n] for n in names), []).append(r)
    out = []
    for key, group in groups.items():
        ok = [r for r in group if "error" not in r]
        if not ok:
            out.append({**dict(zip(names, key, strict=True)), "error": group[0]["error"]})
            continue
        best = min(ok, key=lambda r: (r["lam"], r["exact_ks"]))
        out.append({**best, "best": best["name"],
                    "div8_lam": next((r["lam"] for r in ok if r["divisor"] == 8.0), None)})
    return out


@dataclass
class SweepResult:
    """Every point, the best divisor of every design, and how fast the sweep ran."""

    config: SweepConfig
    rows: list
    best: list
    seconds: float
    workers: int
    backend: str

    @property
    def points_per_second_per_core(self) -> float:
        return len(self.rows) / self.seconds / self.workers if self.seconds else float("nan")

    def grid(self, key: str = "lam") -> np.ndarray:
        """``key`` of every point as a (designs, divisors) array (NaN where a design fails)."""
        values = [r.get(key, np.nan) for r in self.rows]
        return np.array(values, dtype=float).reshape(-1, len(self.config.divisors))

    def to_dict(self) -> dict:
        """Everything, as plain JSON values (non-finite floats as text)."""
        return search._plain({
            "config": self.config.to_dict(), "rows": self.rows, "best": self.best,
            "seconds": self.seconds, "workers": self.workers, "backend": self.backend,
            "points": len(self.rows), "points_per_second_per_core":
                self.points_per_second_per_core})

    def write(self, path) -> tuple[Path, Path]:
        """``<path>.json`` (everything) and ``<path>.csv`` (one row per point)."""
        stem = Path(path)
        stem = stem.with_suffix("") if stem.suffix in (".json", ".csv") else stem
        stem.parent.mkdir(parents=True, exist_ok=True)
        json_path, csv_path = stem.with_suffix(".json"), stem.with_suffix(".csv")
        json_path.write_text(json.dumps(self.to_dict(), indent=2) + "\n")
        cols = [n for n, _ in self.config.axes] + [
            "name", "divisor", "lam", "expected_chi2", "exact_ks", "zero_mass", "p_inf",
            "g_max", "error"]
        with csv_path.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
            writer.writeheader()
            for r in self.rows:
                writer.writerow(search._plain(r))
        return json_path, csv_path


IN_PROCESS_POINTS = 8
"""A sweep of at most this many points runs in this process by default: starting processes and
sending each one the lattice costs more than a few points (3.3× at the quick preset's 4)."""


def run_sweep(config: SweepConfig, *, executor=None, progress: bool = True) -> SweepResult:
    """Every point of ``config`` on ``executor`` (default: local processes on every core, or
    this process for a small sweep), with a progress bar of points."""
    if not isinstance(config, SweepConfig):
        raise ValueError("config must be a SweepConfig")
    tasks = [(design, knobs, k) for knobs, design in config.designs() for k in config.divisors]
    own = executor is None
    if own:
        executor = make_executor(1 if len(tasks) <= IN_PROCESS_POINTS else None)
    bar = mc._progress_bar(len(tasks), progress, "sweep", "point")
    start = time.perf_counter()
    try:
        rows = mc.map_tasks(point, tasks, executor, bar)
    finally:
        bar.close()
        if own:
            executor.shutdown()
    seconds = time.perf_counter() - start
    return SweepResult(config, rows, best_rows(rows, config.axes), seconds,
                       min(executor.workers, len(tasks)), executor.name)
