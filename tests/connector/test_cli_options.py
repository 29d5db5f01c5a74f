"""agents-host command-line options: env fallbacks, precedence, messages and their order."""

from __future__ import annotations

import pytest

from shedproto.connector import (
    USAGE,
    AgentsHostCliOptions,
    CliOptionsError,
    HelpRequested,
    parse_agents_host_cli_options,
)
from shedproto.connector._cli_options import split_extra_options

ENV = {
    "CF_API_URL": "http://fabric.example.test",
    "CF_IDENTITY": "./operator.key",
    "CF_SPACE": "agent-space",
}
FULL = [
    "--config",
    "agents.jsonc",
    "--api-url",
    "https://f.test",
    "--identity",
    "id.key",
    "--space",
    "s",
]


def parse(
    argv: list[str], env: dict[str, str] | None = None
) -> AgentsHostCliOptions | HelpRequested:
    return parse_agents_host_cli_options(argv, env or {}, cwd="/home/me")


def test_environment_fallbacks() -> None:
    options = parse(["--config", "./agents.jsonc", "--once", "--no-debug-view"], ENV)
    assert options == AgentsHostCliOptions(
        config_path="/home/me/agents.jsonc",
        api_url="http://fabric.example.test",
        identity_path="/home/me/operator.key",
        space="agent-space",
        once=True,
        debug_view=False,
    )


def test_flags_win_over_env_and_equals_form() -> None:
    options = parse(
        [
            "--config=/etc/a.jsonc",
            "--api-url",
            " https://flag.test ",
            "--space=flag-space",
            "--identity",
            "/k",
        ],
        ENV,
    )
    assert isinstance(options, AgentsHostCliOptions)
    assert (options.config_path, options.api_url, options.space, options.identity_path) == (
        "/etc/a.jsonc",
        "https://flag.test",
        "flag-space",
        "/k",
    )
    assert options.once is False
    assert options.debug_view is True
    assert parse([*FULL, "--no-debug-view", "--debug-view"]).debug_view is True  # type: ignore[union-attr]
    assert parse([*FULL, "--space", "last"]).space == "last"  # type: ignore[union-attr]


def test_explicit_empty_flag_does_not_fall_back() -> None:
    with pytest.raises(CliOptionsError, match=r"^missing required option: --space$"):
        parse(["--config", "a", "--space", ""], ENV)
    with pytest.raises(CliOptionsError, match=r"^missing required option: --api-url$"):
        parse(["--config", "a", "--api-url=  "], ENV)
    with pytest.raises(CliOptionsError, match=r"^missing required option: --identity$"):
        parse(["--config", "a", "--identity"], ENV)  # no value at the end


def test_help_first() -> None:
    assert parse(["-h"]) == HelpRequested()
    assert parse(["stray", "--help"]).usage == USAGE  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["--config", "agents.jsonc", "--mystery"], {}, "unknown option: --mystery"),
        (["--config", "agents.jsonc", "--ledger", "ledger.json"], {}, "unknown option: --ledger"),
        (["-x", "-h"], {}, "unknown option: -x"),
        (["--once=true", *FULL], {}, "unknown option: --once=true"),
        (["positional", *FULL], {}, "unexpected positional argument: positional"),
        ([*FULL, "--", "--config"], {}, "unexpected positional argument: --config"),
        ([], {}, "missing required option: --config"),
        (["--api-url", "x"], {}, "missing required option: --config"),
        (["--config", "a"], {}, "missing required option: --api-url"),
        (["--config", "a", "--api-url", "not a url"], {}, "--api-url is not a valid URL"),
        (
            ["--config", "a", "--api-url", "not a url"],
            {"CF_IDENTITY": "k"},
            "--api-url is not a valid URL",
        ),
        (["--config", "a", "--api-url", "https://x"], {}, "missing required option: --identity"),
        (
            ["--config", "a", "--api-url", "https://x", "--identity", "k"],
            {},
            "missing required option: --space",
        ),
    ],
)
def test_errors_and_their_order(argv: list[str], env: dict[str, str], message: str) -> None:
    with pytest.raises(CliOptionsError) as caught:
        parse(argv, env)
    assert str(caught.value) == message


def test_invalid_url_never_echoes_credentials() -> None:
    secret = "credential-that-must-not-appear"
    with pytest.raises(CliOptionsError) as caught:
        parse(
            [
                "--config",
                "a",
                "--api-url",
                f"https://operator:{secret}@[invalid",
                "--identity",
                "k",
                "--space",
                "s",
            ]
        )
    assert str(caught.value) == "--api-url is not a valid URL"
    assert secret not in repr(caught.value)
    assert caught.value.__cause__ is None


def test_single_dash_is_positional_and_value() -> None:
    with pytest.raises(CliOptionsError, match=r"^unexpected positional argument: -$"):
        parse([*FULL, "-"])
    assert parse(["--config", "-", *FULL[2:]]).config_path == "/home/me/-"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("argv", "taken", "rest"),
    [
        (["--socket", "/s", "--config", "a"], {"socket": "/s"}, ["--config", "a"]),
        (["--config=a", "--state-dir=st", "--json"], {"state-dir": "st", "json": True},
         ["--config=a"]),
        (["--socket", "/1", "--socket", "/2"], {"socket": "/2"}, []),
        # nothing after "--" is ours; the spec parser sees it as positional
        (["--", "--socket", "/s"], {}, ["--", "--socket", "/s"]),
        # a value that looks like an option is not taken; the real option stays
        (["--config", "--socket=/s"], {"socket": "/s"}, ["--config"]),
        (["--bogus", "--json=1"], {}, ["--bogus", "--json=1"]),
    ],
)  # fmt: skip
def test_split_extra_options(argv: list[str], taken: dict[str, object], rest: list[str]) -> None:
    assert split_extra_options(argv, strings=("socket", "state-dir"), flags=("json",)) == (
        taken,
        rest,
    )


@pytest.mark.parametrize("argv", [["--socket"], ["--socket", "--once"], ["--socket="]])
def test_split_extra_options_missing_value(argv: list[str]) -> None:
    with pytest.raises(CliOptionsError, match=r"^missing value for option: --socket$"):
        split_extra_options(argv, strings=("socket",))
