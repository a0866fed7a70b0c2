"""Property tests on every public surface: random assembly programs (valid and garbage),
random sampler inputs, random numerics arguments and random command lines. The property:
the call succeeds with a result that keeps its contract, or raises the package's own error
(``ValueError``, ``AssemblyError``, ``MachineError``) naming the argument or the line —
never another exception, never a hang (a step budget), never a non-finite or out-of-range
result. Example counts: :mod:`fuzzing` (``make test`` quick, ``make fuzz`` long)."""

import contextlib
import functools
import io
import tempfile
from pathlib import Path
from unittest import mock

import numpy as np
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from rslab import cli
from rslab.fixtures import empty_residual_inputs, sampled_inputs
from rslab.kernels.sampler.draws import SAMPLER_DRAWS
from rslab.kernels.sampler.plans import ALL_ACCEPT_BASELINE, FIRST_REJECT_BASELINE, OPTIMISED
from rslab.kernels.sampler.run import run_sampler
from rslab.machine import AssemblyError, MachineConfig, MachineError, assemble, simulate
from rslab.machine.isa import SPECS
from rslab.numerics import stats
from rslab.numerics.fastlog import FastExp2, FastLog2
from rslab.numerics.rng import mix32, uniform_from_index, uniform_from_words
from rslab.reference import rejection_sample

# ----------------------------------------------------------------- assembly programs

INTS = ["0", "1", "-1", "4", "7", "31", "32", "128", "512", "0x7fffffff", "0x80000000",
        "4294967295", "4294967296", "-2147483649", "9223372036854775808", "-4", "1_000", "08"]
FLOATS = ["1.5", "-0.5", "3.5e38", "-1e39", "1e400", "1e-50", "inf", "-inf", "nan", "2.5e-3"]
GARBAGE = ["", "banana", "[s1", "v", "s", "@", "v1v2", "[v1 + 0]", "#", "1e", "0x"]
MNEMONICS = sorted(SPECS) + ["vfoo", "VADD.F32", "loop", "endloop", "halt"]


def _register(kind):
    top = {"v": 70, "s": 36}[kind]
    return st.integers(0, top).map(lambda i: f"{kind}{i}")


_CHOICES = {"v": _register("v"), "s": _register("s"), "int": st.sampled_from(INTS),
            "float": st.sampled_from(FLOATS), "garbage": st.sampled_from(GARBAGE),
            "label": st.sampled_from(["a", "b", "top", "9x"]),
            "mem": st.builds(lambda r, sign, imm: f"[s{r} {sign} {imm}]", st.integers(0, 34),
                             st.sampled_from("+-"), st.sampled_from(INTS + ["0", "4", "512"]))}
_WRONG = st.one_of(*(_CHOICES[k] for k in ("v", "s", "int", "garbage")))


@functools.cache
def _operand(kind):
    """Mostly the right kind of operand for ``kind``, sometimes a wrong or garbage one."""
    kind = kind.rstrip("?")
    right = {"vd": "v", "va": "v", "sd": "s", "sa": "s", "sai": "s", "vai": "v", "imm": "int",
             "num": "float", "mem": "mem", "label": "label", "garbage": "garbage"}[kind]
    extra = {"sai": ["int"], "vai": ["int"], "num": ["int"]}.get(kind, [])
    return st.one_of(*[_CHOICES[k] for k in [right, right, right, *extra]], _WRONG)


@st.composite
def _op(draw):
    name = draw(st.sampled_from(MNEMONICS))
    sig = SPECS[name].sig if name in SPECS else ("va",)
    count = draw(st.integers(max(0, len(sig) - 1), len(sig) + 1))
    kinds = list(sig[:count]) + ["garbage"] * (count - len(sig))
    ops = [draw(_operand(k)) for k in kinds]
    sep = draw(st.sampled_from([" ", "\t", "  "]))
    return name + (sep + ", ".join(ops) if ops else "")


_OP = _op()
_LINE = st.one_of(
    *[st.lists(_OP, min_size=1, max_size=3).map(" ; ".join)] * 6,
    st.one_of(st.sampled_from(["0", "1", "3", "4294967295", "-1"]), _register("s")).map(
        "loop ".__add__),
    st.sampled_from(["endloop", "halt"]),
    st.tuples(st.sampled_from(["a", "b", "top"]),
              st.one_of(st.just(""), _OP, st.just("endloop"))).map(": ".join),
    st.text(max_size=8).map("# ".__add__),
    st.text(max_size=12))
"""One line of a program: a bundle, a directive, a label, a comment or garbage."""


PROGRAM_CONFIG = MachineConfig().with_(vmem_bytes=1 << 16, fifo_depth=4)
MAX_STEPS = 3000


@examples("programs")
@given(lines=st.lists(_LINE, min_size=1, max_size=12),
       sregs=st.dictionaries(st.integers(0, 31), st.integers(0, 2**32 - 1), max_size=3))
def test_random_programs_end_or_raise_naming_the_line(lines, sregs):
    text = "\n".join(lines)
    try:
        program = assemble(text)
    except AssemblyError as exc:
        assert 1 <= exc.line <= max(1, len(text.splitlines()))
        return
    try:
        run = simulate(program, PROGRAM_CONFIG, hbm=np.zeros(64, np.uint32), sregs=sregs,
                       max_steps=MAX_STEPS)
    except MachineError as exc:
        assert exc.line is not None and 1 <= exc.line <= len(text.splitlines()), exc
        assert exc.pc is not None
        return
    assert 0 <= run.bundles <= MAX_STEPS and run.cycles >= run.bundles
    assert all(0 <= run.sreg(i) < 2**32 for i in range(PROGRAM_CONFIG.sregs))


# ----------------------------------------------------------------- sampler inputs

ARGUMENTS = ("target_logits", "draft_probs", "draft_token_ids", "path", "seed", "noise",
             "diagnostics", "method")
EXTREME = [0.0, -0.0, 1.0, -3.0, 30.0, 600.0, 700.0, 1e7, -1e7, 3e38, -3.4e38, 1e-45,
           np.inf, -np.inf, np.nan]


def _floats(shape, dtype):
    values = st.one_of(st.floats(-50, 50, width=32), st.sampled_from(EXTREME))
    size = int(np.prod(shape))
    return st.lists(values, min_size=size, max_size=size).map(
        lambda v: _cast(np.asarray(v, np.float64).reshape(shape), dtype))


def _cast(a, dtype):
    with np.errstate(all="ignore"):
        return a.astype(dtype)


def _normalised(a):
    with np.errstate(all="ignore"):
        return np.abs(a) / max(1.0, np.abs(a).sum())


@st.composite
def _sampler_case(draw):
    R, S, V = draw(st.integers(0, 3)), draw(st.integers(0, 3)), draw(st.integers(1, 6))
    dtype = draw(st.sampled_from([np.float32] * 8 + [np.float64, np.float16, np.int32]))
    lshape = draw(st.sampled_from([(R, S + 1, V)] * 6 + [(R, S, V), (R, S + 1), (R, S + 1, V + 1)]))
    logits = draw(_floats(lshape, dtype))
    q = draw(st.one_of(
        st.just(np.full((R, S, V), 1.0 / V, np.float32)),
        _floats((R, S, V), np.float32).map(_normalised),
        st.builds(lambda k: np.eye(V, dtype=np.float32)[np.full((R, S), k % V)],
                  st.integers(0, 5)),
        _floats(draw(st.sampled_from([(R, S, V), (R, S + 1, V)])), np.float32)))
    ids = draw(st.one_of(st.integers(-1, V).map(lambda k: np.full((R, S), k, np.int64)),
                         st.just(np.zeros((R, S), np.float32)),
                         st.just(np.zeros((R, S + 1), np.int64))))
    kwargs = {"path": draw(st.sampled_from(["exact", "fast", "fast", "slow", 1])),
              "seed": draw(st.one_of(st.integers(-1, 2**64), st.sampled_from([True, 1.5]))),
              "noise": draw(st.sampled_from(["div8", "div14", "naive", "scaled", "precise",
                                             "div(1e-50)", "div(1e39)", "div(2.5)", "div(0)",
                                             "bogus", 8])),
              "diagnostics": draw(st.sampled_from([False, True, "yes"])),
              "method": draw(st.sampled_from(["gumbel"] * 4 + ["race", "invcdf", "bogus"]))}
    if kwargs["method"] != "gumbel" and draw(st.booleans()):
        kwargs["noise"] = draw(st.sampled_from([None, "naive", "wide", "u24", "wide48"]))
    return logits, q, ids, kwargs


@examples("sampler")
@given(case=_sampler_case())
def test_random_sampler_inputs_give_tokens_or_a_named_error(case):
    logits, q, ids, kwargs = case
    try:
        res = rejection_sample(logits, q, ids, **kwargs)
    except ValueError as exc:
        assert any(name in str(exc) for name in ARGUMENTS), exc
        return
    R, S1, V = logits.shape
    n = res.num_accepted
    assert ((0 <= n) & (n <= S1 - 1)).all()
    pos = np.arange(S1)[None, :]
    emitted = pos <= n[:, None]
    assert ((res.tokens >= 0) == emitted).all() and (res.tokens < V).all()
    for r in range(R):
        k = int(n[r])
        assert (res.tokens[r, :k] == ids[r, :k]).all()
        assert np.isfinite(logits[r, k, res.tokens[r, k]]), "a token of zero probability"


PLANS = (OPTIMISED, OPTIMISED, ALL_ACCEPT_BASELINE, FIRST_REJECT_BASELINE)


@st.composite
def _kernel_case(draw):
    R, S, V = draw(st.integers(1, 2)), draw(st.integers(1, 3)), 256 * draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**16))
    if draw(st.integers(0, 4)) == 0:
        inputs = empty_residual_inputs(R=R, S=S, V=V, seed=seed)
    else:
        inputs = sampled_inputs(R, S, V, mismatch=draw(st.sampled_from([0.0, 0.5, 2.0, 8.0])),
                                seed=seed, scale=draw(st.sampled_from([0.5, 3.0, 12.0])))
    return inputs, draw(st.sampled_from(SAMPLER_DRAWS)), draw(st.sampled_from(PLANS)), seed


@examples("kernels")
@given(case=_kernel_case())
def test_random_inputs_give_the_references_tokens_on_the_core(case):
    """The full sampler with a random draw and plan on random valid inputs (some with an
    empty residual): the reference's tokens, bit for bit."""
    inputs, (method, noise), plan, seed = case
    run = run_sampler(inputs, "fast", plan, seed=seed, method=method, noise=noise)
    assert run.tokens_match, (run.tokens, run.reference_tokens)


# ----------------------------------------------------------------- numerics arguments

KNOB = st.one_of(st.integers(-3, 70), st.sampled_from([6.5, "6", None, True, np.int64(8)]))
SPECIAL = np.array([0.0, -0.0, 1e-45, 1e-38, 0.5, 1.0, 1.0000001, 2.0, 3e38, np.inf, -1.0,
                    np.nan], np.float32)


@examples("numerics")
@given(fields=st.dictionaries(
    st.sampled_from(["index_bits", "degree", "c0_bits", "c1_bits", "c2_bits", "square_bits",
                     "product_bits", "zero_threshold", "output_fraction_bits"]),
    st.one_of(KNOB, st.floats(-1, 2), st.just("0")), max_size=3),
    exp2=st.dictionaries(st.sampled_from(["index_bits", "coeff_bits", "product_bits"]), KNOB,
                         max_size=2))
def test_random_fast_log_and_exp_configurations(fields, exp2):
    for make, kw in ((FastLog2, fields), (FastExp2, exp2)):
        try:
            unit = make(**kw)
        except ValueError as exc:
            assert any(name in str(exc) for name in kw), exc
            continue
        x = SPECIAL if make is FastLog2 else np.array([-200, -126, -1, 0, 0.5, 127.9, 200,
                                                       np.nan], np.float32)
        y = unit(x)
        assert y.dtype == np.float32 and y.shape == x.shape
        pos = np.isfinite(x) & (x >= np.finfo(np.float32).tiny)
        if make is FastLog2:
            assert np.isfinite(y[pos]).all() and np.abs(y[pos]).max() < 129
        else:
            assert (y[np.isfinite(x)] >= 0).all()


@examples("numerics")
@given(counts=st.lists(st.integers(-5, 10**6), min_size=0, max_size=6),
       total=st.one_of(st.none(), st.integers(-2, 10**7), st.just(2.5)),
       words=st.lists(st.integers(-2, 2**33), max_size=4))
def test_random_statistics_and_rng_arguments(counts, total, words):
    c = np.asarray(counts, np.int64)
    for call in (lambda: stats.chi2_from_counts(c),
                 lambda: stats.ks_from_counts(np.linspace(-2.0, 5.0, c.size), c, total),
                 lambda: uniform_from_index(np.asarray(words, np.int64)),
                 lambda: uniform_from_words(np.asarray(words, np.int64)),
                 lambda: mix32(np.asarray(words, np.int64))):
        try:
            out = call()
        except ValueError:
            continue
        values = np.asarray(out.statistic if hasattr(out, "statistic") else out, np.float64)
        assert np.isfinite(values).all()
        if call is not None and values.dtype.kind == "f" and np.asarray(out).dtype == np.float32:
            assert ((values > 0) & (values < 1)).all()


# ----------------------------------------------------------------- command lines

OUT = Path(tempfile.mkdtemp(prefix="rslab-fuzz-"))
CLI_TOKENS = ["--samples", "--grid", "--divisors", "--screen-seeds", "--final-seeds",
              "--finalists", "--processes", "--chunk", "--rng", "--scale", "--output", "--json",
              "--no-progress", "--only", "--vocab", "--path", "inf", "nan", "-1", "0", "3",
              "1e8", "2:16:1", "2:inf:1", "2:16:1e-12", "16:2:1", "8,14", "1e-50", "1-3", "3-1",
              "quick", "full", "hw", "exact", "machine", "nope", str(OUT / "x"),
              "/dev/null/x", str(OUT)]


def assert_exits_cleanly(argv):
    """``rslab ARGV`` exits 0, or 2 with one ``error:`` line and no traceback."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = cli.main(argv)
        except SystemExit as exc:
            status = exc.code
    assert status in (0, 2, None), status
    if status == 2:
        lines = [line for line in err.getvalue().splitlines() if "error:" in line]
        assert len(lines) == 1 and "Traceback" not in err.getvalue(), err.getvalue()


@examples("cli")
@given(command=st.sampled_from(["search", "bench", "nope", "--version"]),
       argv=st.lists(st.sampled_from(CLI_TOKENS), max_size=6))
def test_random_command_lines_exit_cleanly_with_one_error_line(command, argv):
    """Everything up to the work itself runs (parsing, the configuration, the output check);
    the search and the benchmarks are replaced by stubs."""
    with mock.patch("rslab.numerics.search.run_search") as search, \
            mock.patch("rslab.commands.search.print_table"), \
            mock.patch("rslab.bench.run", return_value={}):
        search.return_value.write.return_value = ("a.json", "a.csv")
        search.return_value.to_dict.return_value = {}
        assert_exits_cleanly([command, *argv])


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
(OUT / "garbage.s").write_text("vadd.f32 v1\nloop s40\nbanana\n")
(OUT / "runaway.s").write_text("a: jmp a\n")
TOOL_TOKENS = [str(EXAMPLES / "sumexp.s"), str(EXAMPLES / "sumexp_body.s"),
               str(OUT / "garbage.s"), str(OUT / "runaway.s"), str(OUT / "missing.s"), "-",
               "--config", "valu_slots=3", "sfu_latency=20", "valu_slots=0", "nope=1",
               "sfu_latency=x", "--timeline", "0:40", "9:3", "--trace", str(OUT / "t.json"),
               "/dev/null/t.json", "--flows", "--regs", "s3,v50", "x9", "--max-steps", "100",
               "0", "--vmem", str(OUT / "missing.npy"), "--json", "-o", str(OUT / "p.s"),
               "--iterations", "8", "--max-stages", "2", "--axis", "index_bits=4,5",
               "nope=1", "--divisors", "8,14", "--scale", "quick", "--output", str(OUT / "s"),
               "--processes", "1", "--no-progress", "inf", "-1"]


@examples("cli")
@given(command=st.sampled_from(["sim", "pipeline", "sweep"]),
       argv=st.lists(st.sampled_from(TOOL_TOKENS), max_size=6))
def test_random_tool_command_lines_exit_cleanly_with_one_error_line(command, argv):
    """``rslab sim``, ``pipeline`` and ``sweep`` on random argument lists (files valid, garbage,
    runaway and missing; standard input a short program): exit 0, or 2 with one error line;
    the sweep's enumeration is replaced by a stub."""
    with mock.patch("rslab.numerics.sweep.run_sweep") as sweep, \
            mock.patch("rslab.commands.sweep.print_table"), \
            mock.patch("sys.stdin", io.StringIO("sli s1, 3\nhalt\n")):
        sweep.return_value.write.return_value = ("a.json", "a.csv")
        sweep.return_value.to_dict.return_value = {}
        assert_exits_cleanly([command, *argv])
