"""Kernels that run on the simulated core, and the packed BF16 data layout they share."""
