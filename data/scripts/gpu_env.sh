# Sourced (never run) by the device scripts gpu_halves.sh and gpu_paper_setting.sh, with G (the carried .gpu/,
# absolute), root (the repository root) and shim (a folder to write) set: makes fairseq importable and
# fairseq-train callable on the device, whose image has torch but not fairseq, and says what it runs on.
if ! python3 -c "import fairseq" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$G"/whl/*.whl \
    || python3 -c "import glob, sys, zipfile; [zipfile.ZipFile(w).extractall('/tmp/site') for w in sys.argv[1:]]" \
      "$G"/whl/*.whl  # no pip there: a wheel is a zip of its packages
  export PYTHONPATH=/tmp/site
fi
# every checkpoint is read through the project's allow-listed loader (--user-dir fairseq_plugins, or the scripts'
# own imports of fairseq_plugins.checkpoint): nothing here lifts torch's weights-only default
export PYTHONPATH=$root${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
mkdir -p "$shim"  # train.sh calls fairseq-train, which a --target install does not put on PATH
printf '#!/bin/sh\nexec python3 -m fairseq_cli.train "$@"\n' > "$shim/fairseq-train"
chmod +x "$shim/fairseq-train"
python3 -c "import fairseq, torch; print('fairseq', fairseq.__version__, 'torch', torch.__version__,
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no GPU')" >&2
