from __future__ import annotations

import pytest

from shedproto.host_agent import AgentConfig, ConfigError, parse_config, parse_go_duration

REAL_LOOKING = """\
# shed-host-agent config
server: http://localhost:8080   # single-server mode
logging:
  enabled: true
  path: "~/.local/share/shed/extensions-audit.log"
approval_timeout: 40s
ssh:
  mode: local-keys
  keys:
    - path: ~/.ssh/id_ed25519
      comment: "key: with colon"
  approval:
    policy: shed-desktop   # decided in the app
aws:
  source_profile: default
  servers:
    prod:
      default_role: arn:aws:iam::1:role/x
  approval:
    policy: 'approve-all'
docker:
  registries: [ghcr.io, docker.io]
  notes: |
    policy: approve-all
    this block scalar is not a key
  approval:
    policy: ""
discovery:
  servers: []
  watch: off
"""


def test_reads_the_approval_keys_of_a_real_looking_file() -> None:
    config = parse_config(REAL_LOOKING)
    assert config.policies == {
        "ssh-agent": "shed-desktop",
        "aws-credentials": "approve-all",
        "docker-credentials": "",
    }
    assert config.approval_timeout == 40.0
    assert config.logging_enabled is True
    assert config.logging_path == "~/.local/share/shed/extensions-audit.log"


def test_empty_config_defaults() -> None:
    assert parse_config("") == AgentConfig()
    assert parse_config("logging:\n  enabled: false\n").logging_enabled is False


def test_json_config() -> None:
    config = parse_config('{"ssh": {"approval": {"policy": "deny-all"}}, "approval_timeout": "1s"}')
    assert config.policies["ssh-agent"] == "deny-all"
    assert config.approval_timeout == 1.0


@pytest.mark.parametrize(
    "text",
    [
        "ssh:\n  approval:\n    policy: allow-everything\n",
        "approval_timeout: 0s\n",
        "approval_timeout: -5s\n",
        "approval_timeout: soon\n",
        "{not json",
    ],
)
def test_invalid_configs(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_config(text)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("25s", 25.0),
        ("1m30s", 90.0),
        ("1.5h", 5400.0),
        ("300ms", 0.3),
        ("0", 0.0),
        ("+2s", 2.0),
        ("-1s", -1.0),
        ("1h2m3s4ms", 3723.004),
        ("2\u00b5s", 2e-6),
    ],
)
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "s", "5", "5x", "1.2.3s", "-"])
def test_bad_go_durations(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_go_duration(text)
