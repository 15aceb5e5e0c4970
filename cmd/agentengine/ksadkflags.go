package main

import (
	"github.com/spf13/pflag"
)

// ksadkRunFlags are the flags KsADK's `run` and `web` take, with KsADK's meaning, so
// its users' commands and scripts keep working.
type ksadkRunFlags struct {
	// model overrides the agent's model for every turn: it is set as OPENAI_MODEL_NAME
	// and MODEL_NAME in the runner's environment, over .env and agentengine.yaml.
	model        string
	showThinking bool
	noStream     bool
	noTrace      bool
	noAltScreen  bool
}

// register adds the flags; the terminal-chat ones only where there is a terminal chat.
func (k *ksadkRunFlags) register(f *pflag.FlagSet, interactive bool) {
	f.StringVar(&k.model, "model", "", "model for every turn: sets OPENAI_MODEL_NAME and MODEL_NAME for the agent, over .env and agentengine.yaml")
	f.BoolVar(&k.noTrace, "no-trace", false, "turn off tracing: agentengine's OpenTelemetry spans (same as --trace=false) and the agent's LangSmith tracing")
	if !interactive {
		return
	}
	f.BoolVar(&k.showThinking, "show-thinking", false, "with -i: show the model's reasoning as it streams")
	f.BoolVar(&k.noStream, "no-stream", false, "with -i: print each answer when it is complete instead of as it streams")
	f.BoolVar(&k.noAltScreen, "no-alt-screen", false, "accepted for KsADK compatibility: the chat never uses the alternate screen")
}

// runnerEnv is what the flags set in every runner's environment.
func (k *ksadkRunFlags) runnerEnv() map[string]string {
	env := map[string]string{}
	if k.model != "" {
		env["OPENAI_MODEL_NAME"] = k.model
		env["MODEL_NAME"] = k.model
	}
	if k.noTrace {
		// LangChain and LangGraph read both names.
		env["LANGSMITH_TRACING"] = "false"
		env["LANGCHAIN_TRACING_V2"] = "false"
	}
	if len(env) == 0 {
		return nil
	}
	return env
}

func (k *ksadkRunFlags) chat() chatOptions {
	return chatOptions{showThinking: k.showThinking, noStream: k.noStream}
}

// chatOptions shape the terminal chat (`run -i`).
type chatOptions struct {
	// showThinking prints reasoning; by default it is not shown, as in KsADK.
	showThinking bool
	// noStream holds each answer back until it is complete.
	noStream bool
}
