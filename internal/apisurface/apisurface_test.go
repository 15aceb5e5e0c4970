package apisurface

import (
	"reflect"
	"testing"
)

func TestRead(t *testing.T) {
	ids, err := Read("testdata/plumbing")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, id := range ids {
		got[id.Name] = id.Refs
	}
	want := map[string][]string{
		"Author":       nil,
		"Author.Hello": nil,
		"GRPCPlugin":   {"github.com/hashicorp/go-plugin"},
		"Options":      {"google.golang.org/grpc"},
		"Handshake":    {"github.com/hashicorp/go-plugin"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Read = %v, want %v", got, want)
	}
	if _, err := Read("testdata/none"); err == nil {
		t.Error("Read of a directory that does not exist: no error")
	}
}
