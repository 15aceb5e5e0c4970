// Command echo-go is the agentengine runner for the echo agent (internal/echoagent). The
// agentengine host builds and starts it; run directly it explains that and exits.
package main

import (
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/pluginsdk"
)

func main() { pluginsdk.Serve(echoagent.New()) }
