"""The shedproto pytest plugin (registered as the ``pytest11`` entry point ``shedproto``).

Fixtures:

* ``short_socket_dir``: a fresh private directory under ``/tmp`` with a short
  path, so socket paths stay well under the AF_UNIX limit (107 bytes on
  Linux) that pytest's deep ``tmp_path`` can exceed. Removed afterwards.

Protocol issues add their reference-server fixtures here.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["short_socket_dir"]


@pytest.fixture
def short_socket_dir() -> Iterator[Path]:
    """Yield a new 0700 directory with a short path for Unix sockets; deleted after the test."""
    path = Path(tempfile.mkdtemp(prefix="sp-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
