// Command agentengine hosts agents written in LangGraph, LangChain, DeepAgents, Google ADK
// or Go behind an OpenAI-compatible API with a durable session store.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/host/attach"
)

func main() {
	// The same binary is also the sandboxed PDF-extraction worker: it must branch off
	// before anything else runs.
	attach.RunWorkerIfRequested()
	// gin's debug mode prints every route and a warning at startup; the binary is a product.
	gin.SetMode(gin.ReleaseMode)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCmd(os.Stdout, os.Stderr, os.Stdin).ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "agentengine:", err)
		os.Exit(1)
	}
}
