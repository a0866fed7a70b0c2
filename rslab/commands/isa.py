"""``rslab isa [MNEMONIC ...]``: the instruction table of the simulated core.

One row per mnemonic, from the ISA table (:mod:`rslab.machine.isa`) and the machine
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
    p.add_argument("--json", action="store_true", help="print one JSON list")


def isa_rows(pairs=(), names=()) -> list[dict]:
    """The table's rows on the machine with the changes ``pairs`` (only ``names`` if given)."""
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
    return rows


def run(args) -> int:
    rows = isa_rows(args.config, args.mnemonics)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'mnemonic':<12}{'slot':<8}{'latency':<9}{'cycles':>6}{'busy':>5}  "
          f"{'operands':<16}meaning")
    for r in rows:
        lat = r["latency_class"] or "-"
        cycles = "-" if r["cycles"] is None else r["cycles"]
        print(f"{r['mnemonic']:<12}{r['slot'] or '-':<8}{lat:<9}{cycles:>6}{r['busy']:>5}  "
              f"{' '.join(r['operands']) or '-':<16}{r['meaning']}")
    return 0
