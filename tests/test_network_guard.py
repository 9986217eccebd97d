"""The suite runs with outbound sockets blocked except loopback: prove the guard is on."""

from __future__ import annotations

import socket

import pytest
from pytest_socket import SocketConnectBlockedError


def test_outbound_connections_are_blocked() -> None:
    with pytest.raises(SocketConnectBlockedError):
        socket.create_connection(("198.51.100.7", 443), timeout=1)  # TEST-NET-2: never routable anyway


def test_loopback_is_allowed() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    with server, socket.create_connection(server.getsockname(), timeout=2):
        pass
