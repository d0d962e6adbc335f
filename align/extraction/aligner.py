"""One Python API over every framework: align tokenized sentence pairs with a loaded model.

Framework packages (``fairseq_plugins.hub.NormAligner``, ``hf_plugins.hub.HFAligner``) subclass
:class:`Aligner` with their tokenization and translation; batching, scoring, word maps and links
live here. Links are 0-based ``(src_word, tgt_word)``; score matrices ``(tgt_words, src_words)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..attribution.methods import METHODS
from ..io.text import split_tokens
from ..links.blend import blend_scores
from ..links.decode import decode
from ..links.rows import select_rows
from ..links.subwords import SPECIAL, WordMapError, aggregate_scores
from ..spec.alignspec import AlignSpec
from ..spec.setting import Blend, Setting
from .adapters import Adapter
from .engine import LOGPROBS, check_spec, links_for, n_layers_heads, score_pairs

Key = tuple[str, int, str]


@dataclass(frozen=True)
class Encoded:
    """One tokenized side: ids and the word of each id (-1: special, never linked); ``dropped``: words
    cut off the end to fit the model's positions (``truncate=True``)."""

    ids: list[int]
    words: np.ndarray
    dropped: int = 0


def sentence_labels(words: np.ndarray, n_labels: int) -> np.ndarray:
    """(n_labels,) bool: the labels that are the target sentence itself, its words' pieces and its end (the first
    special label after the last word), not a language code before the words (NLLB, M2M100, mBART-50: ``lang X
    </s>``) or after the end (mBART-cc25: ``X </s> lang``): the model cannot know a many-to-many target's code from
    the sentence, and its cost, a few nats spread over the sentence's tokens, would make short pairs look worse.
    ``words``: the target's word of each label but the last (-1 special), as the adapters encode it; every label
    when there is no word or another layout."""
    w = np.asarray(words)
    keep = np.ones(n_labels, dtype=bool)
    if len(w) != n_labels - 1 or not (w >= 0).any():
        return keep
    keep[:] = False
    keep[: len(w)] = w >= 0
    keep[int(np.flatnonzero(w >= 0)[-1]) + 1] = True
    return keep


class TooLongError(WordMapError):
    """A sentence with more tokens than the model has positions."""


def as_words(sentence: str | Sequence[str]) -> list[str]:
    """Whitespace words of a sentence (ASCII space and tab), or the given word list."""
    return split_tokens(sentence) if isinstance(sentence, str) else list(sentence)


def check_words(enc: Encoded, words: Sequence[str], pieces: Sequence[str], what: str) -> None:
    """Raise WordMapError, showing both sides, unless the tokens make exactly the input's words."""
    real = enc.words[enc.words != SPECIAL]
    got = len(np.unique(real))  # distinct words: a word the tokenizer dropped is not counted
    if got != len(words) or (len(real) and (np.any(np.diff(real) < 0) or np.any(np.diff(real) > 1) or real[0] != 0)):
        empty = [w for w in range(len(words)) if w not in set(real.tolist())]
        raise WordMapError(
            f"{what}: {len(pieces)} tokens make {got} words but the text has {len(words)}"
            + (f" (no token for word {', '.join(f'{w + 1} {words[w]!r}' for w in empty)})" if empty else "")
            + "\n"
            f"  tokens: {' '.join(pieces)}\n  words:  {' '.join(words)}"
        )


class Aligner:
    """A loaded translation model that aligns (source, target) sentence pairs with every method.

    ``max_positions`` is (source, target) tokens the model takes, specials included (None: no
    limit); ``lowercase`` says the model was trained on lowercased text (from its config), and every
    sentence is lowercased before tokenization.
    """

    max_positions: tuple[int | None, int | None] = (None, None)
    lowercase: bool = False
    alignment_layer: Any = None
    """The trained alignment layer the ``learned`` method reads (:func:`align.extraction.alignment_layer.attach`)."""

    def __init__(self, model, adapter: Adapter, pad: int) -> None:
        self.model, self.adapter, self.pad = model.eval(), adapter, pad
        self.n_layers, self.n_heads = n_layers_heads(model, adapter)

    # --- what a framework provides ---------------------------------------------------------
    def encode_source(self, words: list[str], what: str) -> Encoded:
        """Source ids (specials included) and their words; ``what`` names the sentence in errors."""
        raise NotImplementedError

    def encode_target(self, words: list[str], what: str) -> Encoded:
        """Target labels (what each decoder step predicts, specials included; the last one a
        special) and the words of all labels but the last."""
        raise NotImplementedError

    def translate(self, sources: Sequence[str | Sequence[str]], batch_size: int = 16, **generate) -> list[list[str]]:
        """Translate source sentences; the output as word lists (whitespace split)."""
        raise NotImplementedError

    def identity(self) -> dict:
        """The model's part of a run signature (a digest of its files, or a Hub revision)."""
        return {}

    def languages(self) -> tuple[str | None, str | None]:
        """(source, target) language codes the model declares (its task's, or a multilingual tokenizer's
        chosen pair); None where it declares none."""
        return None, None

    def preprocess(self, words: Sequence[str]) -> list[str]:
        """What the model's training text went through (lowercasing, when its config says so)."""
        return [w.lower() for w in words] if self.lowercase else list(words)

    def preprocessing(self) -> dict:
        """The preprocessing applied, for summaries and run signatures."""
        return {"lowercase": bool(self.lowercase)}

    def spec(
        self,
        methods: Iterable[str] = ("norm",),
        layers: Iterable[int] | None = None,
        shifts: Iterable[str] = ("awi",),
        level: str = "word",
        decoder: str = "argmax",
        heads: Iterable[int] | None = None,
        specials: str = "drop",
        blends: Iterable[str] = (),
        **decoder_options: float,
    ) -> AlignSpec:
        """An AlignSpec checked against this model; ``blends``: names of blends of settings
        (:mod:`align.links.blend`, e.g. ``alti-awi-layer0+attn-awo-layer2``), written beside the settings."""
        if isinstance(blends, str):
            raise TypeError(f"blends: expected a list of blend names, got the string {blends!r}")
        layers = tuple(range(self.n_layers)) if layers is None else tuple(layers)
        spec = check_spec(
            AlignSpec(
                blends=tuple(Blend.parse(b).file for b in blends),
                methods=tuple(methods),
                layers=layers,
                shifts=tuple(shifts),
                level=level,
                decoder=decoder,
                heads=tuple(heads) if heads else None,
                specials_policy=specials,
                decoder_options=tuple(sorted(decoder_options.items())),
            ),
            self.n_layers,
            self.n_heads,
        )
        self.check_learned(spec)
        return spec

    def check_learned(self, spec: AlignSpec) -> None:
        """ValueError unless every ``learned`` setting of ``spec`` (settings and blends' parts) has an attached
        alignment layer at the decoder layer and shift it was trained for."""
        cells = [(m, la, sh) for m in spec.methods for la in spec.layers or () for sh in spec.shifts]
        cells += [(p.method, p.layer, p.shift) for _, b in spec.blend_settings() for p in b.parts]
        asked = {(la, sh) for m, la, sh in cells if m == "learned"}
        if not asked:
            return
        head = self.alignment_layer
        if head is None:
            raise ValueError(
                "method learned needs an alignment layer trained for this model: train one with align-train, "
                "or name it with --alignment-layer DIR"
            )
        shape = head.shape
        for layer, shift in sorted(asked):
            if (layer, shift) != (shape.layer, shape.shift):
                raise ValueError(
                    f"method learned: the alignment layer was trained at decoder layer {shape.layer} for "
                    f"{shape.shift}; asked for layer {layer} {shift} (give --layers {shape.layer} --shifts "
                    f"{shape.shift}, or learned-{shape.shift}-layer{shape.layer} in a blend)"
                )

    def encode_pair(
        self, source, target, index: int = 0, where: str | None = None, truncate: bool = False
    ) -> tuple[Encoded, Encoded]:
        """Both sides of a pair, word counts checked; ``where`` names it in errors (default
        ``sentence INDEX+1``). A side longer than the model's positions raises TooLongError, or with
        ``truncate`` loses words at its end until it fits (``Encoded.dropped`` counts them)."""
        where = where or f"sentence {index + 1}"
        return (
            self._encode_side(
                self.encode_source, as_words(source), f"{where}: source", self.max_positions[0], truncate
            ),
            self._encode_side(
                self.encode_target, as_words(target), f"{where}: target", self.max_positions[1], truncate
            ),
        )

    def _encode_side(self, encode, words: list[str], what: str, limit: int | None, truncate: bool) -> Encoded:
        words = self.preprocess(words)
        enc = encode(words, what)
        if limit is None or len(enc.ids) <= limit:
            return enc
        if not truncate:
            raise TooLongError(
                f"{what}: {len(enc.ids)} tokens (specials included) but the model takes at most {limit}; "
                "shorten the sentence, or pass --truncate (truncate=True) to cut words off its end"
            )
        lo, hi, best = 1, len(words) - 1, None  # the most leading words that fit, by bisection
        while lo <= hi:
            mid = (lo + hi) // 2
            e = encode(words[:mid], what)
            if len(e.ids) <= limit:
                lo, best = mid + 1, (mid, e)
            else:
                hi = mid - 1
        if best is None:
            raise TooLongError(f"{what}: its first word alone is more than the {limit} tokens the model takes")
        return Encoded(best[1].ids, best[1].words, len(words) - best[0])

    def score_items(
        self,
        items: Sequence[tuple[str, Sequence[str], Sequence[str]]],
        spec: AlignSpec,
        batch_size: int = 32,
        truncate: bool = False,
        logprobs: bool = False,
    ) -> Iterator[tuple[int, Encoded, Encoded, dict]]:
        """``(k, source, target, scores)`` for ``items[k] = (where, source words, target words)``, in
        order; the pairs run batched by length. Errors name ``where``. With ``logprobs`` the scores also hold
        the forced-decoding log-probability (:data:`align.extraction.engine.LOGPROBS`) of each label of the
        sentence itself (its pieces and its end; a language code left out, :func:`sentence_labels`)."""
        enc = [self.encode_pair(s, t, k, where, truncate) for k, (where, s, t) in enumerate(items)]
        order = sorted(range(len(enc)), key=lambda k: (len(enc[k][0].ids), len(enc[k][1].ids)))
        done: dict[int, dict] = {}
        for b in range(0, len(order), batch_size):
            ks = order[b : b + batch_size]
            scores = score_pairs(
                self.model,
                self.adapter,
                [enc[k][0].ids for k in ks],
                [enc[k][1].ids for k in ks],
                self.pad,
                spec.score_methods,
                spec.score_layers,
                spec.score_cells,
                logprobs,
                self.alignment_layer,
            )
            done.update(zip(ks, scores))
        for k, (se, te) in enumerate(enc):
            sc = done.pop(k)
            if logprobs:  # the sentence's own labels: a language code is no evidence about the pair
                sc[LOGPROBS] = sc[LOGPROBS][sentence_labels(te.words, len(te.ids))]
            yield k, se, te, sc

    def iter_scores(
        self, pairs: Iterable[tuple], spec: AlignSpec, batch_size: int = 32, chunk: int = 2048
    ) -> Iterator[tuple[int, Encoded, Encoded, dict]]:
        """``(index, source, target, scores)`` for every pair, in input order; pairs are batched by
        length within chunks of ``chunk`` pairs, so memory stays bounded on a corpus."""
        buf: list[tuple[str, Sequence[str], Sequence[str]]] = []
        start = 0
        for i, (s, t) in enumerate(pairs):
            buf.append((f"sentence {i + 1}", s, t))
            if len(buf) >= chunk:
                for k, se, te, sc in self.score_items(buf, spec, batch_size):
                    yield start + k, se, te, sc
                start, buf = i + 1, []
        for k, se, te, sc in self.score_items(buf, spec, batch_size):
            yield start + k, se, te, sc

    def settings(self, spec: AlignSpec, per_head_files: bool = False) -> list[tuple[str, str, int, str, int | None]]:
        """``(dump file name, method, layer, shift, head)`` of every setting of ``spec``, in file order;
        per-head methods one setting per head when ``per_head_files`` (else the mean of the chosen heads)."""
        out = []
        for method in spec.methods:
            heads = range(self.n_heads) if METHODS[method].per_head and per_head_files else [None]
            for layer in spec.layers:
                for shift in spec.shifts:
                    out += [(Setting(method, shift, layer, h).file, method, layer, shift, h) for h in heads]
        return out

    def links(
        self,
        src: Encoded,
        tgt: Encoded,
        scores: dict,
        spec: AlignSpec,
        per_head_files: bool = False,
        words: dict[str, np.ndarray] | None = None,
    ) -> dict[str, list[tuple[int, int]]]:
        """Links of one scored pair for every setting, keyed by dump file name
        (``norm-awi-layer1.align``), then every blend of ``spec`` (its word scores decoded by the spec's
        decoder); per-head methods one file per head when ``per_head_files``. ``words``: :meth:`word_scores`
        of the same pair, when the caller has it (the blends are decoded from it, not computed again)."""
        out = {
            name: links_for(scores, src.words, tgt.words, spec, m, la, sh, h)
            for name, m, la, sh, h in self.settings(spec, per_head_files)
        }
        blends = {n: words[n] for n in spec.blends} if words else self._blends(src, tgt, scores, spec)
        for name, m in blends.items():
            out[name] = decode(m, spec.decoder, **dict(spec.decoder_options))
        return out

    def output_names(self, spec: AlignSpec, per_head_files: bool = False) -> list[str]:
        """Every file name :meth:`links` and :meth:`word_scores` key their results by, in file order:
        the settings, then the blends."""
        return [s[0] for s in self.settings(spec, per_head_files)] + list(spec.blends)

    def _word_matrix(
        self,
        src: Encoded,
        tgt: Encoded,
        scores: dict,
        spec: AlignSpec,
        method: str,
        layer: int,
        shift: str,
        head: int | None,
        null: bool,
    ) -> np.ndarray:
        """One setting's word scores ``(tgt_words, src_words[+1 NULL])``."""
        m = scores[(method, layer)]
        if m.ndim == 3:
            m = m[head] if head is not None else m[list(spec.heads) if spec.heads else slice(None)].mean(0)
        w = aggregate_scores(
            select_rows(m, len(tgt.words), shift), src.words, tgt.words, spec.src_reduce, spec.tgt_reduce, null=null
        )
        out: np.ndarray = w[: int((tgt.words >= 0).any() and tgt.words.max() + 1)]  # no NULL row: not a word
        return out

    def _blends(
        self, src: Encoded, tgt: Encoded, scores: dict, spec: AlignSpec, null: bool = False
    ) -> dict[str, np.ndarray]:
        """Each blend's word scores (:func:`align.links.blend.blend_scores`), keyed by its file name."""
        return {
            name: blend_scores(
                [self._word_matrix(src, tgt, scores, spec, p.method, p.layer, p.shift, None, null) for p in b.parts],
                null=null,
            )
            for name, b in spec.blend_settings()
        }

    def word_scores(
        self,
        src: Encoded,
        tgt: Encoded,
        scores: dict,
        spec: AlignSpec,
        per_head_files: bool = False,
        null: bool = False,
    ) -> dict[str, np.ndarray]:
        """Word-level score matrices ``(tgt_words, src_words)`` of one scored pair for every setting and blend
        (sum over a source word's pieces, mean over a target word's), keyed like :meth:`links` (blends last). With
        ``null`` each matrix has one more column, last: the target word's score on the source's special
        tokens (EOS), the NULL mass that :mod:`align.confidence.calibration` uses."""
        out = {
            name: self._word_matrix(src, tgt, scores, spec, method, layer, shift, h, null)
            for name, method, layer, shift, h in self.settings(spec, per_head_files)
        }
        out.update(self._blends(src, tgt, scores, spec, null))
        return out

    def align(
        self,
        sources: Sequence,
        targets: Sequence,
        *,
        batch_size: int = 32,
        progress: bool | None = None,
        **options: Any,
    ) -> dict[Key, list[list[tuple[int, int]]]]:
        """Word links per sentence for every (method, layer, shift) of ``options`` (what :meth:`spec` takes:
        ``methods``, ``layers``, ``shifts``, ``level``, ``decoder``, ``heads`` and decoder options; per-head
        methods average the chosen ``heads``, default all).

        Sentences are tokenized text (split on ASCII spaces and tabs) or word lists; links are
        0-based ``(src_word, tgt_word)``. Output order is input order whatever the batching.
        """
        if len(sources) != len(targets):
            raise ValueError(f"{len(sources)} source sentences but {len(targets)} target sentences")
        if "blends" in options:  # its keys are (method, layer, shift): no room for a blend
            raise TypeError("align() gives settings only; for blends use spec(blends=...) with dump() or links()")
        spec = self.spec(**options)
        out: dict[Key, list] = {
            (m, la, sh): [None] * len(sources) for m in spec.methods for la in spec.layers for sh in spec.shifts
        }
        it = self.iter_scores(zip(sources, targets), spec, batch_size)
        if progress or (progress is None and len(sources) > 10 * batch_size):
            from tqdm import tqdm

            it = tqdm(it, total=len(sources), desc="aligning", unit="pair")
        for i, se, te, sc in it:
            for m, la, sh in out:
                out[(m, la, sh)][i] = links_for(sc, se.words, te.words, spec, m, la, sh)
        return out

    def score_matrix(
        self, source, target, method: str = "norm", layer: int | None = None, shift: str = "awi"
    ) -> np.ndarray:
        """Word-level scores (tgt_words, src_words) of one pair, for plotting (per head: mean of heads)."""
        layer = self.n_layers - 1 if layer is None else layer
        spec = self.spec([method], [layer], [shift])
        _, se, te, sc = next(self.iter_scores([(source, target)], spec, 1))
        m = sc[(method, layer)]
        m = m.mean(0) if m.ndim == 3 else m
        rows = select_rows(m, len(te.words), shift)
        return aggregate_scores(rows, se.words, te.words)

    def translate_and_align(
        self,
        sources: Sequence,
        methods: Iterable[str] = ("norm",),
        layers=None,
        shifts: Iterable[str] = ("awi",),
        batch_size: int = 16,
        **generate,
    ) -> tuple[list[list[str]], dict[Key, list[list[tuple[int, int]]]]]:
        """Translate, then align each source with the model's own output."""
        hyps = self.translate(sources, batch_size=batch_size, **generate)
        return hyps, self.align(sources, hyps, methods=methods, layers=layers, shifts=shifts, batch_size=batch_size)

    def dump(
        self, pairs: Sequence[tuple], spec: AlignSpec, batch_size: int = 32, progress: bool = False
    ) -> dict[str, list[list[tuple[int, int]]]]:
        """Links of every pair for every setting and blend, keyed by dump file name (``norm-awi-layer1.align``;
        per-head methods one file per head): what ``align-extract --out`` writes, in memory."""
        out: dict[str, list] = {}
        it = self.iter_scores(pairs, spec, batch_size)
        if progress:
            from tqdm import tqdm

            it = tqdm(it, total=len(pairs), desc="aligning", unit="pair")
        for _, se, te, sc in it:
            for name, links in self.links(se, te, sc, spec, per_head_files=True).items():
                out.setdefault(name, []).append(links)
        return out


def score_matrices(
    aligner: Aligner,
    spec: AlignSpec | None,
    name: str,
    pairs: Sequence,
    batch_size: int,
    logprobs: bool = False,
    truncate: bool = False,
    progress: Callable[[int], Any] | None = None,
    names: Sequence[str] | None = None,
) -> list[tuple[np.ndarray, ...]]:
    """(word scores (T, S), NULL mass (T,)) of setting ``name`` for every pair, in order; with ``logprobs``
    (word scores, NULL mass, the labels' forced-decoding log-probabilities (n_labels,)); ``truncate``: a side
    longer than the model's positions loses words at its end (T, S count the words kept); ``progress`` is called
    with 1 for each pair scored; ``names``: each pair's name in errors (``file:line``; default ``sentence K``)."""
    from .engine import LOGPROBS

    if spec is None:
        raise ValueError("score_matrices needs the spec of the setting")
    names = list(names) if names is not None else [f"sentence {k + 1}" for k in range(len(pairs))]
    items = [(name, s, t) for name, (s, t) in zip(names, pairs)]
    out: list[tuple[np.ndarray, ...]] = []
    for _, se, te, sc in aligner.score_items(items, spec, batch_size, truncate, logprobs):
        w = aligner.word_scores(se, te, sc, spec, null=True)[name]
        out.append((w[:, :-1], w[:, -1], sc[LOGPROBS]) if logprobs else (w[:, :-1], w[:, -1]))
        if progress is not None:
            progress(1)
    return out
