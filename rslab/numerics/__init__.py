"""Numerics: random numbers, the fast log2 emulator, Gumbel noise, statistics."""
