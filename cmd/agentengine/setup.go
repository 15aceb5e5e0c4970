package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	agentengine "github.com/agentengine/agentengine"
	"github.com/agentengine/agentengine/host/project"
	"github.com/agentengine/agentengine/host/pybridge"
	"github.com/agentengine/agentengine/host/pyenv"
)

func newSetupCmd() *cobra.Command {
	runner := "protobuf"
	if reqs, err := pybridge.RunnerRequirements(agentengine.PythonBridge); err == nil {
		runner = strings.Join(reqs, ", ")
	}
	return &cobra.Command{
		Use:   "setup [DIR]",
		Short: "Create a Python project's virtualenv and install its requirements",
		Long: fmt.Sprintf(`Prepare the Python environment of the project in DIR (default "."):

  - the interpreter is the one "python:" in agentengine.yaml names, else DIR/.venv, else
    DIR/venv; when there is none, DIR/.venv is created with python3 from PATH (3.11+);
  - pip installs what the project declares, exactly as written (requirements.txt, else
    pyproject.toml's [project].dependencies, plus langgraph.json's "dependencies"),
    together with what the runner itself needs (%s), in one
    resolve and with no constraints of agentengine's: a version the project pins is the
    one installed. When pip cannot satisfy both, the error names the package, each
    requirement on it and what to change. pip's output is shown as it runs;
  - packages the project's code imports without listing them, which KsADK's own
    dependencies and extras would have provided (litellm for ADK's LiteLlm, python-dotenv
    for dotenv, langchain-openai, ...), are added to the same resolve with a notice;
  - it installs only into a virtualenv (or conda environment), never into a system Python.

"agentengine run" does the same by itself when a project declares requirements and has no
environment yet, and reinstalls when the requirements of an environment it created change.
The bridge between the framework and agentengine ships inside agentengine: it is never
installed into the project.`, runner),
		Example: `  agentengine setup examples/langgraph-chat
  agentengine setup .   # then: agentengine doctor .`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			p, err := project.Load(dir)
			if err != nil {
				return err
			}
			opt, err := pythonEnvOptions(cmd.ErrOrStderr(), dir)
			if err != nil {
				return err
			}
			in, err := pyenv.Setup(cmd.Context(), p, opt)
			if err != nil {
				return err
			}
			q := project.ShellQuote(dir)
			fmt.Fprintf(cmd.OutOrStdout(), "%s is set up (%s)\ncheck it:  agentengine doctor %s\nrun it:    agentengine run %s\n", dir, in.Path, q, q)
			return nil
		},
	}
}
