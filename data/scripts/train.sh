#!/usr/bin/env bash
# Train a small post-LN Transformer (in the spirit of transformer_iwslt_de_en, narrower) on a
# folder made by prepare.py. Usage: data/scripts/train.sh WORKDIR SRC TGT MAX_UPDATES [extra fairseq-train args]
set -euo pipefail
work=$1; src=$2; tgt=$3; max_updates=$4; shift 4
root=$(cd "$(dirname "$0")/../.." && pwd)
# --user-dir: the plugin's loader reads --restore-file (model.pt, a checkpoint or model.safetensors)
# without running code from it; torch >= 2.6 refuses fairseq's pickled Namespace otherwise.
# exec: the caller's process becomes fairseq's, so a stop signal sent to it reaches the training itself.
exec fairseq-train "$work/bin" --user-dir "$root/fairseq_plugins" --source-lang "$src" --target-lang "$tgt" \
  --arch transformer --share-all-embeddings \
  --encoder-layers "${LAYERS:-6}" --decoder-layers "${LAYERS:-6}" --encoder-embed-dim 256 --decoder-embed-dim 256 \
  --encoder-ffn-embed-dim 1024 --decoder-ffn-embed-dim 1024 \
  --encoder-attention-heads 4 --decoder-attention-heads 4 \
  --dropout 0.2 --attention-dropout 0.1 --weight-decay 0.0001 \
  --optimizer adam --adam-betas '(0.9, 0.98)' --clip-norm 0.0 \
  --lr 1e-3 --lr-scheduler inverse_sqrt --warmup-updates 1000 \
  --criterion label_smoothed_cross_entropy --label-smoothing 0.1 \
  --max-tokens 4096 --max-update "$max_updates" --seed 1 \
  --save-dir "$work/checkpoints" --no-epoch-checkpoints --save-interval-updates 500 \
  --keep-interval-updates 1 --log-format simple --log-interval 50 --num-workers 0 "$@"
