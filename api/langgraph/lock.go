package langgraph

import "sync"

// keyedMutex is a lock per key (a thread), dropped when nobody holds or waits for it.
type keyedMutex struct {
	mu    *sync.Mutex
	locks map[string]*keyedLock
}

type keyedLock struct {
	sync.Mutex
	users int
}

func newKeyedMutex() keyedMutex {
	return keyedMutex{mu: &sync.Mutex{}, locks: map[string]*keyedLock{}}
}

func (k keyedMutex) lock(key string) (unlock func()) {
	k.mu.Lock()
	l, ok := k.locks[key]
	if !ok {
		l = &keyedLock{}
		k.locks[key] = l
	}
	l.users++
	k.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		k.mu.Lock()
		l.users--
		if l.users == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}
