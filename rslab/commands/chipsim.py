"""``rslab sim FILE.s --cores C``: the program on the cores of a chip (the chip's half of ``sim``).

The file is the multi-core text of :mod:`rslab.machine.sections`: one program every core runs
(``scid`` gives its index), or one section per core (``.core N``, ``.cores A-B``,
``.cores *``). ``--config`` takes the chip's settings (``hbm_bytes_per_cycle=576``) beside the
core's. Prints the chip's cycles, the stalls by cause (with the chip's own: the shared HBM,
the barrier), each core's cycles and stalls, the HBM's bytes and its busiest cycle against its
bandwidth, and the barriers; ``--trace`` writes a Perfetto trace with a track per core.
"""

from __future__ import annotations

import json


def simulate_chip_file(label: str, text: str, cores: int, pairs, vmem_specs, max_steps: int):
    """Assemble ``text`` for ``cores`` cores and simulate it; errors as ``ValueError`` naming
    the file and line (and the core). Every core is the machine of ``--config``'s core keys,
    else the one the program's ``# machine:`` line records, else the default."""

    from rslab.commands.sim import program_machine
    from rslab.commands.vmemfiles import load_vmem
    from rslab.machine import AssemblyError, MachineError
    from rslab.machine.chip import simulate_chip
    from rslab.machine.overrides import CHIP_KEYS, apply_chip_overrides
    from rslab.machine.sections import assemble_sections

    try:
        chip = apply_chip_overrides(pairs, cores)
    except ValueError as exc:
        raise ValueError(f"--config {exc}") from None
    asked = chip.core if any(k not in CHIP_KEYS for k, _ in pairs) else None
    chip = chip.with_(core=program_machine(text, label, asked)[0])
    vmem = load_vmem(vmem_specs, chip.core.vmem_bytes)
    try:
        programs = assemble_sections(text, cores)
    except AssemblyError as exc:
        raise ValueError(f"{label}:{exc.line}: {exc.message}: {exc.text.strip()!r}") from None
    try:
        return simulate_chip(programs, chip, vmem=[vmem] * cores, trace=True,
                             max_steps=max_steps)
    except MachineError as exc:
        where = f"{label}:{exc.line}" if exc.line is not None else label
        when = "" if exc.cycle is None else f", cycle {exc.cycle}"
        raise ValueError(f"{where}: {exc.message} (pc {exc.pc}{when}: {exc.op!r})") from None


def chip_report(run, name: str, regs) -> dict:
    """Everything ``rslab sim --cores`` prints, as one JSON-ready object."""
    from rslab.commands.sim import register_values
    from rslab.machine.stalls import meaning

    s = run.summary()
    per_core = []
    for c, r in enumerate(run.runs):
        if r is None:
            per_core.append({"core": c, "idle": True})
            continue
        row = {"core": c, "cycles": r.cycles, "ops": r.ops, "ipc": r.ipc,
               "stalls": {k: v for k, v in r.stalls.items() if v}}
        if regs:
            row["registers"] = register_values(r, regs)
        per_core.append(row)
    return {"file": name, "cycles": s["cycles"], "cores": s["cores"],
            "active_cores": s["active_cores"],
            "stalls": {c: {"cycles": n, "meaning": meaning(c)} for c, n in s["stalls"].items()},
            "hbm": s["hbm"], "barriers": run.barriers and [
                {"name": b["name"], "count": b["count"], "release": b["release"],
                 "last_arrival": max(t for _, t, _ in b["arrivals"])} for b in run.barriers],
            "per_core": per_core}


def print_chip_report(rep: dict) -> None:
    print(f"{rep['file']} on {rep['cores']} cores ({rep['active_cores']} with a program): "
          f"{rep['cycles']} cycles")
    print("\nstall cycles, all cores:")
    for cause, st in rep["stalls"].items():
        print(f"  {cause:<14}{st['cycles']:>8}  {st['meaning']}")
    h = rep["hbm"]
    print(f"\nHBM: {h['bytes']} bytes in {h['transfers']} transfers; busiest cycle "
          f"{h['peak_bytes_per_cycle']} of {h['bandwidth']} bytes")
    for b in rep["barriers"] or []:
        print(f"barrier {b['name']} ({b['count']} cores): last arrival cycle "
              f"{b['last_arrival']}, release {b['release']}")
    print("\ncore  cycles     ops   IPC  stalls")
    for row in rep["per_core"]:
        if row.get("idle"):
            print(f"{row['core']:>4}  idle")
            continue
        stalls = ", ".join(f"{k} {v}" for k, v in row["stalls"].items()) or "none"
        print(f"{row['core']:>4}  {row['cycles']:>6}  {row['ops']:>6}  {row['ipc']:>4.2f}  "
              f"{stalls}")
        for reg, value in row.get("registers", {}).items():
            print(f"        {reg} = " + ", ".join(f"{k} {v}" for k, v in value.items()))


def run_chip(args, file: str, text: str) -> int:
    """``rslab sim`` with ``--cores``: simulate, report, write the trace."""
    name = "<stdin>" if file == "-" else file
    sim = simulate_chip_file(name, text, args.cores, args.config, args.vmem, args.max_steps)
    rep = chip_report(sim, name, args.regs)
    if args.trace:
        try:
            sim.write_chrome(args.trace, flows=args.flows)
        except OSError as exc:
            raise ValueError(f"--trace {args.trace}: {exc}") from None
        rep["trace"] = {"path": args.trace}
    if args.json:
        print(json.dumps(rep, indent=2, allow_nan=False))
        return 0
    print_chip_report(rep)
    if args.trace:
        print(f"\nwrote {args.trace} (open it in ui.perfetto.dev: a process per core and the "
              "chip's HBM and barriers; 1 us there = 1 cycle)")
    return 0
