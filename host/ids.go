package host

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"time"
)

// newID returns prefix and 24 hex digits: the time in milliseconds (48 bits), then 48
// random bits. Ids made later sort after earlier ones (to the millisecond), so the
// stores' indexes on them (sessions, runs, responses, items) grow at one end: a random
// key puts each insert on a different index page, and every page an insert touches is
// written again at commit (SQLite's WAL, Postgres's WAL and its full-page images).
func newID(prefix string) string {
	b := idAt(time.Now())
	var buf [64]byte // one allocation, the string's, for any prefix of ours
	out := append(buf[:0], prefix...)
	return string(hex.AppendEncode(out, b[:]))
}

func idAt(t time.Time) (b [12]byte) {
	binary.BigEndian.PutUint64(b[:], uint64(t.UnixMilli())<<16) //nolint:gosec // G115: a time after 1970
	if _, err := rand.Read(b[6:]); err != nil {
		panic("host: crypto/rand failed: " + err.Error())
	}
	return b
}

// NewID returns a new id with the given prefix (see newID), for surfaces that name
// things before starting a run (response ids).
func NewID(prefix string) string { return newID(prefix) }

// ValidateID checks a client-chosen id: printable, bounded, no control characters.
func ValidateID(id string) error {
	if id == "" || len(id) > 256 {
		return errors.New("ids are 1 to 256 characters")
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f {
			return errors.New("ids must not contain control characters")
		}
	}
	return nil
}
