package project

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
)

// ksadkOnlyKeys are agentengine.yaml keys KsADK reads that this host has no use for
// (deployment, its own UI, custom runners): a KsADK project loads with a warning naming
// them, never with an error and never in silence.
var ksadkOnlyKeys = map[string]string{
	"package":        "KsADK's package detection",
	"runner_class":   "a custom KsADK runner class",
	"artifact_type":  "KsADK deployment",
	"runtime":        "KsADK deployment",
	"model":          "KsADK's default model (set OPENAI_MODEL_NAME in .env or pass --model)",
	"prompt":         "KsADK's Codex projects",
	"ui_profile":     "KsADK's Web UI",
	"ui_bundle_path": "KsADK's custom UI",
	"ui_path":        "KsADK's custom UI",
	"ui_url":         "KsADK's custom UI",
	"network":        "KsADK deployment",
	"region":         "KsADK deployment",
	"version":        "KsADK deployment",
}

// knownKeys are the keys Config reads, from its yaml tags.
func knownKeys() []string {
	t := reflect.TypeOf(Config{})
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	sort.Strings(keys)
	return keys
}

// checkKeys reports the top-level keys of a config file this host does not read: a
// KsADK key is a warning (returned), anything else an error naming the closest known key,
// so that a typo (`entry_pont`) is never served as the default.
func checkKeys(path string, data []byte) (warnings []string, err error) {
	var top yaml.MapSlice
	if err := yaml.Unmarshal(data, &top); err != nil {
		return nil, nil // not a mapping: Unmarshal into Config reports it
	}
	known := knownKeys()
	var unknown []string
	var ksadk []string
	for _, item := range top {
		k, ok := item.Key.(string)
		if !ok {
			return nil, fmt.Errorf("%s: key %v is not a string", path, item.Key)
		}
		if slices.Contains(known, k) {
			continue
		}
		if why, ok := ksadkOnlyKeys[k]; ok {
			ksadk = append(ksadk, fmt.Sprintf("%s (%s)", k, why))
			continue
		}
		msg := fmt.Sprintf("unknown key %q", k)
		if s := closest(k, known); s != "" {
			msg += fmt.Sprintf(": did you mean %q?", s)
		} else {
			msg += fmt.Sprintf(": the keys are %s", strings.Join(known, ", "))
		}
		unknown = append(unknown, msg)
	}
	if len(ksadk) > 0 {
		warnings = append(warnings, fmt.Sprintf("%s: agentengine does not use these KsADK keys, which are ignored: %s", path, strings.Join(ksadk, "; ")))
	}
	if len(unknown) > 0 {
		return warnings, fmt.Errorf("%s: %s", path, strings.Join(unknown, "; "))
	}
	return warnings, nil
}

// closest is the known key nearest to k by edit distance, if near enough to be a typo.
func closest(k string, known []string) string {
	best, bestD := "", 0
	for _, c := range known {
		d := editDistance(strings.ToLower(k), c)
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= max(2, len(k)/3) {
		return best
	}
	return ""
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
