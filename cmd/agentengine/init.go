package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	agentengine "github.com/agentengine/agentengine"
	"github.com/agentengine/agentengine/host/pybridge"
)

var validProjectName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func newInitCmd() *cobra.Command {
	var framework, fromAgent string
	cmd := &cobra.Command{
		Use:   "init NAME | init --from-agent PATH [NAME]",
		Short: "Create a new agent project that runs as is",
		Long: `Create the directory NAME with an agent project: agentengine.yaml, the agent's code
and a README. The project runs with "agentengine run NAME" straight away and works
offline.

Frameworks:
  langgraph, langchain, deepagents, adk  plain framework code that imports nothing of
      agentengine: agent.py, offline_model.py, requirements.txt (lower bounds),
      .env.example, .gitignore. The first "agentengine run" creates NAME/.venv and
      installs the requirements. Without OPENAI_API_KEY (in NAME/.env) the agent uses
      offline_model.py, a small scripted stand-in for a language model.
  python  a runner written on agentengine's Python runner SDK (shipped inside the
      binary): agent.py, requirements.txt (only protobuf), .gitignore.
  go  a Go runner built on agentengine's Go SDK, which is copied into
      NAME/third_party/agentengine so the project builds without fetching it.

--from-agent PATH wraps existing agent code (a .py file or a directory) instead: see
"Wrapping existing code" below.` + fromAgentHelp,
		Example: `  agentengine init my-agent -f langgraph && agentengine run my-agent
  agentengine init my-agent -f go && agentengine run my-agent`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if fromAgent != "" {
				return runInitFromAgent(cmd, fromAgent, args, framework, cmd.Flags().Changed("framework"))
			}
			if len(args) != 1 {
				return fmt.Errorf("init needs the NAME of the new project (or --from-agent PATH to wrap existing code)")
			}
			return runInit(cmd, args[0], framework)
		},
	}
	cmd.Flags().StringVar(&fromAgent, "from-agent", "", "wrap an existing agent (.py file or directory) as a project, in place")
	cmd.Flags().StringVarP(&framework, "framework", "f", "langgraph", "framework of the new project: langgraph, langchain, deepagents, adk, python or go")
	return cmd
}

func runInit(cmd *cobra.Command, dir, framework string) error {
	name := filepath.Base(filepath.Clean(dir))
	if !validProjectName.MatchString(name) {
		return fmt.Errorf("%q is not a valid project name: use letters, digits, '.', '_' and '-'", name)
	}
	framework = strings.ToLower(strings.TrimSpace(framework))
	if _, ok := pythonScaffolds()[framework]; !ok && framework != "go" && framework != "python" {
		return fmt.Errorf("--framework %q: use langgraph, langchain, deepagents, adk, python (the Python runner SDK) or go", framework)
	}
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%s already exists; choose a new directory name", dir)
	}
	if framework == "python" {
		return initSDKPython(cmd, dir, name)
	}
	if framework != "go" {
		return initPython(cmd, dir, name, framework)
	}
	files := map[string]string{
		"agentengine.yaml": fmt.Sprintf("name: %s\nframework: go\n# The runner's Go main package, relative to this file.\nentry_point: .\n", name),
		"main.go":          goAgentTemplate,
		"go.mod":           fmt.Sprintf("module %s\n\ngo 1.26\n\nrequire github.com/agentengine/agentengine v0.0.0\n\nreplace github.com/agentengine/agentengine => ./third_party/agentengine\n", name),
		".gitignore":       ".agentengine/\n",
		"README.md":        fmt.Sprintf(goReadmeTemplate, name, name, name, name, name),
	}
	for rel, content := range files {
		if err := writeFile(filepath.Join(dir, rel), []byte(content)); err != nil {
			return err
		}
	}
	if err := copySDK(filepath.Join(dir, "third_party", "agentengine")); err != nil {
		return err
	}
	sum, err := agentengine.SDKSource.ReadFile("go.sum")
	if err != nil {
		return fmt.Errorf("embedded SDK: %w", err)
	}
	if err := writeFile(filepath.Join(dir, "go.sum"), sum); err != nil {
		return err
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "resolving Go module requirements (go mod tidy)…")
	tidy := exec.CommandContext(cmd.Context(), "go", "mod", "tidy")
	tidy.Dir = dir
	if out, err := tidy.CombinedOutput(); err != nil {
		return fmt.Errorf("go mod tidy in %s failed (the project is written; fix and rerun it there):\n%s", dir, out)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "created %s\nrun it:  agentengine run %s\nchat:    agentengine run -i %s\n", dir, dir, dir)
	return nil
}

func initPython(cmd *cobra.Command, dir, name, framework string) error {
	files, err := pythonProjectFiles(dir, name, framework)
	if err != nil {
		return err
	}
	for rel, content := range files {
		if err := writeFile(filepath.Join(dir, rel), content); err != nil {
			return err
		}
	}
	fmt.Fprintf(cmd.OutOrStdout(), "created %s (%s)\nrun it:  agentengine run %s      (the first run creates %s and installs requirements.txt)\nchat:    agentengine run -i %s\ncheck:   agentengine doctor %s\n",
		dir, framework, dir, filepath.Join(dir, ".venv"), dir, dir)
	return nil
}

func initSDKPython(cmd *cobra.Command, dir, name string) error {
	reqs, err := pybridge.RunnerRequirements(agentengine.PythonBridge)
	if err != nil {
		return err
	}
	files, err := sdkPythonProjectFiles(dir, name, reqs)
	if err != nil {
		return err
	}
	for rel, content := range files {
		if err := writeFile(filepath.Join(dir, rel), content); err != nil {
			return err
		}
	}
	fmt.Fprintf(cmd.OutOrStdout(), "created %s (python: a runner on the Python runner SDK)\nrun it:  agentengine run %s      (the first run creates %s and installs requirements.txt)\nchat:    agentengine run -i %s\ncheck:   agentengine doctor %s\n",
		dir, dir, filepath.Join(dir, ".venv"), dir, dir)
	return nil
}

// copySDK writes the embedded SDK sources, without tests, as a local module.
func copySDK(dst string) error {
	return fs.WalkDir(agentengine.SDKSource, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := agentengine.SDKSource.ReadFile(path)
		if err != nil {
			return err
		}
		return writeFile(filepath.Join(dst, filepath.FromSlash(path)), data)
	})
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

const goAgentTemplate = `// An agentengine Go runner. Replace the body of Run with your agent.
package main

import (
	"context"
	"strings"

	"github.com/agentengine/agentengine/pluginsdk"
)

type agent struct{}

func (agent) Info() pluginsdk.Info {
	return pluginsdk.Info{Name: "agent", Framework: "go", Description: "A Go agent that echoes its input"}
}

// Run handles one turn: read the input from req.Payload, emit events as they happen.
func (agent) Run(ctx context.Context, req *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	words := strings.Fields("You said: " + req.Payload.InputText())
	for i, w := range words {
		if i > 0 {
			w = " " + w
		}
		if err := emit.Text(w); err != nil {
			return err
		}
	}
	return nil
}

func main() { pluginsdk.Serve(agent{}) }
`

const goReadmeTemplate = `# %s

An agentengine agent project with a Go runner.

    agentengine run %s        # OpenAI-compatible API on http://127.0.0.1:8080
    agentengine run -i %s     # chat in the terminal

    curl http://127.0.0.1:8080/v1/responses -H 'Content-Type: application/json' \
      -d '{"model":"%s","input":"hello","stream":true}'

The agent is in main.go; third_party/agentengine holds the Go SDK it builds against,
copied from the agentengine binary (go.mod's replace line points at it). After upgrading
agentengine, run "agentengine sdk update %s" to replace the copy with the new binary's SDK;
agentengine says so when a runner's copy speaks an older runner protocol.
`
