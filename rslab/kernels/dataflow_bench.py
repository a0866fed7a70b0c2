"""``python -m rslab bench --only dataflow``: the sum-exp dataflow table at ``--vocab``."""

from rslab.commands.bench import benchmark
from rslab.kernels.dataflow_table import dataflow_table, markdown_table, table_records


@benchmark("dataflow")
def dataflow_benchmark(args) -> dict:
    """Simulate every dataflow on one row; print the table; return its figures."""
    rows = dataflow_table(vocab=args.vocab)
    if not getattr(args, "json", False):
        print(markdown_table(table_records(rows)))
    return {"dataflow": {r.variant: {
        "cycles_per_packed_vector": r.measured, "bound_per_packed_vector": round(r.bound, 3),
        "cycles_per_row": r.cycles, "vocab": r.vocab, "binding": r.binding,
        "vmem_bytes": r.vmem_bytes, "stalls": r.stalls, "max_exact": r.max_exact,
        "sum_within_tolerance": r.sum_rel_error <= r.sum_tolerance} for r in rows}}
