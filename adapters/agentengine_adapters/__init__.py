"""agentengine's framework bridges: LangGraph, LangChain and DeepAgents projects served,
unmodified, as agentengine runners (see README.md).

    python -u -m agentengine_adapters          # what the host starts (go-plugin)
    python -m agentengine_adapters doctor      # JSON health report of the project

Public API:
- agentengine_adapters.bridges.make_runner(Settings) -> Runner for the project
  (GraphRunner / LangChainGraphRunner / DeepAgentsRunner / RunnableRunner, or
  BrokenRunner when the project cannot be loaded)
- agentengine_adapters.config.Settings.from_env(): the AGENTENGINE_* process contract

Internal to agentengine: this package ships inside the agentengine binary and is put on the
runner's path only, so nothing here is an API for agent projects. Projects must not import
it (scaffolds and examples carry their own offline_model.py); its modules change without
notice. The scripted models in models.py / scripted.py / adk_scripted.py serve the bridges'
own tests.
"""

__version__ = "0.1.0"
