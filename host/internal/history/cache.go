package history

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/agentengine/agentengine/session"
)

// Bounds of the history cache: a session's entry is bounded by compaction (a summary
// plus up to a few hundred messages), and the cache as a whole by these.
const (
	histCacheEntries = 4096
	histCacheBytes   = 64 << 20
	// maxEntryBytes bounds one session's entry by default: a bigger one is not kept.
	maxEntryBytes = histCacheBytes / 4
)

// Cache keeps the projected history of recently active sessions, encoded one
// message at a time, so that a turn reads and projects only the events stored since
// the session's previous turn instead of everything since its latest checkpoint. The
// store stays the truth: an entry is used only while the session row still matches
// (same creation time, same latest checkpoint), and only events the turn reads from
// the store are added to it.
type Cache struct {
	store      session.Store // the truth the cache is checked against and filled from
	entryBytes int           // bound of one entry; 0 is maxEntryBytes
	mu         sync.Mutex
	entries    map[session.Key]*entry
	bytes      int
}

type entry struct {
	used    time.Time // when it was last put back (after a turn)
	created time.Time
	cpSeq   int64
	// through is the last seq the entry has seen: its messages are those of every
	// event up to it.
	through int64
	msgs    []session.Message
	// joined is msgs encoded, comma-separated: the history's JSON array without its
	// brackets, sent whole with each turn. Only ever appended to: sessionHistory hands
	// out views of it that a later turn's add must not change.
	joined  []byte
	size    int // bytes held (for the cache's bound)
	content int // messageBytes of msgs (for the history budget)
	tokens  int // EstimateTokens of msgs' contents (for compaction)
	// names of tool calls by call id, to name the tool results of later turns.
	names session.ToolNames
	// refs are the newest attachment_ref events (at most MaxRefs).
	refs []session.Event
}

// New returns an empty cache of st's sessions.
func New(st session.Store) *Cache { return &Cache{store: st} }

// MaxRefs bounds the attachment references a history carries to a follow-up turn.
const MaxRefs = 32

// Len is the length of the array AppendTo writes.
func (h *Encoded) Len() int { return h.size }

// take removes and returns key's entry (nil if none): a session has one turn at a time.
func (c *Cache) take(key session.Key) *entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	if e != nil {
		delete(c.entries, key)
		c.bytes -= e.size
	}
	return e
}

func (c *Cache) maxEntry() int {
	if c.entryBytes > 0 {
		return c.entryBytes
	}
	return maxEntryBytes
}

// put stores key's entry, evicting others while the cache is over its bounds.
func (c *Cache) put(key session.Key, e *entry) {
	if e.size > c.maxEntry() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[session.Key]*entry{}
	}
	for k, old := range c.entries { // map order: an arbitrary victim is good enough
		if len(c.entries) < histCacheEntries && c.bytes+e.size <= histCacheBytes {
			break
		}
		delete(c.entries, k)
		c.bytes -= old.size
	}
	e.used = time.Now()
	c.entries[key] = e
	c.bytes += e.size
}

// EvictIdle drops the entries last used before cutoff; what is left moves to a map of
// its size (a Go map keeps the buckets of its largest size for good). It reports
// whether any entry is left.
func (c *Cache) EvictIdle(cutoff time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := make(map[session.Key]*entry)
	for k, e := range c.entries {
		if e.used.Before(cutoff) {
			c.bytes -= e.size
			continue
		}
		kept[k] = e
	}
	c.entries = kept
	return len(kept) > 0
}

// add appends projected messages (encoding each) and remembers the tool call names.
func (e *entry) add(msgs []session.Message) error {
	e.names.Name(msgs)
	for i := range msgs {
		m := &msgs[i]
		b, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("encode history: %w", err)
		}
		n := messageBytes(*m)
		e.msgs = append(e.msgs, *m)
		if len(e.joined) > 0 {
			e.joined = append(e.joined, ',')
		}
		e.joined = append(e.joined, b...)
		e.size += len(b) + 1 + n
		e.content += n
		e.tokens += EstimateTokens(m.Content)
	}
	return nil
}

func (e *entry) addRefs(evs []session.Event) {
	for _, ev := range evs {
		if ev.Type == session.TypeAttachmentRef {
			e.refs = append(e.refs, ev)
		}
	}
	if n := len(e.refs) - MaxRefs; n > 0 {
		e.refs = append(e.refs[:0:0], e.refs[n:]...)
	}
}

// Encoded is a turn's history as a JSON array, in pieces: the run request's encoder copies
// them into the run request as they are, where joining them first would copy a long
// history (hundreds of kilobytes at ten thousand events) once more.
type Encoded struct {
	joined []byte            // elements, comma-separated
	elems  []json.RawMessage // more elements, after those
	size   int               // of the whole array: brackets, commas and elements
}

// NewEncoded is the array of the elements in joined (comma-separated) and then elems.
func NewEncoded(joined []byte, elems []json.RawMessage) *Encoded {
	h := &Encoded{joined: joined, elems: elems, size: 2 + len(joined)}
	for i, b := range elems {
		h.size += len(b)
		if i > 0 || len(joined) > 0 { // a comma before it, as AppendTo writes
			h.size++
		}
	}
	return h
}

// AppendTo appends the array to b.
func (h *Encoded) AppendTo(b []byte) []byte {
	b = append(append(b, '['), h.joined...)
	for i, e := range h.elems {
		if i > 0 || len(h.joined) > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, ']')
}

// ForTurn returns the history sent with a turn: the session's messages before
// turnSeq (as session.Project gives them), then items (what a stateless client sent
// along), within the byte budget. It also returns the session's newest attachment
// references.
//
// keep says whether the session's entry stays in the cache for its next turn. A
// session's first turn that only its client can know of passes false: most such
// sessions are a stateless client's and never get a second turn, and projecting and
// encoding their history at each run's end cost a busy host a few percent of its CPU
// for nothing. Extend still sizes that history for compaction's check, and a second
// turn reads it from the store.
func (c *Cache) ForTurn(ctx context.Context, sess *session.Session, turnSeq int64, items []session.Message, budget int, keep bool) (*Encoded, []session.Event, error) {
	key := sess.Key
	e, err := c.load(ctx, key, turnSeq, sess)
	if err != nil {
		return nil, nil, err
	}
	if keep {
		defer c.put(key, e)
	}
	total := e.content
	for _, m := range items {
		total += messageBytes(m)
	}
	if budget > 0 && total > budget {
		// Rare (compaction keeps histories far smaller): cut, then encode it all.
		all := append(append(make([]session.Message, 0, len(e.msgs)+len(items)), e.msgs...), items...)
		cut := withinBudget(all, budget)
		elems := make([]json.RawMessage, len(cut))
		for i := range cut {
			if elems[i], err = json.Marshal(cut[i]); err != nil {
				return nil, nil, fmt.Errorf("encode history: %w", err)
			}
		}
		return NewEncoded(nil, elems), e.refs, nil
	}
	// A view of the entry's encoding, which later turns only append to.
	joined := e.joined[:len(e.joined):len(e.joined)]
	var elems []json.RawMessage
	for _, m := range items {
		b, err := json.Marshal(m)
		if err != nil {
			return nil, nil, fmt.Errorf("encode history: %w", err)
		}
		elems = append(elems, b)
	}
	return NewEncoded(joined, elems), e.refs, nil
}

// load brings key's entry up to turnSeq-1: as it is when it has seen every
// event before turnSeq, else incrementally from the events stored since it was last
// used, or from the store when there is no usable entry (none yet, the session was
// recreated, compacted, or a checkpoint arrived). sess is the session's row, read
// before the turn's events were stored.
func (c *Cache) load(ctx context.Context, key session.Key, turnSeq int64, sess *session.Session) (*entry, error) {
	if turnSeq <= 1 {
		// The session's first turn: nothing before it to read.
		return &entry{created: sess.CreatedAt, cpSeq: sess.CheckpointSeq, names: session.ToolNames{}}, nil
	}
	if e := c.take(key); e != nil && e.through < turnSeq {
		if sess.CreatedAt.Equal(e.created) && sess.CheckpointSeq == e.cpSeq {
			if e.through == turnSeq-1 {
				// It has seen every event before the turn's own (the previous run's, added
				// when that run ended): nothing to read.
				return e, nil
			}
			// Without an upper bound the stores serve this from a prepared statement; the
			// turn's own opening events (at turnSeq on) are few and dropped here.
			evs, err := c.store.Events(ctx, key, session.EventQuery{AfterSeq: e.through})
			if err != nil {
				return nil, fmt.Errorf("project history: read history: %w", err)
			}
			for len(evs) > 0 && evs[len(evs)-1].Seq >= turnSeq {
				evs = evs[:len(evs)-1]
			}
			// A deletion may remove messages the entry holds: read the whole history.
			if !hasCheckpoint(evs) && !session.HasDeletion(evs) {
				if err := e.add(session.Project(evs)); err != nil {
					return nil, err
				}
				e.addRefs(evs)
				e.through = turnSeq - 1
				return e, nil
			}
		}
	}
	hist, cur, err := session.LoadHistory(ctx, c.store, key)
	if err != nil {
		return nil, fmt.Errorf("project history: %w", err)
	}
	prior := hist[:0:0]
	for _, m := range hist {
		if m.Seq < turnSeq {
			prior = append(prior, m)
		}
	}
	e := &entry{created: cur.CreatedAt, cpSeq: cur.CheckpointSeq, through: turnSeq - 1, names: session.ToolNames{}}
	if err := e.add(prior); err != nil {
		return nil, err
	}
	refs, err := c.store.Events(ctx, key, session.EventQuery{BeforeSeq: turnSeq,
		Types: []string{session.TypeAttachmentRef}, Tail: true, Limit: MaxRefs})
	if err != nil {
		return nil, fmt.Errorf("load attachment context: %w", err)
	}
	e.refs = refs
	return e, nil
}

// Size is the size of a session's whole history through a seq: its messages and
// their estimated tokens, for compaction's check. After a first turn the cache did not
// keep (ForTurn), both are upper bounds: enough to conclude that a history is within
// limits, which is all a first turn's check needs; a check that finds them over reads
// the history itself.
type Size struct {
	through      int64 // 0: unknown
	msgs, tokens int
}

// SizeOf is the size of the session's whole history for compaction's check after
// a run: known when the run's end extended the cache, else from the cache, which it then
// brings up to date for the next turn from the store.
func (c *Cache) SizeOf(ctx context.Context, key session.Key, known Size) (msgs, tokens int, err error) {
	if known.through > 0 {
		return known.msgs, known.tokens, nil
	}
	sess, err := c.store.GetSession(ctx, key)
	if err != nil {
		return 0, 0, err
	}
	e, err := c.load(ctx, key, sess.LastSeq+1, &sess)
	if err != nil {
		return 0, 0, err
	}
	c.put(key, e)
	return len(e.msgs), e.tokens, nil
}

// Extend adds a run's stored events (ran) to key's entry when they follow on from what
// it has seen, and returns the history's size then (zero when there is no entry or they
// do not follow: the next use reads the store). An entry that would outgrow the cache
// is dropped without encoding what it would add; the size is still returned.
func (c *Cache) Extend(key session.Key, ran []session.Event) Size {
	e := c.take(key)
	if e == nil {
		if follows(0, ran) && !hasCheckpoint(ran) {
			return firstTurnBound(ran)
		}
		return Size{}
	}
	if !follows(e.through, ran) || hasCheckpoint(ran) {
		c.put(key, e)
		return Size{}
	}
	msgs := session.Project(ran)
	through := ran[len(ran)-1].Seq
	grown := e.size
	for _, m := range msgs {
		grown += 2 * messageBytes(m) // its encoding and its content, about
	}
	if grown > c.maxEntry() {
		size := Size{through: through, msgs: len(e.msgs) + len(msgs), tokens: e.tokens}
		for _, m := range msgs {
			size.tokens += EstimateTokens(m.Content)
		}
		return size
	}
	if err := e.add(msgs); err != nil {
		return Size{} // dropped: rebuilt from the store at the next turn
	}
	e.addRefs(ran)
	e.through = through
	c.put(key, e)
	return Size{through: through, msgs: len(e.msgs), tokens: e.tokens}
}

// firstTurnBound bounds the history of a session whose whole event log is ran, without
// projecting it. An event projects to at most one message, or one more for each item of
// a user message (a JSON object: each opens a brace). A message's estimated tokens are
// at most a third of the bytes of its text (three-byte CJK characters count one each),
// which its event's data holds too, but for the prefix and tool name a tool call's or
// result's text gets: the data's bytes plus a margin per message leave room to spare.
// Were a bound ever short, compaction would only wait for the session's next turn,
// whose check reads the history.
func firstTurnBound(ran []session.Event) Size {
	msgs, size := 0, 0
	for i := range ran {
		msgs++
		if ran[i].Type == session.TypeUserMessage {
			msgs += bytes.Count(ran[i].Data, []byte("{"))
		}
		size += len(ran[i].Data)
	}
	return Size{through: ran[len(ran)-1].Seq, msgs: msgs, tokens: size + 32*msgs}
}

// follows reports whether evs are the events right after seq through, without a gap.
func follows(through int64, evs []session.Event) bool {
	if len(evs) == 0 {
		return false
	}
	for i, ev := range evs {
		if ev.Seq != through+int64(i)+1 {
			return false
		}
	}
	return true
}

func hasCheckpoint(evs []session.Event) bool {
	for _, ev := range evs {
		if ev.Type == session.TypeContextCheckpoint {
			return true
		}
	}
	return false
}
