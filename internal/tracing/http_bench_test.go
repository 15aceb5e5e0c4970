package tracing

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/propagation"
)

// BenchmarkServerSpan is the HTTP middleware's own cost, the recent traces kept, on a
// request whose handler does nothing: against gin with no middleware.
func BenchmarkServerSpan(b *testing.B) {
	gin.SetMode(gin.ReleaseMode)
	for _, traced := range []bool{false, true} {
		e := gin.New()
		name := "off"
		if traced {
			e.Use(serverMiddleware(keptRecorder().Tracer(ScopeName), propagation.TraceContext{}))
			name = "traced"
		}
		e.POST("/v1/responses", func(c *gin.Context) { c.Status(http.StatusOK) })
		req := httptest.NewRequest(http.MethodPost, "/v1/responses", nil)
		req.Header.Set("User-Agent", "Go-http-client/1.1")
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}
