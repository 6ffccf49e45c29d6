package client

import (
	"context"
	"io"
	"net/http"
	"sync"
)

// HandlerTransport is an http.RoundTripper that serves each request with h in-process, with
// no socket: replies stream through an io.Pipe, so SSE works and a cancelled request context
// ends the handler's request as a dropped connection would. It lets tests drive a client (and
// loadgen's engine over it) against a handler inside a testing/synctest bubble (virtual
// time). cmd/tasksim and tests hand the handler in; client never imports the mock server.
func HandlerTransport(h http.Handler) http.RoundTripper { return handlerTransport{h} }

type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	w := &pipeResponse{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	stop := context.AfterFunc(req.Context(), func() { pr.CloseWithError(req.Context().Err()) })
	go func() {
		defer func() {
			if r := recover(); r != nil {
				if r != http.ErrAbortHandler {
					panic(r)
				}
				// The handler dropped the connection (as net/http does for
				// ErrAbortHandler): before the headers, no response at all.
				w.once.Do(func() { w.aborted = true; close(w.ready) })
				pw.CloseWithError(io.ErrUnexpectedEOF)
				return
			}
			w.WriteHeader(http.StatusOK)
			pw.Close()
		}()
		t.h.ServeHTTP(w, req)
	}()
	<-w.ready
	if w.aborted {
		stop()
		pr.Close()
		return nil, io.ErrUnexpectedEOF
	}
	return &http.Response{
		Status:     http.StatusText(w.status),
		StatusCode: w.status,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        w.sent,
		Body:          &pipeBody{PipeReader: pr, stop: stop},
		ContentLength: -1,
		Request:       req,
	}, nil
}

// pipeResponse is the handler's side: headers are frozen at WriteHeader, the body goes
// into the pipe.
type pipeResponse struct {
	header http.Header
	sent   http.Header
	status int
	pw     *io.PipeWriter
	once   sync.Once
	ready  chan struct{}
	// aborted: the handler panicked with http.ErrAbortHandler before sending headers.
	aborted bool
}

func (w *pipeResponse) Header() http.Header { return w.header }

func (w *pipeResponse) WriteHeader(code int) {
	w.once.Do(func() {
		w.status, w.sent = code, w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeResponse) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.pw.Write(b)
}

func (w *pipeResponse) Flush() {}

// pipeBody closes the read side and releases the context watch.
type pipeBody struct {
	*io.PipeReader
	stop func() bool
}

func (b *pipeBody) Close() error {
	b.stop()
	return b.PipeReader.CloseWithError(io.ErrClosedPipe)
}
