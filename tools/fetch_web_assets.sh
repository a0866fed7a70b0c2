#!/usr/bin/env bash
# Fetch the JavaScript the rendered book needs from the npm registry (npm pack),
# check each tarball against its pinned SHA-256, and unpack the files the pages
# load into book/_static/vendor/ (gitignored; Sphinx copies it to _build/html/_static).
#   require.js + @jupyter-widgets/html-manager (embed-amd.js): ipywidgets 8 without a kernel
#   MathJax 3 (tex-mml-chtml): the pages' maths
# So the book works offline: no page loads anything from a CDN.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=book/_static/vendor
PINS=(
  "requirejs@2.3.7 31f3330c978fb28684622fe71165dc946432cf0210b2ea8a1ca0233e70f2737d"
  "@jupyter-widgets/html-manager@1.0.15 2b9d65cb7913e1c7d671757a10008b32c9c2448d4429513371e55c07d6107638"
  "mathjax@3.2.2 1b9c0a1c44df864e915690558e72adb9cc5203360daefd385084ced3b6c64c09"
)
STAMP="$DEST/.pins"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "${PINS[*]}" ]]; then
  exit 0
fi
command -v npm >/dev/null || { echo "npm is needed to fetch the book's JavaScript" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for pin in "${PINS[@]}"; do
  read -r spec sha <<<"$pin"
  tgz=$(cd "$work" && npm pack --silent "$spec" | tail -n 1)
  echo "$sha  $work/$tgz" | sha256sum --check --quiet \
    || { echo "checksum mismatch for $spec" >&2; exit 1; }
  mkdir -p "$work/${tgz%.tgz}"
  tar xzf "$work/$tgz" -C "$work/${tgz%.tgz}"
done
rm -rf "$DEST"
mkdir -p "$DEST/requirejs" "$DEST/html-manager" "$DEST/mathjax"
cp "$work"/requirejs-*/package/require.js "$DEST/requirejs/"
# embed-amd.js finds its font files next to itself; the other bundles and maps are not used.
find "$work"/jupyter-widgets-html-manager-*/package/dist -maxdepth 1 -type f \
  ! -name '*.map' ! -name 'embed.js*' ! -name 'libembed-amd.js' \
  -exec cp {} "$DEST/html-manager/" \;
mj="$work"/mathjax-*/package/es5
cp $mj/tex-mml-chtml.js "$DEST/mathjax/"
for dir in a11y adaptors input output sre ui; do cp -r $mj/$dir "$DEST/mathjax/"; done
echo "${PINS[*]}" > "$STAMP"
echo "fetched: $(du -sh "$DEST" | cut -f1) into $DEST"
