// This file holds the per-session cache of fetched pages: 15 minutes, at most 64 pages and
// 32 MiB of text, the least recently used page dropped first.

package webfetch

import (
	"container/list"
	"sync"
	"time"
)

const (
	cacheEntries = 64
	cacheBytes   = 32 << 20
)

// cache maps "FORMAT URL" to a converted page.
type cache struct {
	// mu guards the fields below.
	mu    sync.Mutex
	pages map[string]*list.Element // of *cacheEntry
	order *list.List               // most recently used first
	bytes int
}

type cacheEntry struct {
	key string
	pg  *page
}

func newCache() *cache { return &cache{pages: map[string]*list.Element{}, order: list.New()} }

// get returns the page under key when it was fetched less than CacheTTL before now.
func (c *cache) get(key string, now time.Time) (*page, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.pages[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if now.Sub(e.pg.fetched) >= CacheTTL {
		c.remove(el)
		return nil, false
	}
	c.order.MoveToFront(el)
	return e.pg, true
}

// put keeps pg under key, dropping the least recently used pages beyond the bounds; a page
// larger than the whole cache is not kept.
func (c *cache) put(key string, pg *page) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.pages[key]; ok {
		c.remove(el)
	}
	if len(pg.text) > cacheBytes {
		return
	}
	c.pages[key] = c.order.PushFront(&cacheEntry{key: key, pg: pg})
	c.bytes += len(pg.text)
	for c.order.Len() > cacheEntries || c.bytes > cacheBytes {
		c.remove(c.order.Back())
	}
}

// remove drops one page. Caller holds c.mu.
func (c *cache) remove(el *list.Element) {
	e := el.Value.(*cacheEntry)
	c.order.Remove(el)
	delete(c.pages, e.key)
	c.bytes -= len(e.pg.text)
}
