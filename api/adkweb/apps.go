package adkweb

import (
	"net/http"
	"runtime"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/httpx"
)

// listApps serves GET /list-apps: every hosted agent's name (?detailed=true: ADK's
// ListAppsResponse).
func (h *Handler) listApps(c *gin.Context) *httpError {
	agents := h.rt.Agents()
	if c.Query("detailed") != "true" {
		names := make([]string, 0, len(agents))
		for _, a := range agents {
			names = append(names, a.Name)
		}
		httpx.WriteJSON(c, http.StatusOK, names)
		return nil
	}
	type appInfo struct {
		Name          string `json:"name"`
		RootAgentName string `json:"rootAgentName"`
		Description   string `json:"description"`
		Language      string `json:"language"`
		IsComputerUse bool   `json:"isComputerUse"`
	}
	apps := make([]appInfo, 0, len(agents))
	for _, a := range agents {
		lang := "python"
		if a.Framework == "go" {
			lang = "go"
		}
		apps = append(apps, appInfo{Name: a.Name, RootAgentName: a.Name, Description: a.Description, Language: lang})
	}
	httpx.WriteJSON(c, http.StatusOK, gin.H{"apps": apps})
	return nil
}

// getVersion serves GET /version, which ADK web reads at start-up.
func (h *Handler) getVersion(c *gin.Context) *httpError {
	httpx.WriteJSON(c, http.StatusOK, gin.H{"version": h.version, "language": "go",
		"language_version": strings.TrimPrefix(runtime.Version(), "go")})
	return nil
}
