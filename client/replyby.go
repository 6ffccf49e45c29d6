package client

import (
	"context"
	"io"
	"net/http"
	"time"
)

// ReplyBy returns ctx with a reply deadline: a request sent under it must have its whole
// reply, body and all, by at, or fail with context.DeadlineExceeded, as under
// context.WithDeadline(ctx, at). Unlike WithDeadline it arms no timer and adds no context
// to watch: the lean HTTP/1.1 transport (h1.go) holds the request to at with its
// connection's I/O deadline, and any other transport is given a context deadline for the
// request (Target.send). A virtual client bounds every request this way: WithTimeout and its
// cancel were about 3,300 instructions of each round trip.
//
// Only the requests are bounded: the returned context's Done and Err are ctx's, so work
// under it that is not a request (a sleep, a select on Done) is not cut at at.
func ReplyBy(ctx context.Context, at time.Time) context.Context {
	return &replyByCtx{Context: ctx, at: at}
}

// replyByCtx is the context of ReplyBy: ctx's own, with the deadline as a value.
type replyByCtx struct {
	context.Context
	at time.Time
}

// replyByKey is the Value key under which a replyByCtx finds itself in a derived context.
type replyByKey struct{}

// Value implements context.Context: the replyByCtx for replyByKey, else ctx's values.
func (c *replyByCtx) Value(key any) any {
	if key == (replyByKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// replyDeadline returns the reply deadline of ctx (ReplyBy), and false when it has none.
func replyDeadline(ctx context.Context) (time.Time, bool) {
	c, ok := ctx.(*replyByCtx) // the usual case, without a walk of the context chain
	if !ok {
		c, ok = ctx.Value(replyByKey{}).(*replyByCtx)
	}
	if !ok {
		return time.Time{}, false
	}
	return c.at, true
}

// requestErr is what a request under ctx fails with when it is cut short: ctx.Err(), or
// context.DeadlineExceeded once ctx's reply deadline has passed; nil while neither holds.
func requestErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if at, ok := replyDeadline(ctx); ok && !time.Now().Before(at) {
		return context.DeadlineExceeded
	}
	return nil
}

// enforcesReplyBy reports whether rt holds req to its reply deadline itself: the lean
// transport, for http:// (schemeTransport sends https:// through net/http's).
func enforcesReplyBy(rt http.RoundTripper, req *http.Request) bool {
	switch rt.(type) {
	case *h1Transport:
		return true
	case *schemeTransport:
		return req.URL != nil && req.URL.Scheme == "http"
	}
	return false
}

// withReplyDeadline gives req, whose context has a reply deadline at, a context deadline at
// at for a transport that does not enforce one itself; cancel releases it once the reply
// is read (cancelBody).
func withReplyDeadline(req *http.Request, at time.Time) (*http.Request, context.CancelFunc) {
	ctx, cancel := context.WithDeadline(req.Context(), at)
	return req.WithContext(ctx), cancel
}

// cancelBody is a reply body whose Close also releases the context deadline of its request
// (withReplyDeadline).
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

// Close implements io.Closer.
func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
