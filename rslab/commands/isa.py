"""``rslab isa [MNEMONIC ...]``: the slot table and the instruction table of the simulated core.

First the machine (``--config key=value`` changes it; each key once): per class, the ops
one bundle may hold (its slots) and the cycles from issue to a usable result (its
latency); the SFU's hold-issue (a push books the SFU ``1 + sfu_hold`` cycles) and the
depth of its result FIFO; a k-way VMEM bank conflict holding its port k cycles. Then one
row per mnemonic, from the ISA table (:mod:`rslab.machine.isa`) and the machine
(``--config key=value`` changes it): the slot class it issues in, the latency class of
its result and its cycles on this machine (issue to result usable; an SFU push also holds
the SFU ``1 + sfu_hold`` cycles, so its throughput is one push per that many cycles), the
operands and what it computes. Operand kinds: vd/va vector destination/source, sd/sa
scalar, num an immediate (integer or float32), imm an integer, sai/vai a register or an
integer, mem [sA + imm], label a branch target; ? marks an optional one.
"""

import json

from rslab.commands.argtypes import assignment

HELP = "The instruction table: slot, latency and cycles, operands and meaning per mnemonic."


def configure(p):
    p.add_argument("mnemonics", nargs="*", metavar="MNEMONIC",
                   help="only these (default: every mnemonic and directive)")
    p.add_argument("--config", type=assignment, nargs="+", action="extend", default=[],
                   metavar="KEY=VALUE", help="machine changes, e.g. sfu_latency=20")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object: the machine and the mnemonics' rows")


def machine_table(config) -> dict:
    """The slot table of ``config``: slots and latency per class, the SFU, VMEM's banks."""
    from rslab.machine.config import LATENCY_CLASSES, SLOT_CLASSES
    from rslab.machine.isa import SPECS
    from rslab.machine.overrides import machine_text

    classes = list(SLOT_CLASSES) + [c for c in LATENCY_CLASSES if c not in SLOT_CLASSES]
    return {"settings": machine_text(config),
            "classes": [{"class": c, "slots": config.slots.get(c),
                         "latency": config.latency.get(c),
                         "mnemonics": [s.name for s in SPECS.values()
                                       if (s.slot if c in SLOT_CLASSES else s.lat) == c]}
                        for c in classes],
            "sfu": {"hold": config.sfu_hold, "push_every": 1 + config.sfu_hold,
                    "fifo_depth": config.fifo_depth},
            "vmem": {"bytes": config.vmem_bytes, "banks": config.vmem_banks,
                     "bank_bytes": config.bank_bytes},
            "lanes": config.lanes, "vregs": config.vregs, "sregs": config.sregs}


def isa_rows(pairs=(), names=()) -> tuple[dict, list[dict]]:
    """The machine with the changes ``pairs`` (:func:`machine_table`) and the table's rows
    on it (only ``names`` if given)."""
    from rslab.machine.isa import DIRECTIVES, SFU_OPS, SPECS, did_you_mean
    from rslab.machine.overrides import apply_overrides

    try:
        config = apply_overrides(pairs)
    except ValueError as exc:
        raise ValueError(f"--config {exc}") from None
    unknown = [n for n in names if n not in SPECS and n not in DIRECTIVES]
    if unknown:
        raise ValueError(f"unknown mnemonic {unknown[0]!r}" + did_you_mean(unknown[0]))
    rows = []
    for spec in SPECS.values():
        if names and spec.name not in names:
            continue
        rows.append({"mnemonic": spec.name, "slot": spec.slot, "latency_class": spec.lat,
                     "cycles": config.latency[spec.lat] if spec.lat else None,
                     "busy": 1 + config.sfu_hold if spec.name in SFU_OPS else
                     (1 if spec.slot else 0),
                     "operands": list(spec.sig), "meaning": spec.doc})
    for name, doc in DIRECTIVES.items():
        if not names or name in names:
            rows.append({"mnemonic": name, "slot": None, "latency_class": None, "cycles": None,
                         "busy": 0, "operands": [], "meaning": doc})
    return machine_table(config), rows


def print_machine(m: dict) -> None:
    """The slot table as text."""
    print(f"machine: {m['settings']} ({m['lanes']} lanes × 32 bit, {m['vregs']} vector and "
          f"{m['sregs']} scalar registers)")
    print(f"  {'class':<8}{'slots':>6}{'latency':>9}  ops")
    for c in m["classes"]:
        slots = "-" if c["slots"] is None else c["slots"]
        note = {"sfu": f"; a push holds the SFU {m['sfu']['push_every']} cycles (1 + sfu_hold "
                       f"{m['sfu']['hold']}), results wait in order in a "
                       f"{m['sfu']['fifo_depth']}-entry FIFO (fifo_depth)",
                "pop": " (on a valu slot): the FIFO's head to a register",
                "ld": f"; a k-way conflict over the {m['vmem']['banks']} banks holds the "
                      "port k cycles",
                "st": "; bank conflicts as ld"}.get(c["class"], "")
        names = c["mnemonics"]
        ops = " ".join(names) if len(names) <= 6 else f"{len(names)} mnemonics"
        print(f"  {c['class']:<8}{slots:>6}{c['latency']:>9}  {ops}{note}")
    print("  slots: ops of the class one bundle may hold; latency: cycles from issue until "
          "the result is usable\n")


def run(args) -> int:
    machine, rows = isa_rows(args.config, args.mnemonics)
    if args.json:
        print(json.dumps({"machine": machine, "mnemonics": rows}, indent=2))
        return 0
    if not args.mnemonics:
        print_machine(machine)
    print(f"{'mnemonic':<12}{'slot':<8}{'latency':<9}{'cycles':>6}{'busy':>5}  "
          f"{'operands':<16}meaning")
    for r in rows:
        lat = r["latency_class"] or "-"
        cycles = "-" if r["cycles"] is None else r["cycles"]
        print(f"{r['mnemonic']:<12}{r['slot'] or '-':<8}{lat:<9}{cycles:>6}{r['busy']:>5}  "
              f"{' '.join(r['operands']) or '-':<16}{r['meaning']}")
    return 0
