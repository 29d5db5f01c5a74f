"""Local stand-ins for the model APIs, so a real ``codex`` or ``claude`` completes a turn offline.

Both are :class:`tests.agents_host.fake_model.FakeModel` (the agents-host
interop tests' endpoint): Anthropic Messages events for ``claude``, OpenAI
Responses events for ``codex``, each on 127.0.0.1 in a daemon thread,
recording the requests it saw as ``(method, path)``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.agents_host.fake_model import REPLY, FakeModel

__all__ = ["REPLY", "anthropic_api", "openai_responses_api"]


@contextmanager
def _serve() -> Iterator[tuple[str, list[tuple[str, str]]]]:
    with tempfile.TemporaryDirectory() as tmp, FakeModel(f"{tmp}/permission") as model:
        yield model.url, model.requests


def anthropic_api() -> Any:
    """Serve a fake Anthropic Messages API; yields ``(base_url, requests_seen)``."""
    return _serve()


def openai_responses_api() -> Any:
    """Serve a fake OpenAI Responses API; yields ``(base_url, requests_seen)`` (add ``/v1``)."""
    return _serve()
