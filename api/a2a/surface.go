package a2a

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/gin-gonic/gin"
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/host"
)

// ProtocolVersion is the A2A protocol version the surface serves.
const ProtocolVersion = "0.3.0"

// Prefix is the path under which each agent is served: /a2a/{agent}.
const Prefix = "/a2a/"

// DefaultCancelWait bounds how long tasks/cancel waits for the run to end.
const DefaultCancelWait = 10 * time.Second

// Config configures the A2A surface.
type Config struct {
	Runtime *host.Runtime
	Logger  hclog.Logger
	// PublicURL is the server's URL as clients reach it ("https://agents.example.com"),
	// for the agent cards' url; empty: the request's scheme and Host.
	PublicURL string
	// Bearer says the server requires "Authorization: Bearer <key>" (--token, --tokens):
	// the cards then declare that security scheme.
	Bearer bool
	// Version is the agents' version in their cards (default "dev").
	Version string
	// CancelWait bounds how long tasks/cancel waits for the run to end (default 10 s).
	CancelWait time.Duration
	// PushAllowPrivate lets push-notification webhooks be loopback, private or
	// link-local addresses (refused by default: the server would otherwise reach into
	// its own network for any client).
	PushAllowPrivate bool
	// PushTimeout bounds each webhook request (default 10 s); PushRetries is how many
	// times a failed delivery is retried (default 3; -1 also means the default).
	PushTimeout time.Duration
	PushRetries *int
}

// Surface serves the agent cards and the JSON-RPC endpoints (api.Surface).
type Surface struct {
	rt         *host.Runtime
	log        hclog.Logger
	publicURL  string
	bearer     bool
	version    string
	cancelWait time.Duration
	push       *pushes
}

// New builds the surface. A nil Runtime is a programming error and panics.
func New(cfg Config) *Surface {
	if cfg.Runtime == nil {
		panic("a2a: a host runtime is required")
	}
	s := &Surface{rt: cfg.Runtime, log: cfg.Logger, publicURL: strings.TrimSuffix(cfg.PublicURL, "/"),
		bearer: cfg.Bearer, version: cfg.Version, cancelWait: cfg.CancelWait}
	if s.log == nil {
		s.log = hclog.NewNullLogger()
	}
	if s.version == "" {
		s.version = "dev"
	}
	if s.cancelWait <= 0 {
		s.cancelWait = DefaultCancelWait
	}
	retries := DefaultPushRetries
	if cfg.PushRetries != nil && *cfg.PushRetries >= 0 {
		retries = *cfg.PushRetries
	}
	s.push = newPushes(s.log, cfg.PushAllowPrivate, cfg.PushTimeout, retries)
	return s
}

// Register mounts the routes.
func (s *Surface) Register(r gin.IRouter) {
	r.GET(a2asrv.WellKnownAgentCardPath, s.defaultCard)
	r.GET(Prefix+":agent"+a2asrv.WellKnownAgentCardPath, s.agentCard)
	r.POST(Prefix+":agent", s.jsonrpc)
}

// Owns reports the surface's paths: the well-known card and everything under /a2a/.
func (s *Surface) Owns(path string) bool {
	return path == a2asrv.WellKnownAgentCardPath || strings.HasPrefix(path, Prefix) || path == "/a2a"
}

// WriteError writes a JSON-RPC error response with the HTTP status (api.Surface): the
// router's refusals (a missing key, a body too large, no such route) reach A2A clients in
// the shape their transport reads.
func (s *Surface) WriteError(c *gin.Context, status int, code, message string) {
	rpc := -32600 // Invalid Request
	if status >= 500 {
		rpc = -32603
	}
	writeRPCError(c, status, rpc, message, map[string]any{"code": code})
}

func writeRPCError(c *gin.Context, status, code int, message string, data map[string]any) {
	body := map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": message, "data": data}}
	b, _ := json.Marshal(body)
	c.Data(status, "application/json", b)
}

// jsonrpc serves POST /a2a/{agent} with the SDK's JSON-RPC transport over this agent's
// request handler.
func (s *Surface) jsonrpc(c *gin.Context) {
	agent, err := s.rt.ResolveAgent(c.Param("agent"))
	if err != nil || agent.Name != c.Param("agent") {
		writeRPCError(c, http.StatusNotFound, -32600, "agent "+quote(c.Param("agent"))+" is not hosted here", map[string]any{"code": "not_found"})
		return
	}
	// The body is kept (within the router's limit) to answer for the SDK when it writes
	// nothing: its transport sends no response to a successful method without a result
	// (tasks/pushNotificationConfig/delete), where JSON-RPC wants "result": null.
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		s.WriteError(c, http.StatusRequestEntityTooLarge, "invalid_request", "the request body could not be read: "+err.Error())
		return
	}
	h := &handler{s: s, agent: agent.Name}
	if req, ok := isV1(body); ok {
		serveV1(c, h, req)
		return
	}
	c.Request.Body = io.NopCloser(bytes.NewReader(body))
	a2asrv.NewJSONRPCHandler(h).ServeHTTP(c.Writer, c.Request)
	if !c.Writer.Written() {
		var req struct {
			ID any `json:"id"`
		}
		_ = json.Unmarshal(body, &req)
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": nil})
		c.Data(http.StatusOK, "application/json", b)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

var _ a2asrv.RequestHandler = (*handler)(nil)
