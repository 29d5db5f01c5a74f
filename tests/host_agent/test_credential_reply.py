"""The agent's credential replies, built in the core (issue 13 item 2)."""

from __future__ import annotations

from shedproto.host_agent import (
    NO_CREDENTIAL_MINTER,
    NO_TOKEN_MINTER,
    CertificateCredential,
    CredentialGet,
    CredentialResponse,
    MintedCredential,
    TokenCredential,
    TokenGet,
    TokenResponse,
    classify_credential,
    credential_reply,
    no_minter_error,
)


def test_no_minter_errors_name_the_request_kind() -> None:
    assert no_minter_error(TokenGet(id="t", server="s")) == NO_TOKEN_MINTER
    assert no_minter_error(CredentialGet(id="c", server="s")) == NO_CREDENTIAL_MINTER


def test_token_reply_carries_the_token_or_the_error() -> None:
    request = TokenGet(id="q", server="prod")
    minted = MintedCredential(token="tok", expires_at="2030-01-01T00:00:00Z")
    reply = credential_reply(request, minted, "", id="r", ts="t")
    assert reply == TokenResponse(
        id="r",
        ts="t",
        in_reply_to="q",
        server="prod",
        token="tok",
        expires_at="2030-01-01T00:00:00Z",
    )
    refused = credential_reply(request, None, NO_TOKEN_MINTER, id="r", ts="t")
    assert isinstance(refused, TokenResponse)
    assert (refused.token, refused.error) == ("", NO_TOKEN_MINTER)


def test_token_get_to_an_mtls_server_is_refused_not_downgraded() -> None:
    minted = MintedCredential(auth_mode="mtls", client_cert="PEM", cert_serial="01")
    reply = credential_reply(TokenGet(id="q", server="prod"), minted, "", id="r", ts="t")
    assert isinstance(reply, TokenResponse)
    assert reply.token == ""
    assert "upgrade the app" in reply.error


def test_credential_replies_carry_only_their_arm_and_classify_back() -> None:
    request = CredentialGet(id="q", server="prod", csr="c")
    token = credential_reply(
        request, MintedCredential(token="tok", client_cert="stray"), "", id="r", ts="t"
    )
    assert isinstance(token, CredentialResponse)
    assert (token.auth_mode, token.token, token.client_cert) == ("token", "tok", "")
    assert isinstance(classify_credential(token, server="prod"), TokenCredential)
    cert = credential_reply(
        request,
        MintedCredential(auth_mode="mtls", token="stray", client_cert="PEM", cert_serial="01"),
        "",
        id="r",
        ts="t",
    )
    assert isinstance(cert, CredentialResponse)
    assert (cert.auth_mode, cert.token, cert.client_cert, cert.cert_serial) == (
        "mtls",
        "",
        "PEM",
        "01",
    )
    assert isinstance(classify_credential(cert, server="prod"), CertificateCredential)
