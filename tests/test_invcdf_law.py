"""The inverse CDF's exact law: it sums to 1 and matches a brute force over the lattice."""

import numpy as np
import pytest

from rslab.numerics import invcdf
from rslab.numerics.rng import all_uniforms

LANES = invcdf.LANES


def _row(v, seed, zeros=0.3):
    rng = np.random.default_rng(seed)
    w = (rng.random(v) ** 3).astype(np.float32)
    w[rng.random(v) < zeros] = 0
    w[0] = np.float32(0.7)  # a heavy token
    return w


def _first_past(scan, valid, r, chunk=1 << 18):
    """Spec, per uniform: the first positive lane with scan > r, else the last positive lane."""
    out = np.empty(r.size, np.int64)
    last = np.flatnonzero(valid).max()
    for i in range(0, r.size, chunk):
        past = (scan[None, :] > r[i:i + chunk, None]) & valid[None, :]
        first = np.where(past.any(axis=1), past.argmax(axis=1), LANES)
        out[i:i + chunk] = np.minimum(first, last)
    return out


def brute_force(w, noise):
    """Token counts of every lattice uniform, step by step from the module's docstring (loops
    over groups and blocks, no intervals, no searchsorted)."""
    v = w.size
    nb = -(-v // LANES)
    blocks = np.zeros(nb * LANES, np.float32)
    blocks[:v] = w
    blocks = blocks.reshape(nb, LANES)
    sums = np.zeros(-(-nb // LANES) * LANES, np.float32)
    sums[:nb] = invcdf.tree_sum(blocks)
    groups = sums.reshape(-1, LANES)
    d = np.cumsum(invcdf.tree_sum(groups), dtype=np.float32)
    total = d[-1]
    u = all_uniforms()
    x = np.minimum(u * total, np.nextafter(total, np.float32(0)))
    k = sum((x >= dk).astype(np.int64) for dk in d)
    block = np.empty(u.size, np.int64)
    r2 = np.empty(u.size, np.float32)
    for g in np.unique(k):
        at = k == g
        r1 = x[at] - (d[g - 1] if g else np.float32(0))
        scan = invcdf.lane_scan(groups[g])
        j = _first_past(scan, groups[g] > 0, r1)
        excl = np.concatenate([[np.float32(0)], scan[:-1]])
        block[at] = LANES * g + j
        r2[at] = r1 - excl[j]
    if noise == "u24":
        token = np.empty(u.size, np.int64)
        for b in np.unique(block):
            at = block == b
            token[at] = LANES * b + _first_past(invcdf.lane_scan(blocks[b]), blocks[b] > 0,
                                                r2[at])
        return np.bincount(token, minlength=nb * LANES)[:v], 24
    first = np.bincount(block, minlength=nb)
    counts = np.zeros(nb * LANES, np.int64)
    for b in np.flatnonzero(first):
        scan = invcdf.lane_scan(blocks[b])
        lanes = _first_past(scan, blocks[b] > 0, u * scan[-1])
        counts[LANES * b:LANES * (b + 1)] = first[b] * np.bincount(lanes, minlength=LANES)
    return counts[:v], 48


@pytest.mark.heavy
@pytest.mark.parametrize("noise", ["u24", "wide"])
@pytest.mark.parametrize("v,seed", [(200, 1)])
def test_exact_law_sums_to_one_and_matches_brute_force(noise, v, seed):
    w = _row(v, seed)
    law = invcdf.exact_law(w, noise)
    assert int(law.counts.sum()) == 2**law.bits
    assert law.probs.sum() == 1.0
    counts, bits = brute_force(w, noise)
    assert bits == law.bits
    assert np.array_equal(law.counts, counts)
    assert np.all(law.counts[w == 0] == 0)


def test_wide48_law_sums_to_one_and_its_boundaries_are_the_draws():
    """2^48 values of K per block cannot be enumerated; each lane's interval of K is checked at
    both of its ends against the draw, and the counts sum to 2^72 exactly."""
    w = _row(300, 4)
    law = invcdf.exact_law(w, "wide48")
    assert int(law.counts.sum()) == 2**72 and law.bits == 72
    assert np.all(law.counts[w == 0] == 0)
    rng = np.random.default_rng(1)
    for trial in range(6):
        block = (rng.random((1, LANES)) ** 4).astype(np.float32)
        block[rng.random(block.shape) < 0.3] = 0
        block[0, rng.integers(LANES)] = 30.0 * trial + 1  # a heavy lane somewhere
        counts = invcdf.wide48_lane_counts(block)[0]
        assert int(counts.sum()) == 2**48 and np.all(counts[block[0] == 0] == 0)
        ends = np.cumsum(counts)
        lanes = np.flatnonzero(counts)
        k = np.concatenate([ends[lanes] - counts[lanes], ends[lanes] - 1])
        got = invcdf._two_sided(np.broadcast_to(block, (k.size, LANES)), k)
        assert np.array_equal(got, np.concatenate([lanes, lanes]))


def test_wide48_resolves_the_tail_beside_a_heavy_token():
    w = np.full(1024, 1e-7, np.float32)
    w[3] = 1.0
    p = w / w.astype(np.float64).sum()
    rel = {n: np.abs(invcdf.exact_law(w, n).probs / p - 1)[4:128].max() for n in ("wide", "wide48")}
    assert rel["wide48"] < 1e-3 < rel["wide"]


def test_exact_law_is_the_draw_at_every_sampled_uniform():
    """At a larger V: the law's interval for each lattice point is the reference draw's token."""
    w = _row(5_000, 3, zeros=0.1)
    law = invcdf.exact_law(w, "u24")
    ks = np.arange(0, 2**24, 4093)
    u = all_uniforms()[ks]
    p = invcdf.prefix(np.broadcast_to(w, (ks.size, w.size)).copy())
    tokens = invcdf.pick(p, "u24", u)
    assert np.array_equal(tokens, np.searchsorted(np.cumsum(law.counts), ks, side="right"))


def test_u24_chances_are_multiples_of_the_lattice_step():
    w = np.full(5000, 1e-9, np.float32)
    w[7] = 1.0
    law = invcdf.exact_law(w, "u24")
    tail = law.probs[w < 2**-24]  # each tail token is 1/60 of a lattice step
    assert np.all((tail == 0) | (tail >= 2**-24))
    assert np.mean(tail == 0) > 0.9


@pytest.mark.parametrize("bad,match", [
    (np.ones(10, np.float64), "float32"), (np.zeros((2, 3), np.float32), "one row"),
    (np.zeros(10, np.float32), "positive total")])
def test_bad_rows_raise(bad, match):
    with pytest.raises(ValueError, match=match):
        invcdf.exact_law(bad, "u24")


def test_bad_noise_raises():
    with pytest.raises(ValueError, match="noise must be one of"):
        invcdf.exact_law(np.ones(10, np.float32), "u32")
