"""fairseq ``--user-dir`` plugin: norm-aware word alignments (Kobayashi et al. 2020, 2021).

``fairseq-generate DATA --user-dir fairseq_plugins --task translation_norm_align --path CKPT
--print-alignment --alignment-method norm [--score-reference] [--alignment-dump DIR]``
"""

import logging
import os
import sys
import warnings


def _import_keeping_logging() -> None:
    """Import the plugin (and so fairseq) without fairseq's logging set-up taking over a library user's process.

    Importing fairseq calls ``logging.basicConfig(level=DEBUG)`` (fairseq/models/wav2vec/wav2vec2_classification.py)
    and logs INFO lines while it loads; afterwards every DEBUG record would print (matplotlib's font search
    alone: over 200 lines). A placeholder handler, passing on warnings only, makes those basicConfig calls
    no-ops for the import. When the root logger already has a handler (fairseq's CLIs load the plugin after
    importing fairseq; a user who set up logging first) nothing changes; so a process that imported fairseq
    itself before the plugin keeps fairseq's DEBUG set-up.
    """
    root = logging.getLogger()
    placeholder = None
    if not root.handlers:
        placeholder = logging.StreamHandler(sys.stderr)
        placeholder.setLevel(logging.WARNING)
        placeholder.setFormatter(logging.Formatter(logging.BASIC_FORMAT))
        root.addHandler(placeholder)
    try:
        from . import tasks  # noqa: F401  (registers translation_norm_align)
    finally:
        if placeholder is not None:
            root.removeHandler(placeholder)


_import_keeping_logging()


def _one_line_errors() -> None:
    """Under a fairseq command (fairseq-generate, python -m fairseq_cli.generate, ...), an error raised by
    this plugin or the toolkit below it (a bad --alignment-* flag, a refused checkpoint, a sentence
    whose words cannot be mapped) ends the command with one line, ``PROG: message``, and exit status 2
    (flags) or 1 (input, model), not a traceback. fairseq's own errors keep fairseq's traceback."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if not (prog.startswith("fairseq") or (spec is not None and str(spec.name).startswith("fairseq_cli"))):
        return  # a library user's process: its own excepthook stays
    ours = (
        os.path.dirname(os.path.abspath(__file__)),
        os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "align"),
    )
    previous = sys.excepthook
    name = prog if prog.startswith("fairseq") else "fairseq-" + str(getattr(spec, "name", "")).rsplit(".", 1)[-1]

    def hook(kind, value, tb):
        from .tasks import PluginUsageError

        frames, t = [], tb
        while t is not None:
            frames.append(os.path.abspath(t.tb_frame.f_code.co_filename))
            t = t.tb_next
        if isinstance(value, (ValueError, OSError)) and frames and frames[-1].startswith(ours):
            sys.stdout.flush()
            text = "; ".join(x.strip() for x in str(value).splitlines() if x.strip())  # one line, as promised
            print(f"{name}: {text or kind.__name__}", file=sys.stderr, flush=True)
            os._exit(2 if isinstance(value, PluginUsageError) else 1)
        previous(kind, value, tb)

    sys.excepthook = hook


_one_line_errors()

from .checkpoint import install_safe_loader  # noqa: E402

# fairseq's MultiheadAttention passes a bool key_padding_mask beside a float attn_mask: torch warns on every
# batch, though the result is right
warnings.filterwarnings("ignore", message=".*mismatched key_padding_mask and attn_mask.*")

# fairseq's checkpoint reading allows only the classes fairseq checkpoints need (and safetensors models).
install_safe_loader()
