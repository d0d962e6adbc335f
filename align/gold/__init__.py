"""The gold test sets by name: what each set is (registry), one reader per text layout (layouts), the repairs
loading applies (fixes), and finding, verifying and loading the files (testsets).

Standard library and numpy; files are read with :mod:`align.io`. Callers import from
:mod:`align.gold.testsets`, which also re-exports the registry's names (``TESTSETS``, ``TestSet``,
``names``, ``get``, ``TestSetError``, ``UnknownTestSetError``) and ``FIXES``.
"""
