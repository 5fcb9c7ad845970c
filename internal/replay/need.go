package replay

import "fmt"

// need says that the operation in progress found node n existing (it
// succeeded on it): the first time the log says so of a node it did not
// create, the node existed before, and the replay makes it, with its
// parents, before the replay starts, or, inside a directory the log
// created, just before op, untimed.
func (b *builder) need(n int32, dir bool, op *Op) {
	if n < 0 {
		return // the root's parent: outside the replay, there
	}
	b.markDir(b.nodes[n].parent)
	nd := &b.nodes[n]
	if nd.seen || n == root {
		if dir {
			b.markDir(n) // seen before as what could be a file (a stat)
			nd = &b.nodes[n]
		}
		if !nd.exists {
			// Gone in the log's view and still used: the log lost a
			// line. The replay makes it again where the log needs it.
			b.setExists(n, true)
			b.implied(n, op)
		}
		return
	}
	nd.seen, nd.dir = true, dir
	b.setExists(n, true)
	if b.insideCreated(n) {
		b.implied(n, op)
		return
	}
	b.initial(n)
}

// markDir records that n, which holds entries, is a directory, also
// when the log first used it in a way that did not say so (a stat).
func (b *builder) markDir(n int32) {
	if n <= root || b.nodes[n].dir {
		return
	}
	nd := &b.nodes[n]
	nd.dir = true
	if nd.entry >= 0 {
		e := &b.t.Initial
		if nd.implied {
			e = &b.t.Implied
		}
		(*e)[nd.entry].Dir, (*e)[nd.entry].Size = true, 0
	}
}

// insideCreated reports whether an ancestor of n was created by the log.
func (b *builder) insideCreated(n int32) bool {
	for p := b.nodes[n].parent; p > root; p = b.nodes[p].parent {
		if b.nodes[p].created {
			return true
		}
	}
	return false
}

// initial adds n, after its ancestors, to the entries made first. A
// parent the log has seen already holds n, so it is a directory, also when
// the log first used it in a way that did not say so (a stat).
func (b *builder) initial(n int32) {
	nd := &b.nodes[n]
	if p := nd.parent; p > root && !b.nodes[p].seen {
		b.nodes[p].seen, b.nodes[p].dir = true, true
		b.setExists(p, true)
		b.initial(p)
		nd = &b.nodes[n]
	} else if p > root {
		b.markDir(p)
	}
	nd.entry, nd.implied = int32(len(b.t.Initial)), false
	b.t.Initial = append(b.t.Initial, Entry{Path: b.pathOf(n), Dir: nd.dir})
	if b.vacated[dentry{nd.parent, nd.name}] && b.t.contradiction == "" {
		b.t.contradiction = fmt.Sprintf("%s is used after the log renamed it away, and no line makes it again: the log contradicts itself", b.pathOf(n))
	}
}

// implied adds n to the entries made just before op.
func (b *builder) implied(n int32, op *Op) {
	nd := &b.nodes[n]
	nd.entry, nd.implied = int32(len(b.t.Implied)), true
	b.t.Implied = append(b.t.Implied, Entry{Path: b.pathOf(n), Dir: nd.dir})
	m := b.more(op)
	if m.prepN == 0 {
		m.prep = int32(len(b.t.Implied) - 1)
	}
	m.prepN++
}
