package pyenv

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentengine/agentengine/host/project"
)

// conflictLine is one line of pip's "The conflict is caused by:" section.
type conflictLine struct {
	// By is who asks: "" for a top-level requirement ("The user requested …"), else the
	// depending distribution and version ("ksadk 0.8.5").
	By string
	// Name is the normalized distribution name; Spec the requirement as pip printed it.
	Name, Spec string
}

// parseConflict reads pip's ResolutionImpossible explanation:
//
//	The conflict is caused by:
//	    The user requested protobuf==3.20.3
//	    The user requested (constraint) protobuf<8,>=4.25
//	    grpcio-tools 1.48.2 depends on protobuf<4.0dev and >=3.12.0
//
// pip 23 joins specifiers with " and ", later versions with ",".
func parseConflict(out string) []conflictLine {
	_, section, ok := strings.Cut(out, "The conflict is caused by:")
	if !ok {
		return nil
	}
	var lines []conflictLine
	for _, raw := range strings.Split(section, "\n")[1:] {
		line := strings.TrimSpace(raw)
		if line == "" {
			if len(lines) > 0 {
				break
			}
			continue
		}
		if strings.HasPrefix(line, "To fix this") || strings.HasPrefix(line, "ERROR") {
			break
		}
		var c conflictLine
		var req string
		if rest, ok := strings.CutPrefix(line, "The user requested "); ok {
			req = strings.TrimSpace(strings.TrimPrefix(rest, "(constraint) "))
		} else if by, rest, ok := strings.Cut(line, " depends on "); ok {
			c.By, req = strings.TrimSpace(by), strings.TrimSpace(rest)
		} else {
			continue
		}
		name, spec := splitRequirement(req)
		if name == "" {
			continue
		}
		c.Name, c.Spec = project.NormalizeName(name), name+spec
		lines = append(lines, c)
	}
	return lines
}

// splitRequirement separates "protobuf<8 and >=4.25" into "protobuf" and "<8,>=4.25".
func splitRequirement(req string) (name, spec string) {
	req, _, _ = strings.Cut(req, ";")
	i := strings.IndexAny(req, "<>=!~[ (@")
	if i < 0 {
		return strings.TrimSpace(req), ""
	}
	name = strings.TrimSpace(req[:i])
	rest := strings.TrimSpace(req[i:])
	if strings.HasPrefix(rest, "[") {
		if j := strings.IndexByte(rest, ']'); j >= 0 {
			name += rest[:j+1]
			rest = strings.TrimSpace(rest[j+1:])
		}
	}
	rest = strings.Trim(rest, "()")
	rest = strings.ReplaceAll(rest, " and ", ",")
	return name, strings.ReplaceAll(rest, " ", "")
}

// sameSpec compares specifier sets regardless of order ("<8,>=4.25" == ">=4.25,<8").
func sameSpec(a, b string) bool {
	split := func(s string) []string {
		parts := strings.Split(strings.ReplaceAll(s, " ", ""), ",")
		sort.Strings(parts)
		return parts
	}
	return strings.Join(split(a), ",") == strings.Join(split(b), ",")
}

// conflictError turns pip's explanation into an error that names the package, every
// requirement on it with who asks for it, and what to change. ours are the runner's
// requirements, added are the packages setup added for the project's imports; sources
// name the project's requirement files.
func conflictError(lines []conflictLine, ours, added []string, sources []string, setup string) error {
	if len(lines) == 0 {
		return nil
	}
	origin := strings.Join(sources, ", ")
	if origin == "" {
		origin = "the project's requirements"
	}
	isOurs := func(c conflictLine) (string, bool) {
		if c.By != "" {
			return "", false
		}
		for _, r := range ours {
			n, spec := splitRequirement(r)
			if project.NormalizeName(n) == c.Name && sameSpec(strings.TrimPrefix(c.Spec, n), spec) {
				return r, true
			}
		}
		return "", false
	}
	isAdded := func(c conflictLine) bool {
		if c.By != "" {
			return false
		}
		_, cspec := splitRequirement(c.Spec)
		for _, a := range added {
			n, spec := splitRequirement(a)
			if project.NormalizeName(n) == c.Name && sameSpec(cspec, spec) {
				return true
			}
		}
		return false
	}
	// Group by package, keeping pip's order; one line per depending distribution.
	type group struct {
		name   string
		lines  []string
		ours   string
		added  string
		theirs []conflictLine
	}
	var groups []*group
	byName := map[string]*group{}
	seenBy := map[string]bool{}
	for _, c := range lines {
		g := byName[c.Name]
		if g == nil {
			g = &group{name: c.Name}
			byName[c.Name] = g
			groups = append(groups, g)
		}
		byDist, _, _ := strings.Cut(c.By, " ")
		key := c.Name + "\x00" + byDist
		if c.By != "" && seenBy[key] {
			continue // pip lists every version it tried; the newest (first) says enough
		}
		seenBy[key] = true
		switch r, ok := isOurs(c); {
		case ok:
			g.ours = r
			g.lines = append(g.lines, fmt.Sprintf("the agentengine runner needs %s", r))
		case isAdded(c):
			g.added, _ = splitRequirement(c.Spec)
			g.lines = append(g.lines, fmt.Sprintf("setup added %s because the code imports it", c.Spec))
		case c.By == "":
			g.lines = append(g.lines, fmt.Sprintf("%s asks for %s", origin, c.Spec))
			g.theirs = append(g.theirs, c)
		default:
			g.lines = append(g.lines, fmt.Sprintf("%s requires %s", c.By, c.Spec))
			g.theirs = append(g.theirs, c)
		}
	}
	var b strings.Builder
	var fixes []string
	anyOurs := false
	for _, g := range groups {
		anyOurs = anyOurs || g.ours != ""
	}
	if anyOurs {
		fmt.Fprintf(&b, "pip cannot install %s together with what the agentengine runner needs:", origin)
	} else {
		fmt.Fprintf(&b, "pip cannot install %s: its requirements conflict:", origin)
	}
	for _, g := range groups {
		fmt.Fprintf(&b, "\n  %s: %s", g.name, strings.Join(g.lines, "; "))
		if g.added != "" {
			fixes = append(fixes, fmt.Sprintf("add a version of %s that fits the other requirements to %s", g.added, origin))
		}
		if g.ours != "" {
			for _, t := range g.theirs {
				if t.By == "" {
					fixes = append(fixes, fmt.Sprintf("change %s in %s to allow %s", t.Spec, origin, g.ours))
				} else {
					dist, _, _ := strings.Cut(t.By, " ")
					fixes = append(fixes, fmt.Sprintf("require a version of %s in %s that accepts %s (%s needs %s)", dist, origin, g.ours, t.By, t.Spec))
				}
			}
		}
	}
	if len(fixes) == 0 {
		fixes = append(fixes, fmt.Sprintf("change one of these requirements in %s so that they agree", origin))
	}
	fmt.Fprintf(&b, "\nfix: %s, then run `%s`", strings.Join(fixes, "; "), setup)
	return fmt.Errorf("%s", b.String())
}

// notFound is the requirement of pip's "No matching distribution found for X", or "".
func notFound(out string) string {
	const marker = "No matching distribution found for "
	i := strings.LastIndex(out, marker)
	if i < 0 {
		return ""
	}
	line, _, _ := strings.Cut(out[i+len(marker):], "\n")
	return strings.TrimSpace(line)
}
