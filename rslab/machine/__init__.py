"""The simulated vector core: configuration, assembler, cycle-level simulator, traces.

``assemble(text) -> Program``; ``simulate(program, config, vmem, hbm, trace) -> Run``.
"""

from rslab.machine.asm import AssemblyError, Program, assemble
from rslab.machine.builder import Builder
from rslab.machine.config import MachineConfig
from rslab.machine.errors import MachineError
from rslab.machine.simulator import Run, simulate
from rslab.machine.stalls import CAUSES

__all__ = ["AssemblyError", "Builder", "CAUSES", "MachineConfig", "MachineError", "Program",
           "Run", "assemble", "simulate"]
