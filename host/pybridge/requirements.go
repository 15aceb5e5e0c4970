package pybridge

import (
	"fmt"
	"io/fs"
	"strings"
)

// RunnerRequirements returns the runner SDK's own requirements (e.g. "protobuf>=4.25,<8") from
// the embedded bridge: what has to be installed into a project's environment besides the
// project's own requirements. Blank lines and # comments are dropped.
func RunnerRequirements(src fs.FS) ([]string, error) {
	data, err := fs.ReadFile(src, RunnerRequirementsFile)
	if err != nil {
		return nil, fmt.Errorf("read the runner SDK's requirements: %w", err)
	}
	var reqs []string
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		if line = strings.TrimSpace(line); line != "" {
			reqs = append(reqs, line)
		}
	}
	if len(reqs) == 0 {
		return nil, fmt.Errorf("%s lists no requirements", RunnerRequirementsFile)
	}
	return reqs, nil
}
