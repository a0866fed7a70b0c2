"""``rslab grade NAME FILE|DIR``: grade kernel labs in cycles (and notebooks' checked answers).

Without arguments, lists the labs. ``rslab grade NAME --spec`` prints a lab's contract:
where its inputs are, what to write where, how the row is padded past V, the starting
kernel, the ladder and the task's bound, and the variants. ``--starting-kernel`` prints the
starting kernel; ``--book-kernel VARIANT`` the book's kernel built for a variant (for the
instructor: the package ships it, so grading runs on variants the students do not have).

``rslab grade NAME FILE`` grades one submission (a whole program, or a loop body in ``rslab
pipeline``'s format): one line with the score and the verdict, then its cycles per variant;
``--json`` prints Gradescope's ``results.json`` instead (``--json PATH`` writes it there).
``rslab grade NAME DIR`` grades every ``.s``/``.asm``/``.txt`` file of a folder (and of its
subfolders, one level down), one line each; ``--csv PATH`` and ``--json PATH`` write the
scores. A submission that does not assemble, does not halt, reads or writes outside its
contract or is wrong on a variant gets its verdict in that one line and no cycle points.

``rslab grade exercises NOTEBOOK|DIR`` runs students' notebooks (``.ipynb`` or MyST ``.md``)
with the instructor's variants and collects the points of their ``check()`` calls
(:mod:`rslab.exercises`).

The variants: ``--variants FILE``, else the file named by ``$RSLAB_GRADING_VARIANTS``, else
the public ones (see :mod:`rslab.instructor` for the file's format); ``--only VARIANT``
grades on one of them. Errors (an unknown lab,
a missing path, a bad variants file) are one ``error:`` line and exit status 2; a verdict is
a grade, exit status 0.
"""

import json
import sys
from pathlib import Path

HELP = "Grade kernel labs in cycles (and notebooks' checked answers): specs, one file, a folder."


def configure(p):
    p.add_argument("lab", nargs="?", metavar="NAME", help="the lab (none: list them), or "
                   "'exercises' for notebooks")
    p.add_argument("path", nargs="?", metavar="FILE|DIR", help="a submission or a folder of them")
    p.add_argument("--spec", action="store_true", help="print the lab's contract")
    p.add_argument("--starting-kernel", action="store_true", help="print the starting kernel")
    p.add_argument("--book-kernel", metavar="VARIANT",
                   help="print the book's kernel built for this variant (its name)")
    p.add_argument("--only", metavar="VARIANT",
                   help="grade on this variant alone (its name: public-a, ... or the file's)")
    p.add_argument("--variants", metavar="FILE",
                   help="the instructor's variants file (default: $RSLAB_GRADING_VARIANTS, "
                        "else the public variants)")
    p.add_argument("--json", nargs="?", const="-", metavar="PATH",
                   help="Gradescope's results.json (a folder: every file's, by file) to PATH "
                        "(default for one file: standard output)")
    p.add_argument("--csv", metavar="PATH", help="a folder's scores, one row per file")
    p.add_argument("--expect", metavar="IDS",
                   help="exercises: the exercise ids (comma-separated) every notebook is "
                        "scored on, checked or not (a folder's notebooks are also scored on "
                        "every exercise any of them checks)")


def _write(path: str, text: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot write {path}: {exc.strerror}") from None


def _settings(args):
    from rslab import instructor
    from rslab.labs import check_settings

    return check_settings(instructor.read(args.variants))


def list_labs() -> str:
    from rslab.labs import LABS

    rows = [f"  {lab.name:<11} {lab.title} ({lab.chapter})" for lab in LABS.values()]
    return "The labs (rslab grade NAME --spec for a contract):\n" + "\n".join(rows) + "\n"


def run(args) -> int:
    if args.lab is None:
        sys.stdout.write(list_labs())
        return 0
    if args.lab == "exercises":
        return _grade_notebooks(args)
    from rslab.labs import get
    from rslab.labs.ladder import Ladder
    from rslab.labs.variants import variants_for

    lab = get(args.lab)
    settings = _settings(args)
    variants = variants_for(settings, lab.name)
    if args.only is not None:
        variants = [_variant(variants, args.only, "--only")]
    ladder = Ladder.from_settings(settings, lab.name)
    if args.spec:
        hidden = not variants[0].public
        sys.stdout.write(lab.spec(ladder, variants, hidden))
        return 0
    if args.starting_kernel:
        sys.stdout.write(lab.starting_kernel())
        return 0
    if args.book_kernel is not None:
        return _book_kernel(lab, variants, args.book_kernel)
    if args.path is None:
        raise ValueError("give a submission FILE or a folder DIR (or --spec, "
                         "--starting-kernel, --book-kernel VARIANT)")
    path = Path(args.path)
    if path.is_dir():
        return _grade_folder(lab, path, variants, ladder, args)
    if not path.exists():
        raise ValueError(f"{path}: no such file or folder")
    if args.csv:
        raise ValueError("--csv: a folder's scores (give a folder, or --json for one file)")
    return _grade_file(lab, path, variants, ladder, args)


def _variant(variants, name: str, option: str):
    """The variant called ``name`` among ``variants`` and the public ones."""
    from rslab.labs.variants import PUBLIC

    known = {v.name: v for v in list(PUBLIC) + list(variants)}
    if name not in known:
        raise ValueError(f"{option}: unknown variant {name!r}; known: {', '.join(known)}")
    return known[name]


def _book_kernel(lab, variants, name) -> int:
    variant = _variant(variants, name, "--book-kernel")
    sys.stdout.write(lab.book_kernel(variant, lab.case(variant)))
    return 0


def _grade_file(lab, path, variants, ladder, args) -> int:
    from rslab.labs.grading import grade_path

    result = grade_path(lab, path, variants, ladder)
    if args.json == "-":
        print(json.dumps(result.gradescope(), indent=2, allow_nan=False))
        return 0
    if args.json:
        _write(args.json, json.dumps(result.gradescope(), indent=2, allow_nan=False) + "\n")
    print(result.line())
    if result.correct:
        print(result.table())
    return 0


def _grade_folder(lab, folder, variants, ladder, args) -> int:
    from rslab.labs.grading import csv_text, folder_files, grade_path

    if args.json == "-":
        raise ValueError("--json PATH: a folder's results go to a file")
    files = folder_files(folder)
    if not files:
        raise ValueError(f"{folder}: no .s, .asm or .txt file to grade")
    results = []
    for file in files:
        results.append(grade_path(lab, file, variants, ladder))
        print(results[-1].line(), flush=True)
    if args.csv:
        _write(args.csv, csv_text(results))
    if args.json:
        data = {"lab": lab.name, "variants": [v.describe() if v.public else v.name
                                              for v in variants],
                "max_score": ladder.max_points,
                "results": {r.label: r.gradescope() for r in results}}
        _write(args.json, json.dumps(data, indent=2, allow_nan=False) + "\n")
    mean = sum(r.score for r in results) / len(results)
    print(f"{len(results)} file(s) graded on {len(variants)} variant(s); mean score {mean:.1f}/"
          f"{ladder.max_points:g}")
    return 0


def _grade_notebooks(args) -> int:
    """``rslab grade exercises NOTEBOOK|DIR``: the hidden tests of the checked answers."""
    from rslab import instructor
    from rslab.exercises import exercise
    from rslab.exercises.notebooks import SUFFIXES, grade_notebook
    from rslab.labs.grading import folder_files

    try:
        import jupytext  # noqa: F401  (the notebooks' reader and runner: the book extra)
        import nbclient  # noqa: F401
    except ImportError as exc:
        raise ValueError(f"exercises: running notebooks needs the book extra "
                         f"(pip install 'rslab[book]'): {exc}") from None

    if args.path is None:
        raise ValueError("exercises: give a notebook (.ipynb or .md) or a folder of them")
    path = Path(args.path)
    if not path.exists():
        raise ValueError(f"{path}: no such file or folder")
    variants = instructor.path(args.variants)
    _check_exercises(instructor.read(variants), variants)  # before any notebook runs
    files = [f for f in folder_files(path, SUFFIXES) if _notebook(f)] if path.is_dir() \
        else [path]
    if not files:
        raise ValueError(f"{path}: no .ipynb or .md notebook to grade")
    expected = [exercise(i.strip()).id for i in (args.expect or "").split(",") if i.strip()]
    also = expected + _checked_in(files)
    results = []
    for file in files:
        results.append(grade_notebook(file, None if variants is None else str(variants),
                                      also=also))
        print(results[-1].line(), flush=True)
    if args.json == "-" and len(results) == 1:
        print(json.dumps(results[0].gradescope(), indent=2))
    elif args.json:
        data = {r.label: r.gradescope() for r in results}
        _write(args.json, json.dumps(data if len(results) > 1 else results[0].gradescope(),
                                     indent=2) + "\n")
    if args.csv:
        ids = list(dict.fromkeys(i for r in results for i in r.points))
        rows = ["file,score,max_score," + ",".join(ids) + ",errors"]
        for r in results:
            cells = [f"{r.points[i][0]:g}" if i in r.points else "" for i in ids]
            rows.append(",".join([_csv(r.label), f"{r.score:g}", f"{r.max_score:g}", *cells,
                                  str(len(r.errors))]))
        _write(args.csv, "\n".join(rows) + "\n")
    return 0


def _check_exercises(settings: dict, variants) -> None:
    """Each ``[exercise.ID]`` of the instructor's file: a typo or parameters that make no
    question are an error (not a public check); an answer the page gives away, a warning."""
    from rslab.exercises import exercise
    from rslab.exercises.notebooks import rescore, shared_answer

    for name in settings.get("exercise", {}):
        try:
            exercise(name)
            rescore(name, None, variants)  # its parameters' names, types and oracle
        except ValueError as exc:
            message = str(exc)
            raise ValueError(message if settings["file"] in message else
                             f"{settings['file']}: [exercise.{name}]: {message}") from None
        except Exception as exc:  # the oracle refuses the values
            raise ValueError(f"{settings['file']}: [exercise.{name}]: its parameters do not "
                             f"make a question: {type(exc).__name__}: {exc}") from None
        shared = shared_answer(name, variants)
        if shared:
            print(f"warning: {settings['file']}: [exercise.{name}]: its answer is {shared}: "
                  f"an answer typed in from the page passes; choose parameters whose answer "
                  f"differs", file=sys.stderr)


def _notebook(path: Path) -> bool:
    """Whether a folder's file is a notebook: an ``.ipynb``, or a ``.md`` with a code cell
    (a student's README is not)."""
    return path.suffix == ".ipynb" or "{code-cell}" in path.read_text(errors="replace")


def _checked_in(files) -> list[str]:
    """The known exercise ids any notebook of ``files`` checks (an unreadable one checks
    none): every notebook is scored on them, so none lowers its maximum by deleting a check."""
    from rslab.exercises.notebooks import checked_ids, known, read_notebook

    ids = []
    for file in files:
        try:
            ids += [i for i in checked_ids(read_notebook(file)) if known(i)]
        except Exception:  # a malformed file is graded on its own, as unreadable
            continue
    return list(dict.fromkeys(ids))


def _csv(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n') else text
