#!/usr/bin/env bash
# A ~1 GB, four-layer OCI image built from the generated corpus: leakhound's wall time with all
# cores and with one, against decompressing the layers alone (gzip -dc, one core each), and
# leakhound's peak RSS. Layers are read in parallel and streamed, so time should approach
# max(decompression, scanning) spread over the cores, and memory should not grow with layer
# size.
#
#   benches/image.sh            # SIZE_MB=1000 RUNS=3
#
# Everything goes to $OUT (default /tmp/leakhound-image-bench); nothing is committed.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MB=${SIZE_MB:-1000}
RUNS=${RUNS:-3}
OUT=${OUT:-/tmp/leakhound-image-bench}
LH=$PWD/target/release/leakhound

cargo build --release --quiet --bin leakhound --example gen-corpus
[[ -f $OUT/truth.jsonl ]] || target/release/examples/gen-corpus "$OUT" "$SIZE_MB"
if [[ ! -f $OUT/layout/index.json ]]; then
  mkdir -p "$OUT/layers"
  # Four layers of about equal size: the corpus's package directories dealt round-robin.
  mapfile -t dirs < <(cd "$OUT/tree" && ls -d pkg*)
  for l in 0 1 2 3; do
    part=()
    for i in "${!dirs[@]}"; do ((i % 4 == l)) && part+=("${dirs[$i]}"); done
    tar -C "$OUT/tree" -cf - "${part[@]}" | gzip -6 >"$OUT/layers/$l.tar.gz" &
  done
  wait
  python3 - "$OUT" <<'PY'
import hashlib, json, os, shutil, sys
out = sys.argv[1]
blobs = os.path.join(out, "layout/blobs/sha256")
os.makedirs(blobs, exist_ok=True)
def put(path=None, data=None):
    h = hashlib.sha256()
    if data is None:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        size = os.path.getsize(path)
        shutil.move(path, os.path.join(blobs, h.hexdigest()))
    else:
        h.update(data)
        size = len(data)
        open(os.path.join(blobs, h.hexdigest()), "wb").write(data)
    return {"digest": "sha256:" + h.hexdigest(), "size": size}
layers = [dict(put(os.path.join(out, "layers", f"{i}.tar.gz")),
               mediaType="application/vnd.oci.image.layer.v1.tar+gzip") for i in range(4)]
config = dict(put(data=json.dumps({"architecture": "amd64", "os": "linux",
    "config": {"Env": ["PATH=/usr/bin"]}, "rootfs": {"type": "layers", "diff_ids": []}}).encode()),
    mediaType="application/vnd.oci.image.config.v1+json")
manifest = put(data=json.dumps({"schemaVersion": 2,
    "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": config, "layers": layers}).encode())
manifest.update(mediaType="application/vnd.oci.image.manifest.v1+json",
                annotations={"org.opencontainers.image.ref.name": "bench"})
json.dump({"schemaVersion": 2, "manifests": [manifest]}, open(os.path.join(out, "layout/index.json"), "w"))
open(os.path.join(out, "layout/oci-layout"), "w").write('{"imageLayoutVersion":"1.0.0"}')
PY
fi
IMG="oci:$OUT/layout:bench"
layers=$(python3 -c "import json,sys;m=json.load(open('$OUT/layout/index.json'))['manifests'][0]['digest'][7:];print(' '.join('$OUT/layout/blobs/sha256/'+l['digest'][7:] for l in json.load(open('$OUT/layout/blobs/sha256/'+m))['layers']))")
du -ch $layers | tail -1
hyperfine -i -w 1 -r "$RUNS" -N --export-json "$OUT/hyperfine-image.json" \
  -n "leakhound image" "$LH image $IMG --format json -o $OUT/lh-image.json" \
  -n "leakhound image -j1" "$LH image $IMG -j1 --format json -o $OUT/lh-image-j1.json" \
  -n "gzip -dc, layers one after another" "sh -c 'for l in $layers; do gzip -dc \$l >/dev/null; done'" \
  -n "gzip -dc, two layers at a time" "sh -c 'ls $layers | xargs -P2 -n1 sh -c \"gzip -dc \\\$0 >/dev/null\"'"
/usr/bin/time -f "leakhound image peak RSS: %M KB" "$LH" image "$IMG" --format json -o "$OUT/lh-image.json" || true
python3 -c "
import json
d = json.load(open('$OUT/lh-image.json'))
print('findings', len(d['findings']), 'files', d['summary']['files'], 'bytes', d['summary']['bytes'])
"
wc -l <"$OUT/truth.jsonl" | sed 's/^/planted: /'
