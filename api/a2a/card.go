package a2a

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/httpx"
)

// bearerScheme names the card's security scheme when the server requires a key.
const bearerScheme a2a.SecuritySchemeName = "bearer"

// defaultCard serves GET /.well-known/agent-card.json: the card of the only agent, or
// with several, of the first one served (the runtime's default: the first on the command line), whose url is its own path.
func (s *Surface) defaultCard(c *gin.Context) {
	agents := s.rt.Agents()
	if len(agents) == 0 {
		writeRPCError(c, http.StatusNotFound, -32600, "this server hosts no agent", map[string]any{"code": "not_found"})
		return
	}
	s.writeCard(c, agents[0].Name)
}

// agentCard serves GET /a2a/{agent}/.well-known/agent-card.json.
func (s *Surface) agentCard(c *gin.Context) {
	s.writeCard(c, c.Param("agent"))
}

func (s *Surface) writeCard(c *gin.Context, name string) {
	agent, err := s.rt.ResolveAgent(name)
	if err != nil || agent.Name != name {
		writeRPCError(c, http.StatusNotFound, -32600, "agent "+quote(name)+" is not hosted here", map[string]any{"code": "not_found"})
		return
	}
	desc := agent.Description
	if desc == "" {
		desc = "The " + agent.Name + " agent (" + agent.Framework + "), served by agentengine."
	}
	url := s.baseURL(c) + Prefix + agent.Name
	card := &a2a.AgentCard{
		Name:               agent.Name,
		Description:        desc,
		URL:                url,
		PreferredTransport: a2a.TransportProtocolJSONRPC,
		ProtocolVersion:    ProtocolVersion,
		Version:            s.version,
		Provider:           &a2a.AgentProvider{Org: "agentengine", URL: s.baseURL(c)},
		DefaultInputModes:  []string{"text/plain", "application/json", "application/octet-stream"},
		DefaultOutputModes: []string{"text/plain", "application/json"},
		Capabilities:       a2a.AgentCapabilities{Streaming: true, StateTransitionHistory: true, PushNotifications: true},
		Skills: []a2a.AgentSkill{{
			ID: agent.Name, Name: agent.Name, Description: desc,
			Tags: []string{"agentengine", agent.Framework},
		}},
		AdditionalInterfaces: []a2a.AgentInterface{{Transport: a2a.TransportProtocolJSONRPC, URL: url}},
	}
	if s.bearer {
		card.SecuritySchemes = a2a.NamedSecuritySchemes{bearerScheme: a2a.HTTPAuthSecurityScheme{
			Scheme: "bearer", Description: "an agentengine API key: the server's --token or a key of its --tokens file",
		}}
		card.Security = []a2a.SecurityRequirements{{bearerScheme: a2a.SecuritySchemeScopes{}}}
	}
	httpx.WriteJSON(c, http.StatusOK, cardWithV1(card, url, s.bearer))
}

// cardWithV1 adds A2A 1.0's fields to a 0.3 card, so one card serves clients of both:
// supportedInterfaces lists the endpoint twice, for 1.0 (first: 1.0 clients pick it) and
// for 0.3 (the same URL: the JSON-RPC method names tell the versions apart). 1.0 clients
// read supportedInterfaces and securityRequirements; 0.3 clients read url,
// preferredTransport, protocolVersion and security, and ignore the rest.
func cardWithV1(card *a2a.AgentCard, url string, bearer bool) map[string]any {
	b, _ := json.Marshal(card)
	out := map[string]any{}
	_ = json.Unmarshal(b, &out)
	out["supportedInterfaces"] = []map[string]any{
		{"url": url, "protocolBinding": string(a2a.TransportProtocolJSONRPC), "protocolVersion": ProtocolVersionV1},
		{"url": url, "protocolBinding": string(a2a.TransportProtocolJSONRPC), "protocolVersion": ProtocolVersion},
	}
	if bearer {
		out["securityRequirements"] = []map[string]any{{"schemes": map[string]any{string(bearerScheme): map[string]any{"list": []string{}}}}}
	}
	return out
}

// baseURL is the server's URL as clients reach it: PublicURL, else the request's.
func (s *Surface) baseURL(c *gin.Context) string {
	if s.publicURL != "" {
		return s.publicURL
	}
	scheme := "http"
	if c.Request.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + strings.TrimSuffix(c.Request.Host, "/")
}
