package project

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// LangGraphFile is the name of LangGraph's project file (langgraph-cli, LangGraph Server).
const LangGraphFile = "langgraph.json"

// LangGraphConfig is what this host reads of langgraph.json.
type LangGraphConfig struct {
	Path string
	// Graphs maps graph ids to entry points ("./agent.py:graph").
	Graphs map[string]string
	// Dependencies are local directories ("." or "./pkg") and pip requirement specifiers.
	Dependencies []string
	// EnvFile is the .env-style file named by "env" (absolute), or "".
	EnvFile string
	// Env is the "env" object, when it is one.
	Env map[string]string
}

type langGraphJSON struct {
	Graphs       map[string]json.RawMessage `json:"graphs"`
	Dependencies []string                   `json:"dependencies"`
	Env          json.RawMessage            `json:"env"`
}

// readLangGraph reads dir/langgraph.json; it returns nil, nil when there is none.
func readLangGraph(dir string) (*LangGraphConfig, error) {
	path := filepath.Join(dir, LangGraphFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var raw langGraphJSON
	if err := json.Unmarshal(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), &raw); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %w", path, err)
	}
	lg := &LangGraphConfig{Path: path, Graphs: map[string]string{}, Dependencies: raw.Dependencies}
	for id, v := range raw.Graphs {
		// A graph is "path.py:attr" or, in newer files, {"path": "path.py:attr", ...}.
		var s string
		if json.Unmarshal(v, &s) != nil {
			var obj struct {
				Path string `json:"path"`
			}
			if json.Unmarshal(v, &obj) != nil || obj.Path == "" {
				return nil, fmt.Errorf("%s: field %q: graph %q must be a string like \"./agent.py:graph\"", path, "graphs", id)
			}
			s = obj.Path
		}
		lg.Graphs[id] = s
	}
	if len(raw.Env) > 0 && string(raw.Env) != "null" {
		var file string
		if json.Unmarshal(raw.Env, &file) == nil {
			if file != "" {
				lg.EnvFile = filepath.Join(dir, file)
			}
		} else if err := json.Unmarshal(raw.Env, &lg.Env); err != nil {
			return nil, fmt.Errorf("%s: field %q: must be a file name (\".env\") or an object of strings", path, "env")
		}
	}
	return lg, nil
}

// GraphIDs returns the graph ids in order.
func (lg *LangGraphConfig) GraphIDs() []string {
	ids := make([]string, 0, len(lg.Graphs))
	for id := range lg.Graphs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// pickGraph returns the entry point of the only graph. This host runs one agent per
// project directory, so several graphs need agentengine.yaml to say which one.
func (lg *LangGraphConfig) pickGraph(dir string, haveYAML bool) (string, error) {
	ids := lg.GraphIDs()
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("%s: field %q: no graphs; add one, e.g. \"graphs\": {\"agent\": \"./agent.py:graph\"}", lg.Path, "graphs")
	case 1:
		return lg.Graphs[ids[0]], nil
	}
	var list strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&list, "\n  %s: %s", id, lg.Graphs[id])
	}
	fix := fmt.Sprintf("create %s with\n  name: %s\n  framework: langgraph\n  entry_point: %s",
		filepath.Join(dir, "agentengine.yaml"), ids[0], lg.Graphs[ids[0]])
	if haveYAML {
		fix = fmt.Sprintf("set `entry_point` in agentengine.yaml to one of them, e.g. `entry_point: %s`", lg.Graphs[ids[0]])
	}
	return "", fmt.Errorf("%s: field %q: %d graphs, but agentengine hosts one agent per project:%s\nfix: %s "+
		"(to serve several graphs, give each its own project directory and pass them all to `agentengine run`)",
		lg.Path, "graphs", len(ids), list.String(), fix)
}
