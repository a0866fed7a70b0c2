"""rslab: rejection sampling on a simulated AI accelerator.

Subpackages: ``numerics`` (RNGs, fast log2, Gumbel noise, statistics),
``machine`` (the cycle-level vector-core simulator), ``kernels`` (programs that
run on it), ``viz`` (plots and widgets). ``reference`` holds the framework
sampler and ``schedule`` the modulo scheduler.
"""

__version__ = "0.1.0"
