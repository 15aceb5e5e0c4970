"""Model selection for agentengine examples: a real model with a key, a scripted one without.

    from agentengine_adapters.models import chat_model
    llm = chat_model()

- OPENAI_API_KEY set: langchain-openai's ChatOpenAI (OPENAI_BASE_URL and OPENAI_MODEL_NAME
  honoured), which also applies the run's payload.model_options (model, temperature,
  max_tokens, ...) per request, read from the run's invocation context, so concurrent runs
  with different options never race on globals.
- otherwise (or AGENTENGINE_MODEL=scripted): the offline ScriptedChatModel.

    from agentengine_adapters.models import adk_model
    root_agent = LlmAgent(name="assistant", model=adk_model(), ...)

adk_model() is the same choice for google-adk agents: with OPENAI_API_KEY,
adk_openai.OpenAiAdkLlm (a BaseLlm on the pinned `openai` package; OPENAI_BASE_URL and
OPENAI_MODEL_NAME honoured; google-adk ships no native OpenAI model and its LiteLlm needs
the unpinned litellm); otherwise the offline adk_scripted.ScriptedAdkLlm. LangChain is
imported only by chat_model(), google-adk only by adk_model(), so either framework works
without the other installed.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from google.adk.models.base_llm import BaseLlm
    from langchain_core.language_models.chat_models import BaseChatModel

    from .scripted import ScriptedChatModel

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"

# payload.model_options keys forwarded to the OpenAI request as is.
REQUEST_OPTIONS = (
    "model",
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "seed",
    "stop",
    "presence_penalty",
    "frequency_penalty",
    "reasoning_effort",
)

__all__ = ["DEFAULT_OPENAI_MODEL", "ScriptedChatModel", "adk_model", "chat_model", "use_scripted_model"]


def __getattr__(name: str) -> Any:
    # ScriptedChatModel lazily: importing this module must not need LangChain (ADK projects).
    if name == "ScriptedChatModel":
        from .scripted import ScriptedChatModel

        return ScriptedChatModel
    raise AttributeError(name)


def use_scripted_model() -> bool:
    """True when chat_model() would return the offline model."""
    if os.environ.get("AGENTENGINE_MODEL", "").lower() == "scripted":
        return True
    return not os.environ.get("OPENAI_API_KEY")


def chat_model(
    model: str | None = None,
    *,
    temperature: float | None = None,
    scripted: dict[str, Any] | None = None,
    **openai_kwargs: Any,
) -> BaseChatModel:
    """The example model: ChatOpenAI when OPENAI_API_KEY is set, else ScriptedChatModel.

    model / temperature / openai_kwargs configure ChatOpenAI; scripted holds
    ScriptedChatModel fields (responses, reasoning, delay) for the offline model.
    """
    if use_scripted_model():
        from .scripted import ScriptedChatModel

        return ScriptedChatModel(**(scripted or {}))
    return _openai_model(model, temperature, openai_kwargs)


def adk_model(model: str | None = None, *, scripted: dict[str, Any] | None = None, **openai_kwargs: Any) -> BaseLlm:
    """The example model for google-adk agents: OpenAiAdkLlm on an OpenAI-compatible
    endpoint when OPENAI_API_KEY is set (openai_kwargs: its fields, e.g. base_url,
    request_options), else the offline ScriptedAdkLlm (scripted: its fields)."""
    if use_scripted_model():
        from .adk_scripted import ScriptedAdkLlm

        return ScriptedAdkLlm(**(scripted or {}))
    try:
        import openai  # noqa: F401  # checked here so a missing package fails at import, not mid-run
    except ImportError as exc:
        raise ImportError(
            "OPENAI_API_KEY is set: adk_model() needs the `openai` package (pinned in "
            "pluginsdk/python/constraints.txt) in the project's requirements.txt; or unset "
            "OPENAI_API_KEY (or set AGENTENGINE_MODEL=scripted) for the offline scripted model"
        ) from exc
    from .adk_openai import OpenAiAdkLlm

    if model:
        openai_kwargs["model"] = model
    return OpenAiAdkLlm(**openai_kwargs)


def _openai_model(
    model: str | None, temperature: float | None, kwargs: dict[str, Any]
) -> BaseChatModel:
    # Imported lazily: offline projects need not install langchain-openai.
    from langchain_openai import ChatOpenAI

    class RequestChatOpenAI(ChatOpenAI):
        """ChatOpenAI that applies the current run's model_options to each request."""

        def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kw: Any) -> dict[str, Any]:
            overrides = _request_overrides()
            return super()._get_request_payload(input_, stop=stop, **{**overrides, **kw})

    params: dict[str, Any] = {
        "model": model or os.environ.get("OPENAI_MODEL_NAME") or DEFAULT_OPENAI_MODEL,
        **kwargs,
    }
    base_url = os.environ.get("OPENAI_BASE_URL")
    if base_url and "base_url" not in params:
        params["base_url"] = base_url
    if temperature is not None:
        params["temperature"] = temperature
    return RequestChatOpenAI(**params)


def _request_overrides() -> dict[str, Any]:
    try:
        from agentengine_runner import get_current_invocation_context
    except ImportError:
        return {}
    ctx = get_current_invocation_context()
    if ctx is None:
        return {}
    return {k: ctx.model_options[k] for k in REQUEST_OPTIONS if ctx.model_options.get(k) is not None}
