"""``rslab sim``'s ``.npy`` files: ``--vmem`` into VMEM before the run, ``--dump-vmem`` out
of it after, each value laid out by its kind (:mod:`rslab.machine.words`).

``--vmem FILE.npy[@ADDR][:KIND]`` places one array at byte ADDR (default 0, a multiple
of 4); KIND is needed for uint16 BF16 bit patterns (``bf16`` in order, ``bf16-packed``
the machine chapter's layout) and rounds float32 values to BF16 when given for them.
A file that is not one array of ``numpy.save`` (a pickle, an ``.npz``, an object or
record array, an array saved in Fortran order, an empty one) is refused, and so are
arrays that overlap another ``--vmem`` or end beyond VMEM. ``--dump-vmem ADDR:LEN[:KIND]
OUT.npy`` writes LEN values of KIND (default ``f32``) read from byte ADDR after the run;
its bounds and its file are checked before the run starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


def _split_kind(text: str, name: str) -> tuple[str, str | None]:
    """``(rest, kind)`` of ``text[:KIND]`` (a kind after the last ``:`` of its last path
    component)."""
    from rslab.machine.words import kind_of

    head, sep, tail = text.rpartition(":")
    if not sep or "/" in tail:
        return text, None
    return head, kind_of(tail, name)


def _address(text: str, name: str) -> int:
    """A byte address: a non-negative multiple of 4 (decimal or 0x hex)."""
    try:
        address = int(text, 0)
    except ValueError:
        raise ValueError(f"{name}: the address must be an integer, got {text!r}") from None
    if address < 0 or address % 4:
        raise ValueError(f"{name}: the address must be a non-negative multiple of 4 (VMEM "
                         f"words are 4 bytes), got {address}")
    return address


def read_npy(path: str, name: str):
    """The one array of the ``.npy`` file ``path``, or a ``ValueError`` naming ``name``
    that says what the file is instead."""
    import numpy as np

    magic = np.lib.format.MAGIC_PREFIX
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(magic))
    except OSError as exc:
        raise ValueError(f"{name}: {exc}") from None
    if head != magic:
        what = ("an .npz archive of several arrays (numpy.savez); save one array with "
                "numpy.save" if head.startswith(b"PK") else
                "a pickle, which is not loaded (it can run code)" if head[:1] == b"\x80"
                else "not a .npy file (numpy.save writes one)")
        raise ValueError(f"{name}: {what}")
    try:
        data = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, EOFError, ValueError) as exc:
        text = str(exc)
        if "Python objects" in text:
            text = "an array of Python objects, which is not loaded (it can run code)"
        elif "greater than file size" in text:
            text = "the file ends before the data its header announces (truncated?)"
        raise ValueError(f"{name}: {text}") from None
    if data.ndim > 1 and data.flags.f_contiguous and not data.flags.c_contiguous:
        raise ValueError(f"{name}: the array was saved in Fortran order; save "
                         "numpy.ascontiguousarray(a) (values go in row by row)")
    return data


def vmem_spec(spec: str) -> tuple[str, int, str | None]:
    """``(path, address, kind)`` of ``FILE.npy[@ADDR][:KIND]``."""
    name = f"--vmem {spec}"
    rest, kind = _split_kind(spec, name)
    path, sep, addr = rest.rpartition("@")
    if not sep or "/" in addr:
        path, addr = rest, "0"
    return path, _address(addr, name), kind


def load_vmem(specs, vmem_bytes: int) -> dict | None:
    """``--vmem`` specs ``FILE.npy[@ADDR][:KIND]`` as ``{ADDR: uint32 words}`` for
    ``simulate``, each checked to fit VMEM (``vmem_bytes``) and to overlap no other."""
    from rslab.machine.words import check_apart, refusal, to_words

    if not specs:
        return None
    placed = []
    for spec in specs:
        name = f"--vmem {spec}"
        path, address, kind = vmem_spec(spec)
        data = read_npy(path, name)
        why = refusal(data.dtype)
        if why is None and data.nbytes > 2 * vmem_bytes:
            why = f"{data.nbytes:,} bytes cannot fit VMEM's {vmem_bytes:,}"
        words = to_words(data, kind, name) if why is None else None
        if why is not None:
            raise ValueError(f"{name}: {why}")
        end = address + 4 * words.size
        if end > vmem_bytes:
            raise ValueError(f"{name}: {words.size:,} words from byte {address:,} end at byte "
                             f"{end:,}, beyond VMEM's {vmem_bytes:,} bytes (--config "
                             "vmem_bytes=N)")
        placed.append((address, words, name))
    check_apart(placed)
    return {address: words for address, words, _ in placed}


@dataclass(frozen=True)
class Dump:
    """One ``--dump-vmem``: ``count`` values of ``kind`` from byte ``address`` to ``path``."""

    address: int
    count: int
    kind: str
    path: str

    @property
    def words(self) -> int:
        from rslab.machine.words import words_for

        return words_for(self.kind, self.count)


def dumps(pairs, vmem_bytes: int, inputs=()) -> list[Dump]:
    """The ``--dump-vmem ADDR:LEN[:KIND] OUT.npy`` pairs, each inside VMEM and written to a
    file of its own that is none of the ``inputs`` and whose folder exists."""
    from rslab.machine.words import kind_of

    out, seen = [], {Path(p).resolve(): f"an input of the run ({p})" for p in inputs}
    for spec, path in pairs or []:
        name = f"--dump-vmem {spec} {path}"
        parts = spec.split(":")
        if len(parts) not in (2, 3):
            raise ValueError(f"{name}: expected ADDR:LEN[:KIND] such as 0:128:f32")
        addr, length = parts[:2]
        kind = kind_of(parts[2], name) if len(parts) == 3 else "f32"
        address = _address(addr, name)
        try:
            count = int(length, 0)
        except ValueError:
            raise ValueError(f"{name}: LEN must be an integer, got {length!r}") from None
        if count < 1:
            raise ValueError(f"{name}: LEN must be at least 1, got {count}")
        dump = Dump(address, count, kind, path)
        end = address + 4 * dump.words
        if end > vmem_bytes:
            raise ValueError(f"{name}: {count:,} {dump.kind} values from byte {address:,} end "
                             f"at byte {end:,}, beyond VMEM's {vmem_bytes:,} bytes")
        target = Path(path).resolve()
        if target in seen:
            raise ValueError(f"{name}: {path} is {seen[target]}; write each dump to a file "
                             "of its own")
        if target.is_dir() or not target.parent.is_dir():
            raise ValueError(f"{name}: cannot write {path} (a folder, or its folder is "
                             "missing)")
        seen[target] = f"the file of --dump-vmem {spec} {path}"
        out.append(dump)
    return out


def write_dumps(run, chosen: list[Dump]) -> list[dict]:
    """Write each dump's values after the run; what was written, as report records."""
    import numpy as np

    from rslab.machine.words import from_words

    done = []
    for d in chosen:
        values = from_words(run.read_vmem(d.address, d.words), d.kind, d.count)
        try:
            with open(d.path, "wb") as fh:
                np.save(fh, values)
        except OSError as exc:
            raise ValueError(f"--dump-vmem {d.path}: {exc}") from None
        done.append({"path": d.path, "address": d.address, "count": d.count, "kind": d.kind,
                     "dtype": str(values.dtype)})
    return done
