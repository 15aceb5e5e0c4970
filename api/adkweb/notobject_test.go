package adkweb

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
)

// A request model that is not a JSON object is answered as ADK's server answers it:
// 422 with pydantic's model_attributes_type at the model's location.
func TestRequestModelsThatAreNotObjects(t *testing.T) {
	e := newEnv(t)
	sess := "/apps/echo/users/u/sessions/s1"
	e.obj("POST", sess, `{}`, http.StatusOK)
	e.obj("POST", "/apps/echo/eval-sets", `{"eval_set":{"eval_set_id":"set1"}}`, http.StatusOK)
	for _, tc := range []struct {
		name, method, path, body string
		loc                      []any
	}{
		{"create eval set", "POST", "/apps/echo/eval-sets", `[]`, []any{"body"}},
		{"update eval case", "PUT", "/apps/echo/eval-sets/set1/eval-cases/c1", `[1]`, []any{"body"}},
		{"add session", "POST", "/apps/echo/eval-sets/set1/add-session", `"s1"`, []any{"body"}},
		{"run eval", "POST", "/apps/echo/eval-sets/set1/run", `[]`, []any{"body"}},
		{"save artifact", "POST", sess + "/artifacts", `[]`, []any{"body"}},
		{"artifact", "POST", sess + "/artifacts", `{"filename":"a.txt","artifact":[]}`, []any{"body", "artifact"}},
		{"inline data", "POST", sess + "/artifacts", `{"filename":"a.txt","artifact":{"inlineData":[]}}`, []any{"body", "artifact", "inlineData"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, b := e.do(tc.method, tc.path, tc.body)
			var got struct {
				Detail []fieldError `json:"detail"`
			}
			if status != http.StatusUnprocessableEntity || json.Unmarshal(b, &got) != nil || len(got.Detail) != 1 {
				t.Fatalf("status %d: %s", status, b)
			}
			want := fieldError{Type: "model_attributes_type", Loc: tc.loc, Msg: "Input should be a valid dictionary or object to extract fields from"}
			if !reflect.DeepEqual(got.Detail[0], want) {
				t.Errorf("detail %+v, want %+v", got.Detail[0], want)
			}
		})
	}
}
