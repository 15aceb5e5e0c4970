package api

import (
	"bufio"
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/host"
)

// Tokens maps API keys to the users they act as, read from a file: one "KEY USER" pair a
// line, blank lines and lines starting with # ignored. The file is read again when it
// changes, so keys are added, rotated and revoked without a restart. A file that lists
// no key (empty, or only comments) or no longer exists means no keys: every key is
// refused until keys are added. Only a file that does not parse (or cannot be read)
// keeps the keys read last (and is logged), so that a typo does not lock everyone out.
type Tokens struct {
	path string
	log  hclog.Logger

	mu   sync.Mutex
	mod  time.Time
	size int64
	keys []tokenKey
}

type tokenKey struct{ key, user string }

// minTokenLen keeps guessable keys out of a tokens file.
const minTokenLen = 16

// LoadTokens reads a tokens file; at startup it must hold at least one key (a server
// that starts refusing every key is a configuration mistake).
func LoadTokens(path string, log hclog.Logger) (*Tokens, error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	t := &Tokens{path: path, log: log}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("tokens file: %w", err)
	}
	keys, err := readTokens(path)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, errors.New("tokens file " + path + " lists no keys")
	}
	t.keys, t.mod, t.size = keys, fi.ModTime(), fi.Size()
	return t, nil
}

// User returns the user of key, if the file lists it. Every listed key is compared in
// constant time.
func (t *Tokens) User(key string) (string, bool) {
	keys := t.current()
	user, found := "", false
	for _, k := range keys {
		if subtle.ConstantTimeCompare([]byte(key), []byte(k.key)) == 1 {
			user, found = k.user, true
		}
	}
	return user, found
}

// current returns the keys, reading the file again when it changed.
func (t *Tokens) current() []tokenKey {
	t.mu.Lock()
	defer t.mu.Unlock()
	fi, err := os.Stat(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		// Removing the file revokes every key, as emptying it does.
		if t.keys != nil {
			t.log.Warn("tokens file removed; every key is refused until it lists keys again", "path", t.path)
		}
		t.keys, t.mod, t.size = nil, time.Time{}, -1
		return nil
	}
	if err != nil {
		t.log.Error("tokens file unreadable; keeping the keys read last", "path", t.path, "error", err)
		return t.keys
	}
	if fi.ModTime().Equal(t.mod) && fi.Size() == t.size {
		return t.keys
	}
	keys, err := readTokens(t.path)
	if err != nil {
		t.log.Error("tokens file invalid; keeping the keys read last", "path", t.path, "error", err)
		return t.keys
	}
	t.keys, t.mod, t.size = keys, fi.ModTime(), fi.Size()
	if len(keys) == 0 {
		t.log.Warn("tokens file lists no keys; every key is refused until keys are added", "path", t.path)
	} else {
		t.log.Info("tokens file reloaded", "path", t.path, "keys", len(keys))
	}
	return t.keys
}

// readTokens parses the file; one that lists no key (empty, only comments) is no keys,
// not an error.
func readTokens(path string) ([]tokenKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokens file: %w", err)
	}
	var keys []tokenKey
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("tokens file %s line %d: want \"KEY USER\"", path, n)
		}
		if len(f[0]) < minTokenLen {
			return nil, fmt.Errorf("tokens file %s line %d: keys must be at least %d characters", path, n, minTokenLen)
		}
		if err := host.ValidateID(f[1]); err != nil {
			return nil, fmt.Errorf("tokens file %s line %d: user: %w", path, n, err)
		}
		if seen[f[0]] {
			return nil, fmt.Errorf("tokens file %s line %d: the key is listed twice", path, n)
		}
		seen[f[0]] = true
		keys = append(keys, tokenKey{key: f[0], user: f[1]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tokens file %s: %w", path, err)
	}
	return keys, nil
}
