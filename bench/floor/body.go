package floor

import (
	"strconv"
	"unicode/utf8"
)

// appendResponse appends a completed OpenAI Responses API object with a reasoning item
// and a message item carrying text. When size is larger than the natural length, the
// object is padded (metadata.pad) to exactly size bytes, so a floor answers with the same
// number of bytes as the server it is compared with.
func appendResponse(b []byte, id, reasoning, text string, created int64, size int) []byte {
	start := len(b)
	b = appendResponseWithPad(b, id, reasoning, text, created, 0)
	if pad := size - (len(b) - start); pad > 0 {
		b = appendResponseWithPad(b[:start], id, reasoning, text, created, pad)
	}
	return b
}

func appendResponseWithPad(b []byte, id, reasoning, text string, created int64, pad int) []byte {
	ts := strconv.AppendInt(nil, created, 10)
	b = append(b, `{"id":"resp_`...)
	b = append(b, id...)
	b = append(b, `","object":"response","created_at":`...)
	b = append(b, ts...)
	b = append(b, `,"status":"completed","background":false,"completed_at":`...)
	b = append(b, ts...)
	b = append(b, `,"conversation":null,"error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"max_tool_calls":null,"metadata":{`...)
	if pad > 0 {
		const empty = `"pad":""`
		b = append(b, `"pad":"`...)
		for range max(pad-len(empty), 0) {
			b = append(b, 'x')
		}
		b = append(b, '"')
	}
	b = append(b, `},"model":"echo-go","output":[{"id":"rs_`...)
	b = append(b, id...)
	b = append(b, `","type":"reasoning","status":"completed","summary":[{"type":"summary_text","text":`...)
	b = appendJSONString(b, reasoning)
	b = append(b, `}]},{"id":"msg_`...)
	b = append(b, id...)
	b = append(b, `","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":`...)
	b = appendJSONString(b, text)
	b = append(b, `,"annotations":[],"logprobs":[]}]}],"output_text":`...)
	b = appendJSONString(b, text)
	b = append(b, `,"parallel_tool_calls":true,"previous_response_id":null,"prompt_cache_key":null,"prompt_cache_retention":null,"reasoning":null,"safety_identifier":null,"service_tier":null,"store":true,"temperature":null,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_logprobs":null,"top_p":null,"truncation":"disabled","usage":{"input_tokens":2,"input_tokens_details":{"cached_tokens":0,"cache_write_tokens":0},"output_tokens":3,"output_tokens_details":{"reasoning_tokens":4},"total_tokens":5},"user":null}`...)
	return b
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
