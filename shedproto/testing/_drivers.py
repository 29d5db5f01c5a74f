"""The ``claude_projects`` fixture: Claude Code transcripts written in the real layout."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

__all__ = ["ClaudeProjects", "claude_projects"]


class ClaudeProjects:
    """A private Claude config directory; :meth:`write` adds transcripts where Claude keeps them.

    Point a ``claude-agent-sdk`` source's ``configDir`` at ``config_dir``.
    """

    def __init__(self, config_dir: Path) -> None:
        self.config_dir = config_dir

    def write(
        self,
        cwd: str,
        session_id: str,
        records: Sequence[dict[str, Any] | str],
        *,
        mtime: float | None = None,
    ) -> Path:
        """Write ``<config>/projects/<encoded cwd>/<session_id>.jsonl``; strings go in verbatim.

        ``mtime`` (seconds) sets the file time the inventory reports as ``lastModified``.
        """
        from shedproto.drivers.claude import encode_project_name

        folder = self.config_dir / "projects" / encode_project_name(cwd)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{session_id}.jsonl"
        lines = (r if isinstance(r, str) else json.dumps(r) for r in records)
        path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        if mtime is not None:
            os.utime(path, (mtime, mtime))
        return path


@pytest.fixture
def claude_projects(tmp_path: Path) -> ClaudeProjects:
    """Return a :class:`ClaudeProjects` over a fresh config directory under ``tmp_path``."""
    return ClaudeProjects(tmp_path / "claude-config")
