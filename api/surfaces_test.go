package api

import (
	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/openai"
)

// newRouter is NewRouter with the OpenAI-compatible surface first, as `run` mounts it:
// these tests drive the router through it.
func newRouter(cfg Config) *gin.Engine {
	cfg.Surfaces = append([]Surface{openai.New(openai.Config{Runtime: cfg.Runtime})}, cfg.Surfaces...)
	return NewRouter(cfg)
}
