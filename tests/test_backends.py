"""Regression: parametrized async tests also run on both anyio backends."""

from __future__ import annotations

import pytest
import sniffio


@pytest.mark.parametrize("value", [1, 2])
async def test_parametrized_async_test_gets_a_backend(
    value: int, request: pytest.FixtureRequest
) -> None:
    params = request.node.callspec.params
    assert params["value"] == value
    assert params["anyio_backend"] == sniffio.current_async_library()
