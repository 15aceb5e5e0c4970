package adkweb

import (
	"net/http"
	"runtime"
	"strings"

	"github.com/gin-gonic/gin"
)

// listApps serves GET /list-apps: every hosted agent's name (?detailed=true: ADK's
// ListAppsResponse).
func (h *Handler) listApps(c *gin.Context) {
	agents := h.rt.Agents()
	if c.Query("detailed") != "true" {
		names := make([]string, 0, len(agents))
		for _, a := range agents {
			names = append(names, a.Name)
		}
		writeJSON(c, http.StatusOK, names)
		return
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
	writeJSON(c, http.StatusOK, gin.H{"apps": apps})
}

// getVersion serves GET /version, which ADK web reads at start-up.
func (h *Handler) getVersion(c *gin.Context) {
	writeJSON(c, http.StatusOK, gin.H{"version": h.version, "language": "go",
		"language_version": strings.TrimPrefix(runtime.Version(), "go")})
}
