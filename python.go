package agentengine

import "embed"

// PythonBridge is the Python side of agentengine, rooted at the module root: the runner
// SDK (agentengine_runner, plus the KsADK-compatible ksadk.runtime_context), the
// framework bridges (agentengine_adapters), the pip constraints file that pins every
// Python dependency of agentengine's own test environment, and runner-requirements.txt,
// what the runner SDK needs in a project's environment (pybridge.RunnerRequirements). host/pybridge extracts it for the interpreter; users never install
// it. "all:" keeps __init__.py and the _proto package, which plain patterns skip.
//
//go:embed all:pluginsdk/python/src/agentengine_runner all:pluginsdk/python/src/ksadk
//go:embed all:adapters/agentengine_adapters pluginsdk/python/constraints.txt
//go:embed pluginsdk/python/runner-requirements.txt
var PythonBridge embed.FS
