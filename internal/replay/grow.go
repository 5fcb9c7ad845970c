package replay

// grow is s with room for more: when the log is read while it is
// parsed, as many again as its share of the log read so far projects for
// the rest (an eighth more, so that it is seldom copied twice), the
// memory past them untouched until used; at most sixteen times its length
// more, so that what a log does only at its start (a first listing of a
// tree) is not projected over the whole log. It serves a stream's
// operations and the builder's other long slices: append's own growth, a
// quarter at a time past 256, would copy them many times over, each copy
// in memory touched for the first time.
func grow[T any](b *builder, s []T) []T {
	c := len(s)
	more := c/4 + 256
	if b.read > 0 && b.size > b.read {
		est := int(int64(c) * (b.size - b.read) / b.read)
		more = max(more, min(est+est/8, 16*c))
	}
	grown := make([]T, c, c+more)
	copy(grown, s)
	return grown
}

// push appends v to s, grown by grow when full.
func push[T any](b *builder, s []T, v T) []T {
	if len(s) == cap(s) {
		s = grow(b, s)
	}
	return append(s, v)
}
