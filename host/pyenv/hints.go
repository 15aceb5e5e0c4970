package pyenv

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentengine/agentengine/host/project"
)

// A KsADK project often imports packages it never lists: KsADK's CLI installs them with
// itself (its base dependencies and its framework extras). Under agentengine such a
// project would fail to import, so setup adds them to the same pip resolve (by bare name:
// they never constrain a version the project chose) and doctor names them.

// providedPackage is a distribution KsADK brings, with the imports that need it.
type providedPackage struct {
	// Dist is the requirement pip installs: a bare name unless a range is needed for the
	// import to work.
	Dist string
	// Modules are dotted import paths (prefix match) that need Dist.
	Modules []string
	// Extras are the ksadk extras that provide it; none means ksadk's base dependencies.
	Extras []string
}

// ksadkProvided is read from the ksadk package's own metadata (Requires-Dist of the base
// and the adk, langchain, langgraph, deepagents and a2a extras), limited to packages whose
// import name identifies them unambiguously.
var ksadkProvided = []providedPackage{
	// ADK's LiteLlm model imports litellm (KsADK's adk extra). litellm 1.103 and later
	// load mcp 2 when LiteLlm completes, which google-adk 1.x and ksadk do not allow; this
	// is the range google-adk 1.x tests LiteLlm with, and it works on 2.x too.
	{Dist: "litellm>=1.83.7,<=1.83.14", Modules: []string{"litellm", "google.adk.models.lite_llm", "google.adk.models.LiteLlm"}, Extras: []string{"adk"}},
	{Dist: "json-repair", Modules: []string{"json_repair"}, Extras: []string{"adk"}},
	{Dist: "python-dotenv", Modules: []string{"dotenv"}},
	{Dist: "langchain-openai", Modules: []string{"langchain_openai"}, Extras: []string{"langchain", "langgraph", "deepagents"}},
	{Dist: "langchain", Modules: []string{"langchain"}},
	{Dist: "langchain-core", Modules: []string{"langchain_core"}},
	{Dist: "langgraph-checkpoint-sqlite", Modules: []string{"langgraph.checkpoint.sqlite"}},
	{Dist: "langgraph-checkpoint-postgres", Modules: []string{"langgraph.checkpoint.postgres"}, Extras: []string{"langgraph"}},
	{Dist: "langgraph", Modules: []string{"langgraph"}},
	{Dist: "psycopg-pool", Modules: []string{"psycopg_pool"}, Extras: []string{"langgraph"}},
	{Dist: "psycopg[binary]", Modules: []string{"psycopg"}, Extras: []string{"langgraph"}},
	{Dist: "deepagents", Modules: []string{"deepagents"}, Extras: []string{"deepagents"}},
	{Dist: "google-adk", Modules: []string{"google.adk"}},
	{Dist: "requests-aws4auth", Modules: []string{"requests_aws4auth"}},
	{Dist: "requests", Modules: []string{"requests"}},
	{Dist: "beautifulsoup4", Modules: []string{"bs4"}},
	{Dist: "pypdf", Modules: []string{"pypdf"}},
	{Dist: "pillow", Modules: []string{"PIL"}},
	{Dist: "mcp", Modules: []string{"mcp"}},
	{Dist: "rich", Modules: []string{"rich"}},
	{Dist: "click", Modules: []string{"click"}},
	{Dist: "fastapi", Modules: []string{"fastapi"}},
	{Dist: "uvicorn", Modules: []string{"uvicorn"}},
	{Dist: "websockets", Modules: []string{"websockets"}},
	{Dist: "jsonschema", Modules: []string{"jsonschema"}},
	{Dist: "asyncpg", Modules: []string{"asyncpg"}},
	{Dist: "httpx-sse", Modules: []string{"httpx_sse"}},
	{Dist: "sse-starlette", Modules: []string{"sse_starlette"}},
	{Dist: "aiosqlite", Modules: []string{"aiosqlite"}, Extras: []string{"a2a"}},
	{Dist: "sqlalchemy", Modules: []string{"sqlalchemy"}, Extras: []string{"a2a"}},
}

// Hint is a package the project's code imports that its requirements do not list.
type Hint struct {
	// Dist is the requirement to add.
	Dist string
	// Module, File and Line are the import that needs it.
	Module string
	File   string
	Line   int
}

// Where is the import, for messages: "agent.py:3 imports litellm".
func (h Hint) Where() string {
	return fmt.Sprintf("%s:%d imports %s", h.File, h.Line, h.Module)
}

// Hints finds the packages the project imports that KsADK would have installed and the
// project's requirements do not list (directly, or through ksadk with the extra that
// brings them).
func Hints(p *project.Project, reqs project.Requirements) []Hint {
	listed, err := project.ParseRequirements(reqs)
	if err != nil {
		return nil
	}
	have := map[string]bool{}
	ksadkExtras := map[string]bool{}
	hasKsadk := false
	for _, r := range listed {
		have[project.NormalizeName(r.Name)] = true
		if project.NormalizeName(r.Name) == "ksadk" {
			hasKsadk = true
			for _, e := range r.Extras {
				ksadkExtras[e] = true
			}
		}
	}
	covered := func(pp providedPackage) bool {
		if have[project.NormalizeName(distName(pp.Dist))] {
			return true
		}
		if !hasKsadk {
			return false
		}
		if len(pp.Extras) == 0 || ksadkExtras["all"] {
			return true
		}
		for _, e := range pp.Extras {
			if ksadkExtras[e] {
				return true
			}
		}
		return false
	}
	var out []Hint
	added := map[string]bool{}
	for _, im := range p.Imports() {
		pp, ok := providerOf(im.Module)
		if !ok || added[pp.Dist] || covered(pp) {
			continue
		}
		added[pp.Dist] = true
		out = append(out, Hint{Dist: pp.Dist, Module: im.Module, File: im.File, Line: im.Line})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dist < out[j].Dist })
	return out
}

// providerOf finds the package an import needs, by the longest module prefix.
func providerOf(module string) (providedPackage, bool) {
	best, bestLen := providedPackage{}, 0
	for _, pp := range ksadkProvided {
		for _, m := range pp.Modules {
			if (module == m || strings.HasPrefix(module, m+".")) && len(m) > bestLen {
				best, bestLen = pp, len(m)
			}
		}
	}
	return best, bestLen > 0
}

// distName is a requirement's distribution name, without extras or version.
func distName(req string) string {
	if i := strings.IndexAny(req, "[<>=!~ ;"); i >= 0 {
		return req[:i]
	}
	return req
}

func hintDists(hints []Hint) []string {
	out := make([]string, len(hints))
	for i, h := range hints {
		out[i] = h.Dist
	}
	return out
}

// hintNotice is the one line setup prints about the packages it adds.
func hintNotice(hints []Hint, sources []string) string {
	parts := make([]string, len(hints))
	for i, h := range hints {
		parts[i] = fmt.Sprintf("%s (%s)", h.Dist, h.Where())
	}
	it := "it"
	if len(hints) > 1 {
		it = "them"
	}
	listed, file := "which the project's requirements do not list", "requirements.txt"
	if len(sources) > 0 {
		listed, file = fmt.Sprintf("which %s does not list", strings.Join(sources, " or ")), sources[0]
	}
	return fmt.Sprintf("note: also installing %s, %s and KsADK would have installed; add %s to %s to make this explicit",
		strings.Join(parts, ", "), listed, it, file)
}
