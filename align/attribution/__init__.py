"""The attribution layer: per-token decompositions of a decoder layer (norms, ALTI+, value zeroing,
the FF block) and the method registry (:mod:`align.attribution.methods`). torch only, never a
framework: adapters hand it plain tensors and weights."""
