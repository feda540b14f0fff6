"""The trainer process's runtime settings: CPU threads and the libraries' own console output."""

from __future__ import annotations

import os

import torch


def configure_threads() -> None:
    """One intra-op thread per two cores (or FIM_RLVR_THREADS): on a small, shared CPU, spinning OpenMP threads that
    wait for each other make a tiny model's steps several times slower than one thread does. Runs are bit-for-bit
    reproducible for a given thread count."""
    override = os.environ.get("FIM_RLVR_THREADS", "")
    cores = os.cpu_count() or 1
    torch.set_num_threads(int(override) if override.isdigit() and int(override) > 0 else max(1, min(8, cores // 2)))


def quiet_libraries() -> None:
    """No progress bars or advice from transformers on stderr: the host shows its own progress."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
