"""The text of a program for the cores of a chip: one section per core, or one for all.

A file without section lines is one program that every core runs (``scid`` reads the core's
index into a register, so the program can branch on it or compute its addresses from it).
Otherwise every line belongs to the section opened by the last line before it of the form

    .core N          # core N runs this section
    .cores A-B       # cores A … B each run a copy of it
    .cores *         # every core without a section of its own

and nothing may precede the first. A core named by no section and not covered by ``*`` has
no program: it is idle (it takes no part in barriers). Each section is assembled on its own
(labels are local to it); errors name the line of the file.
"""

from __future__ import annotations

import re

from rslab.machine.asm import AssemblyError, Program, assemble

_SECTION = re.compile(r"^\s*\.(cores?)\s+(\S+)\s*(?:#.*)?$")


def _cores(kind: str, spec: str, count: int, line: int, text: str) -> list | None:
    """The cores a section line names (None: ``*``)."""
    if kind == "cores" and spec == "*":
        return None
    m = re.fullmatch(r"(\d+)(?:-(\d+))?", spec)
    if not m or (kind == "core") != (m.group(2) is None):
        raise AssemblyError(line, text, "a section is '.core N', '.cores A-B' or '.cores *'")
    first, last = int(m.group(1)), int(m.group(2) or m.group(1))
    if not first <= last < count:
        raise AssemblyError(line, text, f"the chip has cores 0…{count - 1}")
    return list(range(first, last + 1))


def assemble_sections(text: str, cores: int) -> list[Program | None]:
    """One ``Program`` per core of a ``cores``-core chip (None: an idle core)."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    lines = text.splitlines()
    heads = [(i, m) for i, line in enumerate(lines) if (m := _SECTION.match(line))]
    if not heads:
        program = assemble(text)
        return [program] * cores
    first = heads[0][0]
    if any(line.split("#", 1)[0].strip() for line in lines[:first]):
        raise AssemblyError(1, lines[0], "code before the first '.core' section")
    out: list[Program | None] = [None] * cores
    owner: dict[int, int] = {}
    rest = None
    for k, (i, m) in enumerate(heads):
        end = heads[k + 1][0] if k + 1 < len(heads) else len(lines)
        body = "\n" * (i + 1) + "\n".join(lines[i + 1:end])  # the file's line numbers
        program = assemble(body)
        named = _cores(m.group(1), m.group(2), cores, i + 1, lines[i])
        if named is None:
            if rest is not None:
                raise AssemblyError(i + 1, lines[i], "a second '.cores *' section")
            rest = program
            continue
        for c in named:
            if c in owner:
                raise AssemblyError(i + 1, lines[i], f"core {c} already has the section on "
                                    f"line {owner[c]}")
            owner[c], out[c] = i + 1, program
    return [rest if p is None else p for p in out]
