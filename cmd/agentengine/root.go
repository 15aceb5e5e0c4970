package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at link time (-ldflags "-X main.version=…"); otherwise the module
// version from the build info is shown.
var version = ""

func newRootCmd(stdout, stderr io.Writer, stdin io.Reader) *cobra.Command {
	root := &cobra.Command{
		Use:   "agentengine",
		Short: "A local runtime for AI agents",
		Long: `agentengine hosts agent projects (LangGraph, LangChain, DeepAgents, Google ADK and Go)
and gives each an OpenAI-compatible API (/v1/responses, /v1/chat/completions) backed by
a durable session store, with a Web UI ("agentengine web").

Each agent's code runs in its own runner subprocess, never inside the server.

KsADK projects run as they are: the commands take KsADK's flags, and a KsADK
.agentengine/ui/sessions.sqlite is imported on first use (docs/MIGRATING.md).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetIn(stdin)
	root.AddCommand(newRunCmd(), newWebCmd(), newInitCmd(), newSetupCmd(), newDoctorCmd(), newSessionsCmd(), newReplayCmd(), newVersionCmd(), newMigrateCmd(), newSDKCmd())
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the agentengine version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), "agentengine", versionString())
			return nil
		},
	}
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
