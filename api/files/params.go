package files

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/limit"
)

// maxJSONBody and maxFormField bound the small parts of requests.
const (
	maxJSONBody  = 1 << 20
	maxFormField = 8 << 10
)

// params are an action's PascalCase parameters, from the query string and, for POSTs
// with a JSON body, from the body (which wins).
type params map[string]any

func readParams(c *gin.Context) (params, *apiError) {
	p := params{}
	for k, v := range c.Request.URL.Query() {
		if len(v) > 0 {
			p[k] = v[0]
		}
	}
	if c.Request.Method != http.MethodPost {
		return p, nil
	}
	if ct := c.GetHeader("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return nil, &apiError{Status: http.StatusUnsupportedMediaType, Code: codeMediaType, Message: "the request body must be JSON (Content-Type: application/json)"}
		}
	}
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, maxJSONBody+1))
	if err != nil {
		return nil, invalid("could not read the request body")
	}
	if len(body) > maxJSONBody {
		return nil, tooLarge("the request body is larger than %d bytes", maxJSONBody)
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return p, nil
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, invalid("the request body must be a JSON object")
	}
	for k, v := range m {
		p[k] = v
	}
	return p, nil
}

// str reads a string parameter.
func (p params) str(name string) (string, *apiError) {
	switch v := p[name].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	}
	return "", invalid("%s must be a string", name)
}

// boolean reads a boolean parameter (query strings say "true"/"1").
func (p params) boolean(name string) (bool, *apiError) {
	switch v := p[name].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	case string:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, invalid("%s must be true or false", name)
		}
		return b, nil
	}
	return false, invalid("%s must be a boolean", name)
}

// multipartBody opens a multipart/form-data body for streaming.
func multipartBody(c *gin.Context) (*multipart.Reader, *apiError) {
	mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return nil, &apiError{Status: http.StatusUnsupportedMediaType, Code: codeMediaType, Message: "the request body must be multipart/form-data with a file field"}
	}
	mr, err := c.Request.MultipartReader()
	if err != nil {
		return nil, invalid("the multipart body is malformed")
	}
	return mr, nil
}

// formValue reads a small form field.
func formValue(part *multipart.Part) (string, *apiError) {
	b, err := io.ReadAll(io.LimitReader(part, maxFormField+1))
	if err != nil {
		return "", readErr(err)
	}
	if len(b) > maxFormField {
		return "", invalid("form field %s is too long", part.FormName())
	}
	return string(b), nil
}

// readErr maps an error reading the body: over the router's limit is 413.
func readErr(err error) *apiError {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge("%s", limit.TooLarge(mbe.Limit))
	}
	return invalid("the request body could not be read")
}
