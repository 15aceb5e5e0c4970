package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	agentengine "github.com/agentengine/agentengine"
	"github.com/agentengine/agentengine/host/project"
	"github.com/agentengine/agentengine/internal/runnerplugin"
)

// sdkModule is the module path a Go runner imports the SDK from.
const sdkModule = "github.com/agentengine/agentengine"

func newSDKCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sdk",
		Short: "Manage the Go runner SDK a Go project builds against",
		Long: `A Go runner builds against a copy of agentengine's Go SDK inside its project
(third_party/agentengine, written by "agentengine init -f go"; go.mod's replace line
points at it). The copy comes from this binary: "agentengine sdk update" replaces it with
the SDK of the running agentengine, which a runner must speak.`,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "update [DIR]",
		Short: "Replace a Go project's SDK copy with this agentengine's",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			return runSDKUpdate(cmd, dir)
		},
	})
	return cmd
}

var replaceLine = regexp.MustCompile(`(?m)^\s*(?:replace\s+)?` + regexp.QuoteMeta(sdkModule) + `(?:\s+\S+)?\s*=>\s*(\S+)\s*$`)

// sdkCopy is the directory of the project's local SDK copy (go.mod's replace of the SDK
// module to a relative path), or "" when go.mod has none.
func sdkCopy(projectDir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(projectDir, "go.mod"))
	if err != nil {
		return "", err
	}
	m := replaceLine.FindSubmatch(data)
	if m == nil {
		return "", nil
	}
	target := string(m[1])
	if !strings.HasPrefix(target, "./") && !strings.HasPrefix(target, "../") {
		return "", nil // a module version or an absolute path: not a copy this command owns
	}
	return filepath.Join(projectDir, filepath.FromSlash(target)), nil
}

// protocolConst finds the runner protocol version in an SDK copy's source: an integer in
// internal/runnerplugin, a string in the pluginsdk/sdk.go of older copies.
var protocolConst = regexp.MustCompile(`const ProtocolVersion = "?([^"\s]*)"?`)

// protocolFiles are where an SDK copy declares its protocol version, newest layout first.
var protocolFiles = []string{filepath.Join("internal", "runnerplugin", "runnerplugin.go"), filepath.Join("pluginsdk", "sdk.go")}

// checkSDKCopy reports a Go project whose SDK copy speaks another runner protocol than
// this agentengine, before a build that would only fail at the handshake.
func checkSDKCopy(p *project.Project, display string) error {
	dir, err := sdkCopy(p.Dir)
	if err != nil || dir == "" {
		return nil
	}
	var m [][]byte
	for _, f := range protocolFiles {
		if src, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
			if m = protocolConst.FindSubmatch(src); m != nil {
				break
			}
		}
	}
	if m == nil || string(m[1]) == runnerplugin.Protocol() {
		return nil
	}
	rel, _ := filepath.Rel(p.Dir, dir)
	return fmt.Errorf("%s: the project's Go SDK copy (%s) speaks runner protocol %s, this agentengine speaks %s: run `agentengine sdk update %s`",
		p.ConfigPath, rel, m[1], runnerplugin.Protocol(), project.ShellQuote(display))
}

func runSDKUpdate(cmd *cobra.Command, dir string) error {
	p, err := project.Load(dir)
	if err != nil {
		return err
	}
	if p.Framework != project.FrameworkGo {
		return fmt.Errorf("%s is a %s project: only Go runners build against the Go SDK", dir, p.Framework)
	}
	cp, err := sdkCopy(p.Dir)
	if err != nil {
		return fmt.Errorf("read %s: %w", filepath.Join(p.Dir, "go.mod"), err)
	}
	if cp == "" {
		return fmt.Errorf("%s has no `replace %s => ./…` line: agentengine updates only a local SDK copy (as `agentengine init -f go` writes: `replace %s => ./third_party/agentengine`)",
			filepath.Join(p.Dir, "go.mod"), sdkModule, sdkModule)
	}
	if entries, err := os.ReadDir(cp); err == nil && len(entries) > 0 {
		if _, err := os.Stat(filepath.Join(cp, "pluginsdk", "sdk.go")); err != nil {
			return fmt.Errorf("%s does not look like agentengine's SDK copy (no pluginsdk/sdk.go): refusing to replace it", cp)
		}
	}
	if err := os.RemoveAll(cp); err != nil {
		return fmt.Errorf("remove the old SDK copy: %w", err)
	}
	if err := copySDK(cp); err != nil {
		return err
	}
	if err := mergeGoSum(filepath.Join(p.Dir, "go.sum")); err != nil {
		return err
	}
	tidy := exec.CommandContext(cmd.Context(), "go", "mod", "tidy")
	tidy.Dir = p.Dir
	if out, err := tidy.CombinedOutput(); err != nil {
		return fmt.Errorf("go mod tidy in %s failed (the SDK copy is updated; fix and rerun it there):\n%s", p.Dir, out)
	}
	rel, _ := filepath.Rel(p.Dir, cp)
	fmt.Fprintf(cmd.OutOrStdout(), "updated %s to the Go SDK of agentengine %s (runner protocol %s)\n",
		filepath.Join(dir, rel), versionString(), runnerplugin.Protocol())
	return nil
}

// mergeGoSum adds the SDK's go.sum lines the project's lacks, so its dependencies
// resolve from the module cache without a lookup.
func mergeGoSum(path string) error {
	sdkSum, err := agentengine.SDKSource.ReadFile("go.sum")
	if err != nil {
		return fmt.Errorf("embedded SDK: %w", err)
	}
	have, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	seen := map[string]bool{}
	for _, l := range strings.Split(string(have), "\n") {
		seen[l] = true
	}
	var b bytes.Buffer
	b.Write(have)
	if len(have) > 0 && !bytes.HasSuffix(have, []byte("\n")) {
		b.WriteByte('\n')
	}
	sc := bufio.NewScanner(bytes.NewReader(sdkSum))
	for sc.Scan() {
		if l := sc.Text(); l != "" && !seen[l] {
			b.WriteString(l + "\n")
		}
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
