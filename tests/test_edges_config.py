"""Config input is never silently ignored (issue 11, item 10).

The host-agent's tolerant YAML reader reports every line it skipped and
``host-agent serve`` warns once per line; a JSONC syntax error keeps the
spec's exact first line and adds the line and column on a second.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from shedproto.clients.cli import main
from shedproto.connector import (
    ConfigFileError,
    JsoncSyntaxError,
    load_agents_host_config_text,
    parse_jsonc,
)
from shedproto.host_agent import NS_AWS, NS_SSH, SkippedLine, parse_config

CLI = [sys.executable, "-c", "import sys; from shedproto.clients.cli import main; sys.exit(main())"]

# -- host-agent extensions.yaml -------------------------------------------------------------


def test_a_broken_flow_sequence_is_reported_not_silently_dropped() -> None:
    config = parse_config("ssh: [1, 2\n")
    assert config.policies[NS_SSH] == ""  # still tolerated: deny-all, like the real agent
    assert config.skipped == (SkippedLine(1, "ssh: [1, 2"),)


def test_every_skipped_construct_is_reported_once() -> None:
    text = (
        "# comment\n"
        "aws:\n"
        "  approval:\n"
        "    policy: approve-all\n"
        "hosts:\n"
        "  - name: a\n"
        "    port: 22\n"
        "  - b\n"
        "motd: |\n"
        "  hello: world\n"
        "base: &anchor\n"
        "not a mapping\n"
        "key:value\n"
        "---\n"
    )
    config = parse_config(text)
    assert config.policies[NS_AWS] == "approve-all"
    assert config.skipped == (
        SkippedLine(6, "- name: a"),
        SkippedLine(8, "- b"),
        SkippedLine(9, "motd: |"),
        SkippedLine(11, "base: &anchor"),
        SkippedLine(12, "not a mapping"),
        SkippedLine(13, "key:value"),
    )


def test_understood_and_json_configs_skip_nothing() -> None:
    assert parse_config("ssh:\n  approval:\n    policy: approve-all # ok\n").skipped == ()
    assert parse_config('{"ssh": {"approval": {"policy": "approve-all"}}, "x": [1]}').skipped == ()


def test_serve_warns_once_per_skipped_line(short_socket_dir: Path) -> None:
    config = short_socket_dir / "extensions.yaml"
    config.write_text("ssh: [1, 2\naws:\n  approval:\n    policy: approve-all\n- stray\n")
    directory = short_socket_dir / "agent"
    argv = ["host-agent", "serve", "--socket-dir", str(directory), "--json"]
    argv += ["--config", str(config)]
    proc = subprocess.Popen(
        [*CLI, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        json.loads(proc.stdout.readline())  # ready: the warnings came before it
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0
    assert err.splitlines() == [
        f"shedproto: warning: config {config} line 1: skipped, not understood: ssh: [1, 2",
        f"shedproto: warning: config {config} line 5: skipped, not understood: - stray",
    ]


# -- agents-host JSONC ----------------------------------------------------------------------

BROKEN = """{
  "schema": "commonfabric.agents-host.config",
  /* a block
     comment */ "ownerDid": "did:key:z6Mk\u00e9" // trailing comment
  "sources": []
}
"""


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        (BROKEN, 5, 3),  # comments before the error must not shift the position
        ("\ufeff" + BROKEN, 5, 3),  # nor a byte-order mark
        (BROKEN.replace("\n", "\r\n"), 5, 3),
        ("{ invalid", 1, 3),
        ('{"a": 1 /* open', 1, 9),
        ('{"a": "open', 1, 7),
        ('{\n  "a": [1,,]\n}', 2, 11),
        ("[1]]", 1, 4),
        ('{"\u00e9\u00e9": NaN}', 1, 8),
        ("", 1, 1),
    ],
)
def test_jsonc_syntax_error_has_line_and_column(text: str, line: int, column: int) -> None:
    with pytest.raises(JsoncSyntaxError) as caught:
        parse_jsonc(text)
    assert (caught.value.line, caught.value.column) == (line, column)
    assert str(caught.value).startswith(f"line {line}, column {column}: ")


def test_config_file_error_keeps_the_spec_first_line() -> None:
    with pytest.raises(ConfigFileError) as caught:
        load_agents_host_config_text(BROKEN.encode(), "/etc/agents.jsonc")
    first, second = caught.value.message.split("\n")
    assert first == "configuration file is not valid JSONC: /etc/agents.jsonc"
    assert second == "line 5, column 3: Expecting ',' delimiter"


def test_check_config_prints_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "agents.jsonc"
    path.write_text(BROKEN)
    assert main(["agents-host", "check-config", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"shedproto: error: configuration file is not valid JSONC: {path}\n"
        "line 5, column 3: Expecting ',' delimiter\n"
    )


def test_run_prints_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "agents.jsonc"
    path.write_text(BROKEN)
    (tmp_path / "operator.key").write_bytes(b"k")
    argv = ["agents-host", "run", "--config", str(path), "--api-url", "http://localhost:1"]
    argv += ["--identity", str(tmp_path / "operator.key"), "--space", "did:key:z6MkSpace"]
    done = subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert done.stderr == (
        f"Agent host failed: configuration file is not valid JSONC: {path}\n"
        "line 5, column 3: Expecting ',' delimiter\n"
    )
