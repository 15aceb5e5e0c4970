package api

import (
	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/sse"
	"github.com/agentengine/agentengine/internal/metrics"
)

// observe counts each request by its route's pattern (never its path, which carries
// ids) and status, and the event streams open.
func observe(m *metrics.Metrics) gin.HandlerFunc {
	streams := sse.Observer(m.Subscribed)
	return func(c *gin.Context) {
		c.Set(sse.ObserverKey, streams)
		defer func() {
			sse.Ended(c)
			route := c.FullPath()
			if route == "" {
				route = "unmatched"
			}
			m.HTTPRequest(route, c.Writer.Status())
		}()
		c.Next()
	}
}
