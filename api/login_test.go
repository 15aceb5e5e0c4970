package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The one-time login URL sets an HttpOnly, SameSite=Strict cookie that authorises the
// browser like the token; the code works once; other sites cannot use the cookie.
func TestLoginURLSetsASessionCookie(t *testing.T) {
	logins := NewLogins(time.Minute)
	r := newRouter(Config{Runtime: newRuntime(t), AuthToken: "s3cret", Logins: logins})
	get := func(path string, headers ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil)
		req.Host = "127.0.0.1:8080"
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		return w
	}
	if w := get("/v1/models"); w.Code != http.StatusUnauthorized {
		t.Fatalf("no cookie: %d", w.Code)
	}
	if w := get("/login?code=wrong"); w.Code != http.StatusUnauthorized {
		t.Errorf("wrong code: %d", w.Code)
	}
	code := logins.Code()
	w := get("/login?code=" + code)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/" {
		t.Fatalf("login: %d %v", w.Code, w.Header())
	}
	set := w.Header().Get("Set-Cookie")
	if !strings.Contains(set, LoginCookie+"=") || !strings.Contains(set, "HttpOnly") || !strings.Contains(set, "SameSite=Strict") {
		t.Fatalf("cookie %q", set)
	}
	cookie := strings.SplitN(set, ";", 2)[0]
	if w := get("/v1/models", "Cookie", cookie); w.Code != http.StatusOK {
		t.Errorf("with the cookie: %d %s", w.Code, w.Body)
	}
	if w := get("/v1/models", "Cookie", LoginCookie+"=forged"); w.Code != http.StatusUnauthorized {
		t.Errorf("forged cookie: %d", w.Code)
	}
	if w := get("/v1/models", "Cookie", cookie, "Origin", "https://evil.example"); w.Code != http.StatusForbidden {
		t.Errorf("cross-origin with the cookie: %d", w.Code)
	}
	if w := get("/login?code=" + code); w.Code != http.StatusUnauthorized {
		t.Errorf("code used twice: %d", w.Code)
	}
}

func TestLoginCodeExpires(t *testing.T) {
	logins := NewLogins(-time.Second)
	r := newRouter(Config{Runtime: newRuntime(t), AuthToken: "s3cret", Logins: logins})
	if res := serve(t, r, "GET", "/login?code="+logins.Code(), ""); res.status != http.StatusUnauthorized {
		t.Errorf("expired code: %d", res.status)
	}
}
