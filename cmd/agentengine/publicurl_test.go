package main

import "testing"

func TestCheckPublicURL(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"", true},
		{"https://agents.example.com", true},
		{"http://127.0.0.1:8080/prefix", true},
		{"agents.example.com", false},
		{"ftp://agents.example.com", false},
		{"https://", false},
		{"https://agents.example.com/?a=1", false},
	} {
		if err := checkPublicURL(tc.url); (err == nil) != tc.ok {
			t.Errorf("checkPublicURL(%q) = %v, want ok %v", tc.url, err, tc.ok)
		}
	}
}
