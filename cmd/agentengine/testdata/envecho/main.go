// Command envecho is a test runner that answers with the environment variables the
// KsADK-compatible run flags set (and a few the shell may), so tests can see what reached the agent.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/agentengine/agentengine/pluginsdk"
)

type agent struct{}

func (agent) Info() pluginsdk.Info {
	return pluginsdk.Info{Name: "envecho", Framework: "go"}
}

func (agent) Run(_ context.Context, req *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	return emit.Text(fmt.Sprintf("model=%s model_name=%s langsmith_tracing=%s langchain_tracing=%s history=%d shell=%s token=%s dsn=%s",
		os.Getenv("OPENAI_MODEL_NAME"), os.Getenv("MODEL_NAME"), os.Getenv("LANGSMITH_TRACING"),
		os.Getenv("LANGCHAIN_TRACING_V2"), len(req.Payload.History), os.Getenv("FROM_THE_SHELL"),
		os.Getenv("AGENTENGINE_TOKEN"), os.Getenv("KSADK_SESSION_DSN")))
}

func main() { pluginsdk.Serve(agent{}) }
