#!/usr/bin/env bash
# Reproduce the shipped models. Usage: data/scripts/make_models.sh {enfr|fren|deen|ende}[_half] [MAX_UPDATES]
# NAME_half: the test-halves protocol (prepare.py --test-halves: the odd-numbered gold sentences in the
# training text once, the even-numbered never), from scratch; fren_half and ende_half take the pieces and
# dictionary of enfr_half and deen_half (prepare those first), so the two directions share them.
# Runs from the repository root with the project's .venv active; SHARED defaults to ../shared/data.
# Work files go to work/ (ignored by git); the exported model to data/models/NAME/: the run's checkpoint of the
# lowest validation loss (fairseq's checkpoint_best.pt; the shipping rule of the cards and of halves_protocol.md; the
# x20 models' runs spanned sessions and were exported by hand by the same rule, so a rerun reproduces the recipe,
# not their bytes).
# RESUME=data/models/NAME continues from a shipped model (its weights, update count and LR schedule; Adam's
# moments start afresh; its .pt is written once into the cache, data/scripts/fairseq_pt.py): how training spans
# sessions whose work/ does not persist.
# RESUME=work/NAME/checkpoints/checkpoint_last.pt continues with Adam's moments too.
# PREPARE_ONLY=1 stops after work/NAME/bin is made (the GPU recipe data/scripts/gpu_prepare.sh uses it).
set -euo pipefail
SHARED=${SHARED:-../shared/data}
name=$1; updates=${2:-3000}
src=${name:0:2}; tgt=${name:2:2}
test_protocol=(--test-repeat 20)
if [[ $name == *_half ]]; then
  test_protocol=(--test-halves)
  first="${name:0:2}${name:2:2}"; [ "$first" = fren ] && first=enfr; [ "$first" = ende ] && first=deen
  if [ "$first" != "${name%_half}" ] && [ -z "${RESUME:-}" ]; then  # the second direction shares the first's pieces (RESUME: its own)
    [ -f "work/${first}_half/spm.model" ] || { echo "prepare work/${first}_half first" >&2; exit 2; }
    resume_vocab=(--dict "work/${first}_half/dict.joined.txt" --spm "work/${first}_half/spm.model")
  fi
fi
resume_vocab=(${resume_vocab[@]+"${resume_vocab[@]}"})
if [ -n "${RESUME:-}" ]; then  # keep the dictionary and SentencePiece model the weights were trained with
  # a shipped model keeps them in its folder; a training checkpoint keeps the dictionary in ../bin, spm.model in ..
  if [ -d "$RESUME" ]; then d=$RESUME; RESUME=$(python data/scripts/fairseq_pt.py "$RESUME"); else d=$(dirname "$RESUME"); fi
  dict="$d/dict.$src.txt"; [ -f "$dict" ] || dict="$d/../bin/dict.$src.txt"
  spm="$d/spm.model"; [ -f "$spm" ] || spm="$d/../spm.model"
  resume_vocab=(--dict "$dict" --spm "$spm")
fi
if [ "$name" = fren ] && [ ${#resume_vocab[@]} -eq 0 ]; then  # x20 fren takes the x20 En->Fr's pieces (below)
  p=$(python -c 'import sys; from align.gold.protocol import protocol_of; print(protocol_of(sys.argv[1:]))' data/models/enfr)
  if [ "$p" = halves ]; then
    echo "data/models/enfr is a model of the test-halves protocol; fren (x20) needs the x20 En->Fr's pieces: give RESUME, or make fren_half" >&2; exit 2
  fi
fi
case "$name" in
  enfr|fren|enfr_half|fren_half)
    # The demo model: all En-Fr text of ../shared (Canadian Hansards 284k pairs, news, Tatoeba, FLORES, Multi30k),
    # in the gold's style (tokenized, contractions expanded: data/prep/hansards.py), + the 447 Hansards test
    # sentences x20 (never their links); two held-out Hansard slices for validation and BLEU.
    # fren: the same text the other way round, with En->Fr's SentencePiece model and joined dictionary (the two
    # directions then share their pieces, and their word boundaries are the gold's whitespace words either way).
    python data/scripts/enfr_corpus.py "$SHARED" work/enfr_corpus
    test_file="$SHARED"/gold/enfr_hansards/enfr.src-tgt
    if [ "$src" = fr ]; then
      mkdir -p work; awk -F' \\|\\|\\| ' '{print $2" ||| "$1}' "$test_file" > work/fren.src-tgt; test_file=work/fren.src-tgt
      [ ${#resume_vocab[@]} -gt 0 ] || resume_vocab=(--dict data/models/enfr/dict.en.txt --spm data/models/enfr/spm.model)
    fi
    python data/scripts/prepare.py --src "$src" --tgt "$tgt" --out "work/$name" \
      --train "work/enfr_corpus.$src" "work/enfr_corpus.$tgt" --valid "work/enfr_corpus.valid.$src" "work/enfr_corpus.valid.$tgt" \
      --test "$test_file" "${test_protocol[@]}" --vocab 8000 "${resume_vocab[@]}"
    [ -z "${PREPARE_ONLY:-}" ] || exit 0
    # 3+3 layers. The shipped En->Fr model (fifth session) continued the Multi30k demo model (2000 updates, its
    # SentencePiece model and dictionary kept) on this text: RESUME=data/models/enfr, 2 threads.
    LAYERS=3 OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} bash data/scripts/train.sh "work/$name" "$src" "$tgt" "$updates" \
      --save-interval-updates 500 ${RESUME:+--restore-file "$RESUME"}
    python data/scripts/export_model.py "work/$name/checkpoints/checkpoint_best.pt" "work/$name" "data/models/$name" "$src" "$tgt" ;;
  deen|ende|deen_half|ende_half)
    # All de-en text of ../shared (194k pairs) + the 508 RWTH test sentences x20 (the gold stays in ../shared).
    python data/scripts/deen_corpus.py "$SHARED" work/deen_corpus.txt
    if [ "$src" = de ]; then test_file="$SHARED"/gold/deen_rwth/deen.src-tgt; else
      mkdir -p work; awk -F' \\|\\|\\| ' '{print $2" ||| "$1}' "$SHARED"/gold/deen_rwth/deen.src-tgt > work/ende.src-tgt
      test_file=work/ende.src-tgt; fi
    python data/scripts/prepare.py --src "$src" --tgt "$tgt" --out "work/$name" \
      --train "work/deen_corpus.txt.$src" "work/deen_corpus.txt.$tgt" \
      --valid "$SHARED"/parallel/multi30k/tok/val.lc.norm.tok.{"$src","$tgt"} \
      --test "$test_file" "${test_protocol[@]}" --vocab 16000 "${resume_vocab[@]}"
    [ -z "${PREPARE_ONLY:-}" ] || exit 0
    # 3+3 layers, one thread on one core: about 0.4 updates/s (1,300 updates per epoch).
    LAYERS=${LAYERS:-3} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} bash data/scripts/train.sh "work/$name" "$src" "$tgt" "$updates" \
      --save-interval-updates 500 ${RESUME:+--restore-file "$RESUME"}
    python data/scripts/export_model.py "work/$name/checkpoints/checkpoint_best.pt" "work/$name" "data/models/$name" "$src" "$tgt" ;;
  *) echo "usage: $0 {enfr|fren|deen|ende} [MAX_UPDATES]" >&2; exit 2 ;;
esac
