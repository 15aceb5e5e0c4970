"""agentengine's framework bridges: LangGraph, LangChain and DeepAgents projects served,
unmodified, as agentengine runners (see README.md).

    python -u -m agentengine_adapters          # what the host starts (go-plugin)
    python -m agentengine_adapters doctor      # JSON health report of the project

Public API:
- agentengine_adapters.bridges.make_runner(Settings) -> Runner for the project
  (GraphRunner / LangChainGraphRunner / DeepAgentsRunner / RunnableRunner, or
  BrokenRunner when the project cannot be loaded)
- agentengine_adapters.config.Settings.from_env(): the AGENTENGINE_* process contract
- agentengine_adapters.models.chat_model(): ChatOpenAI with a key, else ScriptedChatModel

Kept import-light on purpose: projects import agentengine_adapters.models at load time.
"""

__version__ = "0.1.0"
