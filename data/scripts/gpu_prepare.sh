#!/usr/bin/env bash
# Ready the one device call of the paper's setting (data/scripts/gpu_paper_setting.sh), here, from the
# repository root with .venv active. Usage:
#   data/scripts/gpu_prepare.sh            fill .gpu/ (git-ignored) and move the shipped weights aside
#   (device)  run  command: bash data/scripts/gpu_paper_setting.sh   carry: [".gpu"]   timeout_s: 600
#   data/scripts/gpu_prepare.sh --restore  put the shipped weights back
#   data/scripts/gpu_prepare.sh halves [NAME ...]   the same for the test-halves runs (data/scripts/gpu_halves.sh;
#     default deen_half ende_half): each run prepared here (make_models.sh PREPARE_ONLY=1), its binarized text
#     packed into .gpu/halves/NAME/ with its record, pieces and dictionaries; the RWTH gold as a test-set folder
#     (.gpu/gold/deen_rwth/); data/models/enfr's weights stay (the device check reads them), the others move aside
# .gpu/ holds what the device lacks or cannot reach: Python 3.12 wheels of fairseq-fixed and the four
# packages it needs that the device image has not (installed there with --no-deps), the binarized
# De-En text of the CPU models (work/deen/bin: all de-en text of ../shared + the RWTH sentences x20,
# the shipped De-En model's SentencePiece model and joint dictionary; En->De has the same dictionary), the
# shipped De->En and En->De weights (continued there), the RWTH gold (read from ../shared; it only travels to
# the device, never into git) and the FLORES-101 devtest pair for BLEU.
# The shipped weights (145 MB of tracked files) would put the tree over the device's 64 MiB limit;
# they move to work/gpu_aside/ and back.
set -euo pipefail
SHARED=${SHARED:-../shared/data}
aside=work/gpu_aside
restore() {  # never over a file that is there (weights exported since): such a copy stays in $aside
  (cd "$aside" && find . -type f) | while read -r f; do mv -n "$aside/$f" "data/models/$f"; done
  if [ -n "$(find "$aside" -type f)" ]; then
    echo "gpu_prepare: data/models already has these, left in $aside:" $(cd "$aside" && find . -type f) >&2; return 1
  fi
  rm -r "$aside"
}
if [ "${1:-}" = --restore ]; then
  [ -d "$aside" ] || { echo "gpu_prepare: nothing in $aside to restore" >&2; exit 1; }
  restore; git status --short data/models 2>/dev/null; exit 0
fi
mode=paper; names=()
if [ "${1:-}" = halves ]; then
  mode=halves; shift; names=("$@"); [ ${#names[@]} -gt 0 ] || names=(deen_half ende_half)
  for n in "${names[@]}"; do
    case $n in deen_half|ende_half|enfr_half|fren_half) ;; *) echo "$0 halves: $n is not a test-halves run" >&2; exit 2 ;; esac
  done
fi
[ $mode = halves ] || [ $# -eq 0 ] || { echo "usage: $0 [--restore | halves [NAME ...]]" >&2; exit 2; }
[ ! -d "$aside" ] || { echo "gpu_prepare: $aside exists: run '$0 --restore' first" >&2; exit 1; }
if [ -n "$(git status --porcelain data/models 2>/dev/null)" ]; then
  echo "gpu_prepare: data/models has uncommitted changes: commit them before moving the weights aside" >&2; exit 1
fi
[ -f "$SHARED/gold/deen_rwth/deen.gold" ] || { echo "gpu_prepare: no $SHARED/gold/deen_rwth/deen.gold (set SHARED)" >&2; exit 1; }
if [ $mode = paper ]; then
  if [ ! -f work/deen/bin/train.de-en.de.bin ]; then  # the shipped model's vocabulary, no training
    RESUME=data/models/deen PREPARE_ONLY=1 bash data/scripts/make_models.sh deen
  fi
  [ -f work/deen_corpus.txt.flores101-devtest.de ] || python data/scripts/deen_corpus.py "$SHARED" work/deen_corpus.txt
else
  for n in "${names[@]}"; do  # the first direction of a pair before the second (it takes the first's pieces)
    [ -f "work/$n/prepare.json" ] || PREPARE_ONLY=1 bash data/scripts/make_models.sh "$n"  # written last: prepared whole
  done
fi
rm -rf .gpu; mkdir -p .gpu/whl .gpu/gold
pip_get() {  # Python 3.12 wheels for the device (manylinux x86-64), no dependencies
  python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .gpu/whl "$@"
}
pip_get fairseq-fixed==0.12.3.1 hydra-core==1.3.2 omegaconf==2.3.0 bitarray cffi
# antlr4-python3-runtime 4.9.3 (omegaconf's parser) exists only as source: a pure-Python wheel built here
python -m pip wheel -q --no-deps -w .gpu/whl antlr4-python3-runtime==4.9.3
# fairseq's wheel carries its examples/ (9.7 of its 20.5 MB) that nothing we run imports (fairseq's own imports
# of examples.* are lazy, for speech and simultaneous translation): left out, with their RECORD lines, so that
# the tree fits the device's 64 MiB
python - .gpu/whl/fairseq_fixed-*.whl <<'PY'
import os, sys, zipfile
src = sys.argv[1]
with zipfile.ZipFile(src) as z, zipfile.ZipFile(src + ".tmp", "w", zipfile.ZIP_DEFLATED) as out:
    for i in z.infolist():
        if i.filename.startswith("fairseq/examples/"):
            continue
        data = z.read(i)
        if i.filename.endswith(".dist-info/RECORD"):
            data = b"".join(l for l in data.splitlines(True) if not l.startswith(b"fairseq/examples/"))
        out.writestr(i, data)
os.replace(src + ".tmp", src)
PY
if [ $mode = halves ]; then
  for n in "${names[@]}"; do  # each run's folder as prepare.py left it, less its intermediate text (raw/, bpe/)
    mkdir -p ".gpu/halves/$n"
    XZ_OPT=-T0 tar -C "work/$n" --exclude='*.log' -cJf ".gpu/halves/$n/bin.tar.xz" bin
    for f in prepare.json dict.joined.txt spm.model; do [ ! -f "work/$n/$f" ] || cp "work/$n/$f" ".gpu/halves/$n/"; done
  done
  mkdir -p .gpu/gold/deen_rwth  # a test-set folder (NORM_ALIGN_TESTSETS there): Hansards ships with the code
  cp "$SHARED"/gold/deen_rwth/deen.src-tgt "$SHARED"/gold/deen_rwth/deen.gold .gpu/gold/deen_rwth/
fi
if [ $mode = paper ]; then
mkdir -p .gpu/data .gpu/flores
# the binarized text, xz-compressed (23 -> about 9 MB); gpu_paper_setting.sh unpacks it there
mkdir -p .gpu/stage && cp -r work/deen/bin .gpu/stage/bin && rm -f .gpu/stage/bin/*.log
XZ_OPT=-T0 tar -C .gpu/stage -cJf .gpu/data/bin.tar.xz bin && rm -r .gpu/stage
cp work/deen/spm.model .gpu/data/spm.model
cp "$SHARED"/gold/deen_rwth/deen.src-tgt "$SHARED"/gold/deen_rwth/deen.gold .gpu/gold/
cp work/deen_corpus.txt.flores101-devtest.de work/deen_corpus.txt.flores101-devtest.en .gpu/flores/
# the shipped 3+3 weights, for their continuation on the GPU beside the paper's setting (fp16, the tied embeddings once: 19 MB each)
for n in deen ende; do mkdir -p .gpu/init/$n; cp "$(python data/scripts/fairseq_pt.py data/models/$n)" .gpu/init/$n/model.pt; done
fi
mkdir -p "$aside"
for f in data/models/*/model.pt data/models/*/model.safetensors; do
  [ -f "$f" ] || continue
  [ $mode = paper ] || [ "${f#data/models/enfr/}" = "$f" ] || continue  # gpu_check.py's model stays
  rel=${f#data/models/}; mkdir -p "$aside/$(dirname "$rel")"; mv "$f" "$aside/$rel"
done
travel=$( (git ls-files -z; git ls-files -z --others --exclude-standard) | while IFS= read -r -d '' f; do
  [ ! -f "$f" ] || stat -c %s "$f"; done | awk '{s+=$1} END {print s+0}')
gpu=$(du -sb .gpu | cut -f1)
if [ $((gpu + travel)) -gt $((64 * 1048576)) ]; then
  restore
  echo "gpu_prepare: .gpu $((gpu / 1048576)) MiB + tree $((travel / 1048576)) MiB is over the device's 64 MiB;" \
    "weights restored" >&2; exit 1
fi
echo "gpu_prepare: .gpu $((gpu / 1048576)) MiB + tree $((travel / 1048576)) MiB travel (limit 64 MiB);" \
  "weights in $aside until '$0 --restore' (do not commit meanwhile: git sees them deleted)" >&2
