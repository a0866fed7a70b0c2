"""The error of the simulated machine at run time (assembly errors are ``asm.AssemblyError``)."""


class MachineError(RuntimeError):
    """A runtime error of the simulated machine, with ``pc``, ``cycle`` and the op ``text``."""

    def __init__(self, message: str, pc=None, cycle=None, op: str = ""):
        self.message, self.pc, self.cycle, self.op = message, pc, cycle, op
        where = f"pc {pc}" + (f", cycle {cycle}" if cycle is not None else "")
        super().__init__(f"{message} [{where}: {op!r}]")
