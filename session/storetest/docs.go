package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/agentengine/agentengine/session"
)

func testDocs(t *testing.T, st session.Store) {
	ctx := context.Background()
	k := session.DocKey{App: "app", User: "u1", Session: "s1", Kind: session.DocADKArtifact, Name: "report.txt"}
	for i, body := range []string{"v0", "v1 \x00 binary", ""} {
		meta := json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))
		v, err := st.PutDoc(ctx, session.Doc{Key: k, MimeType: "text/plain", Data: []byte(body), Meta: meta})
		if err != nil || v != int64(i) {
			t.Fatalf("PutDoc #%d = %d, %v; want version %d", i, v, err, i)
		}
	}
	latest, err := st.GetDoc(ctx, k, -1)
	if err != nil || latest.Version != 2 || len(latest.Data) != 0 || latest.MimeType != "text/plain" ||
		string(latest.Meta) != `{"n":2}` || latest.CreatedAt.IsZero() || latest.Key != k {
		t.Fatalf("GetDoc latest = %+v, %v", latest, err)
	}
	v1, err := st.GetDoc(ctx, k, 1)
	if err != nil || string(v1.Data) != "v1 \x00 binary" || v1.Version != 1 {
		t.Fatalf("GetDoc v1 = %+v, %v", v1, err)
	}
	if _, err := st.GetDoc(ctx, k, 7); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("GetDoc of a missing version: %v, want ErrNotFound", err)
	}
	versions, err := st.DocVersions(ctx, k)
	if err != nil || len(versions) != 3 {
		t.Fatalf("DocVersions = %+v, %v", versions, err)
	}
	for i, d := range versions {
		if d.Version != int64(i) || d.Data != nil || string(d.Meta) != fmt.Sprintf(`{"n":%d}`, i) {
			t.Errorf("DocVersions[%d] = %+v", i, d)
		}
	}

	// Scopes are exact: the user's, the app's and another kind's documents are apart.
	userDoc := session.DocKey{App: "app", User: "u1", Kind: session.DocADKArtifact, Name: "user:prefs"}
	appDoc := session.DocKey{App: "app", Kind: session.DocADKEvalSet, Name: "smoke"}
	other := session.DocKey{App: "app", User: "u1", Session: "s1", Kind: session.DocADKEvalResult, Name: "r"}
	for _, dk := range []session.DocKey{userDoc, appDoc, other, {App: "app", User: "u2", Session: "s1", Kind: k.Kind, Name: "x"}} {
		if v, err := st.PutDoc(ctx, session.Doc{Key: dk, Data: []byte("d")}); err != nil || v != 0 {
			t.Fatalf("PutDoc %+v = %d, %v", dk, v, err)
		}
	}
	for _, c := range []struct {
		app, user, sess, kind string
		want                  []string
	}{
		{"app", "u1", "s1", session.DocADKArtifact, []string{"report.txt"}},
		{"app", "u1", "", session.DocADKArtifact, []string{"user:prefs"}},
		{"app", "", "", session.DocADKEvalSet, []string{"smoke"}},
		{"app", "u1", "s1", session.DocADKEvalResult, []string{"r"}},
		{"app", "u2", "s1", session.DocADKArtifact, []string{"x"}},
		{"other", "u1", "s1", session.DocADKArtifact, []string{}},
	} {
		got, err := st.DocNames(ctx, c.app, c.user, c.sess, c.kind)
		if err != nil || !slices.Equal(got, c.want) || got == nil {
			t.Errorf("DocNames(%q, %q, %q, %q) = %#v, %v; want %#v", c.app, c.user, c.sess, c.kind, got, err, c.want)
		}
	}

	if err := st.DeleteDoc(ctx, k); err != nil {
		t.Fatalf("DeleteDoc: %v", err)
	}
	if _, err := st.GetDoc(ctx, k, -1); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("GetDoc after delete: %v, want ErrNotFound", err)
	}
	if _, err := st.DocVersions(ctx, k); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("DocVersions after delete: %v, want ErrNotFound", err)
	}
	if err := st.DeleteDoc(ctx, k); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("DeleteDoc twice: %v, want ErrNotFound", err)
	}
	if v, err := st.PutDoc(ctx, session.Doc{Key: k, Data: []byte("again")}); err != nil || v != 0 {
		t.Errorf("PutDoc after delete = %d, %v; want version 0", v, err)
	}

	for _, bad := range []session.Doc{
		{Key: session.DocKey{User: "u", Kind: "k", Name: "n"}},
		{Key: session.DocKey{App: "a", Kind: "k"}},
		{Key: session.DocKey{App: "a", Name: "n"}},
		{Key: session.DocKey{App: "a", Session: "s", Kind: "k", Name: "n"}},
		{Key: session.DocKey{App: "a", Kind: "k", Name: "n"}, Meta: json.RawMessage(`[1]`)},
		{Key: session.DocKey{App: "a", Kind: "k", Name: "n"}, Meta: json.RawMessage(`{`)},
	} {
		if _, err := st.PutDoc(ctx, bad); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("PutDoc %+v: %v, want ErrInvalid", bad.Key, err)
		}
	}
}

func testDocsOfDeletedSession(t *testing.T, st session.Store) {
	ctx := context.Background()
	key := session.Key{App: "app", User: "u1", ID: "s1"}
	if _, err := st.CreateSession(ctx, key); err != nil {
		t.Fatal(err)
	}
	inSession := session.DocKey{App: "app", User: "u1", Session: "s1", Kind: session.DocADKArtifact, Name: "a"}
	ofUser := session.DocKey{App: "app", User: "u1", Kind: session.DocADKArtifact, Name: "user:b"}
	for _, k := range []session.DocKey{inSession, ofUser} {
		if _, err := st.PutDoc(ctx, session.Doc{Key: k, Data: []byte("d")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.DeleteSession(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetDoc(ctx, inSession, -1); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the deleted session's document: %v, want ErrNotFound", err)
	}
	if _, err := st.GetDoc(ctx, ofUser, -1); err != nil {
		t.Errorf("the user's document went with a session: %v", err)
	}
}

func testConcurrentPutDoc(t *testing.T, st session.Store) {
	ctx := context.Background()
	k := session.DocKey{App: "app", User: "u", Kind: session.DocADKArtifact, Name: "n"}
	const n = 8
	got := make([]int64, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = st.PutDoc(ctx, session.Doc{Key: k, Data: []byte{byte(i)}})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	for i, v := range got {
		if v != int64(i) {
			t.Fatalf("concurrent PutDoc versions = %v; want 0..%d each once", got, n-1)
		}
	}
}
