"""``align-merge DIR``: join the shards of a sharded run (``DIR/shard-K-of-N/``) into ``DIR/merged/``.

Exit status: 0 ok, 1 bad or mixed shards (one line naming the shard or file:line), 2 usage.
"""

from __future__ import annotations

import argparse
import json
import sys

from .. import __version__
from ..extraction.shards import ShardError, merge, merged_dir
from ..io.console import console_main


@console_main("align-merge")
def main(argv=None) -> int:
    """Console entry point of ``align-merge``."""
    ap = argparse.ArgumentParser(
        prog="align-merge",
        description="Merge the shards of a sharded alignment run "
        "(DIR/shard-K-of-N/) into DIR/merged/: one file per setting, in input order, "
        "byte-identical to an unsharded run. Exit 0 ok, 1 bad or mixed shards, 2 usage.",
    )
    ap.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    ap.add_argument("folder", help="the --out folder of the sharded run")
    ap.add_argument("--overwrite", action="store_true", help="replace an existing DIR/merged/")
    ap.add_argument("--format", choices=("text", "json"), default="text")
    args = ap.parse_args(argv)
    try:
        shards, total, names = merge(args.folder, args.overwrite)
    except (ShardError, OSError) as e:
        print(f"align-merge: {e}", file=sys.stderr)
        return 1
    dest = merged_dir(args.folder)
    if args.format == "json":
        print(json.dumps({"folder": dest, "shards": shards, "sentences": total, "files": names}))
    else:
        print(f"merged {shards} shards: {len(names)} files of {total} sentences in {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
