"""The Python API for test harnesses: pipeline a loop body, simulate a program with
inputs, read registers and VMEM. It is what ``rslab pipeline`` and ``rslab sim`` do, by
the same functions, and it stays as it is (new keywords only, with defaults)::

    from rslab import api

    plan = api.pipeline(body_text, config={"valu_slots": 3}, iterations=64)
    plan.ii, plan.stages, plan.unroll      # the schedule; plan.report: all of `--json`
    run = api.simulate(plan.program, vmem={0: x, 4096: (bits, "bf16-packed")})
    run.cycles, run.regs["s3"], run.reg("v50", "f32"), run.vmem(8192, 128, "f32")

``config`` is a mapping of ``rslab sim --config`` settings (``{"sfu_latency": 20}``) or a
``MachineConfig``. The program text ``plan.program`` opens with the ``# machine:`` line
of the machine it was scheduled for; ``simulate`` runs it on that machine when no
``config`` is given, and refuses a ``config`` that names another. VMEM values are given
as ``{byte address: array}`` or ``{byte address: (array, kind)}`` and read back by kind,
by the rules of :mod:`rslab.machine.words` (``f32``, ``i32``, ``u32``, ``bf16``,
``bf16-packed``; 8-byte arrays are refused, not narrowed). Every bad input raises one
``ValueError`` with the message the command line prints (``NAME:LINE: ...`` for a line
of the body or program).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from rslab.machine.config import MachineConfig
from rslab.machine.simulator import DEFAULT_MAX_STEPS


def _pairs(config) -> list[tuple[str, str]]:
    """``config`` (None, a settings mapping or a ``MachineConfig``) as ``key=value`` pairs."""
    from rslab.machine.overrides import differences

    if config is None:
        return []
    if isinstance(config, MachineConfig):
        return [(k, str(v)) for k, v in differences(config)]
    if isinstance(config, Mapping):
        return [(str(k), str(v)) for k, v in config.items()]
    raise ValueError(f"config must be a mapping of settings or a MachineConfig, got "
                     f"{type(config).__name__}")


def machine(config=None) -> MachineConfig:
    """The ``MachineConfig`` of ``config`` (a settings mapping, a ``MachineConfig`` or None
    for the default machine)."""
    from rslab.machine.overrides import apply_overrides

    if isinstance(config, MachineConfig):
        return config
    try:
        return apply_overrides(_pairs(config))
    except ValueError as exc:
        raise ValueError(f"config: {exc}") from None


@dataclass(frozen=True)
class Pipelined:
    """A pipelined loop: the whole program's text and what ``rslab pipeline --json`` reports."""

    program: str
    report: dict

    @property
    def ii(self) -> int:
        return self.report["ii"]

    @property
    def stages(self) -> int:
        return self.report["stages"]

    @property
    def unroll(self) -> int:
        return self.report["unroll"]


def pipeline(body_text: str, *, config=None, iterations: int | None = None,
             exact: bool = False, max_stages: int = 8, name: str = "<body>") -> Pipelined:
    """Modulo-schedule the loop body ``body_text`` (the format of ``rslab pipeline --help``)
    for the machine ``config``; ``iterations`` overrides the body's trip count."""
    from rslab.commands.pipeline import pipeline_text

    machine(config)  # its errors name config=, not the command line's option
    rep = pipeline_text(body_text, name, _pairs(config), iterations, exact, max_stages)
    return Pipelined(rep["program"], {k: v for k, v in rep.items() if k != "program"})


class Registers(Mapping):
    """A run's registers by name: ``regs["s3"]`` is the word as an unsigned integer,
    ``regs["v50"]`` the lanes' words (uint32)."""

    def __init__(self, run):
        self._run = run

    def _parse(self, name) -> tuple[str, int]:
        config = self._run.config
        if (not isinstance(name, str) or len(name) < 2 or name[0] not in "sv"
                or not name[1:].isdigit()):
            raise KeyError(f"{name!r}: registers are named s0…s{config.sregs - 1} and "
                           f"v0…v{config.vregs - 1}")
        index = int(name[1:])
        if index >= (config.sregs if name[0] == "s" else config.vregs):
            raise KeyError(f"{name!r} does not exist on this machine")
        return name[0], index

    def __getitem__(self, name):
        kind, index = self._parse(name)
        return self._run.sreg(index) if kind == "s" else self._run.vreg(index, np.uint32)

    def __iter__(self):
        config = self._run.config
        return iter([f"s{i}" for i in range(config.sregs)]
                    + [f"v{i}" for i in range(config.vregs)])

    def __len__(self):
        return self._run.config.sregs + self._run.config.vregs


class Run:
    """A finished simulation: cycles, stalls, registers and VMEM. ``raw`` is the machine's
    own ``rslab.machine.simulator.Run`` (its trace, if asked for, and summary)."""

    def __init__(self, raw, name: str):
        self.raw = raw
        self.name = name
        self.regs = Registers(raw)

    @property
    def cycles(self) -> int:
        return self.raw.cycles

    @property
    def stalls(self) -> dict:
        """Stall cycles by cause."""
        return dict(self.raw.stalls)

    @property
    def machine(self) -> MachineConfig:
        return self.raw.config

    def reg(self, name: str, kind: str = "u32"):
        """Register ``name`` read as ``kind`` (``f32``, ``i32`` or ``u32``): a number for a
        scalar register, an array of the lanes for a vector one."""
        from rslab.machine.words import from_words, kind_of

        if kind_of(kind, "kind") not in ("f32", "i32", "u32"):
            raise ValueError(f"kind: a register holds f32, i32 or u32 words, not {kind}")
        words = np.atleast_1d(np.asarray(self.regs[name], dtype=np.uint32))
        values = from_words(words, kind, words.size)
        return values[0].item() if name.startswith("s") else values

    def vmem(self, address: int, count: int, kind: str = "f32") -> np.ndarray:
        """``count`` values of ``kind`` from VMEM byte ``address`` (the rules of
        :mod:`rslab.machine.words`); a ``ValueError`` outside VMEM."""
        from rslab.machine.words import from_words, kind_of, words_for

        kind_of(kind, "kind")
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
            raise ValueError(f"count must be a positive integer, got {count!r}")
        if isinstance(address, bool) or not isinstance(address, (int, np.integer)) \
                or address < 0 or address % 4:
            raise ValueError(f"address must be a non-negative multiple of 4, got {address!r}")
        return from_words(self.raw.read_vmem(int(address), words_for(kind, int(count))),
                          kind, int(count))

    def report(self) -> dict:
        """What ``rslab sim --json`` prints (needs ``simulate(..., trace=True)``)."""
        from rslab.commands.sim import report

        if self.raw.trace is None:
            raise ValueError("report: simulate(..., trace=True) records what it needs")
        return report(self.raw, self.name)


def _vmem_words(vmem) -> dict | None:
    """``{address: array or (array, kind)}`` as ``{address: words}``."""
    from rslab.machine.words import check_apart, to_words

    if vmem is None:
        return None
    if not isinstance(vmem, Mapping):
        raise ValueError(f"vmem must be a mapping {{byte address: array}}, got "
                         f"{type(vmem).__name__}")
    out = {}
    for address, value in vmem.items():
        data, kind = value if isinstance(value, tuple) and len(value) == 2 else (value, None)
        out[address] = to_words(data, kind, f"vmem[{address!r}]")
    check_apart([(a, w, f"vmem[{a!r}]") for a, w in out.items()
                 if isinstance(a, (int, np.integer))])
    return out


def simulate(program_text: str, *, vmem=None, config=None, sregs=None, vregs=None,
             max_steps: int = DEFAULT_MAX_STEPS, trace: bool = False,
             name: str = "<program>") -> Run:
    """Assemble and run ``program_text`` on the machine ``config`` (None: the one its
    ``# machine:`` line records, else the default), VMEM holding ``vmem`` and the registers
    ``sregs``/``vregs`` (``{index: value}``) at the start."""
    from rslab.commands.sim import assemble_text, program_machine, run_program

    if not isinstance(program_text, str):
        raise ValueError(f"program_text must be the program's text, got "
                         f"{type(program_text).__name__}")
    asked = None if config is None else machine(config)
    config, _ = program_machine(program_text, name, asked, "config=")
    program = assemble_text(program_text, name)
    raw = run_program(program, config, name, vmem=_vmem_words(vmem), max_steps=max_steps,
                      trace=trace, sregs=sregs, vregs=vregs)
    return Run(raw, name)
