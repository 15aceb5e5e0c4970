package actions

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzDecodeRequest feeds arbitrary bodies to the decoding of every action's request
// and to the pure validation that follows it: nothing may panic, and every rejection
// is a 400 with a message.
func FuzzDecodeRequest(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `[]`, `null`, `"x"`, `{"AgentId":"echo"}`, `{"Page":1.5}`, `{"Page":"1"}`,
		`{"SessionId":42}`, `{"Messages":[{"role":"user","content":"hi"}]}`, `{"Messages":{}}`,
		`{"ResponsesInput":"hello","ApiFormat":"responses","Stream":true}`,
		`{"Metadata":{"agentengine":{"tool_approval_mode":"ask"},"k":"v"},"ModelOptions":{"deltas":3}}`,
		`{"Metadata":[1]}`, `{"ModelMetadata":"x","Model":"m"}`, `{"AfterSeqId":-1,"Limit":99999999999999999999}`,
		`{"Title":null}`, `{"Rating":"UP","Comment":"\u0000"}`, `{"a":` + strings.Repeat("[", 200),
		`{"IncludeReasoning":1}`, "{\"SessionId\":\"\xff\"}", `{"AgentId":"echo"} trailing`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		check := func(e *actionError) {
			if e != nil && (e.Status != http.StatusBadRequest || e.Message == "" || e.Code == "") {
				t.Fatalf("rejection %+v for %q", e, body)
			}
		}
		check(decodeJSON(body, new(bootstrapRequest)))
		check(decodeJSON(body, new(listModelsRequest)))
		check(decodeJSON(body, new(sessionRequest)))
		check(decodeJSON(body, new(listSessionsRequest)))
		check(decodeJSON(body, new(renameRequest)))
		check(decodeJSON(body, new(listEventsRequest)))
		check(decodeJSON(body, new(listMessagesRequest)))
		check(decodeJSON(body, new(cancelRequest)))
		check(decodeJSON(body, new(feedbackRef)))
		check(decodeJSON(body, new(upsertFeedbackRequest)))
		var run runAgentRequest
		if e := decodeJSON(body, &run); e != nil {
			check(e)
			return
		}
		_, e := metadataOf(run.Metadata)
		check(e)
		_, e = modelMetadata(run.ModelMetadata, run.Model)
		check(e)
		_, e = jsonObject("ModelOptions", run.ModelOptions)
		check(e)
		for _, format := range []string{formatResponses, formatChat} {
			_, _, e = inputOf(&run, format)
			if e != nil && e.Code != CodeMissingParameter {
				check(e)
			}
		}
	})
}
