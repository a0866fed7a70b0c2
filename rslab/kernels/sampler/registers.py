"""The full sampler's register map: constants at the top, loop-carried values below, a pool.

Constants live in the top vector registers, loop-carried values (accumulators,
argmax states, counters) in ``CARRIED`` below them, and the rest is the pool for
loop values. ``REGS`` names the constants by the roles the loop bodies of
:mod:`rslab.kernels.ops` read.
"""

V_LOG2E, V_M, V_RINV, V_ZERO, V_ONE_U, V_2M25 = "v63", "v62", "v61", "v60", "v59", "v58"
V_SCALE, V_LOG2C, V_EIGHTH, V_THREE = "v57", "v56", "v55", "v54"  # V_SCALE: c·2^-25
V_PM0, V_PM1, V_C1, V_C2, V_C3, V_STEP, V_C128 = "v53", "v52", "v51", "v50", "v49", "v48", "v47"
V_C256, V_C384 = "v57", "v56"  # Exact path only (the Fast path keeps its noise constants there)
TOKEN_OFFSETS = (V_ZERO, V_C128, V_C256, V_C384)
"""Token offset of stream k = 2b + h within an iteration: 256·b + 128·h."""
CARRIED = [f"v{i}" for i in range(34, 47)]
POOL = [f"v{i}" for i in range(34)]
LOOP_POOL = {  # loop registers: the pool, carried slots no loop of the path uses, free constants
    "fast": POOL + [f"v{i}" for i in range(39, 47)] + [V_PM0, V_PM1, V_C1, V_C2, V_C3],
    "exact": POOL + [f"v{i}" for i in range(44, 47)] + [V_EIGHTH, V_THREE],
}
GLUE = [f"v{i}" for i in range(20, 34)]  # scratch for straight-line code (loops are done then)
S_LB, S_QB, S_KEY, S_KS, S_FB = "s1", "s2", "s3", "s4", "s5"
S_X, S_M, S_SUM, S_ACC = "s6", "s7", "s8", "s9"
S_T = [f"s{i}" for i in range(10, 20)]

REGS = {
    "src": S_LB, "dst": S_FB, "landed": S_FB, "q": S_QB, "key": S_KEY, "keys": S_KS,
    "max": V_M, "log2e": V_LOG2E, "rinv": V_RINV, "zero": V_ZERO, "one": V_ONE_U,
    "2^-25": V_2M25, "scale": V_SCALE, "log2c": V_LOG2C, "inv_k": V_EIGHTH, "log2k": V_THREE,
    "m0": V_PM0, "m1": V_PM1, "step": V_STEP,
}
"""Role → register, for the loop bodies (:mod:`rslab.kernels.ops`)."""
