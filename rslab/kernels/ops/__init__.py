"""Loop bodies: the ops of one iteration, as lists of :class:`rslab.schedule.Op`.

Each function builds one idea once — a row-max step, a sum-exp step, the uniform
from an RNG word, the Gumbel noise, Philox, the argmax update — and takes the
registers it reads as live-ins from a mapping ``regs`` (role → register name, e.g.
``{"max": "v62", "log2e": "v63"}``), so the chapters' study loops and the full
sampler compose the same ops against their own register maps. Value names inside a
body are local; ``rslab.schedule`` turns them into registers.
"""
