"""The error of the simulated machine at run time (assembly errors are ``asm.AssemblyError``)."""


class MachineError(RuntimeError):
    """A runtime error of the simulated machine, with the source ``line``, ``pc``, ``cycle`` and
    the op ``text`` (``line`` and ``cycle`` are None where unknown)."""

    def __init__(self, message: str, pc=None, cycle=None, op: str = "", line=None):
        self.message, self.pc, self.cycle, self.op, self.line = message, pc, cycle, op, line
        where = (f"line {line}, " if line is not None else "") + f"pc {pc}" + (
            f", cycle {cycle}" if cycle is not None else "")
        super().__init__(f"{message} [{where}: {op!r}]")
