"""`python -m fim_rlvr --stdio`: the trainer the host spawns (JSON-RPC on stdin/stdout, free text on stderr)."""

from __future__ import annotations

import argparse
import logging
import sys


def main(argv: list[str] | None = None) -> int:
    from .run.distributed import claim_stdio_for_rank

    claim_stdio_for_rank()  # under accelerate: stdin/stdout are rank 0's protocol, never another rank's
    parser = argparse.ArgumentParser(
        prog="python -m fim_rlvr",
        description="The FIM-RLVR trainer. The host (`fim-rlvr train`, or the VS Code extension) spawns it with "
        "--stdio and drives it over JSON-RPC; it is not meant to be run by hand.",
    )
    parser.add_argument("--stdio", action="store_true", help="speak the host protocol on stdin/stdout")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    args = parser.parse_args(argv)
    if args.version:
        from . import __version__

        print(f"fim_rlvr {__version__}")
        return 0
    if not args.stdio:
        parser.print_help(sys.stderr)
        print(
            "\nrun training with `fim-rlvr train WORKSPACE|DATASET_DIR` (the host starts this process)", file=sys.stderr
        )
        return 2
    from .run import distributed
    from .run.rpc import claim_stdio

    rfile, wfile = claim_stdio()
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="[fim_rlvr] %(levelname)s %(name)s: %(message)s"
    )
    logging.captureWarnings(True)
    import os

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from .run.server import TrainerServer, follow

    if not distributed.start().is_main:
        return follow()
    return TrainerServer(rfile, wfile).serve()


if __name__ == "__main__":
    sys.exit(main())
