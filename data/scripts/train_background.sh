#!/usr/bin/env bash
# Train a model in the background, resumable after any interruption, every 500-update checkpoint kept
# (benchmarks/aer_curve.py scores each one). Usage, from the repository root with the .venv active:
#   nohup data/scripts/train_background.sh {enfr|fren|deen|ende} [MAX_UPDATES] > work/NAME.train.log 2>&1 &
# It prepares work/NAME once (data/scripts/make_models.sh with PREPARE_ONLY=1), then trains from, in this order:
#   work/NAME/checkpoints/checkpoint_last.pt   (this machine's own run: weights, Adam's moments, data position)
#   data/models/NAME                           (the shipped model: weights, update count, LR schedule; for NAME_half
#                                              data/models/NAME_half or, once they replaced the x20 models,
#                                              data/models/NAME if it is of the test-halves protocol)
#   nothing                                    (from scratch)
# nice 19 and OMP_NUM_THREADS=1 (default; the machine has 2 cores and two such runs share it).
# Stop it with `kill PID` (fairseq's own process); the last saved checkpoint is where it resumes.
set -euo pipefail
name=$1; updates=${2:-30000}
src=${name:0:2}; tgt=${name:2:2}
ckpt="work/$name/checkpoints/checkpoint_last.pt"
protocol() { python -c 'import sys; from align.gold.protocol import protocol_of; print(protocol_of(sys.argv[1:]))' "$1"; }
# The shipped model to continue, when work/ is gone: of the recipe's own protocol only (the test-halves models
# replace the x20 ones under the same names: data/models/enfr may be enfr_half's model)
shipped=""
if [ -f "$ckpt" ]; then
  :  # this machine's own run goes on; no shipped model is read
elif [[ $name == *_half ]]; then
  for d in "data/models/$name" "data/models/${name%_half}"; do
    [ -d "$d" ] || continue
    p=$(protocol "$d")  # on its own line: set -e stops here if the record cannot be read
    if [ "$p" = halves ]; then shipped=$d; break; fi
  done
elif [ -d "data/models/$name" ]; then
  p=$(protocol "data/models/$name")
  if [ "$p" = halves ]; then
    echo "data/models/$name is a model of the test-halves protocol: continuing it on $name's text (every test sentence x20) would mix the two; train ${name}_half" >&2
    exit 2
  fi
  shipped="data/models/$name"
fi
if [ ! -f "work/$name/prepare.json" ]; then  # prepare.py writes it last: a run prepared whole
  RESUME=$shipped PREPARE_ONLY=1 bash data/scripts/make_models.sh "$name"
fi
restore=()
if [ -f "$ckpt" ]; then
  echo "resuming from $ckpt" >&2
elif [ -n "$shipped" ]; then
  restore=(--restore-file "$(python data/scripts/fairseq_pt.py "$shipped")")
  echo "continuing the shipped model $shipped" >&2
else
  echo "training $name from scratch" >&2
fi
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
echo "threads: $OMP_NUM_THREADS" >&2  # data/scripts/model_card.py reads it per run
exec nice -n 19 env LAYERS=3 bash data/scripts/train.sh "work/$name" "$src" "$tgt" "$updates" \
  --save-interval-updates 500 --keep-interval-updates 200 "${restore[@]}"
