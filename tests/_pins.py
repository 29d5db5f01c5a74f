"""The versions of the real programs the opt-in tests run (``.ci/run`` installs them)."""

from __future__ import annotations

CODEX_VERSION = "0.171.0"
"""``@openai/codex``, for the drivers' real-binary tests."""
CLAUDE_SDK_VERSION = "0.3.332"
"""``@anthropic-ai/claude-agent-sdk`` (it carries the ``claude`` binary)."""
ACP_AGENT_PACKAGES = (
    "@zed-industries/codex-acp@0.16.0",
    "@zed-industries/claude-agent-acp@0.23.1",
)
"""The real ACP agents for the agents-host interop tests."""
