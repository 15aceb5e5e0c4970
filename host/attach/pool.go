package attach

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// extractorVersion is part of cache keys: bump it when extractors change output.
const extractorVersion = "v1"

// queueLen is how many extractions may wait for a worker. Put never blocks on a full
// queue: the file is then extracted when its result is first asked for.
const queueLen = 64

// job is one extraction; waiters block on done.
type job struct {
	key  string
	meta Meta
	done chan struct{}
	res  extracted
}

// pool runs extractions on a fixed number of workers, one per content hash at a time.
type pool struct {
	s      *Store
	jobs   chan *job
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	inflight map[string]*job
}

func newPool(s *Store, workers int) *pool {
	p := &pool{s: s, jobs: make(chan *job, queueLen), inflight: map[string]*job{}}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	for range workers {
		p.wg.Add(1)
		go p.work()
	}
	return p
}

func (p *pool) close() {
	p.cancel()
	p.wg.Wait()
}

func (p *pool) work() {
	defer p.wg.Done()
	for {
		select {
		case <-p.ctx.Done():
			return
		case j := <-p.jobs:
			j.res = p.run(j)
			if !j.res.Transient {
				if err := p.s.writeJSON(cachePath(j.key), j.res); err != nil {
					p.s.log.Warn("could not cache extraction result", "upload", j.meta.ID, "error", err)
				}
			}
			p.mu.Lock()
			delete(p.inflight, j.key)
			p.mu.Unlock()
			close(j.done)
		}
	}
}

func (p *pool) run(j *job) extracted {
	ctx, cancel := context.WithTimeout(p.ctx, p.s.cfg.ExtractTimeout)
	defer cancel()
	f, m, err := p.s.Open(j.meta.ID)
	if err != nil {
		p.s.log.Warn("could not open upload for extraction", "upload", j.meta.ID, "error", err)
		return failed("none", "the file could not be read")
	}
	defer f.Close()
	return p.s.extract(ctx, f, m)
}

// schedule returns the job extracting m, queueing one if none is running. With wait it
// blocks for room in the queue until ctx ends; without, a full queue drops the job.
// A nil job with a nil error means the result is already cached.
func (p *pool) schedule(ctx context.Context, m Meta, wait bool) (*job, error) {
	key, err := cacheKey(m)
	if err != nil {
		return nil, err
	}
	if _, ok := p.s.cached(key); ok {
		return nil, nil
	}
	p.mu.Lock()
	if j, ok := p.inflight[key]; ok {
		p.mu.Unlock()
		return j, nil
	}
	j := &job{key: key, meta: m, done: make(chan struct{})}
	p.inflight[key] = j
	p.mu.Unlock()
	drop := func(err error) (*job, error) {
		p.mu.Lock()
		delete(p.inflight, key)
		p.mu.Unlock()
		return nil, err
	}
	if !wait {
		select {
		case p.jobs <- j:
			return j, nil
		default:
			return drop(nil)
		}
	}
	select {
	case p.jobs <- j:
		return j, nil
	case <-p.ctx.Done():
		return drop(errors.New("attach: store is closed"))
	case <-ctx.Done():
		return drop(ctx.Err())
	}
}

// cacheKey names an extraction by content hash and kind; the hash is checked to be
// hex because it becomes a file name.
func cacheKey(m Meta) (string, error) {
	if len(m.SHA256) != 64 || !ValidID(m.SHA256[:32]) || !ValidID(m.SHA256[32:]) {
		return "", fmt.Errorf("upload %s has no valid content hash", m.ID)
	}
	switch m.Kind {
	case KindImage, KindText, KindDocument, KindArchive, KindBinary:
	default:
		return "", fmt.Errorf("upload %s has unknown kind %q", m.ID, m.Kind)
	}
	return m.SHA256 + "-" + m.Kind + "-" + extractorVersion, nil
}

func cachePath(key string) string { return cacheDir + "/" + key + ".json" }

func (s *Store) cached(key string) (extracted, bool) {
	b, err := s.root.ReadFile(cachePath(key))
	if err != nil {
		return extracted{}, false
	}
	var e extracted
	if json.Unmarshal(b, &e) != nil || e.Status == "" {
		return extracted{}, false
	}
	return e, true
}

// Result waits until the upload's extraction is done (or ctx ends) and returns it.
func (s *Store) Result(ctx context.Context, id string) (Result, error) {
	m, err := s.Stat(id)
	if err != nil {
		return Result{}, err
	}
	for {
		j, err := s.pool.schedule(ctx, m, true)
		if err != nil {
			return Result{}, err
		}
		if j == nil {
			key, _ := cacheKey(m)
			if e, ok := s.cached(key); ok {
				return result(m, e), nil
			}
			continue // evicted between the check and the read: extract again
		}
		select {
		case <-j.done:
			return result(m, j.res), nil
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
}

// ResultRef is Result for a ksadk-upload:// reference.
func (s *Store) ResultRef(ctx context.Context, ref string) (Result, error) {
	id, err := ParseRef(ref)
	if err != nil {
		return Result{}, err
	}
	return s.Result(ctx, id)
}
