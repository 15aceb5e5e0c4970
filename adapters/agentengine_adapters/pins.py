"""Versions the adapters are tested with: the same pins as pluginsdk/python/constraints.txt
(a test keeps them equal). The doctor compares the installed versions against these;
constraints.txt itself is not shipped with the runner."""

from __future__ import annotations

# Runner protocol: a mismatch can break the gRPC stubs, so the doctor fails on it.
RUNTIME = {
    "grpcio": "1.85.1",
    "grpcio-health-checking": "1.85.1",
    "protobuf": "7.36.2",
}

# Framework packages per AGENTENGINE_FRAMEWORK: (distribution, import name).
FRAMEWORK_PACKAGES = {
    "langgraph": [("langgraph", "langgraph"), ("langchain-core", "langchain_core")],
    "langchain": [("langchain", "langchain"), ("langchain-core", "langchain_core"), ("langgraph", "langgraph")],
    "deepagents": [("deepagents", "deepagents"), ("langchain", "langchain"), ("langgraph", "langgraph")],
    "adk": [("google-adk", "google.adk"), ("google-genai", "google.genai")],
}

FRAMEWORK = {
    "langgraph": "1.2.22",
    "langchain": "1.4.7",
    "langchain-core": "1.7.2",
    "langchain-openai": "1.7.3",
    "deepagents": "0.7.32",
    "langgraph-checkpoint-sqlite": "3.1.2",
    "aiosqlite": "0.22.1",
    "google-adk": "2.13.0",
    "google-genai": "2.34.0",
}
