"""The compiled kernels give the NumPy path's bits: the SFU models, a run of the simulator, the
Monte Carlo's counts and KS distances (the ``fast`` extra changes speed, nothing else)."""

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rslab.machine.simulator import simulate
from rslab.numerics import compiled
from rslab.numerics import montecarlo as mc
from rslab.numerics.fastlog import FastExp2, FastLog2

pytestmark = pytest.mark.skipif(
    compiled.kernels() is None, reason="no compiled kernels (no numba, or RSLAB_COMPILED=0)")

SPECIAL_BITS = np.array([0, 0x80000000, 1, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000,
                         0x00800001, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000,
                         0xFFC00000, 0x7F800001, 0x3F800000, 0x3F7FFFFF, 0x3F800001, 0xBF800000],
                        np.uint32)


def _inputs(seed: int = 0, n: int = 1 << 18) -> np.ndarray:
    """Random bit patterns, every special value, the floats around 1 (the log's plateau) and
    around exp2's range ends, as float32."""
    rng = np.random.default_rng(seed)
    near_one = np.arange(0x3F7E0000, 0x3F820000, dtype=np.uint32)
    edges = np.array([-126, -125.5, -126.00001, 126, 127.99999, 128, 1e-30, -1e-30, -1e-12,
                      -2.0**-33, -2.0**-34, 0.5, -0.5], np.float32).view(np.uint32)
    spread = (rng.random(n) * 300 - 150).astype(np.float32).view(np.uint32)
    random_bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([SPECIAL_BITS, edges, near_one, spread, random_bits]).view(np.float32)


def _same_bits(model, x):
    fast = model(x)
    with compiled.numpy_only():
        slow = model(x)
    assert compiled.backend() != "numpy"
    np.testing.assert_array_equal(fast.view(np.uint32), slow.view(np.uint32))


LOG2_CONFIGS = [FastLog2(), FastLog2(degree=1), FastLog2(output_fraction_bits=20),
                FastLog2(product_rounding="nearest", coeff_rounding="nearest"),
                FastLog2(zero_threshold=0), FastLog2(index_bits=3, c0_bits=8, c1_bits=20,
                                                     c2_bits=20, product_bits=10),
                FastLog2(index_bits=8, c1_bits=30, c2_bits=30, square_bits=30,
                         product_bits=30)]


@pytest.mark.parametrize("cfg", LOG2_CONFIGS, ids=range(len(LOG2_CONFIGS)))
def test_the_compiled_log2_has_the_numpy_bits(cfg):
    _same_bits(cfg, _inputs())


@pytest.mark.parametrize("cfg", [FastExp2(), FastExp2(index_bits=3, coeff_bits=20,
                                                      product_bits=30)])
def test_the_compiled_exp2_has_the_numpy_bits(cfg):
    _same_bits(cfg, _inputs())
    _same_bits(cfg, _inputs()[:768].reshape(6, 128))  # a FIFO's batch, two-dimensional


@settings(max_examples=25, deadline=None)
@given(index_bits=st.integers(1, 7), degree=st.integers(1, 2), c1=st.integers(4, 30),
       c2=st.integers(4, 30), square=st.integers(4, 40), product=st.integers(14, 40),
       rounding=st.sampled_from(["truncate", "nearest"]), fraction=st.integers(0, 14),
       threshold=st.sampled_from([0.0, 1e-4, 0.02]), seed=st.integers(0, 2**16))
def test_any_log2_configuration_has_the_numpy_bits(index_bits, degree, c1, c2, square, product,
                                                   rounding, fraction, threshold, seed):
    cfg = FastLog2(index_bits=index_bits, degree=degree, c0_bits=14, c1_bits=c1, c2_bits=c2,
                   square_bits=square, product_bits=product, product_rounding=rounding,
                   zero_threshold=threshold, output_fraction_bits=fraction or None)
    _same_bits(cfg, _inputs(seed, 1 << 12))


def test_toward_zero_rounding_keeps_the_numpy_path():
    cfg = FastLog2(output_rounding="toward_zero")
    _same_bits(cfg, _inputs(n=1 << 12))


def test_numpy_only_restores_the_compiled_models():
    with compiled.numpy_only():
        assert compiled.backend() == "numpy"
        assert compiled.kernel("exp2") is None
    assert compiled.backend().startswith("numba ")
    assert compiled.kernel("exp2") is compiled.kernels()["exp2"]


def test_a_simulated_sampler_is_the_same_run_with_either_path():
    from rslab.bench.machine import sampler_case

    program, kw = sampler_case(vocab=4096)
    fast = simulate(program, trace=True, **kw)
    with compiled.numpy_only():
        slow = simulate(program, trace=True, **kw)
    assert (fast.cycles, fast.ops, fast.stalls) == (slow.cycles, slow.ops, slow.stalls)
    np.testing.assert_array_equal(fast._R, slow._R)
    np.testing.assert_array_equal(fast.vmem, slow.vmem)
    assert fast.trace.issue_records == slow.trace.issue_records


def test_rslab_compiled_0_turns_the_kernels_off():
    code = "from rslab.numerics import compiled; print(compiled.backend())"
    env = dict(os.environ, RSLAB_COMPILED="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "numpy"


def _both(fn):
    fast = fn()
    with compiled.numpy_only():
        slow = fn()
    return fast, slow


def test_the_compiled_histogram_gives_the_same_counts():
    fast, slow = _both(lambda: mc.draw_counts((3, 7), 3 * 10**6 + 11, chunk=2**20,
                                              block=2**21, progress=False))
    assert list(fast) == list(slow) == [3, 7]
    for seed in fast:
        assert fast[seed].dtype == slow[seed].dtype
        np.testing.assert_array_equal(fast[seed], slow[seed])


@pytest.mark.parametrize("case", ["random", "nan", "one", "ties"])
def test_the_compiled_ks_line_gives_the_same_distance(case):
    rng = np.random.default_rng(5)
    n = {"one": 1}.get(case, 100_000)
    f = np.sort(rng.random(n))
    after = np.sort(rng.integers(0, 10**6, n)).astype(np.uint32)
    if case == "nan":
        f[n // 2] = np.nan
    if case == "ties":
        f = np.round(f, 3)
    fast, slow = _both(lambda: mc.cumulative_ks(f, after, 10**6))
    assert fast == slow or (np.isnan(fast) and np.isnan(slow))


def test_a_monte_carlo_run_is_the_same_with_either_path():
    from rslab.numerics.gumbel import get_noise

    pipes = {"div8": get_noise("div8"), "naive": get_noise("naive")}
    fast, slow = _both(lambda: mc.run(pipes, (1, 2), 2 * 10**6, progress=False))
    for name in pipes:
        a, b = fast[name], slow[name]
        np.testing.assert_array_equal(a.ks, b.ks)
        np.testing.assert_array_equal(a.bin_counts, b.bin_counts)
        assert (a.lam, a.exact_ks) == (b.lam, b.exact_ks)


def test_without_a_writable_cache_the_kernels_compile_per_process():
    code = """
import numba, numpy as np
real = numba.njit
def njit(*args, **kw):
    if kw.get("cache"):
        raise RuntimeError("cannot cache function 'f': no locator available for file 'f.py'")
    return real(*args, **kw)
numba.njit = njit
from rslab.numerics import compiled
from rslab.numerics.fastlog import DEFAULT_FASTLOG2
print(compiled.backend(), DEFAULT_FASTLOG2(np.array([8.0], np.float32))[0])
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["numba", compiled.kernels()["numba"], "3.0"]


def test_the_command_line_starts_without_importing_numba():
    code = "import sys, rslab.cli; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
