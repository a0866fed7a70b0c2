"""Benchmark ``dataflow``: the sum-exp dataflow table at ``--vocab``."""

from rslab.bench.registry import benchmark
from rslab.kernels.studies.dataflow_table import dataflow_table
from rslab.viz.tables import markdown_table


def dataflow_text(figures: dict) -> str:
    """The table of the dataflow chapter, one row per dataflow."""
    rows = [{"dataflow": name, "bound c/vec": f["bound_per_packed_vector"],
             "measured c/vec": round(f["cycles_per_packed_vector"], 2),
             f"cycles / {f['vocab']:,}-token row": f["cycles_per_row"], "binding": f["binding"],
             "VMEM bytes": f["vmem_bytes"],
             "stalls": ", ".join(f"{k} {v}" for k, v in f["stalls"].items()) or "none",
             "max exact": f["max_exact"], "sum within tolerance": f["sum_within_tolerance"]}
            for name, f in figures["dataflow"].items()]
    return markdown_table(rows, fmt=lambda _, v: str(v))


@benchmark("dataflow", text=dataflow_text)
def dataflow_benchmark(args) -> dict:
    """Simulate every dataflow on one row; return its figures."""
    rows = dataflow_table(vocab=args.vocab)
    return {"dataflow": {r.variant: {
        "cycles_per_packed_vector": r.measured, "bound_per_packed_vector": round(r.bound, 3),
        "cycles_per_row": r.cycles, "vocab": r.vocab, "binding": r.binding,
        "vmem_bytes": r.vmem_bytes, "stalls": r.stalls, "max_exact": r.max_exact,
        "sum_within_tolerance": r.sum_rel_error <= r.sum_tolerance} for r in rows}}
