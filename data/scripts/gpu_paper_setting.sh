#!/usr/bin/env bash
# The 2020 paper's model setting on a GPU, in one device call: transformer_iwslt_de_en (6+6 layers,
# d=512, 4 heads, FFN 1024, shared embeddings), fp16, trained from scratch on the text of the CPU models
# (all de-en text of ../shared + the RWTH sentences x20, the shipped De-En vocabulary), De->En and En->De
# side by side on the one GPU for MINUTES of training each (default 5); then exported, the RWTH
# experiment (benchmarks/rwth_experiment.py, on the GPU) and FLORES-101 devtest BLEU of both.
# Prepare here first: data/scripts/gpu_prepare.sh (fills .gpu/); then the device call
#   command: bash data/scripts/gpu_paper_setting.sh   carry: [".gpu"]   timeout_s: 600
# and afterwards data/scripts/gpu_prepare.sh --restore. Results come back in $OUT: rwth_deen_6x6.{md,json},
# its two heat maps, both training logs, its log and bleu.txt. The weights stay on the device: about 40M
# parameters, 80 MB even in fp16, over the 16 MiB a returned file may have.
# Runs on CPU too, as a smoke test (no fp16): MINUTES=0.5 LIMIT=8 bash data/scripts/gpu_paper_setting.sh
set -euo pipefail
MINUTES=${MINUTES:-5}; LIMIT=${LIMIT:-0}; G=${GPU_DIR:-.gpu}; OUT=${OUT:-work/gpu_out}
root=$PWD; work=work/gpu; start=$SECONDS
say() { echo "[gpu_paper_setting +$((SECONDS - start))s] $*" >&2; }
[ -d "$G/data/bin" ] || { echo "gpu_paper_setting: no $G/data/bin: run data/scripts/gpu_prepare.sh here first" >&2; exit 1; }
mkdir -p "$OUT"; rm -rf "$work"; mkdir -p "$work"
if ! python3 -c "import fairseq" 2>/dev/null; then  # the device image has torch, not fairseq
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$G"/whl/*.whl
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$root${PYTHONPATH:+:$PYTHONPATH} TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 PYTHONUNBUFFERED=1
python3 -c "import fairseq, torch; print('fairseq', fairseq.__version__, 'torch', torch.__version__,
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no GPU')" >&2
if python3 -c "import sys, torch; sys.exit(not torch.cuda.is_available())"; then
  device=cuda; precision=(--fp16); how="$MINUTES min fp16 on one GPU"
else
  device=cpu; precision=(--cpu); how="$MINUTES min on CPU, a smoke test"
fi
hours=$(python3 -c "print($MINUTES / 60)")
train() {  # NAME SRC TGT: the CPU recipe's optimisation (data/scripts/train.sh), the paper's architecture
  python3 -m fairseq_cli.train "$G/data/bin" --user-dir "$root/fairseq_plugins" --source-lang "$2" --target-lang "$3" \
    --arch transformer_iwslt_de_en --share-all-embeddings "${precision[@]}" \
    --dropout 0.2 --attention-dropout 0.1 --weight-decay 0.0001 \
    --optimizer adam --adam-betas '(0.9, 0.98)' --clip-norm 0.0 \
    --lr 1e-3 --lr-scheduler inverse_sqrt --warmup-updates 1000 \
    --criterion label_smoothed_cross_entropy --label-smoothing 0.1 \
    --max-tokens 4096 --stop-time-hours "$hours" --seed 1 \
    --save-dir "$work/$1/checkpoints" --no-epoch-checkpoints --save-interval-updates 1000000 \
    --log-format simple --log-interval 100 --num-workers 2 > "$OUT/train_$1.log" 2>&1
}
say "training De->En and En->De side by side, $MINUTES min each, on $device"
train deen de en & p1=$!
train ende en de & p2=$!
ok=0; wait $p1 || ok=1; wait $p2 || ok=1
[ $ok -eq 0 ] || { tail -n 20 "$OUT"/train_*.log >&2; exit 1; }
for pair in "deen de en" "ende en de"; do
  set -- $pair
  python3 data/scripts/export_model.py "$work/$1/checkpoints/checkpoint_last.pt" "$G/data" "$work/models/$1" "$2" "$3"
  grep -h "| valid on" "$OUT/train_$1.log" | tail -n 1 >&2 || true
done
say "exported; RWTH experiment and BLEU"
lim=(); [ "$LIMIT" = 0 ] || lim=(--limit "$LIMIT")
{ python3 data/scripts/bleu.py "$work/models/deen" "$G"/flores/deen_corpus.txt.flores101-devtest.{de,en} de en "${lim[@]}"
  python3 data/scripts/bleu.py "$work/models/ende" "$G"/flores/deen_corpus.txt.flores101-devtest.{en,de} en de "${lim[@]}"
} > "$OUT/bleu.txt" &
bleu=$!
python3 benchmarks/rwth_experiment.py --device "$device" --forward "$work/models/deen" --reverse "$work/models/ende" \
  --gold-dir "$G/gold" --others '' --out "$work/results" --name rwth_deen_6x6 "${lim[@]}" \
  --title "RWTH De-En word alignment, the paper's setting (transformer_iwslt_de_en, $how)" \
  > /dev/null 2> "$OUT/rwth.log" || { tail -n 30 "$OUT/rwth.log" >&2; exit 1; }
wait $bleu
cp "$work"/results/rwth_deen_6x6.md "$work"/results/rwth_deen_6x6.json "$work"/results/rwth_deen_6x6_*.png "$OUT"/
cat "$OUT/bleu.txt" >&2
sed -n "/^## Headline/,/choices:/p" "$OUT/rwth_deen_6x6.md" >&2
say "done: results in $OUT"
