#!/usr/bin/env bash
# Build the real-code benchmark tree: third-party source pinned in sources.txt (crates, Python's
# standard library, PyPI sdists and wheels, npm packages, Debian's Go packages, the OpenJDK class
# library sources), then plant fake credentials in it (plant.py) and write the truth file.
#
#   benches/realcode/build.sh                       # tree in /tmp/leakhound-realcode/tree
#   OUT=/somewhere SEED=7 benches/realcode/build.sh
#
#   OUT    where the tree, truth.jsonl and the download cache go (default /tmp/leakhound-realcode)
#   TREE   the tree (default $OUT/tree); rebuilt from scratch on every run
#   CACHE  downloads, kept between runs (default $OUT/cache)
#   SEED   the planting seed (default 1)
#
# Downloads come only from the package registries (crates.io through cargo, PyPI through pip,
# npm through npm, Debian through apt-get). Nothing here is committed: the tree and the planted
# values are made at build time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/leakhound-realcode}
TREE=${TREE:-$OUT/tree}
CACHE=${CACHE:-$OUT/cache}
SEED=${SEED:-1}
mkdir -p "$OUT" "$CACHE"/{crate,pypi-sdist,pypi-wheel,npm,deb}

log() { printf '%s\n' "$*" >&2; }

# Python with the common build back ends, so that `pip download` of an sdist can prepare its
# metadata without a fresh isolated build environment per package (a minute each otherwise).
pybuild=$CACHE/pybuild
if [[ ! -x $pybuild/bin/pip ]]; then
  python3 -m venv "$pybuild"
  "$pybuild/bin/pip" install -q -U setuptools wheel setuptools-scm hatchling hatch-vcs \
    hatch-fancy-pypi-readme hatch-jupyter-builder hatch-nodejs-version flit_core poetry-core pdm-backend
fi

crate_dir() {  # crate_dir NAME VERSION: print the unpacked crate's folder, fetching it if needed
  local name=$1 ver=$2 d f
  for d in "$HOME"/.cargo/registry/src/*/"$name-$ver"; do [[ -d $d ]] && { echo "$d"; return; }; done
  [[ -d $CACHE/crate/$name-$ver ]] && { echo "$CACHE/crate/$name-$ver"; return; }
  f=$(ls "$HOME"/.cargo/registry/cache/*/"$name-$ver.crate" 2>/dev/null | head -1 || true)
  if [[ -z $f ]]; then
    # A throwaway manifest that depends on exactly this version; `cargo fetch` downloads it.
    local m=$CACHE/crate/fetch-$name-$ver
    mkdir -p "$m/src" && : >"$m/src/lib.rs"
    printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\n%s = "=%s"\n' \
      "$name" "$ver" >"$m/Cargo.toml"
    cargo fetch --quiet --manifest-path "$m/Cargo.toml" >&2
    f=$(ls "$HOME"/.cargo/registry/cache/*/"$name-$ver.crate" | head -1)
  fi
  tar -xzf "$f" -C "$CACHE/crate"
  echo "$CACHE/crate/$name-$ver"
}

deb_root() {  # deb_root PKG VERSION: print a folder holding the package's files at that version
  local pkg=$1 ver=$2 d=$CACHE/deb/$1_$2
  if [[ $(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true) == "$ver" ]]; then
    echo /; return
  fi
  if [[ ! -d $d ]]; then
    local tmp; tmp=$(mktemp -d "$CACHE/deb/dl.XXXXXX")
    # A machine's package lists may be older than the pinned version: update them once.
    if ! (cd "$tmp" && apt-get download -qq "$pkg=$ver" >&2 2>/dev/null); then
      log "apt-get download $pkg=$ver failed; updating the package lists and trying again"
      apt-get update -qq >&2
      (cd "$tmp" && apt-get download -qq "$pkg=$ver" >&2)
    fi
    dpkg-deb -x "$tmp"/*.deb "$d.part" && mv "$d.part" "$d"
    rm -rf "$tmp"
  fi
  echo "$d"
}

deb_copy() {  # deb_copy PKG VERSION DEST PREFIX [SUB...]: PREFIX/SUB of the package to DEST/SUB
  local pkg=$1 ver=$2 dest=$TREE/$3 prefix=$4 root sub f rel; shift 4
  root=$(deb_root "$pkg" "$ver")
  [[ $# -gt 0 ]] || set -- .
  mkdir -p "$dest"
  for sub in "$@"; do
    if [[ $root == / ]]; then
      # Only the files this package installed, not whatever else shares the folder.
      local pat="/$prefix/"
      [[ $sub == . ]] || pat+="$sub/"
      dpkg -L "$pkg" | grep -F "$pat" | grep "^$pat" | while IFS= read -r f; do
        [[ -f $f && ! -L $f ]] || continue
        rel=${f#/"$prefix"/}
        mkdir -p "$dest/$(dirname "$rel")" && cp "$f" "$dest/$rel"
      done
    else
      mkdir -p "$dest/$sub" && cp -r "$root/$prefix/$sub/." "$dest/$sub/"
    fi
  done
}

fetch_pypi() {  # fetch_pypi sdist|wheel NAME VERSION: print the downloaded file
  local kind=$1 name=$2 ver=$3 d=$CACHE/pypi-$1/$2-$3
  if [[ ! -d $d ]]; then
    mkdir -p "$d.part"
    if [[ $kind == sdist ]]; then
      "$pybuild/bin/pip" download -q --no-deps --ignore-requires-python --no-binary :all: --no-build-isolation "$name==$ver" -d "$d.part" >&2
    else
      python3 -m pip download -q --no-deps --ignore-requires-python --only-binary :all: "$name==$ver" -d "$d.part" >&2
    fi
    mv "$d.part" "$d"
  fi
  ls "$d"/* | head -1
}

fetch_npm() {  # fetch_npm NAME VERSION: print the downloaded tarball
  local d=$CACHE/npm/${1//\//__}-$2
  if [[ ! -d $d ]]; then
    mkdir -p "$d.part"
    npm pack --silent "$1@$2" --pack-destination "$d.part" >/dev/null
    mv "$d.part" "$d"
  fi
  ls "$d"/*.tgz | head -1
}

log "building $TREE"
excludes=()
rm -rf "$TREE"
mkdir -p "$TREE"
while read -r kind name ver rest; do
  [[ -z $kind || $kind == \#* ]] && continue
  case $kind in
    crate)
      src=$(crate_dir "$name" "$ver")
      mkdir -p "$TREE/rust/crates" && cp -r "$src" "$TREE/rust/crates/$name-$ver" ;;
    pypi-sdist)
      f=$(fetch_pypi sdist "$name" "$ver"); d=$TREE/python/sdist/$name-$ver
      mkdir -p "$d"
      case $f in
        *.zip) unzip -q "$f" -d "$d.x" ;;
        *) mkdir -p "$d.x" && tar -xzf "$f" -C "$d.x" ;;
      esac
      # The archive has one top folder (NAME-VERSION/); keep its contents.
      mv "$d.x"/*/* "$d.x"/*/.[!.]* "$d/" 2>/dev/null || true
      rm -rf "$d.x" ;;
    pypi-wheel)
      f=$(fetch_pypi wheel "$name" "$ver")
      mkdir -p "$TREE/python/wheels/$name-$ver" && unzip -q "$f" -d "$TREE/python/wheels/$name-$ver" ;;
    npm)
      f=$(fetch_npm "$name" "$ver"); d=$TREE/js/npm/${name//\//__}-$ver
      mkdir -p "$d.x" && tar -xzf "$f" -C "$d.x"
      mv "$d.x/package" "$d" && rm -rf "$d.x" ;;
    deb)
      read -r dest subs <<<"$rest"
      # shellcheck disable=SC2086
      deb_copy "$name" "$ver" "$dest" $subs ;;
    deb-zip)
      read -r dest zip members <<<"$rest"
      root=$(deb_root "$name" "$ver")
      mkdir -p "$TREE/$dest"
      # shellcheck disable=SC2046
      unzip -q -o "$root/$zip" $(for m in $members; do printf '%s/* ' "$m"; done) -d "$TREE/$dest" ;;
    exclude)
      excludes+=("$name"); continue ;;
    *) log "sources.txt: unknown kind $kind"; exit 2 ;;
  esac
  log "  $kind $name $ver"
done <"$here/sources.txt"

for x in "${excludes[@]}"; do
  find "$TREE" -path "$TREE/$x" -prune -exec rm -rf {} +
done
# Source only: drop what every scanner skips as binary anyway, and symlinks (no file twice).
find "$TREE" -type l -delete
find "$TREE" -type d -name __pycache__ -prune -exec rm -rf {} +
find "$TREE" -type f \( -iname '*.so' -o -iname '*.so.*' -o -iname '*.pyc' -o -iname '*.pyd' -o -iname '*.dll' \
  -o -iname '*.dylib' -o -iname '*.a' -o -iname '*.o' -o -iname '*.exe' -o -iname '*.class' -o -iname '*.jar' \
  -o -iname '*.whl' -o -iname '*.zip' -o -iname '*.gz' -o -iname '*.tgz' -o -iname '*.bz2' -o -iname '*.xz' \
  -o -iname '*.zst' -o -iname '*.tar' -o -iname '*.7z' -o -iname '*.png' -o -iname '*.jpg' -o -iname '*.jpeg' \
  -o -iname '*.gif' -o -iname '*.ico' -o -iname '*.bmp' -o -iname '*.webp' -o -iname '*.woff' -o -iname '*.woff2' \
  -o -iname '*.ttf' -o -iname '*.otf' -o -iname '*.eot' -o -iname '*.pdf' -o -iname '*.wasm' -o -iname '*.node' \
  -o -iname '*.mo' -o -iname '*.db' -o -iname '*.sqlite' -o -iname '*.bin' -o -iname '*.pkl' \) -delete
find "$TREE" -type d -empty -delete

files=$(find "$TREE" -type f | wc -l)
size=$(du -sm --apparent-size "$TREE" | cut -f1)
# A digest of the pristine tree (paths and contents), to tell whether two builds are the same.
digest=$(cd "$TREE" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
log "tree: $files files, $size MB, digest $digest"
printf '{"files": %d, "mb": %d, "digest": "%s"}\n' "$files" "$size" "$digest" >"$OUT/tree.json"

python3 "$here/plant.py" --tree "$TREE" --truth "$OUT/truth.jsonl" --seed "$SEED"
