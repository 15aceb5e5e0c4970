package project

import (
	"reflect"
	"testing"
)

func TestImports(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"agentengine.yaml": "name: x\nframework: langgraph\nentry_point: agent.py:graph\n",
		"agent.py": "import os, json as j\nfrom . import sibling\nfrom .tools import t\n" +
			"from langchain_openai import ChatOpenAI  # model\n    import litellm.utils as u\n" +
			"from tools import helper\ngraph = 1\n",
		"tools.py":            "'''Usage:\nimport not_this\n'''\nfrom dotenv import (\n    load_dotenv,\n)\n",
		"__pycache__/x.py":    "import cached\n",
		"node_modules/y/z.py": "import node\n",
		"myenv/pyvenv.cfg":    "",
		"myenv/lib/site.py":   "import in_venv\n",
		".git/hooks/pre.py":   "import hidden\n",
		"sub/deep/more.py":    "import requests\n",
	})
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Import{}
	for _, im := range p.Imports() {
		got[im.Module] = im
	}
	want := map[string]Import{
		"os":                          {Module: "os", File: "agent.py", Line: 1},
		"json":                        {Module: "json", File: "agent.py", Line: 1},
		"langchain_openai":            {Module: "langchain_openai", File: "agent.py", Line: 4},
		"langchain_openai.ChatOpenAI": {Module: "langchain_openai.ChatOpenAI", File: "agent.py", Line: 4},
		"litellm.utils":               {Module: "litellm.utils", File: "agent.py", Line: 5},
		"dotenv":                      {Module: "dotenv", File: "tools.py", Line: 4},
		"dotenv.load_dotenv":          {Module: "dotenv.load_dotenv", File: "tools.py", Line: 4},
		"requests":                    {Module: "requests", File: "sub/deep/more.py", Line: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("imports\n  %v\nwant\n  %v", got, want)
	}
}
