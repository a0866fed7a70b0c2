"""A Python builder that emits assembly text, so built and hand-written programs are identical.

    b = Builder()
    b.emit("vli v9, 0.0")
    with b.loop(302):
        b.emit("vld v0, [s1 + 0]", "sadd s1, s1, 512")
    b.halt()
    program = b.program()          # == assemble(b.text())
"""

from contextlib import contextmanager

from rslab.machine.asm import Program, assemble


class Builder:
    """Accumulates lines of assembly; ``emit(*ops)`` adds one bundle."""

    def __init__(self):
        self.lines: list[str] = []
        self._indent = 0

    def _add(self, line: str):
        self.lines.append("    " * self._indent + line)

    def emit(self, *ops: str, comment: str | None = None) -> "Builder":
        """One bundle made of ``ops`` (each one op's text, e.g. ``"vadd.f32 v3, v1, v2"``)."""
        if not ops:
            raise ValueError("emit needs at least one op (use nop() for an empty bundle)")
        for op in ops:
            if not isinstance(op, str) or not op.strip() or ";" in op or "#" in op:
                raise ValueError(f"ops must be single op texts, got {op!r}")
        line = " ; ".join(op.strip() for op in ops)
        self._add(line + (f"  # {comment}" if comment else ""))
        return self

    def nop(self, n: int = 1) -> "Builder":
        """``n`` empty bundles."""
        for _ in range(n):
            self._add("nop")
        return self

    def label(self, name: str) -> "Builder":
        """Define a label at the next entry."""
        self.lines.append(f"{name}:")
        return self

    def comment(self, text: str) -> "Builder":
        """A comment line."""
        self._add(f"# {text}")
        return self

    @contextmanager
    def loop(self, count):
        """A hardware loop: ``count`` is an int or a scalar register name such as ``"s3"``."""
        self._add(f"loop {count}")
        self._indent += 1
        try:
            yield self
        finally:
            self._indent -= 1
            self._add("endloop")

    def halt(self) -> "Builder":
        """Stop once everything in flight is done."""
        self._add("halt")
        return self

    def text(self) -> str:
        """The program as assembly text."""
        return "\n".join(self.lines) + "\n"

    def program(self) -> Program:
        """``assemble(self.text())``."""
        return assemble(self.text())
