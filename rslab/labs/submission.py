"""A submitted file: a whole program, or a loop body the grader schedules for each variant.

A file with ``=`` outside its comments is a loop body in ``rslab pipeline``'s format
(:mod:`rslab.schedule.bodytext`); anything else is a whole program. A body is compiled for
each variant's machine (:func:`rslab.kernels.loops.bodyfile.compile_body`) with its trip
count set by the grader: the padded row's tokens over the tokens an iteration takes, read
off the stride of its memory operands on the contract's registers.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from rslab.labs.harness import Verdict
from rslab.labs.lab import EROW, LOGITS, QROW, SUMROW
from rslab.labs.variants import PAD_TOKENS, Variant
from rslab.machine.bf16 import BLOCK

MAX_BYTES = 2**20
"""The largest submission read (1 MiB)."""
TOKEN_BYTES = {r.register: (r.name, r.bytes_per_token) for r in (LOGITS, QROW, EROW, SUMROW)}


def is_body(text: str) -> bool:
    """Whether ``text`` is a loop body: a ``=`` on a line outside its comment."""
    return any("=" in line.split("#", 1)[0] for line in text.splitlines())


def tokens_per_iteration(body) -> int:
    """Tokens one iteration of ``body`` takes, from its strided memory operands."""
    seen = {}
    for op in body.ops:
        if op.addr is None or not op.addr.stride:
            continue
        if op.addr.base not in TOKEN_BYTES:
            known = ", ".join(f"{r} {name}" for r, (name, _) in TOKEN_BYTES.items())
            raise Verdict(f"does not fit the contract: the body steps {op.addr.base}, which "
                          f"holds no region of the contract ({known})")
        name, per_token = TOKEN_BYTES[op.addr.base]
        seen[Fraction(op.addr.stride) / per_token] = name
    if not seen:
        raise Verdict("does not fit the contract: no memory operand of the body steps through "
                      "a region (write [s1 + OFFSET + STRIDE*i])")
    if len(seen) > 1:
        raise Verdict("does not fit the contract: its memory operands step by different "
                      f"numbers of tokens per iteration ({sorted(map(str, seen))})")
    tokens = next(iter(seen))
    if tokens.denominator != 1 or tokens <= 0 or tokens % BLOCK or PAD_TOKENS % tokens:
        raise Verdict(f"does not fit the contract: an iteration takes {tokens} tokens; the "
                      "padded row is a multiple of 2,048 tokens: take 256, 512, 1,024 or 2,048")
    return int(tokens)


@dataclass(frozen=True)
class Submission:
    """A submitted file's ``text`` and ``label`` (its path)."""

    text: str
    label: str

    @classmethod
    def read(cls, path) -> Submission:
        """The file at ``path``; a file that cannot be read as text is a verdict."""
        from pathlib import Path

        path = Path(path)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise Verdict(f"cannot be read: {exc.strerror}") from None
        if len(raw) > MAX_BYTES:
            raise Verdict(f"is {len(raw):,} bytes long, at most {MAX_BYTES:,}")
        try:
            return cls(raw.decode("utf-8"), str(path))
        except UnicodeDecodeError:
            raise Verdict("is not UTF-8 text") from None

    @property
    def kind(self) -> str:
        return "loop body" if is_body(self.text) else "program"

    def program(self, variant: Variant) -> str:
        """The whole program to run on ``variant``: the text, or the body compiled for it."""
        if not is_body(self.text):
            return self.text
        from rslab.kernels.loops.bodyfile import compile_body, parse

        config = variant.config
        try:
            body = parse(self.text, self.label, config)
            n = variant.packed * BLOCK // tokens_per_iteration(body)
            return compile_body(self.text, self.label, config, n, body=body).program
        except ValueError as exc:
            raise Verdict(f"does not compile for {variant.name}: {exc}") from None
