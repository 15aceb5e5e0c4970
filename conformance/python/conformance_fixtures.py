"""pytest fixtures: a fresh agentengine server (memory session backend) per test module.

Test modules import these fixtures by name. There is deliberately no conftest.py here:
pluginsdk/python/tests imports its own conftest module by name (`from conftest import …`),
and a second conftest.py in the same pytest run would shadow it."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from openai import OpenAI

from conformance_server import REPO_ROOT, TWIN_PROJECT, Server, build_binary, start_server, stop_server


@pytest.fixture(scope="session")
def agentengine_bin(tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_binary(tmp_path_factory.mktemp("agentengine-bin"))


@pytest.fixture(scope="module")
def server(agentengine_bin: str) -> Iterator[Server]:
    srv = start_server(agentengine_bin)
    try:
        yield srv
    finally:
        stop_server(srv.proc)


@pytest.fixture(scope="module")
def two_agent_client(agentengine_bin: str) -> Iterator[OpenAI]:
    """A client of a server hosting two agents (echo-go and echo-twin)."""
    srv = start_server(agentengine_bin, [str(REPO_ROOT / "examples" / "echo-go"), str(TWIN_PROJECT)])
    c = srv.client()
    try:
        yield c
    finally:
        c.close()
        stop_server(srv.proc)


@pytest.fixture(scope="module")
def client(server: Server) -> Iterator[OpenAI]:
    c = server.client()
    try:
        yield c
    finally:
        c.close()


@pytest.fixture()
def conv_id() -> str:
    return "conv_conformance_" + os.urandom(4).hex()
