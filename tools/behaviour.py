"""Prove that a change of layout changed no behaviour: snapshot, then compare.

    python tools/behaviour.py snapshot before.json   # on the old tree
    python tools/behaviour.py snapshot after.json    # on the new tree
    python tools/behaviour.py compare before.json after.json

A snapshot holds what the package computes, with every timing left out:

* ``bench``: ``python -m rslab bench --json`` (every benchmark: cycle counts, II,
  stalls, tokens, exact statistics), minus the keys that are wall or CPU times,
  rates, memory peaks or verdicts on them (``TIMING_KEY``);
* ``glue``: every number a page's prose cites, for every page in ``_toc.yml``, each page
  executed at ``RSLAB_SCALE=quick``: the text of each ``{eval}`` name as the sentence shows
  it (evaluated right after its Markdown cell, where the build's inline execution
  evaluates it). Names that are times (``TIMING_GLUE``) are left out.

``compare`` prints every difference and exits 1 if there is one.
``--only bench`` or ``--only glue`` takes one half of the snapshot.
"""

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMING_KEY = re.compile(r"(seconds|_s$|per_s|_wall|rss|_mb$|slowdown|meets_target|"
                        r"samples_per_s|mvalues|speedup_\d+_workers|_workers$)")
TIMING_GLUE = re.compile(r"(seconds|_time$|_rate$)")


def strip_timings(obj):
    """``obj`` without the keys (at any depth) that ``TIMING_KEY`` names."""
    if isinstance(obj, dict):
        return {k: strip_timings(v) for k, v in obj.items() if not TIMING_KEY.search(k)}
    if isinstance(obj, list):
        return [strip_timings(v) for v in obj]
    return obj


def bench_snapshot() -> dict:
    env = dict(os.environ, RSLAB_SCALE="quick")
    out = subprocess.run([sys.executable, "-m", "rslab", "bench", "--json"], cwd=ROOT, env=env,
                         check=True, capture_output=True, text=True).stdout
    return strip_timings(json.loads(out))


def toc_pages() -> list[Path]:
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return [ROOT / f"{name}.md" for name in files]


EVAL_PROBE = "import json as _j\nprint(_j.dumps({n: str(globals()[n]) for n in %r}))"
"""Inserted after a Markdown cell: the text of the names its ``{eval}`` roles cite."""


def page_glue(path: Path) -> dict:
    """name → cited value (the text its sentence shows) of one executed page."""
    import jupytext
    import nbformat
    from nbclient import NotebookClient

    from rslab.chapters.prose import eval_names

    nb = jupytext.read(path)
    if not any(c.cell_type == "code" for c in nb.cells):
        return {}
    cells = []
    for cell in nb.cells:
        cells.append(cell)
        names = eval_names(cell.source) if cell.cell_type == "markdown" else []
        if names:
            probe = nbformat.v4.new_code_cell(EVAL_PROBE % sorted(set(names)))
            probe.metadata["rslab_probe"] = True
            cells.append(probe)
    nb.cells = cells
    NotebookClient(nb, timeout=1800, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    values = {}
    for cell in nb.cells:
        if cell.metadata.get("rslab_probe"):
            values.update({k: v for k, v in json.loads(cell.outputs[-1]["text"]).items()
                           if not TIMING_GLUE.search(k)})
    return values


def glue_snapshot() -> dict:
    os.environ["RSLAB_SCALE"] = "quick"
    out = {}
    for page in toc_pages():
        print(f"executing {page.relative_to(ROOT)}", file=sys.stderr, flush=True)
        out[page.stem] = page_glue(page)
    return out


def differences(a, b, where="") -> list[str]:
    """Every path at which the two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{where}/{k}: only in {'after' if k in b else 'before'}")
            else:
                out += differences(a[k], b[k], f"{where}/{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in differences(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {a!r} → {b!r}"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/behaviour.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="verb", required=True)
    snap = sub.add_parser("snapshot", help="write a snapshot of the current tree")
    snap.add_argument("output")
    snap.add_argument("--only", choices=("bench", "glue"))
    comp = sub.add_parser("compare", help="compare two snapshots")
    comp.add_argument("before")
    comp.add_argument("after")
    args = parser.parse_args(argv)
    if args.verb == "snapshot":
        snapshot = {}
        if args.only in (None, "bench"):
            snapshot["bench"] = bench_snapshot()
        if args.only in (None, "glue"):
            snapshot["glue"] = glue_snapshot()
        Path(args.output).write_text(json.dumps(snapshot, indent=1, sort_keys=True))
        return 0
    before = json.loads(Path(args.before).read_text())
    after = json.loads(Path(args.after).read_text())
    diffs = differences(before, after)
    for d in diffs:
        print(d)
    print(f"{len(diffs)} differences")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
