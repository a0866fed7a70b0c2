"""The architecture page and the README describe the tree as it is."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def layout_block(text: str) -> list[str]:
    """The lines of the first ``text`` code block after the "layout" heading."""
    after = text[re.search(r"^##+ (The )?[Ll]ayout", text, re.M).end():]
    return re.search(r"```text\n(.*?)```", after, re.S).group(1).splitlines()


def described(lines) -> dict:
    """folder → module names, and files, as the block lists them (nesting by indentation)."""
    out, stack = {}, []
    for line in lines:
        m = re.match(r"^( *)(\S+)(.*)$", line)
        if not m:
            continue
        depth, name, rest = len(m.group(1)) // 2, m.group(2), m.group(3)
        stack[depth:] = [name]
        path = "".join(stack)
        if name.endswith("/"):
            out[path] = set(rest.split()) if rest.strip() else None
        else:
            out[path] = "file"
    return out


def test_architecture_page_matches_the_package():
    block = described(layout_block((ROOT / "docs" / "architecture.md").read_text()))
    for path, names in block.items():
        target = ROOT / path
        if names == "file":
            assert target.is_file(), f"the architecture page lists {path}, which does not exist"
        elif names is not None:
            modules = {p.stem for p in target.glob("*.py") if p.stem != "__init__"}
            assert names == modules, f"{path}: the page lists {sorted(names)}, the folder " \
                                     f"holds {sorted(modules)}"
    listed_dirs = {p for p, n in block.items() if n not in ("file", None)}
    listed_files = {p for p, n in block.items() if n == "file"}
    for module in (ROOT / "rslab").rglob("*.py"):
        rel = module.relative_to(ROOT)
        folder = f"{rel.parent.as_posix()}/"
        assert folder in listed_dirs or rel.as_posix() in listed_files \
            or rel.name in ("__init__.py", "__main__.py"), f"{rel} is not on the page"


def test_readme_layout_names_what_exists():
    package = {p.name + ("/" if p.is_dir() else "") for top in ("rslab", "tools", "docs")
               for p in (ROOT / top).rglob("*")}
    for line in layout_block((ROOT / "README.md").read_text()):
        for name in re.findall(r"(?:^|\s)([\w.]+/|[\w.]+\.(?:py|yml|bib))(?=\s|$)", line):
            assert (ROOT / name).exists() or name in package, \
                f"README's layout names {name}, which does not exist"
