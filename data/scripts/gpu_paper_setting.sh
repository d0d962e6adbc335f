#!/usr/bin/env bash
# The 2020 paper's model setting on a GPU, in one device call: transformer_iwslt_de_en (6+6 layers,
# d=512, 4 heads, FFN 1024, shared embeddings), fp16, trained from scratch on the text of the CPU models
# (all de-en text of ../shared + the RWTH sentences x20, the shipped De-En vocabulary), De->En and En->De
# side by side on the one GPU for MINUTES of training each (default 5); then exported, the RWTH
# experiment (benchmarks/rwth_experiment.py, on the GPU) and FLORES-101 devtest BLEU of both.
# Beside them, CONTINUE=1 (the default): the shipped 3+3 CPU models (De->En and En->De, $G/init/NAME/model.pt)
# continue for the same MINUTES with the CPU recipe (data/scripts/train.sh) at the GPU's batch; their
# exported weights come back (19 MB each, in parts: cat cont_NAME.model.pt.part* > model.pt) with BLEU,
# and the RWTH experiment on them runs back here, on the weights that will ship.
# Prepare here first: data/scripts/gpu_prepare.sh (fills .gpu/); then the device call
#   command: bash data/scripts/gpu_paper_setting.sh   carry: [".gpu"]   timeout_s: 600
# and afterwards data/scripts/gpu_prepare.sh --restore. Results come back in $OUT (at most 8 files): results.tgz
# (rwth_deen_6x6.{md,json}, its two heat maps, every training log, the experiment's log, bleu.txt, md5.txt),
# rwth_deen_6x6.md and bleu.txt again for a look, and the continued models' parts. The weights stay on the device: about 40M
# parameters, 79 MB each even in fp16, over what may come back (8 files of at most 16 MiB, 64 MiB together).
# Runs on CPU too, as a smoke test (no fp16): MINUTES=0.5 LIMIT=8 MAX_TOKENS=4096 bash data/scripts/gpu_paper_setting.sh
set -euo pipefail
MINUTES=${MINUTES:-5}; LIMIT=${LIMIT:-0}; MAX_TOKENS=${MAX_TOKENS:-32768}; G=${GPU_DIR:-.gpu}; OUT=${OUT:-work/gpu_out}
CONTINUE=${CONTINUE:-1}; DEADLINE=${DEADLINE:-560}; PAPER=${PAPER:-1}; CONT_BLEU=${CONT_BLEU:-1}
root=$PWD; work=work/gpu; start=$SECONDS
case $G in /*) ;; *) G=$root/$G ;; esac
say() { echo "[gpu_paper_setting +$((SECONDS - start))s] $*" >&2; }
if [ ! -d "$G/data/bin" ] && [ ! -f "$G/data/bin.tar.xz" ]; then  # before anything is written
  echo "gpu_paper_setting: no $G/data/bin(.tar.xz): run data/scripts/gpu_prepare.sh here first" >&2; exit 1
fi
mkdir -p "$OUT"; rm -rf "$work"; stage=$work/out; mkdir -p "$stage"
# gpu_prepare.sh packs the binarized text (the tree that travels is at most 64 MiB): unpacked into $work, never
# into $G, so that a smoke test here leaves .gpu as it was measured for the device
data=$G/data
if [ ! -d "$data/bin" ]; then
  data=$root/$work/data; mkdir -p "$data"; tar -C "$data" -xJf "$G/data/bin.tar.xz"; cp "$G/data/spm.model" "$data/"
fi
# Everything is written to $stage and bundled into $OUT at the end, at exit, and at DEADLINE seconds (a
# watchdog, for a call stopped at its limit), since at most 8 files come back. Each bundle writes its own
# temporary file; tar's exit status 1 (a log grew while read) still makes a usable archive.
bundle() {
  local tmp; tmp=$(mktemp "$root/$work/results.XXXXXX")
  local rc=0; tar czf "$tmp" -C "$stage" . 2>/dev/null || rc=$?
  if [ "$rc" -le 1 ]; then chmod 644 "$tmp"; mv -f "$tmp" "$OUT/results.tgz"; else rm -f "$tmp"; fi
  for f in rwth_deen_6x6.md bleu.txt; do [ ! -f "$stage/$f" ] || cp "$stage/$f" "$OUT/"; done
}
( trap 'kill $s 2>/dev/null; exit 0' TERM; sleep "$DEADLINE" & s=$!; wait $s
  bundle; echo "[gpu_paper_setting] watchdog: bundled at ${DEADLINE}s" >&2 ) & watchdog=$!
trap 'kill $watchdog 2>/dev/null || true; wait $watchdog 2>/dev/null || true; bundle' EXIT
trap 'exit 143' TERM
shim=$root/$work/shim; source "$root/data/scripts/gpu_env.sh"  # fairseq and fairseq-train on the device
if python3 -c "import sys, torch; sys.exit(not torch.cuda.is_available())"; then
  device=cuda; precision=(--fp16); how="$MINUTES min fp16 on one GPU"
else
  device=cpu; precision=(--cpu); how="$MINUTES min on CPU, a smoke test"
fi
hours=$(python3 -c "print($MINUTES / 60)")
train() {  # NAME SRC TGT: the CPU recipe (data/scripts/train.sh) with the paper's architecture, at the batch the
  # GPU needs. Measured on the H200 (2026-12-04): at --max-tokens 4096 it ran 5-10 updates/s (16-37k tokens/s),
  # so 5 minutes gave 1,600 updates, validation perplexity 58 and 86, AER above 91 and BLEU under 0.5;
  # at 32768 the second epoch ran 15-17 updates/s (about 330k tokens/s), ten times the tokens. Peak learning
  # rate 7e-4 for the eight-fold batch (5e-4 is fairseq's IWSLT rate at 4096 tokens; 1e-3 risks fp16 loss-scale
  # underflow in a post-LN 6+6 model; the 70-second probe at 32768 tokens was stable past 7e-4), warm-up
  # 1000 of the ~4,000 updates. --save-interval 1000: no 480 MB checkpoint every epoch (about 17 of them);
  # fairseq still saves when the time is up. Run at 32768 (2026-12-04, the two directions side by side; the
  # 3+3 continuations of that call stopped at loading): 8-9 updates/s after a first pass at 2-3 (the probe's
  # 15-17 is unexplained), about 2,000 updates in 5 minutes, validation perplexity 22-23.
  python3 -m fairseq_cli.train "$data/bin" --user-dir "$root/fairseq_plugins" --source-lang "$2" --target-lang "$3" \
    --arch transformer_iwslt_de_en --share-all-embeddings "${precision[@]}" \
    --dropout 0.2 --attention-dropout 0.1 --weight-decay 0.0001 \
    --optimizer adam --adam-betas '(0.9, 0.98)' --clip-norm 0.0 \
    --lr 7e-4 --lr-scheduler inverse_sqrt --warmup-updates 1000 \
    --criterion label_smoothed_cross_entropy --label-smoothing 0.1 \
    --max-tokens "$MAX_TOKENS" --stop-time-hours "$hours" --seed 1 \
    --save-dir "$work/$1/checkpoints" --no-epoch-checkpoints --save-interval 1000 --save-interval-updates 1000000 \
    --log-format simple --log-interval 100 --num-workers 4 > "$stage/train_$1.log" 2>&1
}
# The first epoch ran at a quarter of the second's speed at both batch sizes (4-5 vs 10-16 updates/s; about
# 50 s of the 5 minutes at 32768 tokens). Cause unmeasured: the allocator meeting new batch shapes, or reading
# the text; reading the binarized text once beforehand costs a second and rules out the second.
cat "$data"/bin/*.bin > /dev/null
# and fewer cudaMalloc calls as batch shapes change (the allocator's other suspect)
export PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}
continue_cpu() {  # NAME SRC TGT: the shipped 3+3 model, on with data/scripts/train.sh (its arguments, the last of a
  # repeated option winning): the weights of model.pt (on a CPU its update count and LR schedule too), the
  # GPU's batch, a fresh pass over the text; checkpoints every 1000 updates. Measured on the H200 (2026-12-04,
  # the two alone): 13-21 updates/s after a first pass (about 200 updates) at 2-3; 746 / 812 updates in 2 min.
  mkdir -p "$work/c_$1"; ln -s "$data/bin" "$work/c_$1/bin"
  PATH=$root/$work/shim:$PATH LAYERS=3 bash data/scripts/train.sh "$work/c_$1" "$2" "$3" 1000000 \
    --restore-file "$G/init/$1/model.pt" --reset-dataloader "${precision[@]}" --max-tokens "$MAX_TOKENS" \
    "${reset[@]}" \
    --stop-time-hours "$hours" --save-interval-updates 1000 --num-workers 2 > "$stage/train_c_$1.log" 2>&1
}
# fp16 wraps Adam in FP16Optimizer, which fairseq will not load the CPU runs' FairseqAdam state into (the
# first device call failed so): the optimizer starts afresh, and with it the update count and LR schedule,
# re-warmed over 500 updates to 5e-4 (the CPU schedule stood at 2.5e-4 at 16,000 updates; the batch is 8x)
reset=(); [ "$device" = cpu ] && [ -z "${FORCE_RESET:-}" ] || reset=(--reset-optimizer --lr 5e-4 --warmup-updates 500)
cont=(); if [ "$CONTINUE" != 0 ]; then for n in deen ende; do [ ! -f "$G/init/$n/model.pt" ] || cont+=("$n"); done; fi
say "training De->En and En->De side by side, $MINUTES min each, on $device${cont:+; the shipped 3+3 models on beside them}"
p1=; p2=
if [ "$PAPER" != 0 ]; then train deen de en & p1=$!; train ende en de & p2=$!; fi
cpids=()
for n in "${cont[@]}"; do continue_cpu "$n" "${n:0:2}" "${n:2:2}" & cpids+=($!); done
# a direction whose training failed is reported and left out; the other's minutes are not lost
[ -z "$p1" ] || wait $p1 || say "De->En training failed: $(tail -n 3 "$stage/train_deen.log")"
[ -z "$p2" ] || wait $p2 || say "En->De training failed: $(tail -n 3 "$stage/train_ende.log")"
for i in "${!cpids[@]}"; do
  wait "${cpids[$i]}" || say "continuing ${cont[$i]} failed: $(tail -n 3 "$stage/train_c_${cont[$i]}.log")"
done
exports=()
for r in deen ende "${cont[@]/#/c_}"; do  # the paper's models, then the continued ones (c_NAME)
  n=${r#c_}
  [ -f "$work/$r/checkpoints/checkpoint_last.pt" ] || continue
  python3 data/scripts/export_model.py "$work/$r/checkpoints/checkpoint_last.pt" "$data" "$work/models/$r" \
    "${n:0:2}" "${n:2:2}" &
  exports+=($!)
  grep -h "| valid on" "$stage/train_$r.log" | tail -n 1 >&2 || true
done
[ ${#exports[@]} -gt 0 ] || { echo "gpu_paper_setting: no model trained" >&2; exit 1; }
for p in "${exports[@]}"; do wait "$p" || say "an export failed"; done
for n in "${cont[@]}"; do  # a returned file is at most 16 MiB
  [ -f "$work/models/c_$n/model.pt" ] || continue
  split -b 15M -d -a 1 "$work/models/c_$n/model.pt" "$OUT/cont_$n.model.pt.part"
  (cd "$work/models/c_$n" && md5sum model.pt | sed "s|model.pt|cont_$n/model.pt|") >> "$stage/md5.txt"
done
say "exported; RWTH experiment and BLEU"
lim=(); [ "$LIMIT" = 0 ] || lim=(--limit "$LIMIT")
bleu() {  # LABEL MODEL_DIR [bleu.py options]: FLORES-101 devtest BLEU, the direction from the folder's name
  local label=$1 m=$2 n=${2##*/}; shift 2; n=${n#c_}; [ -f "$m/model.pt" ] || return 0
  echo "$m (${n:0:2}->${n:2:2}), $label:"
  python3 data/scripts/bleu.py "$m" "$G"/flores/deen_corpus.txt.flores101-devtest.{"${n:0:2}","${n:2:2}"} \
    "${n:0:2}" "${n:2:2}" "${lim[@]}" "$@" 2>&1 | grep -v "^INFO" || echo "bleu $m: failed"; }
# at most 1.2 x source + 10 tokens: an undertrained model may otherwise decode 200 tokens a sentence
{ for n in deen ende; do bleu "at most 1.2 x source + 10 tokens" "$work/models/$n" --max-len-a 1.2 --max-len-b 10; done
} > "$stage/bleu.txt" 2>&1 &
bleu_job=$!
# the continued 3+3 models as their shipped figures were made (no length limit)
[ "$CONT_BLEU" = 0 ] || { for n in deen ende; do bleu "shipped models' settings" "$work/models/c_$n"; done
} > "$stage/bleu_cont.txt" 2>&1 &
cbleu_job=$!
# into $stage, bundled into $OUT whatever happens later
[ ! -f "$work/models/deen/model.pt" ] || python3 benchmarks/rwth_experiment.py --device "$device" --forward "$work/models/deen" --reverse "$work/models/ende" \
  --gold-dir "${G#"$root"/}/gold" --others '' --out "$stage" --name rwth_deen_6x6 "${lim[@]}" \
  --title "RWTH De-En word alignment, the paper's setting (transformer_iwslt_de_en, $how)" \
  > /dev/null 2> "$stage/rwth.log" || say "RWTH experiment failed: $(tail -n 30 "$stage/rwth.log")"
wait $bleu_job || true
wait $cbleu_job || true
[ ! -f "$stage/bleu_cont.txt" ] || cat "$stage/bleu_cont.txt" >> "$stage/bleu.txt"; cat "$stage/bleu.txt" >&2
[ ! -f "$stage/rwth_deen_6x6.md" ] || sed -n "/^## Headline/,/choices:/p" "$stage/rwth_deen_6x6.md" >&2
say "done: results in $OUT"
