"""The extraction layer: the engine (record a teacher-forced pass, score every method and layer),
the adapters' interface, the Python API (:class:`align.extraction.aligner.Aligner`), and the corpus
plumbing (shards, output folders published whole, run signatures, launcher shards). The engine
needs torch; nothing here imports fairseq or transformers. Importing this package loads nothing."""
