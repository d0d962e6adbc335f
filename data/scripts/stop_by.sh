#!/usr/bin/env bash
# Stop a background training run cleanly: SIGTERM to its fairseq process right after it saved the checkpoint of
# UPDATES (or of more), or at the clock time DEADLINE (HH:MM, today or tomorrow) if that comes first: then it
# resumes from its last checkpoint. Usage: nohup data/scripts/stop_by.sh NAME UPDATES HH:MM >> work/stop_at.log 2>&1 &
set -euo pipefail
name=$1; want=$2; deadline=$(date -d "$3" +%s)
[ "$deadline" -gt "$(date +%s)" ] || deadline=$((deadline + 86400))
ckdir="work/$name/checkpoints"
reached() {  # the highest update count among the saved interval checkpoints
  ls "$ckdir"/checkpoint_*_*.pt 2>/dev/null | sed 's/.*_\([0-9]*\)\.pt$/\1/' | sort -n | tail -1
}
while :; do
  n=$(reached); n=${n:-0}
  if [ "$n" -ge "$want" ] || [ "$(date +%s)" -ge "$deadline" ]; then
    # fairseq writes checkpoint_last.pt after the interval checkpoint: let it finish
    sleep 20
    pid=$(pgrep -f "fairseq-train work/$name/bin" || true)
    [ -n "$pid" ] && kill -TERM $pid
    echo "$(date +%T) $name: stopped at the checkpoint of $n updates (pid ${pid:-none})"
    exit 0
  fi
  sleep 15
done
