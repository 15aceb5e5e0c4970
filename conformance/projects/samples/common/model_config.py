"""The model of every sample: an OpenAI-compatible endpoint named by the project's .env."""

from __future__ import annotations

import os

DEFAULT_MODEL = "gpt-4o-mini"


def get_model_name() -> str:
    return os.getenv("OPENAI_MODEL_NAME") or os.getenv("MODEL_NAME") or DEFAULT_MODEL


def get_openai_api_base() -> str:
    base = os.getenv("OPENAI_BASE_URL") or os.getenv("OPENAI_API_BASE")
    if not base:
        raise RuntimeError("set OPENAI_BASE_URL or OPENAI_API_BASE in the project's .env")
    return base


def get_openai_api_key() -> str:
    return os.getenv("OPENAI_API_KEY", "")


def make_langchain_chat_model():
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=get_model_name(),
        base_url=get_openai_api_base(),
        api_key=get_openai_api_key(),
        temperature=0,
    )


def make_adk_litellm_model():
    from google.adk.models.lite_llm import LiteLlm

    return LiteLlm(
        model=f"openai/{get_model_name()}",
        api_base=get_openai_api_base(),
        api_key=get_openai_api_key(),
    )
