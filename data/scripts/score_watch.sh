#!/usr/bin/env bash
# Score each 500-update checkpoint of a background training run as it appears (benchmarks/aer_curve.py with the
# test-halves stopping rule), beside the training. Usage, from the repository root with the .venv active:
#   nohup data/scripts/score_watch.sh NAME TESTSET [OUT] >> work/NAME.watch.log 2>&1 &
# e.g. score_watch.sh enfr_half hansards; OUT defaults to benchmarks/results/aer_curve_NAME. It polls every
# minute, scores the checkpoints not in OUT.json (aer_curve.py keeps every point), and ends when the file
# work/NAME/stop_watch exists (touch it) or no fairseq run of NAME has been alive for ten minutes.
set -euo pipefail
name=$1; tset=$2; out=${3:-benchmarks/results/aer_curve_$name}
src=${name:0:2}; tgt=${name:2:2}
ckdir="work/$name/checkpoints"; seen="work/$name/scored.txt"
mkdir -p "work/$name"; touch "$seen"
idle=0
while [ ! -e "work/$name/stop_watch" ]; do
  # checkpoint_EPOCH_UPDATES.pt, in update order; a file still being written is left for the next round
  for c in $(ls "$ckdir"/checkpoint_*_*.pt 2>/dev/null | awk -F_ '{print $NF" "$0}' | sort -n | cut -d' ' -f2); do
    grep -qxF "$c" "$seen" && continue
    [ $(( $(date +%s) - $(stat -c %Y "$c") )) -ge 30 ] || continue
    if nice -n 10 python benchmarks/aer_curve.py "$c" --vocab "work/$name" --src "$src" --tgt "$tgt" -t "$tset" \
         --stopping-rule 6000 --out "$out" > "work/$name/score.out" 2>> "work/$name/score.log"; then
      echo "$c" >> "$seen"; tail -1 "work/$name/score.out"
    else
      echo "$(date +%T) scoring $c failed (work/$name/score.log); tried again next round" >&2
    fi
  done
  if pgrep -f "fairseq-train work/$name/bin" > /dev/null; then idle=0; else idle=$((idle + 1)); fi
  [ "$idle" -lt 10 ] || break
  sleep 60
done
