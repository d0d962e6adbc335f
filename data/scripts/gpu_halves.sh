#!/usr/bin/env bash
# The test-halves models (benchmarks/results/halves_protocol.md) trained on a lent GPU, in one device call: the
# device check first (benchmarks/gpu_check.py, shortened: GPU_CHECK=0 skips it), then every run of NAMES (default
# deen_half ende_half) from scratch side by side with the CPU recipe unchanged (data/scripts/train.sh: 3+3 layers,
# fp32, --max-tokens 4096, seed 1, a checkpoint every 500 updates), each checkpoint scored there as it comes
# (benchmarks/aer_curve.py --stopping-rule 6000, the protocol's rule; a run whose rule fired is stopped), until
# MINUTES of training. Then each run's model is exported there (data/scripts/export_model.py) and comes back: once
# its rule fired, fairseq's checkpoint_best.pt (the shipping rule: the run's lowest validation loss; step 1 of the
# swap in halves_protocol.md); else checkpoint_last.pt (the run to continue on the CPU).
# Prepare here first: data/scripts/gpu_prepare.sh halves [NAME ...] (fills .gpu/); then the device call
#   command: bash data/scripts/gpu_halves.sh   carry: [".gpu"]   timeout_s: 600
# and afterwards data/scripts/gpu_prepare.sh --restore. MINUTES defaults to what DEADLINE (570 s) leaves after the
# check, less 120 s for fairseq's start, the last scorings (until DEADLINE - 60 s) and the exports. What comes back in $OUT (at most 8 files): results.tgz
# (every curve's .json/.md/.png, the training and scoring logs, gpu.md, each export's model_config.json,
# ship_NAME.txt, md5.txt), gpu.md and each aer_curve_NAME.md again for a look, and each export's
# model.safetensors in 15 MiB parts (NAME.model.safetensors.part0, part1). Back here, for each NAME:
#   cat NAME.model.safetensors.part* > data/models/NAME/model.safetensors (md5.txt checks it); its
#   model_config.json from results.tgz (exports/NAME/); spm.model and dict.*.txt are work/NAME's own (prepared here,
#   the same files travelled); then, if its rule fired, the swap of halves_protocol.md; else
#   `data/scripts/train_background.sh NAME` continues it on the CPU (the shipped-model path: its weights, update
#   count and LR schedule; Adam's moments afresh).
# Runs on CPU too, as a smoke test (GPU_DIR=.gpu as prepared): MINUTES=1 SAVE_EVERY=4 RULE=0 GPU_CHECK=0 LIMIT=8 \
#   bash data/scripts/gpu_halves.sh
set -euo pipefail
MINUTES=${MINUTES:-}; NAMES=${NAMES:-deen_half ende_half}; G=${GPU_DIR:-.gpu}; OUT=${OUT:-work/gpu_out}
GPU_CHECK=${GPU_CHECK:-1}; DEADLINE=${DEADLINE:-570}; RULE=${RULE:-6000}; LIMIT=${LIMIT:-0}
SAVE_EVERY=${SAVE_EVERY:-500}  # the recipe's 500; a smoke test saves more often
root=$PWD; work=$root/work/gpu_halves; start=$SECONDS
case $G in /*) ;; *) G=$root/$G ;; esac
say() { echo "[gpu_halves +$((SECONDS - start))s] $*" >&2; }
for n in $NAMES; do  # before anything is written
  [ -f "$G/halves/$n/bin.tar.xz" ] || { echo "gpu_halves: no $G/halves/$n/bin.tar.xz: run data/scripts/gpu_prepare.sh halves here first" >&2; exit 1; }
done
mkdir -p "$OUT"; rm -rf "$work"; stage=$work/out; mkdir -p "$stage" "$work/runs" "$work/exports"
bundle() {  # everything small into results.tgz (at most 8 files come back), at exit and by the watchdog
  local tmp; tmp=$(mktemp "$work/results.XXXXXX")
  local rc=0; tar czf "$tmp" -C "$stage" . 2>/dev/null || rc=$?
  if [ "$rc" -le 1 ]; then chmod 644 "$tmp"; mv -f "$tmp" "$OUT/results.tgz"; else rm -f "$tmp"; fi
  for f in "$stage"/gpu.md "$stage"/aer_curve_*.md; do  # a look at them, while under the 8 files that come back
    [ -f "$f" ] && [ "$(find "$OUT" -maxdepth 1 -type f ! -name "$(basename "$f")" | wc -l)" -lt 8 ] && cp "$f" "$OUT/" || true
  done
}
( trap 'kill $s 2>/dev/null; exit 0' TERM; sleep "$DEADLINE" & s=$!; wait $s
  bundle; echo "[gpu_halves] watchdog: bundled at ${DEADLINE}s" >&2 ) & watchdog=$!
trap 'kill $watchdog 2>/dev/null || true; wait $watchdog 2>/dev/null || true; bundle' EXIT
trap 'exit 143' TERM
shim=$work/shim; source "$root/data/scripts/gpu_env.sh"  # fairseq and fairseq-train on the device
export NORM_ALIGN_TESTSETS=$G/gold
gpu=0; python3 -c "import sys, torch; sys.exit(not torch.cuda.is_available())" && gpu=1
if [ "$GPU_CHECK" != 0 ]; then  # the device check the project runs first on any GPU it is lent (shortened)
  say "gpu_check"
  timeout 150 python3 benchmarks/gpu_check.py --device "$([ $gpu = 1 ] && echo cuda || echo cpu)" --limit 200 \
    --bench-pairs 2048 --out "$stage/gpu.md" > "$stage/gpu_check.log" 2>&1 || say "gpu_check failed: $(tail -n 5 "$stage/gpu_check.log")"
fi
set_of() { case $1 in deen*|ende*) echo rwth ;; enfr*|fren*) echo hansards ;; *) echo "gpu_halves: $1: no test set" >&2; return 1 ;; esac; }
for n in $NAMES; do  # the run folder as prepare.py left it: its record (prepare.json), pieces, dictionaries, text
  mkdir -p "$work/runs/$n"; tar -C "$work/runs/$n" -xJf "$G/halves/$n/bin.tar.xz"
  find "$G/halves/$n" -maxdepth 1 -type f ! -name bin.tar.xz -exec cp {} "$work/runs/$n/" \;
  cat "$work/runs/$n"/bin/*.bin > /dev/null  # read once: the first epoch's reads cost nothing later
done
[ -n "$MINUTES" ] || MINUTES=$(python3 -c "print(round(max(0.5, ($DEADLINE - $((SECONDS - start)) - 120) / 60), 2))")
hours=$(python3 -c "print($MINUTES / 60)")
declare -A tpid
for n in $NAMES; do
  PATH=$work/shim:$PATH LAYERS=3 OMP_NUM_THREADS=2 bash data/scripts/train.sh "$work/runs/$n" "${n:0:2}" "${n:2:2}" 30000 \
    --save-interval-updates "$SAVE_EVERY" --keep-interval-updates 200 --stop-time-hours "$hours" > "$stage/train_$n.log" 2>&1 &
  tpid[$n]=$!
done
say "training $NAMES side by side for $MINUTES min each ($([ $gpu = 1 ] && echo GPU || echo CPU: a smoke test))"
lim=(); [ "$LIMIT" = 0 ] || lim=(--limit "$LIMIT")
score() {  # NAME: score its checkpoints in update order as they come; stop its training once its rule fires
  local n=$1 run=$work/runs/$1 tset; tset=$(set_of "$1")
  local scored=" " c u verdict alive k tries
  while :; do
    alive=1; kill -0 "${tpid[$n]}" 2>/dev/null || alive=0
    # fairseq writes a checkpoint to a temporary file and renames it: every checkpoint listed is whole
    mapfile -t cks < <(ls "$run"/checkpoints/checkpoint_*_*.pt 2>/dev/null | awk -F_ '{u=$NF; sub(/\.pt$/, "", u); print u, $0}' | sort -n | cut -d' ' -f2-)
    k=0
    for c in "${cks[@]}"; do
      k=$((k + 1)); u=${c##*_}; u=${u%.pt}
      [[ $scored == *" $u "* ]] && continue
      tries=0  # a failed scoring is logged and tried once more; the run's training and export go on regardless
      until python3 benchmarks/aer_curve.py "$c" --vocab "$run" --src "${n:0:2}" --tgt "${n:2:2}" -t "$tset" \
          "${lim[@]}" --stopping-rule "$RULE" --out "$stage/aer_curve_$n" > "$stage/score_$n.out" 2>> "$stage/score_$n.log"; do
        tries=$((tries + 1)); say "$n: scoring $c failed ($tries): $(tail -n 2 "$stage/score_$n.log")"
        [ $tries -lt 2 ] || break
      done
      scored+="$u "; verdict=$(grep -h "^stopping rule" "$stage/score_$n.out" || true)
      [ -z "$verdict" ] || echo "$verdict" >> "$stage/score_$n.log"
      if [[ $verdict == *": stop ("* ]]; then
        : > "$stage/fired_$n"
        if [ $alive = 1 ] && kill -TERM "${tpid[$n]}" 2>/dev/null; then  # train.sh execs fairseq: its own pid
          say "$n: the stopping rule fired ($u updates scored); its training stops"
        fi
      fi
    done
    [ $alive = 1 ] || break
    sleep 5
  done
}
declare -A spid
for n in $NAMES; do OMP_NUM_THREADS=4 score "$n" & spid[$n]=$!; done
for n in $NAMES; do wait "${tpid[$n]}" || say "$n: training ended with status $? (its rule, or: $(tail -n 2 "$stage/train_$n.log"))"; done
# the last checkpoints are scored while the time lasts; the exports must not wait past it
export_at=$((DEADLINE - 60))
while [ $((SECONDS - start)) -lt $export_at ]; do
  running=0; for n in $NAMES; do kill -0 "${spid[$n]}" 2>/dev/null && running=1; done
  [ $running = 1 ] || break; sleep 2
done
for n in $NAMES; do
  if kill -0 "${spid[$n]}" 2>/dev/null; then say "$n: scoring stopped at ${export_at}s to export"; kill "${spid[$n]}" 2>/dev/null || true; fi
done
say "trained and scored; exporting"
: > "$stage/md5.txt"
export_one() {  # NAME: the shipping rule's checkpoint once the rule fired (fairseq's checkpoint_best.pt, as step 1
  # of the swap in halves_protocol.md), else the last one (checkpoint_last.pt: the run to continue on the CPU)
  local n=$1 ck=checkpoint_last.pt why="the rule has not fired: the run to continue"
  if [ -f "$stage/fired_$n" ]; then ck=checkpoint_best.pt; why="the rule fired: the run's lowest validation loss"; fi
  [ -f "$work/runs/$n/checkpoints/$ck" ] || { say "$n: no $ck to export"; return 1; }
  echo "$ck ($why)" > "$stage/ship_$n.txt"
  python3 data/scripts/export_model.py "$work/runs/$n/checkpoints/$ck" "$work/runs/$n" "$work/exports/$n" \
    "${n:0:2}" "${n:2:2}" > "$stage/export_$n.log" 2>&1 || { say "$n: export failed: $(tail -n 3 "$stage/export_$n.log")"; return 1; }
  mkdir -p "$stage/exports/$n"; cp "$work/exports/$n/model_config.json" "$stage/exports/$n/"
  rm -f "$OUT/$n.model.safetensors.part"*
  split -b 15M -d -a 1 "$work/exports/$n/model.safetensors" "$OUT/$n.model.safetensors.part"  # 16 MiB a file at most
  say "$n: exported $ck ($why)"
}
declare -A epid
for n in $NAMES; do export_one "$n" & epid[$n]=$!; done
for n in $NAMES; do
  wait "${epid[$n]}" || continue
  (cd "$work/exports/$n" && md5sum model.safetensors | sed "s|model.safetensors|$n/model.safetensors|") >> "$stage/md5.txt"
done
say "done: results in $OUT"
