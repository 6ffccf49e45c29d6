package sim

// queue is the loop's event queue: a calendar queue (a timer wheel) in front of two
// heaps, so that a fleet's million pending polls cost O(1) to schedule and a small, hot
// heap to order.
//
//   - The wheel has wheelSize buckets of 2^bucketShift ns (about 1 ms) each, covering
//     about 69 s ahead of the current bucket; an entry due in it is appended to its bucket,
//     unordered.
//   - soon is a 4-ary min-heap of the entries of the current bucket and of any before it
//     (an event scheduled for now, or for the instant already reached). When it runs dry,
//     the next non-empty bucket becomes current and its entries move into it.
//   - far is a 4-ary min-heap of the entries beyond the wheel; they move into the wheel as
//     the current bucket comes within reach of them.
//
// Every entry goes through soon before it runs, so the order is exactly (instant, seq),
// whatever path it took.
type queue struct {
	soon, far heap
	wheel     [wheelSize][]entry
	inWheel   int   // entries in the wheel's buckets
	cur       int64 // the current bucket's number: instant >> bucketShift
}

const (
	bucketShift = 20 // 1.05 ms
	wheelBits   = 16
	wheelSize   = 1 << wheelBits // 65,536 buckets: 68.7 s
	wheelMask   = wheelSize - 1
)

func (q *queue) len() int { return len(q.soon) + q.inWheel + len(q.far) }

func (q *queue) push(x entry) {
	switch b := x.at >> bucketShift; {
	case b <= q.cur:
		q.soon.push(x)
	case b < q.cur+wheelSize:
		q.wheel[b&wheelMask] = append(q.wheel[b&wheelMask], x)
		q.inWheel++
	default:
		q.far.push(x)
	}
}

// peek returns the earliest entry, filling soon from the wheel as needed; false when the
// queue is empty.
func (q *queue) peek() (*entry, bool) {
	for len(q.soon) == 0 {
		if q.inWheel == 0 {
			if len(q.far) == 0 {
				return nil, false
			}
			q.cur = q.far[0].at>>bucketShift - 1 // jump the empty stretch
		}
		q.cur++
		for len(q.far) > 0 && q.far[0].at>>bucketShift < q.cur+wheelSize {
			x := q.far[0]
			q.far.pop()
			q.push(x)
		}
		bucket := &q.wheel[q.cur&wheelMask]
		for _, x := range *bucket {
			q.soon.push(x)
		}
		q.inWheel -= len(*bucket)
		clear(*bucket)
		*bucket = (*bucket)[:0]
	}
	return &q.soon[0], true
}

// pop removes the entry peek returned.
func (q *queue) pop() { q.soon.pop() }

// heap is a 4-ary min-heap of entries by (instant, seq).
type heap []entry

// before orders the entries: by instant, then by the order of scheduling.
func before(a, b *entry) bool { return a.at < b.at || a.at == b.at && a.seq < b.seq }

func (hp *heap) push(x entry) {
	h := append(*hp, x)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !before(&x, &h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
	*hp = h
}

func (hp *heap) pop() {
	h := *hp
	n := len(h) - 1
	x := h[n]
	h[n] = entry{} // let the event go
	h = h[:n]
	*hp = h
	if n == 0 {
		return
	}
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for k := c + 1; k < min(c+4, n); k++ {
			if before(&h[k], &h[m]) {
				m = k
			}
		}
		if !before(&h[m], &x) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = x
}
