package testutil

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestWait(t *testing.T) {
	tests := []struct {
		name    string
		passAt  int // the call that first returns nil; 0: never
		wantErr string
	}{
		{name: "at once", passAt: 1},
		{name: "after some calls", passAt: 5},
		{name: "never", passAt: 0, wantErr: "not within 20ms: call 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := Wait(20*time.Millisecond, func() error {
				calls++
				if tt.passAt != 0 && calls >= tt.passAt {
					return nil
				}
				if calls >= 3 && tt.passAt == 0 {
					return errors.New("call 3") // the last state is what the error reports
				}
				return errors.New("still waiting")
			})
			if tt.wantErr == "" {
				if err != nil || calls != tt.passAt {
					t.Fatalf("err %v after %d calls, want nil after %d", err, calls, tt.passAt)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
