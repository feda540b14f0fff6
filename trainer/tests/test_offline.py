"""The test suite never reaches the network (conftest.py): one pytest used to try a name lookup."""

from __future__ import annotations

import os
import socket

import pytest


def test_a_name_lookup_beyond_this_machine_fails_loudly_naming_the_host() -> None:
    with pytest.raises(OSError, match=r"a test tried a network lookup of 'huggingface\.co'"):
        socket.getaddrinfo("huggingface.co", 443)
    assert socket.getaddrinfo("127.0.0.1", 0), "this machine's own addresses still resolve"
    assert os.environ.get("HF_HUB_OFFLINE") == "1", "the Hub is read from local files only"
