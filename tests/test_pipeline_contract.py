"""The contract of ``rslab pipeline``, checked against its specification: for a random loop
body, the command either refuses it with one error line ``FILE:LINE: ...``, or emits a
program that ``rslab sim`` runs and that stores, bit for bit, what the sequential
interpretation of the body (:mod:`rslab.schedule.sequential`) stores on the same random
VMEM and live-in registers, with and without ``--exact`` (a body whose loads through a base
of unknown value leave VMEM stops with a ``MachineError``, as its sequential run does). Two
bodies in three also load and store through two shared bases whose bytes meet across
iterations (distances 0 to 3, a store then a load in one iteration or in a later one,
stores to one address, strided accesses, a second base of the same or of an unknown
value)."""

import re
import subprocess
import sys

import numpy as np
import pytest
from fuzzing import examples
from hypothesis import event, given, settings
from hypothesis import strategies as st

from rslab.commands.pipeline import pipeline_text
from rslab.machine import MachineError, assemble, simulate
from rslab.machine.overrides import apply_overrides
from rslab.machine.pressure import loop_pressure
from rslab.schedule.body import Use
from rslab.schedule.bodytext import parse_body
from rslab.schedule.sequential import sequential_program

LOADS, LIVE, STORES, OUT = 0, 131072, 262144, 786432  # byte addresses of the regions
STORE_REGION = 65536  # bytes each store op may write over 100 iterations
SHARED = 860160  # where s10 and s11 point: loads and stores whose bytes meet
SEEN = 1 << 20  # the bytes compared (all random before the run)
BASES = {("ld", 0): "s7", ("ld", 512): "s1", ("ld", 1024): "s6", ("st", 0): "s8",
         ("st", 512): "s2", ("st", 4): "s9"}  # one base per stride: a base advances by one
BEFORE = [f"before: sli {b}, {LOADS if unit == 'ld' else STORES}"
          for (unit, _), b in BASES.items()]
BEFORE += [f"before: sli s3, {OUT}", f"before: sli s4, {LIVE}"]
LIVE_IN_VREGS = ("v1", "v2", "v40", "v50", "v51", "v60")
CARRIED_VREGS = ("v52", "v53", "v54", "v3")
HISTORY_VREGS = ("v55", "v56", "v57", "v58", "v4")  # the values of iterations -2, -3
VALU2 = ("vadd.f32", "vsub.f32", "vmul.f32", "vmax.f32", "vxor", "vadd.u32", "vmullo.u32",
         "vpack", "vcmpgt.f32")
VALU1 = ("vunpack.lo", "vunpack.hi", "vmov", "vcvt.u2f", "vcvt.f2u")
SFU = ("vexp2", "vlog2", "vrcp", "vexp2.p", "vlog2.p")
HOSTILE = ("t = vadd.f32 {v}", "vld v1, [s1 + 0]",
           "y = vst {v}, [s2 + 0]", "t = vadd {v}, {v}", "t = vunpak.lo {v}",
           "t = vli 8589934592", "t = vred.add {v}, {v}", "loop 3",
           "t = vshl {v}, 99999999999", "t = vadd.f32 {v}, v100", "t = vmov s7")


@st.composite
def shared_bases(draw) -> tuple[list, dict]:
    """(before: lines, base -> stride) of the shared bases: s10 at SHARED; s11 at SHARED or
    a little above (known to the scheduler), or copied from s10 (unknown to it)."""
    strides = {b: draw(st.sampled_from([0, 4, 256, 512, 512, 1024])) for b in ("s10", "s11")}
    if draw(st.booleans()):
        strides["s11"] = strides["s10"]
    s11 = draw(st.sampled_from([f"sli s11, {SHARED}", f"sli s11, {SHARED + 512}",
                                f"sli s11, {SHARED + 256}", "smov s11, s10"]))
    return [f"before: sli s10, {SHARED}", f"before: {s11}"], strides


def shared_access(draw, k: int, strides: dict, vectors: list, scalars: list) -> list:
    """One load or store through a shared base: a vector, a scalar or a strided one, at an
    offset that meets another access 0 to 3 iterations apart (or a few bytes off)."""
    base = draw(st.sampled_from(["s10", "s10", "s11"]))
    stride = strides[base]
    jitter = draw(st.sampled_from([0, 0, 0, 4, 256, -256, -4096]))
    off = stride * draw(st.integers(0, 3)) + jitter
    where = f"[{base} {'-' if off < 0 else '+'} {abs(off)} + {stride}*i]"
    kind = draw(st.sampled_from(["vld", "vst", "vst", "sld", "sst", "vld.s", "vst.s"]))
    value = draw(st.sampled_from(vectors or ["v1"]))
    if kind == "vld":
        vectors.append(f"m{k}")
        return [f"m{k} = vld {where}"]
    if kind == "sld":
        scalars.append(f"m{k}")
        return [f"m{k} = sld {where}"]
    if kind == "vld.s":
        vectors.append(f"m{k}")
        return [f"m{k} = vld.s {where}, {draw(st.sampled_from([1, 2, 3]))}"]
    if kind == "sst" and scalars:
        return [f"sst {draw(st.sampled_from(scalars))}, {where}"]
    if kind == "vst.s":
        return [f"vst.s {value}, {where}, {draw(st.sampled_from([1, 2, 3]))}"]
    return [f"vst {value}, {where}"]


FEATURES = ("several strides", "zero stride", "small pool", "pops reordered",
            "history after the loop", "X[-1] and X", "bank conflict")
"""What the generator gives at least a tenth of the bodies (each is valid: the sequential
meaning runs it)."""


def _feature(draw, name: str, features: set, odds: int = 4) -> bool:
    """One chance in ``odds`` to give the body ``name``."""
    if draw(st.integers(0, odds - 1)) == 0:
        features.add(name)
        return True
    return False


@st.composite
def bodies(draw):
    """(body text, trip count, valid, features): loads and stores with strides, ops of every
    slot class, SFU push/pop pairs, carried values at distances 1 to 3, live-ins, a register
    pool, the ``FEATURES``, and now and then a line the format refuses or a carried value
    one register short (``valid`` False)."""
    lines, valid, features = list(BEFORE), True, set()
    live = draw(st.lists(st.sampled_from(LIVE_IN_VREGS), max_size=3, unique=True))
    lines += [f"before: vld {r}, [s4 + {512 * k}]" for k, r in enumerate(live)]
    if draw(st.booleans()):
        lines.append(f"before: sli s5, {draw(st.integers(0, 2**32 - 1))}")
        scalars = ["s5"]
    else:
        scalars = []
    carried, distance = {}, {}
    for k in range(draw(st.integers(0, 2))):
        taken = [r for regs in carried.values() for r in regs]
        reg = draw(st.sampled_from([r for r in CARRIED_VREGS if r not in taken]))
        distance[k] = draw(st.sampled_from([1, 1, 2, 3]))
        extra = [r for r in HISTORY_VREGS if r not in taken][:distance[k] - 1]
        if draw(st.integers(0, 9)) == 0:
            extra, valid = extra[:-1], valid and not extra  # one register too few: refused
        carried[f"acc{k}"] = [reg, *extra]
        lines += [f"before: vld {r}, [s4 + {512 * (8 + 3 * k + j)}]"
                  for j, r in enumerate(carried[f"acc{k}"])]
    vectors, ops, pending, stores = list(live), [], [], 0
    ld = dict(BASES)
    if _feature(draw, "several strides", features):  # s1 with strides 512 and 1024
        ld["ld", 1024] = "s1"
        ops += ["w0 = vld [s1 + 0 + 512*i]", "w1 = vld [s1 + 4 + 1024*i]"]
        vectors += ["w0", "w1"]
    if _feature(draw, "zero stride", features):  # the same row every iteration, through s1
        ld["ld", 0] = "s1"
        ops += ["w2 = vld [s1 + 512 + 512*i]", "w3 = vld [s1 + 1024 + 0*i]"]
        vectors += ["w2", "w3"]
    if _feature(draw, "bank conflict", features):  # a column: lane stride L words
        lines.append("before: sli s13, 0")
        lane = draw(st.sampled_from([2, 4, 8, 32, 128]))
        ops.append(f"w4 = vld.s [s13 + {4 * draw(st.integers(0, 3))} + 4*i], {lane}")
        vectors.append("w4")
    if _feature(draw, "pops reordered", features):  # the FIFO returns them in push order
        x = draw(st.sampled_from(vectors or ["v1"]))
        ops += [f"@p0 = vexp2 {x}", f"@p1 = vlog2.p {x}", "p1 = vpop @p1", "p0 = vpop @p0"]
        vectors += ["p0", "p1"]
    kinds = ["ld", "ld", "valu", "valu", "valu1", "sfu", "xlu", "scalar", "st", "vli"]
    if draw(st.integers(0, 2)):
        before, strides = draw(shared_bases())
        lines += before
        kinds += ["shared"] * 8
    for k in range(draw(st.integers(1, 9))):
        pick = st.sampled_from(vectors or ["v1"])
        kind = draw(st.sampled_from(kinds))
        if kind == "shared":
            ops += shared_access(draw, k, strides, vectors, scalars)
        elif kind == "ld" or not vectors:
            off = draw(st.sampled_from([0, 512, 2048]))
            stride = draw(st.sampled_from([0, 512, 1024]))
            ops.append(f"x{k} = vld [{ld['ld', stride]} + {off} + {stride}*i]")
            vectors.append(f"x{k}")
        elif kind == "valu":
            ops.append(f"t{k} = {draw(st.sampled_from(VALU2))} {draw(pick)}, {draw(pick)}")
            vectors.append(f"t{k}")
        elif kind == "valu1":
            ops.append(f"t{k} = {draw(st.sampled_from(VALU1))} {draw(pick)}")
            vectors.append(f"t{k}")
        elif kind == "vli":
            ops.append(f"t{k} = vli {draw(st.integers(0, 2**32 - 1))}")
            vectors.append(f"t{k}")
        elif kind == "sfu":
            ops.append(f"@e{k} = {draw(st.sampled_from(SFU))} {draw(pick)}")
            pending.append(f"e{k}")
        elif kind == "xlu":
            ops.append(f"r{k} = {draw(st.sampled_from(['vred.add', 'vred.max']))} {draw(pick)}")
            scalars.append(f"r{k}")
        elif kind == "scalar" and scalars:
            a = draw(st.sampled_from(scalars))
            ops.append(draw(st.sampled_from([f"q{k} = sadd {a}, 3", f"q{k} = sxor {a}, {a}",
                                             f"q{k} = sfmul {a}, {a}"])))
            scalars.append(f"q{k}")
            if draw(st.booleans()):
                ops.append(f"b{k} = vbcast q{k}")
                vectors.append(f"b{k}")
        elif kind == "st" or kind == "scalar":
            scalar = scalars and draw(st.booleans())
            stride = draw(st.sampled_from([0, 4] if scalar else [0, 512]))
            where = f"[{BASES['st', stride]} + {STORE_REGION * stores} + {stride}*i]"
            ops.append(f"sst {draw(st.sampled_from(scalars))}, {where}" if scalar
                       else f"vst {draw(pick)}, {where}")
            stores += 1
        if pending and draw(st.booleans()):
            e = pending.pop(draw(st.sampled_from([0, 0, 0, len(pending) - 1])))
            ops.append(f"{e} = vpop @{e}")
            vectors.append(e)
    ops += [f"{e} = vpop @{e}" for e in pending]
    vectors += pending
    both = _feature(draw, "X[-1] and X", features, 2) if carried else False
    for k, (value, regs) in enumerate(carried.items()):
        d, reg = distance[k], regs[0]
        x = draw(st.sampled_from(vectors or ["v1"]))
        first = next((j + 1 for j, op in enumerate(ops) if op.startswith(f"{x} =")), 0)
        at = draw(st.integers(first, len(ops)))
        ops.insert(at, f"{value} = vadd.f32 {value}[-{d}], {x}")
        if both:  # reads the value of the iteration before and this one's
            ops.insert(draw(st.integers(at + 1, len(ops))),
                       f"n{k} = vsub.f32 {value}[-1], {value}")
            ops.append(f"vst n{k}, [s2 + {STORE_REGION * stores} + 512*i]")
            stores += 1
        if draw(st.booleans()):
            ops.append(f"u{k} = vmul.f32 {value}, {value}")
            ops.append(f"vst u{k}, [s2 + {STORE_REGION * stores} + 512*i]")
            stores += 1
        shown = regs if len(regs) > 1 and draw(st.integers(0, 3)) else regs[:1]
        if len(shown) > 1:
            features.add("history after the loop")
        lines += [f"after: vst {r}, [s3 + {512 * (3 * k + j)}]" for j, r in enumerate(shown)]
    if draw(st.integers(0, 5)) == 0:  # a scalar counter read one or two iterations back
        d = draw(st.sampled_from([1, 2]))
        carried["cnt"] = ["s14", "s15"][:d]
        lines += ["before: sli s14, 7", "before: sli s15, 11"]
        lines += [f"after: sst {r}, [s3 + {4096 + 4 * j}]" for j, r in enumerate(carried["cnt"])]
        ops.insert(draw(st.integers(0, len(ops))), f"cnt = sadd cnt[-{d}], 3")
    if carried:
        lines.append("carried " + " ".join(f"{v}={','.join(r)}" for v, r in carried.items()))
    if _feature(draw, "small pool", features, 5):  # within v5-v39, which the file names nowhere
        size = min(_needed(lines, ops) + draw(st.integers(0, 2)), 35)
        lo = draw(st.integers(5, 40 - size))
        lines.append(f"registers v{lo}-v{lo + size - 1} s20-s31")
    if draw(st.integers(0, 9)) == 0:
        value = draw(st.sampled_from(vectors or ["v1"]))
        line = draw(st.sampled_from(HOSTILE)).format(v=value)
        ops.insert(draw(st.integers(0, len(ops))), line)
        valid = False
    order = draw(st.permutations(lines))
    return "\n".join(list(order) + ops) + "\n", draw(st.integers(0, 100)), valid, features


def _needed(lines, ops) -> int:
    """The vector registers the body's values need run op after op: the most alive at once
    (each from its definition to its last read, a value read a few iterations back to the
    end of the iteration), one more for a carried value's renamed copy, and at least one."""
    try:
        body = parse_body("\n".join(lines + ops) + "\n")
    except ValueError:
        return 3
    last = {}
    for i, op in enumerate(body.ops):
        for s in op.register_srcs():
            name = getattr(s, "name", s)
            last[name] = len(body.ops) if isinstance(s, Use) else max(last.get(name, i), i)
    alive = [sum(1 for j, op in enumerate(body.ops[:i + 1]) if body.kinds.get(op.dst) == "v"
                 and op.dst not in body.carried and last.get(op.dst, j) >= i)
             for i in range(len(body.ops))]
    return max(alive + [0]) + len(body.carried) + 1


def _memory(seed: int) -> np.ndarray:
    """Random words for the loads and the live-ins (bytes 0 … LIVE + 16 vectors) and for the
    shared region (from SHARED - 4096 on)."""
    low = (LIVE + 16 * 512) // 4
    words = np.random.default_rng(seed).integers(0, 2**32, low + (SEEN - SHARED + 4096) // 4,
                                                 dtype=np.uint32)
    return {0: words[:low], SHARED - 4096: words[low:]}


MACHINES = [(), (), (), (("valu_slots", "1"),), (("valu_slots", "3"), ("sfu_hold", "0")),
            (("fifo_depth", "4"), ("sfu_hold", "3")), (("vmem_banks", "32"),),
            (("ld_slots", "2"), ("sfu_latency", "20"))]
"""Machine changes (``--config``) a body is pipelined and run for: the default machine, or
fewer or more VALU slots, another SFU hold, a shallow FIFO, fewer banks (a contiguous
vector load then conflicts four ways), two load ports and a slower SFU."""


def _stores(program: str, vmem: dict, machine=(), trace: bool = False):
    run = simulate(assemble(program), apply_overrides(machine), vmem=vmem, trace=trace)
    return run.read_vmem(0, SEEN // 4), run


def refused_or_equal(text: str, n: int, seed: int, exact: bool, machine=(),
                     unroll: int = 1) -> str:
    """'refused: WHY', 'equal', 'equal, memory ordered' (the schedule kept memory
    dependences) or 'both fault' (a load through a base of unknown value leaves VMEM, in the
    sequential body and in the program alike); fails the test on any other outcome. When the
    program's main loop runs enough passes for a steady state, its cycles per source
    iteration are the schedule's: II over the source iterations a scheduled one holds."""
    try:
        rep = pipeline_text(text, "body.s", machine, iterations=n, exact=exact,
                            max_stages=4, unroll=unroll)
    except ValueError as exc:
        message = str(exc)
        assert re.match(r"^body\.s:\d+: \S", message) and "\n" not in message, message
        return "refused: " + re.sub(r"^body\.s:\d+: ", "", message)[:60]
    vmem = _memory(seed)
    config = apply_overrides(machine)
    body = parse_body(text, machine=config)
    try:
        expected = _stores(sequential_program(body, n, config), vmem, machine)[0]
    except MachineError:
        with pytest.raises(MachineError):
            _stores(rep["program"], vmem, machine)
        known = body.memory(n, config).bases
        assert any(op.addr.base not in known for op in body.ops if op.addr), text
        return "both fault"
    got, run = _stores(rep["program"], vmem, machine, trace=True)
    bad = np.flatnonzero(expected != got)
    assert not bad.size, (f"word {bad[0]} (byte {4 * bad[0]}): {got[bad[0]]:#x}, the "
                          f"sequential body stores {expected[bad[0]]:#x}\n{text}")
    if rep["kernel_passes"] >= 5:
        loop = loop_pressure(run, 0)
        assert loop["cycles_per_source_iter"] == rep["ii"] / rep["body_unroll"], (loop, text)
    return "equal, memory ordered" if rep.get("memory") else "equal"


TALLY = {"bodies": 0, "valid": 0, "refused": 0, "reasons": {}, **dict.fromkeys(FEATURES, 0)}
"""What the property saw: bodies, valid ones, valid ones refused (by reason), each feature."""


@pytest.fixture(scope="module", autouse=True)
def refusal_rate(request):
    """After the module: the refusal rate of valid bodies, printed (``make fuzz`` shows it)
    and held to at most 5 % once there are a hundred; each feature in a tenth of them."""
    yield
    if TALLY["valid"] < 100:
        return
    rate = TALLY["refused"] / TALLY["valid"]
    line = (f"pipeline contract: {TALLY['bodies']} bodies, {TALLY['valid']} valid, "
            f"{TALLY['refused']} of them refused ({100 * rate:.1f} %); features: "
            + ", ".join(f"{f} {TALLY[f]}" for f in FEATURES))
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print("\n" + line)
        for why, count in sorted(TALLY["reasons"].items(), key=lambda kv: -kv[1]):
            print(f"  refused {count}: {why}")
    assert rate <= 0.05, line
    assert all(TALLY[f] >= TALLY["bodies"] / 10 for f in FEATURES), line


@examples("pipeline")
@given(case=bodies(), seed=st.integers(0, 2**32 - 1), exact=st.integers(0, 7),
       machine=st.sampled_from(MACHINES), unroll=st.sampled_from([1, 1, 1, 2, 3]))
def test_pipeline_refuses_or_stores_what_the_body_computes(case, seed, exact, machine, unroll):
    """On the machines of ``MACHINES``, a body scheduled as it is (one in eight also by the
    integer program, ``--exact``) or unrolled (``--unroll`` 2 or 3)."""
    text, n, valid, features = case
    exact = exact == 0 and unroll == 1
    outcome = refused_or_equal(text, n, seed, exact, machine, unroll)
    TALLY["bodies"] += 1
    TALLY["valid"] += valid
    for f in features:
        TALLY[f] += 1
    if valid and outcome.startswith("refused"):
        TALLY["refused"] += 1
        TALLY["reasons"][outcome] = TALLY["reasons"].get(outcome, 0) + 1
    event(("valid, " if valid else "invalid, ") + outcome.split(":")[0]
          + (" (--exact)" if exact else "") + (f" (--unroll {unroll})" if unroll > 1 else ""))


FIXED = [
    ("x = vld [s1 + 0 + 512*i]\ny = vadd.f32 x, v1\nvst y, [s2 + 0 + 512*i]\n", 5),
    ("carried acc=v52\nbefore: vld v52, [s4 + 0]\nafter: vst v52, [s3 + 0]\n"
     "x = vld [s1 + 0 + 512*i]\nacc = vadd.f32 acc[-1], x\n", 9),
    ("x = vld [s1 + 0 + 512*i]\n@e = vexp2 x\ne = vpop @e\nr = vred.add e\n"
     "sst r, [s9 + 0 + 4*i]\n", 7),
    ("carried f=v52,v53\nbefore: vld v52, [s4 + 0]\nbefore: vld v53, [s4 + 512]\n"  # Fibonacci
     "after: vst v52, [s3 + 0]\nf = vadd.f32 f[-1], f[-2]\nvst f, [s2 + 0 + 512*i]\n", 12),
]
ALIASING = [
    (f"before: sli s10, {SHARED}\n"  # each iteration loads what the one before stored
     "x = vld [s10 + 0 + 512*i]\ny = vadd.f32 x, v1\nvst y, [s10 + 512 + 512*i]\n", 10),
    (f"before: sli s10, {SHARED}\n"  # two stores to one address in one iteration
     "x = vld [s1 + 0 + 512*i]\nvst x, [s10 + 0 + 0*i]\nr = vred.add x\n"
     "sst r, [s10 + 0 + 0*i]\n", 6),
]


HISTORY = ("carried acc=v52,v53,v54,v55\n"
           + "".join(f"before: vld {r}, [s4 + {512 * k}]\n"
                     for k, r in enumerate(("v52", "v53", "v54", "v55")))
           + "".join(f"after: vst {r}, [s3 + {512 * k}]\n"
                     for k, r in enumerate(("v52", "v53", "v54", "v55")))
           + "x = vld [s1 + 0 + 512*i]\nacc = vadd.f32 acc[-{d}], x\n"
           "y = vsub.f32 acc[-1], acc\nvst y, [s2 + 0 + 512*i]\n")


@pytest.mark.parametrize("d", [2, 4])
def test_every_register_of_a_carried_value_after_every_trip_count(d):
    """acc[-d] with four registers and an op reading acc[-1] and acc: after the loop the four
    registers hold iterations n−1 … n−4 (or the values before the loop), for every trip count
    from 0 to 100, as the body's iterations run one after another leave them."""
    text = "\n".join(BEFORE) + "\n" + HISTORY.format(d=d)
    for n in range(101):
        assert refused_or_equal(text, n, n, False).startswith("equal"), n


@pytest.mark.parametrize("body, n", ALIASING)
@pytest.mark.parametrize("exact", [False, True])
def test_bodies_whose_memory_meets_across_iterations(body, n, exact):
    """Two bodies the schedule once reordered wrongly (the property's first finds)."""
    text = "\n".join(BEFORE) + "\n" + body
    assert refused_or_equal(text, n, 1, exact) == "equal, memory ordered"


@settings(max_examples=1, deadline=None)
@given(st.just(0))
def test_a_handful_through_the_command_line(tmp_path_factory, _):
    """The same check through the real commands: ``rslab pipeline -o -`` piped into
    ``rslab sim -`` runs, and the program file matches the in-process one."""
    tmp = tmp_path_factory.mktemp("contract")
    np.save(tmp / "vmem.npy", _memory(1)[0])
    for k, (body, n) in enumerate(FIXED):
        text = "\n".join(BEFORE) + "\n" + body
        (tmp / f"b{k}.s").write_text(text)
        assert refused_or_equal(text, n, 1, False) == "equal"
        out = subprocess.run([sys.executable, "-m", "rslab", "pipeline", str(tmp / f"b{k}.s"),
                              "--iterations", str(n), "-o", "-"],
                             capture_output=True, text=True, check=True)
        assert out.stdout == pipeline_text(text, str(tmp / f"b{k}.s"), iterations=n)["program"]
        assert "ResMII" in out.stderr
        sim = subprocess.run([sys.executable, "-m", "rslab", "sim", "-", "--vmem",
                              str(tmp / "vmem.npy")], input=out.stdout, capture_output=True,
                             text=True)
        assert sim.returncode == 0, sim.stderr
