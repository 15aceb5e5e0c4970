package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentengine/agentengine/host/pyenv"
)

func newDoctorCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor [DIR]",
		Short: "Check that a project can run, and say how to fix what is missing",
		Long: `Check the project in DIR (default "."): its configuration and entry point, then for
Python projects the interpreter, its version (3.11+, which the runner SDK needs), the
virtualenv, the installed requirements, the packages the code imports that its
requirements do not list but KsADK would have installed (litellm for ADK's LiteLlm,
python-dotenv, ...), and, from inside Python, protobuf, the framework, the
entry point's object and its hook signatures. Every problem comes with the command that
fixes it; a fix installs only into the project's own virtualenv (with its pip), else it
is "agentengine setup DIR", never into an interpreter outside the project.

Exits 1 when a check fails. --json prints {"ok": bool, "checks": [{"name", "ok",
"detail", "fix"}]}.`,
		Example: `  agentengine doctor examples/langgraph-chat
  agentengine doctor . --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			env, err := pythonEnvOptions(nil, dir)
			if err != nil {
				return err
			}
			opt := pyenv.DoctorOptions{Options: env}
			b, err := extractBridge()
			if err != nil {
				return err
			}
			opt.PythonPath = b.PythonPath()
			rep := pyenv.Doctor(cmd.Context(), dir, opt)
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else {
				printReport(cmd.OutOrStdout(), dir, rep)
			}
			if !rep.OK {
				n := 0
				for _, c := range rep.Checks {
					if !c.OK {
						n++
					}
				}
				return fmt.Errorf("doctor found %d problem(s) in %s", n, dir)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func printReport(w io.Writer, dir string, rep pyenv.Report) {
	fmt.Fprintf(w, "agentengine doctor %s\n\n", dir)
	width := 0
	for _, c := range rep.Checks {
		width = max(width, len(c.Name))
	}
	indent := strings.Repeat(" ", width+7)
	for _, c := range rep.Checks {
		mark := "✓"
		if !c.OK {
			mark = "✗"
		}
		detail := strings.ReplaceAll(c.Detail, "\n", "\n"+indent)
		fmt.Fprintf(w, "  %s %-*s   %s\n", mark, width, c.Name, detail)
		if c.Fix != "" && !c.OK {
			fmt.Fprintf(w, "%sfix: %s\n", indent, strings.ReplaceAll(c.Fix, "\n", "\n"+indent+"     "))
		}
	}
	if rep.OK {
		fmt.Fprintln(w, "\nall checks passed")
	}
}
