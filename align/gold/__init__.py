"""The gold test sets by name: the registry, where their files are, one reader per layout, checksums
(:mod:`.testsets`). Standard library and numpy; it reads with :mod:`align.io`."""
